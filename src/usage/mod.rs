//! `nanoload usage`: what both agents' LLM calls cost, per local day, week,
//! month, session or model, in the terminal or as JSON.
//!
//! ```text
//! nanoload usage OUT.parquet --tables DIR   DIR/llm_calls.parquet (and the sessions'
//!                                           titles, DIR/sessions.parquet)
//! nanoload usage DIR                        a tables directory, as the --tables DIR of OUT
//! nanoload usage FILE.duckdb                a --db file's llm_calls and sessions (read-only)
//! nanoload usage HOME | LEDGER              the outputs crate::source gives for it (a HOME's
//!                                           served by src/keep.rs, a ledger's export)
//! --prices, --price, --free                 the calls priced again at read (source::reprice)
//!
//! llm_calls (one row per call: nanobot's llm_usage rows, nanoclaw's Claude
//! Code responses with counted usage)
//!   └─ local time t: started_at_local (the derived offsets), or the UTC
//!      time where the instance has none (counted and said), or the
//!      instant in --timezone ZONE
//!        └─ the calls of --agent, --instance, between --since and --until
//!           └─ one row per key (day | week from Monday | month | session |
//!              provider/model): calls, tokens, priced cost, unpriced
//!              calls, models; --breakdown: one row per model under each;
//!              --order desc: reversed; then TOTAL over every row shown
//! ```
//!
//! Same input, same output: every query is fully ordered and costs are
//! summed as exact decimals. A group whose calls are all unpriced costs
//! `unknown`, never 0 (`render`).

use std::path::{Path, PathBuf};

use chrono::{NaiveDate, TimeZone};
use duckdb::Connection;

use crate::readout::{CALL_TOTAL_TOKENS, CallSums, sql_str, sql_text};
pub use crate::readout::{LOCAL_TIME, parse_date};

mod render;
#[cfg(test)]
mod tests;

pub use render::{Layout, dollars, json, table, thousands};

/// What one row groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum View {
    /// One row per local day.
    #[value(alias = "day")]
    Daily,
    /// One row per local week, from Monday.
    #[value(alias = "week")]
    Weekly,
    /// One row per local month.
    #[value(alias = "month")]
    Monthly,
    /// One row per session, shown by its title, with its instance and last
    /// call, the costliest first (calls in no session: one row).
    Session,
    /// One row per provider and model.
    Model,
}

impl View {
    /// The name of the key column (and of its JSON field).
    pub fn key(self) -> &'static str {
        match self {
            View::Daily => "day",
            View::Weekly => "week_from",
            View::Monthly => "month",
            View::Session => "session",
            View::Model => "model",
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            View::Daily => "daily",
            View::Weekly => "weekly",
            View::Monthly => "monthly",
            View::Session => "session",
            View::Model => "model",
        }
    }
}

/// The clock the calls are placed on.
#[derive(Debug, Clone, PartialEq)]
pub enum Zone {
    /// The host's local time, from the offsets the load derived.
    Local,
    /// A fixed offset from UTC, in minutes (`UTC`, `+05:30`).
    Fixed(i32),
    /// A named zone of the tz database (`Europe/Berlin`), DST included.
    Named(chrono_tz::Tz),
}

/// Why `--timezone` names no zone.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZoneError {
    #[error(transparent)]
    Offset(#[from] crate::config::OffsetError),
    #[error(
        "{0:?} is no time zone: give UTC, an offset (+05:30) or a tz database name (Europe/Berlin)"
    )]
    Unknown(String),
}

impl Zone {
    /// `UTC`, `Z`, `+HH:MM`/`-HH:MM` or a tz database name.
    pub fn parse(s: &str) -> Result<Zone, ZoneError> {
        if s.eq_ignore_ascii_case("utc") || s == "Z" {
            return Ok(Zone::Fixed(0));
        }
        if s.starts_with(['+', '-']) {
            return Ok(Zone::Fixed(crate::config::parse_offset(s)?));
        }
        (s.parse::<chrono_tz::Tz>())
            .map(Zone::Named)
            .map_err(|_| ZoneError::Unknown(s.to_string()))
    }
    pub fn label(&self) -> String {
        match self {
            Zone::Local => "local (derived offsets)".into(),
            Zone::Fixed(0) => "UTC".into(),
            Zone::Fixed(m) => format!("UTC{}", crate::time::offset_label(i64::from(*m))),
            Zone::Named(tz) => tz.name().into(),
        }
    }
}

