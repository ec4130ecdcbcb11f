//! `nanoload sync HOME LEDGER.duckdb`: the summary lines on stderr.

use std::path::PathBuf;

use super::CommandError;
use crate::config::Options;
use crate::summary::ExitCode;

/// Keep every row ever seen in a ledger: add what is new, keep what the
/// agents deleted.
///
/// Extracts HOME as a load does and merges its rows (as staged, before
/// dedup, text and native included, secrets redacted) into LEDGER.duckdb,
/// a DuckDB database file nanoload keeps, in one transaction: a row seen
/// before is the same row (identity: the agent's record and which
/// occurrence of it its store holds, not where it stands nor how it is
/// redacted: a row redacted otherwise now is updated in place), a new row
/// is added, and a row its store no longer holds stays, with present =
/// false. Nothing is ever deleted from the ledger. Tables: loads (one row
/// per sync, numbered), ledger_events, ledger_llm_calls, ledger_sources (on
/// every row first_seen_load and last_seen_load, sync numbers, and
/// present), ledger_meta (the format). Secrets are always redacted: a
/// ledger is kept.
///
/// A row is marked gone only when the directory that held its store was
/// read and the store is absent: what cannot be read (a directory, a
/// store, a dangling link, a disk not mounted, a link not followed) keeps
/// its rows as they were, is said in one line, and makes the exit code 1;
/// prune then removes what that sync marked gone only with --force.
///
/// A ledger keeps the HOME of its first sync: a sync of another HOME is
/// refused, naming both, unless --add-home.
///
/// A killed sync leaves the ledger as it was; a second sync while one
/// writes is refused (LEDGER.duckdb.lock). A ledger of another format is
/// refused, never misread; one of the previous format is upgraded.
///
/// Exit codes: 0 synced; 1 synced, but some lines, records, stores or
/// directories could not be read (their rows keep their state); 2 nothing
/// done (a corrupt ledger, a ledger of another HOME among the reasons); 4
/// no agent state under HOME; 5 another sync or process holds the ledger
/// (try again later).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct SyncArgs {
    /// The home directory to read (e.g. a copy of /home/alice).
    #[arg(value_name = "HOME")]
    pub home: PathBuf,

    /// The ledger (created on the first sync; must be outside HOME).
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// Worker threads for extraction and DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB); larger merges spill to the
    /// private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    /// Follow symbolic links to agent state outside HOME.
    #[arg(long)]
    pub follow_links: bool,

    /// Keep WebUI reasoning records as `thinking` rows.
    #[arg(long)]
    pub include_thinking: bool,

    /// Also treat text matching REGEX as a secret (as for a load); repeatable.
    #[arg(long = "secret-pattern", value_name = "REGEX")]
    pub secret_patterns: Vec<String>,

    /// Keep a second HOME in this ledger. A ledger keeps the HOME of its
    /// first sync: a sync of another is refused (exit 2), since that HOME's
    /// stores have the same paths and the first HOME's rows would be taken
    /// for deleted. With it, each HOME's sync settles only the rows its own
    /// syncs first saw.
    #[arg(long)]
    pub add_home: bool,

    /// Print only what makes the exit code non-zero.
    #[arg(long, short)]
    pub quiet: bool,

    /// Show progress on stderr (`auto`: only on a terminal; never when a
    /// timer runs it).
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = crate::config::When::Auto)]
    pub progress: crate::config::When,
}

impl SyncArgs {
    /// The load options of this sync: the ledger stands where OUT does (the
    /// same checks: absolute, outside HOME).
    pub fn options(&self) -> Options {
        Options {
            threads: self.threads,
            memory_limit: self.memory_limit,
            follow_links: self.follow_links,
            include_thinking: self.include_thinking,
            secret_patterns: self.secret_patterns.clone(),
            quiet: self.quiet,
            progress: self.progress,
            ..Options::new(&self.home, &self.ledger)
        }
    }
}

pub fn run(args: SyncArgs) -> Result<ExitCode, CommandError> {
    let s = crate::ledger::sync(&args.options(), args.add_home)?;
    for line in s.lines(&args.ledger, args.quiet) {
        eprintln!("{line}");
    }
    Ok(s.exit)
}
