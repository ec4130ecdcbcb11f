//! Every DuckDB nanoload opens, opened here with one settings block: in
//! memory (the load's engine, the readers, a ledger's merge, the probes of
//! a database file) or a database file (a ledger exported or pruned).
//!
//! ```text
//! open_in_memory   no extension installed or loaded on its own, no progress bar, insertion
//! open_file        order kept, times in UTC (SESSION_UTC), and per use: memory limit,
//!                  spill dir, threads (Settings); a file read-only or read-write (Access)
//! reader           a reader's in-memory DuckDB at READER_MEMORY_LIMIT (reader_with: another)
//! ```

use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::readout::sql_str;

/// The session settings of every connection nanoload opens: times with a
/// zone are read, shown, truncated and cast to a date in UTC. The bundled
/// engine has ICU, whose default zone is the host's: without this a cast
/// of a naive time to TIMESTAMPTZ (V016's `timestamp_utc`), a load's
/// output bytes and a query's answer would depend on where they ran.
pub const SESSION_UTC: &str = "SET TimeZone = 'UTC'; SET Calendar = 'gregorian';";

/// [`SESSION_UTC`] on `conn`.
pub fn in_utc(conn: &Connection) -> duckdb::Result<()> {
    conn.execute_batch(SESSION_UTC)
}

/// The memory a reader connection may use unless told otherwise (`nanoload
/// sql` and `nanoload mcp` take `--memory-limit`): DuckDB's own default is
/// 80 % of the machine's memory, which one query of an agent over MCP
/// should not be able to take.
pub const READER_MEMORY_LIMIT: u64 = 1 << 30;

/// An in-memory DuckDB to read a load's output back with (`nanoload
/// report`, `nanoload usage`): no extension installed or loaded on its own,
/// no progress bar on the terminal, [`READER_MEMORY_LIMIT`].
pub fn reader() -> Result<Connection, duckdb::Error> {
    reader_with(READER_MEMORY_LIMIT)
}

/// [`reader`] with a memory limit of `memory_limit` bytes (DuckDB spills
/// what does not fit to its temp directory, or fails the query).
pub fn reader_with(memory_limit: u64) -> Result<Connection, duckdb::Error> {
    open_in_memory(&Settings {
        memory_limit,
        spill: None,
        threads: None,
    })
}

/// How an in-memory DuckDB of nanoload is set up beyond the settings every
/// one has ([`open_in_memory`]).
pub struct Settings<'a> {
    /// `memory_limit`, in bytes (rounded up to MiB).
    pub memory_limit: u64,
    /// `temp_directory`, where what does not fit spills (DuckDB's own
    /// default beside the process otherwise).
    pub spill: Option<&'a Path>,
    /// `threads` (DuckDB's default, the CPUs, otherwise).
    pub threads: Option<usize>,
}

/// The one place nanoload opens an in-memory DuckDB (the load's engine, the
/// readers, a ledger's merge, the probes of a database file): no extension
/// installed or loaded on its own, no progress bar on the terminal, rows
/// kept in the order they were inserted, times in UTC ([`SESSION_UTC`]),
/// and `settings`.
pub fn open_in_memory(settings: &Settings) -> Result<Connection, duckdb::Error> {
    let conn = Connection::open_in_memory()?;
    set_up(&conn, settings)?;
    Ok(conn)
}

/// How [`open_file`] opens a database file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

/// The one place nanoload opens a DuckDB database file as its main
/// database (a ledger to export from or to prune; a sync attaches its
/// ledger to an [`open_in_memory`] one instead): the settings block of
/// every in-memory one, and `settings`.
pub fn open_file(
    path: &Path,
    access: Access,
    settings: &Settings,
) -> Result<Connection, duckdb::Error> {
    let mode = match access {
        Access::ReadOnly => duckdb::AccessMode::ReadOnly,
        Access::ReadWrite => duckdb::AccessMode::ReadWrite,
    };
    let conn = Connection::open_with_flags(path, duckdb::Config::default().access_mode(mode)?)?;
    set_up(&conn, settings)?;
    Ok(conn)
}

/// The settings every DuckDB of nanoload runs with, and `settings`.
fn set_up(conn: &Connection, settings: &Settings) -> Result<(), duckdb::Error> {
    let spill = settings
        .spill
        .map(|p| format!("SET temp_directory = {};", sql_str(p)))
        .unwrap_or_default();
    let threads = settings
        .threads
        .map(|t| format!("SET threads = {t};"))
        .unwrap_or_default();
    conn.execute_batch(&format!(
        "SET autoinstall_known_extensions = false;
         SET autoload_known_extensions = false;
         SET enable_progress_bar = false;
         SET preserve_insertion_order = true;
         SET memory_limit = '{}MiB';
         {spill}
         {threads}
         {SESSION_UTC}",
        settings.memory_limit.div_ceil(1 << 20)
    ))
}

/// The write-ahead log DuckDB keeps beside a database file (`FILE.wal`).
pub fn wal_of(db: &Path) -> PathBuf {
    let mut wal = db.as_os_str().to_owned();
    wal.push(".wal");
    PathBuf::from(wal)
}
