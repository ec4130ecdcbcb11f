//! The report's sections, in page order: each one's queries (over
//! `events` and, with `--tables`, the side tables), its prose and its
//! charts. A section that needs a side table the run did not give says so.
//!
//! ```text
//! mod.rs      the aggregates most sections read (prepare), facts, answers, tools,
//!             activity, sessions; the chart helper (add) every section draws with
//! cost.rs     cost per day, model and session, and the tokens
//! quality.rs  duplicates dropped, the UTC offsets derived, the diagnostics
//! ```

use std::fmt::Write as _;

use duckdb::Connection;
use plotters::prelude::RGBColor;

use super::chart::{
    BLUE_, BROWN, DESKTOP, GREEN_, GREY, MODEL_COLORS, ORANGE, PHONE, PURPLE, RED_, Span, TEAL,
    Times, Value, XAxis, epoch_day, epoch_seconds, hbars, ranges, stacks, vbars,
};
use super::page::{Chart, Page, esc};
use super::query::{COST, Data, TS, fetch, scalar};
use super::{MAX_DIAGNOSTICS, MAX_MODELS, MAX_SESSIONS, MAX_TOOLS, MAX_TOP_SESSIONS, ReportError};
mod cost;
mod quality;

pub(super) use cost::cost;
pub(super) use quality::{diagnostics, duplicates, offsets};

use crate::readout::{
    ACTIVITY, CALL_TOTAL_TOKENS, CallSums, EVENT_TIME, LOCAL_TIME, dollars, sql_text, thousands,
    tool_error_sql,
};

/// The two aggregates of `events` most sections read, each made in one
/// scan (a section's own scan of every row's columns would decode them
/// again):
/// - `report_sessions`: per (session_uid, agent, instance, session_id) of
///   the rows with a session, their first and last time ([`EVENT_TIME`]),
///   rows, and whether any has a time, a local time, only a UTC one;
/// - `report_rows`: the rows counted per local day and hour, turn_type,
///   whether they are activity ([`ACTIVITY`]), instance, agent, load_id,
///   time_basis and source_kind, with the first and last time of each.
pub(super) fn prepare(conn: &Connection) -> Result<(), ReportError> {
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE report_sessions AS
         SELECT session_uid, agent, instance, session_id, min(t) AS first, max(t) AS last,
                count(*) AS events, bool_or(t IS NOT NULL) AS timed,
                bool_or(timestamp_local IS NOT NULL) AS local,
                bool_or(timestamp_local IS NULL AND timestamp_utc IS NOT NULL) AS utc
         FROM (SELECT session_uid, agent, instance, session_id, timestamp_local, timestamp_utc,
                      {EVENT_TIME} AS t
               FROM events WHERE session_uid IS NOT NULL)
         GROUP BY session_uid, agent, instance, session_id;
         CREATE TEMP TABLE report_rows AS
         SELECT strftime(t, '%Y-%m-%d') AS day, hour(t) AS hour, turn_type, act, instance, agent,
                load_id, time_basis, source_kind, count(*) AS n, min(t) AS first, max(t) AS last
         FROM (SELECT turn_type, instance, agent, load_id, time_basis, source_kind,
                      {EVENT_TIME} AS t, {ACTIVITY} AS act
               FROM events)
         GROUP BY ALL;"
    ))?;
    Ok(())
}

