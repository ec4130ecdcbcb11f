//! `nanoload sync HOME LEDGER.duckdb`: a history that outlives the agents'
//! own deletions. Every sync extracts HOME as a load does and merges the
//! staged rows into a DuckDB database file that nanoload keeps: rows seen
//! before are the same rows, new rows are added, and a row no longer on
//! disk stays, marked gone. docs/design.md "Ledger".
//!
//! ```text
//! LEDGER.duckdb               written only by sync, one transaction per sync
//!   ledger_meta(key, value)   format, the staged columns it holds, who created it
//!   loads                     one row per sync: sync (1, 2, …), load_id, started_at,
//!                             finished_at (UTC), home, options, added, changed, gone,
//!                             rows, present
//!   ledger_events             every staged event row ever seen: the staged columns with
//!                             text and native inline, row_key, first_seen_load and
//!                             last_seen_load (sync numbers), present
//!   ledger_llm_calls          every staged usage row ever seen, the same way
//!   ledger_sources            every store ever seen: its latest `sources` row,
//!                             first_seen_load, last_seen_load, present, state_key
//!                             (the `--cache` key of its files: unchanged → not read again)
//!   ledger_diagnostics        what the latest sync could not read (bad lines, warnings)
//! LEDGER.duckdb.lock          locked (flock) by the sync that writes: a second is refused
//! ```
//! One row of `ledger_events` is one row a load stages (before dedup: the
//! steps decide over the whole history when the ledger is exported). Its
//! identity (`row_key`) is its content — every staged column but where it
//! stands (`seq`, `source_line`) and the store's role — and which
//! occurrence of that content it is in its store, so a record that moves
//! (a file rewritten around it) is still the same row; a record rewritten
//! in place is a new row and its old version is gone.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use arrow::datatypes::{DataType, SchemaRef};
use duckdb::Connection;

use crate::config::{Config, ConfigError, Options};
use crate::diag::diagnostics_schema;
use crate::discover::discover;
use crate::engine::{sql_list, sql_str};
use crate::extract::{ExtractError, extract};
use crate::progress::Progress;
use crate::rundir::{RunDir, RunDirError};
use crate::schema::{events_schema, llm_calls_schema, sources_schema};
use crate::summary::ExitCode;

/// The ledger format this build reads and writes.
pub const FORMAT: &str = "2";

