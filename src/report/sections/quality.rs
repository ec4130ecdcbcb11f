//! The sections on the data itself: rows dropped as duplicates, the UTC
//! offsets derived, and the diagnostics.

use super::*;

pub(in crate::report) fn duplicates(
    conn: &Connection,
    p: &mut Page,
    have_tables: bool,
) -> Result<(), ReportError> {
    p.section(
        "copies",
        "Duplicates dropped and rows recovered",
        "Per source kind: the rows its stores held (<code>sources.rows</code>), the rows in the \
         output (<code>events</code>, and nanobot's <code>llm_calls</code> rows for the store \
         they came from: <code>nanobot.llm_usage</code>, a subagent task's usage), \
         nanoclaw <code>delivered</code> rows folded into their outbound row \
         (<code>native.delivered</code>), and the rest: rows dropped as copies of a row the \
         output keeps. The reasons are in the load's summary (<code>--summary-json</code> \
         <code>drop_reasons</code>).",
    );
    if have_tables {
        let data = fetch(
            conn,
            &[
                "source_kind",
                "stores",
                "rows_read",
                "rows_out",
                "folded",
                "duplicates",
            ],
            "WITH r AS (
               SELECT source_kind, count(*) AS stores, coalesce(sum(rows), 0) AS rows_read
               FROM sources GROUP BY source_kind),
             o AS (
               SELECT source_kind, sum(n) AS n FROM (
                 SELECT source_kind, CAST(sum(n) AS BIGINT) AS n FROM report_rows GROUP BY source_kind
                 -- nanobot's llm_calls rows count for the store they came from
                 UNION ALL
                 SELECT s.source_kind, count(*) FROM llm_calls l
                 JOIN sources s ON s.source_path = l.source_path
                 WHERE l.agent = 'nanobot' GROUP BY s.source_kind)
               GROUP BY source_kind),
             f AS (
               SELECT count(*) AS n FROM events
               WHERE source_kind = 'nanoclaw.outbound'
                 AND json_extract(native, '$.delivered') IS NOT NULL)
             SELECT r.source_kind, r.stores, r.rows_read, coalesce(o.n, 0) AS rows_out,
                    CASE WHEN r.source_kind = 'nanoclaw.inbound' THEN f.n ELSE 0 END AS folded,
                    r.rows_read - rows_out - folded
             FROM r LEFT JOIN o USING (source_kind) CROSS JOIN f
             ORDER BY r.source_kind",
        )?;
        let labels = data.labels(&[0]);
        add(
            p,
            "duplicates",
            "Rows dropped as duplicates per source kind",
            data,
            Draw::Horizontal(
                &labels,
                vec![("duplicates".into(), RED_)],
                counts("rows dropped as duplicates"),
            ),
        )?;
    } else {
        p.missing("sources", "Duplicates dropped");
    }
    p.note(
        "Rows recovered: rows of secondary copies (WebUI transcripts, run records, CLI history, \
         frozen and legacy session files, the sidebar cache) that no primary store holds — a \
         chat erased by <code>/new</code> or deleted survives only there.",
    );
    let data = fetch(
        conn,
        &["source_kind", "rows", "sessions"],
        "SELECT source_kind, count(*), count(DISTINCT session_uid) FROM events
         WHERE source_role = 'secondary' GROUP BY source_kind ORDER BY source_kind",
    )?;
    let labels = data.labels(&[0]);
    add(
        p,
        "recovered",
        "Rows recovered from secondary copies per source kind",
        data,
        Draw::Horizontal(
            &labels,
            vec![("rows".into(), TEAL)],
            counts("rows from secondary copies"),
        ),
    )?;
    if have_tables {
        let only = scalar(conn, "SELECT count(*) FROM sessions WHERE secondary_only")?;
        p.note(&format!(
            "<span data-fact=\"secondary_only_sessions\">{}</span> sessions are known only from secondary copies.",
            esc(&only)
        ));
    }
    Ok(())
}

fn offset_text(minutes: &str) -> String {
    minutes
        .parse::<i64>()
        .map_or(String::new(), crate::time::offset_label)
}

