//! `nanoload HOME OUT.parquet`: a thin shell over [`nanoload::run`]; the
//! readers (`report`, `usage`, `sql`, `mcp`, `otlp`) over their modules,
//! each SOURCE taken through [`nanoload::source::outputs`] (a HOME served
//! by [`nanoload::keep`], which `nanoload cache` lists and clears; a ledger
//! exported for `report`, `usage` and `otlp`).

use clap::Parser;
use nanoload::cli::{
    Args, CacheAction, CacheArgs, Command, ExportCli, McpArgs, McpCallArgs, OtlpArgs, PricesArgs,
    PruneArgs, ReportArgs, SqlArgs, SyncArgs, UsageArgs,
};
use nanoload::source::LedgerAs;
use nanoload::{ExitCode, run};

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

/// The table `pricing` makes to price a load's output again at read (None
/// without a flag), or the usage error that ends the command (exit 2).
fn at_read(
    pricing: &nanoload::config::Pricing,
) -> Result<Option<nanoload::config::Repricing>, std::process::ExitCode> {
    pricing.at_read().map_err(|e| {
        eprintln!("nanoload: error: {e}");
        std::process::ExitCode::from(ExitCode::Failed as u8)
    })
}

/// SOURCE of a reader as the outputs it reads ([`nanoload::source::outputs`]:
/// a HOME served, its stderr lines printed, priced with the built-in table,
/// so pricing flags price its calls again at read as any output's; a ledger
/// as `ledger` says; anything else as given); Err: the exit code, the error
/// printed.
fn outputs(
    source: &std::path::Path,
    tables: Option<&std::path::Path>,
    no_keep: bool,
    ledger: nanoload::source::LedgerAs,
) -> Result<nanoload::source::Outputs, std::process::ExitCode> {
    match nanoload::source::outputs(source, tables, !no_keep, ledger) {
        Ok(o) => {
            for line in &o.lines {
                eprintln!("{line}");
            }
            Ok(o)
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            Err(std::process::ExitCode::from(e.exit_code() as u8))
        }
    }
}

