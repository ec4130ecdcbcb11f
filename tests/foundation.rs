//! nanobot's session stores end to end on fixtures/nanobot/home-a: the
//! session database's messages, tool calls joined to their results by id,
//! frozen JSONL copies deduplicated against the database, a JSONL-only
//! instance that survives its torn line, model-switch, relay and
//! session-start rows; and the run as a whole: HOME untouched, no secret in
//! any output, exit codes with no partial output, the same bytes whatever
//! `--threads`, OUT.parquet's column types and total order, `--utc-offset`.

use crate::common::*;

fn home_a() -> std::path::PathBuf {
    fixture("nanobot/home-a")
}

#[test]
fn session_database_facts() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    let db = "source_kind = 'nanobot.session_db'";
    assert_eq!(
        r.one(&format!(
            "SELECT count(DISTINCT session_id) FROM events WHERE {db}"
        ))?,
        "6"
    );
    // 48 message rows: every record is one `source_line` (its rowid)
    assert_eq!(
        r.one(&format!(
            "SELECT count(DISTINCT source_line) FROM events WHERE {db} AND seq IS NOT NULL"
        ))?,
        "48"
    );
    assert_eq!(
        r.rows(&format!("SELECT session_id, seq, source_line, text FROM events WHERE {db} AND text LIKE 'parser:%'"))?,
        vec![vec![
            "subagent:sa_5c1e9d7f".to_string(),
            "2".into(),
            "41".into(),
            r#"parser: unparseable record 2 (EOF while parsing a string at line 1 column 83): {"role":"tool","tool_call_id":"call_trunc","name":"read_file","content":"flask==3.1"#.into(),
        ]]
    );
    // messages per session, as EXPECTED.md lists them
    assert_eq!(
        r.rows(&format!("SELECT session_id, count(DISTINCT source_line) FROM events WHERE {db} AND seq IS NOT NULL GROUP BY 1 ORDER BY 1"))?,
        vec![
            vec!["cli:direct".to_string(), "13".into()],
            vec!["discord:77120044".into(), "4".into()],
            vec!["slack:C0FAKE42".into(), "8".into()],
            vec!["subagent:sa_5c1e9d7f".into(), "4".into()],
            vec!["telegram:48213377".into(), "4".into()],
            vec![WS.into(), "15".into()],
        ]
    );
    // the subagent's parent
    assert_eq!(
        r.rows("SELECT DISTINCT parent_session_id FROM events WHERE session_id = 'subagent:sa_5c1e9d7f'")?,
        vec![vec![WS.to_string()]]
    );
    assert_eq!(r.one("SELECT count(*) FROM events WHERE session_id <> 'subagent:sa_5c1e9d7f' AND parent_session_id IS NOT NULL")?, "0");
    // project path from .workspace
    assert_eq!(
        r.rows("SELECT instance, project_path, count(*) FROM events WHERE source_kind LIKE 'nanobot.session%' GROUP BY ALL ORDER BY ALL")?,
        vec![
            vec![".nanobot".to_string(), "/home/alice/.nanobot/workspace".into(), r.one("SELECT count(*) FROM events WHERE instance = '.nanobot' AND source_kind LIKE 'nanobot.session%'")?],
            vec![".nanobot-work".into(), "/home/alice/.nanobot-work/workspace".into(), r.one("SELECT count(*) FROM events WHERE instance = '.nanobot-work' AND source_kind LIKE 'nanobot.session%'")?],
        ]
    );
    Ok(())
}

