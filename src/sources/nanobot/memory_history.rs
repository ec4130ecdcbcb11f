//! `nanobot.memory_history`: the memory journal (primary: summaries, not copies).
//!
//! ```text
//! .nanobot*/<workspace>/memory/history.jsonl
//!   {"cursor": 1, "timestamp": "2026-09-30 12:00" (local, minutes), "content": "…", "session_key"?: "…"}
//!   → system row `memory history #<cursor>: <content>`, session = session_key
//! .nanobot*/<workspace>/memory/HISTORY.md      (legacy; nanobot 0.3.5 migrates it itself)
//!   [2026-09-10 16:21] text…   entries cut as nanobot's migration cuts them (legacy_entries)
//!   → system row `memory history (HISTORY.md): <content>`, no session; an entry
//!     without a stamp is a row too (dated by the file's mtime) with a `warning`
//! ```
//! project_path: the `.workspace` of the namespace whose id the workspace
//! records; that id is also the rows' namespace hint (`x_namespace`).

use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::record::json_kind;
use super::workspace;
use crate::diag::DiagKind;
use crate::jsonl::{Line, Lines, decode_line};
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::bad_line_row;
use crate::store::{StoreError, StoreOutput};
use crate::time::parse_naive;

/// The workspace that holds `memory/` (`rel` = the store path).
fn workspace_of(rel: &str, home: &Path) -> workspace::WorkspaceIdentity {
    let parts: Vec<&str> = rel.split('/').collect();
    match (parts.first(), parts.get(1)) {
        (Some(inst), Some(ws)) => workspace::identity(home, inst, &format!("{inst}/{ws}")),
        _ => workspace::WorkspaceIdentity::default(),
    }
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let ws = workspace_of(&out.store.rel, out.home);
    if out.store.rel.ends_with("HISTORY.md") {
        return legacy(out, ws);
    }
    let project = ws.project_path.clone();
    let file = File::open(&out.store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(file));
    while let Some(Line {
        number: line,
        bytes,
        ..
    }) = lines
        .next_line()
        .map_err(|e| StoreError::io("read failed", e))?
    {
        let value = match decode_line(bytes) {
            Ok(Some(d)) => d.value,
            Ok(None) => continue,
            Err(e) => {
                out.diag(DiagKind::BadLine, None, Some(line), e.0.clone());
                out.push(EventRow {
                    project_path: project.clone(),
                    ..bad_line_row(line, &e.0, bytes)
                })?;
                continue;
            }
        };
        let Some(o) = value.as_object() else {
            let reason = format!("expected a JSON object, found {}", json_kind(&value));
            out.diag(DiagKind::BadLine, None, Some(line), reason.clone());
            out.push(EventRow {
                project_path: project.clone(),
                ..bad_line_row(line, &reason, bytes)
            })?;
            continue;
        };
        let cursor = o
            .get("cursor")
            .map(|c| {
                c.as_str()
                    .map(String::from)
                    .unwrap_or_else(|| c.to_string())
            })
            .unwrap_or_default();
        let content = o.get("content").and_then(Value::as_str).unwrap_or_default();
        let mut native = o.clone();
        native.remove("content");
        out.push(EventRow {
            session_id: o
                .get("session_key")
                .and_then(Value::as_str)
                .map(String::from),
            project_path: project.clone(),
            x_namespace: ws.namespace.clone(),
            ts_local: o
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(parse_naive),
            turn_type: TurnType::System,
            text: Some(format!("memory history #{cursor}: {content}")),
            source_line: Some(line),
            x_group: Group::Record,
            native: Some(native),
            ..Default::default()
        })?;
    }
    Ok(())
}

/// One entry of a legacy HISTORY.md, as nanobot 0.3.5's own migration
/// (`agent/memory.py` `MemoryStore._parse_legacy_history`) cuts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LegacyEntry {
    /// 1-based line of HISTORY.md where the entry starts.
    pub line: i64,
    /// 1-based position: the `cursor` the migration gives it.
    pub cursor: i64,
    /// `YYYY-MM-DD HH:MM` of a `[YYYY-MM-DD HH:MM]` stamp; `None` when the
    /// entry has none (nanobot then dates it by the file's mtime).
    pub stamp: Option<String>,
    pub content: String,
}

/// A line that opens an entry: `[YYYY-MM-DD…]`.
static ENTRY_START: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\[(\d{4}-\d{2}-\d{2}[^\]]*)\]\s*").ok());
/// The stamp an entry's time is read from: exactly `[YYYY-MM-DD HH:MM]`.
static STAMP: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"^\[(\d{4}-\d{2}-\d{2} \d{2}:\d{2})\]\s*").ok());
/// A message line inside a `[RAW]` dump (`[…] USER: …`), which continues it.
static RAW_MESSAGE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"^\[\d{4}-\d{2}-\d{2}[^\]]*\]\s+[A-Z][A-Z0-9_]*(?:\s+\[tools:\s*[^\]]+\])?:").ok()
});

