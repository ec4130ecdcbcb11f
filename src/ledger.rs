//! `nanoload sync HOME LEDGER.duckdb`: a history that outlives the agents'
//! own deletions. Every sync extracts HOME as a load does and merges the
//! staged rows into a DuckDB database file that nanoload keeps: rows seen
//! before are the same rows, new rows are added, and a row no longer on
//! disk stays, marked gone — only when the directory that held it was read
//! and its store is absent: what could not be seen keeps its rows as they
//! were. docs/design.md "Ledger".
//!
//! ```text
//! LEDGER.duckdb               written only by sync (and prune), one transaction each
//!   ledger_meta(key, value)   format, the staged columns it holds, who created it, the
//!                             HOMEs it keeps (`home`: its first sync's; --add-home adds one)
//!   loads                     one row per sync: sync (1, 2, …), load_id, started_at,
//!                             finished_at (UTC), home, options (no secret-bearing value),
//!                             added, changed, gone, rows, present, unreadable (what it
//!                             could not read: prune asks --force for what it marked gone)
//!   ledger_events             every staged event row ever seen: the staged columns with
//!                             text and native inline, row_key, first_seen_load and
//!                             last_seen_load (sync numbers), present, store_path,
//!                             gone_load (the sync that marked it gone)
//!   ledger_llm_calls          every staged usage row ever seen, the same way
//!   ledger_sources            every store ever seen: its latest `sources` row,
//!                             first_seen_load, last_seen_load, present, state_key
//!                             (the `--cache` key of its files: unchanged → not read
//!                             again), gone_load
//!   ledger_diagnostics        what the latest sync could not read (bad lines, warnings)
//! LEDGER.duckdb.lock          locked (flock) by the sync that writes: a second is refused
//! ```
//! One row of `ledger_events` is one row a load stages (before dedup: the
//! steps decide over the whole history when the ledger is exported). Its
//! identity (`row_key`) is the agent's record — every staged column but
//! where it stands (`seq`, `source_line`), the store's role and nanoload's
//! rendering of it (`text`, `native`, `x_match`: redaction), with
//! `x_content`, the digest of its text and native as read, in their place —
//! and which occurrence of that record it is in its store, so a record that
//! moves (a file rewritten around it) is still the same row, a record
//! rendered again (a new `--secret-pattern`) is updated in place, and a
//! record rewritten in place is a new row and its old version is gone.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use duckdb::Connection;
use std::sync::Arc;

use crate::config::{Config, ConfigError, Options};
use crate::diag::diagnostics_schema;
use crate::discover::discover;
use crate::engine::{sql_list, sql_str};
use crate::extract::{ExtractError, extract};
use crate::progress::Progress;
use crate::rundir::{RunDir, RunDirError};
use crate::schema::{events_schema, llm_calls_schema, sources_schema};
use crate::stage::STAGE_ONLY;
use crate::summary::ExitCode;

/// The ledger format this build reads and writes (a ledger of format 2 is
/// upgraded by its first sync: [`upgrade`]).
pub const FORMAT: &str = "3";

/// The format this build upgrades from.
const EARLIER_FORMAT: &str = "2";

/// Staged event columns that are nanoload's rendering of a record, not the
/// record: redaction changes them (a new `--secret-pattern`, a scanner fix).
/// Not part of a row's identity (`x_content` stands for the text and native
/// as read); a sync that sees the row again takes their new values.
const RENDERED: [&str; 3] = ["text", "native", "x_match"];

/// The column that holds a row's content as read (`store::content_digest`):
/// added by the upgrade from format 2, whose rows lack it until a sync
/// sees them again.
const CONTENT: &str = "x_content";

/// Columns kept but not part of a row's identity: where it stands in its
/// store and the store's role (a database beside namespace JSONL makes the
/// JSONL secondary). A sync that sees the row again takes their new values.
const PLACE: [&str; 3] = ["seq", "source_line", "source_role"];

/// A sync that changed nothing in the ledger (exit code 2), or could not
/// start.
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error("internal: {0}")]
    Discover(#[from] globset::Error),
    #[error(transparent)]
    Extract(#[from] ExtractError),
    #[error("{}: {message}", path.display())]
    Ledger { path: PathBuf, message: String },
    /// Another sync holds the ledger (exit code 5).
    #[error(
        "{}: another nanoload sync is writing this ledger (lock {} is held); nothing done, try again when it has finished",
        path.display(),
        lock.display()
    )]
    Busy { path: PathBuf, lock: PathBuf },
    /// Another process holds DuckDB's lock on the ledger (exit code 5).
    #[error(
        "{}: another process{} has this ledger open; nothing done, try again when it has finished",
        path.display(),
        pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
    )]
    InUse { path: PathBuf, pid: Option<u32> },
    /// Not a DuckDB database, or one DuckDB cannot read (exit code 2).
    #[error("{}: corrupt: {what}; nothing done", path.display())]
    Corrupt { path: PathBuf, what: String },
    /// The ledger cannot be read at all.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// `prune` without `--force`: some of what it would remove was marked
    /// gone by a sync that could not read all of HOME (exit code 2).
    #[error(
        "{}: not pruned: {rows} rows, {calls} usage records and {stores} stores it would remove were marked gone by a sync that could not read all of HOME ({syncs}); give --force to remove them anyway; nothing done",
        path.display()
    )]
    PruneRefused {
        path: PathBuf,
        rows: u64,
        calls: u64,
        stores: u64,
        /// Which syncs: `sync 2`, `syncs 2, 5`, and those of an earlier
        /// nanoload, which did not record what they could read.
        syncs: String,
    },
    #[error("{}: no agent state found", home.display())]
    NoStores { home: PathBuf },
    /// A sync of a HOME the ledger does not keep, without `--add-home`
    /// (exit code 2): its stores would be taken for the others' and their
    /// rows for deleted.
    #[error(
        "{}: this ledger keeps the history of HOME{} {}, not of {}; nothing done (a sync of another HOME would take the first HOME's rows for deleted: give --add-home to keep both HOMEs in this ledger)",
        path.display(),
        if homes.len() > 1 { "s" } else { "" },
        homes.join(", "),
        home.display()
    )]
    OtherHome {
        path: PathBuf,
        /// The HOMEs it keeps, as their syncs recorded them.
        homes: Vec<String>,
        home: PathBuf,
    },
    /// LEDGER names a file that is not a nanoload ledger (exit code 2):
    /// never written to.
    #[error(
        "{}: it is {}, not a nanoload ledger; nothing done (a ledger is a file `nanoload sync` created)",
        path.display(),
        what.describe()
    )]
    NotALedger {
        path: PathBuf,
        what: crate::dest::What,
    },
}

impl SyncError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            SyncError::Busy { .. } | SyncError::InUse { .. } => ExitCode::Busy,
            SyncError::NoStores { .. } => ExitCode::NoStores,
            _ => ExitCode::Failed,
        }
    }
}

/// What one sync did, per table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Merged {
    /// Rows first seen now.
    pub added: u64,
    /// Rows seen before whose place changed, or that were gone and are back.
    pub changed: u64,
    /// Rows present before that this sync did not see (their store read to
    /// its end, or no longer on disk).
    pub gone: u64,
    /// Rows in the ledger, and of those on disk at this sync.
    pub rows: u64,
    pub present: u64,
}

/// What `nanoload sync` reports.
#[derive(Debug, Clone)]
pub struct SyncSummary {
    /// The sync's number in the ledger (1, 2, …): `loads.sync`, the
    /// `first_seen_load` and `last_seen_load` of the rows.
    pub sync: i64,
    pub load_id: String,
    pub events: Merged,
    pub llm_calls: Merged,
    pub exit: ExitCode,
    /// One line per diagnostic of reading HOME (bad lines, unreadable
    /// stores, warnings; an unchanged store's as its last read found them),
    /// as a load prints them, with whether it makes the exit code 1.
    pub diagnostics: Vec<(bool, String)>,
    /// Stores read, and stores whose files are as the ledger last read them.
    pub stores_read: usize,
    pub stores_unchanged: usize,
    /// Stores not read because a file they read is in a place this sync
    /// could not see (their rows stay as they were).
    pub stores_held: usize,
}

impl SyncSummary {
    /// The stderr lines: each diagnostic (`quiet`: only those that make the
    /// exit code non-zero), then (unless `quiet`) the summary.
    pub fn lines(&self, ledger: &Path, quiet: bool) -> Vec<String> {
        let mut out: Vec<String> = (self.diagnostics.iter())
            .filter(|(failure, _)| *failure || !quiet)
            .map(|(_, l)| l.clone())
            .collect();
        if quiet {
            return out;
        }
        let m = |what: &str, m: &Merged| {
            format!(
                "nanoload: {what}: {} added, {} changed, {} gone; {} in the ledger, {} on disk",
                m.added, m.changed, m.gone, m.rows, m.present
            )
        };
        out.extend([
            format!(
                "nanoload: synced into {} (sync {}, load {})",
                ledger.display(),
                self.sync,
                self.load_id
            ),
            format!(
                "nanoload: stores: {} read, {} unchanged since the ledger read them{}",
                self.stores_read,
                self.stores_unchanged,
                match self.stores_held {
                    0 => String::new(),
                    n => format!(", {n} held back (they read a file that could not be read)"),
                }
            ),
            m("rows", &self.events),
            m("nanobot usage records (llm_usage.sqlite3)", &self.llm_calls),
        ]);
        out
    }
}

