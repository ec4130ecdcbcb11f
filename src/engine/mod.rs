//! The engine: an in-memory DuckDB over the staged files, the SQL steps,
//! and the queries the summary needs.
//!
//! ```text
//! Engine::open   memory_limit, threads, spill dir in the workspace, no extension autoload
//! Engine::load   params (given offset, load_id); prices (the price table); stage_events,
//!                stage_llm_calls (views over the staged Parquet); diagnostics, sources
//!                (tables the steps append to)
//! run_steps      sql/V###__*.sql in order (crate::steps; the `kinds` table first;
//!                one thread on a small stage, crate::steps::StepThreads); then the
//!                titles of the sessions whose first user message is in a blob file
//!                (V023's session_title over its first bytes)
//! for_writing    a lower memory limit for the sink's ordered read of the plan
//! reprice        a reader's llm_calls and sessions priced again at read, by the
//!                load's rules (sql/shared/pricing.sql) in a database of their own
//! error.rs       EngineError: DuckDB's failures classified once, where they enter
//! open.rs        every DuckDB nanoload opens, in memory or a file: one settings block
//! ```

use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::diag::{DiagKind, Diagnostic};
use crate::prices::PriceTable;
pub use crate::readout::sql_str;
use crate::readout::{ACTIVITY, CallSums};
use crate::schema::Agent;
use crate::stage::Staged;
use crate::steps::{Chain, PlanJoin, StepThreads};
use crate::timings::{Phase, SqlPlan, Timings};

mod error;
mod open;

pub use error::{EngineError, classify, duckdb_json, sentence};
pub use open::{
    Access, READER_MEMORY_LIMIT, SESSION_UTC, Settings, in_utc, open_file, open_in_memory, reader,
    reader_with, wal_of,
};

/// The tables `prices` and `free_models` of `table` in the current
/// database of `conn` (what the pricing rules read, sql/shared/pricing.sql).
fn load_prices(conn: &Connection, table: &PriceTable) -> duckdb::Result<()> {
    conn.execute_batch(crate::prices::PRICES_DDL)?;
    conn.execute_batch(crate::prices::PRICES_TEXT_DDL)?;
    {
        let mut app = conn.appender("prices_text")?;
        for row in table.rows() {
            let [a, b, c, d, e, f] = row;
            app.append_row(duckdb::params![a, b, c, d, e, f])?;
        }
        app.flush()?;
    }
    conn.execute_batch(crate::prices::PRICES_FROM_TEXT)?;
    if !table.free.is_empty() {
        let mut app = conn.appender("free_models")?;
        for p in &table.free {
            app.append_row([p.as_str()])?;
        }
    }
    Ok(())
}

/// A call's cost from its tokens and its `model_prices` row `m`, as V020
/// gives `llm_calls.cost_usd` (`l`: the call; the macro qualified by where
/// the rules ran).
fn call_cost_of(l: &str, m: &str, rules: &str) -> String {
    format!(
        "{rules}call_cost({l}.input_tokens, {l}.cache_read_tokens, {l}.cache_write_tokens, \
         {l}.output_tokens, {m}.input, {m}.output, {m}.cache_read, {m}.cache_write)"
    )
}

