//! `nanoload report SOURCE report.html`: one
//! self-contained HTML page over a run's output — inline CSS and inline SVG,
//! no script, no font, image or style sheet fetched — read back with the
//! embedded DuckDB.
//!
//! ```text
//! reads   OUT.parquet (events) always; with --tables DIR every DIR/<table>.parquet
//!         (sessions, llm_calls, tz_offsets, diagnostics, sources), all five; or a --db
//!         file's events and five tables (read-only, crate::source); a HOME's or a
//!         ledger's outputs as crate::source::outputs gives them
//! writes  report.html, to a temp name beside it, renamed when complete
//! ```
//!
//! Sections, each chart a `<figure data-chart=ID data-series=COLUMNS>` drawn
//! by plotters (its SVG backend; no font files, the browser sets the text)
//! twice, for a desktop and for a phone (the page shows one by its width),
//! with a `<table data-chart-table=ID>` beside it holding exactly the numbers
//! drawn (`data-series` names the columns drawn as bars, one bar segment per
//! non-zero value; a chart without it draws one bar per row):
//!
//! 0. **at a glance** (llm_calls, sessions; cards, no chart): total cost,
//!    total tokens, sessions, active local days, cost per active day, the
//!    peak day, cache-hit rate, unpriced calls.
//! 1. **activity** (events): events per local day (`timestamp_local`),
//!    stacked by `turn_type`; events per local hour 0–23.
//! 2. **sessions** (events): the 50 sessions whose last local time is the
//!    latest, each a bar from its first to its last local time; the axis
//!    says whether those times are local, UTC (no offset known) or both.
//! 3. **tokens and cost** (llm_calls, both agents): tokens and cost per
//!    local day (`started_at_local`, the UTC day where no offset is known)
//!    and per provider and model (30 largest); a cost no price table row
//!    gives is `unknown`, never 0; nanoclaw's share noted below; the 10
//!    costliest sessions (when, how long, models, tool calls, calls, cost).
//! 4. **tool mix** (events): `tool_use` rows per `tool_name` (40 most used).
//! 5. **duplicates and recovered rows**: per source kind, rows read
//!    (`sources.rows`), rows out (`events`, nanobot's `llm_calls` for the
//!    store they came from), nanoclaw `delivered` rows folded into their
//!    outbound row (`native.delivered`), and the rest: rows dropped as
//!    duplicates (equal to the run's summary); rows kept from secondary
//!    copies (`source_role = 'secondary'`: no primary store holds them).
//! 6. **time offsets**: each instance's `tz_offsets` ranges (offset, pairs
//!    of evidence, agreement); rows per instance and `time_basis` (events).
//! 7. **diagnostics**: rows per kind and code; the first 200, sorted.
//!
//! Without `--tables` the sections that need a side table say so. With
//! `--prices`, `--price` or `--free` the calls are priced again at read
//! (`crate::source::reprice`) before any section reads them, and the facts
//! say so (`prices`). Same
//! input, same bytes: every query is fully ordered, costs are summed as
//! exact decimals, and the page holds no time of its own.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::atomic::Pending;
use crate::readout::sql_str;
use crate::source::TABLES;

mod chart;
mod page;
mod query;
mod sections;
#[cfg(test)]
mod tests;

pub use page::esc;
use page::{Page, STYLE};

/// Sessions drawn on the timeline, tools and models in their charts,
/// diagnostics listed.
pub const MAX_SESSIONS: usize = 50;
pub const MAX_TOOLS: usize = 40;
pub const MAX_MODELS: usize = 30;
pub const MAX_DIAGNOSTICS: usize = 200;
/// Sessions in the list of the costliest.
pub const MAX_TOP_SESSIONS: usize = 10;

/// Why no report was written (the exit code is then 2).
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input that does not read: a missing file, not an events table, a
    /// missing --tables file.
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// The page could not be written.
    #[error("{}: {message}", path.display())]
    Write { path: PathBuf, message: String },
    /// A query of the report failed.
    #[error("report query failed: {0}")]
    Query(String),
    /// A chart could not be drawn.
    #[error("chart {0}: {1}")]
    Chart(&'static str, String),
}

impl From<duckdb::Error> for ReportError {
    fn from(e: duckdb::Error) -> ReportError {
        ReportError::Query(crate::diag::one_line(&e.to_string()))
    }
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub charts: usize,
    pub bytes: usize,
}

/// The columns of `events` the report reads.
const EVENT_COLUMNS: &str = "agent, instance, session_id, session_uid, timestamp_utc, \
     timestamp_local, time_basis, turn_type, tool_name, tool_use_id, text, source_kind, \
     source_role, native, load_id";

/// Write the report of `out` (and the `--tables` directory `tables`) to
/// `html`: to a temp name beside it, renamed when complete.
pub fn report(out: &Path, tables: Option<&Path>, html: &Path) -> Result<Written, ReportError> {
    report_priced(out, tables, html, None)
}

