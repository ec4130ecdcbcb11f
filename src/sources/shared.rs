//! Helpers every extractor may use, in one place: JSON field access and
//! SQLite schema probes and column values. (Opening a store's private
//! SQLite copy is [`crate::store::StoreOutput::snapshot`].)
//!
//! ```text
//! str_field(obj, "k")        a string field of a JSON object
//! has_table / no_tables      sqlite_master probes
//! columns                    a table's column names (pragma_table_info)
//! value_json                 a column as JSON, every integer exact      (nanobot session databases)
//! column_json                a column as JSON, JavaScript-safe numbers  (nanoclaw databases)
//! tool_call_text             a tool call's text: its command / path / url, else its arguments
//! bad_line_row(_of)          the `parser: unparseable line` row of a JSONL line that does not parse
//! raw_native                 `native` of undecodable bytes: the raw text, capped
//! ```

use rusqlite::Connection;
use rusqlite::types::ValueRef;
use serde_json::{Map, Value, json};

use crate::schema::{EventRow, Group, TurnType};

/// A string field of a JSON object (`None` when absent or not a string).
pub fn str_field<'a>(o: &'a Map<String, Value>, k: &str) -> Option<&'a str> {
    o.get(k).and_then(Value::as_str)
}

/// Whether a table exists.
pub fn has_table(conn: &Connection, table: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [table],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
}

/// The column names of a table, in order (empty: no such table).
pub fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info(?1) ORDER BY cid")?;
    let names = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    names.collect()
}

/// Whether the database holds no table at all.
pub fn no_tables(conn: &Connection) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n == 0)
}

/// A column value as JSON as nanobot's own reader sees it: integers exact,
/// text and BLOBs as (lossily decoded) text.
pub fn value_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(r) => serde_json::Number::from_f64(r)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            Value::String(String::from_utf8_lossy(t).into_owned())
        }
    }
}

/// A column value as JSON for nanoclaw's tables, read by JavaScript:
/// integers beyond ±2^53 become strings (a JS number would round them);
/// text stays text; a BLOB is named by its size only (attachments).
pub fn column_json(v: ValueRef<'_>) -> Value {
    const SAFE: i64 = 1 << 53;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) if (-SAFE..=SAFE).contains(&i) => json!(i),
        ValueRef::Integer(i) => Value::String(i.to_string()),
        ValueRef::Real(r) => serde_json::Number::from_f64(r)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::String(format!("<{} bytes>", b.len())),
    }
}

/// The text of a tool call: the command / path / url argument, else the
/// arguments JSON as written.
pub fn tool_call_text(arguments: &Value) -> String {
    let parsed: Option<Value> = match arguments {
        Value::String(s) => crate::jsonl::parse(s).ok(),
        other => Some(other.clone()),
    };
    if let Some(Value::Object(o)) = &parsed {
        for k in ["command", "path", "url"] {
            if let Some(Value::String(s)) = o.get(k) {
                return s.clone();
            }
        }
    }
    match arguments {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The bad-line row: `parser: unparseable line <n> (<reason>): <first 200 characters>`.
pub fn bad_line_row(line: i64, reason: &str, raw: &[u8]) -> EventRow {
    bad_line_row_of(EventRow::default(), line, reason, raw)
}

/// [`bad_line_row`] on top of `base` (a session's identity columns).
pub fn bad_line_row_of(base: EventRow, line: i64, reason: &str, raw: &[u8]) -> EventRow {
    let preview = crate::jsonl::preview(raw, 200);
    EventRow {
        turn_type: TurnType::System,
        text: Some(format!(
            "parser: unparseable line {line} ({reason}): {preview}"
        )),
        source_line: Some(line),
        x_group: Group::Record,
        native: Some(raw_native(raw)),
        ..base
    }
}

/// `native` of a row that stands for undecodable bytes: the raw text, capped.
pub fn raw_native(raw: &[u8]) -> Map<String, Value> {
    const CAP: usize = 64 * 1024;
    let s = String::from_utf8_lossy(&raw[..raw.len().min(CAP)]);
    let mut m = Map::new();
    m.insert("raw".into(), Value::String(s.into_owned()));
    if raw.len() > CAP {
        m.insert("raw_truncated_from_bytes".into(), json!(raw.len()));
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoclaw_big_integers_become_strings() {
        assert_eq!(
            column_json(ValueRef::Integer(1 << 53)),
            json!(9007199254740992i64)
        );
        assert_eq!(
            column_json(ValueRef::Integer((1 << 53) + 1)),
            json!("9007199254740993")
        );
    }

    #[test]
    fn nanobot_integers_stay_exact_and_blobs_are_text() {
        assert_eq!(
            value_json(ValueRef::Integer((1 << 53) + 1)),
            json!(9007199254740993i64)
        );
        assert_eq!(value_json(ValueRef::Blob(b"ab")), json!("ab"));
        assert_eq!(column_json(ValueRef::Blob(b"ab")), json!("<2 bytes>"));
    }
}
