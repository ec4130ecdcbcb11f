//! What stands at a path nanoload is about to write, and whether it may be
//! replaced. An output replaces only a file of the kind nanoload itself
//! writes there (an earlier run's OUT, table, `--db` file, summary, page or
//! traces), an empty file, or nothing: a ledger, a user's database, a
//! Parquet file of another schema or any other file is refused with what it
//! is, and nothing is written. A ledger is the only copy of what the agents
//! deleted; a slip of the command line (`nanoload ~ history.duckdb` without
//! `sync`, `export L L`, `--db L`) must not destroy it.
//!
//! ```text
//! Output (what the command writes there)
//!   identify(path) ─▶ Found::Absent | Found::Empty | Found::File(What)
//!   What: Parquet { columns } | DuckDb { tables } | Sqlite | Text | Binary | Link | Other
//!   Output::replaces(&What) → true only for nanoload's own file of that kind
//! ```
//! Only the head of a file is read (its magic bytes, a Parquet footer, a
//! DuckDB catalog opened read-only, the first bytes of a text): never a
//! value, so nothing of a foreign file reaches a message.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::engine::TABLES;

/// What a command writes at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// OUT.parquet: the events table (a load's, or an export's).
    Events,
    /// `--tables DIR/<table>.parquet`.
    Table(&'static str),
    /// `--db FILE.duckdb`: every table in one DuckDB file.
    Database,
    /// `--summary-json FILE`.
    Summary,
    /// `nanoload report`'s page.
    Report,
    /// `nanoload otlp --out FILE`: one OTLP/JSON request per line.
    Traces,
}

/// The leading columns of each table nanoload writes: a Parquet file whose
/// columns begin with them is that table of an earlier run (columns are
/// only ever appended, so an older or newer build's file begins the same).
fn leading_columns(table: &str) -> &'static [&'static str] {
    match table {
        "events" => &[
            "agent",
            "instance",
            "session_id",
            "parent_session_id",
            "project_path",
            "git_branch",
        ],
        "sessions" => &["agent", "instance", "session_id", "channel"],
        "llm_calls" => &["instance", "id", "started_at_ms", "duration_ms"],
        "tz_offsets" => &["instance", "first_day", "last_day", "offset_minutes"],
        "diagnostics" => &["kind", "agent", "instance", "source_path"],
        "sources" => &["source_kind", "source_role", "source_path", "bytes"],
        _ => &[],
    }
}

/// What is at a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    Absent,
    /// A regular file of no bytes: nothing to lose.
    Empty,
    File(What),
}

impl Found {
    /// What stands there, if anything but an empty file does.
    pub fn into_what(self) -> Option<What> {
        match self {
            Found::File(w) => Some(w),
            Found::Absent | Found::Empty => None,
        }
    }
}

/// What a file is, as far as its head tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// A Parquet file and its top-level column names (`None`: its footer
    /// could not be read).
    Parquet {
        columns: Option<Vec<String>>,
    },
    /// A DuckDB database and its tables (`None`: it could not be opened,
    /// with why).
    DuckDb {
        tables: Result<Vec<String>, String>,
    },
    Sqlite,
    /// A UTF-8 text and its first bytes (kept to recognise nanoload's own
    /// texts; never printed).
    Text {
        head: String,
        bytes: u64,
    },
    Binary {
        bytes: u64,
    },
    /// A symbolic link (renaming onto it would replace the link).
    Link,
    /// A directory, a device, a socket, a pipe.
    Other(&'static str),
}

impl What {
    /// A DuckDB database that is a nanoload ledger.
    pub fn is_ledger(&self) -> bool {
        matches!(self, What::DuckDb { tables: Ok(t) } if t.iter().any(|t| t == "ledger_meta"))
    }

    /// What it is, for a message: never a value from the file.
    pub fn describe(&self) -> String {
        match self {
            What::DuckDb { .. } if self.is_ledger() => {
                "a nanoload ledger (the history `nanoload sync` keeps)".into()
            }
            What::DuckDb { tables: Ok(t) } if t.is_empty() => {
                "a DuckDB database (no tables)".into()
            }
            What::DuckDb { tables: Ok(t) } => format!("a DuckDB database (tables: {})", listed(t)),
            What::DuckDb { tables: Err(e) } => {
                format!("a DuckDB database that could not be opened to see what it holds ({e})")
            }
            What::Parquet {
                columns: Some(c), ..
            } => format!("a Parquet file (columns: {})", listed(c)),
            What::Parquet { columns: None } => {
                "a Parquet file whose footer could not be read".into()
            }
            What::Sqlite => "a SQLite database".into(),
            What::Text { bytes, .. } => format!("a text file of {bytes} bytes"),
            What::Binary { bytes } => format!("a file of {bytes} bytes"),
            What::Link => "a symbolic link".into(),
            What::Other(kind) => format!("a {kind}"),
        }
    }
}