/// [`report`] with the output's calls priced again at read when `at_read`
/// is given (`--prices`, `--price`, `--free`; the side tables are then
/// needed): the page says so beside the facts.
pub fn report_priced(
    out: &Path,
    tables: Option<&Path>,
    html: &Path,
    at_read: Option<&crate::config::Repricing>,
) -> Result<Written, ReportError> {
    let pending = Pending::new(html, crate::dest::Output::Report);
    if crate::source::is_database(out) {
        let src = database(out, tables, html, at_read)?;
        let read = Read {
            conn: src.conn(),
            tables: true,
        };
        return write_page(&pending, &read, out, at_read);
    }
    let conn = open(out, tables, html)?;
    if let Some(r) = at_read {
        let Some(dir) = tables else {
            return Err(ReportError::Input {
                path: out.to_path_buf(),
                message: "--prices, --price and --free price the calls of llm_calls again: give the load's side tables (--tables DIR)".into(),
            });
        };
        crate::source::reprice(&conn, &r.table).map_err(|e| ReportError::Input {
            path: dir.to_path_buf(),
            message: format!(
                "its calls cannot be priced again: {}",
                crate::diag::one_line(&e.to_string())
            ),
        })?;
    }
    write_page(
        &pending,
        &Read {
            conn: &conn,
            tables: tables.is_some(),
        },
        out,
        at_read,
    )
}

/// What the page is built from: the connection, and whether it has the
/// side tables.
struct Read<'a> {
    conn: &'a Connection,
    tables: bool,
}

/// Build the page of `read` and write it to `pending`.
fn write_page(
    pending: &Pending,
    read: &Read,
    out: &Path,
    at_read: Option<&crate::config::Repricing>,
) -> Result<Written, ReportError> {
    let write_err = |e: std::io::Error| ReportError::Write {
        path: pending.dest.clone(),
        message: e.to_string(),
    };
    // a page replaces only an earlier page (never a ledger, any file
    // nanoload did not write), checked before the page is built
    pending.check_dest().map_err(write_err)?;
    let (page, charts) = build(
        read.conn,
        read.tables,
        out,
        at_read.map(|r| r.said.as_str()),
    )?;
    pending.clean_stale();
    if let Err(e) = std::fs::write(&pending.tmp, page.as_bytes()) {
        pending.discard();
        return Err(write_err(e));
    }
    pending
        .check_dest()
        .and_then(|()| pending.commit())
        .map_err(|e| {
            pending.discard();
            write_err(e)
        })?;
    Ok(Written {
        charts,
        bytes: page.len(),
    })
}

/// An in-memory DuckDB with `events` and, with `tables`, each side table as
/// a view; every input checked.
fn open(out: &Path, tables: Option<&Path>, html: &Path) -> Result<Connection, ReportError> {
    let input = |path: &Path, message: String| ReportError::Input {
        path: path.to_path_buf(),
        message,
    };
    if out.is_dir() {
        return Err(input(
            out,
            "is a directory; the report reads a load's output: run `nanoload HOME out.parquet \
             --tables tables` first, then `nanoload report out.parquet --tables tables report.html` \
             (or `nanoload usage HOME` for the costs alone)"
                .into(),
        ));
    }
    if !out.is_file() {
        return Err(input(out, "no such file (OUT.parquet of a run)".into()));
    }
    let same = |a: &Path, b: &Path| {
        a == b
            || std::fs::canonicalize(a)
                .is_ok_and(|a| std::fs::canonicalize(b).is_ok_and(|b| a == b))
    };
    if same(out, html) {
        return Err(input(
            html,
            "is the input OUT.parquet; name another file".into(),
        ));
    }
    if html.is_dir() {
        return Err(input(
            html,
            "is a directory; name the HTML file to write".into(),
        ));
    }
    let conn = crate::source::connection()?;
    // each section's query reads OUT's footer once, not again
    conn.execute_batch(&format!(
        "SET parquet_metadata_cache = true;
         CREATE VIEW events AS SELECT * FROM read_parquet({});",
        sql_str(out)
    ))
    .and_then(|_| conn.execute_batch(&format!("SELECT {EVENT_COLUMNS} FROM events LIMIT 0")))
    .map_err(|e| {
        input(
            out,
            format!(
                "not an events table of nanoload: {}",
                crate::diag::one_line(&e.to_string())
            ),
        )
    })?;
    if let Some(dir) = tables {
        if !dir.is_dir() {
            return Err(input(
                dir,
                "no such directory (--tables DIR of a run)".into(),
            ));
        }
        for t in TABLES {
            let file = dir.join(format!("{t}.parquet"));
            if !file.is_file() {
                return Err(input(
                    &file,
                    "no such file (--tables writes all five)".into(),
                ));
            }
            if same(&file, html) {
                return Err(input(html, "is an input table; name another file".into()));
            }
            conn.execute_batch(&format!(
                "CREATE VIEW {t} AS SELECT * FROM read_parquet({});
                 SELECT * FROM {t} LIMIT 0;",
                sql_str(&file)
            ))
            .map_err(|e| input(&file, crate::diag::one_line(&e.to_string())))?;
        }
        one_load(&conn, out, dir)?;
    }
    Ok(conn)
}

