//! The commands: one module each (`load` is `nanoload HOME OUT.parquet`),
//! each a `run(args) -> Result<ExitCode, CommandError>` over the library.
//! `src/main.rs` parses the arguments, calls one of them, prints a
//! [`CommandError`]'s lines once ([`CommandError::stderr_lines`]) and exits
//! with its code ([`CommandError::exit_code`]).
//!
//! Each module holds its command's arguments (the clap struct, whose doc
//! comments are its `--help`) beside its `run`; `src/cli.rs` holds the
//! load's and the list of commands.
//!
//! - `mod.rs`: [`CommandError`] and what several commands share (a reader's
//!   SOURCE as its outputs, `--no-keep`, stdout, the terminal's width).
//! - `load.rs`, `sync.rs`, `export.rs`, `prune.rs`: the load and the ledger.
//! - `report.rs`, `usage.rs`, `sql.rs`, `mcp.rs`, `mcp_call.rs`, `otlp.rs`:
//!   the readers.
//! - `prices.rs`, `cache.rs`: the price table and the kept ledgers.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::summary::ExitCode;

pub mod cache;
pub mod export;
pub mod load;
pub mod mcp;
pub mod mcp_call;
pub mod otlp;
pub mod prices;
pub mod prune;
pub mod report;
pub mod sql;
pub mod sync;
pub mod usage;

