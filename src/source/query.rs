//! The guarded query of `nanoload sql SOURCE "SELECT …"` and of the query
//! tools of `nanoload mcp`, over a [`Source`] opened read-only.
//!
//! The guard, in layers (each proven by `sql::…` tests):
//! 1. Only one statement, and only one DuckDB can serialize as a SELECT
//!    (`json_serialize_sql`: SELECT, FROM-first, WITH, VALUES, DESCRIBE,
//!    SHOW, SUMMARIZE); anything else is refused before it is planned.
//! 2. File access outside SOURCE is off (`enable_external_access = false`,
//!    `allowed_paths` = SOURCE's files, `allowed_directories` = the spill
//!    directory), no extension is installed or loaded, and the
//!    configuration is locked, so no statement turns any of it back on.
//! 3. A database SOURCE is attached READ_ONLY.
//! 4. Limits: at most `max_rows` rows are fetched (one more tells that there
//!    were more), the connection's memory is limited, and a query still
//!    running at `timeout` is interrupted. DuckDB checks its interrupt only
//!    between vectors, so one long expression (a regular expression or a
//!    hash over large strings) runs on past it: [`within`] answers at the
//!    deadline all the same, and the process that asked ends the work (the
//!    CLI exits; `nanoload mcp` runs each tool call in a child process that
//!    is killed, src/mcp.rs).
//!
//! DuckDB's errors enter once, `From<duckdb::Error> for QueryError`: the
//! connection gives them as JSON (`errors_as_json`), [`explain`] turns them
//! into a [`Fault`] and a message in the user's terms, DuckDB's error kept
//! as the source. Times with a zone are read and shown in UTC
//! (the engine's `SESSION_UTC`): the engine's ICU does the date math.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use duckdb::Connection;
use serde_json::Value;

use super::Source;
use crate::diag::one_line;

/// Why a query gave no rows.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// SOURCE cannot be read as one of the four kinds.
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
    /// The statement is not one the guard lets through.
    #[error("refused: {0}")]
    Refused(String),
    /// DuckDB could not parse, bind or run it: what kind of mistake, what
    /// was wrong in the user's terms ([`explain`]), and DuckDB's own error.
    #[error("error: {message}")]
    Failed {
        fault: Fault,
        message: String,
        #[source]
        source: Option<duckdb::Error>,
    },
    /// Interrupted at the time limit.
    #[error("error: the query ran longer than {0} s and was stopped (--timeout)")]
    Timeout(u64),
}

impl QueryError {
    /// The one-word kind the JSON errors carry.
    pub fn kind(&self) -> &'static str {
        match self {
            QueryError::Input { .. } => "input",
            QueryError::Refused(_) => "refused",
            QueryError::Failed { .. } => "error",
            QueryError::Timeout(_) => "timeout",
        }
    }

    /// `{"error": {"kind": …, "message": …}}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({"error": {"kind": self.kind(), "message": self.to_string()}})
    }

    /// A failure of nanoload's own (not DuckDB's), said as `message`.
    fn failed(message: String) -> QueryError {
        QueryError::Failed {
            fault: Fault::Other,
            message,
            source: None,
        }
    }
}

/// DuckDB's errors enter here, once: classified and said in the user's
/// terms ([`explain`]), DuckDB's own error kept as the source.
impl From<duckdb::Error> for QueryError {
    fn from(e: duckdb::Error) -> QueryError {
        let (fault, message) = explain(&e);
        QueryError::Failed {
            fault,
            message,
            source: Some(e),
        }
    }
}

/// What kind of mistake a statement DuckDB could not run was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Not SQL DuckDB can parse.
    Syntax,
    /// A table or view this SOURCE does not have.
    NoSuchTable,
    /// A column none of the tables the query reads has.
    NoSuchColumn,
    /// A function DuckDB does not have, or not for these argument types.
    NoSuchFunction,
    /// A value that cannot be converted, or a number out of its type's range.
    BadValue,
    /// A file outside SOURCE.
    FileAccess,
    /// More memory than the connection's limit.
    OutOfMemory,
    /// Anything else.
    Other,
}

