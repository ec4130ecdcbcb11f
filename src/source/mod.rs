//! SOURCE, the one argument of every reader (`usage`, `report`, `sql`,
//! `mcp`, `otlp`): told apart by what is on disk, served or exported where
//! it is not a load's outputs, and opened as one read-only DuckDB.
//!
//! ```text
//! SOURCE                         told by                       read as
//! HOME                           a directory with agent state  its outputs (OUT and tables), served by
//!                                                              crate::keep: the kept ledger's export,
//!                                                              or a temp load (--no-keep)
//! OUT.parquet [--tables DIR]     a file that starts PAR1       view events; with DIR a view per
//!                                                              DIR/<table>.parquet
//! DIR (a --tables directory)     <table>.parquet files and no  a view per DIR/<table>.parquet
//!                                agent state at its top
//! FILE.duckdb (--db)             a DuckDB file                 its tables (events, sessions, …),
//!                                                              attached READ_ONLY
//! LEDGER.duckdb (nanoload sync)  a DuckDB file with            sql, mcp: its tables (ledger_events,
//!                                ledger_meta                   loads, …), attached READ_ONLY;
//!                                                              usage, report, otlp: its export (every
//!                                                              row ever seen) in a private temp dir
//! with Reader::prices            llm_calls and sessions priced again at read (a --db file's
//!                                tables as views first; a ledger refuses it)
//! ```
//!
//! [`outputs`] turns SOURCE into what a reader opens (a HOME's served
//! outputs, a ledger's export, anything else as it is) and holds them
//! while it reads; [`Source::open_with`] opens that as one guarded
//! read-only connection ([`query`]: the guard's layers and the query);
//! [`connection`] and [`reprice`] are the reader's DuckDB for the readers
//! that check their files themselves (`report`, `usage`). The SQL
//! fragments and the number formats the readers share are in
//! `crate::readout`.

use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::readout::{ident, sql_str};

pub mod query;

use query::unreadable_parquet;
pub use query::{Answer, Fault, Limits, QueryError, explain, render, within};

/// What SOURCE is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A load's events file (view `events`), perhaps with its `--tables`.
    Out,
    /// A `--tables` directory.
    Tables,
    /// A `--db` file.
    Database,
    /// A ledger of `nanoload sync`.
    Ledger,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Out => "events file",
            SourceKind::Tables => "tables directory",
            SourceKind::Database => "database",
            SourceKind::Ledger => "ledger",
        }
    }
}

/// The memory a reader connection may use unless told otherwise.
pub const READER_MEMORY_LIMIT: u64 = crate::engine::READER_MEMORY_LIMIT;

/// The side tables of a load's outputs (`--tables`, `--db`), in order.
pub const TABLES: [&str; 5] = crate::catalog::SIDE_TABLES;

/// An in-memory DuckDB to read a load's outputs with, for a reader that
/// makes its own views and checks (no extension, no progress bar, times
/// in UTC, [`READER_MEMORY_LIMIT`]).
pub fn connection() -> Result<Connection, duckdb::Error> {
    crate::engine::reader()
}

/// The calls of `llm_calls` and the sessions of `sessions` on `conn`
/// priced again with `table`, by the load's own rules.
pub fn reprice(conn: &Connection, table: &crate::prices::PriceTable) -> duckdb::Result<()> {
    crate::engine::reprice(conn, table)
}

/// Whether `path` is a DuckDB database file (a `--db` file or a ledger),
/// told by its first bytes.
pub fn is_database(path: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 12];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut head))
        .unwrap_or(0);
    crate::dbfile::is_duckdb_head(&head[..n])
}

/// How a reader takes a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LedgerAs {
    /// As its own tables (`sql`, `mcp`: history, with what is gone).
    Tables,
    /// As its export, every row ever seen, priced with the built-in table
    /// (`usage`, `report`, `otlp`; pricing flags price it again at read, as
    /// a HOME's outputs).
    Export,
}

/// SOURCE, or a file it names, that cannot be read as one: `message` says why.
fn input(path: &Path, message: &str) -> QueryError {
    QueryError::Input {
        path: path.to_path_buf(),
        message: message.to_string(),
    }
}

/// The source's calls priced again with `prices` (a source without
/// `llm_calls`, an events file alone, is refused).
fn reprice_calls(
    conn: &Connection,
    source: &Path,
    prices: &crate::prices::PriceTable,
) -> Result<(), QueryError> {
    let has_calls: i64 = conn.query_row(
        "SELECT count(*) FROM (SELECT view_name AS n FROM duckdb_views()
                               WHERE database_name = current_database() AND NOT internal
                               UNION ALL
                               SELECT table_name FROM duckdb_tables()
                               WHERE database_name = current_database())
         WHERE n = 'llm_calls'",
        [],
        |r| r.get(0),
    )?;
    if has_calls == 0 {
        return Err(input(
            source,
            "--prices, --price and --free price llm_calls again, which this source has not: give the load's side tables (--tables DIR)",
        ));
    }
    crate::engine::reprice(conn, prices)?;
    Ok(())
}

