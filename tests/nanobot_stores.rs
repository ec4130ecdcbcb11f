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

/// `fixtures/realwriter/newer-dbera-interrupted` (its PROVENANCE.md): written
/// by nanobot's database-era store, its usage store at user_version 2
/// (`llm_usage/store.py` at 4cd1a085) and 0.3.5's agent loop.
fn newer_dbera() -> std::path::PathBuf {
    fixture("realwriter/newer-dbera-interrupted/home")
}

/// nanobot's usage store at user_version 2 keeps a stable key per call
/// (`call_id`, a new one per attempt): `llm_calls.call_id`, written after
/// `load_id` so columns stay appended; a schema newer than 2 is read by
/// column name with one warning.
#[test]
fn llm_usage_v2_keeps_the_call_id_and_warns_on_a_newer_schema() -> TestResult {
    let r = run_home(&newer_dbera(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows("SELECT id, call_id, model, input_tokens FROM llm_calls ORDER BY id")?,
        strs(&[
            &[
                "1",
                "b234e1aaa77544e9b6200940ddb8d152",
                "claude-sonnet-4-5",
                "2100"
            ],
            &[
                "2",
                "115e15690c22496e94d9c50a013c6279",
                "claude-sonnet-4-5",
                "2400"
            ],
            &[
                "3",
                "690176c3a7684fffafc25168004ab8a1",
                "claude-sonnet-4-5",
                "2700"
            ],
            &[
                "4",
                "65daa456d27b42689dc354a5f4390ede",
                "claude-sonnet-4-5",
                "1900"
            ],
            &[
                "5",
                "ca81d407880e412287a8cf0cab6ce685",
                "claude-sonnet-4-5",
                "2600"
            ],
        ])
    );
    // the last two columns of the written table: load_id, then call_id
    let c = duckdb::Connection::open_in_memory()?;
    let cols: Vec<String> = c
        .prepare(&format!(
            "SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet('{}/llm_calls.parquet'))",
            r.tables.display()
        ))?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    assert_eq!(cols[cols.len() - 2..], ["load_id", "call_id"]);
    assert_eq!(
        r.one("SELECT count(*) FROM diagnostics WHERE kind = 'warning'")?,
        "0"
    );
    // a later schema: read as before, one warning
    let home = copy_home(&newer_dbera())?;
    {
        let db = rusqlite::Connection::open(home.path().join(".nanobot/llm_usage.sqlite3"))?;
        db.execute_batch("PRAGMA user_version = 3")?;
    }
    let later = run_home(home.path(), &[])?;
    assert_eq!(later.code(), Some(0), "{}", later.stderr());
    assert_eq!(
        later.rows("SELECT kind, source_path, message FROM diagnostics WHERE kind = 'warning'")?,
        strs(&[&[
            "warning",
            ".nanobot/llm_usage.sqlite3",
            "llm_usage schema version 3 is newer than nanoload knows (2): columns read by name, \
             a column it added is not read"
        ]])
    );
    assert_eq!(
        later.rows("SELECT id, call_id FROM llm_calls ORDER BY id")?,
        r.rows("SELECT id, call_id FROM llm_calls ORDER BY id")?
    );
    Ok(())
}

/// The database era keeps what an interrupted turn had and what the user
/// sent while it ran in two tables of `sessions.sqlite3` (`checkpoints`,
/// `pending_inputs`); nanobot loses both if the turn never completes. In
/// this home `websocket:c1`'s turn crashed after two tool calls with two
/// follow-ups queued: its checkpoint (the assistant's call and the tool's
/// result) and both follow-ups are recovered as rows after its saved
/// messages, marked `native.recovered`. `websocket:c2`'s follow-up stayed
/// queued while the user sent the same text again, which the session
/// saved: it is not a second row.
#[test]
fn interrupted_turns_and_queued_inputs_are_recovered_once() -> TestResult {
    let r = run_home(&newer_dbera(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT session_id, turn_type, coalesce(tool_name, '-'), left(text, 40),
                    coalesce(native::JSON->'recovered'->>'from', '-'),
                    coalesce(native::JSON->'recovered'->>'phase', native::JSON->'recovered'->>'position', '-')
             FROM events WHERE (native::JSON->'recovered') IS NOT NULL ORDER BY session_id, ordinal"
        )?,
        strs(&[
            &["websocket:c1", "tool_use", "read_file", "notes/rollback.md", "checkpoint", "tools_completed"],
            &["websocket:c1", "assistant", "-", "Now the rollback notes.", "checkpoint", "tools_completed"],
            &["websocket:c1", "tool_result", "read_file", "1| # Rollback\n2| \n3| 1. `make rollback T", "checkpoint", "tools_completed"],
            &["websocket:c1", "user", "-", "Also include the rollback steps.", "pending_input", "0"],
            &["websocket:c1", "user", "-", "And who is on call tonight?", "pending_input", "1"],
        ])
    );
    // the recovered rows come after the session's saved messages
    assert_eq!(
        r.one(
            "SELECT min(ordinal) FILTER (WHERE (native::JSON->'recovered') IS NOT NULL)
                    > max(ordinal) FILTER (WHERE (native::JSON->'recovered') IS NULL)
             FROM events WHERE session_id = 'websocket:c1'"
        )?,
        "true"
    );
    // c2's queued follow-up is the message it saved: one row
    assert_eq!(
        r.one(
            "SELECT count(*) FROM events
             WHERE session_id = 'websocket:c2' AND text = 'Make it short, three sentences max.'"
        )?,
        "1"
    );
    Ok(())
}

/// `fixtures/realwriter/newer-subagents` (its PROVENANCE.md): a WebUI
/// session whose turn spawned two subagent tasks, recorded by nanobot's
/// `SubagentRecords` (d22c7af8) beside the session file and copied into the
/// workspace by `restore_sessions_to_workspace()`: one done with a result,
/// one interrupted by a host restart with a partial result. Each task is a
/// spawn row and an end row of the parent session (the copy adds nothing);
/// its usage is one llm_calls row of that session only while the instance
/// has no usage store (which counts every call, the subagents' too).
#[test]
fn subagent_tasks_are_rows_of_their_session_and_their_usage_counts_once() -> TestResult {
    let home = fixture("realwriter/newer-subagents/home");
    let r = run_home(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let tasks = "SELECT session_id, text, native::JSON->'subagent_task'->>'origin_turn_id',
                        source_role, session_uid = (SELECT min(session_uid) FROM events
                                                    WHERE source_kind = 'nanobot.session_jsonl')
                 FROM events WHERE source_kind = 'nanobot.subagent_records' ORDER BY timestamp_utc, text";
    assert_eq!(
        r.rows(tasks)?,
        strs(&[
            &[
                "websocket:p1",
                "subagent task cd24570e9615 spawned: ci logs — Scan the last three CI runs for flaky tests",
                "turn-7f3a",
                "primary",
                "true"
            ],
            &[
                "websocket:p1",
                "subagent task e9a8c7b6acf4 spawned: config audit — Inspect config/app.yaml and list risky settings",
                "turn-7f3a",
                "primary",
                "true"
            ],
            &[
                "websocket:p1",
                "subagent task e9a8c7b6acf4 done: Two risky settings: debug=true in production profile; TLS verification disabled for the metrics exporter.",
                "turn-7f3a",
                "primary",
                "true"
            ],
            &[
                "websocket:p1",
                "subagent task cd24570e9615 interrupted (partial) (host_restarted): Partial findings: test_billing_sync failed in 2 of 3 runs (timeouts).",
                "turn-7f3a",
                "primary",
                "true"
            ],
        ])
    );
    // no usage store: the tasks' usage is the only record of their calls
    assert_eq!(
        r.rows(
            "SELECT source, session_id, input_tokens, output_tokens, cache_read_tokens,
                    duration_ms, finish_reason
             FROM llm_calls ORDER BY duration_ms DESC"
        )?,
        strs(&[
            &[
                "subagent",
                "websocket:p1",
                "5400",
                "228",
                "3072",
                "60000",
                "done"
            ],
            &[
                "subagent",
                "websocket:p1",
                "3100",
                "96",
                "NULL",
                "39000",
                "interrupted"
            ],
        ])
    );
    assert_eq!(
        r.one("SELECT llm_calls || ' ' || input_tokens FROM sessions WHERE session_id = 'websocket:p1'")?,
        "2 8500"
    );
    // with a usage store the calls are counted there, not again
    let counted = copy_home(&home)?;
    for f in [
        "llm_usage.sqlite3",
        "llm_usage.sqlite3-wal",
        "llm_usage.sqlite3-shm",
    ] {
        std::fs::copy(
            newer_dbera().join(".nanobot").join(f),
            counted.path().join(".nanobot").join(f),
        )?;
    }
    let c = run_home(counted.path(), &[])?;
    assert_eq!(
        c.one(
            "SELECT count(*) FILTER (WHERE source = 'subagent') || '/' || count(*) FROM llm_calls"
        )?,
        "0/5"
    );
    assert_eq!(c.rows(tasks)?, r.rows(tasks)?);
    // the namespace's file gone (the chat deleted): the workspace's copy is read
    let gone = copy_home(&home)?;
    for e in std::fs::read_dir(gone.path().join(".nanobot/sessions"))? {
        let dir = e?.path();
        if dir.is_dir() {
            for f in std::fs::read_dir(&dir)? {
                let f = f?.path();
                if f.to_string_lossy().ends_with(".subagents.json") {
                    std::fs::remove_file(f)?;
                }
            }
        }
    }
    let g = run_home(gone.path(), &[])?;
    assert_eq!(
        g.rows(
            "SELECT DISTINCT source_path, source_role FROM events
             WHERE source_kind = 'nanobot.subagent_records'"
        )?,
        strs(&[&[
            ".nanobot/workspace/sessions/d2Vic29ja2V0OnAx.subagents.json",
            "secondary"
        ]])
    );
    assert_eq!(
        g.one("SELECT count(*) FROM events WHERE source_kind = 'nanobot.subagent_records'")?,
        "4"
    );
    Ok(())
}

/// What a newer nanobot adds beside its stores is named, never silently
/// ignored, and never read: the session search cache (a lower-cased copy of
/// every message) is listed in `sources` as `skipped`; a WebUI transcript
/// database (seen in an unmerged branch) and a sidecar nanoload does not
/// know get one warning each with their size (and a database its tables);
/// a workspace's own files are the user's and not named. No value of any of
/// them reaches an output.
#[test]
fn stores_nanoload_does_not_know_are_named_once_and_not_read() -> TestResult {
    let home = copy_home(&newer_dbera())?;
    let ns = home
        .path()
        .join(".nanobot/sessions/69ac4764ffa510a0e80f724f91eef932");
    let db = |path: &std::path::Path, sql: &str| -> TestResult {
        rusqlite::Connection::open(path)?.execute_batch(sql)?;
        Ok(())
    };
    db(
        &ns.join(".session_search.sqlite3"),
        "CREATE TABLE search (session_key TEXT, content TEXT);
         INSERT INTO search VALUES ('websocket:c1', 'canary-search-copy please check notes');",
    )?;
    std::fs::create_dir_all(home.path().join(".nanobot/webui"))?;
    db(
        &home.path().join(".nanobot/webui/transcripts.sqlite3"),
        "CREATE TABLE transcripts (session_key TEXT, seq INTEGER, record TEXT);
         INSERT INTO transcripts VALUES ('websocket:c1', 1, '{\"text\":\"canary-webui-db\"}');
         INSERT INTO transcripts VALUES ('websocket:c1', 2, '{}');",
    )?;
    std::fs::write(
        ns.join("d2Vic29ja2V0OmMx.goals.json"),
        r#"{"goal":"canary-goal"}"#,
    )?;
    std::fs::write(
        home.path().join(".nanobot/workspace/notes/data.json"),
        r#"{"user":"file"}"#,
    )?;
    let (r, all) = run_with_all_outputs(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    for canary in ["canary-search-copy", "canary-webui-db", "canary-goal"] {
        assert!(!all.contains(canary), "{canary} reached an output");
    }
    let nsrel = ".nanobot/sessions/69ac4764ffa510a0e80f724f91eef932";
    assert_eq!(
        r.rows(
            "SELECT source_kind, source_path, status, rows FROM sources
             WHERE status = 'skipped' ORDER BY source_path"
        )?,
        strs(&[
            &[
                "nanobot.session_search",
                &format!("{nsrel}/.session_search.sqlite3"),
                "skipped",
                "0"
            ],
            &[
                "nanobot.unknown_store",
                &format!("{nsrel}/d2Vic29ja2V0OmMx.goals.json"),
                "skipped",
                "0"
            ],
            &[
                "nanobot.unknown_store",
                ".nanobot/webui/transcripts.sqlite3",
                "skipped",
                "0"
            ],
        ])
    );
    assert_eq!(
        r.rows(
            "SELECT source_path, message FROM diagnostics WHERE kind = 'warning' ORDER BY source_path"
        )?,
        strs(&[
            &[
                &format!("{nsrel}/d2Vic29ja2V0OmMx.goals.json"),
                "a file nanoload does not know: 22 bytes; not read (a store of a newer nanobot?)",
            ],
            &[
                ".nanobot/webui/transcripts.sqlite3",
                "a file nanoload does not know: 8192 bytes, SQLite tables transcripts (2 rows: \
                 session_key, seq, record); not read (a store of a newer nanobot?)",
            ],
        ])
    );
    // everything else as without them
    let plain = run_home(&newer_dbera(), &[])?;
    let rows = "SELECT source_kind, count(*) FROM events GROUP BY ALL ORDER BY ALL";
    assert_eq!(r.rows(rows)?, plain.rows(rows)?);
    Ok(())
}

/// `fixtures/realwriter/jsonl-interrupted` (its PROVENANCE.md), written by
/// nanobot-ai 0.3.5 alone: three WebUI chats whose second turn crashed after
/// a tool call. 0.3.5 keeps the turn's checkpoint in `<key>.checkpoint.json`
/// beside the session file (`chat-c`), or in the metadata line when a
/// follow-up arrived meanwhile and forced a full save (`chat-a`, with the
/// follow-up queued there); `chat-b` was resumed, its checkpoint restored
/// into its messages. The lost messages come back once, marked; what was
/// restored is not doubled; a checkpoint file nanobot would discard as stale
/// says so.
#[test]
fn a_jsonl_era_interrupted_turn_is_recovered_from_its_metadata_or_checkpoint_file() -> TestResult {
    let home = fixture("realwriter/jsonl-interrupted/home");
    let r = run_home(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let recovered = "SELECT session_id, turn_type, coalesce(tool_name, '-'), left(text, 30),
                            native::JSON->'recovered'->>'from',
                            coalesce(native::JSON->'recovered'->>'stored', '-'),
                            coalesce(native::JSON->'recovered'->>'stale', '-')
                     FROM events WHERE (native::JSON->'recovered') IS NOT NULL
                     ORDER BY session_id, ordinal";
    assert_eq!(
        r.rows(recovered)?,
        strs(&[
            &[
                "websocket:chat-a",
                "tool_use",
                "read_file",
                "notes/deploy.md",
                "checkpoint",
                "metadata",
                "-"
            ],
            &[
                "websocket:chat-a",
                "assistant",
                "-",
                "Let me read the deploy notes.",
                "checkpoint",
                "metadata",
                "-"
            ],
            &[
                "websocket:chat-a",
                "tool_result",
                "read_file",
                "1| # Deploy 2026-11-16\n2| \n3| ",
                "checkpoint",
                "metadata",
                "-"
            ],
            &[
                "websocket:chat-a",
                "user",
                "-",
                "Also say who signs off the mig",
                "pending_input",
                "-",
                "-"
            ],
            &[
                "websocket:chat-c",
                "tool_use",
                "read_file",
                "notes/budget.md",
                "checkpoint",
                "checkpoint file",
                "-"
            ],
            &[
                "websocket:chat-c",
                "assistant",
                "-",
                "Opening the budget note.",
                "checkpoint",
                "checkpoint file",
                "-"
            ],
            &[
                "websocket:chat-c",
                "tool_result",
                "read_file",
                "1| # Q4 budget\n2| \n3| Cloud: 4",
                "checkpoint",
                "checkpoint file",
                "-"
            ],
        ])
    );
    // chat-b's restored call is its saved rows only
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE session_id = 'websocket:chat-b' AND tool_name = 'read_file'")?,
        "2"
    );
    // the checkpoint file is read with its session file
    assert_eq!(
        r.rows("SELECT source_path, parts FROM sources WHERE parts > 0")?,
        strs(&[&[
            ".nanobot/sessions/006d39e7f968a380b92c0b6c330ff836/d2Vic29ja2V0OmNoYXQtYw.jsonl",
            "1"
        ]])
    );
    // a message saved after the checkpoint was written: nanobot would discard it
    let later = copy_home(&home)?;
    let c = later
        .path()
        .join(".nanobot/sessions/006d39e7f968a380b92c0b6c330ff836/d2Vic29ja2V0OmNoYXQtYw.jsonl");
    let mut text = std::fs::read_to_string(&c)?;
    text.push_str(
        r#"{"role": "user", "content": "Any news?", "timestamp": "2026-11-16T12:00:00"}"#,
    );
    text.push('\n');
    std::fs::write(&c, text)?;
    let l = run_home(later.path(), &[])?;
    assert_eq!(
        l.rows(
            "SELECT DISTINCT native::JSON->'recovered'->>'stale' FROM events
             WHERE session_id = 'websocket:chat-c' AND (native::JSON->'recovered') IS NOT NULL"
        )?,
        strs(&[&["true"]])
    );
    Ok(())
}

/// A session's title (`sessions.title`): the WebUI chat's own title where
/// nanobot stored one (session metadata `title`; a generated one without
/// its `<think>` block, as nanobot shows it, a title the user edited as
/// written), else its first user message on one line, cut to 60
/// characters (59 and `…`, on a character boundary; a control character
/// as white space), redacted as the message is.
#[test]
fn a_session_is_titled_by_its_webui_title_else_its_first_user_message() -> TestResult {
    let home = tempfile::tempdir()?;
    let ns = home
        .path()
        .join(".nanobot/sessions/0123456789abcdef0123456789abcdef");
    std::fs::create_dir_all(&ns)?;
    let key = "sk-proj-Q7vT2mX9kL4pR8sW1nB6cY3hJ5dF0gZ";
    let session = |file: &str, key_: &str, meta: &str, users: &[&str]| -> TestResult {
        let mut s = format!(
            "{{\"_type\": \"metadata\", \"key\": \"{key_}\", \"created_at\": \"2026-10-05T09:00:00\", \
             \"updated_at\": \"2026-10-05T09:10:00\", \"metadata\": {meta}, \"last_consolidated\": 0}}\n"
        );
        for (i, u) in users.iter().enumerate() {
            s.push_str(&format!(
                "{{\"role\": \"user\", \"content\": {}, \"timestamp\": \"2026-10-05T09:0{i}:01\"}}\n",
                serde_json::to_string(u)?
            ));
            s.push_str(&format!(
                "{{\"role\": \"assistant\", \"content\": \"ok\", \"timestamp\": \"2026-10-05T09:0{i}:05\"}}\n"
            ));
        }
        std::fs::write(ns.join(file), s)?;
        Ok(())
    };
    session(
        "d2Vic29ja2V0OnRpdGxlZA.jsonl",
        "websocket:titled",
        r#"{"webui": true, "title": "Offsite plan for October"}"#,
        &["Please shortlist venues in Lisbon"],
    )?;
    session(
        "d2Vic29ja2V0OnRoaW5rcw.jsonl",
        "websocket:thinks",
        r#"{"webui": true, "title": "<think>a title for this?</think>Budget review"}"#,
        &["How much of the budget is left?"],
    )?;
    session(
        "d2Vic29ja2V0OmVkaXRlZA.jsonl",
        "websocket:edited",
        r#"{"webui": true, "title": "<think> is my tag", "title_user_edited": true}"#,
        &["hello"],
    )?;
    let pasted = format!(
        "  \n\tBefore I forget,   here are the staging creds:\nOPENAI_API_KEY={key}\nwire the deploy bot please"
    );
    session(
        "Y2xpOmRpcmVjdA.jsonl",
        "cli:direct",
        r#"{"webui": true, "title": ""}"#,
        &[&pasted, "and the second message"],
    )?;
    let long = "é".repeat(70);
    session("dGVsZWdyYW06NDI.jsonl", "telegram:42", "{}", &[&long])?;
    session(
        "ZGlzY29yZDo3.jsonl",
        "discord:7",
        "{}",
        &["Grüße 👋 aus Zürich \u{1b}[2J\u{7f}!"],
    )?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let titles = r.rows("SELECT session_id, title FROM sessions ORDER BY session_id")?;
    let redacted = r.one(
        "SELECT text FROM events WHERE session_id = 'cli:direct' AND turn_type = 'user' ORDER BY ordinal LIMIT 1",
    )?;
    assert!(!redacted.contains(key), "{redacted}");
    let one_line: String = redacted.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = one_line
        .chars()
        .take(59)
        .collect::<String>()
        .trim_end()
        .to_string()
        + "…";
    assert_eq!(
        cut,
        "Before I forget, here are the staging creds: OPENAI_API_KEY…"
    );
    assert_eq!(
        titles,
        strs(&[
            &["cli:direct", &cut],
            // control characters (a terminal's escape) as white space
            &["discord:7", "Grüße 👋 aus Zürich [2J !"],
            &["telegram:42", &format!("{}…", "é".repeat(59))],
            &["websocket:edited", "<think> is my tag"],
            &["websocket:thinks", "Budget review"],
            &["websocket:titled", "Offsite plan for October"],
        ])
    );
    assert!(!r.stderr().contains(key));
    Ok(())
}
