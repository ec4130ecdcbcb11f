//! The page's escaping, unknown costs, missing side tables and bad inputs,
//! over minimal hand-made inputs.

use std::path::{Path, PathBuf};

use duckdb::Connection;

use super::report;
use crate::readout::sql_str;

/// A minimal events table (the columns the report reads) with hostile
/// strings, and side tables with an unknown cost.
fn write_inputs(dir: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let c = Connection::open_in_memory()?;
    let out = dir.join("out.parquet");
    let tables = dir.join("tables");
    std::fs::create_dir_all(&tables)?;
    c.execute_batch(&format!(
        "COPY (SELECT * FROM (VALUES
           ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 08:30:00', 'local_derived',
            'tool_use', '<script>alert(1)</script>&amp', 'nanobot.session_db', 'primary', NULL, 'id1',
            'c1', '{{}}'),
           ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 08:30:01', 'local_derived',
            'tool_result', '<script>alert(1)</script>&amp', 'nanobot.session_db', 'primary', NULL,
            'id1', 'c1',
            'Error: no such file' || chr(10) || chr(10) || '[Analyze the error above and try a different approach.]'),
           ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 09:00:00', 'local_derived',
            'user', NULL, 'nanobot.webui_transcript', 'secondary', NULL, 'id1', NULL, 'hi'),
           ('nanobot', '.nanobot', NULL, NULL, NULL, 'local_as_utc',
            'system', NULL, 'nanobot.permissions', 'primary', NULL, 'id1', NULL, NULL),
           ('nanoclaw', 'nc', 's9', 'u9', NULL, 'utc', 'tool_use', 'Bash',
            'nanoclaw.claude_transcript', 'primary', NULL, 'id1', 't1', 'ls'),
           ('nanoclaw', 'nc', 's9', 'u9', NULL, 'utc', 'tool_result', 'Bash',
            'nanoclaw.claude_transcript', 'primary', '{{\"is_error\":true}}', 'id1', 't1', 'denied'),
           ('nanoclaw', 'nc', 's9', 'u9', NULL, 'utc', 'tool_use', 'Bash',
            'nanoclaw.claude_transcript', 'primary', NULL, 'id1', 't2', 'pwd'),
           ('nanoclaw', 'nc', 's9', 'u9', NULL, 'utc', 'tool_result', 'Bash',
            'nanoclaw.claude_transcript', 'primary', '{{\"is_error\":false}}', 'id1', 't2', '/'))
           AS t(agent, instance, session_id, session_uid, timestamp_local, time_basis, turn_type,
                tool_name, source_kind, source_role, native, load_id, tool_use_id, text)
           CROSS JOIN (SELECT TIMESTAMPTZ '2026-10-02 12:00:00+00' AS timestamp_utc)) TO {};
         COPY (SELECT 'nanobot' AS agent, 'cli:<b>&x' AS session_id, false AS secondary_only,
               CAST(NULL AS DOUBLE) AS cost_usd, 'u1' AS session_uid,
               TIMESTAMPTZ '2026-10-01 08:30:00+00' AS first_event_utc,
               TIMESTAMPTZ '2026-10-01 09:00:00+00' AS last_event_utc,
               1 AS tool_calls, 2 AS llm_calls, 'id1' AS load_id) TO {};
         COPY (SELECT *, 'u1' AS session_uid, 'id1' AS load_id
               FROM (VALUES (1790000000000, 'p<1>', 'm&1', 10, 2, NULL, NULL, NULL::DOUBLE, 'nanobot', 12, NULL::TIMESTAMP, '.nanobot/llm_usage.sqlite3'),
                            (1790000001000, 'p<1>', 'm2', 5, 1, 3, 0, 0.5, 'nanobot', 6, TIMESTAMP '2026-09-21 15:33:21', '.nanobot/llm_usage.sqlite3'))
               AS t(started_at_ms, provider, model, input_tokens, output_tokens,
                    cache_read_tokens, cache_write_tokens, cost_usd, agent, total_tokens,
                    started_at_local, source_path)) TO {};
         COPY (SELECT '.nanobot' AS instance, DATE '2026-10-01' AS first_day,
               DATE '2026-10-01' AS last_day, 120 AS offset_minutes, 3 AS pairs,
               1.0 AS agreement, 'id1' AS load_id) TO {};
         COPY (SELECT 'bad_line' AS kind, 'nanobot' AS agent, '.nanobot' AS instance,
               'a<b>.jsonl' AS source_path, 3 AS source_line, 'EOF & <more>' AS message,
               NULL AS session_id, NULL AS code, 'id1' AS load_id) TO {};
         COPY (SELECT *, 'id1' AS load_id FROM (VALUES ('nanobot.session_db', 2, '.nanobot/sessions/n/sessions.sqlite3'),
                                     ('nanobot.webui_transcript', 3, '.nanobot/webui/w.jsonl'),
                                     ('nanobot.permissions', 1, '.nanobot/config.json'),
                                     ('nanobot.llm_usage', 2, '.nanobot/llm_usage.sqlite3'))
               AS t(source_kind, rows, source_path)) TO {};",
        sql_str(&out),
        sql_str(&tables.join("sessions.parquet")),
        sql_str(&tables.join("llm_calls.parquet")),
        sql_str(&tables.join("tz_offsets.parquet")),
        sql_str(&tables.join("diagnostics.parquet")),
        sql_str(&tables.join("sources.parquet")),
    ))?;
    Ok(())
}