/// Price the calls of a load's output again at read, with `table`:
/// `llm_calls` (and `sessions`, when there is one) in the current database
/// of `conn`, views or tables as the reader made them, are replaced by
/// tables of the same rows in the same order whose `cost_usd` is priced by
/// the load's own rules (sql/shared/pricing.sql, run here over the models
/// the calls name): each call from its tokens, each session's the sum of
/// its calls' costs, NULL when one has no price; `diagnostics`, when there
/// is one, gets this table's `price_unknown` warnings in place of the
/// load's. The same flags give the
/// same costs as a load with them (`totals::sql_of_an_output_prices_its_calls_again_as_a_load_would`).
/// The rules run in a database of their own, detached after, so a query
/// sees no table but the output's.
pub fn reprice(conn: &Connection, table: &PriceTable) -> duckdb::Result<()> {
    let here: String = conn.query_row("SELECT current_database()", [], |r| r.get(0))?;
    let here = format!("\"{}\"", here.replace('"', "\"\""));
    let kind = |name: &str| -> duckdb::Result<Option<&'static str>> {
        let n: i64 = conn.query_row(
            "SELECT (SELECT count(*) FROM duckdb_views() WHERE database_name = current_database()
                       AND schema_name = current_schema() AND view_name = ?) * 2
                  + (SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()
                       AND schema_name = current_schema() AND table_name = ?)",
            [name, name],
            |r| r.get(0),
        )?;
        Ok(match n {
            2 => Some("VIEW"),
            1 => Some("TABLE"),
            _ => None,
        })
    };
    let calls = kind("llm_calls")?.unwrap_or("TABLE");
    let sessions = kind("sessions")?;
    let diagnostics = kind("diagnostics")?;
    conn.execute_batch(
        "ATTACH ':memory:' AS nanoload_pricing;
         CREATE TABLE nanoload_pricing.main.calls AS FROM llm_calls;",
    )?;
    for (name, there) in [("sessions", sessions), ("diagnostics", diagnostics)] {
        if there.is_some() {
            conn.execute_batch(&format!(
                "CREATE TABLE nanoload_pricing.main.{name}_loaded AS FROM {name};"
            ))?;
        }
    }
    conn.execute_batch("USE nanoload_pricing;")?;
    // the rules' inputs as a load has them: the price table, the models the
    // calls name (as V019 counts them), the diagnostics they append to and
    // the diag_code() macro of the steps' prelude
    let priced = load_prices(conn, table).and_then(|()| {
        conn.execute_batch(&format!(
            "{kinds}
             CREATE TABLE diagnostics (kind VARCHAR, agent VARCHAR, instance VARCHAR,
                 source_path VARCHAR, source_line BIGINT, message VARCHAR, session_id VARCHAR,
                 code VARCHAR);
             CREATE TABLE model_uses AS
             SELECT agent, provider, model, min(instance) AS instance,
                    min(source_path) AS source_path, count(*) AS uses
             FROM calls WHERE model IS NOT NULL GROUP BY ALL;
             {rules}",
            kinds = crate::steps::kinds_sql(),
            rules = crate::steps::PRICING
        ))
    });
    // back where the reader was, whatever the rules did
    conn.execute_batch(&format!("USE {here};"))?;
    priced?;
    let rules = "nanoload_pricing.main.";
    let join = "LEFT JOIN nanoload_pricing.main.model_prices m
                  ON m.agent = l.agent AND m.provider IS NOT DISTINCT FROM l.provider
                 AND m.model = l.model";
    let mut sql = format!(
        "DROP {calls} llm_calls;
         CREATE TABLE llm_calls AS
         SELECT l.* REPLACE (CAST({cost} AS DOUBLE) AS cost_usd)
         FROM nanoload_pricing.main.calls l {join}
         ORDER BY l.rowid;",
        cost = call_cost_of("l", "m", rules),
    );
    if let Some(sessions) = sessions {
        sql.push_str(&format!(
            "DROP {sessions} sessions;
             CREATE TABLE sessions AS
             SELECT s.* REPLACE (CAST(c.cost AS DOUBLE) AS cost_usd)
             FROM nanoload_pricing.main.sessions_loaded s
             LEFT JOIN (SELECT l.session_uid,
                               {rules}calls_cost(m.price_model IS NOT NULL, {cost}) AS cost
                        FROM nanoload_pricing.main.calls l {join}
                        WHERE l.session_uid IS NOT NULL
                        GROUP BY l.session_uid) c ON c.session_uid = s.session_uid
             ORDER BY s.rowid;",
            cost = call_cost_of("l", "m", rules),
        ));
    }
    if let Some(diagnostics) = diagnostics {
        // the load's diagnostics but its price_unknown warnings, which are
        // of the load's table, and this table's, in the outputs' order
        sql.push_str(&format!(
            "DROP {diagnostics} diagnostics;
             CREATE TABLE diagnostics AS
             SELECT * FROM (
                 SELECT * FROM nanoload_pricing.main.diagnostics_loaded
                 WHERE code IS DISTINCT FROM '{unknown}'
                 UNION ALL BY NAME
                 SELECT *, (SELECT min(load_id) FROM nanoload_pricing.main.calls) AS load_id
                 FROM nanoload_pricing.main.diagnostics)
             ORDER BY ALL;",
            unknown = crate::diag::DiagCode::PriceUnknown.as_str()
        ));
    }
    sql.push_str("DETACH nanoload_pricing;");
    conn.execute_batch(&sql)
}