/// Staged event columns that say where a row's text is in this run's
/// stage, or which row of the run it is: not kept.
const STAGE_ONLY: [&str; 6] = [
    "x_wide",
    "x_blob",
    "x_off",
    "x_text_len",
    "x_native_len",
    "x_row",
];

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
    #[error("{}: no agent state found", home.display())]
    NoStores { home: PathBuf },
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
            SyncError::Busy { .. } => ExitCode::Busy,
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
                "nanoload: stores: {} read, {} unchanged since the ledger read them",
                self.stores_read, self.stores_unchanged
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
pub fn sync(opts: &Options) -> Result<SyncSummary, SyncError> {
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
    let result =
        not_a_ledger_file(&ledger).and_then(|()| sync_locked(opts, config, &ledger, started));
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

    let conn = Connection::open_in_memory().map_err(fail)?;
    conn.execute_batch(&format!(
        "ATTACH {} AS ledger{version}; USE ledger;",
        sql_str(&ledger)
    ))
    .map_err(fail)?;
    conn.execute_batch(&format!(
        "SET autoinstall_known_extensions = false;
         SET autoload_known_extensions = false;
         SET memory_limit = '{}MiB';
         SET temp_directory = {};
         SET threads = {};",
        config.memory_limit.div_ceil(1 << 20),
        sql_str(&run_dir.spill_dir()),
        config.threads,
    ))
    .map_err(fail)?;
    compress_strings(&conn).map_err(fail)?;
    // a ledger of another format is refused before anything is read
    let known = match state(&conn).map_err(fail)? {
        State::Other(refused) => {
            return Err(SyncError::Ledger {
                path: ledger.clone(),
                message: refused,
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
        State::Ours => known_stores(&conn).map_err(fail)?,
    };
    let progress = Progress::start(opts.progress_shown());
    let discovery = discover(&config.home, config.follow_links)?;
    if discovery.stores.is_empty() && discovery.diagnostics.is_empty() {
        return Err(SyncError::NoStores {
            home: opts.home.clone(),
        });
    }
    let load_id = discovery.load_id(&config.load_options);
    // a store whose files are as the ledger last read them (the key of
    // `--cache`: every byte hashed) is not read again
    let options = crate::cache::options_key(&config.extract, config.follow_links);
    let keys: Vec<Option<String>> = discovery
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
    } = discovery;
    let mut files = Vec::new();
    for (store, key) in stores.into_iter().zip(keys) {
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
        if let Some(k) = &key {
            store_keys.push((id.clone(), k.clone()));
        }
        if key.is_some_and(|k| known.get(&id) == Some(&k)) {
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
    };
    // the ledger keeps every row's text and native itself, and the keys
    // every earlier build staged in each row's identity
    config.extract.stage_all_wide = true;
    config.extract.keys = crate::store::KeyDigest::Sha256;
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
    };
    let merge = || -> Result<(i64, Merged, Merged), SyncError> {
        conn.execute_batch("BEGIN TRANSACTION;").map_err(fail)?;
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
    })
}

/// A store's identity in the ledger: kind, instance, path.
type StoreId = (String, String, String);

/// What a sync knows of the stores besides their staged rows.
struct Stores<'a> {
    /// The stores whose files are as the ledger last read them: not read.
    unchanged: &'a [StoreId],
    /// The key of every store that has one ([`crate::cache::store_key`]).
    keys: &'a [(StoreId, String)],
    /// (instance, store path, file path) of every file of every store: the
    /// store a row of that file belongs to.
    files: &'a [(String, String, String)],
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
         CREATE TEMP TABLE store_files (instance VARCHAR, store_path VARCHAR, file_path VARCHAR);",
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
    }
    // the stores whose rows this sync settles: those it read to their end,
    // and those no longer on disk (neither read nor unchanged); a present
    // row of theirs that it did not see is gone (a row's store:
    // `store_path`, the store's main path, whichever of its files the row
    // came from: a WebUI segment, a checkpoint sidecar)
    conn.execute_batch(
        "CREATE TEMP TABLE settled AS
         SELECT instance, source_path FROM cur_sources WHERE status IN ('ok', 'skipped')
         UNION
         SELECT instance, source_path FROM ledger_sources l
         WHERE NOT EXISTS (SELECT 1 FROM cur_sources c
                           WHERE c.instance = l.instance AND c.source_path = l.source_path)
           AND NOT EXISTS (SELECT 1 FROM unchanged_stores u
                           WHERE u.instance = l.instance AND u.source_path = l.source_path);",
    )?;
    // this sync's number: a load_id names the files and options, and an
    // unchanged home gives the same one again
    let sync: i64 = conn.query_row("SELECT coalesce(max(sync), 0) + 1 FROM loads", [], |r| {
        r.get(0)
    })?;
    let events = merge_table(
        conn,
        "ledger_events",
        &events_schema(),
        &staged.events,
        "source_line NULLS LAST, seq NULLS LAST, x_row",
        sync,
    )?;
    let calls = merge_table(
        conn,
        "ledger_llm_calls",
        &llm_calls_schema(),
        &staged.llm_calls,
        "id",
        sync,
    )?;
    merge_sources(conn, sync)?;
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
    let finished = SystemTime::now();
    conn.execute(
        "INSERT INTO loads VALUES (?, ?, make_timestamp(?), make_timestamp(?), ?, ?, ?, ?, ?, ?, ?)",
        duckdb::params![
            sync,
            load_id,
            micros(started),
            micros(finished),
            config.home.to_string_lossy(),
            config.load_options.join(" "),
            (events.added + calls.added) as i64,
            (events.changed + calls.changed) as i64,
            (events.gone + calls.gone) as i64,
            (events.rows + calls.rows) as i64,
            (events.present + calls.present) as i64,
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
    [
        events_schema(),
        llm_calls_schema(),
        sources_schema(),
        diagnostics_schema(),
    ]
    .iter()
    .map(|s| joined(kept(s), ",", |(n, t)| format!("{n} {t}")))
    .collect::<Vec<_>>()
    .join(";")
}

/// What a database file is to this build.
enum State {
    /// No ledger yet (a new file, or a database without `ledger_meta`).
    Absent,
    /// A ledger of this build's format and columns.
    Ours,
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
        State::Other(refused) => Err(refused),
    }
}

