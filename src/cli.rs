//! Command-line arguments (`nanoload --help`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::Options;
use crate::usage::View;

const EXAMPLES: &str = "Examples:
  nanoload ~ out.parquet --tables tables
      every agent under ~: the events, and the side tables in tables/
  nanoload ~ out.parquet --cache ~/.cache/nanoload
      again, reusing the stores that did not change since the last load
  nanoload report out.parquet --tables tables report.html
      one self-contained HTML page of that load
  nanoload usage ~ --by model
      what the agents' LLM calls cost, per provider and model
  nanoload sync ~ ~/nanoload/history.duckdb
      keep every row ever seen, including what the agents delete later
  nanoload export ~/nanoload/history.duckdb history.parquet --tables history
      the outputs of every row ever seen, deleted ones marked present = false";

/// Load everything the nanobot and nanoclaw agents left under HOME into one
/// Parquet table of events.
///
/// nanobot instances are the `.nanobot*` directories directly under HOME;
/// a nanoclaw install root is any directory under HOME holding `data/v2.db`.
/// Nothing is ever written inside HOME: SQLite stores are read from private
/// copies.
///
/// Exit codes: 0 every store read (declared losses and warnings allowed);
/// 1 output written, but some lines, records or stores could not be read, or
/// a link to agent state out of HOME was not followed (listed on stderr and
/// in the `diagnostics` table); 2 nothing written; 3 outputs partly replaced
/// (a rename failed after the others succeeded: stderr lists each output as
/// new or old); 4 nothing written: no agent state under HOME (the error says
/// where nanoload looked).
///
/// The commands `report` and `usage` read a load's output (or, for `usage`,
/// a HOME loaded on the spot); `sync` keeps every row ever seen in a ledger
/// that outlives the agents' own deletions, `export` writes a load's
/// outputs from it, `prune` removes what is gone from it; `nanoload help
/// COMMAND` explains each. A HOME named like a command (`report`, `usage`,
/// `sync`, `export`, `prune`, `help`) is given as `./report`.
#[derive(Debug, Parser)]
#[command(
    name = "nanoload",
    version,
    about,
    long_about,
    after_long_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    subcommand_value_name = "COMMAND",
    subcommand_help_heading = "Commands"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The load's arguments; none with a command.
    #[command(flatten)]
    pub options: Option<Options>,
}

/// What `nanoload COMMAND …` does instead of a load.
#[derive(Debug, Subcommand)]
pub enum Command {
    // (`--help` shows the long text: the arguments' doc comment)
    #[command(about = "Write one self-contained HTML report of a load's output")]
    Report(ReportArgs),
    #[command(
        about = "Show what the agents' LLM calls cost per day, week, month, session or model"
    )]
    Usage(UsageArgs),
    #[command(
        about = "Keep every row ever seen in a ledger: add what is new, keep what the agents deleted"
    )]
    Sync(SyncArgs),
    #[command(about = "Write a load's outputs from a ledger: every row ever seen, or a snapshot")]
    Export(ExportCli),
    #[command(
        about = "Remove from a ledger what is gone from disk and was last seen before a date"
    )]
    Prune(PruneArgs),
}

/// Remove from a ledger what is gone from disk and was last seen before a date.
///
/// The only way anything leaves a ledger: the rows, calls and stores that
/// are not present (the agent deleted them) and whose last sync
/// (last_seen_load) finished before DATE (UTC) are deleted; present rows
/// and the loads table stay. Under the ledger's lock, in one transaction.
///
/// Exit codes: 0 pruned (perhaps nothing); 2 nothing done (no ledger, a
/// ledger of another format, DATE not a date); 5 a sync holds the ledger.
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct PruneArgs {
    /// The ledger `nanoload sync` keeps.
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// Prune what was last seen by syncs that finished before this day
    /// (YYYY-MM-DD, UTC) or instant (e.g. 2026-12-01T08:00:00Z).
    #[arg(long, value_name = "DATE")]
    pub before: String,
}