pub(super) fn facts(
    conn: &Connection,
    p: &mut Page,
    name: &str,
    have_tables: bool,
    prices: Option<&str>,
) -> Result<(), ReportError> {
    let d = fetch(
        conn,
        &[
            "events",
            "sessions",
            "instances",
            "agents",
            "load_id",
            "first_event",
            "last_event",
            "without_time",
        ],
        &format!(
            "SELECT CAST(coalesce(sum(n), 0) AS BIGINT),
                    (SELECT count(DISTINCT session_uid) FROM report_sessions),
                    count(DISTINCT instance),
                    array_to_string(list_sort(list(DISTINCT agent)), ', '),
                    array_to_string(list_sort(list(DISTINCT load_id)), ', '),
                    coalesce(strftime(min(first) FILTER (WHERE act), {TS}), ''),
                    coalesce(strftime(max(last) FILTER (WHERE act), {TS}), ''),
                    CAST(coalesce(sum(n) FILTER (WHERE day IS NULL), 0) AS BIGINT)
             FROM report_rows"
        ),
    )?;
    let _ = writeln!(p.html, "<h1>nanoload report: {}</h1>", esc(name));
    p.html.push_str(
        "<p class=\"intro\">What one load of nanobot and nanoclaw state holds: what the agents \
         cost, on what, and when; then the data's own quality, collapsed at the end. Every chart \
         is drawn from the table beside it; times are local (<code>timestamp_local</code>), the \
         UTC time where no offset is known (nanoclaw stores UTC only), unless said otherwise.</p>\n\
         <dl class=\"facts\" data-facts=\"events\">\n",
    );
    if let Some(r) = d.rows.first() {
        let labels = [
            "events",
            "sessions",
            "instances",
            "agents",
            "load_id",
            "first activity",
            "last activity",
            "events without a time",
        ];
        for (i, (l, v)) in labels.iter().zip(r).enumerate() {
            let _ = writeln!(
                p.html,
                "<dt>{l}</dt><dd data-fact=\"{}\">{}</dd>",
                d.columns[i],
                esc(v)
            );
        }
    }
    if let Some(prices) = prices {
        let _ = writeln!(
            p.html,
            "<dt>prices</dt><dd data-fact=\"prices\">{}</dd>",
            esc(prices)
        );
    }
    let _ = writeln!(
        p.html,
        "<dt>side tables</dt><dd data-fact=\"tables\">{}</dd>\n</dl>",
        if have_tables {
            "read (--tables)"
        } else {
            "not given: the sections that need them say so"
        }
    );
    Ok(())
}

/// A call's local day: as `nanoload usage` places it
/// ([`LOCAL_TIME`]).
fn call_day() -> String {
    format!("strftime({}, '%Y-%m-%d')", LOCAL_TIME)
}

