//! `nanoload HOME OUT.parquet`: a thin shell over [`nanoload::run`];
//! `nanoload report OUT.parquet [--tables DIR] report.html` over
//! [`nanoload::report::report`].

use clap::Parser;
use nanoload::cli::{Args, ReportArgs};
use nanoload::{ExitCode, run};

/// Keep peak RSS near DuckDB's `memory_limit`. DuckDB allocates and frees
/// 256 KiB buffers from many threads; glibc's defaults (an arena per thread
/// and an mmap threshold that grows to the largest freed block) keep freed
/// buffers resident, which measured 549 MB against 380 MB on a 512 MB
/// session file (BENCHMARKS.md). Fixed thresholds and two arenas return
/// them to the system.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    // SAFETY: mallopt only sets allocator parameters; it is called before
    // any other thread exists, and a refused setting (return 0) only leaves
    // glibc's default in place.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 << 10);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

/// `nanoload report …` (the first argument `report`; a HOME of that name
/// is given as `./report`).
fn report_main() -> std::process::ExitCode {
    let args = ReportArgs::parse_from(
        std::iter::once(std::ffi::OsString::from("nanoload report"))
            .chain(std::env::args_os().skip(2)),
    );
    match nanoload::report::report(&args.out, args.tables.as_deref(), &args.html) {
        Ok(w) => {
            eprintln!(
                "nanoload: report written: {} ({} charts, {} bytes)",
                args.html.display(),
                w.charts,
                w.bytes
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(ExitCode::Failed as u8)
        }
    }
}

fn main() -> std::process::ExitCode {
    if std::env::args_os().nth(1).is_some_and(|a| a == "report") {
        return report_main();
    }
    tune_allocator();
    let args = Args::parse();
    if args.no_redact {
        eprintln!(
            "nanoload: warning: --no-redact: secrets in chat text and native values are written verbatim; keep the output private"
        );
    }
    match run(&args.options()) {
        Ok(summary) => {
            for line in summary.stderr_lines(args.quiet) {
                eprintln!("{line}");
            }
            if !args.quiet {
                eprintln!("{}", summary.render());
            }
            if args.timings {
                eprintln!("{}", summary.timings.render());
            }
            std::process::ExitCode::from(summary.exit as u8)
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(ExitCode::Failed as u8)
        }
    }
}
