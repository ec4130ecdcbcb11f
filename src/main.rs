//! `nanoload HOME OUT.parquet`: a thin shell over [`nanoload::run`];
//! `nanoload report OUT.parquet [--tables DIR] report.html` over
//! [`nanoload::report::report`].

use clap::Parser;
use nanoload::cli::{Args, ReportArgs};
use nanoload::{ExitCode, run};

/// Fixed allocator thresholds, so the run neither faults in fresh pages for
/// every large buffer nor keeps all it freed. glibc's defaults let the mmap
/// threshold grow to the largest freed block (peak RSS 293 MiB against 244
/// on the 512 MB big-file home); the 128 KiB thresholds and two arenas set
/// here before mmapped and unmapped every DuckDB block and every column
/// buffer of the write: 1.2–1.3 M page faults and 5–6 s of system time on
/// the 1 GB home. At 4 MiB / 64 MiB: 0.5 M faults and 2.5 s; peak RSS
/// 446 MiB at 1 GB, 473 MiB at 4 GB (BENCHMARKS.md "Latest, stop 21").
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn tune_allocator() {
    // SAFETY: mallopt only sets allocator parameters; it is called before
    // any other thread exists, and a refused setting (return 0) only leaves
    // glibc's default in place.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
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
    if args.options.no_redact {
        eprintln!(
            "nanoload: warning: --no-redact: secrets in chat text and native values are written verbatim; keep the output private"
        );
    }
    match run(&args.options) {
        Ok(summary) => {
            for line in summary.stderr_lines(args.options.quiet) {
                eprintln!("{line}");
            }
            if !args.options.quiet {
                eprintln!("{}", summary.render());
            }
            if args.options.timings {
                eprintln!("{}", summary.timings.render());
            }
            std::process::ExitCode::from(summary.exit as u8)
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            for line in e.detail_lines() {
                eprintln!("nanoload: {line}");
            }
            std::process::ExitCode::from(e.exit_code() as u8)
        }
    }
}
