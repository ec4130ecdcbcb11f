//! `nanoload report` on every fixture home, opened in a real browser: the
//! report of each load of `fixture_homes` is written, and one node process
//! (tests/browser/report.mjs: Debian's headless chromium driven by
//! playwright-core, installed by tests/browser/setup.sh) opens them all,
//! blocks and counts every request that is not for a file, collects console
//! and page errors, screenshots each page and reads back every chart's
//! table and how many bars its SVG draws. Each chart's numbers must equal
//! this test's own DuckDB queries over the load's output (written here, not
//! taken from src/report.rs), the duplicates the load's own `--summary-json`
//! counted, and the marks drawn the non-zero values of the columns it draws.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use duckdb::Connection;

use crate::common::*;
use crate::fixture_homes::{homes, load};

/// A chart as the browser read it.
#[derive(Debug, serde::Deserialize)]
struct Shown {
    id: String,
    series: Vec<String>,
    marks: usize,
    svg_px: [u32; 2],
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    total: Option<Vec<String>>,
    numbers: Vec<[String; 4]>,
}

#[derive(Debug, serde::Deserialize)]
struct ShownTable {
    columns: Vec<String>,
    rows: Vec<Vec<String>>,
    numbers: Vec<[String; 4]>,
}

#[derive(Debug, serde::Deserialize)]
struct Page {
    html: String,
    errors: Vec<String>,
    requests: Vec<String>,
    title: String,
    charts: Vec<Shown>,
    facts: BTreeMap<String, String>,
    lists: BTreeMap<String, ShownTable>,
    missing: Vec<String>,
    height: u32,
    external: usize,
    collapsed: Vec<String>,
    hidden: Vec<String>,
    wide: Vec<String>,
    /// How the open page fits 1400 px, then 390 px.
    fit: [Fit; 2],
}

/// How a page fits one viewport width (every group open).
#[derive(Debug, serde::Deserialize)]
struct Fit {
    width: u32,
    scroll_width: u32,
    height: u32,
    /// Texts rendered below 11 px (SVG text at its drawn scale).
    small: Vec<String>,
    /// Boxes reaching left or right of the page.
    outside: Vec<String>,
    /// Chart texts reaching outside their SVG.
    svg_outside: Vec<String>,
    /// Dates (with their time) broken over lines.
    broken: Vec<String>,
    charts: Vec<FitChart>,
}

/// A chart's SVG as shown at one width.
#[derive(Debug, serde::Deserialize)]
struct FitChart {
    id: String,
    marks: usize,
    svg_px: [u32; 2],
    texts: Vec<String>,
}

#[derive(Debug, serde::Deserialize)]
struct Browser {
    chromium: Option<String>,
    pages: Vec<Page>,
    ms: u64,
}

/// One report to check: where it is, its screenshot, what it must show.
struct Case {
    name: String,
    html: PathBuf,
    png: PathBuf,
    /// The screenshot at 390 px.
    phone_png: PathBuf,
    expected: Expected,
}

#[derive(Default)]
struct Expected {
    /// Per chart id: its column names and rows.
    charts: BTreeMap<&'static str, (Vec<String>, Vec<Vec<String>>)>,
    /// Per chart id: its TOTAL row.
    totals: BTreeMap<&'static str, Vec<String>>,
    facts: BTreeMap<&'static str, String>,
    lists: BTreeMap<&'static str, Vec<Vec<String>>>,
    missing: Vec<&'static str>,
    /// The times the session timeline draws: (some are local, some UTC only).
    timeline_times: (bool, bool),
}

/// A DuckDB connection over a load's output in `dir` (events, and the
/// side tables when `tables`).
fn outputs(dir: &Path, tables: bool) -> Result<Connection, duckdb::Error> {
    let c = Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "CREATE VIEW events AS SELECT * FROM '{}';",
        dir.join("out.parquet").display()
    ))?;
    if tables {
        for t in TABLES {
            c.execute_batch(&format!(
                "CREATE VIEW {t} AS SELECT * FROM '{}';",
                dir.join(format!("tables/{t}.parquet")).display()
            ))?;
        }
    }
    Ok(c)
}