/// The hand-made inputs ([`write_inputs`]) in a temp dir of their own.
struct Inputs(tempfile::TempDir);

impl Inputs {
    fn new() -> Result<Inputs, Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        write_inputs(dir.path())?;
        Ok(Inputs(dir))
    }

    fn path(&self) -> &Path {
        self.0.path()
    }

    fn out(&self) -> PathBuf {
        self.path().join("out.parquet")
    }

    fn tables(&self) -> PathBuf {
        self.path().join("tables")
    }

    /// The side table `table` replaced by the rows of `select`.
    fn replace(&self, table: &str, select: &str) -> Result<(), Box<dyn std::error::Error>> {
        let file = self.tables().join(format!("{table}.parquet"));
        Connection::open_in_memory()?
            .execute_batch(&format!("COPY ({select}) TO {};", sql_str(&file)))?;
        Ok(())
    }

    /// The report of OUT (with the side tables when `tables`) written to
    /// `name` beside them: the page, and what [`report`] said.
    fn report(
        &self,
        tables: bool,
        name: &str,
    ) -> Result<(String, super::Written), Box<dyn std::error::Error>> {
        let html = self.path().join(name);
        let dir = tables.then(|| self.tables());
        let w = report(&self.out(), dir.as_deref(), &html)?;
        Ok((std::fs::read_to_string(&html)?, w))
    }
}