/// The order of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Order {
    /// Oldest first (days, weeks, months); sessions and models the
    /// cheapest first.
    Asc,
    /// Newest first; sessions and models the costliest first.
    Desc,
}

impl View {
    /// The order of the view's rows unless `--order` says otherwise.
    pub fn default_order(self) -> Order {
        match self {
            View::Model | View::Session => Order::Desc,
            _ => Order::Asc,
        }
    }
}

/// What to show.
#[derive(Debug, Clone)]
pub struct Query {
    pub view: View,
    /// First and last local date shown (inclusive).
    pub since: Option<NaiveDate>,
    pub until: Option<NaiveDate>,
    pub zone: Zone,
    /// Only the calls of this agent (`nanobot`, `nanoclaw`).
    pub agent: Option<String>,
    /// Only the calls of this instance (`.nanobot`, a nanoclaw root).
    pub instance: Option<String>,
    /// None: the view's own order ([`View::default_order`]).
    pub order: Option<Order>,
    /// Under each row, one row per provider and model.
    pub breakdown: bool,
}

impl Query {
    /// A view of every call, in the view's own order.
    pub fn new(view: View) -> Query {
        Query {
            view,
            since: None,
            until: None,
            zone: Zone::Local,
            agent: None,
            instance: None,
            order: None,
            breakdown: false,
        }
    }
}

/// A call's provider and model as one name (`openrouter/anthropic/claude-sonnet-4.5`),
/// the provider once where the model already starts with it (nanobot's
/// `anthropic` with LiteLLM's `anthropic/claude-sonnet-4-5`).
pub const MODEL_KEY: &str = "CASE WHEN starts_with(model, provider || '/') THEN model
    ELSE coalesce(provider || '/', '') || coalesce(model, '(none)') END";

/// One row of a view (and the TOTAL): sums over its calls. A token sum is
/// `None` when no call of the group reported that count.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The key (`2026-03-01`; a week by its Monday; the session's id, shown
    /// by its title where it has one; the model's `provider/model`); `None`
    /// for the TOTAL.
    pub key: Option<String>,
    /// Session view: agent, session_id, session_uid, first call's local
    /// time, title (`sessions.title`), instance, last call's local time;
    /// model view: agent, provider, model.
    pub detail: Vec<(&'static str, Option<String>)>,
    /// Its calls, tokens and cost.
    pub sums: CallSums,
    /// The models of its calls, as recorded, sorted (none on TOTAL and in
    /// the model view).
    pub models: Vec<String>,
    /// `--breakdown`: one row per provider and model of its calls (key:
    /// `provider/model`), the costliest first.
    pub breakdown: Vec<Row>,
}

/// A view over the calls.
#[derive(Debug, Clone, PartialEq)]
pub struct Usage {
    pub view: View,
    pub zone: String,
    pub since: Option<NaiveDate>,
    pub until: Option<NaiveDate>,
    /// The filters given (`--agent`, `--instance`).
    pub agent: Option<String>,
    pub instance: Option<String>,
    pub breakdown: bool,
    pub rows: Vec<Row>,
    pub total: Row,
    /// Calls placed by their UTC time: their instance has no derived
    /// offset (local zone only).
    pub utc_placed: i64,
    /// Calls without a start time: in no day, week or month (and left out
    /// when --since or --until is given).
    pub undated: i64,
    /// How the calls were priced, when not as their load priced them
    /// (`--prices`, `--price`, `--free`): said beside the cost.
    pub prices: Option<String>,
}

/// Why no usage was shown (exit 2).
#[derive(Debug, thiserror::Error)]
pub enum UsageError {
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    #[error("usage query failed: {0}")]
    Query(String),
}

impl From<duckdb::Error> for UsageError {
    fn from(e: duckdb::Error) -> UsageError {
        UsageError::Query(crate::diag::one_line(&e.to_string()))
    }
}

