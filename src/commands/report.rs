//! `nanoload report SOURCE report.html` (a HOME of that name is given as
//! `./report`): the page, then one line on stderr.

use std::path::PathBuf;

use super::{CommandError, Keeping};
use crate::config::Pricing;
use crate::source::LedgerAs;
use crate::summary::ExitCode;

/// Write one self-contained HTML report of a load's output, of a HOME (the
/// ledger kept for it), of a --db file or of a ledger.
///
/// It leads with the answers: cards (total cost and tokens, sessions,
/// active days, cost per active day, the peak day, cache-hit rate, unpriced
/// calls), cost per local day stacked by model with a TOTAL, the costliest
/// sessions, tools with their error rate, activity per local day and hour
/// and the sessions as a timeline; then, collapsed, the data's quality:
/// duplicates dropped and rows recovered from secondary copies, the UTC
/// offset evidence per instance, diagnostics.
///
/// Every chart has a table of its numbers beside it. The page is one file:
/// inline CSS and SVG, no script, nothing fetched. Written to a temporary
/// name beside report.html and renamed when complete.
///
/// Costs are the load's (llm_calls.cost_usd); with --prices, --price or
/// --free every call is priced again from its tokens by the load's rules
/// (the side tables are needed), and the page says so.
///
/// Exit codes: 0 written; 2 nothing written (SOURCE or a --tables file
/// missing or not nanoload's, tables of another load, report.html not
/// writable).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct ReportArgs {
    /// A HOME (answered from the ledger kept for it: every row ever seen),
    /// the events table a load wrote (`nanoload HOME OUT.parquet`, with
    /// --tables DIR), its --db FILE.duckdb, or a LEDGER.duckdb of `nanoload
    /// sync` (every row ever seen, as `nanoload export` writes it).
    #[arg(value_name = "SOURCE")]
    pub out: PathBuf,

    /// The side tables the same load wrote with `--tables DIR` (all five:
    /// sessions, llm_calls, tz_offsets, diagnostics, sources). Without it the
    /// sections that need them (tokens and cost, duplicates, offset ranges,
    /// diagnostics) say so in the page.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// The HTML file to write (replaced if it exists).
    #[arg(value_name = "report.html")]
    pub html: PathBuf,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, the output's calls are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

pub fn run(a: ReportArgs) -> Result<ExitCode, CommandError> {
    let read = super::outputs(&a.out, a.tables.as_deref(), &a.keeping, LedgerAs::Export)?;
    let priced = a.pricing.at_read()?;
    let w =
        crate::report::report_priced(&read.path, read.tables.as_deref(), &a.html, priced.as_ref())?;
    eprintln!(
        "nanoload: report written: {} ({} charts, {} bytes)",
        a.html.display(),
        w.charts,
        w.bytes
    );
    Ok(ExitCode::Ok)
}
