//! nanobot's stores besides the session stores, on fixtures/nanobot/home-a
//! and small generated homes: the UTC offset derived from evidence (and its
//! change at local midnight), WebUI transcripts and CLI history paired with
//! their session rows (an unpaired CLI entry kept), run records, the memory
//! journal and the sidebar cache, permission rows of exactly the whitelisted
//! config keys (no other key ever read), `llm_calls` and their attribution
//! to sessions, and the `--db` file the DuckDB CLI opens.

use std::path::Path;

use crate::common::*;

fn home_a() -> std::path::PathBuf {
    fixture("nanobot/home-a")
}

/// `rows read`, `rows out` and `duplicates` of a source kind from the summary.
fn summary_counts(stderr: &str, kind: &str) -> Option<(u64, u64, u64)> {
    let line = stderr
        .lines()
        .find(|l| l.split_whitespace().next() == Some(kind))?;
    let n: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    Some((*n.get(1)?, *n.get(2)?, *n.get(3)?))
}

#[test]
fn derived_offset_and_the_check_pair() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.rows("SELECT instance, first_day, last_day, offset_minutes, pairs >= 3 FROM tz_offsets ORDER BY instance, first_day")?,
        vec![
            vec![".nanobot".to_string(), "2026-08-20".into(), "2026-10-22".into(), "120".into(), "true".into()],
            vec![".nanobot-work".into(), "2026-09-10".into(), "2026-09-16".into(), "120".into(), "true".into()],
        ]
    );
    // the EXPECTED.md check pair: frozen JSONL 2026-09-29T21:14:05.040000 local
    assert_eq!(
        r.rows("SELECT time_basis, utc_offset_minutes, epoch_us(timestamp_utc) FROM events WHERE turn_type = 'user' AND text = 'what is using port 8080?'")?,
        vec![vec!["local_derived".to_string(), "120".into(), "1790709245040000".into()]]
    );
    // --utc-offset wins
    let g = run_home(&home_a(), &["--utc-offset", "+05:00"])?;
    assert_eq!(
        g.rows("SELECT time_basis, utc_offset_minutes, epoch_us(timestamp_utc) FROM events WHERE turn_type = 'user' AND text = 'what is using port 8080?'")?,
        vec![vec!["local_given".to_string(), "300".into(), "1790698445040000".into()]]
    );
    // UTC sources keep their own time
    assert_eq!(r.one("SELECT DISTINCT time_basis FROM events WHERE source_kind = 'nanobot.permissions' AND text LIKE '%pending%'")?, "utc");
    Ok(())
}

#[test]
fn webui_transcript_pairs_with_the_session() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE source_kind = 'nanobot.webui_transcript'")?,
        "0"
    );
    assert_eq!(
        summary_counts(&r.stderr(), "nanobot.webui_transcript"),
        Some((14, 0, 14)),
        "{}",
        r.stderr()
    );
    let t = run_home(&home_a(), &["--include-thinking"])?;
    assert_eq!(
        summary_counts(&t.stderr(), "nanobot.webui_transcript"),
        Some((15, 0, 15)),
        "{}",
        t.stderr()
    );
    assert_eq!(
        t.one("SELECT count(*) FROM events WHERE source_kind = 'nanobot.webui_transcript'")?,
        "0"
    );
    Ok(())
}

#[test]
fn cli_history_entries_pair_with_cli_direct() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.one("SELECT rows FROM sources WHERE source_kind = 'nanobot.cli_history'")?,
        "4"
    );
    assert_eq!(
        summary_counts(&r.stderr(), "nanobot.cli_history"),
        Some((4, 0, 4))
    );
    Ok(())
}

#[test]
fn a_cli_entry_without_a_session_copy_is_kept() -> TestResult {
    let home = tempfile::tempdir()?;
    std::fs::create_dir_all(home.path().join(".nanobot/history"))?;
    std::fs::write(
        home.path().join(".nanobot/history/cli_history"),
        "\n# 2026-10-05 10:00:00\n+deleted chat question\n+second line\n",
    )?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows("SELECT session_id, turn_type, source_role, text, timestamp_local::VARCHAR, time_basis FROM events")?,
        vec![vec![
            "NULL".to_string(),
            "user".into(),
            "secondary".into(),
            "deleted chat question\nsecond line".into(),
            "2026-10-05 10:00:00".into(),
            "local_as_utc".into()
        ]]
    );
    Ok(())
}