pub(in crate::report) fn offsets(
    conn: &Connection,
    p: &mut Page,
    have_tables: bool,
) -> Result<(), ReportError> {
    p.section(
        "offsets",
        "Time offsets",
        "nanobot writes local times; each instance's UTC offset is derived per local day from \
         evidence pairs (a local and a true-UTC record of the same moment). Each range of days \
         with one offset is a bar: the offset, its pairs of evidence and their agreement. Below, \
         how each instance's rows got their time (<code>time_basis</code>).",
    );
    if have_tables {
        let data = fetch(
            conn,
            &[
                "instance",
                "first_day",
                "last_day",
                "offset_minutes",
                "pairs",
                "agreement",
            ],
            "SELECT instance, strftime(first_day, '%Y-%m-%d'), strftime(last_day, '%Y-%m-%d'),
                    offset_minutes, pairs, agreement
             FROM tz_offsets ORDER BY instance, first_day, last_day",
        )?;
        let mut instances: Vec<String> = data.rows.iter().map(|r| r[0].clone()).collect();
        instances.dedup();
        let spans: Vec<Span> = data
            .rows
            .iter()
            .map(|r| Span {
                row: instances.iter().position(|i| *i == r[0]).unwrap_or(0),
                start: epoch_day(&r[1]).unwrap_or(0) as f64,
                end: epoch_day(&r[2]).unwrap_or(0) as f64 + 1.0,
                color: PURPLE,
                text: format!("{} ({} pairs)", offset_text(&r[3]), r[4]),
            })
            .collect();
        add(
            p,
            "offsets",
            "UTC offset ranges per instance (tz_offsets)",
            data,
            Draw::Ranges(&instances, &spans, Times::Days),
        )?;
    } else {
        p.missing("tz_offsets", "The offset ranges");
    }
    let data = fetch(
        conn,
        &["instance", "time_basis", "rows"],
        "SELECT instance, coalesce(time_basis, '(none)') AS b, CAST(sum(n) AS BIGINT)
         FROM report_rows GROUP BY instance, b ORDER BY instance, b",
    )?;
    let labels = data.labels(&[0, 1]);
    add(
        p,
        "time-basis",
        "Rows per instance and time basis",
        data,
        Draw::Horizontal(&labels, vec![("rows".into(), PURPLE)], counts("rows")),
    )?;
    Ok(())
}

pub(in crate::report) fn diagnostics(
    conn: &Connection,
    p: &mut Page,
    have_tables: bool,
) -> Result<(), ReportError> {
    p.section(
        "diagnostics",
        "Diagnostics",
        "What the load could not read or declared lost (<code>diagnostics</code>): rows per kind \
         and code, then the rows themselves.",
    );
    if !have_tables {
        p.missing("diagnostics", "Diagnostics");
        return Ok(());
    }
    let data = fetch(
        conn,
        &["kind", "code", "rows"],
        "SELECT kind, coalesce(code, '') AS c, count(*) AS n FROM diagnostics
         GROUP BY kind, c ORDER BY n DESC, kind, c",
    )?;
    let labels: Vec<String> = data
        .rows
        .iter()
        .map(|r| {
            if r[1].is_empty() {
                r[0].clone()
            } else {
                format!("{} · {}", r[0], r[1])
            }
        })
        .collect();
    add(
        p,
        "diagnostics",
        "Diagnostics per kind and code",
        data,
        Draw::Horizontal(&labels, vec![("rows".into(), RED_)], counts("diagnostics")),
    )?;
    let all = scalar(conn, "SELECT count(*) FROM diagnostics")?;
    let list = fetch(
        conn,
        &[
            "kind",
            "code",
            "agent",
            "instance",
            "source_path",
            "source_line",
            "session_id",
            "message",
        ],
        &format!(
            "SELECT kind, coalesce(code, ''), coalesce(agent, ''), coalesce(instance, ''),
                    coalesce(source_path, ''), coalesce(source_line::VARCHAR, ''),
                    coalesce(session_id, ''), coalesce(message, '')
             FROM diagnostics ORDER BY ALL LIMIT {MAX_DIAGNOSTICS}"
        ),
    )?;
    p.note(&format!(
        "{} diagnostics; {} listed (at most {MAX_DIAGNOSTICS}, sorted).",
        esc(&all),
        list.rows.len()
    ));
    p.list("diagnostics", &list);
    Ok(())
}
