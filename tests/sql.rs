//! `nanoload sql SOURCE QUERY`: one read-only query over a load's outputs,
//! its `--db` file or a ledger — the rows equal SQL over the tables, as a
//! table, JSON and JSON lines — and the guard: writes, COPY, ATTACH,
//! installs, settings, file reads outside SOURCE, several statements and
//! long queries are refused or stopped, and SOURCE is never changed.

use std::path::Path;

use assert_cmd::Command;
use assert_cmd::cargo::CommandCargoExt;

use crate::common::{Run, TestResult, fixture, mixed_home, run_home, tree};

/// `nanoload sql ARGS…`, no terminal and no `COLUMNS`.
fn sql(args: &[&str]) -> Result<std::process::Output, Box<dyn std::error::Error>> {
    Ok(Command::cargo_bin("nanoload")?
        .arg("sql")
        .args(args)
        .env_remove("COLUMNS")
        .output()?)
}

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `--json` of a query over `r`'s OUT and tables, parsed.
fn json_of(r: &Run, q: &str) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let o = sql(&[&s(&r.out), "--tables", &s(&r.tables), q, "--json"])?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    Ok(serde_json::from_slice(&o.stdout)?)
}

#[test]
fn a_query_over_a_load_gives_the_rows_of_its_tables() -> TestResult {
    let home = mixed_home()?;
    let r = run_home(home.path(), &[])?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    let q = "SELECT agent, turn_type, count(*) AS n FROM events GROUP BY ALL ORDER BY ALL";
    // the same query through the tests' own DuckDB over the same files
    let expected = r.rows(q)?;
    assert!(expected.len() > 6, "{expected:?}");
    let j = json_of(&r, q)?;
    let got: Vec<Vec<String>> = j["rows"]
        .as_array()
        .ok_or("rows")?
        .iter()
        .map(|row| {
            row.as_array()
                .into_iter()
                .flatten()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
                .collect()
        })
        .collect();
    assert_eq!(got, expected);
    assert_eq!(j["row_count"], expected.len());
    assert_eq!(j["truncated"], false);
    assert_eq!(
        j["columns"],
        serde_json::json!([
            {"name": "agent", "type": "VARCHAR"},
            {"name": "turn_type", "type": "VARCHAR"},
            {"name": "n", "type": "BIGINT"},
        ])
    );

    // JSON lines: one object per row, the same values
    let o = sql(&[&s(&r.out), "--tables", &s(&r.tables), q, "--jsonl"])?;
    let lines: Vec<serde_json::Value> = String::from_utf8(o.stdout)?
        .lines()
        .map(serde_json::from_str)
        .collect::<Result<_, _>>()?;
    assert_eq!(lines.len(), expected.len());
    assert_eq!(lines[0]["agent"], expected[0][0].as_str());
    assert_eq!(lines[0]["n"].to_string(), expected[0][2]);

    // every side table is a view of its name
    // a row that looks like an error is still a row (exit 0)
    let o = sql(&[&s(&r.out), "SELECT 'x' AS error", "--jsonl"])?;
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, b"{\"error\":\"x\"}\n");

    let tables = json_of(&r, "SHOW TABLES")?;
    assert_eq!(
        tables["rows"],
        serde_json::json!([
            ["diagnostics"],
            ["events"],
            ["llm_calls"],
            ["sessions"],
            ["sources"],
            ["tz_offsets"]
        ])
    );
    let cost = "SELECT round(sum(cost_usd), 9) FROM llm_calls";
    assert_eq!(json_of(&r, cost)?["rows"][0][0].to_string(), r.one(cost)?);
    Ok(())
}

#[test]
fn the_table_a_person_reads() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    let o = sql(&[
        &s(&r.out),
        "--tables",
        &s(&r.tables),
        "SELECT model, count(*) AS calls, sum(input_tokens) AS input, round(sum(cost_usd), 4) AS cost, NULL AS nothing, 'a\tb\nc' AS text FROM llm_calls GROUP BY model ORDER BY model",
    ])?;
    assert_eq!(o.status.code(), Some(0));
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    insta::assert_snapshot!("sql_table_home_a", String::from_utf8(o.stdout)?);

    // at 40 columns the widest cells are cut with … and the table fits
    let o = Command::cargo_bin("nanoload")?
        .args(["sql", &s(&r.out), "--tables", &s(&r.tables)])
        .arg("SELECT model, source_path FROM llm_calls ORDER BY ALL LIMIT 2")
        .env("COLUMNS", "40")
        .output()?;
    let text = String::from_utf8(o.stdout)?;
    for line in text.lines() {
        assert!(
            console::measure_text_width(line) <= 40,
            "{line:?} is wider than 40"
        );
    }
    assert!(text.contains('…'), "{text}");

    // the row limit: the first N rows and a line saying there are more
    let o = sql(&[
        &s(&r.out),
        "SELECT seq FROM events ORDER BY ordinal",
        "--max-rows",
        "3",
    ])?;
    let text = String::from_utf8(o.stdout)?;
    assert_eq!(text.lines().count(), 2 + 3 + 1, "{text}");
    assert!(
        text.ends_with("(3 rows shown; there are more: --max-rows 0 shows all)\n"),
        "{text}"
    );
    Ok(())
}

