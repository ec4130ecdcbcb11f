//! `nanoload HOME OUT.parquet`: the load ([`crate::run`]), its warnings
//! first and its summary on stderr.

use super::CommandError;
use crate::config::Options;
use crate::summary::ExitCode;

pub fn run(args: Options) -> Result<ExitCode, CommandError> {
    if args.no_redact {
        eprintln!(
            "nanoload: warning: --no-redact: secrets in chat text and native values are written verbatim; keep the output private"
        );
    }
    if let Some(out) = args.out.as_ref().filter(|o| {
        !o.extension()
            .is_some_and(|x| x.eq_ignore_ascii_case("parquet"))
    }) {
        eprintln!(
            "nanoload: warning: {} does not end in .parquet; it is written as a Parquet file all the same",
            out.display()
        );
    }
    let summary = crate::run(&args)?;
    for line in summary.stderr_lines(args.quiet) {
        eprintln!("{line}");
    }
    if !args.quiet {
        eprintln!("{}", summary.render());
    }
    if args.timings {
        eprintln!("{}", summary.timings.render());
    }
    Ok(summary.exit)
}