/// The lock file of a ledger: `LEDGER.lock` beside it.
pub fn lock_path(ledger: &Path) -> PathBuf {
    let mut name = ledger.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

/// The error of a ledger DuckDB could not open (`writing`: opened to be
/// written), by what the file is ([`crate::dbfile::why_unopened`]).
fn unopened(path: &Path, e: &duckdb::Error, writing: bool) -> SyncError {
    use crate::dbfile::Unopened;
    let path = path.to_path_buf();
    match crate::dbfile::why_unopened(&path, e, writing) {
        Unopened::Io(source) => SyncError::Io { path, source },
        Unopened::Corrupt(what) => SyncError::Corrupt { path, what },
        Unopened::Busy(pid) => SyncError::InUse { path, pid },
        Unopened::Other(message) => SyncError::Ledger { path, message },
    }
}

/// Take the ledger's lock for this process (released when the file is
/// dropped, or the process ends however it ends).
fn lock(ledger: &Path) -> Result<File, SyncError> {
    let path = lock_path(ledger);
    let file = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| SyncError::Ledger {
            path: path.clone(),
            message: format!("cannot open the lock file: {e}"),
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(SyncError::Busy {
            path: ledger.to_path_buf(),
            lock: path,
        }),
        Err(std::fs::TryLockError::Error(e)) => Err(SyncError::Ledger {
            path,
            message: format!("cannot lock: {e}"),
        }),
    }
}

/// Compress what this connection writes into the ledger (its current
/// database) with zstd where its storage version (v1.2.0 or later) has
/// DuckDB's zstd compression of strings. A row's text and native, most of a
/// ledger's bytes, stay uncompressed under DuckDB's own choice (strings
/// longer than a block's share); with zstd the file is about the size of
/// the same rows as zstd Parquet. A ledger created by an earlier nanoload is
/// in v1.0.0, where forcing zstd only makes the file larger: left as it is.
fn compress_strings(conn: &Connection) -> duckdb::Result<()> {
    let version: Option<String> = conn.query_row(
        "SELECT tags['storage_version'] FROM duckdb_databases()
         WHERE database_name = current_database()",
        [],
        |r| r.get(0),
    )?;
    if version.as_deref().is_some_and(storage_has_zstd) {
        conn.execute_batch("SET force_compression = 'zstd';")?;
    }
    Ok(())
}

/// `v1.2.0+`, `v2.0.0+` → true; `v1.0.0+`, `v0.10.2` → false.
fn storage_has_zstd(version: &str) -> bool {
    let mut parts = version
        .trim_start_matches('v')
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    (major, minor) >= (1, 2)
}

/// Sync HOME into the ledger (`opts.out` is the ledger: the checks of an
/// output hold for it — absolute, outside HOME).
/// A ledger belongs to the HOME of its first sync (`ledger_meta` key
/// `home`): a sync of another is refused ([`SyncError::OtherHome`]) unless
/// `add_home`, which adds it.
pub fn sync(opts: &Options, add_home: bool) -> Result<SyncSummary, SyncError> {
    let started = SystemTime::now();
    let config = Config::new(opts)?;
    let Some(ledger) = config.outputs.out.clone() else {
        return Err(ConfigError::Usage("sync needs LEDGER.duckdb".into()).into());
    };
    // a file that is not a DuckDB database is never taken for a ledger
    // (checked again under the lock; no lock file is left beside it)
    not_a_ledger_file(&ledger)?;
    let lock_existed = lock_path(&ledger).exists();
    let lock_file = lock(&ledger)?;
    let new = !ledger.exists();
    let result = not_a_ledger_file(&ledger)
        .and_then(|()| sync_locked(opts, config, &ledger, started, add_home));
    if matches!(result, Err(SyncError::NotALedger { .. })) && !lock_existed {
        // nothing is left beside a file that is not ours
        drop(lock_file);
        let _ = std::fs::remove_file(lock_path(&ledger));
    }
    if result.is_err() && new {
        // a first sync that failed leaves no ledger behind (an existing
        // one is as it was: the merge is one transaction)
        let _ = std::fs::remove_file(&ledger);
        let _ = std::fs::remove_file(crate::engine::wal_of(&ledger));
    }
    result
}

/// Refuse a file at LEDGER that is not a DuckDB database (by its magic
/// bytes: a Parquet OUT, a text, a SQLite database).
fn not_a_ledger_file(ledger: &Path) -> Result<(), SyncError> {
    match crate::dest::not_duckdb(ledger) {
        Ok(None) => Ok(()),
        Ok(Some(what)) => Err(SyncError::NotALedger {
            path: ledger.to_path_buf(),
            what,
        }),
        Err(e) => Err(SyncError::Ledger {
            path: ledger.to_path_buf(),
            message: format!("cannot read it: {e}"),
        }),
    }
}

/// [`sync`] under the ledger's lock.
fn sync_locked(
    opts: &Options,
    mut config: Config,
    ledger: &Path,
    started: SystemTime,
    add_home: bool,
) -> Result<SyncSummary, SyncError> {
    use rayon::prelude::*;
    let ledger = ledger.to_path_buf();
    let fail = |e: duckdb::Error| SyncError::Ledger {
        path: ledger.clone(),
        message: crate::diag::one_line(&e.to_string()),
    };
    let run_dir = RunDir::create(&config.home)?;
    // a new ledger in storage version v1.2.0, the first whose strings zstd
    // compresses (docs/design.md "The ledger": its size); an existing one
    // keeps the version it has
    let existed = ledger.exists();
    let version = if existed {
        ""
    } else {
        " (STORAGE_VERSION 'v1.2.0')"
    };

    let conn = crate::engine::open_in_memory(&crate::engine::Settings {
        memory_limit: config.memory_limit,
        spill: Some(&run_dir.spill_dir()),
        threads: Some(config.threads),
    })
    .map_err(fail)?;
    conn.execute_batch(&format!(
        "ATTACH {} AS ledger{version}; USE ledger;",
        sql_str(&ledger)
    ))
    .map_err(|e| {
        if existed {
            unopened(&ledger, &e, true)
        } else {
            fail(e)
        }
    })?;
    compress_strings(&conn).map_err(fail)?;
    // a ledger of another format is refused before anything is read
    let ledger_state = state(&conn).map_err(fail)?;
    let known = match &ledger_state {
        State::Other(refused) => {
            return Err(SyncError::Ledger {
                path: ledger.clone(),
                message: refused.clone(),
            });
        }
        // a database that holds anything is someone else's: never given
        // the ledger's tables
        State::Absent if existed => match user_tables(&conn).map_err(fail)? {
            tables if tables.is_empty() => Default::default(),
            tables => {
                return Err(SyncError::NotALedger {
                    path: ledger.clone(),
                    what: crate::dest::What::DuckDb { tables: Ok(tables) },
                });
            }
        },
        State::Absent => Default::default(),
        State::Ours | State::Earlier => known_stores(&conn).map_err(fail)?,
    };
    let has_rows = !matches!(ledger_state, State::Absent);
    // another HOME's stores have the same relative paths (every home has
    // a `.nanobot`): its sync would mark this HOME's rows gone
    if has_rows && !add_home {
        let homes = homes(&conn).map_err(fail)?;
        let home = config.home.to_string_lossy();
        if !homes.is_empty() && !homes.iter().any(|h| *h == home) {
            return Err(SyncError::OtherHome {
                path: ledger.clone(),
                homes,
                home: config.home.clone(),
            });
        }
    }
    let progress = Progress::start(opts.progress_shown());
    let mut discovery = discover(&config.home, config.follow_links)?;
    if discovery.stores.is_empty() && discovery.diagnostics.is_empty() {
        return Err(SyncError::NoStores {
            home: opts.home.clone(),
        });
    }
    // what could not be seen keeps its rows: said once per place, on the
    // line of its diagnostic
    let not_seen = unseen(&conn, has_rows, &config.home, &mut discovery).map_err(fail)?;
    let load_id = discovery.load_id(&config.load_options);
    // a store whose files are as the ledger last read them (the key of
    // `--cache`: every byte hashed) is not read again
    let options = crate::cache::options_key(&config.extract, config.follow_links);
    let keys: Vec<String> = discovery
        .stores
        .par_iter()
        .map(|s| crate::cache::store_key(&options, s, &config.home))
        .collect();
    let mut unchanged = Vec::new();
    let mut read = Vec::new();
    let mut store_keys = Vec::new();
    let crate::discover::Discovery {
        stores,
        diagnostics: found,
        links_skipped,
        files_seen,
        unseen: places,
    } = discovery;
    let mut files = Vec::new();
    let mut held = 0;
    for (k, (store, key)) in stores.into_iter().zip(keys).enumerate() {
        let id = (
            store.kind.to_string(),
            store.instance.clone(),
            store.rel.clone(),
        );
        for f in std::iter::once(store.rel.clone())
            .chain(store.parts.iter().map(|p| p.rel.clone()))
            .chain(store.sidecars.iter().map(|p| p.rel.clone()))
        {
            files.push((store.instance.clone(), store.rel.clone(), f));
        }
        // a store that reads a file in a place not seen is not read: its
        // rows stay as they were
        if not_seen.held.contains(&k) {
            held += 1;
            continue;
        }
        let same = known.get(&id) == Some(&key);
        store_keys.push((id.clone(), key));
        if same {
            unchanged.push(id);
        } else {
            read.push(store);
        }
    }
    let to_read = crate::discover::Discovery {
        stores: read,
        diagnostics: found,
        links_skipped,
        files_seen,
        unseen: places,
    };
    // the ledger keeps every row's text and native itself, the keys every
    // earlier build staged, and each row's content as read (its identity)
    config.extract.stage_all_wide = true;
    config.extract.keys = crate::store::KeyDigest::Sha256;
    config.extract.content_digests = true;
    let extraction = extract(
        &to_read,
        &config.home,
        &config.extract,
        &run_dir,
        config.threads,
        None,
        &progress,
    )?;
    crate::run::test_pause("staged");
    let staged = &extraction.staged;
    let stores = Stores {
        unchanged: &unchanged,
        keys: &store_keys,
        files: &files,
        unseen: &not_seen.places,
    };
    let merge = || -> Result<(i64, Merged, Merged), SyncError> {
        conn.execute_batch("BEGIN TRANSACTION;").map_err(fail)?;
        if matches!(ledger_state, State::Earlier) {
            upgrade(&conn).map_err(fail)?;
        }
        if let Some(refused) = prepare(&conn).map_err(fail)? {
            return Err(SyncError::Ledger {
                path: ledger.clone(),
                message: refused,
            });
        }
        merged(&conn, staged, &stores, &load_id, &config, started).map_err(fail)
    };
    let (sync, events, llm_calls) = match merge() {
        Ok(m) => m,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK;");
            return Err(e);
        }
    };
    conn.execute_batch("CHECKPOINT;").map_err(fail)?;
    // what HOME holds that could not be read: this sync's and the unchanged
    // stores' (a load would read and report them again)
    let all = crate::engine::read_diagnostics(&conn, "ledger_diagnostics").map_err(fail)?;
    let exit = ExitCode::of(&all);
    let diagnostics = all
        .iter()
        .map(|d| (d.kind.is_read_failure(), format!("nanoload: {d}")))
        .collect();
    Ok(SyncSummary {
        sync,
        load_id,
        events,
        llm_calls,
        exit,
        diagnostics,
        stores_read: to_read.stores.len(),
        stores_unchanged: unchanged.len(),
        stores_held: held,
    })
}

