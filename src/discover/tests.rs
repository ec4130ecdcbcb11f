use super::*;

/// Paths a real home can hold, each with the one kind that must claim it.
#[test]
fn every_path_is_claimed_by_at_most_one_extractor() -> Result<(), Box<dyn std::error::Error>> {
    let m = Matcher::new()?;
    let home = Path::new("/nonexistent-home");
    let cases: &[(&str, Option<&str>)] = &[
        (
            ".nanobot/sessions/369b/sessions.sqlite3",
            Some("nanobot.session_db"),
        ),
        (".nanobot/sessions/369b/sessions.sqlite3-wal", None),
        (
            ".nanobot/sessions/369b/Y2xpOmRpcmVjdA.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        (
            ".nanobot/sessions/369b/jsonl-backup/discord_1.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        (
            ".nanobot/sessions/369b/.migration-conflicts/a.workspace.0123.4567.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        (
            ".nanobot/sessions/telegram_1.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        (
            ".nanobot/sessions/369b/a.checkpoint.json",
            Some("nanobot.session_jsonl"),
        ),
        (
            ".nanobot-work/sessions/0902/discord_99001.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        // not an instance: below a workspace, or not directly under HOME
        ("projects/.nanobot/sessions/369b/a.jsonl", None),
        (".nanobot/sessions/369b/sub/a.jsonl", None),
        // `*` never crosses `/`
        (".nanobot/sessions/a/b/sessions.sqlite3", None),
        (
            ".nanobot/webui/websocket_b8.jsonl",
            Some("nanobot.webui_transcript"),
        ),
        (
            ".nanobot/webui/websocket_b8.segments/000001.jsonl",
            Some("nanobot.webui_transcript"),
        ),
        (".nanobot/webui/websocket_b8.segments/manifest.json", None),
        (".nanobot/history/cli_history", Some("nanobot.cli_history")),
        (
            ".nanobot-work/history/cli_history",
            Some("nanobot.cli_history"),
        ),
        (
            ".nanobot/workspace/cron/runs/02b8f7b8_1792562400000_fe7656d3.json",
            Some("nanobot.cron_run"),
        ),
        (".nanobot/workspace/cron/jobs.json", None),
        (".nanobot/cron/runs/x.json", Some("nanobot.cron_run")),
        (
            ".nanobot/workspace/triggers/runs/tdl_badd0d8f081d.json",
            Some("nanobot.trigger_run"),
        ),
        (
            ".nanobot/sessions/369b/.webui_session_index.json",
            Some("nanobot.webui_index"),
        ),
        (".nanobot/config.json", Some("nanobot.permissions")),
        (".nanobot/pairing.json", Some("nanobot.permissions")),
        (".nanobot/workspace/config.json", None),
        (".nanobot/llm_usage.sqlite3", Some("nanobot.llm_usage")),
        (
            ".nanobot/sessions/ns1/d2Vic29ja2V0OnAx.subagents.json",
            Some("nanobot.subagent_records"),
        ),
        (".nanobot/llm_usage.sqlite3-wal", None),
        ("data/v2.db", Some("nanoclaw.catalog")),
        ("data/upgrade-state.json", Some("nanoclaw.upgrade_state")),
        ("nanoclaw/data/v2.db", Some("nanoclaw.catalog")),
        ("nanoclaw/data/v2.db-wal", None),
        (
            "data/v2-sessions/ag-1/sess-1/inbound.db",
            Some("nanoclaw.inbound"),
        ),
        (
            "data/v2-sessions/ag-1/sess-1/outbound.db",
            Some("nanoclaw.outbound"),
        ),
        ("data/v2-sessions/ag-1/sess-1/inbox/m1/a.db", None),
        (
            "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f.jsonl",
            Some("nanoclaw.claude_transcript"),
        ),
        (
            "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f.jsonl.rotated-17",
            Some("nanoclaw.claude_transcript"),
        ),
        (
            "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f/subagents/agent-a1.jsonl",
            Some("nanoclaw.claude_transcript"),
        ),
        (
            "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f/subagents/agent-a1.meta.json",
            None,
        ),
        (
            "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f/tool-results/t.txt",
            None,
        ),
        ("data/v2-sessions/ag-1/.claude-shared/settings.json", None),
        (
            "data/v2-sessions/ag-1/.codex-shared/sessions/2026/12/03/rollout-2026-12-03T03-27-55-01a2.jsonl",
            Some("nanoclaw.codex_rollout"),
        ),
        ("data/v2-sessions/ag-1/.codex-shared/auth.json", None),
        ("data/v2-sessions/ag-1/.codex-shared/history.jsonl", None),
        ("data/v2-sessions/ag-1/.codex-shared/state_5.sqlite", None),
        (
            "data/v2-sessions/ag-1/sess-1/opencode-xdg/opencode/opencode.db",
            Some("nanoclaw.opencode_db"),
        ),
        (
            "data/v2-sessions/ag-1/sess-1/opencode-xdg/opencode/opencode.db-wal",
            None,
        ),
        (
            "data/v2-sessions/ag-1/sess-1/opencode-xdg/opencode/auth.json",
            None,
        ),
        ("mydata/v2.db", None),
    ];
    for (path, want) in cases {
        let got = m.classify(path, home)?.map(|(e, _)| REGISTRY[e].kind);
        assert_eq!(got, *want, "{path}");
    }
    Ok(())
}

/// Globs whose claim depends on the directory being a workspace.
#[test]
fn workspace_globs_check_the_directory() -> Result<(), Box<dyn std::error::Error>> {
    let m = Matcher::new()?;
    let home = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/nanobot/home-a"
    ));
    let cases: &[(&str, Option<&str>)] = &[
        (
            ".nanobot/workspace/memory/history.jsonl",
            Some("nanobot.memory_history"),
        ),
        (
            ".nanobot-work/workspace/memory/HISTORY.md",
            Some("nanobot.memory_history"),
        ),
        (
            ".nanobot/workspace/sessions/old.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        // `sessions/` is never a workspace, so this stays a namespace file only
        (
            ".nanobot/sessions/memory/history.jsonl",
            Some("nanobot.session_jsonl"),
        ),
        (".nanobot/webui/sessions/x.jsonl", None),
        (".nanobot/notaworkspace/memory/history.jsonl", None),
    ];
    for (path, want) in cases {
        let got = m.classify(path, home)?.map(|(e, _)| REGISTRY[e].kind);
        assert_eq!(got, *want, "{path}");
    }
    Ok(())
}

