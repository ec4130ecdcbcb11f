//! `nanoload sql SOURCE QUERY`: the rows on stdout (a table, or JSON); an
//! error on stderr, or as JSON on stdout with `--json`/`--jsonl`. The query
//! runs on a thread of its own; at `--timeout` the error is given and the
//! process ends, whatever DuckDB is still computing.

use std::path::PathBuf;

use super::{CommandError, Keeping};
use crate::config::Pricing;
use crate::source::{LedgerAs, Limits, QueryError, Reader, Source, render, within};
use crate::summary::ExitCode;

const SQL_EXAMPLES: &str = "Examples:
  nanoload sql out.parquet --tables tables \"SELECT model, sum(cost_usd) FROM llm_calls GROUP BY ALL\"
  nanoload sql out.parquet \"SELECT turn_type, count(*) FROM events GROUP BY ALL ORDER BY 2 DESC\"
  nanoload sql history.duckdb \"FROM loads\" --json
  nanoload sql tables \"SHOW TABLES\"";

/// Run one read-only SQL query (DuckDB's dialect) over a load's outputs or
/// a ledger, and print the rows.
///
/// SOURCE is a HOME (answered from the ledger nanoload keeps for it: the
/// views of a load's outputs, every row ever seen), the events file of a
/// load (OUT.parquet: the view `events`; with --tables DIR, each
/// DIR/<table>.parquet as a view of that name), a --tables directory, a
/// --db file, or a ledger (`nanoload sync`); the database files are
/// opened read-only.
///
/// Only reading runs: one SELECT statement (FROM-first, WITH, VALUES,
/// DESCRIBE, SHOW and SUMMARIZE too). Anything else — INSERT, CREATE, COPY,
/// ATTACH, INSTALL, LOAD, SET, PRAGMA, several statements — is refused
/// before it runs; no file outside SOURCE can be read, and no extension
/// installed or loaded.
///
/// With --prices, --price or --free, llm_calls.cost_usd and
/// sessions.cost_usd are priced again from each call's tokens by the
/// load's rules (a line on stderr says so); a ledger holds no costs, and
/// refuses them.
///
/// Exit codes: 0 rows shown (perhaps none); 2 nothing shown (SOURCE not
/// readable, the statement refused, failed or stopped at --timeout).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = SQL_EXAMPLES)]
pub struct SqlArgs {
    /// A HOME, OUT.parquet, a --tables DIR, a --db FILE.duckdb or a
    /// LEDGER.duckdb.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The query.
    #[arg(value_name = "QUERY")]
    pub query: String,

    /// The side tables of the load that wrote OUT.parquet, one view each.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Print one JSON document: columns (name, type), rows (arrays of
    /// values), row_count, truncated; an error as {"error": {kind, message}}.
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,

    /// Print one JSON object per row (column name → value); an error as
    /// one {"error": …} line.
    #[arg(long)]
    pub jsonl: bool,

    /// Show at most N rows (0: all); when there are more, a line says so.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_rows: usize,

    /// Stop the query after SECS seconds (0: never): the error comes at
    /// the deadline, even while DuckDB is inside one long expression.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,

    /// DuckDB memory limit for the query (e.g. 256MiB, 1GB); what does not
    /// fit spills to a private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, llm_calls and sessions are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

pub fn run(a: SqlArgs) -> Result<ExitCode, CommandError> {
    let json = a.json || a.jsonl;
    // the spill directory is this thread's, removed even when the query's
    // thread is still running at the deadline
    let spill = (tempfile::Builder::new().prefix("nanoload-sql-").tempdir())
        .map_err(|e| CommandError::Spill(std::env::temp_dir(), e))?;
    let priced = a.pricing.at_read()?;
    let reader = Reader {
        memory_limit: a.memory_limit,
        spill: Some(spill.path().to_path_buf()),
        prices: priced.as_ref().map(|p| p.table.clone()),
    };
    let home = match crate::source::outputs(
        &a.source,
        a.tables.as_deref(),
        !a.keeping.no_keep,
        LedgerAs::Tables,
    ) {
        Ok(h) => h,
        Err(e) if json => {
            let j = serde_json::json!({"error": {"kind": "input", "message": e.to_string()}});
            println!("{j}");
            return Err(CommandError::Answered);
        }
        Err(e) => return Err(CommandError::SqlSource(e)),
    };
    for line in &home.lines {
        eprintln!("{line}");
    }
    let (source, tables) = (home.path.clone(), home.tables.clone());
    let query = a.query.clone();
    let limits = Limits {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
    };
    let answer = within(a.timeout, move || {
        Source::open_with(&source, tables.as_deref(), &reader)?.query(&query, limits)
    })
    .and_then(|r: Result<_, QueryError>| r);
    drop(spill);
    if let (Some(p), Ok(_)) = (&priced, &answer) {
        eprintln!("nanoload: cost_usd {}", p.said);
    }
    drop(home);
    let text = match answer {
        Err(e) if json => {
            super::print(&format!("{}\n", e.to_json())).map_err(CommandError::Stdout)?;
            return Err(CommandError::Answered);
        }
        Err(e) => return Err(e.into()),
        Ok(ans) if a.json => format!("{}\n", ans.to_json()),
        Ok(ans) if a.jsonl => ans.objects().map(|o| format!("{o}\n")).collect(),
        Ok(ans) => render(&ans, super::terminal_width()),
    };
    super::print(&text).map_err(CommandError::Stdout)?;
    Ok(ExitCode::Ok)
}