/// Sessions with LLM calls, the costliest first (an unpriced one after the
/// priced): named by their title (`title`: the column, or NULL for tables
/// of a load before it; the session's id where it has none) and instance
/// (`instance` likewise), started at their first event's time as the page
/// shows times ([`EVENT_TIME`], from `report_sessions`: [`prepare`]),
/// lasting whole seconds, with their models and tool calls.
pub fn top_sessions(title: &str, instance: &str) -> String {
    format!(
        "WITH c AS (
            SELECT session_uid, count(*) AS calls,
                   string_agg(DISTINCT model, ', ' ORDER BY model) AS models
            FROM llm_calls WHERE session_uid IS NOT NULL GROUP BY ALL),
        e AS (
            SELECT session_uid, min(first) AS first FROM report_sessions
            WHERE session_uid IN (SELECT session_uid FROM c) GROUP BY ALL)
        SELECT coalesce({title}, s.session_id, s.session_uid), coalesce({instance}, ''), s.agent,
               coalesce(strftime(e.first, {TS}), ''),
               coalesce(CAST(to_days(s.secs // 86400) + to_seconds(s.secs % 86400) AS VARCHAR), ''),
               coalesce(c.models, ''), s.tool_calls, c.calls,
               coalesce(CAST(CAST(round(CAST(s.cost_usd AS DECIMAL(38, 12)), 6) AS DECIMAL(38, 6))
                             AS VARCHAR), 'unknown')
        FROM (SELECT *, (epoch_us(CAST(last_event_utc AS TIMESTAMP))
                         - epoch_us(CAST(first_event_utc AS TIMESTAMP))) // 1000000 AS secs
              FROM sessions) s
        JOIN c USING (session_uid) LEFT JOIN e USING (session_uid)
        ORDER BY s.cost_usd DESC NULLS LAST, c.calls DESC, s.session_uid"
    )
}

/// `s.<column>` when `sessions` has the column, else NULL (the tables of
/// a load made before it).
fn session_column(conn: &Connection, column: &str) -> Result<String, ReportError> {
    let n = scalar(
        conn,
        &format!(
            "SELECT count(*) FROM (DESCRIBE sessions) WHERE column_name = {}",
            sql_text(column)
        ),
    )?;
    Ok(if n == "0" {
        "CAST(NULL AS VARCHAR)".into()
    } else {
        format!("s.{column}")
    })
}

/// The headline: what the agents cost and used, as cards (`data-fact`).
pub(super) fn answers(
    conn: &Connection,
    p: &mut Page,
    have_tables: bool,
) -> Result<(), ReportError> {
    p.section(
        "answers",
        "At a glance",
        "Both agents' LLM calls (<code>llm_calls</code>): cost of the priced calls (USD; a call \
         without a price is counted as unpriced, never as $0), tokens (input counts the cached \
         ones), sessions, and local days with calls (the UTC day where no offset is known).",
    );
    if !have_tables {
        p.missing("llm_calls", "At a glance");
        return Ok(());
    }
    let day = call_day();
    let total = CALL_TOTAL_TOKENS;
    let d = fetch(
        conn,
        &[
            "cost", "tokens", "sessions", "days", "per_day", "peak", "peak_cost", "cache_read",
            "input", "unpriced", "calls",
        ],
        &format!(
            "WITH c AS (SELECT *, {day} AS day FROM llm_calls),
             d AS (SELECT day, sum(cost_usd::DECIMAL(38, 12)) AS cost FROM c
                   WHERE day IS NOT NULL GROUP BY day)
             SELECT round(sum(cost_usd::DECIMAL(38, 12)), 6), sum({total}),
                    (SELECT count(*) FROM sessions),
                    count(DISTINCT day),
                    -- over the days with priced calls, as its label says
                    round(sum(cost_usd::DECIMAL(38, 12))
                          / nullif(count(DISTINCT day) FILTER (WHERE cost_usd IS NOT NULL), 0), 6),
                    (SELECT day FROM d WHERE cost IS NOT NULL ORDER BY cost DESC, day LIMIT 1),
                    (SELECT round(cost, 6) FROM d WHERE cost IS NOT NULL ORDER BY cost DESC, day LIMIT 1),
                    sum(cache_read_tokens), sum(input_tokens),
                    count(*) FILTER (WHERE cost_usd IS NULL), count(*)
             FROM c"
        ),
    )?;
    let Some(r) = d.rows.first() else {
        return Ok(());
    };
    let calls = r[10].parse::<i64>().unwrap_or(0);
    let sums = CallSums {
        calls,
        unpriced_calls: r[9].parse::<i64>().unwrap_or(0),
        ..Default::default()
    };
    let money = |v: &str| {
        if v.is_empty() {
            "unknown".to_string()
        } else {
            dollars(v)
        }
    };
    let count = |v: &str| v.parse::<i64>().map_or("-".into(), thousands);
    let rate = match (r[7].parse::<f64>(), r[8].parse::<f64>()) {
        (Ok(read), Ok(input)) if input > 0.0 => format!("{:.1} %", 100.0 * read / input),
        _ => "-".into(),
    };
    let peak = if r[5].is_empty() {
        "-".to_string()
    } else {
        format!("{} ({})", r[5], money(&r[6]))
    };
    // without calls there is no cost to be unknown
    let (total_cost, per_day) = if calls == 0 {
        ("no LLM calls".to_string(), "-".to_string())
    } else if r[4].is_empty() {
        (money(&r[0]), "-".to_string())
    } else {
        (money(&r[0]), money(&r[4]))
    };
    let cards = [
        ("total cost", "total_cost", total_cost, sums.priced_part()),
        (
            "total tokens (input + output)",
            "total_tokens",
            count(&r[1]),
            String::new(),
        ),
        ("sessions", "sessions_total", count(&r[2]), String::new()),
        (
            "days with LLM calls",
            "active_days",
            count(&r[3]),
            String::new(),
        ),
        (
            "cost per day with priced calls",
            "cost_per_day",
            per_day,
            String::new(),
        ),
        ("peak day (priced calls)", "peak_day", peak, String::new()),
        ("cache-hit rate", "cache_hit_rate", rate, String::new()),
        (
            "unpriced calls",
            "unpriced_calls",
            count(&r[9]),
            String::new(),
        ),
    ];
    p.html.push_str("<div class=\"cards\">\n");
    for (label, fact, value, basis) in cards {
        let _ = write!(
            p.html,
            "<div class=\"card\"><span class=\"card-label\">{label}</span>\
             <span class=\"card-value\" data-fact=\"{fact}\">{}</span>",
            esc(&value)
        );
        if !basis.is_empty() {
            let _ = write!(
                p.html,
                "<span class=\"card-basis\" data-fact=\"{fact}_basis\">{}</span>",
                esc(&basis)
            );
        }
        p.html.push_str("</div>\n");
    }
    p.html.push_str("</div>\n");
    p.note(
        "Total tokens: each call's total as its source reports it, input + output where it \
         reports none. Cache-hit rate: cache reads over input tokens. Cost per day: the priced \
         calls' cost over the local days with priced calls; peak day: the local day whose \
         priced calls cost most. A call without a price is in neither.",
    );
    Ok(())
}

/// A value axis that counts (integer ticks).
fn counts(desc: &str) -> Value<'_> {
    Value { desc, counts: true }
}

/// A value axis in USD.
fn usd(desc: &str) -> Value<'_> {
    Value {
        desc,
        counts: false,
    }
}