/// The patterns are literals (the tests below exercise each).
fn matches(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

/// Split a legacy HISTORY.md the way nanobot's migration does: an entry
/// starts at a `[YYYY-MM-DD…]` line (unless the current entry is a `[RAW]`
/// dump and the line is one of its messages) or at the first non-blank line
/// after a blank one; entries are trimmed and empty ones dropped.
pub fn legacy_entries(text: &str) -> Vec<LegacyEntry> {
    let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
    let body = normalized.trim_start();
    // lines trimmed away at the start still count for line numbers
    let first_line = normalized[..normalized.len() - body.len()]
        .matches('\n')
        .count() as i64
        + 1;
    let body = body.trim_end();
    if body.is_empty() {
        return Vec::new();
    }
    let mut chunks: Vec<(i64, Vec<&str>)> = Vec::new();
    let mut current: Vec<&str> = Vec::new();
    let mut start = first_line;
    let mut saw_blank = false;
    for (i, line) in body.split('\n').enumerate() {
        let n = first_line + i as i64;
        let blank = line.trim().is_empty();
        let opens = !current.is_empty()
            && ((saw_blank && !blank)
                || (matches(&ENTRY_START, line)
                    && !(is_raw(&current) && matches(&RAW_MESSAGE, line))));
        if opens {
            chunks.push((start, std::mem::take(&mut current)));
            start = n;
            current.push(line);
            saw_blank = false;
            continue;
        }
        if current.is_empty() {
            start = n;
        }
        current.push(line);
        saw_blank = blank;
    }
    chunks.push((start, current));
    let mut out = Vec::new();
    for (line, lines) in chunks {
        let chunk = lines.join("\n");
        let chunk = chunk.trim();
        if chunk.is_empty() {
            continue;
        }
        // the entry's first line: trimming may have dropped blank lines
        let line = line + lines.iter().take_while(|l| l.trim().is_empty()).count() as i64;
        let (stamp, content) = match STAMP.as_ref().and_then(|r| r.captures(chunk)) {
            Some(c) => {
                let rest = chunk[c.get(0).map_or(0, |m| m.end())..].trim_start();
                let stamp = c.get(1).map(|m| m.as_str().to_string());
                (stamp, if rest.is_empty() { chunk } else { rest })
            }
            None => (None, chunk),
        };
        out.push(LegacyEntry {
            line,
            cursor: out.len() as i64 + 1,
            stamp,
            content: content.to_string(),
        });
    }
    out
}

/// Whether an entry's first non-blank line is a `[stamp] [RAW]` dump.
fn is_raw(lines: &[&str]) -> bool {
    let first = lines
        .iter()
        .find(|l| !l.trim().is_empty())
        .copied()
        .unwrap_or("");
    STAMP
        .as_ref()
        .and_then(|r| r.find(first))
        .is_some_and(|m| first[m.end()..].trim_start().starts_with("[RAW]"))
}

fn legacy(out: &mut StoreOutput<'_>, ws: workspace::WorkspaceIdentity) -> Result<(), StoreError> {
    let bytes = std::fs::read(&out.store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let text = String::from_utf8_lossy(&bytes);
    // nanobot dates an unstamped entry by the file's mtime, to the minute
    let mtime_minute = (out.store.mtime_ns / 60_000_000_000 * 60_000_000) as i64;
    for e in legacy_entries(&text) {
        let ts_local = e.stamp.as_deref().and_then(parse_naive);
        if e.stamp.is_none() {
            out.diag(
                DiagKind::Warning,
                None,
                Some(e.line),
                "entry without a [YYYY-MM-DD HH:MM] stamp: dated, as nanobot's migration dates it, by the file's modification time",
            );
        }
        out.push(EventRow {
            project_path: ws.project_path.clone(),
            x_namespace: ws.namespace.clone(),
            ts_local,
            ts_utc: ts_local.is_none().then_some(mtime_minute),
            turn_type: TurnType::System,
            text: Some(format!("memory history (HISTORY.md): {}", e.content)),
            source_line: Some(e.line),
            x_group: Group::Record,
            native: Some(crate::schema::object(
                serde_json::json!({"cursor": e.cursor, "timestamp": e.stamp}),
            )),
            ..Default::default()
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(line: i64, cursor: i64, stamp: Option<&str>, content: &str) -> LegacyEntry {
        LegacyEntry {
            line,
            cursor,
            stamp: stamp.map(String::from),
            content: content.into(),
        }
    }

    #[test]
    fn legacy_entries_follow_nanobots_migration() {
        // text before the first stamp, a blank-line paragraph, a stamp with
        // seconds (opens an entry but is no `HH:MM` stamp), a [RAW] dump
        // whose message lines continue it, a stamp with nothing after it
        let text = "\r\n\npreamble line\n[2026-09-10 16:21] Checked staging.\nsecond line\n\nloose paragraph\n[2026-09-11 08:00:05] odd stamp\n[2026-09-12 09:02]   [RAW] 2 messages\n[2026-09-12 09:01] USER: hi\n[2026-09-12 09:02] ASSISTANT [tools: exec]: ok\n[2026-09-13 10:00]\n";
        assert_eq!(
            legacy_entries(text),
            vec![
                e(3, 1, None, "preamble line"),
                e(
                    4,
                    2,
                    Some("2026-09-10 16:21"),
                    "Checked staging.\nsecond line"
                ),
                e(7, 3, None, "loose paragraph"),
                e(8, 4, None, "[2026-09-11 08:00:05] odd stamp"),
                e(
                    9,
                    5,
                    Some("2026-09-12 09:02"),
                    "[RAW] 2 messages\n[2026-09-12 09:01] USER: hi\n[2026-09-12 09:02] ASSISTANT [tools: exec]: ok"
                ),
                e(12, 6, Some("2026-09-13 10:00"), "[2026-09-13 10:00]"),
            ]
        );
        assert!(legacy_entries(" \n\n").is_empty());
    }
}
