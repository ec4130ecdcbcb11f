//! Command-line arguments (`nanoload --help`).

use std::path::PathBuf;

use clap::Parser;

use crate::config::Options;

/// Load everything the nanobot and nanoclaw agents left under HOME into one
/// Parquet table of events.
///
/// nanobot instances are the `.nanobot*` directories directly under HOME;
/// a nanoclaw install root is any directory under HOME holding `data/v2.db`.
/// Nothing is ever written inside HOME: SQLite stores are read from private
/// copies.
///
/// Exit codes: 0 every store read (declared losses and warnings allowed);
/// 1 output written, but some lines, records or stores could not be read, or
/// a link to agent state out of HOME was not followed (listed on stderr and
/// in the `diagnostics` table); 2 nothing written; 3 outputs partly replaced
/// (a rename failed after the others succeeded: stderr lists each output as
/// new or old).
///
/// `nanoload report OUT.parquet [--tables DIR] report.html` writes an HTML
/// report of a load's output (see `nanoload report --help`); a HOME named
/// `report` is given as `./report`.
#[derive(Debug, Parser)]
#[command(name = "nanoload", version, about, long_about)]
pub struct Args {
    #[command(flatten)]
    pub options: Options,
}

/// Write one self-contained HTML report of a load's output: activity per
/// local day and hour, sessions as a timeline, tokens and cost per day and
/// per model, the tool mix, duplicates dropped and rows recovered from
/// secondary copies, the UTC offset evidence per instance, diagnostics.
///
/// Every chart has a table of its numbers beside it. The page is one file:
/// inline CSS and SVG, no script, nothing fetched. Written to a temporary
/// name beside report.html and renamed when complete.
///
/// Exit codes: 0 written; 2 nothing written (OUT.parquet or a --tables file
/// missing or not nanoload's, report.html not writable).
#[derive(Debug, Parser)]
#[command(
    name = "nanoload report",
    bin_name = "nanoload report",
    version,
    about,
    long_about
)]
pub struct ReportArgs {
    /// The events table a load wrote (`nanoload HOME OUT.parquet`).
    #[arg(value_name = "OUT.parquet")]
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
}
