//! `nanoload usage`: each view of each fixture home (nanobot, nanoclaw, both)
//! against its snapshot, the totals against SQL over `llm_calls`, the width
//! a table fits, a HOME loaded on the spot, and the arguments refused.

use std::path::Path;

use assert_cmd::Command;

use crate::common::{CALL_SUMS, Run, TestResult, fixture, json_cells, mixed_home, run_home, tree};

const VIEWS: [&str; 5] = ["daily", "weekly", "monthly", "session", "model"];

/// `nanoload usage` with `args`, no terminal and no `COLUMNS`.
fn usage(args: &[&str]) -> Result<std::process::Output, Box<dyn std::error::Error>> {
    Ok(Command::cargo_bin("nanoload")?
        .arg("usage")
        .args(args)
        .env("XDG_CACHE_HOME", crate::common::private_cache()?)
        .env_remove("COLUMNS")
        .output()?)
}

fn of_run(r: &Run, args: &[&str]) -> Result<std::process::Output, Box<dyn std::error::Error>> {
    let out = r.out.to_string_lossy().into_owned();
    let tables = r.tables.to_string_lossy().into_owned();
    let mut a = vec![out.as_str(), "--tables", tables.as_str()];
    a.extend_from_slice(args);
    usage(&a)
}

fn text(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every view of a load, one after another, as the snapshot holds them.
fn all_views(r: &Run) -> Result<String, Box<dyn std::error::Error>> {
    let mut s = String::new();
    for v in VIEWS {
        let o = of_run(r, &["--by", v])?;
        assert_eq!(
            o.status.code(),
            Some(0),
            "{v}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(
            o.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        s.push_str(&format!("$ nanoload usage OUT --tables DIR --by {v}\n"));
        s.push_str(&text(&o));
        s.push('\n');
    }
    Ok(s)
}

#[test]
fn each_view_of_a_nanobot_home() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    insta::assert_snapshot!("usage_nanobot_home_a", all_views(&r)?);
    Ok(())
}

#[test]
fn each_view_of_a_nanoclaw_home() -> TestResult {
    let r = run_home(&fixture("nanoclaw/home-cc"), &[])?;
    insta::assert_snapshot!("usage_nanoclaw_home_cc", all_views(&r)?);
    Ok(())
}

/// Both agents in one table; and `usage HOME` (a load on the spot, HOME
/// untouched) shows what the output of a load of HOME shows.
#[test]
fn each_view_of_a_mixed_home_and_straight_from_it() -> TestResult {
    let home = mixed_home()?;
    let before = tree(home.path());
    let r = run_home(home.path(), &[])?;
    // home-a's torn line and bad record (EXPECTED.md)
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    insta::assert_snapshot!("usage_mixed", all_views(&r)?);
    let h = home.path().to_string_lossy().into_owned();
    for v in ["daily", "session"] {
        let direct = usage(&[&h, "--by", v])?;
        // the load's exit code and its read failures, one line each
        let err = String::from_utf8_lossy(&direct.stderr).into_owned();
        assert_eq!(direct.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 2, "{err}");
        assert!(
            err.starts_with("nanoload: bad_line: .nanobot-work/sessions/"),
            "{err}"
        );
        assert_eq!(text(&direct), text(&of_run(&r, &["--by", v])?), "{v}");
    }
    assert_eq!(tree(home.path()), before, "HOME changed");
    Ok(())
}

/// `--json`: every row and the totals equal SQL over `llm_calls` (calls,
/// tokens, exact cost sums), for every view of every home; the rows of a
/// view add up to its totals.
#[test]
fn json_rows_and_totals_equal_sql_over_llm_calls() -> TestResult {
    let home = mixed_home()?;
    let mixed = run_home(home.path(), &[])?;
    for r in [
        run_home(&fixture("nanobot/home-a"), &[])?,
        run_home(&fixture("nanoclaw/home-cc"), &[])?,
        mixed,
    ] {
        let want = r.rows(
            "SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cache_read_tokens),
                    sum(cache_write_tokens), sum(total_tokens),
                    round(sum(cost_usd::DECIMAL(38, 12)), 6), count(*) - count(cost_usd)
             FROM llm_calls",
        )?;
        for v in VIEWS {
            let o = of_run(&r, &["--by", v, "--json"])?;
            assert_eq!(o.status.code(), Some(0));
            let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
            let t = &doc["totals"];
            let got = json_cells(t, &CALL_SUMS);
            assert_eq!(got, want[0], "{v} totals of {}", r.out.display());
            let rows = doc["rows"].as_array().cloned().unwrap_or_default();
            for f in ["calls", "input_tokens", "output_tokens", "unpriced_calls"] {
                let sum: i64 = rows.iter().map(|x| x[f].as_i64().unwrap_or(0)).sum();
                assert_eq!(Some(sum), t[f].as_i64(), "{v} {f}");
            }
            assert_eq!(doc["view"], v);
        }
    }
    Ok(())
}

/// No line wider than the width given (`COLUMNS` without a terminal): the
/// numbers compact, then columns drop, and notes say which.
#[test]
fn a_table_fits_the_width_it_is_given() -> TestResult {
    let home = mixed_home()?;
    let r = run_home(home.path(), &[])?;
    for (width, view) in [(60, "session"), (48, "daily"), (40, "model")] {
        let out = r.out.to_string_lossy().into_owned();
        let tables = r.tables.to_string_lossy().into_owned();
        let o = Command::cargo_bin("nanoload")?
            .args(["usage", &out, "--tables", &tables, "--by", view])
            .env("COLUMNS", width.to_string())
            .output()?;
        assert_eq!(o.status.code(), Some(0));
        let t = text(&o);
        for line in t.lines() {
            assert!(
                line.chars().count() <= width,
                "{width} {view}: {line:?}\n{t}"
            );
        }
        assert!(t.contains("TOTAL"), "{t}");
        assert!(t.contains(&format!("hidden to fit {width} columns")), "{t}");
    }
    Ok(())
}

/// `--since`/`--until` keep the local days between them, inclusive, and
/// TOTAL is over those; `--timezone` places every call in the zone given.
#[test]
fn a_date_range_and_a_zone_choose_the_days() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    let days = r.rows(
        "SELECT strftime(started_at_local, '%Y-%m-%d') AS d, count(*) FROM llm_calls
         GROUP BY d ORDER BY d",
    )?;
    assert!(days.len() >= 2, "{days:?}");
    let (first, last) = (&days[0][0], &days[days.len() - 1][0]);
    let o = of_run(&r, &["--json", "--since", last])?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(doc["totals"]["calls"].to_string(), days[days.len() - 1][1]);
    let compact = first.replace('-', "");
    let o = of_run(&r, &["--json", "--until", &compact])?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["rows"][0]["day"], first.as_str());
    assert_eq!(doc["totals"]["calls"].to_string(), days[0][1]);
    // in UTC and at +14:00 the days are UTC's and UTC+14's
    for (zone, shift) in [("UTC", 0), ("+14:00", 14 * 60)] {
        let want = r.rows(&format!(
            "SELECT strftime(started_at + INTERVAL {shift} MINUTE, '%Y-%m-%d') AS d, count(*)
             FROM (SELECT make_timestamp(started_at_ms * 1000) AS started_at FROM llm_calls)
             GROUP BY d ORDER BY d"
        ))?;
        let o = of_run(&r, &["--json", "--timezone", zone])?;
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        let got: Vec<Vec<String>> = doc["rows"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|x| {
                vec![
                    x["day"].as_str().unwrap_or("").to_string(),
                    x["calls"].to_string(),
                ]
            })
            .collect();
        assert_eq!(got, want, "{zone}");
        assert_eq!(
            doc["timezone"],
            if zone == "UTC" { "UTC" } else { "UTC+14:00" }
        );
    }
    Ok(())
}