/// Write a load's outputs from a ledger: every row ever seen, or a snapshot.
///
/// The ledger's rows (`nanoload sync`) are staged again and run through the
/// same steps as a load, so duplicates, UTC offsets and call attribution
/// are decided over the whole history; OUT.parquet and the --tables files
/// are today's contract. By default every row the ledger holds is written,
/// rows no longer on disk included, with three columns appended to events:
/// first_seen_load and last_seen_load (sync numbers, see the ledger's loads
/// table) and present (on disk at the latest sync). With --snapshot only
/// the rows on disk at the latest sync, without those columns: the bytes a
/// load of HOME then writes.
///
/// Exit codes: 0 written; 2 nothing written (no ledger, a ledger of another
/// format, an output not writable).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct ExportCli {
    /// The ledger `nanoload sync` keeps (opened read-only).
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// The events table to write (Parquet, zstd; a temporary name, then renamed).
    #[arg(value_name = "OUT.parquet")]
    pub out: PathBuf,

    /// Also write the other tables as DIR/<table>.parquet (sessions,
    /// llm_calls, tz_offsets, diagnostics, sources).
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Only the rows on disk at the latest sync, without the ledger's columns.
    #[arg(long)]
    pub snapshot: bool,

    /// Worker threads for DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,
}

/// Keep every row ever seen in a ledger: add what is new, keep what the
/// agents deleted.
///
/// Extracts HOME as a load does and merges its rows (as staged, before
/// dedup, text and native included, secrets redacted) into LEDGER.duckdb,
/// a DuckDB database file nanoload keeps, in one transaction: a row seen
/// before is the same row (identity: its content and which occurrence of it
/// its store holds, not where it stands), a new row is added, and a row its
/// store no longer holds stays, with present = false. Nothing is ever
/// deleted from the ledger. Tables: loads (one row per sync, numbered),
/// ledger_events, ledger_llm_calls, ledger_sources (on every row
/// first_seen_load and last_seen_load, sync numbers, and present),
/// ledger_meta (the format). Secrets are always redacted: a ledger is kept.
///
/// A killed sync leaves the ledger as it was; a second sync while one
/// writes is refused (LEDGER.duckdb.lock). A ledger of another format is
/// refused, never misread.
///
/// Exit codes: 0 synced; 1 synced, but some lines, records or stores could
/// not be read (their rows keep their state); 2 nothing done; 4 no agent
/// state under HOME; 5 another sync holds the ledger (try again later).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct SyncArgs {
    /// The home directory to read (e.g. a copy of /home/alice).
    #[arg(value_name = "HOME")]
    pub home: PathBuf,

    /// The ledger (created on the first sync; must be outside HOME).
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// Worker threads for extraction and DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB); larger merges spill to the
    /// private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    /// Follow symbolic links to agent state outside HOME.
    #[arg(long)]
    pub follow_links: bool,

    /// Keep WebUI reasoning records as `thinking` rows.
    #[arg(long)]
    pub include_thinking: bool,

    /// Also treat text matching REGEX as a secret (as for a load); repeatable.
    #[arg(long = "secret-pattern", value_name = "REGEX")]
    pub secret_patterns: Vec<String>,

    /// Print only what makes the exit code non-zero.
    #[arg(long, short)]
    pub quiet: bool,

    /// Show progress on stderr (`auto`: only on a terminal; never when a
    /// timer runs it).
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = crate::config::When::Auto)]
    pub progress: crate::config::When,
}

impl SyncArgs {
    /// The load options of this sync: the ledger stands where OUT does (the
    /// same checks: absolute, outside HOME).
    pub fn options(&self) -> Options {
        Options {
            threads: self.threads,
            memory_limit: self.memory_limit,
            follow_links: self.follow_links,
            include_thinking: self.include_thinking,
            secret_patterns: self.secret_patterns.clone(),
            quiet: self.quiet,
            progress: self.progress,
            ..Options::new(&self.home, &self.ledger)
        }
    }
}