/// The most bytes of a first user message read from the stage for a
/// session's title (60 characters on one line): enough for any run of
/// white space a message plausibly opens with.
const TITLE_TEXT_BYTES: usize = 16 << 10;

/// Output tables besides `events`, in `--tables` / `--db` order: the
/// catalog's, which gives each column's meaning.
pub const TABLES: [&str; 5] = crate::catalog::SIDE_TABLES;

/// The columns a table gained after `load_id` was appended to every side
/// table: written after it, so columns stay only ever appended.
pub const AFTER_LOAD_ID: [(&str, &[&str]); 2] =
    [("llm_calls", &["call_id"]), ("sessions", &["title"])];

/// The rows of side table `t` as every output writes them (`--tables`,
/// `--db`, `--dataset`): in full order, with the run's `load_id` appended,
/// so a reader can tell one load's tables from another's (then the columns
/// added since, [`AFTER_LOAD_ID`]).
pub fn side_table_rows(t: &str, load_id: &str) -> String {
    let load_id = crate::steps::sql_text(load_id);
    match AFTER_LOAD_ID.iter().find(|(table, _)| *table == t) {
        Some((_, later)) => {
            let later = later.join(", ");
            format!(
                "SELECT * EXCLUDE ({later}), {load_id} AS load_id, {later} FROM {t} ORDER BY ALL"
            )
        }
        None => format!("SELECT *, {load_id} AS load_id FROM {t} ORDER BY ALL"),
    }
}

/// The least memory limit the write is given (see [`Engine::for_writing`]);
/// a `--memory-limit` is at least twice it, so only the tests' hook for a
/// smaller limit meets it.
pub const WRITE_FLOOR: u64 = 32 << 20;

/// What the engine counted for the summary.
#[derive(Debug, Clone, Default)]
pub struct Counts {
    /// Rows in the outputs per source kind (nanobot's `llm_calls` rows as
    /// their store's: `nanobot.llm_usage`, a subagent task's usage as
    /// `nanobot.subagent_records`).
    pub rows_out: Vec<(String, u64)>,
    /// Rows dropped as duplicates per source kind.
    pub duplicates: Vec<(String, u64)>,
    /// Rows dropped as duplicates per reason.
    pub drop_reasons: Vec<(String, u64)>,
    pub events: u64,
    /// What the load holds in all (`--summary-json` `totals`).
    pub totals: Totals,
}

/// The totals of a load: sessions, both agents' calls, the first and last
/// event (`YYYY-MM-DDTHH:MM:SS.ffffffZ`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    pub sessions: u64,
    pub calls: CallSums,
    pub first_event_utc: Option<String>,
    pub last_event_utc: Option<String>,
}

pub struct Engine {
    conn: Connection,
    /// DuckDB's `memory_limit` in bytes, as opened.
    memory_limit: u64,
    /// DuckDB's `threads`, as opened (the steps of a small stage take one,
    /// [`StepThreads`]).
    threads: usize,
    /// The bytes of the staged events files ([`Engine::load`]): with their
    /// rows, how the steps keep the events chain ([`crate::steps::Chain`]).
    staged_bytes: std::cell::Cell<u64>,
    /// The stage's blob files by number ([`Engine::load`]): where the text
    /// of a row no step reads is, for the session titles
    /// ([`Engine::title_from_blobs`]).
    blobs: std::cell::RefCell<std::collections::BTreeMap<i32, PathBuf>>,
}

impl Engine {
    /// An in-memory database spilling to `spill` within `memory_limit` bytes.
    pub fn open(spill: &Path, threads: usize, memory_limit: u64) -> Result<Engine, EngineError> {
        let conn = open_in_memory(&Settings {
            memory_limit,
            spill: Some(spill),
            threads: Some(threads),
        })?;
        // DuckDB's errors as JSON while the engine loads and runs the steps:
        // they are classified by their type ([`EngineError`])
        conn.execute_batch("SET errors_as_json = true;")?;
        Ok(Engine {
            conn,
            memory_limit,
            threads,
            staged_bytes: std::cell::Cell::new(0),
            blobs: std::cell::RefCell::default(),
        })
    }