#[test]
fn data_strings_are_escaped_and_an_unknown_cost_is_not_zero()
-> Result<(), Box<dyn std::error::Error>> {
    let inputs = Inputs::new()?;
    let (raw, w) = inputs.report(true, "r.html")?;
    assert_eq!(w.charts, 13);
    let page = unnamed(&raw);
    // the only tags are the page's own: no script, link, image or URL
    assert!(!page.contains("<script"), "a data string became a tag");
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp"));
    assert!(page.contains("cli:&lt;b&gt;&amp;x"));
    assert!(page.contains("<td>EOF &amp; &lt;more&gt;</td>"));
    // (the one URL is the SVG namespace, an identifier never fetched)
    let bare = page.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
    for banned in [
        "<link", "<img", "src=", "href=", "url(", "http:", "https:", "@import",
    ] {
        assert!(!bare.contains(banned), "{banned}");
    }
    // m&1 has no price: unknown, with its one unpriced call
    assert!(page.contains(
        "<tr><td>p&lt;1&gt;</td><td>m&amp;1</td><td class=\"n\" data-v=\"unknown\">unknown</td>\
         <td class=\"n\" data-v=\"1\">1</td></tr>"
    ));
    assert!(page.contains(
        "<tr><td>p&lt;1&gt;</td><td>m2</td><td class=\"n\" data-v=\"0.500000\">$0.50</td>\
         <td class=\"n\" data-v=\"0\">0</td></tr>"
    ));
    // the cards: $0.50 priced, one call unpriced; both calls on 2026-09-21
    // (the first by its UTC day: no local time); 3 of 15 input tokens read
    // from the cache
    for (fact, value) in [
        ("total_cost", "$0.50"),
        ("total_tokens", "18"),
        ("sessions_total", "1"),
        ("active_days", "1"),
        ("cost_per_day", "$0.50"),
        ("peak_day", "2026-09-21 ($0.50)"),
        ("cache_hit_rate", "20.0 %"),
        ("unpriced_calls", "1"),
    ] {
        assert!(
            page.contains(&format!("data-fact=\"{fact}\">{value}</span>")),
            "{fact}"
        );
    }
    // the costliest sessions: the one session, unknown (a call unpriced);
    // tables without `title` and `instance` show its id and no instance
    assert!(page.contains(
        "<tr><td>cli:&lt;b&gt;&amp;x</td><td></td><td>nanobot</td><td class=\"d\">2026-10-01 08:30:00</td>\
         <td>00:30:00</td><td>m&amp;1, m2</td><td class=\"n\" data-v=\"1\">1</td>\
         <td class=\"n\" data-v=\"2\">2</td><td class=\"n\" data-v=\"unknown\">unknown</td></tr>"
    ));
    // the WebUI store held 3 rows and 1 is out: 2 dropped as duplicates
    assert!(page.contains(
        "<tr><td>nanobot.webui_transcript</td><td class=\"n\" data-v=\"1\">1</td>\
         <td class=\"n\" data-v=\"3\">3</td><td class=\"n\" data-v=\"1\">1</td>\
         <td class=\"n\" data-v=\"0\">0</td><td class=\"n\" data-v=\"2\">2</td></tr>"
    ));
    // nothing but the page is left beside it
    let names: Vec<String> = std::fs::read_dir(inputs.path())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // same input, same bytes
    let (again, _) = inputs.report(true, "again.html")?;
    assert_eq!(again, raw);
    Ok(())
}

#[test]
fn without_tables_the_sections_that_need_them_say_so() -> Result<(), Box<dyn std::error::Error>> {
    let (page, w) = Inputs::new()?.report(false, "r.html")?;
    assert_eq!(w.charts, 6);
    for t in ["llm_calls", "sources", "tz_offsets", "diagnostics"] {
        assert!(page.contains(&format!("data-missing=\"{t}\"")), "{t}");
    }
    Ok(())
}

#[test]
fn bad_inputs_name_their_path_and_write_nothing() -> Result<(), Box<dyn std::error::Error>> {
    let dir = Inputs::new()?;
    let html = dir.path().join("r.html");
    let out = dir.path().join("out.parquet");
    let cases: [(PathBuf, Option<PathBuf>, String); 5] = [
        (
            dir.path().join("tables"),
            None,
            "tables: is a directory; the report reads a load's output: run `nanoload HOME out.parquet --tables tables` first".into(),
        ),
        (
            dir.path().join("none.parquet"),
            None,
            "none.parquet: no such file".into(),
        ),
        (
            dir.path().join("tables/sessions.parquet"),
            None,
            "not an events table".into(),
        ),
        (
            out.clone(),
            Some(dir.path().join("nope")),
            "nope: no such directory".into(),
        ),
        (
            out.clone(),
            Some(dir.path().to_path_buf()),
            "sessions.parquet: no such file".into(),
        ),
    ];
    for (out, tables, want) in cases {
        let e = report(&out, tables.as_deref(), &html)
            .err()
            .ok_or("no error")?
            .to_string();
        assert!(e.contains(&want), "{e} lacks {want}");
        assert!(!html.exists());
    }
    let e = report(&out, None, &out)
        .err()
        .ok_or("no error")?
        .to_string();
    assert!(e.contains("is the input OUT.parquet"), "{e}");
    // tables of another load, or of a load too old to say: refused
    let c = Connection::open_in_memory()?;
    let sources = dir.path().join("tables/sources.parquet");
    let other = dir.path().join("other.parquet");
    // sources.parquet rewritten by `select`, then the report's error
    let rewritten = |select: &str| -> Result<String, Box<dyn std::error::Error>> {
        c.execute_batch(&format!(
            "COPY ({select} FROM {}) TO {};",
            sql_str(&sources),
            sql_str(&other)
        ))?;
        std::fs::rename(&other, &sources)?;
        Ok(report(&out, Some(&dir.path().join("tables")), &html)
            .err()
            .ok_or("no error")?
            .to_string())
    };
    assert_eq!(
        rewritten("SELECT * REPLACE ('id2' AS load_id)")?,
        format!(
            "{}: rows of load id2, but {} is of load id1: the report reads one load's outputs \
             (give OUT.parquet and the --tables DIR of the same run)",
            sources.display(),
            out.display()
        )
    );
    let e = rewritten("SELECT * EXCLUDE (load_id)")?;
    assert!(
        e.starts_with(&format!("{}: has no load_id column", sources.display())),
        "{e}"
    );
    assert!(!html.exists());
    Ok(())
}