/// Write one self-contained HTML report of a load's output.
///
/// It leads with the answers: cards (total cost and tokens, sessions,
/// active days, cost per active day, the peak day, cache-hit rate, unpriced
/// calls), cost per local day stacked by model with a TOTAL, the costliest
/// sessions, tools with their error rate, activity per local day and hour
/// and the sessions as a timeline; then, collapsed, the data's quality:
/// duplicates dropped and rows recovered from secondary copies, the UTC
/// offset evidence per instance, diagnostics.
///
/// Every chart has a table of its numbers beside it. The page is one file:
/// inline CSS and SVG, no script, nothing fetched. Written to a temporary
/// name beside report.html and renamed when complete.
///
/// Exit codes: 0 written; 2 nothing written (OUT.parquet or a --tables file
/// missing or not nanoload's, tables of another load, report.html not
/// writable).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct ReportArgs {
    /// The events table a load wrote (`nanoload HOME OUT.parquet`).
    #[arg(value_name = "OUT.parquet")]
    pub out: PathBuf,

    /// The side tables the same load wrote with `--tables DIR` (all five:
    /// sessions, llm_calls, tz_offsets, diagnostics, sources). Without it the
    /// sections that need them (tokens and cost, duplicates, offset ranges,
    /// diagnostics) say so in the page.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// The HTML file to write (replaced if it exists).
    #[arg(value_name = "report.html")]
    pub html: PathBuf,
}

const USAGE_EXAMPLES: &str = "Examples:
  nanoload usage ~
      load ~ now: calls, tokens and cost per local day
  nanoload usage ~ --by model --since 2026-11-01
  nanoload usage out.parquet --tables tables --by session --json
  nanoload usage ~ --by monthly --timezone Europe/Berlin";

/// Show what both agents' LLM calls used and cost — tokens and USD per
/// local day (default), week, month, session or model, with a TOTAL row —
/// from a load's output or straight from a HOME.
///
/// The calls are `llm_calls`: nanobot's llm_usage rows and nanoclaw's
/// Claude Code responses with counted usage. Days are the host's local days
/// from the UTC offsets the load derived (a call whose instance has none is
/// placed by its UTC time, and a note says how many); `--timezone` places
/// every call in one zone instead. A call without a price is counted as
/// unpriced, never as $0.
///
/// Exit codes: 0 shown; 1 shown, but loading HOME could not read some input
/// (listed on stderr); 2 nothing shown (bad arguments, an output that is
/// not nanoload's, a HOME that did not load).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = USAGE_EXAMPLES)]
pub struct UsageArgs {
    /// A HOME to load now (into a private temp dir, removed after), or the
    /// events table of a load (OUT.parquet, with --tables DIR).
    #[arg(value_name = "HOME|OUT.parquet")]
    pub source: PathBuf,

    /// The side tables of the load that wrote OUT.parquet (`--tables DIR`):
    /// the calls are read from DIR/llm_calls.parquet.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// One row per local day, week (from Monday), month, session, or
    /// provider and model.
    #[arg(long, value_enum, default_value = "daily", value_name = "VIEW")]
    pub by: View,

    /// The first local date shown (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub since: Option<chrono::NaiveDate>,

    /// The last local date shown, inclusive.
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub until: Option<chrono::NaiveDate>,

    /// Place every call in this zone instead of the derived local time:
    /// UTC, an offset (+05:30) or a tz database name (Europe/Berlin).
    #[arg(long, value_name = "ZONE", value_parser = crate::usage::Zone::parse)]
    pub timezone: Option<crate::usage::Zone>,

    /// Print the rows and totals as one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Price the calls with this price table when loading HOME (as
    /// `nanoload --prices`); an output's costs were priced by its load.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,
}
