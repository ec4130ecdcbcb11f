//! `nanoload usage SOURCE`: the table (or JSON) on stdout, errors on
//! stderr.

use std::path::PathBuf;

use super::{CommandError, Keeping};
use crate::config::Pricing;
use crate::source::{LedgerAs, Outputs};
use crate::summary::ExitCode;
use crate::usage::{self, Layout, Query, UsageError, View, Zone};

const USAGE_EXAMPLES: &str = "Examples:
  nanoload usage ~
      calls, tokens and cost per local day, from the ledger kept for ~
      (the first call reads all of ~, later ones only what changed)
  nanoload usage ~ --by model --since 2026-11-01
  nanoload usage out.parquet --tables tables --by session --json
  nanoload usage ~ --by monthly --timezone Europe/Berlin";

/// Show what both agents' LLM calls used and cost — tokens and USD per
/// local day (default), week, month, session or model, with a TOTAL row —
/// straight from a HOME, or from a load's output, its --db file or a
/// ledger.
///
/// The calls are `llm_calls`: nanobot's llm_usage rows and nanoclaw's
/// Claude Code responses with counted usage. Days are the host's local days
/// from the UTC offsets the load derived (a call whose instance has none is
/// placed by its UTC time, and a note says how many); `--timezone` places
/// every call in one zone instead. A call without a price is counted as
/// unpriced, never as $0. With --prices, --price or --free a HOME's load
/// prices with them, and an output's calls are priced again from their
/// tokens by the load's rules (a note says so).
///
/// A HOME is answered from the ledger nanoload keeps for it in the user's
/// cache directory (`nanoload cache --help`): every call syncs it, reading
/// only the stores that changed, so the calls the agents delete later are
/// still counted. A cache that cannot be written: a temp load answers, and
/// one line says so.
///
/// Exit codes: 0 shown; 1 shown, but reading HOME could not read some input
/// (listed on stderr); 2 nothing shown (bad arguments, an output that is
/// not nanoload's, a HOME that did not load).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = USAGE_EXAMPLES)]
pub struct UsageArgs {
    /// A HOME (answered from the ledger nanoload keeps for it, synced now;
    /// with --no-keep loaded into a private temp dir, removed after), the
    /// events table of a load (OUT.parquet, with --tables DIR), a --tables
    /// DIR, its --db FILE.duckdb, or a LEDGER.duckdb of `nanoload sync`
    /// (every row ever seen).
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The side tables of the load that wrote OUT.parquet (`--tables DIR`):
    /// the calls are read from DIR/llm_calls.parquet.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// One row per local day, week (from Monday), month, session, or
    /// provider and model.
    #[arg(long, value_enum, default_value = "daily", value_name = "VIEW")]
    pub by: View,

    /// The first local date shown (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub since: Option<chrono::NaiveDate>,

    /// The last local date shown, inclusive.
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub until: Option<chrono::NaiveDate>,

    /// Place every call in this zone instead of the derived local time:
    /// UTC, an offset (+05:30) or a tz database name (Europe/Berlin).
    #[arg(long, value_name = "ZONE", value_parser = crate::usage::Zone::parse)]
    pub timezone: Option<crate::usage::Zone>,

    /// Print the rows and totals as one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Under each day, week, month or session, one row per provider and
    /// model of its calls.
    #[arg(long, short = 'b')]
    pub breakdown: bool,

    /// Only the calls of this agent.
    #[arg(long, value_name = "AGENT", value_parser = ["nanobot", "nanoclaw"])]
    pub agent: Option<String>,

    /// Only the calls of this instance, as the outputs name it (`.nanobot`,
    /// `.nanobot-work`, a nanoclaw install root relative to HOME).
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,

    /// The order of the rows: asc, oldest first (days, weeks, months; the
    /// default), or desc, newest first. Sessions and models: asc the
    /// cheapest first, desc the costliest first (the default).
    #[arg(long, value_enum, value_name = "ORDER")]
    pub order: Option<crate::usage::Order>,

    #[command(flatten)]
    pub keeping: Keeping,

    /// HOME's outputs and an output's calls are priced again with these.
    #[command(flatten)]
    pub pricing: Pricing,
}

pub fn run(a: UsageArgs) -> Result<ExitCode, CommandError> {
    if !a.source.exists() {
        return Err(UsageError::Input {
            path: a.source.clone(),
            message: "no such file or directory (a HOME, or OUT.parquet of a load)".into(),
        }
        .into());
    }
    if a.breakdown && a.by == usage::View::Model {
        return Err(CommandError::BreakdownByModel);
    }
    // a HOME's outputs (a temp load's live until the table is shown);
    // they, a --tables DIR and an output alike are priced again at read
    // with the flags
    let read = super::outputs(&a.source, a.tables.as_deref(), &a.keeping, LedgerAs::Export)?;
    let priced = a.pricing.at_read()?;
    let (read_from, exit) = read_from(&a, &read)?;
    let q = Query {
        view: a.by,
        since: a.since,
        until: a.until,
        zone: a.timezone.clone().unwrap_or(Zone::Local),
        agent: a.agent.clone(),
        instance: a.instance.clone(),
        order: a.order,
        breakdown: a.breakdown,
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
    let text = if a.json {
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
fn read_from(a: &UsageArgs, read: &Outputs) -> Result<(ReadFrom, ExitCode), CommandError> {
    if let (true, Some(t)) = (read.home, &read.tables) {
        return Ok((ReadFrom::Tables(t.clone()), read.exit));
    }
    let tables = if let (None, Some(t)) = (&a.tables, &read.tables) {
        // a ledger's export
        t.clone()
    } else if a.source.is_dir() && a.tables.is_some() {
        return Err(CommandError::TablesWithTables(a.source.clone()));
    } else if a.source.is_dir() {
        // a --tables DIR
        a.source.clone()
    } else {
        match &a.tables {
            Some(t) => t.clone(),
            None if crate::source::is_database(&a.source) => {
                return Ok((ReadFrom::Database(a.source.clone()), ExitCode::Ok));
            }
            None => {
                return Err(UsageError::Input {
                    path: a.source.clone(),
                    message: "the calls are in the load's side tables: give --tables DIR (the --tables of the load), or a HOME to load now".into(),
                }
                .into());
            }
        }
    };
    Ok((ReadFrom::Tables(tables), ExitCode::Ok))
}