/// A DuckDB error said in the user's terms: the class of mistake and one
/// line that names what was wrong — never the statement nanoload wrapped
/// the query in, DuckDB's caret display or its error-type prefix. The
/// reader's connection has DuckDB give its errors as JSON
/// (`errors_as_json`), so the class comes from DuckDB's exception type and
/// subtype and the names from its fields, not from the words of its
/// message; an error that is not DuckDB's JSON is given on one line as it
/// is.
pub fn explain(e: &duckdb::Error) -> (Fault, String) {
    let text = match e {
        duckdb::Error::DuckDBFailure(_, Some(text)) => text,
        other => return (Fault::Other, one_line(&other.to_string())),
    };
    let Some(j) = crate::engine::duckdb_json(text) else {
        return (Fault::Other, one_line(text));
    };
    let field = |k: &str| j.get(k).and_then(Value::as_str).unwrap_or("");
    let message = match field("exception_message") {
        "" => one_line(text),
        m => one_line(m),
    };
    let name = field("name");
    let candidates = field("candidates");
    match (field("exception_type"), field("error_subtype")) {
        ("Parser" | "Syntax", _) => (Fault::Syntax, format!("not valid SQL: {message}")),
        ("Catalog", "MISSING_ENTRY") if field("type").contains("Function") => {
            let hint = match candidates {
                "" => String::new(),
                c => format!(" (did you mean {c}?)"),
            };
            (
                Fault::NoSuchFunction,
                format!("no function named {name}{hint}"),
            )
        }
        ("Catalog", "MISSING_ENTRY") if matches!(field("type"), "Table" | "View") => {
            (Fault::NoSuchTable, format!("no table or view named {name}"))
        }
        ("Binder", "COLUMN_NOT_FOUND") => {
            let similar = match candidates {
                "" => String::new(),
                c => format!(
                    "; similar: {}",
                    c.split(',')
                        .map(|n| n.trim().trim_matches('"'))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            (
                Fault::NoSuchColumn,
                format!("no column named {name} in the tables the query reads{similar}"),
            )
        }
        ("Binder", "NO_MATCHING_FUNCTION") => (
            Fault::NoSuchFunction,
            format!(
                "no function {name} takes these arguments: {} (check their order and types)",
                field("call")
            ),
        ),
        (
            "Conversion" | "Invalid Input" | "Out of Range" | "Divide by Zero" | "Decimal"
            | "Mismatch Type" | "Invalid type",
            _,
        ) => (
            Fault::BadValue,
            format!("a value cannot be used so: {message}"),
        ),
        ("Permission", _) => (
            Fault::FileAccess,
            format!("only SOURCE's own files can be read: {message}"),
        ),
        ("Out of Memory", _) => (
            Fault::OutOfMemory,
            format!("the query needs more memory than its limit (--memory-limit): {message}"),
        ),
        _ => (Fault::Other, message),
    }
}

/// DuckDB's own sentence of an error, on one line, without its type or
/// the statement it was in.
fn duckdb_message(e: &duckdb::Error) -> String {
    crate::engine::classify(e).1
}

/// Why `path` (a view's Parquet file) could not be read, in the user's
/// terms: told from the file's own bytes where they say it (too short, not
/// Parquet, cut short), else DuckDB's error explained.
pub(super) fn unreadable_parquet(path: &Path, e: &duckdb::Error) -> QueryError {
    let input = |message: String| QueryError::Input {
        path: path.to_path_buf(),
        message,
    };
    let ends = (|| -> std::io::Result<(u64, [u8; 4], [u8; 4])> {
        use std::io::{Read, Seek, SeekFrom};
        let mut f = std::fs::File::open(path)?;
        let len = f.metadata()?.len();
        let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
        if len >= 8 {
            f.read_exact(&mut head)?;
            f.seek(SeekFrom::End(-4))?;
            f.read_exact(&mut tail)?;
        }
        Ok((len, head, tail))
    })();
    match ends {
        Err(io) => input(io.to_string()),
        Ok((len, _, _)) if len < 12 => input(format!(
            "not a Parquet file: {len} bytes, too short to hold one"
        )),
        Ok((_, head, _)) if &head != b"PAR1" => input("not a Parquet file".into()),
        Ok((_, _, tail)) if &tail != b"PAR1" => input(
            "not a complete Parquet file: it ends before Parquet's footer (cut short, or still being written?)"
                .into(),
        ),
        Ok(_) => input(format!("cannot be read as Parquet: {}", duckdb_message(e))),
    }
}

/// How much one query may fetch and take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Rows fetched at most; 0: no limit.
    pub max_rows: usize,
    /// Seconds before the query is interrupted; 0: no limit.
    pub timeout_secs: u64,
}

/// A query's result: column names and DuckDB types, rows of JSON values
/// (DuckDB's `to_json` of each value: numbers, strings, objects, lists;
/// NULL as null).
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub columns: Vec<(String, String)>,
    pub rows: Vec<Vec<Value>>,
    /// More rows than `max_rows` were there; only the first are kept.
    pub truncated: bool,
}