/// The HOMEs a ledger keeps: those `ledger_meta` records (key `home`), or,
/// in a ledger of a build that did not record them, those its syncs read
/// (`loads.home`).
fn homes(conn: &Connection) -> Result<Vec<String>, duckdb::Error> {
    let mut s = conn.prepare(
        "SELECT DISTINCT value FROM ledger_meta WHERE key = 'home'
         UNION SELECT DISTINCT home FROM loads
         WHERE home IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_meta WHERE key = 'home')
         ORDER BY 1",
    )?;
    let homes = s.query_map([], |r| r.get::<_, String>(0))?;
    homes.collect()
}

/// A store's identity in the ledger: kind, instance, path.
type StoreId = (String, String, String);

/// What a sync could not see (docs/design.md "Ledger", the gone rule).
#[derive(Debug, Default)]
struct NotSeen {
    /// Paths relative to HOME ("" is HOME itself) below which no row and
    /// no store is marked gone: the places discovery could not see into,
    /// an empty directory where an instance the ledger holds was, and the
    /// files of the stores held back.
    places: Vec<String>,
    /// The stores (indices into discovery's) not read this sync: a file
    /// they read besides their own (`store::Reads::Also`: a namespace's
    /// `.workspace`) is in such a place, and their rows would lose what it
    /// tells them.
    held: std::collections::BTreeSet<usize>,
}

/// The places this sync cannot see, with what the ledger holds there: each
/// is said on one line — its discovery diagnostic (a warning becomes
/// `unreadable`), or a new `unreadable`/`skipped_link` one — ending with
/// what the ledger keeps of it, and makes the exit code 1. `has_rows`: the
/// ledger has its tables (not a new one).
fn unseen(
    conn: &Connection,
    has_rows: bool,
    home: &Path,
    d: &mut crate::discover::Discovery,
) -> Result<NotSeen, duckdb::Error> {
    use crate::diag::{DiagKind, Diagnostic};
    use crate::discover::Unseen;
    let mut places: Vec<(Unseen, DiagKind)> = d
        .unseen
        .iter()
        .map(|u| {
            let kind = if u.link {
                DiagKind::SkippedLink
            } else {
                DiagKind::Unreadable
            };
            (u.clone(), kind)
        })
        .collect();
    // the stores the ledger holds as present, by path
    let present: Vec<(String, String)> = if has_rows {
        let mut stmt = conn.prepare(
            "SELECT instance, source_path FROM ledger_sources WHERE present ORDER BY ALL",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    // an instance the ledger holds of which nothing is found, whose root —
    // or a directory above it, or a nanoclaw install's `data/` — is an
    // empty directory: a disk not mounted there, not an agent that deleted
    // its history (which leaves its instance's own files; an instance
    // removed whole leaves no directory, and its rows are gone)
    let found: std::collections::BTreeSet<&str> =
        d.stores.iter().map(|s| s.instance.as_str()).collect();
    let mut instances: Vec<&str> = present.iter().map(|(i, _)| i.as_str()).collect();
    instances.dedup();
    for i in instances {
        if found.contains(i) || places.iter().any(|(p, _)| p.holds(i)) {
            continue;
        }
        let mut dirs: Vec<String> = Vec::new();
        if i != "." {
            let parts: Vec<&str> = i.split('/').collect();
            dirs.extend((1..=parts.len()).map(|k| parts[..k].join("/")));
        }
        let data = if i == "." {
            "data".to_string()
        } else {
            format!("{i}/data")
        };
        if present
            .iter()
            .any(|(_, p)| p.starts_with(&format!("{data}/")))
        {
            dirs.push(data);
        }
        for dir in dirs {
            let Ok(mut entries) = std::fs::read_dir(home.join(&dir)) else {
                break;
            };
            if entries.next().is_none() {
                places.push((
                        Unseen {
                            rel: dir,
                            why: "an empty directory where the ledger's stores were (a disk not mounted?)"
                                .into(),
                            link: false,
                        },
                    DiagKind::Unreadable,
                ));
                break;
            }
        }
    }
    // the files stores read besides their own (`Reads::Also`); one that is
    // there but cannot be opened is a place not seen too (a load reads it
    // as absent: the rows would lose what it tells them)
    let reads: Vec<(usize, Vec<String>)> = d
        .stores
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match crate::sources::REGISTRY[s.extractor].reads {
            crate::store::Reads::Also(files) => Some((k, files(&s.rel, home))),
            _ => None,
        })
        .collect();
    let mut checked = std::collections::BTreeSet::new();
    for f in reads.iter().flat_map(|(_, files)| files) {
        if !checked.insert(f.as_str()) || places.iter().any(|(p, _)| p.holds(f)) {
            continue;
        }
        let path = home.join(f);
        if path.is_file()
            && let Err(e) = std::fs::File::open(&path)
        {
            places.push((
                Unseen {
                    rel: f.clone(),
                    why: e.to_string(),
                    link: false,
                },
                DiagKind::Unreadable,
            ));
        }
    }
    if places.is_empty() {
        return Ok(NotSeen::default());
    }
    // the stores that read a file in such a place
    let mut out = NotSeen::default();
    let mut held_in = vec![0usize; places.len()];
    for (k, files) in &reads {
        let (k, s) = (*k, &d.stores[*k]);
        if let Some(p) = files
            .iter()
            .find_map(|f| places.iter().position(|(p, _)| p.holds(f)))
        {
            out.held.insert(k);
            held_in[p] += 1;
            out.places.extend(s.files().map(|(f, _, _)| f.to_string()));
        }
    }
    for ((place, kind), held) in places.iter().zip(held_in) {
        out.places.push(place.rel.clone());
        // what the ledger keeps there: counted only where it holds a store
        let (mut rows, mut calls) = (0u64, 0u64);
        if present.iter().any(|(_, p)| place.holds(p)) {
            let count = |table: &str| -> Result<u64, duckdb::Error> {
                conn.query_row(
                    &format!(
                        "SELECT count(*) FROM {table} WHERE present
                           AND ($1 = '' OR source_path = $1 OR starts_with(source_path, $1 || '/')
                                OR store_path = $1 OR starts_with(store_path, $1 || '/'))"
                    ),
                    [&place.rel],
                    |r| r.get::<_, i64>(0),
                )
                .map(|n| n as u64)
            };
            rows = count("ledger_events")?;
            calls = count("ledger_llm_calls")?;
        }
        if rows + calls == 0 && held == 0 {
            continue;
        }
        let mut said = Vec::new();
        if rows + calls > 0 {
            let what = match (rows, calls) {
                (r, 0) => format!("{r} rows"),
                (0, c) => format!("{c} usage records"),
                (r, c) => format!("{r} rows and {c} usage records"),
            };
            said.push(format!(
                "the ledger keeps its {what} there as they were, none marked gone"
            ));
        }
        if held > 0 {
            said.push(format!(
                "{held} stores that read a file there are not read this time (their rows stay as they were)"
            ));
        }
        let said = said.join("; ");
        // HOME is named `.` on a line
        let path = if place.rel.is_empty() {
            "."
        } else {
            &place.rel
        };
        match d
            .diagnostics
            .iter_mut()
            .find(|x| x.source_path == path && x.source_line.is_none())
        {
            Some(x) => {
                if !x.kind.is_read_failure() {
                    x.kind = *kind;
                }
                x.message = format!("{}; {said}", x.message);
            }
            None => d.diagnostics.push(Diagnostic::new(
                *kind,
                path,
                format!("{}; {said}", place.why),
            )),
        }
    }
    d.diagnostics.sort();
    Ok(out)
}

/// What a sync knows of the stores besides their staged rows.
struct Stores<'a> {
    /// The stores whose files are as the ledger last read them: not read.
    unchanged: &'a [StoreId],
    /// The key of every store that has one ([`crate::cache::store_key`]).
    keys: &'a [(StoreId, String)],
    /// (instance, store path, file path) of every file of every store: the
    /// store a row of that file belongs to.
    files: &'a [(String, String, String)],
    /// Paths (relative to HOME, "" HOME itself) this sync could not see:
    /// no row or store at or below one is marked gone ([`NotSeen`]).
    unseen: &'a [String],
}

