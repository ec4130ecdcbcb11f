//! `nanobot.webui_index`: the WebUI sidebar cache (secondary; rows never pair).
//!
//! ```text
//! .nanobot*/sessions/<workspace-id>/.webui_session_index.json
//!   {"version": 8, "sessions": [{key, created_at, updated_at, title, preview, model_preset,
//!                                _source, file, mtime_ns, size, …}, …]}
//!   → one system row per entry at its created_at (naive local), session = key:
//!     webui sidebar entry: key=<key> title=<title> preview=<preview> model_preset=<preset>
//!       updated_at=<updated_at> (from .webui_session_index.json version <n>)
//! ```
//! Absent, null and empty fields are left out of the text.

use serde_json::{Map, Value};

use crate::diag::DiagKind;
use crate::jsonl::decode_text;
use crate::schema::{EventRow, Group, TurnType};
use crate::store::{StoreError, StoreOutput};
use crate::time::parse_naive;

/// Rows of a decoded index file (no I/O).
pub fn index_rows(v: &Value) -> Result<Vec<EventRow>, String> {
    let o = v.as_object().ok_or("expected a JSON object")?;
    let version = o
        .get("version")
        .map(|v| v.to_string())
        .unwrap_or_else(|| "?".into());
    let entries = o
        .get("sessions")
        .and_then(Value::as_array)
        .ok_or("no \"sessions\" list")?;
    let mut rows = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        let Some(e) = e.as_object() else { continue };
        let field = |k: &str| -> Option<String> {
            match e.get(k)? {
                Value::Null => None,
                Value::String(s) if s.is_empty() => None,
                Value::String(s) => Some(s.clone()),
                other => Some(other.to_string()),
            }
        };
        let mut parts = Vec::new();
        for (k, label) in [
            ("key", "key"),
            ("title", "title"),
            ("preview", "preview"),
            ("model_preset", "model_preset"),
            ("updated_at", "updated_at"),
        ] {
            if let Some(v) = field(k) {
                parts.push(format!("{label}={v}"));
            }
        }
        let native: Map<String, Value> = e
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "key" | "title" | "preview"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        rows.push(EventRow {
            session_id: field("key"),
            ts_local: field("created_at").as_deref().and_then(parse_naive),
            turn_type: TurnType::System,
            text: Some(format!(
                "webui sidebar entry: {} (from .webui_session_index.json version {version})",
                parts.join(" ")
            )),
            source_line: Some(1),
            seq: Some(i as i64),
            x_group: Group::Record,
            native: Some(native),
            ..Default::default()
        });
    }
    Ok(rows)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let bytes = std::fs::read(&out.store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let rows = decode_text(&String::from_utf8_lossy(&bytes))
        .map_err(|e| e.0)
        .and_then(|d| index_rows(&d.value));
    match rows {
        Ok(rows) => {
            // the cache lives in its namespace directory: that namespace is
            // the rows' hint (docs/design.md "Session identity")
            let namespace = out.store.rel.rsplit('/').nth(1).map(String::from);
            for r in rows {
                out.push(EventRow {
                    x_namespace: namespace.clone(),
                    ..r
                })?;
            }
            Ok(())
        }
        Err(reason) => {
            out.diag(
                DiagKind::BadRecord,
                None,
                None,
                format!("not a sidebar index: {reason}"),
            );
            out.push(EventRow {
                ..crate::sources::shared::bad_line_row(1, &reason, &bytes)
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_text_leaves_out_empty_fields() -> Result<(), String> {
        let v: Value = serde_json::from_str(r#"{"version":8,"sessions":[{"key":"cli:direct","created_at":"2026-10-01T08:30:00","updated_at":"2026-10-01T08:42:12.360000","title":"","preview":"list the files","model_preset":"fast"}]}"#).map_err(|e| e.to_string())?;
        let rows = index_rows(&v)?;
        assert_eq!(
            rows[0].text.as_deref(),
            Some(
                "webui sidebar entry: key=cli:direct preview=list the files model_preset=fast updated_at=2026-10-01T08:42:12.360000 (from .webui_session_index.json version 8)"
            )
        );
        assert_eq!(rows[0].ts_local, parse_naive("2026-10-01T08:30:00"));
        Ok(())
    }
}