/// Queries the guard refuses or stops: (query, kind of error, words of
/// its message).
const REFUSED: &[(&str, &str, &str)] = &[
    (
        "CREATE TABLE t AS SELECT 1",
        "refused",
        "only reading is allowed",
    ),
    (
        "INSERT INTO events SELECT * FROM events",
        "refused",
        "only reading is allowed",
    ),
    ("DELETE FROM events", "refused", "only reading is allowed"),
    ("DROP VIEW events", "refused", "only reading is allowed"),
    (
        "COPY (SELECT 1) TO 'TABLES/stolen.csv'",
        "refused",
        "only reading is allowed",
    ),
    (
        "COPY events TO 'TABLES/events.parquet'",
        "refused",
        "only reading is allowed",
    ),
    (
        "ATTACH 'TABLES/other.duckdb'",
        "refused",
        "only reading is allowed",
    ),
    ("INSTALL httpfs", "refused", "only reading is allowed"),
    ("LOAD httpfs", "refused", "only reading is allowed"),
    (
        "SET enable_external_access = true",
        "refused",
        "only reading is allowed",
    ),
    ("PRAGMA version", "refused", "only reading is allowed"),
    (
        "EXPORT DATABASE 'TABLES/x'",
        "refused",
        "only reading is allowed",
    ),
    (
        "SELECT 1; DROP VIEW events",
        "refused",
        "only reading is allowed",
    ),
    (
        "SELECT 1; SELECT 2",
        "refused",
        "one statement at a time (2 given)",
    ),
    ("", "refused", "the query is empty"),
    (
        "SELECT * FROM read_csv('/etc/passwd')",
        "error",
        "file system operations are disabled",
    ),
    (
        "SELECT * FROM read_text('/etc/hostname')",
        "error",
        "file system operations are disabled",
    ),
    (
        "SELECT * FROM glob('/etc/*')",
        "error",
        "file system operations are disabled",
    ),
    (
        "SELECT count(*) FROM range(1000000000000)",
        "timeout",
        "ran longer than 1 s",
    ),
    ("SELEC 1", "error", "syntax error"),
];

#[test]
fn the_guard_refuses_writes_file_reads_attach_installs_and_long_queries() -> TestResult {
    let home = tempfile::tempdir()?;
    crate::common::copy_tree(&fixture("nanobot/home-a"), home.path())?;
    let r = run_home(home.path(), &[])?;
    let before = tree(r.dir.path());
    let tables = s(&r.tables);
    for (q, kind, words) in REFUSED {
        let q = q.replace("TABLES", &tables);
        for format in ["--json", "--jsonl"] {
            let o = sql(&[
                &s(&r.out),
                "--tables",
                &tables,
                &q,
                "--timeout",
                "1",
                format,
            ])?;
            assert_eq!(o.status.code(), Some(2), "{q}");
            let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
            assert_eq!(j["error"]["kind"], *kind, "{q}: {j}");
            let message = j["error"]["message"].as_str().unwrap_or("");
            assert!(message.contains(words), "{q}: {message}");
            assert_eq!(o.stdout.iter().filter(|b| **b == b'\n').count(), 1, "{q}");
        }
        // without --json: one line on stderr, nothing on stdout
        let o = sql(&[&s(&r.out), "--tables", &tables, &q, "--timeout", "1"])?;
        assert_eq!(o.status.code(), Some(2), "{q}");
        assert!(o.stdout.is_empty(), "{q}");
        let err = String::from_utf8(o.stderr)?;
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("nanoload: "), "{err}");
    }
    // nothing was written beside the outputs, and they are as they were
    assert_eq!(tree(r.dir.path()), before);
    // reading SOURCE's own files directly is allowed
    let j = json_of(
        &r,
        &format!(
            "SELECT count(*) FROM read_parquet('{}')",
            r.tables.join("sessions.parquet").display()
        ),
    )?;
    assert_eq!(
        j["rows"][0][0].to_string(),
        r.one("SELECT count(*) FROM sessions")?
    );
    Ok(())
}