/// At most five names, then how many more.
fn listed(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(5).map(String::as_str).collect();
    match names.len().saturating_sub(5) {
        0 => shown.join(", "),
        more => format!("{}, … {more} more", shown.join(", ")),
    }
}

/// Refused: the path holds a file this command must not replace.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "it is {}, not {}; nothing was written{}",
    what.describe(),
    output.noun(),
    hint(*output, what, path)
)]
pub struct Refused {
    pub path: PathBuf,
    pub output: Output,
    pub what: What,
}

fn hint(output: Output, what: &What, path: &Path) -> String {
    if what.is_ledger() {
        format!(
            " (a ledger is written only by `nanoload sync HOME {}`; read it with `nanoload export`)",
            path.display()
        )
    } else if output == Output::Events && matches!(what, What::DuckDb { .. }) {
        " (OUT is a Parquet file; `--db FILE.duckdb` writes a DuckDB database)".into()
    } else {
        " (move it away or choose another path)".into()
    }
}

impl Output {
    /// What nanoload's own file of this kind is, for a message.
    pub fn noun(self) -> String {
        match self {
            Output::Events => "an events table nanoload wrote (OUT.parquet)".into(),
            Output::Table(t) => format!("the {t} table nanoload writes there"),
            Output::Database => "a --db file nanoload wrote".into(),
            Output::Summary => "a --summary-json file nanoload wrote".into(),
            Output::Report => "a page `nanoload report` wrote".into(),
            Output::Traces => "traces `nanoload otlp` wrote".into(),
        }
    }

    /// Whether `what` is nanoload's own file of this kind, which a new one
    /// may replace.
    pub fn replaces(self, what: &What) -> bool {
        match (self, what) {
            (Output::Events, What::Parquet { columns: Some(c) }) => {
                begins_with(c, leading_columns("events")) && c.iter().any(|c| c == "load_id")
            }
            (Output::Table(t), What::Parquet { columns: Some(c) }) => {
                begins_with(c, leading_columns(t))
            }
            (Output::Database, What::DuckDb { tables: Ok(t) }) => {
                t.iter().any(|t| t == "events")
                    && t.iter()
                        .all(|t| t == "events" || TABLES.contains(&t.as_str()))
            }
            (Output::Summary, What::Text { head, .. }) => summary_json(head),
            (Output::Report, What::Text { head, .. }) => {
                head.starts_with("<!DOCTYPE html>") && head.contains("<title>nanoload report: ")
            }
            (Output::Traces, What::Text { head, .. }) => {
                head.starts_with("{\"resourceSpans\":")
                    && head.contains("\"scope\":{\"name\":\"nanoload\"")
            }
            _ => false,
        }
    }

    /// Check that `path` holds nothing, nothing at all, or this kind's own
    /// file. An error reading it is an I/O error (the caller reports it as
    /// it reports a directory it cannot write).
    pub fn check(self, path: &Path) -> std::io::Result<Result<(), Refused>> {
        Ok(match identify(path)? {
            Found::Absent | Found::Empty => Ok(()),
            Found::File(what) if self.replaces(&what) => Ok(()),
            Found::File(what) => Err(Refused {
                path: path.to_path_buf(),
                output: self,
                what,
            }),
        })
    }
}

fn begins_with(columns: &[String], lead: &[&str]) -> bool {
    !lead.is_empty() && columns.len() >= lead.len() && columns.iter().zip(lead).all(|(c, l)| c == l)
}

/// `--summary-json`'s object, as it is written (pretty, keys sorted): its
/// top-level keys include `exit_code`, `kinds` and `load_id`.
fn summary_json(head: &str) -> bool {
    let keys: Vec<&str> = head
        .lines()
        .filter_map(|l| l.strip_prefix("  \""))
        .filter_map(|l| l.split_once("\": ").map(|(k, _)| k))
        .collect();
    head.starts_with("{\n  \"")
        && ["exit_code", "kinds", "load_id"]
            .iter()
            .all(|k| keys.contains(k))
}

/// The bytes of a text's head that are kept to recognise it.
const HEAD: usize = 64 << 10;

/// What is at `path` (not following a link: renaming onto a link replaces
/// the link).
pub fn identify(path: &Path) -> std::io::Result<Found> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Absent),
        Err(e) => return Err(e),
    };
    let ft = meta.file_type();
    if ft.is_symlink() {
        return Ok(Found::File(What::Link));
    }
    if ft.is_dir() {
        return Ok(Found::File(What::Other("directory")));
    }
    if !ft.is_file() {
        return Ok(Found::File(What::Other(
            "special file (a device, socket or pipe)",
        )));
    }
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    let mut head = Vec::with_capacity(HEAD.min(meta.len() as usize));
    std::fs::File::open(path)?
        .take(HEAD as u64)
        .read_to_end(&mut head)?;
    Ok(Found::File(classify(path, &head, meta.len())))
}