/// An in-memory DuckDB with `llm_calls` over `tables/llm_calls.parquet`,
/// its calls priced again with `at_read` when given
/// ([`crate::source::reprice`]).
pub fn open(
    tables: &Path,
    at_read: Option<&crate::config::Repricing>,
) -> Result<Connection, UsageError> {
    let file = tables.join("llm_calls.parquet");
    if !file.is_file() {
        return Err(UsageError::Input {
            path: file,
            message: "no such file (the --tables DIR of a load holds llm_calls.parquet)".into(),
        });
    }
    let conn = crate::source::connection()?;
    conn.execute_batch(&format!(
        "CREATE VIEW llm_calls AS SELECT * FROM read_parquet({});
         SELECT {CALL_COLUMNS} FROM llm_calls LIMIT 0;",
        sql_str(&file)
    ))
    .map_err(|e| UsageError::Input {
        path: file.clone(),
        message: format!(
            "not an llm_calls table of this nanoload: {}",
            crate::diag::one_line(&e.to_string())
        ),
    })?;
    if let Some(r) = at_read {
        crate::source::reprice(&conn, &r.table).map_err(|e| UsageError::Input {
            path: file.clone(),
            message: format!(
                "its calls cannot be priced again: {}",
                crate::diag::one_line(&e.to_string())
            ),
        })?;
    }
    // each session's title (the session view): none where the tables have
    // no sessions file or one of a load before titles
    let sessions = tables.join("sessions.parquet");
    let titled = sessions.is_file()
        && conn
            .execute_batch(&format!(
                "CREATE VIEW session_titles AS
                 SELECT session_uid, title FROM read_parquet({});
                 SELECT * FROM session_titles LIMIT 0;",
                sql_str(&sessions)
            ))
            .is_ok();
    if !titled {
        conn.execute_batch(
            "CREATE OR REPLACE VIEW session_titles AS
             SELECT CAST(NULL AS VARCHAR) AS session_uid, CAST(NULL AS VARCHAR) AS title LIMIT 0;",
        )?;
    }
    Ok(conn)
}

/// The columns of `llm_calls` usage reads.
const CALL_COLUMNS: &str = "agent, session_uid, session_id, provider, model, started_at_ms, \
     started_at_local, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, \
     total_tokens, cost_usd";

/// The calls of a `--db` file, opened read-only through
/// [`crate::source::Source`] (its `llm_calls`, priced again with `at_read`
/// when given, and its sessions' titles): read with [`usage`] on its
/// connection.
pub fn open_database(
    db: &Path,
    at_read: Option<&crate::config::Repricing>,
) -> Result<crate::source::Source, UsageError> {
    let reader = crate::source::Reader {
        prices: at_read.map(|r| r.table.clone()),
        ..Default::default()
    };
    let input = |message: String| UsageError::Input {
        path: db.to_path_buf(),
        message,
    };
    let src = crate::source::Source::open_with(db, None, &reader)
        .map_err(|e| input(crate::diag::one_line(&e.to_string())))?;
    let names = src
        .table_names()
        .map_err(|e| input(crate::diag::one_line(&e.to_string())))?;
    if !names.iter().any(|n| n == "llm_calls") {
        return Err(input(format!(
            "no llm_calls table (this {} has: {})",
            src.kind.as_str(),
            names.join(", ")
        )));
    }
    let conn = src.conn();
    conn.execute_batch(&format!("SELECT {CALL_COLUMNS} FROM llm_calls LIMIT 0"))
        .map_err(|e| {
            input(format!(
                "not an llm_calls table of this nanoload: {}",
                crate::source::explain(&e).1
            ))
        })?;
    let titled = names.iter().any(|n| n == "sessions")
        && conn
            .execute_batch(
                "CREATE TEMP VIEW session_titles AS SELECT session_uid, title FROM sessions;
                 SELECT * FROM session_titles LIMIT 0;",
            )
            .is_ok();
    if !titled {
        conn.execute_batch(
            "CREATE OR REPLACE TEMP VIEW session_titles AS
             SELECT CAST(NULL AS VARCHAR) AS session_uid, CAST(NULL AS VARCHAR) AS title LIMIT 0;",
        )?;
    }
    Ok(src)
}

