//! `nanoclaw.claude_transcript`: Claude Code transcripts that back a nanoclaw
//! session's `continuation:claude` (the model, tool and usage evidence the
//! nanoclaw databases lack).
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/.claude-shared/projects/<cwd>/<continuation>.jsonl[.rotated-<ms>]
//!   one JSON object per line, dispatched on "type":
//!   user       message.content str | [text | tool_result{tool_use_id, content, is_error} | image]
//!              → user (isMeta / isCompactSummary → system), tool_result
//!   assistant  message{id, model, content[thinking | text | tool_use{id,name,input}], usage}, requestId
//!              → thinking, assistant, tool_use; `model` filled
//!   system     subtype, content → system
//!   summary, queue-operation, file-history-snapshot, progress, attachment, titles → no row
//! ```
//! Usage: one API response spans several lines repeating its usage; per
//! (message.id, requestId) only the line with the largest input+output+cache
//! total carries `native.usage` (`usage_counted: true`); `<synthetic>` and API
//! error lines carry none. The views link rows to the session whose
//! `continuation:claude` names the file.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::jsonl::{Lines, decode_line};
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::nanobot::record::{bad_line_row, tool_call_text};
use crate::store::{StoreError, StoreOutput};

/// The continuation id a transcript file names (`<id>.jsonl[.rotated-<ms>]`).
pub fn transcript_id(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.split(".jsonl").next().unwrap_or(name).to_string()
}

fn usage_total(u: &Value) -> i64 {
    [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| u.get(*k).and_then(Value::as_i64).unwrap_or(0))
    .sum()
}

/// (message.id, requestId) of an assistant line that may carry countable usage.
fn usage_key(v: &Value) -> Option<(String, String)> {
    if v.get("type").and_then(Value::as_str) != Some("assistant")
        || v.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true)
    {
        return None;
    }
    let msg = v.get("message")?;
    if msg.get("model").and_then(Value::as_str) == Some("<synthetic>") || msg.get("usage").is_none()
    {
        return None;
    }
    let id = msg.get("id").and_then(Value::as_str)?;
    Some((
        id.to_string(),
        v.get("requestId")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
    ))
}