#[test]
fn tool_calls_keep_ids_names_and_join_their_results() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    let calls = r.rows(
        "SELECT session_id, tool_use_id, tool_name, text FROM events
         WHERE turn_type = 'tool_use' AND source_role = 'primary' AND instance = '.nanobot' ORDER BY session_id, ordinal",
    )?;
    let want: Vec<[&str; 4]> = vec![
        [
            "cli:direct",
            "call_c6c90bd6b08e0fcffb2011d4",
            "list_dir",
            ".",
        ],
        [
            "cli:direct",
            "call_f31761d812938f8c8b2ac33d",
            "read_file",
            "AGENTS.md",
        ],
        [
            "discord:77120044",
            "call_2442488c453c9ebf2b6fdbab",
            "web_search",
            r#"{"query": "Cape Town weather"}"#,
        ],
        [
            "slack:C0FAKE42",
            "call_e4d1a531d6da85b17b7949e1",
            "cron",
            r#"{"action": "add", "name": "morning digest", "schedule": "0 8 * * *", "message": "summarise open PRs in alice/demo-app"}"#,
        ],
        [
            "slack:C0FAKE42",
            "call_8aaee151c7baea4f5d16f1cf",
            "exec",
            "gh pr list --repo alice/demo-app --state open",
        ],
        [
            "subagent:sa_5c1e9d7f",
            "call_e1b2122d5e350723a39530e7",
            "read_file",
            "requirements.txt",
        ],
        [
            WS,
            "call_9d43e7aee5410f9b9894cefb",
            "read_file",
            "README.md",
        ],
        [
            WS,
            "call_9e79dcfe6f23fa60edf0dc37",
            "exec",
            "git status --short",
        ],
        [
            WS,
            "call_0784275737206ea9e1f5e9be",
            "write_file",
            "tests/test_app.py",
        ],
    ];
    let want: Vec<Vec<String>> = want
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    assert_eq!(calls, want);
    // every result joins its call in the same session (the corrupt record aside)
    assert_eq!(
        r.one(
            "SELECT count(*) FROM events t WHERE t.turn_type = 'tool_result' AND NOT EXISTS (
               SELECT 1 FROM events u WHERE u.turn_type = 'tool_use' AND u.tool_use_id = t.tool_use_id
               AND u.session_id = t.session_id AND u.instance = t.instance)"
        )?,
        "0"
    );
    // the write_file call keeps its whole arguments in native
    assert_eq!(
        r.one("SELECT native::JSON->>'arguments' FROM events WHERE tool_use_id = 'call_0784275737206ea9e1f5e9be' AND turn_type = 'tool_use'")?,
        r#"{"path": "tests/test_app.py", "content": "def test_health(client):\n    assert client.get('/health').status_code == 200\n"}"#
    );
    Ok(())
}

#[test]
fn frozen_copies_dedup_against_the_database() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    // the 4 telegram messages lost to /new survive once, as secondary rows
    let tg = ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/dGVsZWdyYW06NDgyMTMzNzc.jsonl";
    assert_eq!(
        r.rows("SELECT source_path, seq, turn_type, text FROM events WHERE instance = '.nanobot' AND source_kind = 'nanobot.session_jsonl' AND source_role = 'secondary' AND seq IS NOT NULL ORDER BY ordinal")?,
        vec![
            vec![tg.to_string(), "0".into(), "user".into(), "what is using port 8080?".into()],
            vec![tg.into(), "1".into(), "thinking".into(), "Check listening sockets with ss.".into()],
            vec![tg.into(), "1".into(), "tool_use".into(), "ss -ltnp | grep 8080".into()],
            vec![tg.into(), "2".into(), "tool_result".into(), r#"LISTEN 0 128 *:8080 *:* users:(("python3",pid=4242,fd=3))"#.into()],
            vec![tg.into(), "3".into(), "assistant".into(), "python3 (pid 4242) is listening on 8080.".into()],
        ]
    );
    // each copy keeps its own session start row; the copies' model/relay/permission rows go
    assert_eq!(
        r.rows("SELECT source_path, text FROM events WHERE instance = '.nanobot' AND source_kind = 'nanobot.session_jsonl' AND source_role = 'secondary' AND seq IS NULL ORDER BY source_path")?
            .iter()
            .map(|r| (r[0].rsplit('/').next().unwrap_or_default().to_string(), r[1].split(' ').take(3).collect::<Vec<_>>().join(" ")))
            .collect::<Vec<_>>(),
        vec![
            ("Y2xpOmRpcmVjdA.jsonl".to_string(), "session start: key=cli:direct".to_string()),
            ("d2Vic29ja2V0OmI4ZTFjM2YyLTVkN2EtNGU2MS05ZjBiLTJhNGM2ZDhlMGYxMw.jsonl".into(), format!("session start: key={WS}")),
            ("dGVsZWdyYW06NDgyMTMzNzc.jsonl".into(), "session start: key=telegram:48213377".into()),
            ("discord_77120044.jsonl".into(), "session start: key=discord:77120044".into()),
        ]
    );
    // every other frozen/backup message is dropped: 9 + 6 + 4 rows of records,
    // plus 3 metadata rows (websocket permission mode, telegram and discord relay)
    let line = r
        .stderr()
        .lines()
        .find(|l| l.trim_start().starts_with("nanobot.session_jsonl"))
        .map(String::from);
    let cols: Vec<String> = line
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect();
    // kind, stores, rows read, rows out, duplicates
    assert_eq!(cols.get(1).map(String::as_str), Some("6"));
    assert_eq!(
        cols.get(4).map(String::as_str),
        Some("22"),
        "{}",
        r.stderr()
    );
    Ok(())
}