#[test]
fn a_db_file_and_a_ledger_are_read_read_only() -> TestResult {
    let home = fixture("nanobot/home-a");
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("out.duckdb");
    let r = run_home(&home, &["--db", &s(&db)])?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    let q = "SELECT session_uid, count(*) AS n FROM events GROUP BY ALL ORDER BY ALL";
    let from_out = sql(&[&s(&r.out), q, "--json"])?;
    let before = tree(dir.path());
    let from_db = sql(&[&s(&db), q, "--json"])?;
    assert_eq!(from_db.status.code(), Some(0));
    assert_eq!(from_db.stdout, from_out.stdout);
    let refused = sql(&[&s(&db), "DELETE FROM events", "--json"])?;
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(tree(dir.path()), before, "the --db file was changed");

    // a ledger: its loads and its rows, and the ledger unchanged
    let ledger = dir.path().join("history.duckdb");
    let o = Command::cargo_bin("nanoload")?
        .args(["sync", &s(&home), &s(&ledger), "--quiet"])
        .output()?;
    assert!(matches!(o.status.code(), Some(0 | 1)));
    let before = tree(dir.path());
    let o = sql(&[
        &s(&ledger),
        "SELECT sync, added, gone FROM loads ORDER BY sync",
        "--json",
    ])?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(j["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(j["rows"][0][0], 1);
    assert_eq!(j["rows"][0][2], 0);
    let o = sql(&[
        &s(&ledger),
        "UPDATE ledger_events SET present = false",
        "--json",
    ])?;
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(tree(dir.path()), before, "the ledger was changed");
    Ok(())
}

#[test]
fn a_source_that_is_not_nanoloads_is_named() -> TestResult {
    let dir = tempfile::tempdir()?;
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "hello")?;
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty)?;
    let missing = dir.path().join("missing.parquet");
    for (src, words) in [
        (
            &text,
            "not a Parquet file, a tables directory or a DuckDB database",
        ),
        (
            &empty,
            "neither a HOME nor a tables directory: no agent state under it (a .nanobot* directory, a nanoclaw root with data/v2.db) and no <table>.parquet file in it",
        ),
        (&missing, "No such file or directory"),
    ] {
        let o = sql(&[&s(src), "SELECT 1"])?;
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8(o.stderr)?;
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&format!("nanoload: {}: ", src.display())),
            "{err}"
        );
        assert!(err.contains(words), "{err}");
    }
    Ok(())
}

#[test]
fn sql_help_explains_every_flag() -> TestResult {
    let o = Command::cargo_bin("nanoload")?
        .args(["sql", "--help"])
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("sql_help", String::from_utf8(o.stdout)?);
    Ok(())
}

/// A query whose work is one long expression (DuckDB checks its interrupt
/// only between vectors) is answered with the timeout error at the
/// deadline, not when the expression ends: the process answers and exits.
#[test]
fn a_query_that_is_one_long_expression_stops_at_the_timeout() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    for format in [Some("--json"), None] {
        let mut cmd = std::process::Command::cargo_bin("nanoload")?;
        cmd.args([
            "sql",
            &s(&r.out),
            crate::common::LONG_QUERY,
            "--timeout",
            "2",
        ])
        .args(format)
        .env_remove("COLUMNS");
        // the watchdog fails the case if the query outlives its deadline
        let o = crate::common::output_within(
            &mut cmd,
            std::time::Duration::from_secs(15),
            "sql with --timeout 2",
        )?;
        assert_eq!(o.status.code(), Some(2));
        let message = "error: the query ran longer than 2 s and was stopped (--timeout)";
        match format {
            Some(_) => {
                let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
                assert_eq!(
                    j,
                    serde_json::json!({"error": {"kind": "timeout", "message": message}})
                );
            }
            None => {
                assert!(o.stdout.is_empty());
                assert_eq!(
                    String::from_utf8(o.stderr)?,
                    format!("nanoload: {message}\n")
                );
            }
        }
    }
    Ok(())
}