/// Rows of one decoded line (no I/O). `counted` = this line carries its response's usage.
pub fn map_line(v: &Value, counted: bool) -> Vec<EventRow> {
    let Some(o) = v.as_object() else {
        return Vec::new();
    };
    let ts = o
        .get("timestamp")
        .and_then(Value::as_str)
        .and_then(crate::time::parse_utc);
    let mut frame = Map::new();
    for k in [
        "uuid",
        "parentUuid",
        "sessionId",
        "isSidechain",
        "agentId",
        "requestId",
        "version",
        "cwd",
        "gitBranch",
    ] {
        if let Some(x) = o.get(k).filter(|x| !x.is_null()) {
            frame.insert(k.into(), x.clone());
        }
    }
    let base = EventRow {
        ts_utc: ts,
        x_group: Group::Transcript,
        ..Default::default()
    };
    let native = |extra: &[(&str, Value)]| {
        let mut n = frame.clone();
        for (k, v) in extra {
            n.insert((*k).into(), v.clone());
        }
        Some(n)
    };
    let mut rows = Vec::new();
    let meta = o.get("isMeta").and_then(Value::as_bool) == Some(true)
        || o.get("isCompactSummary").and_then(Value::as_bool) == Some(true);
    match o.get("type").and_then(Value::as_str).unwrap_or_default() {
        "user" => {
            let content = o.get("message").and_then(|m| m.get("content"));
            let user_type = if meta {
                TurnType::System
            } else {
                TurnType::User
            };
            match content {
                Some(Value::String(s)) => rows.push(EventRow {
                    turn_type: user_type,
                    text: Some(s.clone()),
                    native: native(&[]),
                    ..base.clone()
                }),
                Some(Value::Array(blocks)) => {
                    let mut texts = Vec::new();
                    for b in blocks {
                        match b.get("type").and_then(Value::as_str) {
                            Some("text") => texts
                                .extend(b.get("text").and_then(Value::as_str).map(String::from)),
                            Some("tool_result") => {
                                let text = match b.get("content") {
                                    Some(Value::String(s)) => Some(s.clone()),
                                    Some(Value::Array(parts)) => Some(
                                        parts
                                            .iter()
                                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                                            .collect::<Vec<_>>()
                                            .join("\n"),
                                    ),
                                    _ => None,
                                };
                                let is_error = b.get("is_error").cloned().unwrap_or(Value::Null);
                                rows.push(EventRow {
                                    turn_type: TurnType::ToolResult,
                                    tool_use_id: b
                                        .get("tool_use_id")
                                        .and_then(Value::as_str)
                                        .map(String::from),
                                    text,
                                    native: native(&[("is_error", is_error)]),
                                    ..base.clone()
                                });
                            }
                            _ => {}
                        }
                    }
                    if !texts.is_empty() {
                        rows.insert(
                            0,
                            EventRow {
                                turn_type: user_type,
                                text: Some(texts.join("\n")),
                                native: native(&[]),
                                ..base.clone()
                            },
                        );
                    }
                }
                _ => {}
            }
        }
        "assistant" => {
            let msg = o.get("message");
            let model = msg
                .and_then(|m| m.get("model"))
                .and_then(Value::as_str)
                .map(String::from);
            for b in msg
                .and_then(|m| m.get("content"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let row = match b.get("type").and_then(Value::as_str) {
                    Some("thinking") => EventRow {
                        turn_type: TurnType::Thinking,
                        text: b.get("thinking").and_then(Value::as_str).map(String::from),
                        ..base.clone()
                    },
                    Some("text") => EventRow {
                        turn_type: TurnType::Assistant,
                        text: b.get("text").and_then(Value::as_str).map(String::from),
                        ..base.clone()
                    },
                    Some("tool_use") => {
                        let input = b.get("input").cloned().unwrap_or(Value::Null);
                        EventRow {
                            turn_type: TurnType::ToolUse,
                            tool_name: b.get("name").and_then(Value::as_str).map(String::from),
                            tool_use_id: b.get("id").and_then(Value::as_str).map(String::from),
                            text: Some(tool_call_text(&input)),
                            native: native(&[("input", input)]),
                            ..base.clone()
                        }
                    }
                    _ => continue,
                };
                rows.push(EventRow {
                    model: model.clone(),
                    ..row
                });
            }
            let mut extra: Vec<(&str, Value)> = Vec::new();
            if let Some(id) = msg.and_then(|m| m.get("id")) {
                extra.push(("message_id", id.clone()));
            }
            if let Some(sr) = msg
                .and_then(|m| m.get("stop_reason"))
                .filter(|v| !v.is_null())
            {
                extra.push(("stop_reason", sr.clone()));
            }
            if counted && let Some(u) = msg.and_then(|m| m.get("usage")) {
                extra.push(("usage", u.clone()));
                extra.push(("usage_counted", json!(true)));
            }
            if let Some(first) = rows.first_mut() {
                let n = first.native.get_or_insert_with(|| frame.clone());
                for (k, v) in extra {
                    n.insert(k.into(), v);
                }
            }
            for r in rows.iter_mut().filter(|r| r.native.is_none()) {
                r.native = native(&[]);
            }
        }
        "system" => {
            let subtype = o.get("subtype").and_then(Value::as_str).unwrap_or("system");
            let text = o
                .get("content")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .unwrap_or_else(|| subtype.to_string());
            let mut extra = vec![("subtype", json!(subtype))];
            if let Some(d) = o.get("durationMs") {
                extra.push(("durationMs", d.clone()));
            }
            rows.push(EventRow {
                turn_type: TurnType::System,
                text: Some(text),
                native: native(&extra),
                ..base.clone()
            });
        }
        _ => {}
    }
    for (i, r) in rows.iter_mut().enumerate() {
        r.x_sub = i as i32;
    }
    rows
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let id = transcript_id(&store.rel);
    let ag = super::session_parts(&store.rel)
        .map(|(_, ag, _)| ag)
        .unwrap_or_default();
    // Pass 1: which line carries each response's usage.
    let mut best: HashMap<(String, String), (i64, bool, i64)> = HashMap::new();
    {
        let f = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
        let mut lines = Lines::new(BufReader::new(f));
        while let Some((n, bytes, _)) = lines
            .next_line()
            .map_err(|e| StoreError::io("read failed", e))?
        {
            let Ok(Some(d)) = decode_line(bytes) else {
                continue;
            };
            let Some(key) = usage_key(&d.value) else {
                continue;
            };
            let usage = d
                .value
                .get("message")
                .and_then(|m| m.get("usage"))
                .cloned()
                .unwrap_or(Value::Null);
            let cand = (usage_total(&usage), usage.get("speed").is_some(), -n);
            best.entry(key)
                .and_modify(|b| *b = (*b).max(cand))
                .or_insert(cand);
        }
    }
    let counted: std::collections::HashSet<i64> = best.values().map(|b| -b.2).collect();
    // Pass 2: rows.
    let f = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(f));
    let mut seq = 0;
    while let Some((n, bytes, _)) = lines
        .next_line()
        .map_err(|e| StoreError::io("read failed", e))?
    {
        let bytes = bytes.to_vec();
        let rows = match decode_line(&bytes) {
            Ok(Some(d)) => map_line(&d.value, counted.contains(&n)),
            Ok(None) => continue,
            Err(e) => {
                out.diag(DiagKind::BadLine, None, Some(n), e.0.clone());
                vec![EventRow {
                    x_group: Group::Transcript,
                    ..bad_line_row(n, &e.0, &bytes)
                }]
            }
        };
        for row in rows {
            let mut native = row.native.clone().unwrap_or_default();
            native.insert("transcript_id".into(), json!(id));
            native.insert("agent_group_id".into(), json!(ag));
            out.push(EventRow {
                seq: Some(seq),
                source_line: Some(n),
                native: Some(native),
                ..row
            })?;
        }
        seq += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_active_and_rotated_files() {
        assert_eq!(
            transcript_id("d/v2-sessions/ag/.claude-shared/projects/-workspace-agent/5b0f.jsonl"),
            "5b0f"
        );
        assert_eq!(transcript_id("x/5b0f.jsonl.rotated-1790000000000"), "5b0f");
    }

    #[test]
    fn tool_result_block_and_assistant_blocks() {
        let u: Value = serde_json::from_str(r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"a\nb","is_error":false}]},"timestamp":"2026-03-02T14:05:15.012Z"}"#).unwrap_or(Value::Null);
        let r = map_line(&u, false);
        assert_eq!(
            (
                r[0].turn_type,
                r[0].tool_use_id.as_deref(),
                r[0].text.as_deref()
            ),
            (TurnType::ToolResult, Some("t1"), Some("a\nb"))
        );
        let a: Value = serde_json::from_str(r#"{"type":"assistant","requestId":"r","message":{"id":"m","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls src"}}],"usage":{"input_tokens":3,"output_tokens":96}}}"#).unwrap_or(Value::Null);
        let r = map_line(&a, true);
        assert_eq!(
            (r[0].turn_type, r[0].text.as_deref(), r[0].model.as_deref()),
            (TurnType::ToolUse, Some("ls src"), Some("claude-x"))
        );
        assert!(
            r[0].native
                .as_ref()
                .is_some_and(|n| n.get("usage_counted") == Some(&json!(true)))
        );
    }
}