/// `nanoload report …` (a HOME of that name is given as `./report`).
fn report_main(args: ReportArgs) -> std::process::ExitCode {
    let read = match outputs(
        &args.out,
        args.tables.as_deref(),
        args.keeping.no_keep,
        LedgerAs::Export,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let (out, tables) = (read.path.as_path(), read.tables.as_deref());
    let priced = match at_read(&args.pricing) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match nanoload::report::report_priced(out, tables, &args.html, priced.as_ref()) {
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

/// `nanoload sync HOME LEDGER.duckdb`: the summary lines on stderr.
fn sync_main(args: SyncArgs) -> std::process::ExitCode {
    match nanoload::ledger::sync(&args.options(), args.add_home) {
        Ok(s) => {
            for line in s.lines(&args.ledger, args.quiet) {
                eprintln!("{line}");
            }
            std::process::ExitCode::from(s.exit as u8)
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// `nanoload export LEDGER.duckdb OUT.parquet`: one line on stderr.
fn export_main(a: ExportCli) -> std::process::ExitCode {
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let prices = match a.pricing.table() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
    };
    let priced = if a.pricing.given() {
        format!(", priced with {}", a.pricing.describe())
    } else {
        String::new()
    };
    let args = nanoload::ledger::ExportArgs {
        ledger: a.ledger,
        out: a.out,
        tables: a.tables,
        snapshot: a.snapshot,
        dataset: a.dataset.zip(a.host),
        threads: threads.max(1),
        memory_limit: a.memory_limit,
        prices,
    };
    match nanoload::ledger::export(&args) {
        Ok(x) => {
            eprintln!(
                "nanoload: exported {} rows of {} ({}, sync {}, load {}{priced}) to {}",
                x.events,
                args.ledger.display(),
                if args.snapshot { "snapshot" } else { "history" },
                x.sync,
                x.load_id,
                args.out.display()
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// `nanoload prune LEDGER.duckdb --before DATE`: one line on stderr.
fn prune_main(a: PruneArgs) -> std::process::ExitCode {
    match nanoload::ledger::prune(&a.ledger, &a.before, a.force) {
        Ok(p) => {
            eprintln!(
                "nanoload: pruned {}: {} rows, {} usage records, {} stores gone from disk and last seen before {}",
                a.ledger.display(),
                p.events,
                p.llm_calls,
                p.stores,
                a.before
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            std::process::ExitCode::from(e.exit_code() as u8)
        }
    }
}

/// `nanoload usage …`: the table (or JSON) on stdout, errors on stderr.
fn usage_main(args: UsageArgs) -> std::process::ExitCode {
    use nanoload::usage::{self, Layout, Query, UsageError, Zone};
    use std::io::Write as _;
    let fail = |e: &dyn std::fmt::Display| {
        eprintln!("nanoload: error: {e}");
        std::process::ExitCode::from(ExitCode::Failed as u8)
    };
    if !args.source.exists() {
        return fail(&UsageError::Input {
            path: args.source.clone(),
            message: "no such file or directory (a HOME, or OUT.parquet of a load)".into(),
        });
    }
    if args.breakdown && args.by == usage::View::Model {
        return fail(
            &"--breakdown splits each day, week, month or session by model; --by model has one row per model already",
        );
    }
    let mut exit = ExitCode::Ok;
    // a HOME's outputs (a temp load's live until the table is shown);
    // they, a --tables DIR and an output alike are priced again at read
    // with the flags
    let read = match outputs(
        &args.source,
        args.tables.as_deref(),
        args.keeping.no_keep,
        LedgerAs::Export,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let priced = match at_read(&args.pricing) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let prices_said = priced.as_ref().map(|p| p.said.clone());
    let mut database = None;
    let tables = if let (true, Some(t)) = (read.home, &read.tables) {
        exit = read.exit;
        t.clone()
    } else if let (None, Some(t)) = (&args.tables, &read.tables) {
        // a ledger's export
        t.clone()
    } else if args.source.is_dir() && args.tables.is_some() {
        return fail(&format!(
            "{}: is a tables directory; --tables goes with OUT.parquet",
            args.source.display()
        ));
    } else if args.source.is_dir() {
        // a --tables DIR
        args.source.clone()
    } else {
        match &args.tables {
            Some(t) => t.clone(),
            None if nanoload::source::is_database(&args.source) => {
                database = Some(args.source.clone());
                args.source.clone()
            }
            None => {
                return fail(&UsageError::Input {
                    path: args.source.clone(),
                    message: "the calls are in the load's side tables: give --tables DIR (the --tables of the load), or a HOME to load now".into(),
                });
            }
        }
    };
    let q = Query {
        view: args.by,
        since: args.since,
        until: args.until,
        zone: args.timezone.clone().unwrap_or(Zone::Local),
        agent: args.agent.clone(),
        instance: args.instance.clone(),
        order: args.order,
        breakdown: args.breakdown,
    };
    let shown = match &database {
        Some(db) => {
            usage::open_database(db, priced.as_ref()).and_then(|s| usage::usage(s.conn(), &q))
        }
        None => usage::open(&tables, priced.as_ref()).and_then(|c| usage::usage(&c, &q)),
    };
    let mut u = match shown {
        Ok(u) => u,
        Err(e) => return fail(&e),
    };
    u.prices = prices_said;
    let text = if args.json {
        usage::json(&u)
    } else {
        usage::table(
            &u,
            Layout {
                width: terminal_width(),
            },
        )
    };
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return std::process::ExitCode::from(ExitCode::Failed as u8);
    }
    std::process::ExitCode::from(exit as u8)
}

/// `nanoload sql SOURCE QUERY`: the rows on stdout (a table, or JSON);
/// an error on stderr, or as JSON on stdout with `--json`/`--jsonl`. The
/// query runs on a thread of its own; at `--timeout` the error is given
/// and the process ends, whatever DuckDB is still computing.
fn sql_main(a: SqlArgs) -> std::process::ExitCode {
    use nanoload::source::{Limits, QueryError, Reader, Source, render, within};
    let json = a.json || a.jsonl;
    // the spill directory is this thread's, removed even when the query's
    // thread is still running at the deadline
    let spill = match tempfile::Builder::new().prefix("nanoload-sql-").tempdir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("nanoload: {}: {e}", std::env::temp_dir().display());
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
    };
    let priced = match at_read(&a.pricing) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let reader = Reader {
        memory_limit: a.memory_limit,
        spill: Some(spill.path().to_path_buf()),
        prices: priced.as_ref().map(|p| p.table.clone()),
    };
    let home = match nanoload::source::outputs(
        &a.source,
        a.tables.as_deref(),
        !a.keeping.no_keep,
        LedgerAs::Tables,
    ) {
        Ok(h) => h,
        Err(e) if json => {
            let j = serde_json::json!({"error": {"kind": "input", "message": e.to_string()}});
            println!("{j}");
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
        Err(e) => {
            // as sql says what SOURCE is not
            eprintln!("nanoload: {e}");
            return std::process::ExitCode::from(e.exit_code() as u8);
        }
    };
    for line in &home.lines {
        eprintln!("{line}");
    }
    let (source, tables) = (home.path.clone(), home.tables.clone());
    let query = a.query.clone();
    let limits = Limits {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
    };
    let answer = within(a.timeout, move || {
        Source::open_with(&source, tables.as_deref(), &reader)?.query(&query, limits)
    })
    .and_then(|r: Result<_, QueryError>| r);
    drop(spill);
    if let (Some(p), Ok(_)) = (&priced, &answer) {
        eprintln!("nanoload: cost_usd {}", p.said);
    }
    drop(home);
    let (text, failed) = match answer {
        Err(e) if json => (format!("{}\n", e.to_json()), true),
        Err(e) => {
            eprintln!("nanoload: {e}");
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
        Ok(ans) if a.json => (format!("{}\n", ans.to_json()), false),
        Ok(ans) if a.jsonl => (ans.objects().map(|o| format!("{o}\n")).collect(), false),
        Ok(ans) => (render(&ans, terminal_width()), false),
    };
    let mut out = std::io::stdout().lock();
    if std::io::Write::write_all(&mut out, text.as_bytes())
        .and_then(|_| std::io::Write::flush(&mut out))
        .is_err()
        || failed
    {
        return std::process::ExitCode::from(ExitCode::Failed as u8);
    }
    std::process::ExitCode::SUCCESS
}

/// `nanoload mcp SOURCE`: serve stdin/stdout until the client closes
/// stdin, each tool call in a child process of this executable.
fn mcp_main(a: McpArgs) -> std::process::ExitCode {
    let settings = nanoload::mcp::Settings {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
        memory_limit: a.memory_limit,
    };
    // a HOME is synced once, as the server starts; its outputs live while it serves
    let home = match outputs(
        &a.source,
        a.tables.as_deref(),
        a.keeping.no_keep,
        LedgerAs::Tables,
    ) {
        Ok(h) => h,
        Err(code) => return code,
    };
    let (source, tables) = (home.path.as_path(), home.tables.as_deref());
    let priced = match at_read(&a.pricing) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let server =
        match nanoload::mcp::Server::new(source, tables, settings, (a.pricing.clone(), priced)) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("nanoload: {e}");
                return std::process::ExitCode::from(ExitCode::Failed as u8);
            }
        };
    let server = match std::env::current_exe() {
        Ok(program) => server.isolated(program),
        Err(e) => {
            eprintln!("nanoload: mcp: cannot find this program to run tool calls with: {e}");
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
    };
    match server.serve(std::io::stdin().lock(), std::io::stdout().lock()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nanoload: mcp: {e}");
            std::process::ExitCode::from(ExitCode::Failed as u8)
        }
    }
}

/// `nanoload prices [TEXT]`: the table these flags make.
fn prices_main(a: PricesArgs) -> std::process::ExitCode {
    let table = match a.pricing.table() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("nanoload: error: {e}");
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
    };
    let file = (a.pricing.prices.as_ref()).map(|p| p.to_string_lossy().into_owned());
    let given: Vec<String> = (a.pricing.price.iter())
        .filter_map(|p| nanoload::prices::parse_price_flag(p).ok().map(|(m, _)| m))
        .collect();
    let text = nanoload::prices::listing(
        &table,
        file.as_deref().map(|f| (f, a.pricing.prices_replace)),
        &given,
        a.pattern.as_deref(),
        chrono::Utc::now().date_naive(),
    );
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    // a closed pipe (`| head`) is not an error
    let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    std::process::ExitCode::SUCCESS
}

/// `nanoload mcp-call …`: one tool call of `nanoload mcp` (the call as
/// JSON on stdin, its result as JSON on stdout); at `--timeout` the
/// timeout is the result, and the process ends with whatever DuckDB is
/// still computing.
fn mcp_call_main(a: McpCallArgs) -> std::process::ExitCode {
    use std::io::{Read, Write};
    let mut request = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(2 * nanoload::mcp::MAX_LINE as u64)
        .read_to_end(&mut request);
    let call: serde_json::Value = match read.map(|_| nanoload::jsonl::parse_slice(&request)) {
        Ok(Ok(v)) => v,
        _ => return std::process::ExitCode::from(ExitCode::Failed as u8),
    };
    let name = call["name"].as_str().unwrap_or_default().to_string();
    let args = call["arguments"].clone();
    let settings = nanoload::mcp::Settings {
        max_rows: a.max_rows,
        timeout_secs: a.timeout,
        memory_limit: a.memory_limit,
    };
    // the server checked the flags before it started
    let Ok(priced) = a.pricing.at_read() else {
        return std::process::ExitCode::from(ExitCode::Failed as u8);
    };
    let server = nanoload::mcp::Server::for_call(
        &a.source,
        a.tables.as_deref(),
        settings,
        (a.pricing.clone(), priced),
    );
    let spill = a.spill.clone();
    let result = nanoload::source::within(a.timeout, move || {
        server.call_here(&name, &args, Some(&spill))
    })
    .unwrap_or_else(|e| Err(e.to_string()));
    let mut out = std::io::stdout().lock();
    let written =
        writeln!(out, "{}", nanoload::mcp::call_result_json(&result)).and_then(|_| out.flush());
    match written {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(_) => std::process::ExitCode::from(ExitCode::Failed as u8),
    }
}

/// `nanoload otlp SOURCE [TRACES.jsonl] [--endpoint URL]`: the file, then
/// the POSTs; a summary on stderr.
fn otlp_main(a: OtlpArgs) -> std::process::ExitCode {
    use nanoload::otlp;
    let failed = |m: String| {
        eprintln!("nanoload: {m}");
        std::process::ExitCode::from(ExitCode::Failed as u8)
    };
    let endpoint = match a.endpoint.as_deref().map(otlp::Endpoint::parse).transpose() {
        Ok(e) => e,
        Err(m) => return failed(format!("--endpoint: {m}")),
    };
    let mut headers = Vec::new();
    for h in &a.headers {
        match h.split_once('=') {
            Some((k, v))
                if !k.trim().is_empty()
                    && !k.contains([':', '\r', '\n'])
                    && !v.contains(['\r', '\n']) =>
            {
                headers.push((k.trim().to_string(), v.to_string()))
            }
            // the argument may hold a credential: none of it is shown
            _ => {
                return failed(
                    "--header: expected NAME=VALUE (a name without ':', no line breaks)".into(),
                );
            }
        }
    }
    let priced = match at_read(&a.pricing) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let opts = otlp::Options {
        content: a.content,
        project: a.project.clone(),
        prices: priced.as_ref().map(|p| p.said.clone()),
    };
    let read = match outputs(
        &a.source,
        a.tables.as_deref(),
        a.keeping.no_keep,
        LedgerAs::Export,
    ) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let prices = priced.as_ref().map(|p| &p.table);
    let made = otlp::traces_of(&read.path, read.tables.as_deref(), &opts, prices);
    let (traces, counts) = match made {
        Ok(t) => t,
        Err(e) => return failed(e.to_string()),
    };
    let spans = counts.turns + counts.chats + counts.tools;
    let what = format!(
        "{} traces, {spans} spans: {} turns, {} LLM calls, {} tool calls",
        counts.traces, counts.turns, counts.chats, counts.tools
    );
    if let Some(path) = &a.traces {
        if let Err(e) = otlp::write_jsonl(&traces, path) {
            eprintln!("nanoload: error: cannot write {}: {e}", path.display());
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
        eprintln!("nanoload: traces written: {} ({what})", path.display());
    }
    let left_out = [
        (counts.untimed_turns, "turns without a UTC time"),
        (counts.untimed_tools, "tool calls without a UTC time"),
        (counts.untimed_calls, "LLM calls without a start time"),
    ];
    for (n, why) in left_out {
        if n > 0 {
            eprintln!("nanoload: left out: {n} {why} (a span needs an instant)");
        }
    }
    if counts.out_of_range_rows + counts.out_of_range_calls > 0 {
        eprintln!(
            "nanoload: left out: the instants of {} rows and {} LLM calls before 1970-01-01 or after 2554-07-21 (OTLP counts unsigned 64-bit nanoseconds from 1970): the rows count as untimed, the calls make no span",
            counts.out_of_range_rows, counts.out_of_range_calls
        );
    }
    if counts.sessionless_calls > 0 {
        eprintln!(
            "nanoload: {} LLM calls of no session: one trace per agent instance, without a turn",
            counts.sessionless_calls
        );
    }
    if let Some(ep) = endpoint {
        for t in &traces {
            let body = match a.protocol {
                otlp::Protocol::Protobuf => otlp::to_protobuf(t),
                otlp::Protocol::Json => otlp::to_json(t).to_string().into_bytes(),
            };
            if let Err(m) = ep.post(&body, a.protocol, &headers, a.timeout) {
                eprintln!("nanoload: error: sending to {} failed: {m}", ep.url);
                return std::process::ExitCode::from(if a.traces.is_some() {
                    ExitCode::Partial as u8
                } else {
                    ExitCode::Failed as u8
                });
            }
        }
        eprintln!("nanoload: traces sent: {} ({what})", ep.url);
    }
    std::process::ExitCode::SUCCESS
}

/// `nanoload cache list|clear [HOME]`: the list on stdout, what was removed
/// on stderr.
fn cache_main(a: CacheArgs) -> std::process::ExitCode {
    use nanoload::keep;
    let Some(dir) = keep::cache_dir() else {
        eprintln!(
            "nanoload: error: no cache directory: XDG_CACHE_HOME and HOME are not set to absolute paths"
        );
        return std::process::ExitCode::from(ExitCode::Failed as u8);
    };
    match a.action {
        CacheAction::List => match keep::list(&dir) {
            Ok(kept) => {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                let _ = out
                    .write_all(keep::listing(&dir, &kept).as_bytes())
                    .and_then(|_| out.flush());
                std::process::ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("nanoload: error: {}: {e}", dir.display());
                std::process::ExitCode::from(ExitCode::Failed as u8)
            }
        },
        CacheAction::Clear(c) => match keep::clear(&dir, c.home.as_deref()) {
            Ok(done) => {
                for (home, bytes) in &done.removed {
                    eprintln!(
                        "nanoload: removed the kept ledger of {home} ({} bytes)",
                        nanoload::readout::thousands(i64::try_from(*bytes).unwrap_or(i64::MAX))
                    );
                }
                if let (Some(h), true) = (&c.home, done.removed.is_empty() && done.busy.is_empty())
                {
                    eprintln!(
                        "nanoload: nothing kept for {} in {}",
                        h.display(),
                        dir.display()
                    );
                }
                for home in &done.busy {
                    eprintln!(
                        "nanoload: not removed: {home}: another nanoload is syncing it now; try again when it has finished"
                    );
                }
                for p in &done.foreign {
                    eprintln!(
                        "nanoload: left alone: {} (not a file nanoload keeps)",
                        p.display()
                    );
                }
                let code = if !done.busy.is_empty() {
                    ExitCode::Busy
                } else if !done.foreign.is_empty() {
                    ExitCode::Partial
                } else {
                    ExitCode::Ok
                };
                std::process::ExitCode::from(code as u8)
            }
            Err(e) => {
                eprintln!("nanoload: error: {e}");
                std::process::ExitCode::from(ExitCode::Failed as u8)
            }
        },
    }
}

/// The width a table must fit: the terminal's when stdout is one, else
/// `COLUMNS` when set, else none (a pipe takes every column).
fn terminal_width() -> Option<usize> {
    let term = console::Term::stdout();
    if term.is_term() {
        let (_, cols) = term.size();
        return Some(usize::from(cols));
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|c| *c > 0)
}

fn main() -> std::process::ExitCode {
    let args = match Args::parse() {
        Args {
            command: Some(Command::Report(a)),
            ..
        } => return report_main(a),
        Args {
            command: Some(Command::Usage(a)),
            ..
        } => return usage_main(a),
        Args {
            command: Some(Command::Sync(a)),
            ..
        } => return sync_main(a),
        Args {
            command: Some(Command::Export(a)),
            ..
        } => return export_main(a),
        Args {
            command: Some(Command::Prune(a)),
            ..
        } => return prune_main(a),
        Args {
            command: Some(Command::Sql(a)),
            ..
        } => return sql_main(a),
        Args {
            command: Some(Command::Mcp(a)),
            ..
        } => return mcp_main(a),
        Args {
            command: Some(Command::Otlp(a)),
            ..
        } => return otlp_main(a),
        Args {
            command: Some(Command::Prices(a)),
            ..
        } => return prices_main(a),
        Args {
            command: Some(Command::McpCall(a)),
            ..
        } => return mcp_call_main(a),
        Args {
            command: Some(Command::Cache(a)),
            ..
        } => return cache_main(a),
        Args {
            options: Some(mut options),
            pricing,
            ..
        } => {
            options.pricing = pricing;
            options
        }
        // clap requires HOME when no command is given
        Args { options: None, .. } => {
            return std::process::ExitCode::from(ExitCode::Failed as u8);
        }
    };
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
    match run(&args) {
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
            for line in e.detail_lines() {
                eprintln!("nanoload: {line}");
            }
            std::process::ExitCode::from(e.exit_code() as u8)
        }
    }
}