/// What is at `path` when it is anything but nothing, an empty file or a
/// DuckDB database (told by its magic bytes alone, not opened): a file
/// `nanoload sync` must not take for a ledger.
pub fn not_duckdb(path: &Path) -> std::io::Result<Option<What>> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if meta.is_file() {
        let mut head = [0u8; 12];
        let n = std::fs::File::open(path)?.read(&mut head)?;
        if n == 0 || crate::dbfile::is_duckdb_head(&head[..n]) {
            return Ok(None);
        }
    }
    identify(path).map(Found::into_what)
}

fn classify(path: &Path, head: &[u8], bytes: u64) -> What {
    if head.starts_with(b"PAR1") {
        return What::Parquet {
            columns: parquet_columns(path),
        };
    }
    if crate::dbfile::is_duckdb_head(head) {
        return What::DuckDb {
            tables: duckdb_tables(path),
        };
    }
    if head.starts_with(b"SQLite format 3\0") {
        return What::Sqlite;
    }
    // a text cut inside a character at the head's end is still a text
    let text = match std::str::from_utf8(head) {
        Ok(t) => Some(t),
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()]).ok(),
        Err(_) => None,
    };
    match text {
        Some(t) if !t.contains('\0') => What::Text {
            head: t.to_string(),
            bytes,
        },
        _ => What::Binary { bytes },
    }
}

/// The top-level column names of a Parquet file, from its footer.
fn parquet_columns(path: &Path) -> Option<Vec<String>> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(std::fs::File::open(path).ok()?).ok()?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    Some(
        schema
            .root_schema()
            .get_fields()
            .iter()
            .map(|f| f.name().to_string())
            .collect(),
    )
}

