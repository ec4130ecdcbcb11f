//! The page's escaping, unknown costs, missing side tables and bad inputs,
//! over minimal hand-made inputs.

use std::path::{Path, PathBuf};

use duckdb::Connection;

use super::report;
use crate::engine::sql_str;

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
            'tool_use', '<script>alert(1)</script>&amp', 'nanobot.session_db', 'primary', NULL, 'id1'),
           ('nanobot', '.nanobot', 'cli:<b>&x', 'u1', TIMESTAMP '2026-10-01 09:00:00', 'local_derived',
            'user', NULL, 'nanobot.webui_transcript', 'secondary', NULL, 'id1'),
           ('nanobot', '.nanobot', NULL, NULL, NULL, 'local_as_utc',
            'system', NULL, 'nanobot.permissions', 'primary', NULL, 'id1'))
           AS t(agent, instance, session_id, session_uid, timestamp_local, time_basis, turn_type,
                tool_name, source_kind, source_role, native, load_id)) TO {};
         COPY (SELECT 'nanobot' AS agent, 'cli:<b>&x' AS session_id, false AS secondary_only,
               CAST(NULL AS DOUBLE) AS cost_usd, 'u1' AS session_uid,
               TIMESTAMPTZ '2026-10-01 08:30:00+00' AS first_event_utc,
               TIMESTAMPTZ '2026-10-01 09:00:00+00' AS last_event_utc,
               1 AS tool_calls, 2 AS llm_calls) TO {};
         COPY (SELECT *, 'u1' AS session_uid
               FROM (VALUES (1790000000000, 'p<1>', 'm&1', 10, 2, NULL, NULL, NULL::DOUBLE, 'nanobot', 12, NULL::TIMESTAMP),
                            (1790000001000, 'p<1>', 'm2', 5, 1, 3, 0, 0.5, 'nanobot', 6, TIMESTAMP '2026-09-21 15:33:21'))
               AS t(started_at_ms, provider, model, input_tokens, output_tokens,
                    cache_read_tokens, cache_write_tokens, cost_usd, agent, total_tokens,
                    started_at_local)) TO {};
         COPY (SELECT '.nanobot' AS instance, DATE '2026-10-01' AS first_day,
               DATE '2026-10-01' AS last_day, 120 AS offset_minutes, 3 AS pairs,
               1.0 AS agreement) TO {};
         COPY (SELECT 'bad_line' AS kind, 'nanobot' AS agent, '.nanobot' AS instance,
               'a<b>.jsonl' AS source_path, 3 AS source_line, 'EOF & <more>' AS message,
               NULL AS session_id, NULL AS code) TO {};
         COPY (SELECT * FROM (VALUES ('nanobot.session_db', 1), ('nanobot.webui_transcript', 3),
                                     ('nanobot.permissions', 1), ('nanobot.llm_usage', 2))
               AS t(source_kind, rows)) TO {};",
        sql_str(&out),
        sql_str(&tables.join("sessions.parquet")),
        sql_str(&tables.join("llm_calls.parquet")),
        sql_str(&tables.join("tz_offsets.parquet")),
        sql_str(&tables.join("diagnostics.parquet")),
        sql_str(&tables.join("sources.parquet")),
    ))?;
    Ok(())
}

#[test]
fn data_strings_are_escaped_and_an_unknown_cost_is_not_zero()
-> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    write_inputs(dir.path())?;
    let html = dir.path().join("r.html");
    let w = report(
        &dir.path().join("out.parquet"),
        Some(&dir.path().join("tables")),
        &html,
    )?;
    assert_eq!(w.charts, 13);
    let page = std::fs::read_to_string(&html)?;
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
    assert!(
        page.contains("<tr><td>p&lt;1&gt;</td><td>m&amp;1</td><td>unknown</td><td>1</td></tr>")
    );
    assert!(page.contains("<tr><td>p&lt;1&gt;</td><td>m2</td><td>0.500000</td><td>0</td></tr>"));
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
    // the costliest sessions: the one session, unknown (a call unpriced)
    assert!(page.contains(
        "<tr><td>cli:&lt;b&gt;&amp;x</td><td>nanobot</td><td>2026-10-01 08:30:00</td>\
         <td>00:30:00</td><td>m&amp;1, m2</td><td>1</td><td>2</td><td>unknown</td></tr>"
    ));
    // the WebUI store held 3 rows and 1 is out: 2 dropped as duplicates
    assert!(page.contains(
        "<tr><td>nanobot.webui_transcript</td><td>1</td><td>3</td><td>1</td><td>0</td><td>2</td></tr>"
    ));
    // nothing but the page is left beside it
    let names: Vec<String> = std::fs::read_dir(dir.path())?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 3, "{names:?}");
    // same input, same bytes
    let again = dir.path().join("again.html");
    report(
        &dir.path().join("out.parquet"),
        Some(&dir.path().join("tables")),
        &again,
    )?;
    assert_eq!(std::fs::read(&again)?, page.as_bytes());
    Ok(())
}

#[test]
fn without_tables_the_sections_that_need_them_say_so() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    write_inputs(dir.path())?;
    let html = dir.path().join("r.html");
    let w = report(&dir.path().join("out.parquet"), None, &html)?;
    assert_eq!(w.charts, 6);
    let page = std::fs::read_to_string(&html)?;
    for t in ["llm_calls", "sources", "tz_offsets", "diagnostics"] {
        assert!(page.contains(&format!("data-missing=\"{t}\"")), "{t}");
    }
    Ok(())
}

#[test]
fn bad_inputs_name_their_path_and_write_nothing() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    write_inputs(dir.path())?;
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
    Ok(())
}