/// The stores the ledger last read to their end, with their keys.
fn known_stores(
    conn: &Connection,
) -> Result<std::collections::HashMap<StoreId, String>, duckdb::Error> {
    let mut stmt = conn.prepare(
        "SELECT source_kind, instance, source_path, state_key FROM ledger_sources
         WHERE present AND state_key IS NOT NULL",
    )?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?)))?;
    rows.collect()
}

/// The merge of one sync, inside its transaction: sources, events, calls,
/// then the `loads` row; committed here.
fn merged(
    conn: &Connection,
    staged: &crate::stage::Staged,
    stores: &Stores,
    load_id: &str,
    config: &Config,
    started: SystemTime,
) -> Result<(i64, Merged, Merged), duckdb::Error> {
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE cur_sources AS SELECT * FROM read_parquet({});
         CREATE TEMP TABLE unchanged_stores (source_kind VARCHAR, instance VARCHAR, source_path VARCHAR);
         CREATE TEMP TABLE store_keys (source_kind VARCHAR, instance VARCHAR, source_path VARCHAR, state_key VARCHAR);
         CREATE TEMP TABLE store_files (instance VARCHAR, store_path VARCHAR, file_path VARCHAR);
         CREATE TEMP TABLE unseen_places (rel VARCHAR);",
        sql_str(&staged.sources)
    ))?;
    {
        let mut app = conn.appender("unchanged_stores")?;
        for (k, i, p) in stores.unchanged {
            app.append_row([k, i, p])?;
        }
        app.flush()?;
        let mut app = conn.appender("store_keys")?;
        for ((k, i, p), key) in stores.keys {
            app.append_row([k, i, p, key])?;
        }
        app.flush()?;
        let mut app = conn.appender("store_files")?;
        for (i, store, file) in stores.files {
            app.append_row([i, store, file])?;
        }
        app.flush()?;
        let mut app = conn.appender("unseen_places")?;
        for rel in stores.unseen {
            app.append_row([rel])?;
        }
        app.flush()?;
    }
    // the HOME of this sync is one the ledger keeps (recorded at its first
    // sync; a ledger of an earlier build records those its syncs read)
    let home = config.home.to_string_lossy().into_owned();
    conn.execute(
        "INSERT INTO ledger_meta
         SELECT 'home', h FROM (SELECT DISTINCT home AS h FROM loads WHERE home IS NOT NULL
                                UNION SELECT ?)
         WHERE h NOT IN (SELECT value FROM ledger_meta WHERE key = 'home')
         ORDER BY h",
        [&home],
    )?;
    let kept_homes: i64 = conn.query_row(
        "SELECT count(*) FROM ledger_meta WHERE key = 'home'",
        [],
        |r| r.get(0),
    )?;
    // in a ledger of several HOMEs a sync settles only what its own HOME's
    // syncs first saw: the others' stores have the same relative paths
    let mine = |col: &str| {
        if kept_homes > 1 {
            format!(
                " AND {col} IN (SELECT sync FROM loads WHERE home = {})",
                crate::steps::sql_text(&home)
            )
        } else {
            String::new()
        }
    };
    // a path at or below a place this sync could not see (no statement
    // gains the test when every place was seen)
    let seen = |col: &str| {
        if stores.unseen.is_empty() {
            "true".to_string()
        } else {
            format!(
                "NOT EXISTS (SELECT 1 FROM unseen_places u
                             WHERE u.rel = '' OR {col} = u.rel OR starts_with({col}, u.rel || '/'))"
            )
        }
    };
    // the stores whose rows this sync settles: those it read to their end,
    // and those no longer on disk (neither read nor unchanged) where it
    // could see: the directory that held them was read; a present row of
    // theirs that it did not see is gone (a row's store: `store_path`, the
    // store's main path, whichever of its files the row came from: a WebUI
    // segment, a checkpoint sidecar)
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE settled AS
         SELECT instance, source_path FROM cur_sources WHERE status IN ('ok', 'skipped')
         UNION
         SELECT instance, source_path FROM ledger_sources l
         WHERE NOT EXISTS (SELECT 1 FROM cur_sources c
                           WHERE c.instance = l.instance AND c.source_path = l.source_path)
           AND NOT EXISTS (SELECT 1 FROM unchanged_stores u
                           WHERE u.instance = l.instance AND u.source_path = l.source_path)
           AND {}{};",
        seen("l.source_path"),
        mine("l.first_seen_load")
    ))?;
    // besides: a row of a file below a place not seen (a WebUI segment in a
    // directory that could not be listed), and a WebUI reasoning row of a
    // transcript read without `--include-thinking`, which gives none
    let mut spared = format!(" AND {}{}", seen("source_path"), mine("first_seen_load"));
    if !config.extract.include_thinking {
        spared.push_str(&format!(
            " AND NOT (turn_type = 'thinking' AND source_kind = {} AND (instance, store_path) IN
                   (SELECT instance, source_path FROM cur_sources))",
            crate::steps::sql_text(crate::sources::nanobot::webui_transcript::KIND)
        ));
    }
    let legacy = legacy_keys(conn)?;
    // this sync's number: a load_id names the files and options, and an
    // unchanged home gives the same one again
    let sync: i64 = conn.query_row("SELECT coalesce(max(sync), 0) + 1 FROM loads", [], |r| {
        r.get(0)
    })?;
    let events = merge_table(
        conn,
        &Table {
            name: "ledger_events",
            schema: events_schema(),
            occurrence: "source_line NULLS LAST, seq NULLS LAST, x_row",
            spared: &spared,
            legacy,
        },
        &staged.events,
        sync,
    )?;
    let calls = merge_table(
        conn,
        &Table {
            name: "ledger_llm_calls",
            schema: llm_calls_schema(),
            occurrence: "id",
            spared: &format!(" AND {}{}", seen("source_path"), mine("first_seen_load")),
            legacy: false,
        },
        &staged.llm_calls,
        sync,
    )?;
    merge_sources(
        conn,
        sync,
        &format!("{}{}", seen("source_path"), mine("first_seen_load")),
    )?;
    if legacy {
        // every row of the earlier format seen again has its new identity:
        // no sync need compute the earlier one any more
        let left: i64 = conn.query_row(
            &format!("SELECT count(*) FROM ledger_events WHERE {CONTENT} IS NULL"),
            [],
            |r| r.get(0),
        )?;
        if left == 0 {
            conn.execute_batch("DELETE FROM ledger_meta WHERE key = 'legacy_row_keys';")?;
        }
    }
    // the diagnostics of reading HOME: the unchanged stores' as the ledger
    // has them, the rest this sync's (what an export stages, as a load does)
    conn.execute_batch(&format!(
        "DELETE FROM ledger_diagnostics
         WHERE instance IS NULL OR (instance || chr(31) || source_path) NOT IN
             (SELECT f.instance || chr(31) || f.file_path FROM store_files f
              JOIN unchanged_stores u ON u.instance = f.instance AND u.source_path = f.store_path);
         INSERT INTO ledger_diagnostics SELECT *, {sync} FROM read_parquet({});",
        sql_str(&staged.diagnostics)
    ))?;
    // what this sync could not read: a store, a directory, a link (prune
    // asks --force to remove what such a sync marked gone)
    let unreadable: i64 = conn.query_row(
        "SELECT count(*) FROM ledger_diagnostics WHERE kind IN (?, ?)",
        [
            crate::diag::DiagKind::Unreadable.as_str(),
            crate::diag::DiagKind::SkippedLink.as_str(),
        ],
        |r| r.get(0),
    )?;
    let finished = SystemTime::now();
    conn.execute(
        "INSERT INTO loads (sync, load_id, started_at, finished_at, home, options, added, changed,
                            gone, rows, present, unreadable)
         VALUES (?, ?, make_timestamp(?), make_timestamp(?), ?, ?, ?, ?, ?, ?, ?, ?)",
        duckdb::params![
            sync,
            load_id,
            micros(started),
            micros(finished),
            config.home.to_string_lossy(),
            config.shown_options(),
            (events.added + calls.added) as i64,
            (events.changed + calls.changed) as i64,
            (events.gone + calls.gone) as i64,
            (events.rows + calls.rows) as i64,
            (events.present + calls.present) as i64,
            unreadable,
        ],
    )?;
    conn.execute_batch(VERSIONS)?;
    crate::run::test_pause("merged");
    conn.execute_batch("COMMIT;")?;
    Ok((sync, events, calls))
}

