//! Command-line arguments (`nanoload --help`): the load's, and the list of
//! commands; each command's own arguments are beside it in `src/commands/`.

use clap::{Parser, Subcommand};

use crate::commands::cache::CacheArgs;
use crate::commands::export::ExportCli;
use crate::commands::mcp::McpArgs;
use crate::commands::mcp_call::McpCallArgs;
use crate::commands::otlp::OtlpArgs;
use crate::commands::prices::PricesArgs;
use crate::commands::prune::PruneArgs;
use crate::commands::report::ReportArgs;
use crate::commands::sql::SqlArgs;
use crate::commands::sync::SyncArgs;
use crate::commands::usage::UsageArgs;
use crate::config::{Options, Pricing};

const EXAMPLES: &str =
    "Examples (run in a directory outside HOME: nanoload never writes inside it):
  nanoload ~ out.parquet --tables tables
      every agent under ~: the events, and the side tables in tables/
  nanoload ~ out.parquet --cache cache
      again, reusing the stores that did not change since the last load
  nanoload report out.parquet --tables tables report.html
      one self-contained HTML page of that load
  nanoload usage ~ --by model
      what the agents' LLM calls cost, per provider and model
  nanoload sync ~ history.duckdb
      keep every row ever seen, including what the agents delete later
  nanoload export history.duckdb history.parquet --tables history
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
/// The commands `report`, `usage`, `sql`, `mcp` and `otlp` read a load's
/// output, or a HOME (answered from a ledger kept for it in the user's
/// cache directory: `nanoload cache`); `sync` keeps every row ever seen in a ledger
/// that outlives the agents' own deletions, `export` writes a load's
/// outputs from it, `prune` removes what is gone from it; `nanoload help
/// COMMAND` explains each. A HOME named like a command (`report`, `usage`,
/// `sync`, `export`, `prune`, `prices`, `cache`, `help`) is given as
/// `./report`.
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

    /// The load's pricing (`Options::pricing`): beside its other arguments,
    /// since clap tells whether a load's arguments were given only for a
    /// struct that flattens none.
    #[command(flatten)]
    pub pricing: Pricing,
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
    #[command(about = "Run one read-only SQL query over a load's outputs or a ledger")]
    Sql(SqlArgs),
    #[command(about = "Serve a load's outputs or a ledger to an agent: an MCP server over stdio")]
    Mcp(McpArgs),
    #[command(about = "Write a load's sessions as OpenTelemetry traces (OTLP), or send them")]
    Otlp(OtlpArgs),
    #[command(about = "Print the price table a load prices calls with, its source and age")]
    Prices(PricesArgs),
    #[command(about = "List or remove the ledgers kept for the HOMEs readers were given")]
    Cache(CacheArgs),
    /// One tool call of `nanoload mcp`, in a process of its own (the server
    /// starts it; not for people).
    #[command(name = "mcp-call", hide = true)]
    McpCall(McpCallArgs),
}
