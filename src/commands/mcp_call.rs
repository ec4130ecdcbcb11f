//! `nanoload mcp-call …`: one tool call of `nanoload mcp` (the call as
//! JSON on stdin, its result as JSON on stdout); at `--timeout` the timeout
//! is the result, and the process ends with whatever DuckDB is still
//! computing.

use std::io::Read as _;

use super::CommandError;
use crate::cli::McpCallArgs;
use crate::summary::ExitCode;

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
