//! `nanoload mcp SOURCE`: serve stdin/stdout until the client closes
//! stdin, each tool call in a child process of this executable
//! (`mcp_call.rs`).

use std::path::PathBuf;

use super::{CommandError, Keeping};
use crate::config::Pricing;
use crate::source::LedgerAs;
use crate::summary::ExitCode;

/// Serve a load's outputs or a ledger to an agent: a Model Context Protocol
/// server over stdio (JSON-RPC, one message per line).
///
/// Its tools: list_tables, describe_table (columns, types and their meaning
/// from nanoload's design notes), query (one read-only SELECT, with the
/// guard of `nanoload sql`), usage_by_day and top_sessions_by_cost (ready
/// answers from llm_calls and sessions). Configure it in an agent as a
/// stdio server whose command is `nanoload` with arguments
/// `mcp SOURCE [--tables DIR]`. A HOME as SOURCE is synced into the ledger
/// kept for it once, when the server starts.
///
/// Each message is one line of at most 1 MiB (1048576 bytes) of UTF-8
/// JSON; a longer line is answered with an error (-32600) and skipped, a
/// line that is not UTF-8 or not JSON with -32700. Each tool call runs in a
/// process of its own, stopped at --timeout: its answer is then an error,
/// and the server goes on.
///
/// With --prices, --price or --free every tool call reads llm_calls and
/// sessions priced again from each call's tokens by the load's rules, and
/// the ready answers say so (`prices`); a ledger holds no costs, and
/// refuses them.
///
/// Exit codes: 0 the client closed stdin; 2 SOURCE not readable (one line
/// on stderr before any message is read).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct McpArgs {
    /// A HOME, OUT.parquet, a --tables DIR, a --db FILE.duckdb or a
    /// LEDGER.duckdb.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The side tables of the load that wrote OUT.parquet, one view each.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// The most rows a query returns (a tool call may ask for fewer).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_rows: usize,

    /// Stop a tool call after SECS seconds (0: never); its answer is then
    /// an error.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,

    /// DuckDB memory limit of each tool call (e.g. 256MiB, 1GB); what does
    /// not fit spills to a private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, llm_calls and sessions are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

pub fn run(a: McpArgs) -> Result<ExitCode, CommandError> {
    let settings = crate::mcp::Settings {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
        memory_limit: a.memory_limit,
    };
    // a HOME is synced once, as the server starts; its outputs live while it serves
    let home = super::outputs(&a.source, a.tables.as_deref(), &a.keeping, LedgerAs::Tables)?;
    let priced = a.pricing.at_read()?;
    let server = crate::mcp::Server::new(
        &home.path,
        home.tables.as_deref(),
        settings,
        (a.pricing.clone(), priced),
    )?;
    let program = std::env::current_exe().map_err(CommandError::McpProgram)?;
    server
        .isolated(program)
        .serve(std::io::stdin().lock(), std::io::stdout().lock())
        .map_err(CommandError::McpServe)?;
    Ok(ExitCode::Ok)
}