impl Answer {
    /// `{"columns": [{"name", "type"}], "rows": [[…]], "row_count", "truncated"}`.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "columns": self.columns.iter()
                .map(|(n, t)| serde_json::json!({"name": n, "type": t}))
                .collect::<Vec<_>>(),
            "rows": self.rows,
            "row_count": self.rows.len(),
            "truncated": self.truncated,
        })
    }

    /// Each row as one JSON object (column name → value), for JSON lines.
    pub fn objects(&self) -> impl Iterator<Item = Value> + '_ {
        self.rows.iter().map(|r| {
            Value::Object(
                self.columns
                    .iter()
                    .map(|(n, _)| n.clone())
                    .zip(r.iter().cloned())
                    .collect(),
            )
        })
    }
}

/// Run `job` on a thread of its own and wait for it at most `secs` seconds
/// (0: no limit): its answer, or [`QueryError::Timeout`] at the deadline.
/// The thread is then left to end on its own (a query's watchdog has
/// interrupted it, which DuckDB sees at its next check: within one vector
/// of work, however long that is), so a process that got the timeout ends
/// soon after and takes the work with it.
pub fn within<T: Send + 'static>(
    secs: u64,
    job: impl FnOnce() -> T + Send + 'static,
) -> Result<T, QueryError> {
    if secs == 0 {
        return Ok(job());
    }
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .name("nanoload-query".into())
        .spawn(move || {
            let _ = tx.send(job());
        })
        .map_err(|e| QueryError::failed(format!("cannot start the query's thread: {e}")))?;
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(answer) => Ok(answer),
        Err(mpsc::RecvTimeoutError::Timeout) => Err(QueryError::Timeout(secs)),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(QueryError::failed(
            "the query's thread ended without an answer".into(),
        )),
    }
}

impl Source {
    /// Run `sql` under the guard: one statement DuckDB serializes as a
    /// SELECT, the rows limited, the time limited. A table it names that
    /// SOURCE does not have is answered with the tables SOURCE has.
    pub fn query(&self, sql: &str, limits: Limits) -> Result<Answer, QueryError> {
        match self.run(sql, limits) {
            Err(QueryError::Failed {
                fault: Fault::NoSuchTable,
                message,
                source,
            }) => {
                let here = self.table_names().map(|t| t.join(", ")).unwrap_or_default();
                Err(QueryError::Failed {
                    fault: Fault::NoSuchTable,
                    message: format!("{message} (this {} has: {here})", self.kind.as_str()),
                    source,
                })
            }
            other => other,
        }
    }

