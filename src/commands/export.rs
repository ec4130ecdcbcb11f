//! `nanoload export LEDGER.duckdb OUT.parquet`: one line on stderr.

use std::path::PathBuf;

use super::CommandError;
use crate::config::Pricing;
use crate::summary::ExitCode;

/// `--host NAME`, checked as a dataset partition's name.
fn host_name(s: &str) -> Result<String, crate::dataset::HostError> {
    crate::dataset::check_host(s).map(|()| s.to_string())
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
/// The calls are priced with the built-in table, or as --prices, --price
/// and --free say (a load_id of its own then: the same rows priced
/// otherwise are another output).
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

    /// Also write every table as host NAME's partition of a fleet dataset
    /// (DIR/<table>/host=NAME/part-0.parquet, as a load's --dataset).
    #[arg(long, value_name = "DIR", requires = "host")]
    pub dataset: Option<PathBuf>,

    /// The dataset's host name (letters, digits, `.`, `_`, `-`).
    #[arg(long, value_name = "NAME", requires = "dataset", value_parser = host_name)]
    pub host: Option<String>,

    /// Worker threads for DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    /// The export's calls are priced with these.
    #[command(flatten)]
    pub pricing: Pricing,
}

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