/// The JSONL-only instance: its canonical namespace file is primary; the
/// legacy-named `discord_99001.jsonl` that nanobot 0.3.5 moved into the
/// namespace (and never loads: it reads only `<urlsafe-b64 key>.jsonl`) is
/// secondary, its session kept whole (docs/design.md "Stores and roles").
#[test]
fn jsonl_only_instance_survives_its_torn_line() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    let stem = ".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3";
    assert!(
        r.stderr().contains(&format!("nanoload: bad_line: {stem}/c2xhY2s6QzBXT1JLNw.jsonl:10: EOF while parsing a string at line 1 column 44\n")),
        "{}",
        r.stderr()
    );
    assert_eq!(
        r.rows("SELECT session_id, source_role, count(DISTINCT seq), count(*) FILTER (turn_type = 'tool_use') FROM events WHERE instance = '.nanobot-work' AND source_kind = 'nanobot.session_jsonl' GROUP BY ALL ORDER BY 1")?,
        vec![
            vec!["discord:99001".to_string(), "secondary".into(), "4".into(), "1".into()],
            vec!["slack:C0WORK7".into(), "primary".into(), "9".into(), "2".into()],
        ]
    );
    assert_eq!(
        r.one("SELECT text FROM events WHERE instance = '.nanobot-work' AND source_line = 10")?,
        r#"parser: unparseable line 10 (EOF while parsing a string at line 1 column 44): {"role": "user", "content": "and the npm cac"#
    );
    assert_eq!(
        r.rows("SELECT kind, source_path, source_line FROM diagnostics WHERE kind IN ('bad_line', 'bad_record') ORDER BY ALL")?,
        vec![
            vec!["bad_line".to_string(), format!("{stem}/c2xhY2s6QzBXT1JLNw.jsonl"), "10".into()],
            vec!["bad_record".into(), ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/sessions.sqlite3".into(), "41".into()],
        ]
    );
    Ok(())
}

#[test]
fn model_switch_rows() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    let rows = r.rows(
        "SELECT ordinal, turn_type, coalesce(model, '-'), text FROM events
         WHERE session_id = 'cli:direct' AND source_role = 'primary' AND seq BETWEEN 3 AND 6 ORDER BY ordinal",
    )?;
    let got: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| (r[1].clone(), r[2].clone(), r[3].chars().take(40).collect()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "assistant".to_string(),
                "-".to_string(),
                "AGENTS.md, README.md, memory/ and skills".to_string()
            ),
            ("user".into(), "-".into(), "/model fast".into()),
            (
                "assistant".into(),
                "-".into(),
                "Switched model preset to `fast`.\n- Scope".into()
            ),
            (
                "system".into(),
                "fast".into(),
                "model: fast (preset) requested=fast reso".into()
            ),
            (
                "user".into(),
                "fast".into(),
                "what's 17% of 2350?\nshow the working".into()
            ),
        ]
    );
    assert_eq!(
        r.one("SELECT text FROM events WHERE session_id = 'cli:direct' AND source_role = 'primary' AND text LIKE 'model:%'")?,
        "model: fast (preset) requested=fast resolved=gpt-5.4-mini"
    );
    // the session with a switch has no `model: <preset> (preset)` start row
    assert_eq!(r.one("SELECT count(*) FROM events WHERE text LIKE 'model: % (preset)' AND text NOT LIKE '%requested=%'")?, "0");
    Ok(())
}

