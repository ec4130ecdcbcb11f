//! `nanoload sync HOME LEDGER.duckdb`: the summary lines on stderr.

use super::CommandError;
use crate::cli::SyncArgs;
use crate::summary::ExitCode;

pub fn run(args: SyncArgs) -> Result<ExitCode, CommandError> {
    let s = crate::ledger::sync(&args.options(), args.add_home)?;
    for line in s.lines(&args.ledger, args.quiet) {
        eprintln!("{line}");
    }
    Ok(s.exit)
}