/// `ledger_versions`: a record the agent rewrote in place, as the pair of
/// its rows — the old version (gone) and the one first seen in the next
/// sync at the same place of the same store, the same kind of row
/// (`turn_type`, `x_sub`) and the same message (nanobot's `x_msgkey`, role
/// and timestamp as written; nanoclaw's `x_id`; else the same line and
/// seq). A view, made again by every sync, so a ledger of an earlier build
/// gains it.
const VERSIONS: &str = "CREATE OR REPLACE VIEW ledger_versions AS
SELECT o.row_key AS old_row_key, n.row_key AS new_row_key,
       o.agent, o.instance, o.session_id, o.source_path, o.turn_type,
       o.last_seen_load AS old_last_seen_load, n.first_seen_load AS new_first_seen_load,
       o.text AS old_text, n.text AS new_text
FROM ledger_events o
JOIN ledger_events n
  ON n.instance = o.instance AND n.source_path = o.source_path
 AND n.source_kind = o.source_kind AND n.turn_type = o.turn_type
 AND n.x_sub IS NOT DISTINCT FROM o.x_sub
 AND n.first_seen_load = o.last_seen_load + 1
 AND CASE WHEN o.x_msgkey IS NOT NULL THEN n.x_msgkey = o.x_msgkey
          WHEN o.x_id IS NOT NULL THEN n.x_id = o.x_id
          ELSE n.source_line IS NOT DISTINCT FROM o.source_line AND n.seq IS NOT DISTINCT FROM o.seq END
WHERE NOT o.present AND n.row_key <> o.row_key;";

fn micros(t: SystemTime) -> i64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// The DuckDB type of a staged Arrow column.
fn sql_type(t: &DataType) -> &'static str {
    match t {
        DataType::Int32 => "INTEGER",
        DataType::Int64 => "BIGINT",
        DataType::Boolean => "BOOLEAN",
        DataType::Timestamp(_, _) => "TIMESTAMP",
        _ => "VARCHAR",
    }
}

/// `f` of each item, joined by `sep` (the SQL lists of the merge).
fn joined<I: IntoIterator>(items: I, sep: &str, f: impl Fn(I::Item) -> String) -> String {
    items.into_iter().map(f).collect::<Vec<_>>().join(sep)
}

/// The kept columns of a staged schema, quoted, each after `prefix`.
fn column_list(schema: &SchemaRef, prefix: &str) -> String {
    joined(kept(schema), ", ", |(n, _)| format!("{prefix}\"{n}\""))
}

/// The columns a ledger table keeps of a staged schema.
fn kept(schema: &SchemaRef) -> Vec<(String, &'static str)> {
    schema
        .fields()
        .iter()
        .filter(|f| !STAGE_ONLY.contains(&f.name().as_str()))
        .map(|f| (f.name().clone(), sql_type(f.data_type())))
        .collect()
}

/// The staged columns this build's ledger holds, as `ledger_meta` records
/// them: a ledger of other columns is refused, never misread.
fn columns_signature() -> String {
    signature(&|_| true)
}

/// The staged columns a ledger of format 2 holds: this build's but
/// `x_content` ([`upgrade`] adds it).
fn earlier_signature() -> String {
    signature(&|n| n != CONTENT)
}

fn signature(keep: &dyn Fn(&str) -> bool) -> String {
    [
        events_schema(),
        llm_calls_schema(),
        sources_schema(),
        diagnostics_schema(),
    ]
    .iter()
    .map(|s| {
        joined(
            kept(s).into_iter().filter(|(n, _)| keep(n)),
            ",",
            |(n, t)| format!("{n} {t}"),
        )
    })
    .collect::<Vec<_>>()
    .join(";")
}

/// What a database file is to this build.
enum State {
    /// No ledger yet (a new file, or a database without `ledger_meta`).
    Absent,
    /// A ledger of this build's format and columns.
    Ours,
    /// A ledger of format 2 with this build's columns but `x_content`: a
    /// sync upgrades it ([`upgrade`]); export and prune ask for that sync.
    Earlier,
    /// A ledger of another format: why it is refused.
    Other(String),
}

fn state(conn: &Connection) -> Result<State, duckdb::Error> {
    let exists: i64 = conn.query_row(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database() AND table_name = 'ledger_meta'",
        [],
        |r| r.get(0),
    )?;
    if exists == 0 {
        return Ok(State::Absent);
    }
    let get = |key: &str| -> Result<String, duckdb::Error> {
        let mut s = conn.prepare("SELECT value FROM ledger_meta WHERE key = ?")?;
        let mut rows = s.query([key])?;
        Ok(match rows.next()? {
            Some(r) => r.get(0)?,
            None => String::new(),
        })
    };
    let (format, columns, by) = (get("format")?, get("columns")?, get("created_by")?);
    Ok(if format == FORMAT && columns == columns_signature() {
        State::Ours
    } else if format == EARLIER_FORMAT && columns == earlier_signature() {
        State::Earlier
    } else {
        State::Other(format!(
            "a ledger of another format (format {format}, created by {by}) than this nanoload {} reads (format {FORMAT}, its columns); nothing done",
            env!("CARGO_PKG_VERSION")
        ))
    })
}

/// The tables and views of the attached database (an existing file that
/// is not a ledger: what it holds, to name it).
fn user_tables(conn: &Connection) -> duckdb::Result<Vec<String>> {
    let mut s = conn.prepare(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()
         UNION SELECT view_name FROM duckdb_views()
         WHERE database_name = current_database() AND NOT internal
         ORDER BY 1",
    )?;
    let names = s.query_map([], |r| r.get::<_, String>(0))?;
    names.collect()
}

/// Whether an existing database is a ledger this build reads (export and
/// prune: neither creates one); the error says why not.
fn ours(conn: &Connection) -> Result<(), String> {
    match state(conn).map_err(|e| e.to_string())? {
        State::Ours => Ok(()),
        State::Absent => Err("not a nanoload ledger (no ledger_meta table)".into()),
        State::Earlier => Err(format!(
            "a ledger of format {EARLIER_FORMAT}, which the next `nanoload sync` of this nanoload {} upgrades to format {FORMAT}; nothing done",
            env!("CARGO_PKG_VERSION")
        )),
        State::Other(refused) => Err(refused),
    }
}

/// Create the ledger's tables (a new ledger), or check that it is one this
/// build reads.
fn prepare(conn: &Connection) -> Result<Option<String>, duckdb::Error> {
    match state(conn)? {
        State::Ours => return Ok(None),
        State::Other(refused) => return Ok(Some(refused)),
        State::Earlier => {
            return Ok(Some(format!(
                "a ledger of format {EARLIER_FORMAT} that was not upgraded (internal)"
            )));
        }
        State::Absent => {}
    }
    let signature = columns_signature();
    let seen = "row_key VARCHAR, first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, store_path VARCHAR, gone_load BIGINT";
    let table = |name: &str, schema: &SchemaRef, extra: &str| {
        let cols = joined(kept(schema), ", ", |(n, t)| format!("\"{n}\" {t}"));
        format!("CREATE TABLE {name} ({cols}, {extra});")
    };
    conn.execute_batch(&format!(
        "CREATE TABLE ledger_meta (key VARCHAR, value VARCHAR);
         CREATE TABLE loads (sync BIGINT, load_id VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
             home VARCHAR, options VARCHAR, added BIGINT, changed BIGINT, gone BIGINT,
             rows BIGINT, present BIGINT, unreadable BIGINT);
         {}
         {}
         {}",
        table("ledger_events", &events_schema(), seen),
        table("ledger_llm_calls", &llm_calls_schema(), seen),
        table(
            "ledger_sources",
            &sources_schema(),
            "first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, state_key VARCHAR, gone_load BIGINT"
        ),
    ))?;
    conn.execute_batch(&table(
        "ledger_diagnostics",
        &diagnostics_schema(),
        "sync BIGINT",
    ))?;
    let mut app = conn.appender("ledger_meta")?;
    app.append_row(["format", FORMAT])?;
    app.append_row(["columns", signature.as_str()])?;
    let by = format!("nanoload {}", env!("CARGO_PKG_VERSION"));
    app.append_row(["created_by", by.as_str()])?;
    app.flush()?;
    Ok(None)
}

/// One ledger table a sync merges into.
struct Table<'a> {
    name: &'a str,
    /// The staged schema of its rows.
    schema: SchemaRef,
    /// The order of a content's occurrences in its store.
    occurrence: &'a str,
    /// What else a row that would be gone must not be (`AND …`: below a
    /// place not seen, a reasoning row not asked for).
    spared: &'a str,
    /// The table holds rows keyed as format 2 did (no `x_content`): their
    /// earlier key is computed too, and a row found under it takes its new
    /// identity ([`upgrade`]).
    legacy: bool,
}