/// The local time of a call (`t`, a TIMESTAMP) and whether it is its UTC
/// time for want of an offset (`utc_placed`), per zone. A named zone's
/// offsets come from a table of the quarter hours the calls start in (every
/// tz database transition falls on a quarter hour).
fn placed(conn: &Connection, zone: &Zone) -> Result<String, UsageError> {
    let utc = "make_timestamp(started_at_ms * 1000)";
    Ok(match zone {
        Zone::Local => format!(
            "SELECT *, {LOCAL_TIME} AS t,
                    started_at_local IS NULL AND started_at_ms IS NOT NULL AS utc_placed
             FROM llm_calls"
        ),
        Zone::Fixed(m) => {
            format!("SELECT *, {utc} + to_minutes({m}) AS t, false AS utc_placed FROM llm_calls")
        }
        Zone::Named(tz) => {
            conn.execute_batch(
                "CREATE TEMP TABLE zone_slots (slot BIGINT, offset_minutes INTEGER)",
            )?;
            let slots: Vec<i64> = {
                let mut s = conn.prepare(
                    "SELECT DISTINCT started_at_ms // 900000 FROM llm_calls
                     WHERE started_at_ms IS NOT NULL ORDER BY 1",
                )?;
                s.query_map([], |r| r.get(0))?
                    .collect::<duckdb::Result<_>>()?
            };
            let mut app = conn.appender("zone_slots")?;
            for slot in slots {
                let at = chrono::DateTime::from_timestamp_millis(slot * 900_000)
                    .map(|d| d.naive_utc())
                    .unwrap_or_default();
                let off = tz.offset_from_utc_datetime(&at);
                let secs = chrono::Offset::fix(&off).local_minus_utc();
                app.append_row(duckdb::params![slot, secs / 60])?;
            }
            drop(app);
            format!(
                "SELECT c.*, {utc} + to_minutes(z.offset_minutes) AS t, false AS utc_placed
                 FROM llm_calls c
                 LEFT JOIN zone_slots z ON z.slot = c.started_at_ms // 900000"
            )
        }
    })
}

/// The view `q` of the calls in `conn` ([`open`]).
pub fn usage(conn: &Connection, q: &Query) -> Result<Usage, UsageError> {
    let sums = CallSums::SQL;
    show(conn, q)?;
    let total_tokens = CALL_TOTAL_TOKENS;
    let by_cost = format!(
        "sum(cost_usd::DECIMAL(38, 12)) DESC NULLS LAST, coalesce(sum({total_tokens}), 0) DESC"
    );
    let Grouping {
        key,
        detail,
        order,
        detail_sql,
    } = Grouping::of(q.view, &by_cost);
    let sep = if detail_sql.is_empty() { "" } else { "," };
    let models = "CAST(to_json(list(DISTINCT coalesce(model, '(none)') ORDER BY coalesce(model, '(none)'))) AS VARCHAR)";
    let sql = format!(
        "SELECT {key} AS k{sep} {detail_sql}, {sums}, {models} FROM shown GROUP BY k ORDER BY {order}"
    );
    let mut rows = read_rows(conn, &sql, detail, true)?;
    if q.view == View::Model {
        for r in &mut rows {
            r.models.clear();
        }
    }
    if q.breakdown && q.view != View::Model {
        break_down(conn, &mut rows, &key, &by_cost)?;
    }
    if q.view == View::Session {
        for r in &mut rows {
            // the key: the session's id (its uid in the detail; the table
            // shows its title where it has one)
            r.key = r.detail[1].1.clone().or(r.key.take());
        }
    }
    if q.order.is_some_and(|o| o != q.view.default_order()) {
        // reversed, the rows without a key (no time, no session) still last
        let keyless = rows
            .iter()
            .position(|r| r.key.is_none() && q.view != View::Model);
        let tail = keyless.map(|i| rows.remove(i));
        rows.reverse();
        rows.extend(tail);
    }
    let total = read_rows(
        conn,
        &format!(
            "SELECT CAST(NULL AS VARCHAR){sep} {}, {sums} FROM shown",
            blank(detail)
        ),
        detail,
        false,
    )?
    .pop()
    .map(|mut t| {
        t.detail.clear();
        t
    })
    .ok_or_else(|| UsageError::Query("no TOTAL row".into()))?;
    let count = |sql: &str| -> Result<i64, UsageError> {
        Ok(conn.query_row(sql, [], |r| r.get::<_, i64>(0))?)
    };
    Ok(Usage {
        view: q.view,
        zone: q.zone.label(),
        since: q.since,
        until: q.until,
        agent: q.agent.clone(),
        instance: q.instance.clone(),
        breakdown: q.breakdown,
        rows,
        total,
        utc_placed: count("SELECT count(*) FILTER (WHERE utc_placed) FROM shown")?,
        undated: count("SELECT count(*) FILTER (WHERE t IS NULL) FROM shown")?,
        prices: None,
    })
}

/// The temp view `shown`: the calls placed in the query's zone, filtered by
/// its dates, agent and instance.
fn show(conn: &Connection, q: &Query) -> Result<(), UsageError> {
    let placed = placed(conn, &q.zone)?;
    let mut filter = Vec::new();
    if let Some(d) = q.since {
        filter.push(format!("CAST(t AS DATE) >= DATE '{d}'"));
    }
    if let Some(d) = q.until {
        filter.push(format!("CAST(t AS DATE) <= DATE '{d}'"));
    }
    if let Some(a) = &q.agent {
        filter.push(format!("agent = {}", sql_text(a)));
    }
    if let Some(i) = &q.instance {
        filter.push(format!("instance = {}", sql_text(i)));
    }
    let filter = if filter.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", filter.join(" AND "))
    };
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TEMP VIEW shown AS SELECT * FROM ({placed}) {filter}"
    ))?;
    Ok(())
}

