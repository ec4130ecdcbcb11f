//! `nanoclaw.claude_transcript`: Claude Code transcripts that back a nanoclaw
//! session's `continuation:claude` (the model, tool and usage evidence the
//! nanoclaw databases lack). docs/design.md "nanoclaw: Claude Code transcripts".
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/.claude-shared/projects/<cwd>/
//!   <continuation>.jsonl                          main file
//!   <continuation>.jsonl.rotated-<ms>             rotated by nanoclaw (same continuation)
//!   <continuation>/subagents/agent-<agent>.jsonl  a subagent (Task) run: native.subagent = <agent>
//!   one JSON object per line, dispatched on "type":
//!   user       message.content str | [text | tool_result{tool_use_id, content, is_error} | image]
//!              → user (isMeta / isCompactSummary / a command wrapper
//!                `<command-name>`, `<command-message>`, `<command-args>`,
//!                `<command-contents>`, `<local-command-stdout|stderr|caveat>` → system),
//!                tool_result
//!   assistant  message{id, model, content[thinking | text | tool_use{id,name,input}], usage}, requestId
//!              → thinking, assistant, tool_use; `model` filled (`<synthetic>` → NULL,
//!                native.model keeps it)
//!   system     subtype, content → system
//!   summary, queue-operation, file-history-snapshot, progress, attachment, titles → no row
//! ```
//! native: the envelope facts (`uuid`, `parentUuid`, `sessionId`,
//! `isSidechain`, `agentId`, `requestId`, `version`, `cwd`, `gitBranch`),
//! `transcript_id` (the continuation the file names), `agent_group_id`,
//! `subagent` (subagent files).
//!
//! Usage: every row of an assistant line carries `usage_counted`; the first
//! row of a line whose usage may count (it has `usage`, is not `<synthetic>`,
//! not `isApiErrorMessage`) carries `message_id`, `usage` and
//! `usage_counted: true`, every other row `usage_counted: false`. One API
//! response spans several lines (and, resumed, several files) repeating its
//! usage: `sql/V011__nanoclaw_transcript_sessions.sql` keeps it on one row
//! per (session, message.id, requestId) and V014 removes it from the others
//! (`usage_counted: false`). V011 also links each file to its session.

use std::fs::File;
use std::io::BufReader;

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::jsonl::{Line, Lines, decode_line};
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{bad_line_row, tool_call_text};
use crate::store::{StoreError, StoreOutput};

/// The continuation id a transcript file names: `<id>.jsonl[.rotated-<ms>]`,
/// or for a subagent `<id>/subagents/agent-<agent>.jsonl`, its session's `<id>`.
pub fn transcript_id(rel: &str) -> String {
    let mut parts = rel.rsplit('/');
    let name = parts.next().unwrap_or(rel);
    if parts.next() == Some("subagents")
        && let Some(session) = parts.next()
    {
        return session.to_string();
    }
    name.split(".jsonl").next().unwrap_or(name).to_string()
}

/// The agent id of a subagent transcript (`…/subagents/agent-<agent>.jsonl`).
pub fn subagent_id(rel: &str) -> Option<String> {
    let mut parts = rel.rsplit('/');
    let name = parts.next()?;
    (parts.next() == Some("subagents")).then(|| {
        let stem = name.split(".jsonl").next().unwrap_or(name);
        stem.strip_prefix("agent-").unwrap_or(stem).to_string()
    })
}

/// The model `<synthetic>`: a message Claude Code made locally, not a model.
const SYNTHETIC: &str = "<synthetic>";

/// Whether an assistant line's usage may be counted: it has `usage`, is not
/// `<synthetic>` and not an API error message.
fn countable(v: &Value) -> bool {
    let Some(msg) = v.get("message") else {
        return false;
    };
    v.get("isApiErrorMessage").and_then(Value::as_bool) != Some(true)
        && msg.get("model").and_then(Value::as_str) != Some(SYNTHETIC)
        && msg.get("usage").is_some_and(Value::is_object)
}

/// Claude Code's wrappers of slash commands and their local output: user
/// lines that are not prompts (system rows).
const COMMAND_WRAPPERS: &[&str] = &[
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<command-contents>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
];

fn is_command_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    COMMAND_WRAPPERS.iter().any(|w| t.starts_with(w))
}