/// `--max-rows` as large as the type holds means every row, not none.
#[test]
fn the_largest_max_rows_shows_every_row() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    let o = sql(&[
        &s(&r.out),
        "SELECT seq FROM events ORDER BY ALL",
        "--max-rows",
        &u64::MAX.to_string(),
        "--json",
    ])?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    let n: usize = r.one("SELECT count(*) FROM events")?.parse()?;
    assert!(n > 100, "{n}");
    assert_eq!(j["row_count"], n);
    assert_eq!(j["truncated"], false);
    Ok(())
}

/// Date math over a load (OUT and its tables): the questions DuckDB's time
/// zone functions answer (an instant minus an interval, a TIMESTAMP WITH
/// TIME ZONE's date, `date_trunc`, `AT TIME ZONE`) and a week's group by,
/// over home-a's calls and events, with the rows they give (times with a
/// zone in UTC). The MCP `query` tool answers the same (tests/mcp.rs).
pub const LOAD_DATE_MATH: [(&str, &str); 7] = [
    (
        "SELECT count(*) AS calls FROM llm_calls
         WHERE started_at > (SELECT max(started_at) FROM llm_calls) - INTERVAL 7 DAY",
        r#"[[16]]"#,
    ),
    (
        "SELECT count(*) FILTER (WHERE started_at < now() - INTERVAL 7 DAY) AS older,
                count(*) FILTER (WHERE started_at >= now() - INTERVAL 7 DAY) AS recent
         FROM llm_calls",
        r#"[[32,0]]"#,
    ),
    (
        "SELECT started_at::DATE AS day, count(*) AS calls FROM llm_calls GROUP BY day ORDER BY day",
        r#"[["2026-08-20",2],["2026-09-10",2],["2026-09-16",4],["2026-09-29",2],["2026-09-30",3],["2026-10-01",3],["2026-10-19",4],["2026-10-20",5],["2026-10-21",5],["2026-10-22",2]]"#,
    ),
    (
        "SELECT timestamp_utc::DATE AS day, count(*) AS n FROM events
         WHERE time_basis = 'local_derived' GROUP BY day ORDER BY day",
        r#"[["2026-08-20",7],["2026-09-10",7],["2026-09-12",1],["2026-09-16",10],["2026-09-29",9],["2026-09-30",11],["2026-10-01",12],["2026-10-19",9],["2026-10-20",12],["2026-10-21",10],["2026-10-22",4]]"#,
    ),
    (
        "SELECT date_trunc('month', started_at) AS month, count(*) AS calls
         FROM llm_calls GROUP BY month ORDER BY month",
        r#"[["2026-08-01 00:00:00+00",2],["2026-09-01 00:00:00+00",11],["2026-10-01 00:00:00+00",19]]"#,
    ),
    (
        "SELECT min(started_at) AT TIME ZONE 'Europe/Berlin' AS berlin,
                max(started_at) AT TIME ZONE 'America/New_York' AS new_york
         FROM llm_calls",
        r#"[["2026-08-20 19:00:00.29","2026-10-22 03:10:02.84"]]"#,
    ),
    (
        "SELECT date_trunc('week', started_at) AS week, count(*) AS calls
         FROM llm_calls GROUP BY week ORDER BY week",
        r#"[["2026-08-17 00:00:00+00",2],["2026-09-07 00:00:00+00",2],["2026-09-14 00:00:00+00",4],["2026-09-28 00:00:00+00",8],["2026-10-19 00:00:00+00",16]]"#,
    ),
];

/// The same questions over a ledger of home-a (one sync): its calls'
/// `started_at_ms`, its loads' naive UTC times.
pub const LEDGER_DATE_MATH: [(&str, &str); 4] = [
    (
        "SELECT count(*) AS syncs FROM loads
         WHERE started_at AT TIME ZONE 'UTC' > now() - INTERVAL 7 DAY",
        r#"[[1]]"#,
    ),
    (
        "SELECT to_timestamp(started_at_ms / 1000)::DATE AS day, count(*) AS calls
         FROM ledger_llm_calls GROUP BY day ORDER BY day",
        r#"[["2026-08-20",2],["2026-09-10",2],["2026-09-16",4],["2026-09-29",2],["2026-09-30",3],["2026-10-01",3],["2026-10-19",4],["2026-10-20",5],["2026-10-21",5],["2026-10-22",2]]"#,
    ),
    (
        "SELECT (make_timestamp(min(started_at_ms) * 1000) AT TIME ZONE 'UTC')
                    AT TIME ZONE 'Europe/Berlin' AS berlin
         FROM ledger_llm_calls",
        r#"[["2026-08-20 19:00:00.29"]]"#,
    ),
    (
        "SELECT date_trunc('week', to_timestamp(started_at_ms / 1000)) AS week, count(*) AS calls
         FROM ledger_llm_calls GROUP BY week ORDER BY week",
        r#"[["2026-08-17 00:00:00+00",2],["2026-09-07 00:00:00+00",2],["2026-09-14 00:00:00+00",4],["2026-09-28 00:00:00+00",8],["2026-10-19 00:00:00+00",16]]"#,
    ),
];