    fn run(&self, sql: &str, limits: Limits) -> Result<Answer, QueryError> {
        let body = guard(&self.conn, sql)?;
        let wrapped = format!("SELECT * FROM ({body}\n)");
        let columns: Vec<(String, String)> = {
            let mut s = self.conn.prepare(&format!("DESCRIBE {wrapped}"))?;
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<duckdb::Result<_>>()?
        };
        // one more row than shown, to tell that there were more; a limit
        // past what DuckDB's BIGINT holds is no limit
        let limit = match limits.max_rows {
            0 => String::new(),
            n => match n.checked_add(1).filter(|m| i64::try_from(*m).is_ok()) {
                Some(m) => format!(" LIMIT {m}"),
                None => String::new(),
            },
        };
        let fetch = format!("SELECT to_json(COLUMNS(*)) FROM ({wrapped}{limit})");
        let watchdog = Watchdog::start(&self.conn, limits.timeout_secs);
        let result = (|| -> duckdb::Result<Vec<Vec<Value>>> {
            let mut s = self.conn.prepare(&fetch)?;
            let width = columns.len();
            let rows = s.query_map([], |r| {
                (0..width)
                    .map(|i| {
                        Ok(match r.get::<_, Option<String>>(i)? {
                            None => Value::Null,
                            // DuckDB writes NaN and Infinity bare: kept as text
                            Some(j) => serde_json::from_str(&j).unwrap_or(Value::String(j)),
                        })
                    })
                    .collect::<duckdb::Result<Vec<Value>>>()
            })?;
            rows.collect()
        })();
        let timed_out = watchdog.stop();
        let mut rows = match result {
            Ok(rows) => rows,
            Err(_) if timed_out => return Err(QueryError::Timeout(limits.timeout_secs)),
            Err(e) => return Err(e.into()),
        };
        let truncated = limits.max_rows > 0 && rows.len() > limits.max_rows;
        rows.truncate(if limits.max_rows > 0 {
            limits.max_rows
        } else {
            rows.len()
        });
        Ok(Answer {
            columns,
            rows,
            truncated,
        })
    }
}

/// Layer 1 of the guard: `sql` is one statement that DuckDB serializes as a
/// SELECT; its text without the trailing `;`.
fn guard<'a>(conn: &Connection, sql: &'a str) -> Result<&'a str, QueryError> {
    let body = sql
        .trim()
        .trim_end_matches(|c: char| c == ';' || c.is_whitespace());
    if body.is_empty() {
        return Err(QueryError::Refused("the query is empty".into()));
    }
    let j: String = conn.query_row("SELECT json_serialize_sql(?)", [body], |r| r.get(0))?;
    let j: Value = serde_json::from_str(&j).map_err(|e| QueryError::failed(e.to_string()))?;
    if j["error"] == Value::Bool(true) {
        let message = j["error_message"].as_str().unwrap_or("").to_string();
        return Err(if j["error_type"] == "not implemented" {
            QueryError::Refused(
                "only reading is allowed: one SELECT (or FROM, WITH, VALUES, DESCRIBE, SHOW, SUMMARIZE) statement; no writes, COPY, ATTACH, INSTALL, LOAD, SET or PRAGMA".into(),
            )
        } else {
            // json_serialize_sql names DuckDB's exception type, lowercased
            let syntax = matches!(j["error_type"].as_str(), Some("parser" | "syntax"));
            QueryError::Failed {
                fault: if syntax { Fault::Syntax } else { Fault::Other },
                message: if syntax {
                    format!("not valid SQL: {}", one_line(&message))
                } else {
                    one_line(&message)
                },
                source: None,
            }
        });
    }
    let n = j["statements"].as_array().map_or(0, Vec::len);
    if n != 1 {
        return Err(QueryError::Refused(format!(
            "one statement at a time ({n} given)"
        )));
    }
    Ok(body)
}

/// Interrupts the connection's running query at a deadline.
struct Watchdog {
    stop: Option<std::sync::mpsc::Sender<()>>,
    thread: Option<std::thread::JoinHandle<bool>>,
}