/// Links out of HOME: agent state is judged from names, and a user's
/// own `~/data` or `~/projects` link is not mistaken for it.
#[test]
fn agent_state_out_of_home_is_judged_from_names() -> Result<(), Box<dyn std::error::Error>> {
    let m = Matcher::new()?;
    let t = tempfile::tempdir()?;
    let dir = |name: &str, entries: &[&str]| -> std::io::Result<PathBuf> {
        let d = t.path().join(name);
        std::fs::create_dir_all(&d)?;
        for e in entries {
            match e.strip_suffix('/') {
                Some(sub) => std::fs::create_dir_all(d.join(sub))?,
                None => {
                    if let Some(parent) = d.join(e).parent() {
                        std::fs::create_dir_all(parent)?;
                    }
                    std::fs::write(d.join(e), b"")?
                }
            }
        }
        Ok(d)
    };
    let plain = dir("plain", &["sessions/", "notes.txt", "data/"])?;
    let nanobot = dir("nanobot", &["sessions/", "config.json"])?;
    let nc_root = dir("nc", &["data/v2.db"])?;
    let nc_data = dir("ncdata", &["v2-sessions/"])?;
    let cases: &[(&str, &Path, bool)] = &[
        ("data", &plain, false),
        ("projects/x", &plain, false),
        (".nanobot", &plain, true),
        (".nanobot-work/workspace", &plain, true),
        ("backup/nb", &nanobot, true),
        ("srv/nanoclaw", &nc_root, true),
        ("srv/nanoclaw/data", &nc_data, true),
        ("data/v2.db", &plain, true),
    ];
    for (rel, target, want) in cases {
        assert_eq!(holds_agent_state(&m, rel, target), *want, "{rel}");
    }
    Ok(())
}