#[test]
fn run_records_memory_and_sidebar() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    // run records: the prompt and reply pair with the session turn; the audit row stays
    assert_eq!(
        r.rows("SELECT source_kind, session_id, turn_type, text FROM events WHERE source_kind IN ('nanobot.cron_run', 'nanobot.trigger_run') ORDER BY 1")?,
        vec![
            vec![
                "nanobot.cron_run".to_string(),
                "slack:C0FAKE42".into(),
                "system".into(),
                "cron run: job morning digest (02b8f7b8) run 02b8f7b8:1792562400000:fe7656d3 status=ok".into()
            ],
            vec![
                "nanobot.trigger_run".into(),
                "telegram:48213377".into(),
                "system".into(),
                "trigger run: trigger ci-alerts (trg_QRGJE6RW) delivery tdl_badd0d8f081d status=ok attempts=0".into()
            ],
        ]
    );
    assert_eq!(
        summary_counts(&r.stderr(), "nanobot.cron_run"),
        Some((3, 1, 2))
    );
    assert_eq!(
        summary_counts(&r.stderr(), "nanobot.trigger_run"),
        Some((3, 1, 2))
    );
    assert_eq!(
        r.rows("SELECT coalesce(session_id, '-'), timestamp_local::VARCHAR, text FROM events WHERE source_kind = 'nanobot.memory_history' ORDER BY timestamp_local")?,
        vec![
            vec!["-".to_string(), "2026-09-10 16:21:00".into(), "memory history (HISTORY.md): Checked staging.internal reachability for the user on Discord; it was up.".into()],
            vec!["-".into(), "2026-09-12 09:02:00".into(), "memory history (HISTORY.md): User prefers short answers.".into()],
            vec![WS.into(), "2026-09-30 12:00:00".into(), "memory history #1: User asked for a README summary of demo-app and a pytest skeleton.".into()],
            vec!["telegram:48213377".into(), "2026-10-19 20:00:00".into(), "memory history #2: Diagnosed that python3 (pid 4242) was listening on port 8080 for the user.".into()],
            vec!["cli:direct".into(), "2026-10-21 19:00:00".into(), "memory history #3: User listed workspace files and switched to the fast preset for arithmetic.".into()],
        ]
    );
    assert_eq!(
        r.rows("SELECT session_id, text FROM events WHERE source_kind = 'nanobot.webui_index' ORDER BY session_id")?,
        vec![
            vec!["cli:direct".to_string(), "webui sidebar entry: key=cli:direct preview=list the files in the workspace model_preset=fast updated_at=2026-10-01T08:42:12.360000 (from .webui_session_index.json version 8)".into()],
            vec!["telegram:48213377".into(), "webui sidebar entry: key=telegram:48213377 preview=what is using port 8080? updated_at=2026-09-29T21:14:09.910000 (from .webui_session_index.json version 8)".into()],
            vec![WS.into(), format!("webui sidebar entry: key={WS} preview=summarise README.md in three bullets updated_at=2026-09-30T10:05:42.390000 (from .webui_session_index.json version 8)")],
        ]
    );
    Ok(())
}