/// The page without each cell's column name (`data-c`, which
/// [`every_cell_names_its_column_and_a_date_is_marked`] checks): the
/// markup the other tests spell out.
fn unnamed(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut rest = page;
    while let Some(i) = rest.find(" data-c=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " data-c=\"".len()..];
        rest = after.find('"').map_or("", |j| &after[j + 1..]);
    }
    out.push_str(rest);
    out
}

/// The `<td>` cells of the table `attr` (e.g. `data-chart-table="tools"`),
/// per row, as written (a number cell with its `data-v`).
fn table_rows(page: &str, attr: &str) -> Vec<String> {
    let Some(start) = page.find(attr) else {
        return Vec::new();
    };
    let end = page[start..]
        .find("</table>")
        .map_or(page.len(), |e| start + e);
    page[start..end]
        .split("<tr>")
        .skip(1)
        .map(|r| r.split("</tr>").next().unwrap_or("").to_string())
        .collect()
}

#[test]
fn tools_count_failed_calls_of_both_agents() -> Result<(), Box<dyn std::error::Error>> {
    let page = unnamed(&Inputs::new()?.report(false, "r.html")?.0);
    let rows = table_rows(&page, "data-chart-table=\"tools\"");
    // nanoclaw's is_error and nanobot's retry hint; the rest succeeded
    assert_eq!(
        rows,
        [
            "<th>tool</th><th class=\"n\">ok</th><th class=\"n\">errors</th><th class=\"n\">calls</th>\
             <th class=\"n\">error_rate</th><th class=\"n\">sessions</th>",
            "<td>Bash</td><td class=\"n\" data-v=\"1\">1</td><td class=\"n\" data-v=\"1\">1</td>\
             <td class=\"n\" data-v=\"2\">2</td><td class=\"n\" data-v=\"50.0\">50.0 %</td>\
             <td class=\"n\" data-v=\"1\">1</td>",
            "<td>&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp</td><td class=\"n\" data-v=\"0\">0</td>\
             <td class=\"n\" data-v=\"1\">1</td><td class=\"n\" data-v=\"1\">1</td>\
             <td class=\"n\" data-v=\"100.0\">100.0 %</td><td class=\"n\" data-v=\"1\">1</td>",
        ]
    );
    // a count axis is labelled with integers only (2 calls at most)
    let start = page.find("data-chart=\"tools\"").ok_or("no tools chart")?;
    let svg = &page[start..start + page[start..].find("</svg>").ok_or("no svg")?];
    let labels: Vec<&str> = svg
        .split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(str::trim)
        .filter(|t| t.parse::<f64>().is_ok())
        .collect();
    assert_eq!(labels, ["0", "1", "2"], "{svg}");
    // the nanoclaw rows have UTC times only, and are drawn on their UTC day
    // (the permission row that day is a setting, not activity)
    assert!(
        table_rows(&page, "data-chart-table=\"activity-day\"")
            .iter()
            .any(|r| r
                .starts_with("<td class=\"d\">2026-10-02</td><td class=\"n\" data-v=\"4\">4</td>")),
        "{page}"
    );
    Ok(())
}

