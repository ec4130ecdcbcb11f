//! `nanoload HOME OUT.parquet`: a thin shell over [`nanoload::run`].

use clap::Parser;
use nanoload::cli::Args;
use nanoload::{ExitCode, run};

fn main() -> std::process::ExitCode {
    let args = Args::parse();
    match run(&args.options()) {
        Ok(summary) => {
            for d in &summary.diagnostics {
                if !args.quiet || d.kind.is_read_failure() {
                    eprintln!("nanoload: {d}");
                }
            }
            if !args.quiet {
                eprintln!("{}", summary.render());
            }
            std::process::ExitCode::from(summary.exit as u8)
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(ExitCode::Failed as u8)
        }
    }
}