#[test]
fn relay_rows_and_session_start_template() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.rows(
            "SELECT session_id, text FROM events WHERE text LIKE 'session relayed:%' ORDER BY ALL"
        )?,
        vec![
            vec![
                "discord:77120044".to_string(),
                "session relayed: discord chat 77120044 (from session key)".into()
            ],
            vec![
                "discord:99001".into(),
                "session relayed: discord chat 99001 (from session key)".into()
            ],
            vec![
                "slack:C0FAKE42".into(),
                "session relayed: slack chat C0FAKE42 (from session key)".into()
            ],
            vec![
                "slack:C0WORK7".into(),
                "session relayed: slack chat C0WORK7 (from session key)".into()
            ],
            vec![
                "telegram:48213377".into(),
                "session relayed: telegram chat 48213377 (from session key)".into()
            ],
        ]
    );
    assert_eq!(
        r.rows("SELECT ordinal, timestamp_local, text FROM events WHERE session_id = 'cli:direct' AND source_role = 'primary' AND ordinal = 1")?,
        vec![vec![
            "1".to_string(),
            "2026-10-01 08:30:00".into(),
            "session start: key=cli:direct channel=cli chat=direct created_at=2026-10-01T08:30:00 updated_at=2026-10-21T19:05:04.910000".into()
        ]]
    );
    Ok(())
}

/// A `--db` file inside HOME is refused before any work, however the path
/// reaches HOME (directly, in a store's directory, through `..`, through a
/// symbolic link from outside): exit 2, one line naming the file and HOME,
/// no output written (OUT, `--tables`, the database or its `.wal`), HOME
/// unchanged.
#[test]
fn a_db_inside_home_is_refused_and_nothing_is_written() -> TestResult {
    let home = copy_home(&home_a())?;
    let real_home = home.path().canonicalize()?;
    let out_dir = tempfile::tempdir()?;
    std::os::unix::fs::symlink(home.path(), out_dir.path().join("link"))?;
    let before = tree(home.path());
    for (db, resolved) in [
        (home.path().join("all.duckdb"), real_home.join("all.duckdb")),
        (
            home.path().join(".nanobot/all.duckdb"),
            real_home.join(".nanobot/all.duckdb"),
        ),
        (
            home.path().join(".nanobot/../all.duckdb"),
            real_home.join("all.duckdb"),
        ),
        (
            out_dir.path().join("link/all.duckdb"),
            real_home.join("all.duckdb"),
        ),
    ] {
        let out = out_dir.path().join("out.parquet");
        let tables = out_dir.path().join("tables");
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
        cmd.arg(home.path())
            .arg(&out)
            .arg("--tables")
            .arg(&tables)
            .arg("--db")
            .arg(&db);
        let o = output_within(&mut cmd, HANG_LIMIT, &format!("--db {}", db.display()))?;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{}: {err}", db.display());
        assert_eq!(
            err,
            format!(
                "nanoload: error: cannot write {}: it is inside HOME ({}); nanoload never writes inside HOME\n",
                resolved.display(),
                real_home.display()
            )
        );
        assert!(!out.exists() && !tables.exists(), "{}", db.display());
        assert_eq!(tree(home.path()), before, "{}", db.display());
    }
    let mut left: Vec<String> = std::fs::read_dir(out_dir.path())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["link"]);
    Ok(())
}

#[test]
fn exit_codes_and_no_partial_output() -> TestResult {
    let r = run_home(std::path::Path::new("/nonexistent/home"), &[])?;
    assert_eq!(r.code(), Some(2));
    assert_eq!(
        r.stderr(),
        "nanoload: error: HOME /nonexistent/home: No such file or directory (os error 2)\n"
    );
    assert!(!r.out.exists());
    assert_eq!(
        std::fs::read_dir(r.dir.path())?.count(),
        0,
        "nothing written"
    );
    // OUT in a directory that does not exist
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("missing/out.parquet");
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(home_a())
        .arg(&out)
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "nanoload: error: cannot write {}: directory ",
            out.display()
        )),
        "{err}"
    );
    // OUT inside HOME
    let home = copy_home(&home_a())?;
    let before = tree(home.path());
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(home.path())
        .arg(home.path().join("out.parquet"))
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("nanoload never writes inside HOME"));
    assert_eq!(tree(home.path()), before);
    // --tables inside HOME: refused before anything is created
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(home.path())
        .arg(dir.path().join("out.parquet"))
        .arg("--tables")
        .arg(home.path().join(".nanobot/new-dir/tables"))
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(tree(home.path()), before);
    assert!(!dir.path().join("out.parquet").exists());
    // a failed run removes the --tables directory it created
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("/nonexistent/home")
        .arg(dir.path().join("out.parquet"))
        .arg("--tables")
        .arg(dir.path().join("t"))
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("t").exists());
    Ok(())
}

