//! `nanoload export LEDGER.duckdb OUT.parquet`: one line on stderr.

use super::CommandError;
use crate::cli::ExportCli;
use crate::summary::ExitCode;

pub fn run(a: ExportCli) -> Result<ExitCode, CommandError> {
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let prices = a.pricing.table()?;
    let priced = if a.pricing.given() {
        format!(", priced with {}", a.pricing.describe())
    } else {
        String::new()
    };
    let args = crate::ledger::ExportArgs {
        ledger: a.ledger,
        out: a.out,
        tables: a.tables,
        snapshot: a.snapshot,
        dataset: a.dataset.zip(a.host),
        threads: threads.max(1),
        memory_limit: a.memory_limit,
        prices,
    };
    let x = crate::ledger::export(&args)?;
    eprintln!(
        "nanoload: exported {} rows of {} ({}, sync {}, load {}{priced}) to {}",
        x.events,
        args.ledger.display(),
        if args.snapshot { "snapshot" } else { "history" },
        x.sync,
        x.load_id,
        args.out.display()
    );
    Ok(ExitCode::Ok)
}