/// `now() - INTERVAL 7 DAY` as text: an instant in UTC (`+00`) seven days
/// before this test's clock, to the minute.
pub fn is_a_week_ago(shown: &str) -> bool {
    let Some(t) = shown.strip_suffix("+00") else {
        return false;
    };
    let Ok(t) = chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%d %H:%M:%S%.f") else {
        return false;
    };
    let week_ago = chrono::Utc::now().naive_utc() - chrono::Duration::days(7);
    (t - week_ago).num_seconds().abs() < 120
}

#[test]
fn date_math_runs_on_a_load_and_on_a_ledger() -> TestResult {
    let home = fixture("nanobot/home-a");
    let r = run_home(&home, &[])?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    let answer =
        |source: &[&str], q: &str| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
            let mut args: Vec<&str> = source.to_vec();
            args.extend([q, "--json"]);
            let o = sql(&args)?;
            assert_eq!(
                o.status.code(),
                Some(0),
                "{q}: {}",
                String::from_utf8_lossy(&o.stdout)
            );
            Ok(serde_json::from_slice(&o.stdout)?)
        };
    let (out, tables) = (s(&r.out), s(&r.tables));
    for (q, rows) in LOAD_DATE_MATH {
        let j = answer(&[&out, "--tables", &tables], q)?;
        assert_eq!(
            j["rows"],
            serde_json::from_str::<serde_json::Value>(rows)?,
            "{q}"
        );
    }
    let j = answer(
        &[&out],
        "SELECT CAST(now() - INTERVAL 7 DAY AS VARCHAR) AS t",
    )?;
    let shown = j["rows"][0][0].as_str().unwrap_or("");
    assert!(is_a_week_ago(shown), "{shown}");

    let dir = tempfile::tempdir()?;
    let ledger = dir.path().join("history.duckdb");
    let o = Command::cargo_bin("nanoload")?
        .args(["sync", &s(&home), &s(&ledger), "--quiet"])
        .output()?;
    assert!(matches!(o.status.code(), Some(0 | 1)));
    for (q, rows) in LEDGER_DATE_MATH {
        let j = answer(&[&s(&ledger)], q)?;
        assert_eq!(
            j["rows"],
            serde_json::from_str::<serde_json::Value>(rows)?,
            "{q}"
        );
    }
    Ok(())
}