#[test]
fn out_parquet_types_and_order() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    let c = r.conn()?;
    let schema = query(
        &c,
        &format!(
            "SELECT name, type, converted_type, logical_type FROM parquet_schema('{}') WHERE name LIKE 'timestamp%'",
            r.out.display()
        ),
    )?;
    let utc = schema
        .iter()
        .find(|r| r[0] == "timestamp_utc")
        .map(|r| r[3].clone())
        .unwrap_or_default();
    let local = schema
        .iter()
        .find(|r| r[0] == "timestamp_local")
        .map(|r| r[3].clone())
        .unwrap_or_default();
    assert!(
        utc.contains("isAdjustedToUTC=1") || utc.contains("is_adjusted_to_utc=true"),
        "{utc}"
    );
    assert!(
        local.contains("isAdjustedToUTC=0") || local.contains("is_adjusted_to_utc=false"),
        "{local}"
    );
    let codecs = query(
        &c,
        &format!(
            "SELECT DISTINCT compression FROM parquet_metadata('{}')",
            r.out.display()
        ),
    )?;
    assert_eq!(codecs, vec![vec!["ZSTD".to_string()]]);
    let cols = query(&c, "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM (DESCRIBE events) d, LATERAL (SELECT 1) x")
        .or_else(|_| query(&c, "SELECT string_agg(column_name, ',') FROM (DESCRIBE events)"))?;
    assert_eq!(
        cols[0][0],
        "agent,instance,session_id,parent_session_id,project_path,git_branch,seq,timestamp_utc,timestamp_local,utc_offset_minutes,time_basis,turn_type,model,tool_name,tool_use_id,text,source_kind,source_role,source_path,source_line,native,load_id,ordinal,session_uid,tool_error"
    );
    // file order is the total order; ordinal is 1..n per session
    let unordered = query(
        &c,
        "SELECT count(*) FROM (SELECT *, row_number() OVER () AS file_pos,
            row_number() OVER (ORDER BY agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST, ordinal, source_kind, source_path, source_line) AS sorted_pos
            FROM events) WHERE file_pos <> sorted_pos",
    )?;
    assert_eq!(unordered[0][0], "0");
    assert_eq!(
        r.one("SELECT count(*) FROM (SELECT agent, instance, session_id, session_uid, max(ordinal) m, count(*) n FROM events GROUP BY ALL) WHERE m <> n")?,
        "0"
    );
    // local times as written; UTC derived from evidence (+02:00 in this home)
    assert_eq!(
        r.rows("SELECT DISTINCT time_basis, utc_offset_minutes FROM events WHERE timestamp_local IS NOT NULL ORDER BY ALL")?,
        vec![
            vec!["local_derived".to_string(), "120".into()],
            // a row with only a UTC time: its local time by the same offset
            vec!["utc".to_string(), "120".into()],
        ]
    );
    assert_eq!(r.one("SELECT count(*) FROM events WHERE timestamp_local IS NOT NULL AND timestamp_local - INTERVAL 2 HOUR <> CAST(timestamp_utc AS TIMESTAMP)")?, "0");
    Ok(())
}

#[test]
fn utc_offset_flag_gives_local_given() -> TestResult {
    let r = run_home(&home_a(), &["--utc-offset", "+05:00"])?;
    assert_eq!(
        r.rows("SELECT time_basis, utc_offset_minutes, timestamp_local, epoch_us(timestamp_utc) FROM events WHERE session_id = 'telegram:48213377' AND text = 'what is using port 8080?'")?,
        vec![vec!["local_given".to_string(), "300".into(), "2026-09-29 21:14:05.04".into(), "1790698445040000".into()]]
    );
    assert_eq!(r.one("SELECT count(*) FROM events WHERE timestamp_local IS NOT NULL AND time_basis NOT IN ('local_given', 'utc')")?, "0");
    // rows with only a UTC time take the given offset for their local time
    assert_eq!(
        r.rows("SELECT count(*), count(timestamp_local), min(utc_offset_minutes), max(utc_offset_minutes),
                       count(*) FILTER (timestamp_local - INTERVAL 5 HOUR <> CAST(timestamp_utc AS TIMESTAMP))
                FROM events WHERE time_basis = 'utc'")?,
        vec![vec!["43".to_string(), "43".into(), "300".into(), "300".into(), "0".into()]]
    );
    assert_eq!(
        r.one("SELECT count(*) FROM llm_calls WHERE utc_offset_minutes IS DISTINCT FROM 300 OR started_at_local - INTERVAL 5 HOUR <> CAST(started_at AS TIMESTAMP)")?,
        "0"
    );
    Ok(())
}