    /// Lower the memory limit for the write (half, at most 128 MiB less):
    /// the writer reads the plan once, in order, and DuckDB keeps each block
    /// it reads until its limit, while the writer's own buffers come on
    /// top: at the full limit the write, not the steps, sets a large
    /// home's peak RSS (BENCHMARKS.md "The SQL dataflow").
    /// Never below
    /// [`WRITE_FLOOR`] (or the whole limit, when that is less): the write
    /// is not retried at a higher limit as the steps are, and DuckDB 2.0.1
    /// cannot write even the smallest home in 16 MiB.
    pub fn for_writing(&self) -> Result<(), EngineError> {
        let limit = (self.memory_limit / 2)
            .max(self.memory_limit.saturating_sub(128 << 20))
            .max(self.memory_limit.min(WRITE_FLOOR));
        self.conn.execute_batch(&format!(
            "SET memory_limit = '{}MiB';",
            limit.div_ceil(1 << 20)
        ))?;
        Ok(())
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The inputs of the first step.
    pub fn load(
        &self,
        staged: &Staged,
        offset: Option<i32>,
        load_id: &str,
        prices: &PriceTable,
    ) -> Result<(), EngineError> {
        load_prices(&self.conn, prices)?;
        let offset = offset
            .map(|o| o.to_string())
            .unwrap_or_else(|| "NULL".into());
        // The largest staged file first: DuckDB estimates a multi-file scan's
        // rows as the first file's times the number of files, and with the
        // empty file first it took `stage_events` for empty and built its hash
        // joins on the staged side (V001 and V002 then run out of memory at
        // the default limit on a large home, and so does a step reading
        // through the raw_events view; BENCHMARKS.md "The SQL dataflow").
        // The order of the rows is free (x_row is their identity).
        let mut events: Vec<(u64, PathBuf)> = staged
            .events
            .iter()
            .map(|p| (std::fs::metadata(p).map_or(0, |m| m.len()), p.clone()))
            .collect();
        events.sort_by_key(|(bytes, p)| (std::cmp::Reverse(*bytes), p.clone()));
        self.staged_bytes.set(events.iter().map(|(b, _)| b).sum());
        self.blobs.replace(staged.blobs.clone());
        let events: Vec<PathBuf> = events.into_iter().map(|(_, p)| p).collect();
        self.conn.execute_batch(&format!(
            "CREATE TABLE params AS SELECT CAST({offset} AS INTEGER) AS given_offset_minutes, '{load_id}' AS load_id;
             CREATE VIEW stage_events AS SELECT * FROM read_parquet({});
             CREATE VIEW stage_llm_calls AS SELECT * FROM read_parquet({});
             CREATE TABLE diagnostics AS SELECT * FROM read_parquet({});
             CREATE TABLE sources AS SELECT * FROM read_parquet({});",
            sql_list(&events),
            sql_list(&staged.llm_calls),
            sql_str(&staged.diagnostics),
            sql_str(&staged.sources),
        ))?;
        Ok(())
    }

    /// Every SQL step, in order; `starting(index, count, name)` is called
    /// before each (`kinds`, then `V001__…` without `.sql`) and returns
    /// whether it made tables or views itself ([`crate::steps::run_all`]). The events
    /// chain is kept as the staged rows and bytes say
    /// ([`Chain::for_stage`]; `NANOLOAD_TEST_SQL_CHAIN=views|tables` forces
    /// one, for the tests that compare the two), V016 joins its plan as
    /// the staged rows and the memory limit say ([`PlanJoin::for_stage`];
    /// `NANOLOAD_TEST_PLAN_JOIN=hash|sort` forces one), and the steps run
    /// on one thread or on all as the staged rows say
    /// ([`StepThreads::for_stage`]; `NANOLOAD_TEST_STEP_THREADS=one|all`
    /// forces one; any other value of the three is an error); what runs
    /// after them has all the threads again. The timings say which of each
    /// ran ([`Timings::sql_plan`]).
    pub fn run_steps(
        &self,
        mut starting: impl FnMut(usize, usize, &str) -> bool,
    ) -> Result<Timings, EngineError> {
        let count = crate::steps::STEPS.len() + 1;
        let mut tell = |i: usize, file: &str| starting(i, count, file.trim_end_matches(".sql"));
        // from the Parquet footers: no row is read
        let rows: i64 = self
            .conn
            .query_row("SELECT count(*) FROM stage_events", [], |r| r.get(0))?;
        let rows = rows.max(0) as u64;
        let chain = forced("NANOLOAD_TEST_SQL_CHAIN", Chain::parse, "views, tables")?
            .unwrap_or_else(|| Chain::for_stage(rows, self.staged_bytes.get()));
        let plan = forced("NANOLOAD_TEST_PLAN_JOIN", PlanJoin::parse, "hash, sort")?
            .unwrap_or_else(|| PlanJoin::for_stage(rows, self.memory_limit));
        let threads = forced("NANOLOAD_TEST_STEP_THREADS", StepThreads::parse, "one, all")?
            .unwrap_or_else(|| StepThreads::for_stage(rows));
        let times = threads.around(&self.conn, self.threads, || {
            crate::steps::run_all(&self.conn, (chain, plan), &mut tell).map_err(EngineError::from)
        })?;
        self.title_from_blobs()?;
        // what reads the engine after the steps (the sink, the summary)
        // shows DuckDB's errors as DuckDB words them
        self.conn.execute_batch("SET errors_as_json = false")?;
        Ok(Timings {
            phases: times
                .into_iter()
                .map(|p| Phase {
                    name: format!("sql {}", p.name.trim_end_matches(".sql")),
                    ..p
                })
                .collect(),
            sql_plan: Some(SqlPlan {
                chain: chain.as_str(),
                join: plan.as_str(),
                step_threads: threads.as_str(),
            }),
            ..Timings::default()
        })
    }

    /// Title the sessions V023 left without one whose first user message
    /// is in a blob file of the stage (nanobot rows: no step reads their
    /// text): the first [`TITLE_TEXT_BYTES`] of that text (cut back to a
    /// character boundary) through V023's `session_title`, told whether the
    /// text goes on past them. The text is as the stage wrote it: redacted.
    fn title_from_blobs(&self) -> Result<(), EngineError> {
        use std::os::unix::fs::FileExt;
        let wanted: Vec<(String, i32, i64, i64)> = {
            let mut s = self.conn.prepare(
                "SELECT f.session_uid, f.x_blob, f.x_off, f.x_text_len
                 FROM session_first_user f JOIN sessions s USING (session_uid)
                 WHERE s.title IS NULL AND f.text IS NULL AND f.x_blob IS NOT NULL
                   AND f.x_text_len > 0
                 ORDER BY f.x_blob, f.x_off",
            )?;
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<duckdb::Result<_>>()?
        };
        if wanted.is_empty() {
            return Ok(());
        }
        let blobs = self.blobs.borrow();
        let mut files: std::collections::BTreeMap<i32, std::fs::File> = Default::default();
        self.conn.execute_batch(
            "CREATE OR REPLACE TEMP TABLE session_title_texts (session_uid VARCHAR, text VARCHAR, more BOOLEAN);",
        )?;
        {
            let mut app = self.conn.appender("session_title_texts")?;
            for (uid, blob, off, len) in wanted {
                let path = blobs.get(&blob).ok_or_else(|| {
                    EngineError::Invalid(format!(
                        "session {uid}: its first user message is in blob {blob}, which the stage did not write"
                    ))
                })?;
                let file = match files.entry(blob) {
                    std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                    std::collections::btree_map::Entry::Vacant(e) => e.insert(
                        std::fs::File::open(path).map_err(|source| EngineError::Blob {
                            path: path.clone(),
                            source,
                        })?,
                    ),
                };
                let want = usize::try_from(len).unwrap_or(0).min(TITLE_TEXT_BYTES);
                let mut buf = vec![0u8; want];
                file.read_exact_at(&mut buf, u64::try_from(off).unwrap_or(0))
                    .map_err(|source| EngineError::Blob {
                        path: path.clone(),
                        source,
                    })?;
                // the cut may fall inside a character: up to the last whole one
                let text = match std::str::from_utf8(&buf) {
                    Ok(t) => t,
                    Err(e) => std::str::from_utf8(&buf[..e.valid_up_to()]).unwrap_or_default(),
                };
                let more = i64::try_from(want).unwrap_or(i64::MAX) < len;
                app.append_row(duckdb::params![uid, text, more])?;
            }
            app.flush()?;
        }
        self.conn.execute_batch(
            "UPDATE sessions SET title = session_title(t.text, t.more)
             FROM session_title_texts t
             WHERE sessions.session_uid = t.session_uid AND session_title(t.text, t.more) IS NOT NULL;
             DROP TABLE session_title_texts;",
        )?;
        Ok(())
    }

    /// The `diagnostics` table (the steps may have declared further losses),
    /// sorted.
    pub fn diagnostics(&self) -> Result<Vec<Diagnostic>, EngineError> {
        Ok(read_diagnostics(&self.conn, "diagnostics")?)
    }

    /// Rows out and dropped, per kind and per reason.
    pub fn counts(&self) -> Result<Counts, EngineError> {
        Ok(Counts {
            // nanobot's llm_calls rows count for the store they came from
            // (nanoclaw's are counted as the transcript rows they are)
            rows_out: self.pairs(
                "SELECT kind, CAST(sum(n) AS BIGINT) FROM (
                     SELECT source_kind AS kind, count(*) AS n FROM events GROUP BY 1
                     UNION ALL
                     SELECT s.source_kind, count(*) FROM llm_calls l
                     JOIN sources s ON s.source_path = l.source_path
                     WHERE l.agent = 'nanobot' GROUP BY 1)
                 GROUP BY 1",
            )?,
            duplicates: self.pairs("SELECT source_kind, count(*) FROM dropped_rows GROUP BY 1")?,
            drop_reasons: self
                .pairs("SELECT reason, count(*) FROM dropped_rows GROUP BY 1 ORDER BY 1")?,
            events: self
                .pairs("SELECT 'events', count(*) FROM events")?
                .first()
                .map(|(_, n)| *n)
                .unwrap_or(0),
            totals: self.totals()?,
        })
    }