/// A query DuckDB cannot run, and a SOURCE whose Parquet is broken, are
/// answered with what was wrong in the user's terms: the class of mistake
/// and the name at fault, never the statement nanoload wrapped the query
/// in, DuckDB's caret display or its error-type prefix.
#[test]
fn an_error_says_what_was_wrong_in_the_users_terms() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let mistakes = [
        (
            "SELECT nope FROM events",
            "no column named nope in the tables the query reads; similar: model, native, tool_error, source_kind, source_line",
        ),
        (
            "SELECT * FROM nope",
            "no table or view named nope (this events file has: diagnostics, events, llm_calls, sessions, sources, tz_offsets)",
        ),
        (
            "SELECT nosuchfn(1)",
            "no function named nosuchfn (did you mean nanosecond?)",
        ),
        (
            "SELECT date_trunc(started_at, 'week') FROM llm_calls",
            "no function date_trunc takes these arguments: date_trunc(TIMESTAMP WITH TIME ZONE, STRING_LITERAL) (check their order and types)",
        ),
        (
            "SELECT 'a'::INT",
            "a value cannot be used so: Could not convert string 'a' to INT32",
        ),
        (
            "SELECT 2147483647::INT + 1",
            "a value cannot be used so: Overflow in addition of INT32 (2147483647 + 1)!",
        ),
        (
            "SELEC 1",
            "not valid SQL: syntax error at or near \"SELEC\"",
        ),
        (
            "SELECT * FROM read_csv('/etc/passwd')",
            "only SOURCE's own files can be read: Cannot access file \"/etc/passwd\" - file system operations are disabled by configuration",
        ),
    ];
    for (q, said) in mistakes {
        let o = sql(&[&out, "--tables", &tables, q])?;
        assert_eq!(o.status.code(), Some(2), "{q}");
        assert_eq!(
            String::from_utf8(o.stderr)?,
            format!("nanoload: error: {said}\n"),
            "{q}"
        );
        let o = sql(&[&out, "--tables", &tables, q, "--json"])?;
        let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        assert_eq!(
            j,
            serde_json::json!({"error": {"kind": "error", "message": format!("error: {said}")}}),
            "{q}"
        );
    }

    // a SOURCE whose Parquet is broken: what is wrong with the file, by its
    // own bytes
    let dir = tempfile::tempdir()?;
    let cut = dir.path().join("cut.parquet");
    let bytes = std::fs::read(&r.out)?;
    std::fs::write(&cut, &bytes[..bytes.len() / 2])?;
    let broken = dir.path().join("tables");
    crate::common::copy_tree(&r.tables, &broken)?;
    std::fs::write(broken.join("sessions.parquet"), "hello\n")?;
    let notes = dir.path().join("notes");
    crate::common::copy_tree(&r.tables, &notes)?;
    std::fs::write(notes.join("llm_calls.parquet"), "my notes, not a table\n")?;
    for (args, path, said) in [
        (
            vec![s(&cut)],
            cut.clone(),
            "not a complete Parquet file: it ends before Parquet's footer (cut short, or still being written?)",
        ),
        (
            vec![out.clone(), "--tables".into(), s(&broken)],
            broken.join("sessions.parquet"),
            "not a Parquet file: 6 bytes, too short to hold one",
        ),
        (
            vec![s(&notes)],
            notes.join("llm_calls.parquet"),
            "not a Parquet file",
        ),
    ] {
        let mut a: Vec<&str> = args.iter().map(String::as_str).collect();
        a.push("SELECT 1");
        let o = sql(&a)?;
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            String::from_utf8(o.stderr)?,
            format!("nanoload: {}: {said}\n", path.display())
        );
    }
    Ok(())
}

/// The engine's ICU takes the host's time zone (`TZ`) as its default: every
/// connection is set to UTC, so a load writes the same bytes and a query
/// gives the same answer in Tokyo as in UTC.
#[test]
fn outputs_and_answers_are_the_same_in_every_host_time_zone() -> TestResult {
    let home = crate::fixture_homes::materialize("nanobot/home-a")?;
    let dir = tempfile::tempdir()?;
    let q = "SELECT CAST(min(timestamp_utc) AS VARCHAR) AS first, min(timestamp_utc)::DATE AS day,
                    CAST(date_trunc('day', max(timestamp_utc)) AS VARCHAR) AS last_day
             FROM events WHERE time_basis = 'local_derived'";
    let mut seen = Vec::new();
    for tz in ["UTC", "Asia/Tokyo", "America/Los_Angeles"] {
        let out = dir.path().join(format!("{}.parquet", tz.replace('/', "-")));
        let tables = dir.path().join(format!("{}-tables", tz.replace('/', "-")));
        let o = std::process::Command::cargo_bin("nanoload")?
            .arg(home.path())
            .arg(&out)
            .arg("--tables")
            .arg(&tables)
            .env("TZ", tz)
            .output()?;
        assert!(matches!(o.status.code(), Some(0 | 1)), "{tz}");
        let mut bytes = vec![std::fs::read(&out)?];
        for t in [
            "sessions",
            "llm_calls",
            "tz_offsets",
            "diagnostics",
            "sources",
        ] {
            bytes.push(std::fs::read(tables.join(format!("{t}.parquet")))?);
        }
        let o = Command::cargo_bin("nanoload")?
            .args(["sql", &s(&out), q, "--json"])
            .env("TZ", tz)
            .output()?;
        assert_eq!(o.status.code(), Some(0), "{tz}");
        let j: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        assert_eq!(
            j["rows"],
            serde_json::json!([[
                "2026-08-20 17:00:00+00",
                "2026-08-20",
                "2026-10-22 00:00:00+00"
            ]]),
            "{tz}"
        );
        seen.push((tz, bytes));
    }
    for (tz, bytes) in &seen[1..] {
        assert!(bytes == &seen[0].1, "{tz}: the outputs differ from UTC's");
    }
    Ok(())
}
