//! `nanoload prune LEDGER.duckdb --before DATE`: one line on stderr.

use std::path::PathBuf;

use super::CommandError;
use crate::summary::ExitCode;

/// Remove from a ledger what is gone from disk and was last seen before a date.
///
/// The only way anything leaves a ledger: the rows, calls and stores that
/// are not present (the agent deleted them) and whose last sync
/// (last_seen_load) finished before DATE (UTC) are deleted; present rows
/// and the loads table stay. Under the ledger's lock, in one transaction.
///
/// A sync that could not read all of HOME (an unreadable directory or
/// store, a dangling or unfollowed link: loads.unreadable) marks nothing
/// gone there, but what it did mark gone elsewhere is removed only with
/// --force: without it, prune names those syncs and does nothing.
///
/// Exit codes: 0 pruned (perhaps nothing); 2 nothing done (no ledger, a
/// ledger of another format or corrupt, DATE not a date, rows marked gone
/// by a sync that could not read all of HOME and no --force); 5 a sync or
/// another process holds the ledger.
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

    /// Also remove what a sync that could not read all of HOME marked gone
    /// (and what a ledger of an earlier format holds as gone, which did
    /// not record it).
    #[arg(long)]
    pub force: bool,
}

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