#[test]
fn cost_per_day_names_the_costliest_models_totals_and_marks_partial_days()
-> Result<(), Box<dyn std::error::Error>> {
    let inputs = Inputs::new()?;
    // ten models over two days: m0 costs most, m9 least; m9's second call
    // has no price, so 2026-09-22 is partial
    inputs.replace(
        "llm_calls",
        "SELECT 1790000000000 + 86400000 * (i % 2) AS started_at_ms, 'p' AS provider,
                      'm' || i AS model, 10 AS input_tokens, 1 AS output_tokens,
                      0 AS cache_read_tokens, 0 AS cache_write_tokens,
                      CAST((10 - i) * 1.25 AS DOUBLE) AS cost_usd, 'nanobot' AS agent,
                      11 AS total_tokens, CAST(NULL AS TIMESTAMP) AS started_at_local,
                      'u1' AS session_uid, 'id1' AS load_id,
                      '.nanobot/llm_usage.sqlite3' AS source_path
               FROM range(10) t(i)
               UNION ALL SELECT 1790000000000 + 86400000, 'p', 'm9', 1, 1, 0, 0, NULL, 'nanobot', 2,
                      NULL, 'u1', 'id1', '.nanobot/llm_usage.sqlite3'
               ORDER BY ALL",
    )?;
    let page = unnamed(&inputs.report(true, "r.html")?.0);
    let rows = table_rows(&page, "data-chart-table=\"cost-day\"");
    let head = |r: &str| -> Vec<String> {
        r.split("</th>")
            .filter_map(|h| h.rsplit('>').next())
            .filter(|h| !h.is_empty())
            .map(String::from)
            .collect()
    };
    assert_eq!(
        head(&rows[0]),
        [
            "day",
            "m0",
            "m1",
            "m2",
            "m3",
            "m4",
            "m5",
            "m6",
            "(other models)",
            "total",
            "unpriced_calls",
            "partial"
        ]
    );
    let cells = |r: &str| -> Vec<String> {
        r.split("</td>")
            .filter_map(|h| h.rsplit('>').next())
            .map(String::from)
            .filter(|h| !h.is_empty() || r.contains("<td></td>"))
            .collect()
    };
    // 2026-09-21: the even models (m0 $12.50 … m8 $2.50, the other models
    // m8 alone); 2026-09-22: the odd ones, the other models m7 and m9
    // ($3.75 + $1.25), m9's second call unpriced
    assert!(rows[1].starts_with("<td class=\"d\">2026-09-21</td><td class=\"n\" data-v=\"12.500000\">$12.50</td><td class=\"n\" data-v=\"\"></td>"), "{}", rows[1]);
    assert!(rows[1].contains("<td class=\"n\" data-v=\"2.500000\">$2.50</td><td class=\"n\" data-v=\"37.500000\">$37.50</td><td class=\"n\" data-v=\"0\">0</td><td></td>"), "{}", rows[1]);
    assert!(rows[2].contains("<td class=\"n\" data-v=\"5.000000\">$5.00</td><td class=\"n\" data-v=\"31.250000\">$31.25</td><td class=\"n\" data-v=\"1\">1</td><td>partial</td>"), "{}", rows[2]);
    // the TOTAL: every call, $68.75 priced, one unpriced
    let total = cells(&rows[3]);
    assert_eq!(total[0], "TOTAL");
    assert!(rows[3].contains("<td class=\"n\" data-v=\"68.750000\">$68.75</td><td class=\"n\" data-v=\"1\">1</td><td>partial</td>"), "{}", rows[3]);
    assert!(page.contains("<tfoot><tr><td>TOTAL</td>"));
    // the partial day carries a mark above its bar, the other none
    let start = page.find("data-chart=\"cost-day\"").ok_or("no chart")?;
    let svg = &page[start..start + page[start..].find("</svg>").ok_or("no svg")?];
    assert_eq!(svg.matches(">\n*\n</text>").count(), 1, "{svg}");
    Ok(())
}