/// A DuckDB file (a `--db` file or a ledger) attached read-only to the
/// reader's `conn`, its files allowed: its tables as the reader's (as views
/// when its calls are priced again; a ledger refuses prices).
fn attach(
    conn: &Connection,
    source: &Path,
    reader: &Reader,
    allowed: &mut Vec<PathBuf>,
) -> Result<SourceKind, QueryError> {
    conn.execute_batch(&format!(
        "ATTACH {} AS source (READ_ONLY);",
        sql_str(source)
    ))
    .map_err(|e| {
        use crate::dbfile::Unopened;
        let m = match crate::dbfile::why_unopened(source, &e, false) {
            Unopened::Busy(pid) => format!(
                "another process{} has it open for writing (a `nanoload sync` running?); try again when it has finished",
                pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
            ),
            Unopened::Corrupt(what) => format!("corrupt: {what}"),
            Unopened::Io(io) => io.to_string(),
            Unopened::Other(m) => m,
        };
        input(source, &m)
    })?;
    allowed.push(source.to_path_buf());
    allowed.push(crate::engine::wal_of(source));
    let ledger: i64 = conn.query_row(
        "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'source' AND table_name = 'ledger_meta'",
        [],
        |r| r.get(0),
    )?;
    if ledger > 0 && reader.prices.is_some() {
        return Err(input(source, LEDGER_HOLDS_NO_COSTS));
    }
    if reader.prices.is_some() {
        // its tables as views here, where the calls priced
        // again can take llm_calls' and sessions' place
        let names: Vec<String> = {
            let mut s = conn.prepare(
                "SELECT table_name FROM duckdb_tables()
                 WHERE database_name = 'source' AND schema_name = 'main' ORDER BY 1",
            )?;
            s.query_map([], |r| r.get(0))?
                .collect::<duckdb::Result<_>>()?
        };
        for n in names {
            conn.execute_batch(&format!(
                "CREATE VIEW {n} AS FROM source.main.{n};",
                n = ident(&n)
            ))?;
        }
    } else {
        conn.execute_batch("USE source;")?;
    }
    if ledger > 0 {
        Ok(SourceKind::Ledger)
    } else {
        Ok(SourceKind::Database)
    }
}

/// Why SOURCE gave nothing to read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// A HOME that could not be served (`crate::keep`'s error, as it says it).
    #[error(transparent)]
    Home(#[from] crate::keep::KeepError),
    /// A ledger that could not be opened or exported.
    #[error("{}: {message}", path.display())]
    Ledger { path: PathBuf, message: String },
}

impl SourceError {
    pub fn exit_code(&self) -> crate::summary::ExitCode {
        match self {
            SourceError::Home(e) => e.exit_code(),
            SourceError::Ledger { .. } => crate::summary::ExitCode::Failed,
        }
    }
}

/// SOURCE as the reader opens it, held while it reads.
#[derive(Debug)]
pub struct Outputs {
    /// OUT (a HOME's, a ledger's export's, or as given), a tables
    /// directory, a `--db` file or (taken as its tables) a ledger.
    pub path: PathBuf,
    /// Its `--tables` directory, if any.
    pub tables: Option<PathBuf>,
    /// For stderr: what serving a HOME could not read, and its notes.
    pub lines: Vec<String>,
    /// As a load's: 1 when some input of a HOME could not be read.
    pub exit: crate::summary::ExitCode,
    /// Whether SOURCE was a HOME (its outputs served).
    pub home: bool,
    _served: Option<crate::keep::Served>,
    _export: Option<tempfile::TempDir>,
}

