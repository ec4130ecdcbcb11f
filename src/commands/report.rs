//! `nanoload report SOURCE report.html` (a HOME of that name is given as
//! `./report`): the page, then one line on stderr.

use super::CommandError;
use crate::cli::ReportArgs;
use crate::source::LedgerAs;
use crate::summary::ExitCode;

pub fn run(args: ReportArgs) -> Result<ExitCode, CommandError> {
    let read = super::outputs(
        &args.out,
        args.tables.as_deref(),
        args.keeping.no_keep,
        LedgerAs::Export,
    )?;
    let priced = args.pricing.at_read()?;
    let w = crate::report::report_priced(
        &read.path,
        read.tables.as_deref(),
        &args.html,
        priced.as_ref(),
    )?;
    eprintln!(
        "nanoload: report written: {} ({} charts, {} bytes)",
        args.html.display(),
        w.charts,
        w.bytes
    );
    Ok(ExitCode::Ok)
}