/// What the report of the load in `dir` must show, from this test's own
/// queries (and, for the duplicates, the load's summary).
fn expected(dir: &Path, tables: bool) -> Result<Expected, Box<dyn std::error::Error>> {
    let c = outputs(dir, tables)?;
    let mut e = Expected::default();
    let mut chart = |id: &'static str, cols: &[&'static str], sql: &str| -> TestResult {
        e.charts.insert(
            id,
            (
                cols.iter().map(|c| c.to_string()).collect(),
                query(&c, sql)?,
            ),
        );
        Ok(())
    };
    // an event's time: local, UTC where no offset is known (nanoclaw)
    let t = "coalesce(timestamp_local, CAST(timestamp_utc AS TIMESTAMP))";
    // the rows that are activity: not standing state (nanobot's permission
    // settings, a nanoclaw install's catalog rows of no session, its marker)
    let activity = "source_kind NOT IN ('nanobot.permissions', 'nanoclaw.upgrade_state')
        AND NOT (source_kind = 'nanoclaw.catalog' AND session_uid IS NULL)";
    chart(
        "activity-day",
        &["day", "events", "user", "assistant", "tool_use", "tool_result", "thinking", "system"],
        &format!(
            "SELECT CAST({t} AS DATE) AS d, count(*),
                sum(CAST(turn_type = 'user' AS INT)), sum(CAST(turn_type = 'assistant' AS INT)),
                sum(CAST(turn_type = 'tool_use' AS INT)), sum(CAST(turn_type = 'tool_result' AS INT)),
                sum(CAST(turn_type = 'thinking' AS INT)), sum(CAST(turn_type = 'system' AS INT))
             FROM events WHERE {t} IS NOT NULL AND {activity} GROUP BY d ORDER BY d"
        ),
    )?;
    chart(
        "activity-hour",
        &["hour", "events"],
        &format!(
            "SELECT h,
                    (SELECT count(*) FROM events WHERE extract(hour FROM {t}) = h AND {activity})
             FROM generate_series(0, 23) AS g(h) ORDER BY h"
        ),
    )?;
    chart(
        "sessions-timeline",
        &["session_uid", "agent", "instance", "session_id", "first_time", "last_time", "events"],
        &format!(
            "WITH s AS (
               SELECT session_uid, any_value(agent) AS a, any_value(instance) AS i,
                      coalesce(any_value(session_id), '') AS s, min({t}) AS f, max({t}) AS l,
                      count(*) AS n
               FROM events WHERE session_uid IS NOT NULL GROUP BY session_uid),
             latest AS (
               SELECT *, row_number() OVER (ORDER BY l DESC, session_uid) AS k FROM s WHERE l IS NOT NULL)
             SELECT session_uid, a, i, s, date_trunc('second', f), date_trunc('second', l), n
             FROM latest WHERE k <= 50 ORDER BY f, l, session_uid"
        ),
    )?;
    // a tool call fails when its result (same session and call id) says
    // so: nanoclaw's is_error, nanobot's WebUI error phase or the hint
    // nanobot appends to a failed call's result
    chart(
        "tools",
        &["tool", "ok", "errors", "calls", "error_rate", "sessions"],
        "WITH failed AS (
           SELECT DISTINCT session_uid, tool_use_id FROM events
           WHERE turn_type = 'tool_result' AND tool_use_id IS NOT NULL
             AND ((agent = 'nanoclaw' AND json_extract_string(native, '$.is_error') = 'true')
                  OR (agent = 'nanobot' AND (json_extract_string(native, '$.phase') = 'error'
                      OR ends_with(text, '[Analyze the error above and try a different approach.]'))))),
         u AS (
           SELECT coalesce(tool_name, '(none)') AS tool, e.session_uid,
                  EXISTS (SELECT 1 FROM failed f WHERE f.session_uid IS NOT DISTINCT FROM e.session_uid
                          AND f.tool_use_id = e.tool_use_id) AS bad
           FROM events e WHERE turn_type = 'tool_use')
         SELECT tool, count(*) - sum(CAST(bad AS INT)), sum(CAST(bad AS INT)), count(*) AS n,
                CAST(round(100 * sum(CAST(bad AS INT)) / count(*), 1) AS DECIMAL(4, 1)),
                count(DISTINCT session_uid)
         FROM u GROUP BY tool ORDER BY n DESC, tool LIMIT 40",
    )?;
    chart(
        "recovered",
        &["source_kind", "rows", "sessions"],
        "SELECT source_kind, count(*), count(DISTINCT session_uid) FROM events
         WHERE source_role = 'secondary' GROUP BY ALL ORDER BY ALL",
    )?;
    chart(
        "time-basis",
        &["instance", "time_basis", "rows"],
        "SELECT instance, coalesce(time_basis, '(none)'), count(*) FROM events GROUP BY ALL ORDER BY ALL",
    )?;
    // a call's local day, its UTC day where its instance has no offset
    let day = "CAST(CAST(coalesce(started_at_local, make_timestamp(started_at_ms * 1000)) AS DATE) AS VARCHAR)";
    let tokens = "count(*), sum(coalesce(input_tokens, 0)), sum(coalesce(output_tokens, 0)),
                  sum(coalesce(cache_read_tokens, 0)), sum(coalesce(cache_write_tokens, 0))";
    // exact decimal sums of the priced calls, to the micro-dollar; NULL: none priced
    let cost = "CASE WHEN count(cost_usd) = 0 THEN 'unknown'
                ELSE CAST(CAST(sum(CAST(cost_usd AS DECIMAL(38, 12))) AS DECIMAL(38, 6)) AS VARCHAR) END,
                count(*) - count(cost_usd)";
    let tok_cols = [
        "calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    ];
    if tables {
        let mut cols = vec!["day"];
        cols.extend(tok_cols);
        chart(
            "tokens-day",
            &cols,
            &format!(
                "SELECT {day} AS d, {tokens} FROM llm_calls WHERE started_at_ms IS NOT NULL GROUP BY d ORDER BY d"
            ),
        )?;
        // cost per day stacked by model: per (day, model) the priced sum,
        // `unknown` when none of its calls is priced, empty without calls;
        // the models by cost (then calls, then name); a TOTAL row
        let models: Vec<String> = query(
            &c,
            "SELECT coalesce(model, '(none)') AS m FROM llm_calls WHERE started_at_ms IS NOT NULL
             GROUP BY m ORDER BY sum(CAST(cost_usd AS DECIMAL(38, 12))) DESC NULLS LAST, count(*) DESC, m",
        )?
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
        assert!(models.len() <= 8, "{}: {models:?}", dir.display());
        let cells = query(
            &c,
            &format!(
                "SELECT coalesce(d, 'TOTAL'), coalesce(m, ''), {cost}
                 FROM (SELECT {day} AS d, coalesce(model, '(none)') AS m, cost_usd FROM llm_calls
                       WHERE started_at_ms IS NOT NULL)
                 GROUP BY GROUPING SETS ((d, m), (d), (m), ()) ORDER BY ALL"
            ),
        )?;
        let mut days: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in &cells {
            let row = days
                .entry(r[0].clone())
                .or_insert_with(|| vec![String::new(); models.len() + 3]);
            match models.iter().position(|m| *m == r[1]) {
                Some(i) => row[i] = r[2].clone(),
                None => {
                    let unpriced: i64 = r[3].parse()?;
                    row[models.len()] = r[2].clone();
                    row[models.len() + 1] = unpriced.to_string();
                    row[models.len() + 2] = if unpriced > 0 {
                        "partial".into()
                    } else {
                        String::new()
                    };
                }
            }
        }
        let mut cols = vec!["day".to_string()];
        cols.extend(models.iter().cloned());
        cols.extend(["total", "unpriced_calls", "partial"].map(String::from));
        let total = days.remove("TOTAL");
        let rows: Vec<Vec<String>> = days
            .into_iter()
            .map(|(d, mut r)| {
                r.insert(0, d);
                r
            })
            .collect();
        if let Some(mut t) = total.filter(|_| !rows.is_empty()) {
            t.insert(0, "TOTAL".into());
            e.totals.insert("cost-day", t);
        }
        let cost_day = (cols, rows);
        let mut cols = vec!["provider", "model"];
        cols.extend(tok_cols);
        chart(
            "tokens-model",
            &cols,
            &format!(
                "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {tokens}
                 FROM llm_calls GROUP BY p, m
                 ORDER BY sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)) DESC, p, m LIMIT 30"
            ),
        )?;
        chart(
            "cost-model",
            &["provider", "model", "cost_usd", "unpriced_calls"],
            &format!(
                "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {cost}
                 FROM llm_calls GROUP BY p, m ORDER BY sum(cost_usd) DESC NULLS LAST, p, m LIMIT 30"
            ),
        )?;
        chart(
            "offsets",
            &[
                "instance",
                "first_day",
                "last_day",
                "offset_minutes",
                "pairs",
                "agreement",
            ],
            "SELECT instance, first_day, last_day, offset_minutes, pairs, agreement FROM tz_offsets ORDER BY ALL",
        )?;
        chart(
            "diagnostics",
            &["kind", "code", "rows"],
            "SELECT kind, coalesce(code, '') AS c, count(*) AS n FROM diagnostics
             GROUP BY ALL ORDER BY n DESC, kind, c",
        )?;
        // the duplicates the load itself counted (its --summary-json): per
        // kind, rows read, rows out and dropped; the rest of the rows read
        // are nanoclaw delivered rows folded into their outbound row
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("summary.json"))?)?;
        let kinds = summary["kinds"].as_object().ok_or("summary kinds")?;
        let mut rows = Vec::new();
        for (kind, v) in kinds {
            let n = |f: &str| v[f].as_i64().ok_or(format!("{kind} {f}"));
            let (read, out, dups) = (n("rows_read")?, n("rows_out")?, n("duplicates")?);
            rows.push(vec![
                kind.clone(),
                n("stores")?.to_string(),
                read.to_string(),
                out.to_string(),
                (read - out - dups).to_string(),
                dups.to_string(),
            ]);
        }
        // … and those are exactly the outbound rows that say so
        let folded = query(
            &c,
            "SELECT count(*) FROM events WHERE source_kind = 'nanoclaw.outbound'
               AND json_extract(native, '$.delivered') IS NOT NULL",
        )?;
        let want_folded = rows
            .iter()
            .find(|r| r[0] == "nanoclaw.inbound")
            .map_or("0".to_string(), |r| r[4].clone());
        assert_eq!(folded, [[want_folded]], "{}", dir.display());
        assert!(
            rows.iter()
                .all(|r| r[0] == "nanoclaw.inbound" || r[4] == "0"),
            "{rows:?}"
        );
        e.charts.insert("cost-day", cost_day);
        e.charts.insert(
            "duplicates",
            (
                [
                    "source_kind",
                    "stores",
                    "rows_read",
                    "rows_out",
                    "folded",
                    "duplicates",
                ]
                .map(String::from)
                .to_vec(),
                rows,
            ),
        );
        // the costliest sessions with calls: sessions' own counts and cost,
        // the models their calls name
        e.lists.insert(
            "top-sessions",
            query(
                &c,
                "SELECT coalesce(s.title, s.session_id), s.instance, s.agent,
                        (SELECT strftime(min(coalesce(e.timestamp_local, CAST(e.timestamp_utc AS TIMESTAMP))),
                                         '%Y-%m-%d %H:%M:%S')
                         FROM events e WHERE e.session_uid = s.session_uid),
                        (SELECT CAST(to_days(d // 86400) + to_seconds(d % 86400) AS VARCHAR)
                         FROM (SELECT (epoch_ms(CAST(s.last_event_utc AS TIMESTAMP))
                                       - epoch_ms(CAST(s.first_event_utc AS TIMESTAMP))) // 1000 AS d)),
                        (SELECT coalesce(string_agg(DISTINCT model, ', ' ORDER BY model), '')
                         FROM llm_calls l WHERE l.session_uid = s.session_uid),
                        s.tool_calls, s.llm_calls,
                        CASE WHEN s.cost_usd IS NULL THEN 'unknown'
                             ELSE CAST(CAST(round(CAST(s.cost_usd AS DECIMAL(38, 12)), 6)
                                            AS DECIMAL(38, 6)) AS VARCHAR) END
                 FROM sessions s WHERE s.llm_calls > 0
                 ORDER BY s.cost_usd DESC NULLS LAST, s.llm_calls DESC, s.session_uid LIMIT 10",
            )?,
        );
        e.lists.insert(
            "diagnostics",
            query(
                &c,
                "SELECT kind, coalesce(code, ''), coalesce(agent, ''), coalesce(instance, ''),
                        coalesce(source_path, ''), coalesce(CAST(source_line AS VARCHAR), ''),
                        coalesce(session_id, ''), coalesce(message, '')
                 FROM diagnostics ORDER BY ALL LIMIT 200",
            )?,
        );
        e.facts.insert(
            "secondary_only_sessions",
            query(
                &c,
                "SELECT count(*) FILTER (WHERE secondary_only) FROM sessions",
            )?[0][0]
                .clone(),
        );
        // the cards at the top: SQL over the tables, shown as `nanoload
        // usage` shows numbers
        let g = query(
            &c,
            &format!(
                "WITH c AS (SELECT *, {day} AS d FROM llm_calls),
                 days AS (SELECT d, sum(CAST(cost_usd AS DECIMAL(38, 12))) AS usd FROM c
                          WHERE d IS NOT NULL GROUP BY d)
                 SELECT coalesce(CAST(round(sum(CAST(cost_usd AS DECIMAL(38, 12))), 6) AS VARCHAR), ''),
                        coalesce(CAST(sum(CASE WHEN total_tokens > 0
                                                 OR coalesce(input_tokens, 0) + coalesce(output_tokens, 0) = 0
                                               THEN total_tokens
                                               ELSE coalesce(input_tokens, 0) + coalesce(output_tokens, 0) END)
                                      AS VARCHAR), ''),
                        (SELECT count(*) FROM sessions), count(DISTINCT d),
                        coalesce(CAST(round(sum(CAST(cost_usd AS DECIMAL(38, 12)))
                                            / nullif(count(DISTINCT d) FILTER (WHERE cost_usd IS NOT NULL), 0), 6)
                                      AS VARCHAR), ''),
                        coalesce((SELECT d || '|' || CAST(round(usd, 6) AS VARCHAR) FROM days
                                  WHERE usd IS NOT NULL ORDER BY usd DESC, d LIMIT 1), ''),
                        coalesce(CAST(sum(cache_read_tokens) AS VARCHAR), ''),
                        coalesce(CAST(sum(input_tokens) AS VARCHAR), ''),
                        count(*) - count(cost_usd), count(*)
                 FROM c"
            ),
        )?;
        let g = &g[0];
        let usd = |v: &str| {
            if v.is_empty() {
                "unknown".to_string()
            } else {
                nanoload::usage::dollars(v)
            }
        };
        let n = |v: &str| {
            v.parse::<i64>()
                .map_or("-".to_string(), nanoload::usage::thousands)
        };
        // without calls there is no cost, and no cost per day
        let no_calls = g[9] == "0";
        e.facts.insert(
            "total_cost",
            if no_calls {
                "no LLM calls".into()
            } else {
                usd(&g[0])
            },
        );
        e.facts.insert("total_tokens", n(&g[1]));
        e.facts.insert("sessions_total", n(&g[2]));
        e.facts.insert("active_days", n(&g[3]));
        e.facts.insert(
            "cost_per_day",
            if g[4].is_empty() {
                "-".into()
            } else {
                usd(&g[4])
            },
        );
        e.facts.insert(
            "peak_day",
            match g[5].split_once('|') {
                Some((d, v)) => format!("{d} ({})", usd(v)),
                None => "-".into(),
            },
        );
        e.facts.insert(
            "cache_hit_rate",
            match (g[6].parse::<f64>(), g[7].parse::<f64>()) {
                (Ok(r), Ok(i)) if i > 0.0 => format!("{:.1} %", 100.0 * r / i),
                _ => "-".into(),
            },
        );
        e.facts.insert("unpriced_calls", n(&g[8]));
        // what the total cost is of, under it
        let (calls, unpriced) = (g[9].parse::<i64>()?, g[8].parse::<i64>()?);
        let of = |k: i64| if k == 1 { "call" } else { "calls" };
        if calls > 0 {
            let priced = calls - unpriced;
            let pct = (100.0 * unpriced as f64 / calls as f64).round() as i64;
            let pct = match pct {
                0 => "<1 %".to_string(),
                100 if priced > 0 => ">99 %".to_string(),
                p => format!("{p} %"),
            };
            e.facts.insert(
                "total_cost_basis",
                match (priced, unpriced) {
                    (_, 0) => format!("all {} {} priced", n(&g[9]), of(calls)),
                    (0, _) => format!("none of {} {} priced", n(&g[9]), of(calls)),
                    _ => format!(
                        "of {} priced {}; {} unpriced ({pct})",
                        nanoload::usage::thousands(priced),
                        of(priced),
                        n(&g[8])
                    ),
                },
            );
        }
        let nc = query(
            &c,
            &format!("SELECT count(*), {cost} FROM llm_calls WHERE agent = 'nanoclaw'"),
        )?;
        if nc[0][0] != "0" {
            e.facts.insert("nanoclaw_cost_usd", usd(&nc[0][1]));
        }
    } else {
        e.missing = vec![
            "llm_calls",
            "llm_calls",
            "sources",
            "tz_offsets",
            "diagnostics",
        ];
    }
    // the sessions the timeline draws: do their events have local times,
    // UTC times only, or both
    let times = query(
        &c,
        "WITH s AS (
           SELECT session_uid,
                  max(coalesce(timestamp_local, CAST(timestamp_utc AS TIMESTAMP))) AS l,
                  bool_or(timestamp_local IS NOT NULL) AS local,
                  bool_or(timestamp_local IS NULL AND timestamp_utc IS NOT NULL) AS utc
           FROM events WHERE session_uid IS NOT NULL GROUP BY session_uid),
         drawn AS (SELECT * FROM s WHERE l IS NOT NULL ORDER BY l DESC, session_uid LIMIT 50)
         SELECT coalesce(bool_or(local), false), coalesce(bool_or(utc), false) FROM drawn",
    )?;
    e.timeline_times = (times[0][0] == "true", times[0][1] == "true");
    let f = query(
        &c,
        "SELECT count(*), count(DISTINCT session_uid),
                count(*) FILTER (WHERE timestamp_local IS NULL AND timestamp_utc IS NULL)
         FROM events",
    )?;
    for (k, v) in ["events", "sessions", "without_time"]
        .into_iter()
        .zip(&f[0])
    {
        e.facts.insert(k, v.clone());
    }
    Ok(e)
}

/// `nanoload report` on the load in `dir`; with `tables`, its `--tables`.
fn write_report(dir: &Path, tables: bool, html: &Path) -> TestResult {
    let mut cmd = assert_cmd::Command::cargo_bin("nanoload")?;
    cmd.arg("report").arg(dir.join("out.parquet")).arg(html);
    if tables {
        cmd.arg("--tables").arg(dir.join("tables"));
    }
    let o = cmd.output()?;
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{}: {err}", dir.display());
    let charts = if tables { 13 } else { 6 };
    assert!(
        err.starts_with(&format!(
            "nanoload: report written: {} ({charts} charts, ",
            html.display()
        )),
        "{err}"
    );
    Ok(())
}

/// Number cells not shown as a person reads them: right-aligned, counts
/// with thousands separators, USD to the cent (more digits only below one,
/// `unknown` as it is), rates as percentages.
fn numbers_shown(numbers: &[[String; 4]], usd: &dyn Fn(&str) -> bool) -> Vec<String> {
    numbers
        .iter()
        .filter_map(|[col, v, text, align]| {
            let want = if v.is_empty() || v == "unknown" {
                v.clone()
            } else if usd(col) {
                let x: f64 = v.parse().ok()?;
                if x == 0.0 || x.abs() >= 0.01 {
                    let cents = format!("{:.2}", x);
                    let (w, f) = cents.split_once('.')?;
                    let w: String = w
                        .chars()
                        .rev()
                        .collect::<Vec<_>>()
                        .chunks(3)
                        .map(|c| c.iter().collect::<String>())
                        .collect::<Vec<_>>()
                        .join(",")
                        .chars()
                        .rev()
                        .collect();
                    format!("${w}.{f}")
                } else {
                    // below a cent: two significant digits
                    let d = ((-x.abs().log10()).ceil() as usize + 1).clamp(3, 8);
                    format!("${x:.d$}")
                }
            } else if col.ends_with("rate") {
                format!("{v} %")
            } else if let Ok(n) = v.parse::<i64>() {
                nanoload::usage::thousands(n)
            } else {
                v.clone()
            };
            let ok = align == "right" && text == &want;
            (!ok).then(|| format!("{col} {v:?} shown as {text:?} ({align}), want {want:?}"))
        })
        .collect()
}

/// The bars a chart must draw: one per non-zero value of the columns it
/// draws (`data-series`); a chart without them one bar per row.
fn marks(c: &Shown) -> usize {
    if c.series.is_empty() {
        return c.rows.len();
    }
    let cols: Vec<usize> = c
        .series
        .iter()
        .filter_map(|s| c.columns.iter().position(|x| x == s))
        .collect();
    assert_eq!(
        cols.len(),
        c.series.len(),
        "{}: series not in the table",
        c.id
    );
    c.rows
        .iter()
        .flat_map(|r| cols.iter().map(move |i| &r[*i]))
        .filter(|v| v.parse::<f64>().is_ok_and(|x| x > 0.0))
        .count()
}

/// A PNG's width and height (its IHDR chunk).
fn png_size(bytes: &[u8]) -> Option<(u32, u32)> {
    if bytes.len() < 24 || &bytes[..8] != b"\x89PNG\r\n\x1a\n" || &bytes[12..16] != b"IHDR" {
        return None;
    }
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    Some((be(&bytes[16..20]), be(&bytes[20..24])))
}

/// Open every report in one Chromium; the pages as read.
fn browse(cases: &[Case], work: &Path) -> Result<Browser, Box<dyn std::error::Error>> {
    let node_modules = installed("NANOLOAD_BROWSER_DIR", "browser/setup.sh")?;
    if !Path::new(&node_modules).join("playwright-core").is_dir() {
        return Err(
            format!("no playwright-core in {node_modules} (tests/browser/setup.sh)").into(),
        );
    }
    let mut pages: Vec<serde_json::Value> = cases
        .iter()
        .map(|c| serde_json::json!({"html": c.html, "screenshot": c.png, "phone": c.phone_png}))
        .collect();
    // NANOLOAD_REPORT_PNG=docs/report.png: the README's picture, the top of
    // the mixed home's report (both agents)
    let pictured = cases.iter().find(|c| c.name == MIXED).unwrap_or(&cases[0]);
    if let Ok(p) = std::env::var("NANOLOAD_REPORT_PNG") {
        pages
            .push(serde_json::json!({"html": pictured.html, "screenshot": p, "clip_height": 2200}));
    }
    let spec = work.join("spec.json");
    std::fs::write(&spec, serde_json::json!({ "pages": pages }).to_string())?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser/report.mjs");
    let o = Command::new("node")
        .arg(&script)
        .arg(&spec)
        .output()
        .map_err(|e| format!("node {}: {e} (Node.js >= 20 is needed)", script.display()))?;
    assert!(
        o.status.success(),
        "node {} failed: {}",
        script.display(),
        String::from_utf8_lossy(&o.stderr)
    );
    Ok(serde_json::from_slice(&o.stdout)?)
}

/// The reports of one fixture home, written under `work`: with
/// `--tables`, and nanobot/home-a's also without; and the seconds spent
/// loading the home (none when another test loaded it) and on its reports.
/// The home of both agents (`common::mixed_home`) among the fixtures'.
const MIXED: &str = "mixed/home-a+home-cc";

fn cases_of(home: &str, work: &Path) -> Result<(Vec<Case>, f64, f64), Box<dyn std::error::Error>> {
    let t0 = std::time::Instant::now();
    let name = home.replace('/', "-");
    let dir = work.join(&name);
    if home == MIXED {
        // both agents in one HOME (common::mixed_home), loaded here
        let mixed = crate::common::mixed_home()?;
        std::fs::create_dir_all(&dir)?;
        let summary = dir.join("summary.json").to_string_lossy().into_owned();
        let r = crate::common::run_home(mixed.path(), &["--summary-json", &summary])?;
        assert_eq!(r.code(), Some(1), "{}", r.stderr());
        crate::common::copy_tree(&r.tables, &dir.join("tables"))?;
        std::fs::copy(&r.out, dir.join("out.parquet"))?;
    } else {
        let loaded = load(home)?;
        assert!(!loaded.files.is_empty(), "{home}: the load wrote nothing");
        loaded.write_files(&dir)?;
    }
    let loading = t0.elapsed().as_secs_f64();
    let variants: &[bool] = if home == "nanobot/home-a" {
        &[true, false]
    } else {
        &[true]
    };
    let mut cases = Vec::new();
    for &tables in variants {
        let suffix = if tables { "" } else { "-no-tables" };
        let html = work.join(format!("{name}{suffix}.html"));
        write_report(&dir, tables, &html)?;
        cases.push(Case {
            name: format!("{home}{suffix}"),
            png: work.join(format!("{name}{suffix}.png")),
            phone_png: work.join(format!("{name}{suffix}-390.png")),
            expected: expected(&dir, tables)?,
            html,
        });
    }
    Ok((cases, loading, t0.elapsed().as_secs_f64() - loading))
}

/// Where a page differs from what its report must show.
fn differences(case: &Case, page: &Page) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let name = &case.name;
    let mut bad = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            bad.push(format!("{name}: {what}"));
        }
    };
    check(
        Path::new(&page.html) == case.html,
        format!("page {}", page.html),
    );
    check(
        page.errors.is_empty(),
        format!("console errors {:?}", page.errors),
    );
    check(
        page.requests.is_empty(),
        format!("requests {:?}", page.requests),
    );
    check(
        page.external == 0,
        format!("{} elements that load something", page.external),
    );
    check(
        page.title == "nanoload report: out.parquet",
        format!("title {}", page.title),
    );
    let mut ids: Vec<&str> = page.charts.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    let want_ids: Vec<&str> = case.expected.charts.keys().copied().collect();
    check(
        ids == want_ids,
        format!("charts {ids:?}, want {want_ids:?}"),
    );
    for c in &page.charts {
        let Some((cols, rows)) = case.expected.charts.get(c.id.as_str()) else {
            continue;
        };
        let id = &c.id;
        check(&c.columns == cols, format!("{id} columns {:?}", c.columns));
        check(
            &c.rows == rows,
            format!(
                "{id} rows
  shown {:?}
  want  {rows:?}",
                c.rows
            ),
        );
        check(
            c.total.as_ref() == case.expected.totals.get(c.id.as_str()),
            format!("{id} TOTAL {:?}", c.total),
        );
        check(
            c.marks == marks(c),
            format!("{id} draws {} bars, want {}", c.marks, marks(c)),
        );
        let usd = |col: &str| {
            col.contains("cost")
                || (id == "cost-day" && !["day", "unpriced_calls", "partial"].contains(&col))
        };
        for bad in numbers_shown(&c.numbers, &usd) {
            check(false, format!("{id}: {bad}"));
        }
        let drawn = c.svg_px[0] >= 600 && c.svg_px[1] >= 80;
        check(
            if c.rows.is_empty() {
                c.svg_px == [0, 0]
            } else {
                drawn
            },
            format!("{id} svg of {:?} px for {} rows", c.svg_px, c.rows.len()),
        );
    }
    for (k, v) in &case.expected.facts {
        check(
            page.facts.get(*k) == Some(v),
            format!("fact {k}: {:?}, want {v}", page.facts.get(*k)),
        );
    }
    for (k, rows) in &case.expected.lists {
        let shown = page.lists.get(*k);
        // top-sessions: title, instance, agent, started, duration, models,
        // tool_calls, llm_calls, cost_usd; diagnostics: its eight
        let width = if *k == "top-sessions" { 9 } else { 8 };
        check(
            shown.is_some_and(|t| t.columns.len() == width && &t.rows == rows),
            format!("list {k}: {shown:?}, want {rows:?}"),
        );
        for bad in shown.map_or(vec![], |t| {
            numbers_shown(&t.numbers, &|c| c.contains("cost"))
        }) {
            check(false, format!("list {k}: {bad}"));
        }
    }
    // a home of nanoclaw alone (or of both agents) gives a full report:
    // activity (UTC where no offset is known) and, with calls, cost per day
    if name.starts_with("nanoclaw/") || name.starts_with("mixed/") {
        let rows = |id: &str| {
            page.charts
                .iter()
                .find(|c| c.id == id)
                .map_or(0, |c| c.rows.len())
        };
        check(rows("activity-day") > 0, "no activity per day".into());
        check(rows("sessions-timeline") > 0, "no session drawn".into());
        if name.ends_with("home-cc") || name.starts_with("mixed/") {
            check(rows("cost-day") > 0, "no cost per day".into());
        }
    }
    check(
        page.collapsed == ["data-quality"],
        format!("collapsed groups {:?}", page.collapsed),
    );
    check(
        page.hidden.is_empty(),
        format!("content hidden in scroll boxes: {:?}", page.hidden),
    );
    check(
        page.wide.is_empty(),
        format!("tables wider than the page: {:?}", page.wide),
    );
    check(
        page.missing == case.expected.missing,
        format!("sections without tables {:?}", page.missing),
    );
    let png = std::fs::read(&case.png)?;
    check(
        png_size(&png) == Some((1400, page.height)) && png.len() > 50_000,
        format!("screenshot {:?}, {} bytes", png_size(&png), png.len()),
    );
    for fit in &page.fit {
        for line in fits(case, page, fit) {
            check(false, line);
        }
    }
    let phone = &page.fit[1];
    let png = std::fs::read(&case.phone_png)?;
    check(
        png_size(&png) == Some((390, phone.height)),
        format!("390 px screenshot {:?}", png_size(&png)),
    );
    Ok(bad)
}