pub(super) fn tools(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "tools",
        "Tools",
        "Tool calls (<code>tool_use</code> rows) per tool name: the calls whose result reports \
         an error (the <code>tool_result</code> row of the same call id: nanoclaw's \
         <code>is_error</code>, nanobot's error phase or its retry hint), the share of calls \
         that failed, and in how many sessions each tool was called.",
    );
    let all = scalar(
        conn,
        "SELECT count(DISTINCT coalesce(tool_name, '(none)')) FROM events WHERE turn_type = 'tool_use'",
    )?;
    // the load's own flag; the rule over each result's text and native on
    // an OUT written before it
    let has = scalar(
        conn,
        "SELECT count(*) FROM (DESCRIBE events) WHERE column_name = 'tool_error'",
    )?;
    let failed = tool_error_sql(has != "0");
    let data = fetch(
        conn,
        &["tool", "ok", "errors", "calls", "error_rate", "sessions"],
        &format!(
            "WITH r AS (
               SELECT session_uid, tool_use_id, bool_or({failed}) AS failed
               FROM events WHERE turn_type = 'tool_result' AND tool_use_id IS NOT NULL
               GROUP BY ALL),
             u AS (
               SELECT coalesce(e.tool_name, '(none)') AS tool, e.session_uid,
                      coalesce(r.failed, false) AS failed
               FROM events e LEFT JOIN r
                 ON e.session_uid IS NOT DISTINCT FROM r.session_uid AND e.tool_use_id = r.tool_use_id
               WHERE e.turn_type = 'tool_use')
             SELECT tool, count(*) FILTER (WHERE NOT failed), count(*) FILTER (WHERE failed),
                    count(*) AS calls,
                    round(100.0 * count(*) FILTER (WHERE failed) / count(*), 1),
                    count(DISTINCT session_uid)
             FROM u GROUP BY tool ORDER BY calls DESC, tool LIMIT {MAX_TOOLS}"
        ),
    )?;
    p.note(&format!(
        "Tools called: {}; at most {MAX_TOOLS} are drawn, the most called first (orange: \
         calls without an error, red: failed).",
        esc(&all)
    ));
    let labels = data.labels(&[0]);
    add(
        p,
        "tools",
        "Tool calls per tool, failed in red",
        data,
        Draw::Horizontal(
            &labels,
            vec![("ok".into(), ORANGE), ("errors".into(), RED_)],
            counts("tool calls"),
        ),
    )?;
    Ok(())
}

