//! `nanoload sql SOURCE QUERY`: the rows on stdout (a table, or JSON); an
//! error on stderr, or as JSON on stdout with `--json`/`--jsonl`. The query
//! runs on a thread of its own; at `--timeout` the error is given and the
//! process ends, whatever DuckDB is still computing.

use super::CommandError;
use crate::cli::SqlArgs;
use crate::source::{LedgerAs, Limits, QueryError, Reader, Source, render, within};
use crate::summary::ExitCode;

pub fn run(a: SqlArgs) -> Result<ExitCode, CommandError> {
    let json = a.json || a.jsonl;
    // the spill directory is this thread's, removed even when the query's
    // thread is still running at the deadline
    let spill = tempfile::Builder::new()
        .prefix("nanoload-sql-")
        .tempdir()
        .map_err(|source| CommandError::Spill {
            dir: std::env::temp_dir(),
            source,
        })?;
    let priced = a.pricing.at_read()?;
    let reader = Reader {
        memory_limit: a.memory_limit,
        spill: Some(spill.path().to_path_buf()),
        prices: priced.as_ref().map(|p| p.table.clone()),
    };
    let home = match crate::source::outputs(
        &a.source,
        a.tables.as_deref(),
        !a.keeping.no_keep,
        LedgerAs::Tables,
    ) {
        Ok(h) => h,
        Err(e) if json => {
            let j = serde_json::json!({"error": {"kind": "input", "message": e.to_string()}});
            println!("{j}");
            return Err(CommandError::Answered);
        }
        Err(e) => return Err(CommandError::SqlSource(e)),
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
    let text = match answer {
        Err(e) if json => {
            super::print(&format!("{}\n", e.to_json())).map_err(CommandError::Stdout)?;
            return Err(CommandError::Answered);
        }
        Err(e) => return Err(e.into()),
        Ok(ans) if a.json => format!("{}\n", ans.to_json()),
        Ok(ans) if a.jsonl => ans.objects().map(|o| format!("{o}\n")).collect(),
        Ok(ans) => render(&ans, super::terminal_width()),
    };
    super::print(&text).map_err(CommandError::Stdout)?;
    Ok(ExitCode::Ok)
}