/// Create the ledger's tables (a new ledger), or check that it is one this
/// build reads.
fn prepare(conn: &Connection) -> Result<Option<String>, duckdb::Error> {
    match state(conn)? {
        State::Ours => return Ok(None),
        State::Other(refused) => return Ok(Some(refused)),
        State::Absent => {}
    }
    let signature = columns_signature();
    let seen = "row_key VARCHAR, first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, store_path VARCHAR";
    let table = |name: &str, schema: &SchemaRef, extra: &str| {
        let cols = joined(kept(schema), ", ", |(n, t)| format!("\"{n}\" {t}"));
        format!("CREATE TABLE {name} ({cols}, {extra});")
    };
    conn.execute_batch(&format!(
        "CREATE TABLE ledger_meta (key VARCHAR, value VARCHAR);
         CREATE TABLE loads (sync BIGINT, load_id VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
             home VARCHAR, options VARCHAR, added BIGINT, changed BIGINT, gone BIGINT,
             rows BIGINT, present BIGINT);
         {}
         {}
         {}",
        table("ledger_events", &events_schema(), seen),
        table("ledger_llm_calls", &llm_calls_schema(), seen),
        table(
            "ledger_sources",
            &sources_schema(),
            "first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, state_key VARCHAR"
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

/// Merge one table's staged rows into its ledger table (inside the sync's
/// transaction): identity, then new rows, rows seen again, rows gone.
fn merge_table(
    conn: &Connection,
    ledger: &str,
    schema: &SchemaRef,
    files: &[PathBuf],
    occurrence: &str,
    sync: i64,
) -> Result<Merged, duckdb::Error> {
    let cols = kept(schema);
    let all = column_list(schema, "");
    let identity = joined(
        cols.iter().filter(|(n, _)| !PLACE.contains(&n.as_str())),
        ", ",
        |(n, _)| format!("'{n}': \"{n}\""),
    );
    let has_place = |c: &str| cols.iter().any(|(n, _)| n == c);
    let place: Vec<&str> = PLACE.iter().copied().filter(|c| has_place(c)).collect();
    let load = sync;
    let rows_before = count_rows(conn, ledger)?;
    let occurrence = if schema.fields().iter().any(|f| f.name() == "x_row") {
        occurrence.to_string()
    } else {
        occurrence.replace(", x_row", "")
    };
    let store_of = "(SELECT instance, file_path, min(store_path) AS store_path
                     FROM store_files GROUP BY ALL)";
    if files.is_empty() {
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all}, CAST(NULL AS VARCHAR) AS row_key, CAST(NULL AS VARCHAR) AS store_path
             FROM {ledger} WHERE false;"
        ))?;
    } else {
        // The occurrence of each content is numbered over narrow rows (the
        // content's hash, the columns that order its occurrences, the row's
        // place in its staged file), then joined back to the wide rows by
        // that place: a window over the wide rows (text and native inline)
        // ran out of memory at the default 256 MiB on a 200 MB home
        // (BENCHMARKS.md "The ledger").
        let order_cols = occurrence
            .split(',')
            .filter_map(|c| c.split_whitespace().next())
            .collect::<Vec<_>>()
            .join(", ");
        let scan = format!(
            "read_parquet({}, filename = true, file_row_number = true)",
            sql_list(files)
        );
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur_keys AS
             SELECT filename AS k_file, file_row_number AS k_row,
                    md5(content || '#' || row_number() OVER (PARTITION BY content ORDER BY {occurrence})) AS row_key
             FROM (SELECT filename, file_row_number, {order_cols},
                          md5(to_json({{{identity}}})) AS content FROM {scan});
             CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all_s}, k.row_key, coalesce(f.store_path, s.source_path) AS store_path
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
    // a present row of a store this sync settles (`settled`, made by
    // [`merged`]) that it did not see is gone: `gone` is the number of rows
    // this marks. (Keys as tuples, not concatenated strings, no count
    // beside the update, and no statement over an empty `cur`: an unchanged
    // sync of the 200 MB home 0.30 → 0.26 CPU-s, one with a grown session
    // 0.47 → 0.38: BENCHMARKS.md "The ledger".)
    let gone = conn.execute(
        &format!(
            "UPDATE {ledger} SET present = false
             WHERE present AND (instance, store_path) IN (SELECT instance, source_path FROM settled)
               AND row_key NOT IN (SELECT row_key FROM cur)"
        ),
        [],
    )? as u64;
    // the rows seen again, and the new ones (nothing to do when this sync
    // staged none: every store unchanged)
    let mut changed = 0;
    if count("SELECT count(*) FROM cur")? > 0 {
        let changed_place = if place.is_empty() {
            "false".to_string()
        } else {
            joined(&place, " OR ", |c| {
                format!("l.\"{c}\" IS DISTINCT FROM c.\"{c}\"")
            })
        };
        changed = count(&format!(
            "SELECT count(*) FROM {ledger} l JOIN cur c USING (row_key) WHERE NOT l.present OR {changed_place}"
        ))?;
        let set_place: String = place
            .iter()
            .map(|c| format!(", \"{c}\" = c.\"{c}\""))
            .collect();
        conn.execute_batch(&format!(
            "UPDATE {ledger} l SET present = true, last_seen_load = {load}{set_place}
             FROM cur c WHERE l.row_key = c.row_key;
             INSERT INTO {ledger} SELECT {all_c}, c.row_key, {load}, {load}, true, c.store_path
             FROM cur c ANTI JOIN {ledger} l ON l.row_key = c.row_key;",
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

fn count_rows(conn: &Connection, table: &str) -> Result<u64, duckdb::Error> {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
}

/// Every store ever seen: this sync's `sources` rows replace their earlier
/// ones; a store not found now stays, not present.
fn merge_sources(conn: &Connection, sync: i64) -> Result<(), duckdb::Error> {
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
         UPDATE ledger_sources SET present = false
         WHERE {key} NOT IN (SELECT {key_cols} FROM cur_sources)
           AND {key} NOT IN (SELECT {key_cols} FROM unchanged_stores);
         DELETE FROM ledger_sources WHERE {key} IN (SELECT {key_cols} FROM cur_sources);
         INSERT INTO ledger_sources SELECT {cols}, first_seen_load, {load}, true, state_key FROM kept_sources;
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
    .map_err(|e| fail(&ledger, &e))?;
    ours(&conn).map_err(|e| fail(&ledger, &e))?;
    let (sync, latest): (i64, String) = conn
        .query_row(
            "SELECT sync, load_id FROM loads ORDER BY sync DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| fail(&ledger, &e))?;
    // a snapshot is the latest load's output; the history is not, and says so
    let load_id = if args.snapshot {
        latest
    } else {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(format!("ledger history {latest} {sync}").as_bytes());
        crate::store::hex(&digest)[..16].to_string()
    };
    let run_dir = RunDir::create(&ledger)?;
    let stage = run_dir.stage_dir();
    std::fs::create_dir_all(&stage).map_err(|e| fail(&stage, &e))?;
    let filter = if args.snapshot { "present" } else { "true" };
    let cols = |schema: &SchemaRef| column_list(schema, "");
    let file = |name: &str| stage.join(name);
    let staged = crate::stage::Staged {
        events: vec![file("events-ledger.parquet")],
        llm_calls: vec![file("llm_calls.parquet")],
        diagnostics: file("diagnostics.parquet"),
        sources: file("sources.parquet"),
        blobs: Default::default(),
    };
    let copy = format!(
        "CREATE TEMP TABLE numbered AS
           SELECT *, row_number() OVER (ORDER BY row_key) AS x_row FROM ledger_events WHERE {filter};
         COPY (SELECT {ev}, true AS x_wide, NULL::INTEGER AS x_blob, NULL::BIGINT AS x_off,
                 CAST(strlen(text) AS BIGINT) AS x_text_len, CAST(strlen(native) AS BIGINT) AS x_native_len, x_row
               FROM numbered ORDER BY x_row) TO {events} (FORMAT parquet);
         COPY (SELECT x_row, first_seen_load, last_seen_load, present FROM numbered ORDER BY x_row)
           TO {seen} (FORMAT parquet);
         COPY (SELECT {calls} FROM ledger_llm_calls WHERE {filter} ORDER BY row_key) TO {llm} (FORMAT parquet);
         COPY (SELECT {src} FROM ledger_sources WHERE {filter} ORDER BY source_kind, instance, source_path)
           TO {sources} (FORMAT parquet);
         COPY (SELECT {diag} FROM ledger_diagnostics) TO {diagnostics} (FORMAT parquet);",
        ev = cols(&events_schema()),
        calls = cols(&llm_calls_schema()),
        src = cols(&sources_schema()),
        diag = cols(&diagnostics_schema()),
        events = sql_str(&staged.events[0]),
        seen = sql_str(&file("seen.parquet")),
        llm = sql_str(&staged.llm_calls[0]),
        sources = sql_str(&staged.sources),
        diagnostics = sql_str(&staged.diagnostics),
    );
    conn.execute_batch(&copy).map_err(|e| fail(&ledger, &e))?;
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
    let prices = crate::prices::PriceTable::builtin().map_err(|e| fail(&ledger, &e.0))?;
    // each row's place in OUT is known once V016 has laid the rows out, and
    // its x_row only until the next step drops `ordinals`: the rows' seen
    // columns are taken by place then
    let seen = file("seen.parquet");
    let after_layout = crate::steps::STEPS
        .iter()
        .position(|s| s.0.starts_with("V016__"))
        .and_then(|k| crate::steps::STEPS.get(k + 1))
        .map(|s| s.0.trim_end_matches(".sql"));
    let mut placed: Option<Result<(), duckdb::Error>> = None;
    // as a load's: an attempt that runs out of memory starts over at twice
    // the limit, and its rows are placed again
    let warn = |w: &str| eprintln!("{w}");
    let mut timings = crate::timings::Timings::default();
    let engine =
        crate::run::with_memory_retries(args.memory_limit, &warn, &mut timings, |limit, _| {
            let engine = Engine::open(&run_dir.spill_dir(), args.threads, limit)?;
            engine.load(&staged, None, &load_id, &prices)?;
            placed = None;
            engine.run_steps(|_, _, step| {
                if !args.snapshot && Some(step) == after_layout {
                    placed = Some(place_seen(engine.conn(), &seen));
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
                    &"internal: no step after V016 to place the rows at",
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

/// Each exported row's seen columns by its place in OUT (V016's `out_pos`
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
/// The only deletion from a ledger; under its lock, in one transaction.
pub fn prune(ledger: &Path, before: &str) -> Result<Pruned, SyncError> {
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
    let conn = Connection::open(&ledger).map_err(|e| fail(&e))?;
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
    let run = || -> Result<Pruned, duckdb::Error> {
        conn.execute_batch("BEGIN TRANSACTION;")?;
        let old = format!("(SELECT sync FROM loads WHERE epoch_us(finished_at) < {cutoff})");
        let n = |table: &str| {
            conn.execute(
                &format!("DELETE FROM {table} WHERE NOT present AND last_seen_load IN {old}"),
                [],
            )
            .map(|n| n as u64)
        };
        let pruned = Pruned {
            events: n("ledger_events")?,
            llm_calls: n("ledger_llm_calls")?,
            stores: n("ledger_sources")?,
        };
        conn.execute_batch("COMMIT; CHECKPOINT;")?;
        Ok(pruned)
    };
    run().map_err(|e| {
        let _ = conn.execute_batch("ROLLBACK;");
        fail(&e)
    })
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
