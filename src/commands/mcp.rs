//! `nanoload mcp SOURCE`: serve stdin/stdout until the client closes
//! stdin, each tool call in a child process of this executable
//! (`mcp_call.rs`).

use super::CommandError;
use crate::cli::McpArgs;
use crate::source::LedgerAs;
use crate::summary::ExitCode;

pub fn run(a: McpArgs) -> Result<ExitCode, CommandError> {
    let settings = crate::mcp::Settings {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
        memory_limit: a.memory_limit,
    };
    // a HOME is synced once, as the server starts; its outputs live while it serves
    let home = super::outputs(
        &a.source,
        a.tables.as_deref(),
        a.keeping.no_keep,
        LedgerAs::Tables,
    )?;
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
