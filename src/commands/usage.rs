//! `nanoload usage SOURCE`: the table (or JSON) on stdout, errors on
//! stderr.

use std::path::PathBuf;

use super::CommandError;
use crate::cli::UsageArgs;
use crate::source::{LedgerAs, Outputs};
use crate::summary::ExitCode;
use crate::usage::{self, Layout, Query, UsageError, Zone};

pub fn run(args: UsageArgs) -> Result<ExitCode, CommandError> {
    if !args.source.exists() {
        return Err(UsageError::Input {
            path: args.source.clone(),
            message: "no such file or directory (a HOME, or OUT.parquet of a load)".into(),
        }
        .into());
    }
    if args.breakdown && args.by == usage::View::Model {
        return Err(CommandError::BreakdownByModel);
    }
    // a HOME's outputs (a temp load's live until the table is shown);
    // they, a --tables DIR and an output alike are priced again at read
    // with the flags
    let read = super::outputs(
        &args.source,
        args.tables.as_deref(),
        args.keeping.no_keep,
        LedgerAs::Export,
    )?;
    let priced = args.pricing.at_read()?;
    let (read_from, exit) = read_from(&args, &read)?;
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
    let mut u = match read_from {
        ReadFrom::Database(db) => {
            usage::open_database(&db, priced.as_ref()).and_then(|s| usage::usage(s.conn(), &q))
        }
        ReadFrom::Tables(tables) => {
            usage::open(&tables, priced.as_ref()).and_then(|c| usage::usage(&c, &q))
        }
    }?;
    u.prices = priced.map(|p| p.said);
    let text = if args.json {
        usage::json(&u)
    } else {
        let width = super::terminal_width();
        usage::table(&u, Layout { width })
    };
    super::print(&text).map_err(CommandError::Stdout)?;
    Ok(exit)
}

/// Where the calls are read from.
enum ReadFrom {
    /// A `--db` file or a ledger.
    Database(PathBuf),
    /// A tables directory.
    Tables(PathBuf),
}

/// Where SOURCE's calls are, and the exit code when all goes well (a HOME's
/// load's: 1 when some of its input could not be read).
fn read_from(args: &UsageArgs, read: &Outputs) -> Result<(ReadFrom, ExitCode), CommandError> {
    if let (true, Some(t)) = (read.home, &read.tables) {
        return Ok((ReadFrom::Tables(t.clone()), read.exit));
    }
    let tables = if let (None, Some(t)) = (&args.tables, &read.tables) {
        // a ledger's export
        t.clone()
    } else if args.source.is_dir() && args.tables.is_some() {
        return Err(CommandError::TablesWithTables(args.source.clone()));
    } else if args.source.is_dir() {
        // a --tables DIR
        args.source.clone()
    } else {
        match &args.tables {
            Some(t) => t.clone(),
            None if crate::source::is_database(&args.source) => {
                return Ok((ReadFrom::Database(args.source.clone()), ExitCode::Ok));
            }
            None => {
                return Err(UsageError::Input {
                    path: args.source.clone(),
                    message: "the calls are in the load's side tables: give --tables DIR (the --tables of the load), or a HOME to load now".into(),
                }
                .into());
            }
        }
    };
    Ok((ReadFrom::Tables(tables), ExitCode::Ok))
}