#[test]
fn permission_rows_are_exactly_the_whitelisted_keys() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    let got: Vec<String> = r
        .rows("SELECT text FROM events WHERE source_kind = 'nanobot.permissions' OR text LIKE 'permission %' ORDER BY source_path, ordinal")?
        .into_iter()
        .map(|v| v[0].clone())
        .collect();
    let nb = |k: &str| format!("permission setting: {k} (from .nanobot/config.json, file mtime)");
    let wk =
        |k: &str| format!("permission setting: {k} (from .nanobot-work/config.json, file mtime)");
    let mut want = vec![
        wk("tools.restrictToWorkspace=false"),
        wk("tools.exec.enable=true"),
        wk("tools.webuiAllowLocalServiceAccess=true"),
        wk("tools.webuiAllowRemotePackageInstall=false"),
        wk("channels.discord.allowFrom=99001"),
        nb("tools.restrictToWorkspace=true"),
        nb("tools.exec.enable=true"),
        nb("tools.exec.sandbox=bwrap"),
        nb("tools.exec.allowPatterns=^git "),
        nb("tools.exec.allowPatterns=^ss "),
        nb("tools.exec.denyPatterns=rm\\s+-rf\\s+/"),
        nb("tools.exec.denyPatterns=mkfs"),
        nb("tools.exec.sandboxRoBinds=/usr/share/dict"),
        nb("tools.exec.allowedEnvKeys=LANG"),
        nb("tools.exec.allowedEnvKeys=TZ"),
        nb("tools.ssrfWhitelist=100.64.0.0/10"),
        nb("tools.webuiAllowLocalServiceAccess=false"),
        nb("tools.webuiAllowRemotePackageInstall=false"),
        nb("channels.telegram.allowFrom=48213377"),
        nb("channels.slack.allowFrom=U0ALICE01"),
        nb("channels.slack.allowFrom=U0BOB0002"),
        "permission setting: pairing.approved.telegram=48213377 (from .nanobot/pairing.json, file mtime)".into(),
        "permission setting: pairing.pending.discord=555666777 expires_at=2026-10-22T09:10:00Z (from .nanobot/pairing.json, created_at)".into(),
        // the session-metadata permission mode (the frozen copy's is dropped)
        "permission mode: access_mode=restricted project=/home/alice/.nanobot/workspace (from session metadata workspace_scope)".into(),
    ];
    want.sort();
    let mut got_sorted = got.clone();
    got_sorted.sort();
    assert_eq!(got_sorted, want);
    assert_eq!(
        r.one("SELECT epoch_us(timestamp_utc) FROM events WHERE text LIKE 'permission setting: pairing.pending%'")?,
        "1792659600000000",
        "the pending row is at its created_at"
    );
    let mut all = all_text(
        &r.conn()?,
        &[
            "events",
            "sessions",
            "llm_calls",
            "tz_offsets",
            "diagnostics",
            "sources",
        ],
    )?;
    all.push_str(&r.stderr());
    for s in NB_SECRETS {
        assert!(!all.contains(s), "{s}");
    }
    Ok(())
}