/// A named zone follows its DST: a call at 00:30 UTC on 2026-03-29 (the
/// day Berlin springs forward at 01:00 UTC) is on 2026-03-29 in Berlin
/// (01:30 CET) and one at 23:30 UTC that day on 2026-03-30 (01:30 CEST).
#[test]
fn a_named_zone_places_calls_by_its_offset_at_their_instant() -> TestResult {
    let dir = tempfile::tempdir()?;
    let tables = dir.path().join("tables");
    std::fs::create_dir(&tables)?;
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "COPY (SELECT *, 's' AS session_uid, 's' AS session_id, 'p' AS provider, 'm' AS model
               FROM (VALUES
                 ('nanobot', 1774744200000, TIMESTAMP '2026-03-29 01:30:00', 10, 1, 0, 0, 11, 0.5),
                 ('nanobot', 1774827000000, TIMESTAMP '2026-03-30 01:30:00', 20, 2, 0, 0, 22, 0.25))
               t(agent, started_at_ms, started_at_local, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, total_tokens, cost_usd)
         ) TO '{}' (FORMAT parquet)",
        tables.join("llm_calls.parquet").display()
    ))?;
    let out = dir.path().join("out.parquet");
    std::fs::write(&out, b"")?;
    let o = usage(&[
        &out.to_string_lossy(),
        "--tables",
        &tables.to_string_lossy(),
        "--timezone",
        "Europe/Berlin",
        "--json",
    ])?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    let days: Vec<&str> = doc["rows"]
        .as_array()
        .map(|a| a.iter().filter_map(|x| x["day"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(days, ["2026-03-29", "2026-03-30"]);
    assert_eq!(doc["totals"]["cost_usd"].as_f64(), Some(0.75));
    Ok(())
}

/// Each refusal: one line naming what is wrong, exit 2, nothing on stdout.
#[test]
fn usage_refuses_what_it_cannot_show_in_one_line() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    let out = r.out.to_string_lossy().into_owned();
    let missing = Path::new("/nonexistent/out.parquet");
    let cases: Vec<(Vec<&str>, String)> = vec![
        (
            vec![&out],
            format!(
                "nanoload: error: {out}: the calls are in the load's side tables: give --tables DIR (the --tables of the load), or a HOME to load now"
            ),
        ),
        (
            vec![missing.to_str().unwrap_or_default()],
            "nanoload: error: /nonexistent/out.parquet: no such file or directory (a HOME, or OUT.parquet of a load)".into(),
        ),
        (
            vec![&out, "--tables", "/nonexistent"],
            "nanoload: error: /nonexistent/llm_calls.parquet: no such file (the --tables DIR of a load holds llm_calls.parquet)".into(),
        ),
        (
            vec![&out, "--since", "March"],
            "error: invalid value 'March' for '--since <DATE>': \"March\" is no date: give YYYY-MM-DD (or YYYYMMDD)".into(),
        ),
        (
            vec![&out, "--timezone", "Mars/Olympus"],
            "error: invalid value 'Mars/Olympus' for '--timezone <ZONE>': \"Mars/Olympus\" is no time zone: give UTC, an offset (+05:30) or a tz database name (Europe/Berlin)".into(),
        ),
    ];
    for (args, want) in cases {
        let o = usage(&args)?;
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().next(), Some(want.as_str()), "{args:?}: {err}");
        if !want.starts_with("error: invalid value") {
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
    Ok(())
}

/// `--by session`: one row per session shown by its title (its id where it
/// has none), with its instance and the local time of its last call, the
/// costliest first (a session with no priced call after every priced one);
/// the JSON rows keep the session's id under `session` and add its title,
/// instance and last call, each equal to SQL over `sessions` and
/// `llm_calls`.
#[test]
fn the_session_view_names_sessions_by_title_and_instance_costliest_first() -> TestResult {
    let home = mixed_home()?;
    let r = run_home(home.path(), &[])?;
    let o = of_run(&r, &["--by", "session", "--json"])?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    let got: Vec<Vec<String>> = doc["rows"]
        .as_array()
        .ok_or("rows")?
        .iter()
        .map(|x| {
            ["session", "title", "instance", "last", "cost_usd"]
                .iter()
                .map(|f| match &x[*f] {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => "null".into(),
                    v => v.as_f64().map_or(v.to_string(), |c| format!("{c:.6}")),
                })
                .collect()
        })
        .collect();
    let want = r.rows(
        "SELECT coalesce(min(c.session_id), 'null'), coalesce(min(s.title), 'null'),
                min(c.instance),
                strftime(max(coalesce(c.started_at_local, make_timestamp(c.started_at_ms * 1000))),
                         '%Y-%m-%d %H:%M'),
                coalesce(CAST(CAST(round(sum(CAST(c.cost_usd AS DECIMAL(38, 12))), 6) AS DECIMAL(38, 6)) AS VARCHAR), 'null')
         FROM llm_calls c LEFT JOIN sessions s USING (session_uid)
         GROUP BY c.session_uid
         ORDER BY sum(CAST(c.cost_usd AS DECIMAL(38, 12))) DESC NULLS LAST,
                  max(coalesce(c.started_at_local, make_timestamp(c.started_at_ms * 1000))) DESC NULLS LAST,
                  c.session_uid NULLS LAST",
    )?;
    assert_eq!(got, want);
    assert_eq!(got.len(), 10, "{got:?}");
    // the table names each session by its title, with its instance
    let o = of_run(&r, &["--by", "session"])?;
    let table = text(&o);
    let head = table.lines().nth(2).ok_or("no head")?;
    assert!(
        head.starts_with("session") && head.contains("  instance  ") && head.contains("last call"),
        "{head}"
    );
    for row in &want {
        let shown = if row[1] == "null" { &row[0] } else { &row[1] };
        let shown = if shown == "null" {
            "(no session)"
        } else {
            shown.as_str()
        };
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(shown) && l.contains(&format!("  {}  ", row[2]))),
            "{shown} {}: {table}",
            row[2]
        );
    }
    Ok(())
}