/// Why a command ended without doing its work. Each variant's text is its
/// stderr line after `nanoload: `; its exit code is decided by the variant
/// (and, where a library error wraps, by that error's variant).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The load failed (`nanoload HOME OUT.parquet`).
    #[error("error: {0}")]
    Load(#[from] crate::run::RunError),
    /// A reader's SOURCE could not be served or exported.
    #[error("error: {0}")]
    Source(#[from] crate::source::SourceError),
    /// `sql`'s SOURCE could not be served: named without `error:`, as `sql`
    /// says what SOURCE is not.
    #[error("{0}")]
    SqlSource(#[source] crate::source::SourceError),
    /// Flags that make no price table (`--prices`, `--price`, `--free`).
    #[error("error: {0}")]
    Pricing(#[from] crate::config::ConfigError),
    /// `sync`, `export` or `prune` failed on the ledger.
    #[error("error: {0}")]
    Ledger(#[from] crate::ledger::SyncError),
    /// `report` could not read SOURCE or write the page.
    #[error("error: {0}")]
    Report(#[from] crate::report::ReportError),
    /// `usage` could not read SOURCE's calls.
    #[error("error: {0}")]
    Usage(#[from] crate::usage::UsageError),
    /// `usage --breakdown --by model`.
    #[error(
        "error: --breakdown splits each day, week, month or session by model; --by model has one row per model already"
    )]
    BreakdownByModel,
    /// `usage TABLES_DIR --tables DIR`.
    #[error("error: {}: is a tables directory; --tables goes with OUT.parquet", .0.display())]
    TablesWithTables(PathBuf),
    /// A query of `sql`, or `mcp`'s first look at SOURCE, failed.
    #[error("{0}")]
    Query(#[from] crate::source::QueryError),
    /// `sql` could not make the directory DuckDB spills to.
    #[error("{}: {}", .0.display(), .1)]
    Spill(PathBuf, #[source] std::io::Error),
    /// `mcp` cannot name its own executable, which runs each tool call.
    #[error("mcp: cannot find this program to run tool calls with: {0}")]
    McpProgram(#[source] std::io::Error),
    /// `mcp` could not read its client or answer it.
    #[error("mcp: {0}")]
    McpServe(#[source] std::io::Error),
    /// `otlp --endpoint` is not a URL it sends to.
    #[error("--endpoint: {0}")]
    Endpoint(#[source] crate::otlp::EndpointError),
    /// `otlp --header` is not NAME=VALUE; the argument may hold a credential,
    /// so none of it is shown.
    #[error("--header: expected NAME=VALUE (a name without ':', no line breaks)")]
    Header,
    #[error("{0}")]
    Otlp(#[from] crate::otlp::OtlpError),
    /// `otlp`'s TRACES.jsonl could not be written.
    #[error("error: cannot write {}: {}", .0.display(), .1)]
    Traces(PathBuf, #[source] std::io::Error),
    /// A POST to `otlp --endpoint` failed; `written`: TRACES.jsonl was
    /// written first.
    #[error("error: sending to {url} failed: {source}")]
    Send {
        url: String,
        source: crate::otlp::SendError,
        written: bool,
    },
    /// `cache`: neither XDG_CACHE_HOME nor HOME is an absolute path.
    #[error("error: no cache directory: XDG_CACHE_HOME and HOME are not set to absolute paths")]
    NoCacheDir,
    /// `cache list` could not read the cache directory.
    #[error("error: {}: {}", .0.display(), .1)]
    CacheList(PathBuf, #[source] std::io::Error),
    /// `cache clear` failed.
    #[error("error: {0}")]
    Keep(#[from] crate::keep::KeepError),
    /// The error was the answer, on stdout (`sql --json`).
    #[error("the error is answered on stdout")]
    Answered,
    /// stdout could not take the answer (a closed pipe).
    #[error("stdout: {0}")]
    Stdout(#[source] std::io::Error),
    /// `mcp-call`'s request is not one JSON call; the server that starts it
    /// reads only its stdout.
    #[error("the tool call's request: {0}")]
    CallRequest(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// `mcp-call`'s pricing flags make no table (the server checked them
    /// before it started).
    #[error("the tool call's pricing: {0}")]
    CallPricing(#[source] crate::config::ConfigError),
    /// No command and no HOME (clap asks for HOME first).
    #[error("no HOME given")]
    NoHome,
}

impl CommandError {
    /// The process's exit code.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CommandError::Load(e) => e.exit_code(),
            CommandError::Source(e) | CommandError::SqlSource(e) => e.exit_code(),
            CommandError::Ledger(e) => e.exit_code(),
            CommandError::Send { written: true, .. } => ExitCode::Partial,
            _ => ExitCode::Failed,
        }
    }

    /// The lines stderr shows: the error's own, then a failed load's detail
    /// (each output new or old); none where the answer went to stdout or no
    /// one reads stderr.
    pub fn stderr_lines(&self) -> Vec<String> {
        match self {
            CommandError::Answered
            | CommandError::Stdout(_)
            | CommandError::CallRequest(_)
            | CommandError::CallPricing(_)
            | CommandError::NoHome => Vec::new(),
            CommandError::Load(e) => std::iter::once(format!("nanoload: {self}"))
                .chain(e.detail_lines().iter().map(|l| format!("nanoload: {l}")))
                .collect(),
            _ => vec![format!("nanoload: {self}")],
        }
    }
}

/// Whether a reader given a HOME keeps its ledger (`nanoload cache`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Keeping {
    /// With a HOME: answer from a private temp load, removed after, and
    /// keep nothing. Without it a HOME is answered from the ledger nanoload
    /// keeps for it in the user's cache directory ($XDG_CACHE_HOME/nanoload,
    /// else ~/.cache/nanoload; `nanoload cache --help`).
    #[arg(long)]
    pub no_keep: bool,
}

/// SOURCE of a reader as the outputs it reads
/// ([`crate::source::outputs`]: a HOME served, its stderr lines printed,
/// priced with the built-in table, so pricing flags price its calls again
/// at read as any output's; a ledger as `ledger` says; anything else as
/// given).
fn outputs(
    source: &Path,
    tables: Option<&Path>,
    keeping: &Keeping,
    ledger: crate::source::LedgerAs,
) -> Result<crate::source::Outputs, crate::source::SourceError> {
    let o = crate::source::outputs(source, tables, !keeping.no_keep, ledger)?;
    for line in &o.lines {
        eprintln!("{line}");
    }
    Ok(o)
}

/// `text` on stdout, flushed.
fn print(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes()).and_then(|_| out.flush())
}

/// The width a table must fit: the terminal's when stdout is one, else
/// `COLUMNS` when set, else none (a pipe takes every column).
fn terminal_width() -> Option<usize> {
    let term = console::Term::stdout();
    if term.is_term() {
        let (_, cols) = term.size();
        return Some(usize::from(cols));
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|c| *c > 0)
}