/// A `--db` file, opened read-only through [`crate::source::Source`]
/// (its calls priced again with `at_read` when given): it holds `events`
/// and every side table of one load.
fn database(
    db: &Path,
    tables: Option<&Path>,
    html: &Path,
    at_read: Option<&crate::config::Repricing>,
) -> Result<crate::source::Source, ReportError> {
    let input = |path: &Path, message: String| ReportError::Input {
        path: path.to_path_buf(),
        message,
    };
    if tables.is_some() {
        return Err(input(
            db,
            "is a DuckDB database: --tables goes with an events file (OUT.parquet)".into(),
        ));
    }
    if html.is_dir() {
        return Err(input(
            html,
            "is a directory; name the HTML file to write".into(),
        ));
    }
    let reader = crate::source::Reader {
        prices: at_read.map(|r| r.table.clone()),
        ..Default::default()
    };
    let src = crate::source::Source::open_with(db, None, &reader)
        .map_err(|e| input(db, crate::diag::one_line(&e.to_string())))?;
    let names = src
        .table_names()
        .map_err(|e| input(db, crate::diag::one_line(&e.to_string())))?;
    for t in std::iter::once("events").chain(TABLES) {
        if !names.iter().any(|n| n == t) {
            return Err(input(
                db,
                format!(
                    "no {t} table (this {} has: {}); the report reads a load's --db file",
                    src.kind.as_str(),
                    names.join(", ")
                ),
            ));
        }
    }
    src.conn()
        .execute_batch(&format!("SELECT {EVENT_COLUMNS} FROM events LIMIT 0"))
        .map_err(|e| {
            input(
                db,
                format!(
                    "not an events table of nanoload: {}",
                    crate::source::explain(&e).1
                ),
            )
        })?;
    Ok(src)
}

/// Every row of `events` and of the side tables in `dir` names one
/// `load_id` (a table without rows names none): the report never mixes
/// the outputs of two loads.
fn one_load(conn: &Connection, out: &Path, dir: &Path) -> Result<(), ReportError> {
    let ids = |t: &str| -> Result<Vec<String>, ReportError> {
        let mut stmt = conn.prepare(&format!(
            "SELECT DISTINCT load_id::VARCHAR FROM {t} ORDER BY 1"
        ))?;
        let rows = stmt.query_map([], |r| r.get::<_, Option<String>>(0))?;
        // a NULL load_id names no load; a row that does not read fails
        Ok(rows
            .filter_map(Result::transpose)
            .collect::<Result<Vec<_>, _>>()?)
    };
    let input = |path: &Path, message: String| ReportError::Input {
        path: path.to_path_buf(),
        message,
    };
    let events = ids("events")?;
    if events.len() > 1 {
        return Err(input(
            out,
            format!(
                "holds rows of {} loads ({}): the report reads one load's output",
                events.len(),
                events.join(", ")
            ),
        ));
    }
    // the load the tables must match: OUT's, else the first table's
    let mut want: Option<(String, PathBuf)> = events.first().map(|id| (id.clone(), out.into()));
    for t in TABLES {
        let file = dir.join(format!("{t}.parquet"));
        let has: i64 = conn.query_row(
            &format!("SELECT count(*) FROM (DESCRIBE {t}) WHERE column_name = 'load_id'"),
            [],
            |r| r.get(0),
        )?;
        if has == 0 {
            return Err(input(
                &file,
                "has no load_id column, so which load wrote it cannot be told (a nanoload older \
                 than its tables' load_id): load again with --tables"
                    .into(),
            ));
        }
        for id in ids(t)? {
            match &want {
                Some((w, from)) if *w != id => {
                    return Err(input(
                        &file,
                        format!(
                            "rows of load {id}, but {} is of load {w}: the report reads one \
                             load's outputs (give OUT.parquet and the --tables DIR of the same run)",
                            from.display()
                        ),
                    ));
                }
                Some(_) => {}
                None => want = Some((id, file.clone())),
            }
        }
    }
    Ok(())
}

/// The page and its number of charts.
fn build(
    conn: &Connection,
    have_tables: bool,
    out: &Path,
    prices: Option<&str>,
) -> Result<(String, usize), ReportError> {
    let name = out
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut p = Page::default();
    let _ = write!(
        p.html,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>nanoload report: {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        esc(&name)
    );
    sections::prepare(conn)?;
    sections::facts(conn, &mut p, &name, have_tables, prices)?;
    sections::answers(conn, &mut p, have_tables)?;
    sections::cost(conn, &mut p, have_tables)?;
    sections::tools(conn, &mut p)?;
    sections::activity(conn, &mut p)?;
    sections::sessions(conn, &mut p)?;
    p.collapsed(
        "data-quality",
        "Data quality",
        "How the load got these rows: copies dropped and rows recovered, the derived time \
         offsets, and what could not be read (open to see).",
    );
    sections::duplicates(conn, &mut p, have_tables)?;
    sections::offsets(conn, &mut p, have_tables)?;
    sections::diagnostics(conn, &mut p, have_tables)?;
    p.finish();
    Ok((p.html, p.charts))
}
