//! `nanoload mcp-call …`: one tool call of `nanoload mcp` (the call as
//! JSON on stdin, its result as JSON on stdout); at `--timeout` the timeout
//! is the result, and the process ends with whatever DuckDB is still
//! computing.

use std::io::Read as _;
use std::path::PathBuf;

use super::CommandError;
use crate::config::Pricing;
use crate::summary::ExitCode;

/// `nanoload mcp-call SOURCE …`: one tool call, read as JSON from stdin
/// (`{"name", "arguments"}`), its result as JSON on stdout.
#[derive(Debug, clap::Args)]
pub struct McpCallArgs {
    /// The server's SOURCE.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,
    /// The server's --tables.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// The server's --max-rows.
    #[arg(long, value_name = "N")]
    pub max_rows: usize,
    /// The server's --timeout: the call answers the timeout at it.
    #[arg(long, value_name = "SECS")]
    pub timeout: u64,
    /// The server's --memory-limit, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: u64,
    /// The directory DuckDB spills to (the server removes it).
    #[arg(long, value_name = "DIR")]
    pub spill: PathBuf,
    /// The server's pricing flags.
    #[command(flatten)]
    pub pricing: Pricing,
}

pub fn run(a: McpCallArgs) -> Result<ExitCode, CommandError> {
    let mut request = Vec::new();
    std::io::stdin()
        .lock()
        .take(2 * crate::mcp::MAX_LINE as u64)
        .read_to_end(&mut request)
        .map_err(|e| CommandError::CallRequest(e.into()))?;
    let call =
        crate::jsonl::parse_slice(&request).map_err(|e| CommandError::CallRequest(e.into()))?;
    let name = call["name"].as_str().unwrap_or_default().to_string();
    let args = call["arguments"].clone();
    let settings = crate::mcp::Settings {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
        memory_limit: a.memory_limit,
    };
    let priced = a.pricing.at_read().map_err(CommandError::CallPricing)?;
    let server = crate::mcp::Server::for_call(
        &a.source,
        a.tables.as_deref(),
        settings,
        (a.pricing.clone(), priced),
    );
    let spill = a.spill.clone();
    let result = crate::source::within(a.timeout, move || {
        server.call_here(&name, &args, Some(&spill))
    })
    .unwrap_or_else(|e| Err(e.into()));
    let line = format!("{}\n", crate::mcp::call_result_json(&result));
    super::print(&line).map_err(CommandError::Stdout)?;
    Ok(ExitCode::Ok)
}