pub(super) fn activity(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "activity",
        "Activity",
        "Events per local day, by row type, and per local hour of the day (all days together); \
         the UTC time where no offset is known. Only rows that are something the agent or a \
         user did: standing state (nanobot's permission settings, dated by their file's \
         mtime; a nanoclaw install's catalog rows of no session and its install marker) is \
         left out, as are rows without any time (see above).",
    );
    let state = scalar(
        conn,
        "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM report_rows WHERE NOT act",
    )?;
    if state != "0" {
        p.note(&format!(
            "<span data-fact=\"state_rows\">{}</span> rows of standing state are not counted.",
            esc(&state)
        ));
    }
    let types: [(&'static str, RGBColor); 6] = [
        ("user", BLUE_),
        ("assistant", GREEN_),
        ("tool_use", ORANGE),
        ("tool_result", BROWN),
        ("thinking", PURPLE),
        ("system", GREY),
    ];
    let mut cols = vec!["day", "events"];
    cols.extend(types.iter().map(|(t, _)| *t));
    let filters: Vec<String> = types
        .iter()
        .map(|(t, _)| {
            format!("CAST(coalesce(sum(n) FILTER (WHERE turn_type = '{t}'), 0) AS BIGINT)")
        })
        .collect();
    let days = fetch(
        conn,
        &cols,
        &format!(
            "SELECT day, CAST(sum(n) AS BIGINT), {}
             FROM report_rows WHERE day IS NOT NULL AND act GROUP BY day ORDER BY day",
            filters.join(", ")
        ),
    )?;
    let series: Series = types.iter().map(|(t, c)| (t.to_string(), *c)).collect();
    add(
        p,
        "activity-day",
        "Events per local day",
        days,
        Draw::Vertical(XAxis::Days, series, counts("events"), &[]),
    )?;
    let hours = fetch(
        conn,
        &["hour", "events"],
        "SELECT h.hour, CAST(coalesce(sum(e.n), 0) AS BIGINT)
         FROM range(24) AS h(hour)
         LEFT JOIN (SELECT hour, n FROM report_rows WHERE act) e ON e.hour = h.hour
         GROUP BY h.hour ORDER BY h.hour",
    )?;
    let labels: Vec<String> = (0..24).map(|h| format!("{h:02}")).collect();
    add(
        p,
        "activity-hour",
        "Events per local hour of the day",
        hours,
        Draw::Vertical(
            XAxis::Labels(&labels),
            vec![("events".into(), BLUE_)],
            counts("events"),
            &[],
        ),
    )?;
    Ok(())
}