/// Where a page does not fit one viewport width: it scrolls sideways, a
/// text is rendered below 11 px, a box reaches outside the page, a date
/// breaks over lines, a chart's text leaves its SVG; each chart shown
/// draws its bars at a size that fits; the timeline's axis says what its
/// times are.
fn fits(case: &Case, page: &Page, fit: &Fit) -> Vec<String> {
    let w = fit.width;
    let mut bad = Vec::new();
    let mut check = |ok: bool, what: String| {
        if !ok {
            bad.push(format!("at {w} px: {what}"));
        }
    };
    // a few of each, and how many in all
    let few = |v: &[String]| format!("{} in all: {:#?}", v.len(), &v[..v.len().min(4)]);
    check(
        fit.scroll_width <= w,
        format!(
            "the page is {} px wide (scrolls sideways)",
            fit.scroll_width
        ),
    );
    check(
        fit.small.is_empty(),
        format!("text below 11 px, {}", few(&fit.small)),
    );
    check(
        fit.outside.is_empty(),
        format!("boxes outside the page, {}", few(&fit.outside)),
    );
    check(
        fit.broken.is_empty(),
        format!("dates broken over lines, {}", few(&fit.broken)),
    );
    check(
        fit.svg_outside.is_empty(),
        format!("chart texts outside their SVG, {}", few(&fit.svg_outside)),
    );
    let ids: Vec<&str> = fit.charts.iter().map(|c| c.id.as_str()).collect();
    let want: Vec<&str> = page.charts.iter().map(|c| c.id.as_str()).collect();
    check(ids == want, format!("charts {ids:?}, want {want:?}"));
    for (c, shown) in page.charts.iter().zip(&fit.charts) {
        let id = &c.id;
        check(
            shown.marks == marks(c),
            format!("{id} draws {} bars, want {}", shown.marks, marks(c)),
        );
        let [x, y] = shown.svg_px;
        check(
            if c.rows.is_empty() {
                shown.svg_px == [0, 0]
            } else {
                // at 1400 px as wide as before, on a phone most of its width
                x >= if w >= 1000 { 600 } else { w * 3 / 4 } && x <= w && y >= 80
            },
            format!(
                "{id} svg of {:?} px for {} rows",
                shown.svg_px,
                c.rows.len()
            ),
        );
    }
    // the timeline's time axis: local where an offset is known, UTC where not
    if let Some(t) = fit
        .charts
        .iter()
        .find(|c| c.id == "sessions-timeline" && !c.texts.is_empty())
    {
        let says = |w: &str| t.texts.iter().any(|s| s.contains(w));
        let (local, utc) = case.expected.timeline_times;
        check(
            says("local") == local && says("UTC") == utc,
            format!(
                "the timeline's texts {:?}: its times are{} local and{} UTC",
                t.texts,
                if local { "" } else { " not" },
                if utc { "" } else { " not" }
            ),
        );
    }
    bad
}