/// Every cell of every table names its column (`data-c`, what a phone
/// shows beside the value when a row reflows), and a cell holding a date
/// (with its time) is marked `d`, which never breaks.
#[test]
fn every_cell_names_its_column_and_a_date_is_marked() -> Result<(), Box<dyn std::error::Error>> {
    let (page, _) = Inputs::new()?.report(true, "r.html")?;
    let th = regex::Regex::new(r"<th[^>]*>([^<]*)</th>")?;
    let td = regex::Regex::new(
        r#"<td(?: class="([a-z])")? data-c="([^"]*)"(?: data-v="[^"]*")?>([^<]*)</td>"#,
    )?;
    let date = regex::Regex::new(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$")?;
    let (mut tables, mut cells, mut dates) = (0, 0, 0);
    for table in page.split("<table").skip(1) {
        let table = table.split("</table>").next().unwrap_or_default();
        let names: Vec<&str> = th
            .captures_iter(table)
            .filter_map(|c| c.get(1))
            .map(|m| m.as_str())
            .collect();
        tables += 1;
        for row in table.split("<tr>").skip(2) {
            let row = row.split("</tr>").next().unwrap_or_default();
            let tds: Vec<_> = td.captures_iter(row).collect();
            assert_eq!(
                tds.len(),
                row.matches("<td").count(),
                "a cell without its column: {row}"
            );
            assert_eq!(tds.len(), names.len(), "{row}");
            for (c, name) in tds.iter().zip(&names) {
                cells += 1;
                assert_eq!(&c[2], *name, "{row}");
                let is_date = date.is_match(&c[3]);
                dates += usize::from(is_date);
                assert_eq!(
                    c.get(1).map(|m| m.as_str()) == Some("d"),
                    is_date,
                    "{}: {row}",
                    &c[3]
                );
            }
        }
    }
    // 13 charts' tables and the two lists; the dates of activity, cost,
    // tokens, the costliest session and the timeline
    assert_eq!(tables, 15);
    assert!(cells > 100, "{cells} cells");
    assert!(dates >= 8, "{dates} dates");
    Ok(())
}

/// The costliest sessions are named by their title (the session's id where
/// it has none) and instance, started at their first event's local time
/// (the UTC time where no offset is known, as the rest of the page), and
/// last a whole number of seconds.
#[test]
fn the_costliest_sessions_show_their_title_instance_local_start_and_duration()
-> Result<(), Box<dyn std::error::Error>> {
    let inputs = Inputs::new()?;
    inputs.replace(
        "sessions",
        "SELECT * FROM (VALUES
               ('nanobot', '.nanobot', 'cli:<b>&x', 'Plan the <b> offsite', 'u1',
                TIMESTAMPTZ '2026-10-01 06:30:00.123456+00', TIMESTAMPTZ '2026-10-01 07:00:05.654321+00',
                1, 1, 0.5::DOUBLE),
               ('nanoclaw', 'nc', 's9', NULL, 'u9',
                TIMESTAMPTZ '2026-10-02 12:00:00+00', TIMESTAMPTZ '2026-10-04 13:02:03.999999+00',
                2, 1, NULL::DOUBLE))
               AS t(agent, instance, session_id, title, session_uid, first_event_utc, last_event_utc,
                    tool_calls, llm_calls, cost_usd)
               CROSS JOIN (SELECT false AS secondary_only, 'id1' AS load_id)",
    )?;
    inputs.replace(
        "llm_calls",
        "SELECT *, 'id1' AS load_id
               FROM (VALUES (1790000000000, 'p', 'm1', 10, 2, 0, 0, 0.5::DOUBLE, 'nanobot', 12,
                             NULL::TIMESTAMP, '.nanobot/llm_usage.sqlite3', 'u1'),
                            (1790000001000, 'p', 'm2', 5, 1, 0, 0, NULL::DOUBLE, 'nanoclaw', 6,
                             NULL::TIMESTAMP, 'data/v2.db', 'u9'))
               AS t(started_at_ms, provider, model, input_tokens, output_tokens,
                    cache_read_tokens, cache_write_tokens, cost_usd, agent, total_tokens,
                    started_at_local, source_path, session_uid)",
    )?;
    let page = unnamed(&inputs.report(true, "r.html")?.0);
    let rows = table_rows(&page, "data-list=\"top-sessions\"");
    assert_eq!(
        rows,
        [
            "<th>title</th><th>instance</th><th>agent</th><th>started</th><th>duration</th>\
             <th>models</th><th class=\"n\">tool_calls</th><th class=\"n\">llm_calls</th>\
             <th class=\"n\">cost_usd</th>",
            "<td>Plan the &lt;b&gt; offsite</td><td>.nanobot</td><td>nanobot</td>\
             <td class=\"d\">2026-10-01 08:30:00</td><td>00:30:05</td><td>m1</td>\
             <td class=\"n\" data-v=\"1\">1</td><td class=\"n\" data-v=\"1\">1</td>\
             <td class=\"n\" data-v=\"0.500000\">$0.50</td>",
            "<td>s9</td><td>nc</td><td>nanoclaw</td><td class=\"d\">2026-10-02 12:00:00</td>\
             <td>2 days 01:02:03</td><td>m2</td><td class=\"n\" data-v=\"2\">2</td>\
             <td class=\"n\" data-v=\"1\">1</td><td class=\"n\" data-v=\"unknown\">unknown</td>",
        ]
    );
    assert!(
        !page.contains("2026-10-01 06:30:00"),
        "a UTC start on a local page"
    );
    Ok(())
}

