//! `nanoload`: the arguments parsed, one command run
//! ([`nanoload::commands`], a module each; `nanoload HOME OUT.parquet` is
//! [`nanoload::commands::load`]), its error printed once and its exit code
//! returned.

use clap::Parser;
use nanoload::cli::{Args, Command};
use nanoload::commands::{self, CommandError};

/// jemalloc serves every allocation of the process on Linux: Rust's
/// through this global allocator, DuckDB's and SQLite's through `malloc`,
/// which the unprefixed build replaces. Against glibc's malloc, the same
/// output bytes for less CPU, the more so the larger the home, and a lower
/// peak RSS (BENCHMARKS.md "jemalloc for the whole process").
#[cfg(target_os = "linux")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's settings, read when it starts (a `MALLOC_CONF` in the
/// environment is applied after them). Two arenas, not four per core: the
/// pages one phase's threads free serve the next phase's, so the peak RSS
/// stays below glibc's (one arena: less RSS still, but more CPU, most of it
/// in the write, whose two encoders would share it). Freed pages go back
/// to the kernel after a second, not jemalloc's default ten, so the
/// extraction's garbage is not kept through the SQL steps and the write
/// (with jemalloc's defaults a large home's peak RSS passes the memory
/// bound); returning them at once (`dirty_decay_ms:0`) costs many times
/// the system time (BENCHMARKS.md "jemalloc for the whole process").
#[cfg(target_os = "linux")]
#[unsafe(export_name = "malloc_conf")]
pub static MALLOC_CONF: &[u8; 30] = b"narenas:2,dirty_decay_ms:1000\0";

fn main() -> std::process::ExitCode {
    let Args {
        command,
        options,
        pricing,
    } = Args::parse();
    let done = match command {
        Some(Command::Report(a)) => commands::report::run(a),
        Some(Command::Usage(a)) => commands::usage::run(a),
        Some(Command::Sync(a)) => commands::sync::run(a),
        Some(Command::Export(a)) => commands::export::run(a),
        Some(Command::Prune(a)) => commands::prune::run(a),
        Some(Command::Sql(a)) => commands::sql::run(a),
        Some(Command::Mcp(a)) => commands::mcp::run(a),
        Some(Command::Otlp(a)) => commands::otlp::run(a),
        Some(Command::Prices(a)) => commands::prices::run(a),
        Some(Command::McpCall(a)) => commands::mcp_call::run(a),
        Some(Command::Cache(a)) => commands::cache::run(a),
        // the load's pricing is parsed beside its other arguments
        None => match options {
            Some(options) => commands::load::run(nanoload::Options { pricing, ..options }),
            // clap requires HOME when no command is given
            None => Err(CommandError::NoHome),
        },
    };
    let code = done.unwrap_or_else(|e| {
        for line in e.stderr_lines() {
            eprintln!("{line}");
        }
        e.exit_code()
    });
    std::process::ExitCode::from(code as u8)
}