/// Every fixture home's report, and a mixed home's (`common::mixed_home`), with
/// `--tables` (nanobot/home-a's also
/// without) in headless Chromium: no console error, no request, every
/// chart's table equals this test's queries and draws a bar per value.
#[test]
#[ignore = "tools tier (Chromium): scripts/check.sh runs it (cargo test -- --ignored)"]
fn every_fixture_report_shows_the_outputs_numbers_in_chromium() -> TestResult {
    let started = std::time::Instant::now();
    let work = tempfile::tempdir()?;
    let mut homes = homes()?;
    homes.push(MIXED.to_string());
    // two workers: loading a home (when no other test has) and its reports
    let next = std::sync::atomic::AtomicUsize::new(0);
    type Done = (usize, (Vec<Case>, f64, f64));
    let mut done: Vec<Done> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| -> Result<Vec<Done>, String> {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        let Some(home) = homes.get(i) else {
                            return Ok(done);
                        };
                        let c = cases_of(home, work.path()).map_err(|e| format!("{home}: {e}"))?;
                        done.push((i, c));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().map_err(|_| "a worker panicked".to_string())?)
            .collect::<Result<Vec<_>, String>>()
            .map(|v| v.into_iter().flatten().collect())
    })?;
    done.sort_by_key(|(i, _)| *i);
    let loading: f64 = done.iter().map(|(_, (_, l, _))| l).sum();
    let writing: f64 = done.iter().map(|(_, (_, _, w))| w).sum();
    let cases: Vec<Case> = done.into_iter().flat_map(|(_, (c, _, _))| c).collect();
    let browser = browse(&cases, work.path())?;
    assert!(browser.pages.len() >= cases.len());
    let mut bad = Vec::new();
    for (case, page) in cases.iter().zip(&browser.pages) {
        bad.extend(differences(case, page)?);
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // the fixtures hold failed tool calls (nanobot's own, in the real-writer
    // homes), and the tools chart counts them
    let failed: usize = browser
        .pages
        .iter()
        .flat_map(|p| &p.charts)
        .filter(|c| c.id == "tools")
        .flat_map(|c| &c.rows)
        .map(|r| r[2].parse::<usize>().unwrap_or(0))
        .sum();
    assert!(failed > 0, "no failed tool call in any fixture's report");
    // the times, for the record (--nocapture): loading is shared with the
    // golden and audits tests in a full run
    eprintln!(
        "report: {} homes, {} reports; loading {loading:.1}s, reports and queries {writing:.1}s \
         (summed over 2 workers); chromium {} opened them in {:.1}s; {:.1}s in all",
        homes.len(),
        cases.len(),
        browser.chromium.unwrap_or_default(),
        browser.ms as f64 / 1000.0,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `events.tool_error`: on each `tool_result` row, whether the result
/// reports a failure, as the report's rule over its text and native says
/// (`nanoload::readout::TOOL_ERROR`: nanoclaw's `is_error`, nanobot's WebUI
/// error phase or its retry hint); NULL on every other row. Written once by
/// the load, so no reader decodes the texts again to find the failures.
#[test]
fn tool_error_marks_each_failed_tool_result_as_the_rule_over_its_text_says() -> TestResult {
    use nanoload::readout::TOOL_ERROR;
    // (fixture, tool_result rows, of which failed)
    for (home, results, failed) in [
        ("nanoclaw/home-codex", "3", "1"),
        ("nanoclaw/home-opencode", "3", "2"),
        ("realwriter/legacy-upgrade", "3", "1"),
        ("realwriter/dbera-aborted-import", "3", "1"),
        ("nanobot/home-a", "12", "0"),
    ] {
        let h = crate::fixture_homes::materialize(home)?;
        let run = run_home(h.path(), &[])?;
        assert!(run.out.is_file(), "{home}: {}", run.stderr());
        let got = run.rows(&format!(
            "SELECT count(*) FILTER (WHERE turn_type = 'tool_result'),
                    count(*) FILTER (WHERE tool_error),
                    count(*) FILTER (WHERE turn_type = 'tool_result' AND tool_error IS NULL),
                    count(*) FILTER (WHERE turn_type <> 'tool_result' AND tool_error IS NOT NULL),
                    count(*) FILTER (WHERE turn_type = 'tool_result'
                                     AND tool_error IS DISTINCT FROM ({TOOL_ERROR}))
             FROM events"
        ))?;
        assert_eq!(got, strs(&[&[results, failed, "0", "0", "0"]]), "{home}");
    }
    Ok(())
}

/// The report of an OUT written before `events.tool_error` (the column
/// dropped from a load's OUT) finds the failed tool calls by the rule over
/// text and native: the same tools table as the report of the OUT with it.
#[test]
fn the_report_of_an_out_without_tool_error_counts_the_same_failed_calls() -> TestResult {
    let h = crate::fixture_homes::materialize("realwriter/legacy-upgrade")?;
    let run = run_home(h.path(), &[])?;
    let work = tempfile::tempdir()?;
    let older = work.path().join("older.parquet");
    run.conn()?.execute_batch(&format!(
        "COPY (SELECT * EXCLUDE (tool_error) FROM events) TO '{}' (FORMAT parquet);",
        older.display()
    ))?;
    let tools = |out: &Path, html: &Path| -> Result<String, Box<dyn std::error::Error>> {
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .arg("report")
            .arg(out)
            .arg("--tables")
            .arg(&run.tables)
            .arg(html)
            .output()?;
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let page = std::fs::read_to_string(html)?;
        let start = page
            .find("<table data-chart-table=\"tools\"")
            .ok_or("no tools table")?;
        let end = start + page[start..].find("</table>").ok_or("no table end")?;
        Ok(page[start..end].to_string())
    };
    let with = tools(&run.out, &work.path().join("with.html"))?;
    let without = tools(&older, &work.path().join("without.html"))?;
    assert_eq!(with, without);
    // its one exec_session call failed
    assert!(
        with.contains(
            "<tr><td data-c=\"tool\">exec_session</td><td class=\"n\" data-c=\"ok\" data-v=\"0\">0</td>\
             <td class=\"n\" data-c=\"errors\" data-v=\"1\">1</td>"
        ),
        "{with}"
    );
    Ok(())
}