/// Upgrade a ledger of format 2 to this build's, inside the sync's
/// transaction (a sync that fails leaves it as it was): `x_content` added to
/// the events (NULL until a sync sees the row again: the row then takes its
/// new identity, [`merge_table`]), `gone_load` to the events, calls and
/// stores (NULL for what an earlier build marked gone: prune then asks for
/// `--force`, as that build did not record whether it could read all of
/// HOME), `unreadable` to `loads` (NULL: not recorded), and the options
/// earlier syncs recorded as given rewritten without the value of any
/// `--secret-pattern` ([`Config::shown_options`]). No row is removed.
fn upgrade(conn: &Connection) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "ALTER TABLE ledger_events ADD COLUMN {CONTENT} VARCHAR;
         ALTER TABLE ledger_events ADD COLUMN gone_load BIGINT;
         ALTER TABLE ledger_llm_calls ADD COLUMN gone_load BIGINT;
         ALTER TABLE ledger_sources ADD COLUMN gone_load BIGINT;
         ALTER TABLE loads ADD COLUMN unreadable BIGINT;
         UPDATE ledger_meta SET value = {format} WHERE key = 'format';
         UPDATE ledger_meta SET value = {columns} WHERE key = 'columns';
         INSERT INTO ledger_meta VALUES ('legacy_row_keys', {earlier});",
        format = crate::steps::sql_text(FORMAT),
        earlier = crate::steps::sql_text(EARLIER_FORMAT),
        columns = crate::steps::sql_text(&columns_signature()),
    ))?;
    let options: Vec<(i64, String)> = {
        let mut stmt = conn.prepare(
            "SELECT sync, options FROM loads WHERE contains(options, 'secret_pattern=')",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (sync, given) in options {
        conn.execute(
            "UPDATE loads SET options = ? WHERE sync = ?",
            duckdb::params![crate::config::without_secret_patterns(&given), sync],
        )?;
    }
    Ok(())
}

/// Merge one table's staged rows into its ledger table (inside the sync's
/// transaction): identity, then rows of the earlier format found again,
/// rows gone, rows seen again (their place and rendering taken), new rows.
fn merge_table(
    conn: &Connection,
    t: &Table,
    files: &[PathBuf],
    sync: i64,
) -> Result<Merged, duckdb::Error> {
    let ledger = t.name;
    let schema = &t.schema;
    let cols = kept(schema);
    let all = column_list(schema, "");
    let has = |c: &str| cols.iter().any(|(n, _)| n == c);
    let json_of = |leave: &dyn Fn(&str) -> bool| {
        joined(
            cols.iter().filter(|(n, _)| !leave(n.as_str())),
            ", ",
            |(n, _)| format!("'{n}': \"{n}\""),
        )
    };
    // the agent's record: neither where it stands nor how nanoload renders it
    let identity = json_of(&|n| PLACE.contains(&n) || RENDERED.contains(&n));
    // format 2's: its content was the rendering itself
    let legacy_identity = json_of(&|n| PLACE.contains(&n) || n == CONTENT);
    let place: Vec<&str> = PLACE.iter().copied().filter(|c| has(c)).collect();
    let rendered: Vec<&str> = RENDERED.iter().copied().filter(|c| has(c)).collect();
    let legacy = t.legacy && has(CONTENT);
    let load = sync;
    let rows_before = count_rows(conn, ledger)?;
    let occurrence = if schema.fields().iter().any(|f| f.name() == "x_row") {
        t.occurrence.to_string()
    } else {
        t.occurrence.replace(", x_row", "")
    };
    let store_of = "(SELECT instance, file_path, min(store_path) AS store_path
                     FROM store_files GROUP BY ALL)";
    if files.is_empty() {
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all}, CAST(NULL AS VARCHAR) AS row_key, CAST(NULL AS VARCHAR) AS legacy_key,
                    CAST(NULL AS VARCHAR) AS store_path
             FROM {ledger} WHERE false;"
        ))?;
    } else {
        // The occurrence of each content is numbered over narrow rows (the
        // content's hash, the columns that order its occurrences, the row's
        // place in its staged file), then joined back to the wide rows by
        // that place: a window over the wide rows (text and native inline)
        // runs out of memory at the default limit on a home of moderate
        // size (BENCHMARKS.md "The ledger").
        let order_cols = occurrence
            .split(',')
            .filter_map(|c| c.split_whitespace().next())
            .collect::<Vec<_>>()
            .join(", ");
        let scan = format!(
            "read_parquet({}, filename = true, file_row_number = true)",
            sql_list(files)
        );
        let (legacy_key, legacy_content) = if legacy {
            (
                format!(
                    "md5(legacy || '#' || row_number() OVER (PARTITION BY legacy ORDER BY {occurrence}))"
                ),
                format!(", md5(to_json({{{legacy_identity}}})) AS legacy"),
            )
        } else {
            ("CAST(NULL AS VARCHAR)".to_string(), String::new())
        };
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur_keys AS
             SELECT filename AS k_file, file_row_number AS k_row,
                    md5(content || '#' || row_number() OVER (PARTITION BY content ORDER BY {occurrence})) AS row_key,
                    {legacy_key} AS legacy_key
             FROM (SELECT filename, file_row_number, {order_cols},
                          md5(to_json({{{identity}}})) AS content{legacy_content} FROM {scan});
             CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all_s}, k.row_key, k.legacy_key, coalesce(f.store_path, s.source_path) AS store_path
             FROM {scan} s
             JOIN cur_keys k ON k.k_file = s.filename AND k.k_row = s.file_row_number
             LEFT JOIN {store_of} f ON f.instance = s.instance AND f.file_path = s.source_path;
             DROP TABLE cur_keys;",
            all_s = column_list(schema, "s."),
        ))?;
    }
    let count = |sql: &str| -> Result<u64, duckdb::Error> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    let staged = count("SELECT count(*) FROM cur")? > 0;
    // a row of the earlier format staged again takes its identity (and its
    // content as read); one whose new identity the ledger holds already
    // (seen again under it by an earlier sync of this format) is left, and
    // is gone as any row not seen
    if legacy && staged {
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE rekeyed AS
             SELECT c.row_key, c.legacy_key, c.{CONTENT} FROM cur c ANTI JOIN {ledger} l ON l.row_key = c.row_key;
             UPDATE {ledger} l SET row_key = r.row_key, {CONTENT} = r.{CONTENT}
             FROM rekeyed r WHERE l.{CONTENT} IS NULL AND l.row_key = r.legacy_key;
             DROP TABLE rekeyed;"
        ))?;
    }
    // a present row of a store this sync settles (`settled`, made by
    // [`merged`]) that it did not see is gone: `gone` is the number of rows
    // this marks. (Keys as tuples, not concatenated strings, no count
    // beside the update, and no statement over an empty `cur`: each is a
    // fixed cost of every sync, unchanged or grown; BENCHMARKS.md "The
    // ledger".)
    let gone = conn.execute(
        &format!(
            "UPDATE {ledger} SET present = false, gone_load = {load}
             WHERE present AND (instance, store_path) IN (SELECT instance, source_path FROM settled)
               AND row_key NOT IN (SELECT row_key FROM cur){spared}",
            spared = t.spared
        ),
        [],
    )? as u64;
    // the rows seen again, and the new ones (nothing to do when this sync
    // staged none: every store unchanged)
    let mut changed = 0;
    if staged {
        let differ = |cs: &[&str]| {
            joined(cs, " OR ", |c| {
                format!("l.\"{c}\" IS DISTINCT FROM c.\"{c}\"")
            })
        };
        let changed_place = if place.is_empty() {
            "false".to_string()
        } else {
            differ(&place)
        };
        let rendered_again = if rendered.is_empty() {
            "false".to_string()
        } else {
            differ(&rendered)
        };
        changed = count(&format!(
            "SELECT count(*) FROM {ledger} l JOIN cur c USING (row_key)
             WHERE NOT l.present OR {changed_place} OR {rendered_again}"
        ))?;
        let set = |cs: &[&str]| -> String {
            cs.iter()
                .map(|c| format!(", \"{c}\" = c.\"{c}\""))
                .collect()
        };
        // a row rendered otherwise now (more redacted) keeps only the new
        // rendering: the earlier one is not kept beside it
        let render = if rendered.is_empty() {
            String::new()
        } else {
            format!(
                "UPDATE {ledger} l SET {cols} FROM cur c
                 WHERE l.row_key = c.row_key AND ({rendered_again});",
                cols = set(&rendered).trim_start_matches(", ")
            )
        };
        conn.execute_batch(&format!(
            "UPDATE {ledger} l SET present = true, last_seen_load = {load}, gone_load = NULL{set_place}
             FROM cur c WHERE l.row_key = c.row_key;
             {render}
             INSERT INTO {ledger} BY NAME
             SELECT {all_c}, c.row_key, {load} AS first_seen_load, {load} AS last_seen_load,
                    true AS present, c.store_path
             FROM cur c ANTI JOIN {ledger} l ON l.row_key = c.row_key;",
            set_place = set(&place),
            all_c = column_list(schema, "c."),
        ))?;
    }
    // the present rows of the stores not read (their files unchanged) are
    // seen again
    conn.execute(
        &format!(
            "UPDATE {ledger} SET last_seen_load = {load}
             WHERE present AND (instance, store_path) IN (SELECT instance, source_path FROM unchanged_stores)"
        ),
        [],
    )?;
    let rows = count_rows(conn, ledger)?;
    let added = rows - rows_before;
    let present = count(&format!("SELECT count(*) FROM {ledger} WHERE present"))?;
    Ok(Merged {
        added,
        changed,
        gone,
        rows,
        present,
    })
}

/// Whether the ledger still holds rows keyed as format 2 did
/// (`ledger_meta` `legacy_row_keys`, set by [`upgrade`], removed when the
/// last of them has its new identity).
fn legacy_keys(conn: &Connection) -> Result<bool, duckdb::Error> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM ledger_meta WHERE key = 'legacy_row_keys'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

fn count_rows(conn: &Connection, table: &str) -> Result<u64, duckdb::Error> {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
}