/// The texts of the SVGs of chart `id` drawn for `class` (`desk`, `phone`).
fn svg_texts(page: &str, id: &str, class: &str) -> Vec<String> {
    let Some(start) = page.find(&format!("data-chart=\"{id}\"")) else {
        return Vec::new();
    };
    let figure = &page[start..];
    let figure = &figure[..figure.find("</figure>").unwrap_or(figure.len())];
    // a page of one SVG per chart: that one
    let Some(svg) = figure
        .split(&format!("<div class=\"svg {class}\">"))
        .nth(1)
        .or_else(|| figure.split("<div class=\"svg\">").nth(1))
    else {
        return Vec::new();
    };
    let svg = svg.split("</svg>").next().unwrap_or_default();
    svg.split("</text>")
        .filter_map(|t| t.rsplit('>').next())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

/// The session timeline's time axis says what its times are: local where
/// an offset is known (nanobot), UTC where not (nanoclaw stores UTC only),
/// on the desktop's and on the phone's chart.
#[test]
fn the_timeline_says_whether_its_times_are_local_or_utc() -> Result<(), Box<dyn std::error::Error>>
{
    let dir = Inputs::new()?;
    let out = dir.path().join("out.parquet");
    let c = Connection::open_in_memory()?;
    for agent in ["nanobot", "nanoclaw"] {
        c.execute_batch(&format!(
            "COPY (SELECT * FROM read_parquet({}) WHERE agent = '{agent}') TO {};",
            sql_str(&out),
            sql_str(&dir.path().join(format!("{agent}.parquet")))
        ))?;
    }
    let mut said = Vec::new();
    for input in ["out", "nanobot", "nanoclaw"] {
        let html = dir.path().join(format!("{input}.html"));
        report(&dir.path().join(format!("{input}.parquet")), None, &html)?;
        let page = std::fs::read_to_string(&html)?;
        for class in ["desk", "phone"] {
            let texts = svg_texts(&page, "sessions-timeline", class);
            let desc: Vec<String> = texts.into_iter().filter(|t| t.contains("time")).collect();
            said.push((input, class, desc));
        }
    }
    let d = |s: &str| vec![s.to_string()];
    assert_eq!(
        said,
        [
            ("out", "desk", d("local time; UTC where no offset is known")),
            ("out", "phone", d("local or UTC time")),
            ("nanobot", "desk", d("local time, 2026-10-01")),
            ("nanobot", "phone", d("local time, 2026-10-01")),
            ("nanoclaw", "desk", d("UTC time, 2026-10-02")),
            ("nanoclaw", "phone", d("UTC time, 2026-10-02")),
        ]
    );
    Ok(())
}
