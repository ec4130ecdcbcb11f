//! `nanoload prune LEDGER.duckdb --before DATE`: one line on stderr.

use super::CommandError;
use crate::cli::PruneArgs;
use crate::summary::ExitCode;

pub fn run(a: PruneArgs) -> Result<ExitCode, CommandError> {
    let p = crate::ledger::prune(&a.ledger, &a.before, a.force)?;
    eprintln!(
        "nanoload: pruned {}: {} rows, {} usage records, {} stores gone from disk and last seen before {}",
        a.ledger.display(),
        p.events,
        p.llm_calls,
        p.stores,
        a.before
    );
    Ok(ExitCode::Ok)
}