/// Every store ever seen: this sync's `sources` rows replace their earlier
/// ones; a store not found now stays, not present — unless it was below a
/// place this sync could not see (`seen`: the test of a path that was),
/// where it stays as it was.
fn merge_sources(conn: &Connection, sync: i64, seen: &str) -> Result<(), duckdb::Error> {
    let load = sync;
    // a store's identity as a tuple (as `merge_table` matches a row's store)
    let key = "(instance, source_path, source_kind)";
    let key_cols = "instance, source_path, source_kind";
    let cols = column_list(&sources_schema(), "");
    let of_c = column_list(&sources_schema(), "c.");
    // a store read now keeps its key only when it was read to its end (a
    // partial one is read again next time)
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TEMP TABLE kept_sources AS
         SELECT {of_c}, coalesce(l.first_seen_load, {load}) AS first_seen_load,
             CASE WHEN c.status IN ('ok', 'skipped') THEN k.state_key END AS state_key
         FROM cur_sources c
         LEFT JOIN ledger_sources l
           ON l.source_kind = c.source_kind AND l.instance = c.instance AND l.source_path = c.source_path
         LEFT JOIN store_keys k
           ON k.source_kind = c.source_kind AND k.instance = c.instance AND k.source_path = c.source_path;
         UPDATE ledger_sources SET last_seen_load = {load}
         WHERE {key} IN (SELECT {key_cols} FROM unchanged_stores);
         UPDATE ledger_sources SET present = false, gone_load = {load}
         WHERE present
           AND {key} NOT IN (SELECT {key_cols} FROM cur_sources)
           AND {key} NOT IN (SELECT {key_cols} FROM unchanged_stores)
           AND {seen};
         DELETE FROM ledger_sources WHERE {key} IN (SELECT {key_cols} FROM cur_sources);
         INSERT INTO ledger_sources BY NAME
         SELECT {cols}, first_seen_load, {load} AS last_seen_load, true AS present, state_key
         FROM kept_sources;
         DROP TABLE kept_sources;"
    ))
}

/// What `nanoload export` writes.
#[derive(Debug, Clone)]
pub struct ExportArgs {
    pub ledger: PathBuf,
    pub out: PathBuf,
    pub tables: Option<PathBuf>,
    /// Only the rows on disk at the latest sync, without the ledger's
    /// columns: the bytes a load of HOME at that sync writes.
    pub snapshot: bool,
    /// `--dataset DIR --host NAME`: the tables as that host's partition.
    pub dataset: Option<(PathBuf, String)>,
    pub threads: usize,
    pub memory_limit: u64,
    /// The price table of the export's costs (`--prices`, `--price`,
    /// `--free`; the built-in one without them).
    pub prices: crate::prices::PriceTable,
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    pub load_id: String,
    /// The latest sync the export is of.
    pub sync: i64,
    pub events: u64,
}

/// The columns an export appends to `events` (history, not `--snapshot`).
pub const SEEN_COLUMNS: [(&str, &str); 3] = [
    ("first_seen_load", "BIGINT"),
    ("last_seen_load", "BIGINT"),
    ("present", "BOOLEAN"),
];

/// Today's outputs from the ledger: its rows (all of them, or with
/// `snapshot` those on disk at the latest sync) staged again and run
/// through the same steps as a load — so dedup, offsets and attribution
/// decide over the whole history — then written as a load writes them,
/// `events` with [`SEEN_COLUMNS`] appended unless `snapshot`.
pub fn export(args: &ExportArgs) -> Result<Exported, SyncError> {
    use crate::config::OutputPaths;
    use crate::engine::Engine;
    use crate::sink::Outputs;
    let ledger = std::path::absolute(&args.ledger).map_err(|e| SyncError::Ledger {
        path: args.ledger.clone(),
        message: e.to_string(),
    })?;
    let fail = |path: &Path, e: &dyn std::fmt::Display| SyncError::Ledger {
        path: path.to_path_buf(),
        message: crate::diag::one_line(&e.to_string()),
    };
    if !ledger.is_file() {
        return Err(fail(
            &ledger,
            &"no such ledger (nanoload sync HOME LEDGER.duckdb makes one)",
        ));
    }
    let conn = Connection::open_with_flags(
        &ledger,
        duckdb::Config::default()
            .access_mode(duckdb::AccessMode::ReadOnly)
            .map_err(|e| fail(&ledger, &e))?,
    )
    .map_err(|e| unopened(&ledger, &e, false))?;
    crate::engine::in_utc(&conn).map_err(|e| fail(&ledger, &e))?;
    ours(&conn).map_err(|e| fail(&ledger, &e))?;
    let (sync, latest): (i64, String) = conn
        .query_row(
            "SELECT sync, load_id FROM loads ORDER BY sync DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| fail(&ledger, &e))?;
    // a snapshot is the latest load's output; the history is not, and says
    // so; priced with another table than the built-in one (the sync's: a
    // ledger keeps no prices), neither is, and the id folds the table in,
    // as a load's does
    let builtin = crate::prices::PriceTable::builtin().map_err(|e| fail(&ledger, &e.0))?;
    let priced = (args.prices != builtin).then(|| format!(" prices={}", args.prices.digest()));
    let load_id = match (args.snapshot, priced) {
        (true, None) => latest,
        (true, Some(p)) => derived_id(&format!("ledger snapshot {latest}{p}")),
        (false, p) => derived_id(&format!(
            "ledger history {latest} {sync}{}",
            p.unwrap_or_default()
        )),
    };
    let run_dir = RunDir::create(&ledger)?;
    let stage = run_dir.stage_dir();
    std::fs::create_dir_all(&stage).map_err(|e| fail(&stage, &e))?;
    let filter = if args.snapshot { "present" } else { "true" };
    let seen = stage.join("seen.parquet");
    let staged = stage_kept(&conn, &stage, filter, &seen).map_err(|e| fail(&ledger, &e))?;
    drop(conn);
    let outputs = Outputs::prepare(&OutputPaths {
        out: Some(std::path::absolute(&args.out).map_err(|e| fail(&args.out, &e))?),
        tables: args
            .tables
            .as_deref()
            .map(std::path::absolute)
            .transpose()
            .map_err(|e| fail(&ledger, &e))?,
        db: None,
        dataset: args
            .dataset
            .as_ref()
            .map(|(d, host)| std::path::absolute(d).map(|d| (d, host.clone())))
            .transpose()
            .map_err(|e| fail(&args.out, &e))?,
        summary_json: None,
    })
    .map_err(|e| fail(&args.out, &e))?;
    let prices = &args.prices;
    // each row's place in OUT is known once a step has made `write_layout`,
    // and its x_row only until a later step drops `ordinals`: the rows'
    // seen columns are taken by place before the step after the layout
    let mut placed: Option<Result<(), crate::engine::EngineError>> = None;
    // as a load's: an attempt that runs out of memory starts over at twice
    // the limit, and its rows are placed again
    let warn = |w: &str| eprintln!("{w}");
    let mut timings = crate::timings::Timings::default();
    let engine =
        crate::run::with_memory_retries(args.memory_limit, &warn, &mut timings, |limit, _| {
            let engine = Engine::open(&run_dir.spill_dir(), args.threads, limit)?;
            engine.load(&staged, None, &load_id, prices)?;
            placed = None;
            engine.run_steps(|_, _, _| {
                if !args.snapshot && placed.is_none() && laid_out(engine.conn()) {
                    placed = Some(place_seen(engine.conn(), &seen).map_err(Into::into));
                }
            })?;
            Ok(engine)
        })
        .map_err(|e| fail(&ledger, &e))?;
    if !args.snapshot {
        match placed {
            Some(Ok(())) => append_seen(engine.conn()).map_err(|e| fail(&ledger, &e))?,
            Some(Err(e)) => return Err(fail(&ledger, &e)),
            None => {
                return Err(fail(
                    &ledger,
                    &"internal: no step after the one that makes write_layout to place the rows at",
                ));
            }
        }
    }
    let events: i64 = engine
        .conn()
        .query_row("SELECT count(*) FROM events_plan", [], |r| r.get(0))
        .map_err(|e| fail(&ledger, &e))?;
    outputs
        .write(&engine, &staged.blobs, &load_id)
        .map_err(|e| fail(&args.out, &e))?;
    outputs.commit("", || {}).map_err(|e| fail(&args.out, &e))?;
    Ok(Exported {
        load_id,
        sync,
        events: events as u64,
    })
}

/// The ledger's rows (those `filter` keeps) staged as a load stages a
/// home's: each row's text and native in a blob file unless a step reads
/// them ([`crate::stage::Stage::write_kept`]), so the steps hold no more
/// of the history than a load of the same rows does; each row's seen
/// columns by its `x_row` in `seen`. Rows stream from the ledger in its
/// own order: no output depends on which row gets which `x_row`.
fn stage_kept(
    conn: &Connection,
    stage: &Path,
    filter: &str,
    seen: &Path,
) -> Result<crate::stage::Staged, Box<dyn std::error::Error + Send + Sync>> {
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::{Field, Schema};
    let kept = kept(&events_schema()).len();
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, {} FROM ledger_events WHERE {filter}",
        column_list(&events_schema(), ""),
        seen_list("")
    ))?;
    let staging = crate::stage::Stage::new(stage)?;
    let mut seen_out: Option<parquet::arrow::ArrowWriter<std::fs::File>> = None;
    for batch in stmt.stream_arrow([])? {
        let batch = batch?;
        let first =
            staging.write_kept("ledger", &batch.project(&(0..kept).collect::<Vec<_>>())?)?;
        let x_row: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..batch.num_rows() as i64).map(|r| first + r),
        ));
        let mut fields = vec![Field::new("x_row", DataType::Int64, false)];
        let mut columns = vec![x_row];
        for (k, (name, _)) in SEEN_COLUMNS.iter().enumerate() {
            let column = batch.column(kept + k);
            fields.push(Field::new(*name, column.data_type().clone(), true));
            columns.push(column.clone());
        }
        let rows = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns)?;
        let out = match seen_out.as_mut() {
            Some(out) => out,
            None => seen_out.insert(parquet::arrow::ArrowWriter::try_new(
                std::fs::File::create(seen)?,
                rows.schema(),
                None,
            )?),
        };
        out.write(&rows)?;
    }
    match seen_out {
        Some(out) => {
            out.close()?;
        }
        None => {
            let fields: Vec<Field> = std::iter::once(Field::new("x_row", DataType::Int64, false))
                .chain(SEEN_COLUMNS.iter().map(|(name, t)| {
                    let t = if *t == "BOOLEAN" {
                        DataType::Boolean
                    } else {
                        DataType::Int64
                    };
                    Field::new(*name, t, true)
                }))
                .collect();
            crate::stage::write_file(seen, &RecordBatch::new_empty(Arc::new(Schema::new(fields))))?;
        }
    }
    let mut staged = staging.finish(&[], &[])?;
    let calls = stage.join("llm_calls-ledger.parquet");
    conn.execute_batch(&format!(
        "COPY (SELECT {calls} FROM ledger_llm_calls WHERE {filter} ORDER BY row_key) TO {llm} (FORMAT parquet);
         COPY (SELECT {src} FROM ledger_sources WHERE {filter} ORDER BY source_kind, instance, source_path)
           TO {sources} (FORMAT parquet);
         COPY (SELECT {diag} FROM ledger_diagnostics) TO {diagnostics} (FORMAT parquet);",
        calls = column_list(&llm_calls_schema(), ""),
        src = column_list(&sources_schema(), ""),
        diag = column_list(&diagnostics_schema(), ""),
        llm = sql_str(&calls),
        sources = sql_str(&staged.sources),
        diagnostics = sql_str(&staged.diagnostics),
    ))?;
    staged.llm_calls.push(calls);
    Ok(staged)
}