/// A link out of HOME whose names say nothing is searched as the walk
/// would walk it: a store any depth below makes it a `skipped_link`;
/// links inside its target are followed, a loop between two of them
/// ends, and a file that is a store under its own path in HOME is read
/// there (nothing skipped). Followed, the same loop is a `warning`.
#[test]
fn agent_state_out_of_home_is_searched_for_below_the_names()
-> Result<(), Box<dyn std::error::Error>> {
    use std::os::unix::fs::symlink;
    let t = tempfile::tempdir()?;
    let root = t.path().canonicalize()?;
    let (home, out) = (root.join("home"), root.join("out"));
    for d in ["x/1/2/3/data", "y", "z", "w", "v/nb/sessions"] {
        std::fs::create_dir_all(out.join(d))?;
    }
    std::fs::create_dir_all(home.join("real/data"))?;
    std::fs::write(out.join("x/1/2/3/data/v2.db"), b"")?;
    std::fs::write(home.join("real/data/v2.db"), b"")?;
    std::fs::write(out.join("v/nb/config.json.bak"), b"")?;
    symlink(out.join("z"), out.join("y/l1"))?;
    symlink(out.join("y"), out.join("z/l2"))?;
    symlink(home.join("real"), out.join("w/link"))?;
    for (link, to) in [("a", "x"), ("b", "y"), ("c", "w"), ("d", "v")] {
        symlink(out.join(to), home.join(link))?;
    }
    let found = discover(&home, false)?;
    let diags: Vec<(DiagKind, &str)> = found
        .diagnostics
        .iter()
        .map(|d| (d.kind, d.source_path.as_str()))
        .collect();
    assert_eq!(diags, [(DiagKind::SkippedLink, "a")]);
    assert_eq!(found.links_skipped, 3);
    let stores: Vec<&str> = found.stores.iter().map(|s| s.rel.as_str()).collect();
    assert_eq!(stores, ["real/data/v2.db"]);

    let followed = discover(&home, true)?;
    let diags: Vec<(DiagKind, &str)> = followed
        .diagnostics
        .iter()
        .map(|d| (d.kind, d.source_path.as_str()))
        .collect();
    // (and `c/link` names a store read under its own path: a warning)
    assert_eq!(
        diags,
        [
            (DiagKind::Warning, "b/l1/l2"),
            (DiagKind::Warning, "c/link")
        ]
    );
    let stores: Vec<&str> = followed.stores.iter().map(|s| s.rel.as_str()).collect();
    assert_eq!(stores, ["a/1/2/3/data/v2.db", "real/data/v2.db"]);
    Ok(())
}

/// An upgrade marker is read beside an install's data only: another
/// program's `data/upgrade-state.json` is no store.
#[test]
fn an_upgrade_marker_is_a_store_only_beside_an_install() -> Result<(), Box<dyn std::error::Error>> {
    let home = tempfile::tempdir()?;
    for f in [
        "nc/data/v2.db",
        "nc/data/upgrade-state.json",
        "pg/data/v2-sessions/ag-1/s-1/inbound.db",
        "pg/data/upgrade-state.json",
        "proj/data/upgrade-state.json",
    ] {
        let p = home.path().join(f);
        std::fs::create_dir_all(p.parent().ok_or("parent")?)?;
        std::fs::write(&p, b"{}")?;
    }
    let d = discover(home.path(), false)?;
    let markers: Vec<(&str, &str)> = d
        .stores
        .iter()
        .filter(|s| s.kind == "nanoclaw.upgrade_state")
        .map(|s| (s.rel.as_str(), s.instance.as_str()))
        .collect();
    assert_eq!(
        markers,
        [
            ("nc/data/upgrade-state.json", "nc"),
            ("pg/data/upgrade-state.json", "pg")
        ]
    );
    Ok(())
}

#[test]
fn nanoclaw_instance_is_the_install_root() {
    assert_eq!(instance_of(Agent::Nanoclaw, "data/v2.db"), ".");
    assert_eq!(
        instance_of(Agent::Nanoclaw, "nanoclaw/data/v2.db"),
        "nanoclaw"
    );
    assert_eq!(
        instance_of(Agent::Nanoclaw, "src/nc/data/v2-sessions/ag/s/inbound.db"),
        "src/nc"
    );
    assert_eq!(
        instance_of(Agent::Nanobot, ".nanobot-work/sessions/x/a.jsonl"),
        ".nanobot-work"
    );
    // every store of one install names the same root, however deep, and
    // an install inside a folder named `data` keeps its own
    let cases: &[(&str, &str)] = &[
        ("srv/nc/data/v2.db", "srv/nc"),
        ("srv/nc/data/v2-sessions/ag-1/sess-1/inbound.db", "srv/nc"),
        ("srv/nc/data/upgrade-state.json", "srv/nc"),
        ("data/nc/data/v2.db", "data/nc"),
        (
            "data/nc/data/v2-sessions/ag-1/sess-1/outbound.db",
            "data/nc",
        ),
        (
            "data/nc/data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f.jsonl",
            "data/nc",
        ),
        ("backup/data/old/data/v2.db", "backup/data/old"),
        ("data/v2-sessions/ag-1/sess-1/inbound.db", "."),
    ];
    for (rel, root) in cases {
        assert_eq!(instance_of(Agent::Nanoclaw, rel), *root, "{rel}");
    }
    assert_eq!(
        crate::sources::nanoclaw::session_parts("data/nc/data/v2-sessions/ag-1/sess-1/outbound.db"),
        Some(("data/nc".into(), "ag-1".into(), "sess-1".into()))
    );
}