#[test]
fn config_keys_outside_the_whitelist_never_reach_output() -> TestResult {
    let home = tempfile::tempdir()?;
    let inst = home.path().join(".nanobot");
    std::fs::create_dir_all(&inst)?;
    std::fs::write(
        inst.join("config.json"),
        r#"{"providers":{"openrouter":{"apiKey":"MARKER-provider-key"}},"api":{"apiKey":"MARKER-api"},
            "channels":{"sendProgress":true,"telegram":{"token":"MARKER-bot-token","allowFrom":["7"]},
                        "feishu":{"appSecret":"MARKER-feishu","allow_from":["ou_1"]}},
            "tools":{"restrict_to_workspace":true,"exec":{"timeout":60,"pathPrepend":"MARKER-path","allowPatterns":[]},
                     "mcpServers":{"gh":{"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"MARKER-ghp"}}},
                     "allowLocalPreviewAccess":true,"maxSessionMessagesPerMinute":9}}"#,
    )?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let mut texts: Vec<String> = r
        .rows("SELECT text FROM events")?
        .into_iter()
        .map(|v| v[0].clone())
        .collect();
    texts.sort();
    assert_eq!(
        texts,
        vec![
            "permission setting: channels.feishu.allow_from=ou_1 (from .nanobot/config.json, file mtime)",
            "permission setting: channels.telegram.allowFrom=7 (from .nanobot/config.json, file mtime)",
            "permission setting: tools.allowLocalPreviewAccess=true (from .nanobot/config.json, file mtime)",
            "permission setting: tools.restrict_to_workspace=true (from .nanobot/config.json, file mtime)",
        ]
    );
    let mut all = all_text(
        &r.conn()?,
        &[
            "events",
            "sessions",
            "llm_calls",
            "tz_offsets",
            "diagnostics",
            "sources",
        ],
    )?;
    all.push_str(&r.stderr());
    all.push_str(&r.stdout());
    assert!(
        !all.contains("MARKER"),
        "a non-permission key reached output"
    );
    Ok(())
}

#[test]
fn llm_calls_and_their_attribution() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.rows("SELECT instance, count(*), sum(input_tokens), sum(output_tokens), sum(total_tokens) FROM llm_calls GROUP BY 1 ORDER BY 1")?,
        vec![
            vec![".nanobot".to_string(), "26".into(), "100190".into(), "1646".into(), "101836".into()],
            vec![".nanobot-work".into(), "6".into(), "17850".into(), "111".into(), "17961".into()],
        ]
    );
    assert_eq!(
        r.rows(
            "SELECT coalesce(session_id, 'NULL'), string_agg(id::VARCHAR, ',' ORDER BY id), sum(total_tokens)
             FROM llm_calls WHERE instance = '.nanobot' GROUP BY 1 ORDER BY 1"
        )?,
        vec![
            vec!["NULL".to_string(), "11,22".into(), "4460".into()],
            vec!["cli:direct".into(), "6,7,8,23,24".into(), "14869".into()],
            vec!["discord:77120044".into(), "9,10".into(), "5137".into()],
            vec!["slack:C0FAKE42".into(), "13,14,15,16".into(), "16015".into()],
            vec!["subagent:sa_5c1e9d7f".into(), "20,21".into(), "5000".into()],
            vec!["telegram:48213377".into(), "1,2,12,17".into(), "12912".into()],
            vec![WS.into(), "3,4,5,18,19,25,26".into(), "43443".into()],
        ]
    );
    // NULL stays NULL (not reported ≠ 0); started_at is the UTC instant
    assert_eq!(
        r.one("SELECT count(*) FROM llm_calls WHERE cache_read_tokens IS NULL")?,
        "31"
    );
    assert_eq!(
        r.one("SELECT epoch_ms(started_at) FROM llm_calls WHERE instance = '.nanobot' AND id = 1")?,
        "1790709245290"
    );
    // per-session tokens and calls in `sessions`
    assert_eq!(
        r.rows("SELECT session_id, llm_calls, total_tokens, in_primary_store FROM sessions WHERE instance = '.nanobot' ORDER BY 1")?,
        vec![
            vec!["cli:direct".to_string(), "5".into(), "14869".into(), "true".into()],
            vec!["discord:77120044".into(), "2".into(), "5137".into(), "true".into()],
            vec!["slack:C0FAKE42".into(), "4".into(), "16015".into(), "true".into()],
            vec!["subagent:sa_5c1e9d7f".into(), "2".into(), "5000".into(), "true".into()],
            vec!["telegram:48213377".into(), "4".into(), "12912".into(), "true".into()],
            vec![WS.into(), "7".into(), "43443".into(), "true".into()],
        ]
    );
    Ok(())
}