    fn totals(&self) -> Result<Totals, EngineError> {
        let utc = |f: &str| {
            format!(
                "(SELECT strftime(CAST({f}(timestamp_utc) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%fZ')
                  FROM events WHERE {ACTIVITY})"
            )
        };
        let q = format!(
            "SELECT (SELECT count(*) FROM sessions), {}, {}, {} FROM llm_calls",
            utc("min"),
            utc("max"),
            CallSums::SQL
        );
        Ok(self.conn.query_row(&q, [], |r| {
            Ok(Totals {
                sessions: r.get::<_, i64>(0)? as u64,
                first_event_utc: r.get(1)?,
                last_event_utc: r.get(2)?,
                calls: CallSums::read(r, 3)?,
            })
        })?)
    }

    fn pairs(&self, q: &str) -> Result<Vec<(String, u64)>, EngineError> {
        let mut stmt = self.conn.prepare(q)?;
        let rows = stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }
}

/// The value of the test variable `var` (a mode of the SQL steps the tests
/// force): `None` when it is not set; a value `parse` does not know is an
/// error naming the variable and the `known` values, never a silent fall
/// back to the mode the stage would get.
fn forced<T>(
    var: &str,
    parse: fn(&str) -> Option<T>,
    known: &str,
) -> Result<Option<T>, EngineError> {
    let Some(value) = std::env::var_os(var) else {
        return Ok(None);
    };
    value.to_str().and_then(parse).map(Some).ok_or_else(|| {
        EngineError::Invalid(format!(
            "{var}={:?} is not one of {known} (a variable of the tests)",
            value.to_string_lossy()
        ))
    })
}