/// What a view groups by: its key, its detail columns and their SQL, its
/// order.
struct Grouping {
    key: String,
    detail: &'static [&'static str],
    order: String,
    detail_sql: &'static str,
}

impl Grouping {
    fn of(view: View, by_cost: &str) -> Grouping {
        // key, detail columns, group, order
        let (key, detail, order): (String, &'static [&'static str], String) = match view {
            View::Daily => ("strftime(t, '%Y-%m-%d')".into(), &[], "1 NULLS LAST".into()),
            View::Weekly => (
                "strftime(date_trunc('week', t), '%Y-%m-%d')".into(),
                &[],
                "1 NULLS LAST".into(),
            ),
            View::Monthly => ("strftime(t, '%Y-%m')".into(), &[], "1 NULLS LAST".into()),
            View::Session => (
                "session_uid".into(),
                &[
                    "agent",
                    "session_id",
                    "session_uid",
                    "started",
                    "title",
                    "instance",
                    "last",
                ],
                "sum(cost_usd::DECIMAL(38, 12)) DESC NULLS LAST, max(t) DESC NULLS LAST, 1 NULLS LAST"
                    .into(),
            ),
            View::Model => (
                MODEL_KEY.into(),
                &["agent", "provider", "model"],
                format!("{by_cost}, 1"),
            ),
        };
        let detail_sql = match view {
            View::Session => {
                "string_agg(DISTINCT agent, ',' ORDER BY agent), min(session_id), min(session_uid),
                 strftime(min(t), '%Y-%m-%d %H:%M'),
                 (SELECT min(s.title) FROM session_titles s WHERE s.session_uid = shown.session_uid),
                 string_agg(DISTINCT instance, ',' ORDER BY instance),
                 strftime(max(t), '%Y-%m-%d %H:%M')"
            }
            View::Model => "string_agg(DISTINCT agent, ',' ORDER BY agent), min(provider), min(model)",
            _ => "",
        };
        Grouping {
            key,
            detail,
            order,
            detail_sql,
        }
    }
}

/// Each row's calls split by model, in `rows`' `breakdown`.
fn break_down(
    conn: &Connection,
    rows: &mut [Row],
    key: &str,
    by_cost: &str,
) -> Result<(), UsageError> {
    let sums = CallSums::SQL;
    let parts = read_rows(
        conn,
        &format!(
            "SELECT {MODEL_KEY} AS mk, {key} AS k, {sums} FROM shown
             GROUP BY k, mk ORDER BY k NULLS LAST, {by_cost}, mk"
        ),
        &["k"],
        false,
    )?;
    for part in parts {
        let k = part.detail.first().and_then(|(_, v)| v.clone());
        if let Some(row) = rows.iter_mut().find(|r| r.key == k) {
            let mut part = part;
            part.detail.clear();
            row.breakdown.push(part);
        }
    }
    Ok(())
}

/// `NULL` for each detail column.
fn blank(detail: &[&str]) -> String {
    vec!["CAST(NULL AS VARCHAR)"; detail.len()].join(", ")
}

/// The rows of `sql`: the key, the `detail` columns, [`CallSums::SQL`],
/// then, with `models`, the models as a JSON list.
fn read_rows(
    conn: &Connection,
    sql: &str,
    detail: &[&'static str],
    models: bool,
) -> Result<Vec<Row>, UsageError> {
    let mut stmt = conn.prepare(sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    let n = detail.len();
    while let Some(r) = rows.next()? {
        let mut d = Vec::with_capacity(n);
        for (i, name) in detail.iter().enumerate() {
            d.push((*name, r.get::<_, Option<String>>(1 + i)?));
        }
        let models = if models {
            let list: Option<String> = r.get(1 + n + 8)?;
            list.and_then(|l| serde_json::from_str::<Vec<String>>(&l).ok())
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        out.push(Row {
            key: r.get::<_, Option<String>>(0)?,
            detail: d,
            sums: CallSums::read(r, 1 + n)?,
            models,
            breakdown: Vec::new(),
        });
    }
    Ok(out)
}
