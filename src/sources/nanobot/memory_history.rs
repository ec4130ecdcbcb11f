//! `nanobot.memory_history`: the memory journal (primary: summaries, not copies).
//!
//! ```text
//! .nanobot*/<workspace>/memory/history.jsonl
//!   {"cursor": 1, "timestamp": "2026-09-30 12:00" (local, minutes), "content": "…", "session_key"?: "…"}
//!   → system row `memory history #<cursor>: <content>`, session = session_key
//! .nanobot*/<workspace>/memory/HISTORY.md      (legacy)
//!   [2026-09-10 16:21] text… (until the next "[YYYY-MM-DD HH:MM] " line)
//!   → system row `memory history (HISTORY.md): <content>`, no session
//! ```
//! project_path: the `.workspace` of the namespace whose id the workspace records.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use serde_json::Value;

use super::record::{bad_line_row, json_kind};
use super::workspace;
use crate::diag::DiagKind;
use crate::extract::{StoreError, StoreOutput};
use crate::jsonl::{Lines, decode_line};
use crate::schema::{EventRow, TurnType};
use crate::time::parse_naive;

/// The project path of the workspace that holds `memory/` (`rel` = the store path).
fn project_of(rel: &str, home: &Path) -> Option<String> {
    let parts: Vec<&str> = rel.split('/').collect();
    let (inst, ws) = (parts.first()?, parts.get(1)?);
    let id = workspace::workspace_id(&home.join(inst).join(ws))?;
    workspace::project_path(&home.join(inst).join("sessions").join(id))
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let project = project_of(&out.store.rel, out.home);
    if out.store.rel.ends_with("HISTORY.md") {
        return legacy(out, project);
    }
    let file = File::open(&out.store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(file));
    while let Some((line, bytes, _)) = lines
        .next_line()
        .map_err(|e| StoreError::io("read failed", e))?
    {
        let bytes = bytes.to_vec();
        let value = match decode_line(&bytes) {
            Ok(Some(d)) => d.value,
            Ok(None) => continue,
            Err(e) => {
                out.diag(DiagKind::BadLine, None, Some(line), e.0.clone());
                out.push(EventRow {
                    project_path: project.clone(),
                    ..bad_line_row(line, &e.0, &bytes)
                })?;
                continue;
            }
        };
        let Some(o) = value.as_object() else {
            let reason = format!("expected a JSON object, found {}", json_kind(&value));
            out.diag(DiagKind::BadLine, None, Some(line), reason.clone());
            out.push(EventRow {
                project_path: project.clone(),
                ..bad_line_row(line, &reason, &bytes)
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
            ts_local: o
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(parse_naive),
            turn_type: TurnType::System,
            text: Some(format!("memory history #{cursor}: {content}")),
            source_line: Some(line),
            x_group: 1,
            native: Some(Value::Object(native).to_string()),
            ..Default::default()
        })?;
    }
    Ok(())
}

/// Split a legacy HISTORY.md into `(line, stamp, content)` entries.
pub fn legacy_entries(text: &str) -> Vec<(i64, String, String)> {
    let mut out: Vec<(i64, String, String)> = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let stamp = l
            .strip_prefix('[')
            .and_then(|r| r.split_once("] "))
            .filter(|(s, _)| parse_naive(s).is_some());
        match (stamp, out.last_mut()) {
            (Some((s, rest)), _) => out.push((i as i64 + 1, s.to_string(), rest.to_string())),
            (None, Some(last)) => {
                last.2.push('\n');
                last.2.push_str(l);
            }
            (None, None) => {}
        }
    }
    for e in &mut out {
        e.2 = e.2.trim_end().to_string();
    }
    out
}

fn legacy(out: &mut StoreOutput<'_>, project: Option<String>) -> Result<(), StoreError> {
    let bytes = std::fs::read(&out.store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let text = String::from_utf8_lossy(&bytes);
    for (line, stamp, content) in legacy_entries(&text) {
        out.push(EventRow {
            project_path: project.clone(),
            ts_local: parse_naive(&stamp),
            turn_type: TurnType::System,
            text: Some(format!("memory history (HISTORY.md): {content}")),
            source_line: Some(line),
            x_group: 1,
            ..Default::default()
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_entries_span_lines() {
        let e = legacy_entries(
            "[2026-09-10 16:21] Checked staging.\nsecond line\n\n[2026-09-12 09:02] User prefers short answers.\n",
        );
        assert_eq!(
            e,
            vec![
                (
                    1,
                    "2026-09-10 16:21".to_string(),
                    "Checked staging.\nsecond line".to_string()
                ),
                (
                    4,
                    "2026-09-12 09:02".to_string(),
                    "User prefers short answers.".to_string()
                )
            ]
        );
    }
}