pub(super) fn sessions(conn: &Connection, p: &mut Page) -> Result<(), ReportError> {
    p.section(
        "sessions",
        "Sessions",
        "Each session (one <code>session_uid</code>) as a bar from its first to its last local \
         time (UTC where no offset is known); its events counted beside.",
    );
    let counts = fetch(
        conn,
        &["sessions", "timed"],
        "SELECT count(*), count(*) FILTER (WHERE t) FROM (
           SELECT session_uid, bool_or(timed) AS t
           FROM report_sessions GROUP BY session_uid)",
    )?;
    let (all, timed) = counts
        .rows
        .first()
        .map(|r| (r[0].clone(), r[1].clone()))
        .unwrap_or_default();
    let data = fetch(
        conn,
        &[
            "session_uid",
            "agent",
            "instance",
            "session_id",
            "first_time",
            "last_time",
            "events",
        ],
        &format!(
            "WITH s AS (
               SELECT session_uid, agent, instance, session_id, first, last, events
               FROM report_sessions),
             recent AS (
               SELECT * FROM s WHERE last IS NOT NULL
               ORDER BY last DESC, session_uid LIMIT {MAX_SESSIONS})
             SELECT session_uid, agent, instance, coalesce(session_id, ''), strftime(first, {TS}),
                    strftime(last, {TS}), events
             FROM recent ORDER BY first, last, session_uid"
        ),
    )?;
    // what the drawn sessions' times are: local where an offset is known,
    // UTC where not (nanoclaw stores UTC only)
    let times = fetch(
        conn,
        &["local", "utc"],
        &format!(
            "WITH s AS (
               SELECT session_uid, max(last) AS last, bool_or(local) AS local,
                      bool_or(utc) AS utc
               FROM report_sessions GROUP BY session_uid),
             recent AS (
               SELECT * FROM s WHERE last IS NOT NULL
               ORDER BY last DESC, session_uid LIMIT {MAX_SESSIONS})
             SELECT coalesce(bool_or(local), false), coalesce(bool_or(utc), false) FROM recent"
        ),
    )?;
    let times = match times.rows.first().map(|r| (r[0] == "true", r[1] == "true")) {
        Some((true, true)) => Times::Mixed,
        Some((false, true)) => Times::Utc,
        _ => Times::Local,
    };
    let shown = data.rows.len();
    let timed_n = timed.parse::<usize>().unwrap_or(0);
    p.note(&if shown == timed_n {
        format!(
            "<span data-fact=\"timeline\">All {} sessions with a time are drawn</span> ({} \
             sessions in all).",
            esc(&timed),
            esc(&all)
        )
    } else {
        format!(
            "<span data-fact=\"timeline\">The {shown} most recent of {} sessions with a time are \
             drawn</span>, chosen by their last time (at most {MAX_SESSIONS}; {} sessions in all).",
            esc(&timed),
            esc(&all)
        )
    });
    let labels = data.labels(&[3, 2]);
    let spans: Vec<Span> = data
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| Span {
            row: i,
            start: epoch_seconds(&r[4]).unwrap_or(0.0),
            end: epoch_seconds(&r[5]).unwrap_or(0.0),
            color: if r[1] == "nanoclaw" { ORANGE } else { BLUE_ },
            text: r[6].clone(),
        })
        .collect();
    add(
        p,
        "sessions-timeline",
        "Sessions from first to last time (nanobot blue, nanoclaw orange; events beside)",
        data,
        Draw::Ranges(&labels, &spans, times),
    )?;
    Ok(())
}

/// A series: the columns of a chart's rows drawn as bar segments, with
/// their colours.
type Series = Vec<(String, RGBColor)>;

/// What a chart draws of its rows.
enum Draw<'a> {
    /// One stack per row, rising: at the date of the row's first column
    /// (`XAxis::Days`) or at 0, 1, … labelled; the y axis described; a
    /// `*` above each flagged row.
    Vertical(XAxis<'a>, Series, Value<'a>, &'a [bool]),
    /// One bar per row, along the x axis (described), labelled.
    Horizontal(&'a [String], Series, Value<'a>),
    /// Spans from a start to an end on rows of labels, over days or
    /// seconds (one bar per span, no series).
    Ranges(&'a [String], &'a [Span], Times),
}

/// A chart of `data` added to the page: drawn for a desktop and for a
/// phone, then shown beside its table.
fn add(
    p: &mut Page,
    id: &'static str,
    title: &str,
    data: Data,
    draw: Draw,
) -> Result<(), ReportError> {
    let mut svgs = Vec::new();
    let mut drawn = Vec::new();
    for fit in [DESKTOP, PHONE] {
        let (svg, series) = match &draw {
            Draw::Vertical(axis, series, value, flagged) => {
                let xs: Vec<f64> = match axis {
                    XAxis::Days => data
                        .rows
                        .iter()
                        .map(|r| epoch_day(&r[0]).unwrap_or(0) as f64)
                        .collect(),
                    XAxis::Labels(_) => (0..data.rows.len()).map(|i| i as f64).collect(),
                };
                let stacks = stacks(&data, series);
                let bars = vbars(id, &xs, *axis, &stacks, *value, flagged, fit)?;
                (bars, series.clone())
            }
            Draw::Horizontal(labels, series, value) => (
                hbars(id, labels, &stacks(&data, series), *value, fit)?,
                series.clone(),
            ),
            Draw::Ranges(labels, spans, times) => {
                (ranges(id, labels, spans, *times, fit)?, Vec::new())
            }
        };
        svgs.push((fit.class, svg));
        drawn = series;
    }
    p.chart(Chart {
        id,
        title: title.into(),
        data,
        series: drawn,
        svgs,
    });
    Ok(())
}