/// Write a JSONL-only instance whose host moved from +01:00 to +02:00 at
/// local midnight, with llm_calls for each user message.
fn midnight_home(root: &Path) -> TestResult {
    let ns = root.join(".nanobot/sessions/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&ns)?;
    std::fs::write(ns.join(".workspace"), "/home/t/.nanobot/workspace\n")?;
    // (local time, offset minutes in force)
    let msgs = [
        ("2026-03-28T22:00:00.040000", 60),
        ("2026-03-28T23:10:00.040000", 60),
        ("2026-03-29T09:00:00.040000", 120),
        ("2026-03-29T10:30:00.040000", 120),
    ];
    let mut lines = vec![r#"{"_type": "metadata", "key": "telegram:1", "created_at": "2026-03-28T22:00:00", "updated_at": "2026-03-29T10:30:01", "metadata": {}, "last_archived": 0}"#.to_string()];
    let usage = rusqlite::Connection::open(root.join(".nanobot/llm_usage.sqlite3"))?;
    usage.execute_batch(
        "CREATE TABLE llm_calls (id INTEGER PRIMARY KEY, started_at_ms INTEGER NOT NULL, duration_ms INTEGER NOT NULL, provider TEXT NOT NULL,
         model TEXT NOT NULL, source TEXT NOT NULL, stream INTEGER NOT NULL, finish_reason TEXT NOT NULL, input_tokens INTEGER,
         output_tokens INTEGER, total_tokens INTEGER, cache_read_tokens INTEGER, cache_write_tokens INTEGER, reported_tokens INTEGER,
         estimated_tokens INTEGER, generation_ms INTEGER, measured_output_tokens INTEGER, ttft_ms INTEGER, timed_requests INTEGER,
         error_status_code INTEGER, error_kind TEXT);",
    )?;
    for (i, (local, off)) in msgs.iter().enumerate() {
        lines.push(format!(
            r#"{{"role": "user", "content": "question {i}", "timestamp": "{local}"}}"#
        ));
        lines.push(format!(
            r#"{{"role": "assistant", "content": "answer {i}", "timestamp": "{}"}}"#,
            local.replace(":00.040000", ":02.000000")
        ));
        let local_us = nanoload::time::parse_naive(local).ok_or("time")?;
        let started_ms = (local_us - i64::from(*off) * 60_000_000) / 1000 + 250;
        usage.execute(
            "INSERT INTO llm_calls (started_at_ms, duration_ms, provider, model, source, stream, finish_reason, input_tokens, output_tokens, total_tokens)
             VALUES (?1, 900, 'p', 'm', 'user', 1, 'stop', 10, 2, 12)",
            [started_ms],
        )?;
    }
    drop(usage);
    std::fs::write(ns.join("dGVsZWdyYW06MQ.jsonl"), lines.join("\n") + "\n")?;
    Ok(())
}

#[test]
fn an_offset_change_at_local_midnight_gives_two_ranges() -> TestResult {
    let home = tempfile::tempdir()?;
    midnight_home(home.path())?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT first_day, last_day, offset_minutes, pairs FROM tz_offsets ORDER BY first_day"
        )?,
        vec![
            vec![
                "2026-03-28".to_string(),
                "2026-03-28".into(),
                "60".into(),
                "2".into()
            ],
            vec![
                "2026-03-29".into(),
                "2026-03-29".into(),
                "120".into(),
                "2".into()
            ]
        ]
    );
    assert_eq!(
        r.rows("SELECT text, utc_offset_minutes, strftime(CAST(timestamp_utc AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S') FROM events WHERE turn_type = 'user' ORDER BY ordinal")?,
        vec![
            vec!["question 0".to_string(), "60".into(), "2026-03-28T21:00:00".into()],
            vec!["question 1".into(), "60".into(), "2026-03-28T22:10:00".into()],
            vec!["question 2".into(), "120".into(), "2026-03-29T07:00:00".into()],
            vec!["question 3".into(), "120".into(), "2026-03-29T08:30:00".into()],
        ]
    );
    assert_eq!(
        r.one("SELECT count(*) FROM llm_calls WHERE session_id = 'telegram:1'")?,
        "4"
    );
    Ok(())
}

#[test]
fn db_file_opens_in_the_duckdb_cli() -> TestResult {
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("all.duckdb");
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(home_a())
        .arg(dir.path().join("out.parquet"))
        .arg("--db")
        .arg(&db)
        .output()?;
    assert_eq!(o.status.code(), Some(1));
    let cli = std::process::Command::new("duckdb")
        .arg(&db)
        .arg("-csv")
        .arg("-noheader")
        .arg("-c")
        .arg("select count(*) from sessions")
        .output()?;
    assert!(
        cli.status.success(),
        "duckdb CLI failed: {}",
        String::from_utf8_lossy(&cli.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&cli.stdout).trim(), "8");
    let c = duckdb::Connection::open(&db)?;
    let tables = query(
        &c,
        "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables",
    )?;
    assert_eq!(
        tables[0][0],
        "diagnostics,events,llm_calls,sessions,sources,tz_offsets"
    );
    Ok(())
}