impl Watchdog {
    fn start(conn: &Connection, secs: u64) -> Watchdog {
        if secs == 0 {
            return Watchdog {
                stop: None,
                thread: None,
            };
        }
        let handle = conn.interrupt_handle();
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || match rx.recv_timeout(Duration::from_secs(secs)) {
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                handle.interrupt();
                true
            }
            _ => false,
        });
        Watchdog {
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    /// Whether the deadline passed (and the query was interrupted).
    fn stop(mut self) -> bool {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        self.thread
            .take()
            .is_some_and(|t| t.join().unwrap_or(false))
    }
}

/// The rows as a table for a person: a header, a rule, numbers right
/// aligned, NULL spelled, control characters shown as escapes, cells cut
/// with `…` so the table fits `width` columns when given; then a line
/// counting the rows.
pub fn render(a: &Answer, width: Option<usize>) -> String {
    use console::{measure_text_width as w, truncate_str};
    let cell = |v: &Value| -> String {
        let s = match v {
            Value::Null => "NULL".to_string(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        s.chars()
            .flat_map(|c| match c {
                '\n' => vec!['\\', 'n'],
                '\r' => vec!['\\', 'r'],
                '\t' => vec!['\\', 't'],
                c if c.is_control() => format!("\\u{{{:x}}}", c as u32).chars().collect(),
                c => vec![c],
            })
            .collect()
    };
    let cells: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r| r.iter().map(cell).collect())
        .collect();
    let n = a.columns.len();
    let mut widths: Vec<usize> = (0..n)
        .map(|i| {
            cells
                .iter()
                .map(|r| w(&r[i]))
                .chain([w(&a.columns[i].0)])
                .max()
                .unwrap_or(0)
                .min(60)
        })
        .collect();
    if let Some(total) = width {
        // two spaces between columns; shrink the widest until it fits
        let fits = |ws: &[usize]| ws.iter().sum::<usize>() + 2 * n.saturating_sub(1) <= total;
        while !fits(&widths) {
            let Some((i, &m)) = widths.iter().enumerate().max_by_key(|(_, m)| **m) else {
                break;
            };
            if m <= 6 {
                break;
            }
            widths[i] = m - 1;
        }
    }
    let numeric: Vec<bool> = (0..n)
        .map(|i| {
            a.rows
                .iter()
                .all(|r| matches!(r[i], Value::Number(_) | Value::Null))
                && a.rows.iter().any(|r| r[i].is_number())
        })
        .collect();
    let line = |vals: Vec<&str>| -> String {
        let mut s = String::new();
        for (i, v) in vals.into_iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            let t = truncate_str(v, widths[i], "…");
            let pad = widths[i].saturating_sub(w(&t));
            if numeric[i] {
                s.push_str(&" ".repeat(pad));
                s.push_str(&t);
            } else {
                s.push_str(&t);
                if i + 1 < n {
                    s.push_str(&" ".repeat(pad));
                }
            }
        }
        s.trim_end().to_string()
    };
    let mut out = String::new();
    out.push_str(&line(a.columns.iter().map(|(c, _)| c.as_str()).collect()));
    out.push('\n');
    out.push_str(
        &widths
            .iter()
            .map(|&x| "─".repeat(x))
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for r in &cells {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    let count = a.rows.len();
    out.push_str(&match (count, a.truncated) {
        (n, true) => format!("({n} rows shown; there are more: --max-rows 0 shows all)\n"),
        (1, false) => "(1 row)\n".to_string(),
        (n, false) => format!("({n} rows)\n"),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// DuckDB's error of `sql` on a reader with JSON errors and no file
    /// access, explained.
    fn explained(sql: &str) -> Result<(Fault, String), Box<dyn std::error::Error>> {
        let conn = crate::engine::reader()?;
        conn.execute_batch(
            "CREATE TABLE events (agent VARCHAR, timestamp_utc TIMESTAMPTZ);
             SET errors_as_json = true;
             SET enable_external_access = false;",
        )?;
        match conn.prepare(sql).and_then(|mut s| {
            s.query_map([], |r| r.get::<_, Option<String>>(0))?
                .collect::<duckdb::Result<Vec<_>>>()
        }) {
            Ok(rows) => Err(format!("{sql}: no error ({rows:?})").into()),
            Err(e) => Ok(explain(&e)),
        }
    }

    /// An error DuckDB did not give as JSON, with `text`.
    fn plain(text: &str) -> duckdb::Error {
        duckdb::Error::DuckDBFailure(
            duckdb::ffi::Error::new(duckdb::ffi::DuckDBError),
            Some(text.into()),
        )
    }

    #[test]
    fn a_syntax_error_is_not_valid_sql() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT FROM WHERE")?,
            (
                Fault::Syntax,
                "not valid SQL: syntax error at or near \"WHERE\"".into()
            )
        );
        Ok(())
    }

    #[test]
    fn a_missing_table_is_named() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT * FROM evnts")?,
            (Fault::NoSuchTable, "no table or view named evnts".into())
        );
        Ok(())
    }

    #[test]
    fn a_missing_column_is_named_with_similar_ones() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT agnt FROM events")?,
            (
                Fault::NoSuchColumn,
                "no column named agnt in the tables the query reads; similar: agent".into()
            )
        );
        Ok(())
    }

    #[test]
    fn a_missing_function_or_signature_is_named() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT nosuchfn(agent) FROM events")?,
            (
                Fault::NoSuchFunction,
                "no function named nosuchfn (did you mean nanosecond?)".into()
            )
        );
        assert_eq!(
            explained("SELECT timestamp_utc + agent FROM events")?,
            (
                Fault::NoSuchFunction,
                "no function + takes these arguments: +(TIMESTAMP WITH TIME ZONE, VARCHAR) (check their order and types)".into()
            )
        );
        Ok(())
    }

    #[test]
    fn a_value_that_cannot_be_converted_is_a_bad_value() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT CAST('soon' AS DATE)")?,
            (
                Fault::BadValue,
                "a value cannot be used so: invalid date field format: \"soon\", expected format is (YYYY-MM-DD)".into()
            )
        );
        Ok(())
    }

    #[test]
    fn a_file_outside_the_source_is_refused() -> Result<(), Box<dyn std::error::Error>> {
        assert_eq!(
            explained("SELECT * FROM read_text('/etc/hostname')")?,
            (
                Fault::FileAccess,
                "only SOURCE's own files can be read: Cannot access file \"/etc/hostname\" - file system operations are disabled by configuration".into()
            )
        );
        Ok(())
    }

    #[test]
    fn running_out_of_memory_names_the_limit() {
        let e = plain(
            r#"{"exception_type":"Out of Memory","exception_message":"failed to allocate data of size 64.0 MiB (1.0 GiB/1.0 GiB used)"}"#,
        );
        assert_eq!(
            explain(&e),
            (
                Fault::OutOfMemory,
                "the query needs more memory than its limit (--memory-limit): failed to allocate data of size 64.0 MiB (1.0 GiB/1.0 GiB used)".into()
            )
        );
    }

    #[test]
    fn anything_else_is_duckdbs_sentence_on_one_line() {
        let e = plain(r#"{"exception_type":"Dependency","exception_message":"in use\nby x"}"#);
        assert_eq!(explain(&e), (Fault::Other, "in use by x".into()));
        // not JSON (an error before the connection asked for JSON)
        let e = plain("IO Error: disk full\n\nLINE 1: …");
        assert_eq!(
            explain(&e),
            (Fault::Other, "IO Error: disk full LINE 1: …".into())
        );
        assert_eq!(
            explain(&duckdb::Error::QueryReturnedNoRows),
            (Fault::Other, "Query returned no rows".into())
        );
    }

    /// The error keeps DuckDB's as its source.
    #[test]
    fn duckdbs_error_is_the_source() {
        use std::error::Error as _;
        let e = QueryError::from(plain(
            r#"{"exception_type":"Catalog","exception_message":"Table with name x does not exist!","error_subtype":"MISSING_ENTRY","name":"x","type":"Table"}"#,
        ));
        assert_eq!(e.to_string(), "error: no table or view named x");
        assert!(e.source().is_some_and(|s| s.is::<duckdb::Error>()));
    }
}