/// SOURCE (with `tables`, its `--tables`) as the reader opens it: a HOME
/// served ([`crate::keep::serve_if_home`]; `keep` false: `--no-keep`), a
/// ledger as `ledger` says, anything else as given (opening it says what
/// it is not).
pub fn outputs(
    source: &Path,
    tables: Option<&Path>,
    keep: bool,
    ledger: LedgerAs,
) -> Result<Outputs, SourceError> {
    let given = |path: &Path, tables: Option<&Path>| Outputs {
        path: path.to_path_buf(),
        tables: tables.map(Path::to_path_buf),
        lines: Vec::new(),
        exit: crate::summary::ExitCode::Ok,
        home: false,
        _served: None,
        _export: None,
    };
    if let Some(s) = crate::keep::serve_if_home(source, tables, keep)? {
        return Ok(Outputs {
            path: s.out.clone(),
            tables: Some(s.tables.clone()),
            lines: s.lines.clone(),
            exit: s.exit,
            home: true,
            _served: Some(s),
            _export: None,
        });
    }
    if ledger == LedgerAs::Tables {
        return Ok(given(source, tables));
    }
    if !is_database(source) || tables.is_some() {
        return Ok(given(source, tables));
    }
    let is_ledger = Source::open(source, None).is_ok_and(|s| s.kind == SourceKind::Ledger);
    if !is_ledger {
        return Ok(given(source, tables));
    }
    let fail = |message: String| SourceError::Ledger {
        path: source.to_path_buf(),
        message,
    };
    let dir = tempfile::Builder::new()
        .prefix("nanoload-export-")
        .tempdir()
        .map_err(|e| fail(format!("{}: {e}", std::env::temp_dir().display())))?;
    let out = dir.path().join("events.parquet");
    let side = dir.path().join("tables");
    crate::ledger::export(&crate::ledger::ExportArgs {
        ledger: source.to_path_buf(),
        out: out.clone(),
        tables: Some(side.clone()),
        snapshot: false,
        dataset: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_limit: 256 << 20,
        prices: crate::prices::PriceTable::builtin().map_err(|e| fail(e.0))?,
    })
    .map_err(|e| fail(e.to_string()))?;
    Ok(Outputs {
        path: out,
        tables: Some(side),
        _export: Some(dir),
        ..given(source, None)
    })
}

/// An opened SOURCE: the guarded connection and what it shows.
pub struct Source {
    conn: Connection,
    pub kind: SourceKind,
    pub path: PathBuf,
    /// Keeps the spill directory for the connection's life (None: the
    /// caller's, [`Reader::spill`]).
    _spill: Option<tempfile::TempDir>,
}

/// How the connection of a [`Source`] is set up.
#[derive(Debug, Clone, PartialEq)]
pub struct Reader {
    /// DuckDB's memory limit, bytes.
    pub memory_limit: u64,
    /// The directory DuckDB spills to, which the caller creates and
    /// removes (a process killed at its deadline cannot remove its own);
    /// None: a private temp dir, removed with the [`Source`].
    pub spill: Option<PathBuf>,
    /// A price table to price the output's calls again with at read
    /// (`--prices`, `--price`, `--free`: [`crate::engine::reprice`]); None:
    /// the costs as the load wrote them.
    pub prices: Option<crate::prices::PriceTable>,
}

impl Default for Reader {
    fn default() -> Reader {
        Reader {
            memory_limit: crate::engine::READER_MEMORY_LIMIT,
            spill: None,
            prices: None,
        }
    }
}

/// Why a ledger refuses `--prices`, `--price` and `--free`.
pub const LEDGER_HOLDS_NO_COSTS: &str = "a ledger holds no costs (its calls are kept as read, before pricing): --prices, --price and --free price its export (nanoload export LEDGER OUT.parquet --tables DIR …) and its traces (nanoload otlp LEDGER …)";

/// A view name for `DIR/<stem>.parquet`: the stem when it is a plain
/// identifier.
fn table_name(p: &Path) -> Option<String> {
    let stem = p.file_stem()?.to_str()?;
    let ok = stem
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && stem.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    ok.then(|| stem.to_string())
}

/// The `*.parquet` tables of a directory, sorted by name.
fn parquet_tables(dir: &Path) -> Result<Vec<(String, PathBuf)>, QueryError> {
    let input = |message: String| QueryError::Input {
        path: dir.to_path_buf(),
        message,
    };
    let mut v = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| input(e.to_string()))? {
        let p = entry.map_err(|e| input(e.to_string()))?.path();
        if p.extension().is_some_and(|x| x == "parquet")
            && p.is_file()
            && let Some(name) = table_name(&p)
        {
            v.push((name, p));
        }
    }
    v.sort();
    if v.is_empty() {
        return Err(input(
            "no <table>.parquet file in this directory (a --tables DIR of a load holds sessions.parquet, llm_calls.parquet, …)".into(),
        ));
    }
    Ok(v)
}

impl Source {
    /// Open SOURCE (and, for an events file, its `--tables` directory)
    /// read-only, with the guard of this module's header in place.
    pub fn open(source: &Path, tables: Option<&Path>) -> Result<Source, QueryError> {
        Source::open_with(source, tables, &Reader::default())
    }