/// The tables of a DuckDB database, opened read-only (a database another
/// process holds open for writing cannot be: its error is kept).
fn duckdb_tables(path: &Path) -> Result<Vec<String>, String> {
    let conn = crate::engine::reader().map_err(|e| crate::diag::one_line(&e.to_string()))?;
    let run = || -> duckdb::Result<Vec<String>> {
        conn.execute_batch(&format!(
            "ATTACH {} AS probed (READ_ONLY);",
            crate::engine::sql_str(path)
        ))?;
        let mut s = conn.prepare(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'probed'
             UNION SELECT view_name FROM duckdb_views() WHERE database_name = 'probed' AND NOT internal
             ORDER BY 1",
        )?;
        let names = s.query_map([], |r| r.get::<_, String>(0))?;
        names.collect()
    };
    run().map_err(|e| crate::diag::one_line(&e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
        let p = dir.join(name);
        std::fs::write(&p, bytes)?;
        Ok(p)
    }

    /// Absent and empty paths may be written; a text, a binary and a link
    /// are named for what they are and refused for every output.
    #[test]
    fn foreign_files_are_named_and_refused() -> Result<(), Box<dyn std::error::Error>> {
        let d = tempfile::tempdir()?;
        let outputs = [
            Output::Events,
            Output::Table("sessions"),
            Output::Database,
            Output::Summary,
            Output::Report,
            Output::Traces,
        ];
        let empty = write(d.path(), "empty", b"")?;
        let text = write(d.path(), "notes.txt", b"my notes\n")?;
        let binary = write(d.path(), "blob", &[0u8, 1, 2, 3, 255])?;
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&text, &link)?;
        for o in outputs {
            assert_eq!(
                o.check(&d.path().join("absent"))?
                    .map_err(|r| r.to_string()),
                Ok(())
            );
            assert_eq!(o.check(&empty)?.map_err(|r| r.to_string()), Ok(()));
            let refused = |p: &Path| o.check(p).map(|r| r.err().map(|e| e.to_string()));
            assert_eq!(
                refused(&text)?.as_deref(),
                Some(format!("it is a text file of 9 bytes, not {}; nothing was written (move it away or choose another path)", o.noun()).as_str())
            );
            assert_eq!(
                refused(&binary)?.as_deref(),
                Some(format!("it is a file of 5 bytes, not {}; nothing was written (move it away or choose another path)", o.noun()).as_str())
            );
            assert_eq!(
                refused(&link)?.as_deref(),
                Some(format!("it is a symbolic link, not {}; nothing was written (move it away or choose another path)", o.noun()).as_str())
            );
        }
        Ok(())
    }

    /// nanoload's summary, page and traces are recognised by their heads;
    /// each only where that output goes.
    #[test]
    fn own_texts_are_recognised_only_as_their_own_output() {
        let text = |s: &str| What::Text {
            head: s.into(),
            bytes: s.len() as u64,
        };
        let summary = text(
            "{\n  \"diagnostics\": {\n    \"loss\": 2\n  },\n  \"exit_code\": 0,\n  \"kinds\": {},\n  \"load_id\": \"ab\",\n",
        );
        let page = text(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<title>nanoload report: out.parquet</title>",
        );
        let traces = text(
            "{\"resourceSpans\":[{\"resource\":{},\"scopeSpans\":[{\"scope\":{\"name\":\"nanoload\",\"version\":\"0.1.0\"}",
        );
        let other_json = text(
            "{\n  \"exit_code\": 1,\n  \"nested\": {\n    \"kinds\": 2,\n    \"load_id\": 3\n  }\n}",
        );
        assert!(Output::Summary.replaces(&summary));
        assert!(Output::Report.replaces(&page));
        assert!(Output::Traces.replaces(&traces));
        for (o, w) in [
            (Output::Summary, &page),
            (Output::Summary, &other_json),
            (Output::Report, &summary),
            (Output::Traces, &summary),
            (Output::Events, &traces),
        ] {
            assert!(!o.replaces(w), "{o:?} must not replace {w:?}");
        }
    }

    /// A Parquet file is a table's only when its columns begin as that
    /// table's do; OUT's must also carry load_id.
    #[test]
    fn parquet_files_are_tables_by_their_leading_columns() {
        let pq = |c: &[&str]| What::Parquet {
            columns: Some(c.iter().map(|s| s.to_string()).collect()),
        };
        let events = pq(&[
            "agent",
            "instance",
            "session_id",
            "parent_session_id",
            "project_path",
            "git_branch",
            "seq",
            "load_id",
        ]);
        assert!(Output::Events.replaces(&events));
        assert!(!Output::Table("sessions").replaces(&events));
        assert!(!Output::Events.replaces(&pq(&["agent", "instance", "session_id"])));
        assert!(!Output::Events.replaces(&pq(&[
            "agent",
            "instance",
            "session_id",
            "parent_session_id",
            "project_path",
            "git_branch",
        ])));
        assert!(Output::Table("tz_offsets").replaces(&pq(&[
            "instance",
            "first_day",
            "last_day",
            "offset_minutes",
            "pairs",
        ])));
        assert!(!Output::Table("tz_offsets").replaces(&pq(&["a", "b"])));
        assert!(!Output::Table("sessions").replaces(&What::Parquet { columns: None }));
    }

    /// A DuckDB file is a `--db` output when it holds `events` and only
    /// nanoload's tables; a ledger and any other database are refused, the
    /// ledger by name.
    #[test]
    fn duckdb_files_are_told_apart_by_their_tables() -> Result<(), Box<dyn std::error::Error>> {
        let d = tempfile::tempdir()?;
        let mk = |name: &str, sql: &str| -> Result<PathBuf, duckdb::Error> {
            let p = d.path().join(name);
            duckdb::Connection::open(&p)?.execute_batch(sql)?;
            Ok(p)
        };
        let db = mk(
            "out.duckdb",
            "CREATE TABLE events (a INT); CREATE TABLE sessions (a INT); CREATE TABLE sources (a INT);",
        )?;
        let ledger = mk(
            "history.duckdb",
            "CREATE TABLE ledger_meta (key VARCHAR, value VARCHAR); CREATE TABLE loads (sync BIGINT);",
        )?;
        let mine = mk(
            "mine.duckdb",
            "CREATE TABLE events (a INT); CREATE TABLE budget (a INT);",
        )?;
        assert_eq!(
            Output::Database.check(&db)?.map_err(|r| r.to_string()),
            Ok(())
        );
        assert_eq!(
            Output::Database.check(&ledger)?.map_err(|r| r.to_string()),
            Err(format!(
                "it is a nanoload ledger (the history `nanoload sync` keeps), not a --db file nanoload wrote; nothing was written (a ledger is written only by `nanoload sync HOME {}`; read it with `nanoload export`)",
                ledger.display()
            ))
        );
        assert_eq!(
            Output::Events.check(&mine)?.map_err(|r| r.to_string()),
            Err("it is a DuckDB database (tables: budget, events), not an events table nanoload wrote (OUT.parquet); nothing was written (OUT is a Parquet file; `--db FILE.duckdb` writes a DuckDB database)".into())
        );
        assert_eq!(
            Output::Database
                .check(&mine)?
                .map(|_| ())
                .map_err(|r| r.what.is_ledger()),
            Err(false)
        );
        Ok(())
    }
}
