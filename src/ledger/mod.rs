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
//!
//! ```text
//! mod.rs     the format, SyncError, the lock, what a ledger file is (state, ours)
//! sync.rs    `nanoload sync`: lock, extract HOME, what could not be seen
//! merge.rs   one sync's staged rows merged into the ledger's tables
//! export.rs  `nanoload export`: the ledger staged again, through the steps and sink
//! prune.rs   `nanoload prune`: the one deletion
//! ```

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use arrow::datatypes::{DataType, SchemaRef};
use arrow::record_batch::RecordBatch;
use duckdb::Connection;
use std::sync::Arc;

use crate::config::{Config, ConfigError, Options};
use crate::diag::diagnostics_schema;
use crate::engine::{sql_list, sql_str};
use crate::pipeline::Front;
use crate::rundir::RunDirError;
use crate::schema::{events_schema, llm_calls_schema, sources_schema};
use crate::stage::STAGE_ONLY;
use crate::summary::ExitCode;

mod export;
mod merge;
mod prune;
mod sync;

pub use export::{ExportArgs, Exported, SEEN_COLUMNS, export};
use merge::*;
pub use prune::{Pruned, prune};
pub use sync::sync;
use sync::*;

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
    /// Discovery or extraction failed, or HOME holds no store of either
    /// agent (exit code 4).
    #[error(transparent)]
    Front(#[from] crate::pipeline::FrontError),
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
            SyncError::Front(crate::pipeline::FrontError::NoStores { .. }) => ExitCode::NoStores,
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

/// Why an existing database is not a ledger this build reads.
#[derive(Debug, thiserror::Error)]
enum NotOurs {
    #[error("{0}")]
    Unread(#[from] duckdb::Error),
    #[error("not a nanoload ledger (no ledger_meta table)")]
    Absent,
    #[error(
        "a ledger of format {}, which the next `nanoload sync` of this nanoload {} upgrades to format {}; nothing done",
        EARLIER_FORMAT,
        env!("CARGO_PKG_VERSION"),
        FORMAT
    )]
    Earlier,
    #[error("{0}")]
    Other(String),
}

/// Whether an existing database is a ledger this build reads (export and
/// prune: neither creates one); the error says why not.
fn ours(conn: &Connection) -> Result<(), NotOurs> {
    match state(conn)? {
        State::Ours => Ok(()),
        State::Absent => Err(NotOurs::Absent),
        State::Earlier => Err(NotOurs::Earlier),
        State::Other(refused) => Err(NotOurs::Other(refused)),
    }
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