/// Rows of one decoded line (no I/O).
pub fn map_line(v: &Value) -> Vec<EventRow> {
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
                    turn_type: if is_command_wrapper(s) {
                        TurnType::System
                    } else {
                        user_type
                    },
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
                        let text = texts.join("\n");
                        rows.insert(
                            0,
                            EventRow {
                                turn_type: if is_command_wrapper(&text) {
                                    TurnType::System
                                } else {
                                    user_type
                                },
                                text: Some(text),
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
            let raw_model = msg.and_then(|m| m.get("model")).and_then(Value::as_str);
            let model = raw_model.filter(|m| *m != SYNTHETIC).map(String::from);
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
            if raw_model == Some(SYNTHETIC) {
                extra.push(("model", json!(SYNTHETIC)));
            }
            // The first row of a countable line carries its usage
            // (`usage_counted: true`) until V011 keeps one line per
            // (message.id, requestId) of the session; every other row of an
            // assistant line says `usage_counted: false`.
            let counted = countable(v);
            if counted && let Some(u) = msg.and_then(|m| m.get("usage")) {
                extra.push(("usage", u.clone()));
            }
            for (i, r) in rows.iter_mut().enumerate() {
                let n = r.native.get_or_insert_with(|| frame.clone());
                n.insert("usage_counted".into(), json!(counted && i == 0));
                if i == 0 {
                    for (k, v) in extra.drain(..) {
                        n.insert(k.into(), v);
                    }
                }
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
    let subagent = subagent_id(&store.rel);
    let f = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(f));
    let mut seq = 0;
    while let Some(Line {
        number: n,
        bytes,
        read,
        ..
    }) = lines
        .next_line()
        .map_err(|e| StoreError::io("read failed", e))?
    {
        out.read_to(read);
        let rows = match decode_line(bytes) {
            Ok(Some(d)) => map_line(&d.value),
            Ok(None) => continue,
            Err(e) => {
                out.diag(DiagKind::BadLine, None, Some(n), e.0.clone());
                vec![EventRow {
                    x_group: Group::Transcript,
                    ..bad_line_row(n, &e.0, bytes)
                }]
            }
        };
        for row in rows {
            let mut native = row.native.clone().unwrap_or_default();
            native.insert("transcript_id".into(), json!(id));
            native.insert("agent_group_id".into(), json!(ag));
            if let Some(a) = &subagent {
                native.insert("subagent".into(), json!(a));
            }
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
        let sub = "x/-workspace-agent/5b0f/subagents/agent-a1b2.jsonl";
        assert_eq!(
            (transcript_id(sub), subagent_id(sub)),
            ("5b0f".to_string(), Some("a1b2".to_string()))
        );
        assert_eq!(subagent_id("x/5b0f.jsonl"), None);
    }

    #[test]
    fn tool_result_block_and_assistant_blocks() {
        let u: Value = serde_json::from_str(r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"a\nb","is_error":false}]},"timestamp":"2026-03-02T14:05:15.012Z"}"#).unwrap_or(Value::Null);
        let r = map_line(&u);
        assert_eq!(
            (
                r[0].turn_type,
                r[0].tool_use_id.as_deref(),
                r[0].text.as_deref()
            ),
            (TurnType::ToolResult, Some("t1"), Some("a\nb"))
        );
        let a: Value = serde_json::from_str(r#"{"type":"assistant","requestId":"r","message":{"id":"m","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"ls src"}}],"usage":{"input_tokens":3,"output_tokens":96}}}"#).unwrap_or(Value::Null);
        let r = map_line(&a);
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

    #[test]
    fn synthetic_is_no_model_and_command_wrappers_are_system() {
        let a: Value = serde_json::from_str(r#"{"type":"assistant","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"No response requested."},{"type":"text","text":"more"}],"usage":{"input_tokens":0,"output_tokens":0}}}"#).unwrap_or(Value::Null);
        let r = map_line(&a);
        let n = |i: usize, k: &str| r[i].native.as_ref().and_then(|n| n.get(k)).cloned();
        assert_eq!((r[0].model.as_deref(), r[1].model.as_deref()), (None, None));
        assert_eq!(n(0, "model"), Some(json!("<synthetic>")));
        assert_eq!(
            (n(0, "usage"), n(0, "usage_counted")),
            (None, Some(json!(false)))
        );
        assert_eq!(n(1, "usage_counted"), Some(json!(false)));
        for text in [
            "<command-name>/cost</command-name>",
            " <command-message>cost</command-message>",
            "<local-command-stdout>ok</local-command-stdout>",
        ] {
            let u = json!({"type": "user", "message": {"role": "user", "content": text}});
            assert_eq!(map_line(&u)[0].turn_type, TurnType::System, "{text}");
            let u = json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": text}]}});
            assert_eq!(map_line(&u)[0].turn_type, TurnType::System, "{text}");
        }
        let u = json!({"type": "user", "message": {"role": "user", "content": "what is <command-name>?"}});
        assert_eq!(map_line(&u)[0].turn_type, TurnType::User);
    }
}