    /// [`Source::open`] with the connection set up as `reader` says.
    pub fn open_with(
        source: &Path,
        tables: Option<&Path>,
        reader: &Reader,
    ) -> Result<Source, QueryError> {
        let source = std::path::absolute(source).map_err(|e| input(source, &e.to_string()))?;
        let tables = tables
            .map(std::path::absolute)
            .transpose()
            .map_err(|e| input(tables.unwrap_or(Path::new("")), &e.to_string()))?;
        let meta = std::fs::metadata(&source).map_err(|e| input(&source, &e.to_string()))?;
        let conn = crate::engine::reader_with(reader.memory_limit)?;
        let (spill, spill_path) = match &reader.spill {
            Some(p) => (None, p.clone()),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("nanoload-sql-")
                    .tempdir()
                    .map_err(|e| input(&std::env::temp_dir(), &e.to_string()))?;
                let p = t.path().to_path_buf();
                (Some(t), p)
            }
        };
        let mut allowed: Vec<PathBuf> = Vec::new();
        let mut views: Vec<(String, PathBuf)> = Vec::new();
        let kind = if meta.is_dir() {
            if tables.is_some() {
                return Err(input(
                    &source,
                    "is a tables directory: --tables goes with an events file (OUT.parquet)",
                ));
            }
            views = parquet_tables(&source)?;
            SourceKind::Tables
        } else {
            let mut head = [0u8; 12];
            let n = {
                use std::io::Read;
                let mut f =
                    std::fs::File::open(&source).map_err(|e| input(&source, &e.to_string()))?;
                f.read(&mut head)
                    .map_err(|e| input(&source, &e.to_string()))?
            };
            if crate::dbfile::is_duckdb_head(&head[..n]) {
                if tables.is_some() {
                    return Err(input(
                        &source,
                        "is a DuckDB database: --tables goes with an events file (OUT.parquet)",
                    ));
                }
                attach(&conn, &source, reader, &mut allowed)?
            } else if n >= 4 && &head[..4] == b"PAR1" {
                views.push(("events".into(), source.clone()));
                if let Some(dir) = &tables {
                    for (name, p) in parquet_tables(dir)? {
                        if name == "events" {
                            return Err(input(&p, "holds a table named events besides OUT"));
                        }
                        views.push((name, p));
                    }
                }
                SourceKind::Out
            } else {
                return Err(input(
                    &source,
                    "not a Parquet file, a tables directory or a DuckDB database written by nanoload",
                ));
            }
        };
        // from here on DuckDB gives its errors as JSON, which `explain` reads
        conn.execute_batch("SET errors_as_json = true")?;
        for (name, p) in &views {
            conn.execute_batch(&format!(
                "CREATE VIEW {name} AS SELECT * FROM read_parquet({})",
                sql_str(p)
            ))
            .map_err(|e| unreadable_parquet(p, &e))?;
            allowed.push(p.clone());
        }
        let spill_dir = format!("{}/", spill_path.display());
        let spill_sql = crate::readout::sql_text(&spill_dir);
        // what the calls priced again hold spills there too
        conn.execute_batch(&format!("SET temp_directory = {spill_sql};"))?;
        if let Some(prices) = &reader.prices {
            reprice_calls(&conn, &source, prices)?;
        }
        conn.execute_batch(&format!(
            "SET allowed_paths = {paths};
             SET allowed_directories = [{spill_sql}];
             SET enable_external_access = false;
             SET allow_community_extensions = false;
             SET lock_configuration = true;",
            paths = crate::engine::sql_list(&allowed),
        ))?;
        Ok(Source {
            conn,
            kind,
            path: source,
            _spill: spill,
        })
    }

    /// The connection (every statement on it passes the guard's layers 2–3;
    /// [`Source::query`] adds 1 and 4).
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The tables and views a query can name, sorted.
    pub fn table_names(&self) -> Result<Vec<String>, QueryError> {
        let mut s = self.conn.prepare(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() AND NOT internal
             UNION
             SELECT view_name FROM duckdb_views() WHERE database_name = current_database() AND NOT internal
             ORDER BY 1",
        )?;
        Ok(s.query_map([], |r| r.get(0))?
            .collect::<duckdb::Result<_>>()?)
    }

    /// [`Source::table_names`] with their row counts.
    pub fn tables(&self) -> Result<Vec<(String, i64)>, QueryError> {
        let names = self.table_names()?;
        let mut v = Vec::with_capacity(names.len());
        for n in names {
            let rows: i64 =
                self.conn
                    .query_row(&format!("SELECT count(*) FROM {}", ident(&n)), [], |r| {
                        r.get(0)
                    })?;
            v.push((n, rows));
        }
        Ok(v)
    }

    /// The columns of `table` (name, type), or None when there is no such
    /// table.
    pub fn columns(&self, table: &str) -> Result<Option<Vec<(String, String)>>, QueryError> {
        if !self.table_names()?.iter().any(|n| n == table) {
            return Ok(None);
        }
        let mut s = self.conn.prepare(&format!("DESCRIBE {}", ident(table)))?;
        let cols = s
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<duckdb::Result<_>>()?;
        Ok(Some(cols))
    }
}