/// Paths as a SQL list of string literals.
pub fn sql_list(paths: &[PathBuf]) -> String {
    format!(
        "[{}]",
        paths
            .iter()
            .map(|p| sql_str(p))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// The rows of a table of diagnostics' columns (`diagnostics`, the
/// ledger's `ledger_diagnostics`), sorted.
pub fn read_diagnostics(conn: &Connection, table: &str) -> duckdb::Result<Vec<Diagnostic>> {
    let mut stmt = conn.prepare(&format!("SELECT kind, agent, instance, source_path, source_line, message, session_id, code FROM {table}"))?;

    let rows = stmt.query_map([], |r| {
        let kind: String = r.get(0)?;
        let agent: Option<String> = r.get(1)?;
        Ok(Diagnostic {
            kind: DiagKind::parse(&kind).unwrap_or(DiagKind::Warning),
            agent: agent.as_deref().and_then(|a| match a {
                "nanobot" => Some(Agent::Nanobot),
                "nanoclaw" => Some(Agent::Nanoclaw),
                _ => None,
            }),
            instance: r.get(2)?,
            source_path: r.get(3)?,
            source_line: r.get(4)?,
            message: r.get(5)?,
            session_id: r.get(6)?,
            code: r
                .get::<_, Option<String>>(7)?
                .and_then(|c| crate::diag::DiagCode::parse(&c)),
        })
    })?;
    let mut v = rows.collect::<duckdb::Result<Vec<_>>>()?;
    v.sort();
    Ok(v)
}