/// An export's own load_id: 16 hex of SHA-256 over what it is of.
fn derived_id(of: &str) -> String {
    use sha2::Digest;
    crate::store::hex(&sha2::Sha256::digest(of.as_bytes()))[..16].to_string()
}

/// Each exported row's seen columns by its place in OUT (`out_pos`
/// = its session's first position + its `ordinal`), while `ordinals` still
/// maps x_row to the place.
fn place_seen(conn: &Connection, seen: &Path) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "CREATE TABLE seen_at AS
           SELECT CAST(l.rows_before + o.ordinal AS BIGINT) AS out_pos, {}
           FROM ordinals o JOIN write_layout l USING (sess_id) JOIN read_parquet({}) s USING (x_row);",
        seen_list("s."),
        sql_str(seen)
    ))
}

/// Whether the steps have laid the rows out in OUT: `write_layout` (a row's
/// place) and `ordinals` (its x_row's) both there.
fn laid_out(conn: &Connection) -> bool {
    conn.query_row(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()
           AND schema_name = 'main' AND table_name IN ('write_layout', 'ordinals')",
        [],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n == 2)
}

fn seen_list(prefix: &str) -> String {
    joined(SEEN_COLUMNS, ", ", |(n, _)| format!("{prefix}{n}"))
}

/// Append [`SEEN_COLUMNS`] to the plan the events writer reads (by
/// `out_pos`, in the plan's order) and to the `events` view it takes its
/// columns and types from.
fn append_seen(conn: &Connection) -> Result<(), duckdb::Error> {
    let typed = joined(SEEN_COLUMNS, ", ", |(n, t)| {
        format!("CAST(NULL AS {t}) AS {n}")
    });
    conn.execute_batch(&format!(
        "CREATE TABLE events_plan_seen AS
           SELECT p.*, {} FROM events_plan p LEFT JOIN seen_at s USING (out_pos) ORDER BY p.out_pos;
         ALTER VIEW events RENAME TO events_unseen;
         DROP TABLE events_plan;
         ALTER TABLE events_plan_seen RENAME TO events_plan;
         CREATE VIEW events AS SELECT *, {typed} FROM events_unseen;",
        seen_list("s.")
    ))
}

/// What `nanoload prune` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub events: u64,
    pub llm_calls: u64,
    pub stores: u64,
}

/// Remove from the ledger what is no longer on disk and was last seen by a
/// sync that finished before `before` (UTC, `YYYY-MM-DD` or an instant
/// DuckDB reads): rows, calls and stores not present whose
/// `last_seen_load` is such a sync. Present rows and the `loads` rows stay.
/// What a sync that could not read all of HOME marked gone (its
/// `loads.unreadable` not 0, or not recorded: a sync of format 2) is
/// removed only with `force`; without it nothing is done
/// ([`SyncError::PruneRefused`]). The only deletion from a ledger; under
/// its lock, in one transaction.
pub fn prune(ledger: &Path, before: &str, force: bool) -> Result<Pruned, SyncError> {
    let ledger = std::path::absolute(ledger).map_err(|e| SyncError::Ledger {
        path: ledger.to_path_buf(),
        message: e.to_string(),
    })?;
    let fail = |e: &dyn std::fmt::Display| SyncError::Ledger {
        path: ledger.clone(),
        message: crate::diag::one_line(&e.to_string()),
    };
    if !ledger.is_file() {
        return Err(fail(&"no such ledger"));
    }
    let _lock = lock(&ledger)?;
    let conn = Connection::open(&ledger).map_err(|e| unopened(&ledger, &e, true))?;
    // `--before` is a UTC date or instant
    crate::engine::in_utc(&conn).map_err(|e| fail(&e))?;
    ours(&conn).map_err(|e| fail(&e))?;
    compress_strings(&conn).map_err(|e| fail(&e))?;
    let cutoff: i64 = conn
        .query_row(
            "SELECT epoch_us(CAST(CAST(? AS TIMESTAMPTZ) AS TIMESTAMP))",
            [before],
            |r| r.get(0),
        )
        .map_err(|_| {
            fail(&format!(
                "--before {before:?}: not a date (YYYY-MM-DD) or an instant"
            ))
        })?;
    const TABLES: [&str; 3] = ["ledger_events", "ledger_llm_calls", "ledger_sources"];
    let old = format!("(SELECT sync FROM loads WHERE epoch_us(finished_at) < {cutoff})");
    let doubtful = "(gone_load IS NULL OR gone_load IN
                      (SELECT sync FROM loads WHERE unreadable IS NULL OR unreadable > 0))";
    let run = || -> Result<Result<Pruned, SyncError>, duckdb::Error> {
        conn.execute_batch("BEGIN TRANSACTION;")?;
        let gone = |table: &str| format!("{table} WHERE NOT present AND last_seen_load IN {old}");
        if !force {
            let mut n = [0u64; 3];
            for (n, table) in n.iter_mut().zip(TABLES) {
                *n = conn.query_row(
                    &format!("SELECT count(*) FROM {} AND {doubtful}", gone(table)),
                    [],
                    |r| r.get::<_, i64>(0),
                )? as u64;
            }
            if n.iter().any(|n| *n > 0) {
                let union = joined(TABLES, " UNION ALL ", |t| {
                    format!("SELECT gone_load FROM {} AND {doubtful}", gone(t))
                });
                let marked: Vec<Option<i64>> = {
                    let mut stmt = conn.prepare(&format!(
                        "SELECT DISTINCT gone_load FROM ({union}) ORDER BY 1 NULLS LAST"
                    ))?;
                    stmt.query_map([], |r| r.get(0))?
                        .collect::<Result<_, _>>()?
                };
                let syncs: Vec<i64> = marked.iter().flatten().copied().collect();
                let unknown = marked.iter().any(Option::is_none);
                conn.execute_batch("ROLLBACK;")?;
                return Ok(Err(SyncError::PruneRefused {
                    path: ledger.clone(),
                    rows: n[0],
                    calls: n[1],
                    stores: n[2],
                    syncs: which_syncs(&syncs, unknown),
                }));
            }
        }
        let n = |table: &str| {
            conn.execute(&format!("DELETE FROM {}", gone(table)), [])
                .map(|n| n as u64)
        };
        let pruned = Pruned {
            events: n(TABLES[0])?,
            llm_calls: n(TABLES[1])?,
            stores: n(TABLES[2])?,
        };
        conn.execute_batch("COMMIT; CHECKPOINT;")?;
        Ok(Ok(pruned))
    };
    match run() {
        Ok(done) => done,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK;");
            Err(fail(&e))
        }
    }
}

/// The syncs a refused prune names: `sync 2`, `syncs 2, 5`, and those of
/// an earlier nanoload, which did not record what they could read.
fn which_syncs(syncs: &[i64], unknown: bool) -> String {
    let mut said = Vec::new();
    match syncs {
        [] => {}
        [one] => said.push(format!("sync {one}")),
        many => said.push(format!("syncs {}", joined(many, ", ", i64::to_string))),
    }
    if unknown {
        said.push("syncs of an earlier nanoload, which did not record what they could read".into());
    }
    said.join("; ")
}

#[cfg(test)]
mod tests {
    use super::storage_has_zstd;

    #[test]
    fn zstd_for_strings_starts_at_storage_version_1_2() {
        for (tag, zstd) in [
            ("v1.2.0+", true),
            ("v1.3.0+", true),
            ("v2.0.0+", true),
            ("v1.0.0+", false),
            ("v1.1.0+", false),
            ("v0.10.2", false),
            ("", false),
        ] {
            assert_eq!(storage_has_zstd(tag), zstd, "{tag}");
        }
    }
}
