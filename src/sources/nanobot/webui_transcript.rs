//! `nanobot.webui_transcript`: the WebUI display transcript (secondary, true UTC).
//!
//! ```text
//! .nanobot*/webui/<safe key>.jsonl                     active file (recent turns)
//! .nanobot*/webui/<safe key>.segments/NNNNNN.jsonl     older whole turns, read first, in order
//! .nanobot*/webui/<safe key>.segments/manifest.json    index (not read)
//! record: {event, chat_id, created_at_ms (UTC), turn_id, turn_phase, turn_seq, …}
//!   user          → user
//!   message       → tool_use / tool_result per tool_events[] (phase start / end|error);
//!                   no kind and text → assistant; a kind and no tool events → system breadcrumb
//!   stream_end    → assistant (unless merge_next or the text is empty)
//!   reasoning_end → thinking (only with --include-thinking)
//!   file_edit, fork_marker, context_compaction, user_message, unknown → system
//!   delta, reasoning_delta, turn_end → no row (turn_end's usage and latency go
//!                   into `native` of the turn's last row, its round_usages'
//!                   token counts into that row's `x_rounds`)
//! ```
//! Session `websocket:<chat_id>`; `seq` = record index across the files;
//! `x_turn` = the record's `turn_id` (the views pair a transcript turn with
//! the session turn it mirrors, docs/design.md "Dedup: secondary sources").

use std::fs::File;
use std::io::BufReader;

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::jsonl::{Lines, decode_line};
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{bad_line_row, tool_call_text};

/// This store kind: the one whose `thinking` rows only `--include-thinking`
/// gives (a sync without it does not take their absence for a deletion).
pub const KIND: &str = "nanobot.webui_transcript";
use crate::store::{StoreError, StoreOutput};

/// The active file a segment belongs to: `<dir>/<stem>.segments/N.jsonl` → `<dir>/<stem>.jsonl`.
pub fn owner(rel: &str) -> String {
    let mut parts: Vec<&str> = rel.split('/').collect();
    parts.pop();
    let dir = parts.pop().unwrap_or_default();
    let stem = dir.strip_suffix(".segments").unwrap_or(dir);
    parts.push(stem);
    format!("{}.jsonl", parts.join("/"))
}

/// Keys of a record that have a standard column or are the record's frame.
const FRAME: [&str; 4] = ["event", "chat_id", "created_at_ms", "text"];

#[derive(Default)]
struct Turn {
    rows: Vec<EventRow>,
    id: Option<String>,
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let mut files: Vec<(String, std::path::PathBuf)> = store
        .parts
        .iter()
        .map(|p| (p.rel.clone(), p.abs.clone()))
        .collect();
    if store.present {
        files.push((store.rel.clone(), store.abs.clone()));
    }
    let fallback_key = store
        .rel
        .rsplit('/')
        .next()
        .and_then(|n| n.strip_suffix(".jsonl"))
        .map(|s| s.replacen('_', ":", 1));
    let mut seq: i64 = 0;
    let mut turn = Turn {
        rows: Vec::new(),
        id: None,
    };
    for (rel, abs) in files {
        let file = match File::open(&abs) {
            Ok(f) => f,
            Err(e) => {
                out.diag(
                    DiagKind::Unreadable,
                    Some(&rel),
                    None,
                    format!("cannot open: {e}"),
                );
                continue;
            }
        };
        let mut lines = Lines::new(BufReader::with_capacity(crate::jsonl::READ_BUF, file));
        loop {
            let (line, bytes, read) = match lines.next_line() {
                Ok(Some(l)) => (l.number, l.bytes, l.read),
                Ok(None) => break,
                Err(e) => {
                    out.diag(
                        DiagKind::Unreadable,
                        Some(&rel),
                        None,
                        format!("read failed: {e}"),
                    );
                    break;
                }
            };
            out.read_to(read);
            let value = match decode_line(bytes) {
                Ok(Some(d)) => {
                    for r in &d.repairs {
                        out.diag(
                            DiagKind::Warning,
                            Some(&rel),
                            Some(line),
                            format!("{r}; row kept"),
                        );
                    }
                    d.value
                }
                Ok(None) => continue,
                Err(e) => {
                    out.diag(DiagKind::BadLine, Some(&rel), Some(line), e.0.clone());
                    flush(out, &mut turn)?;
                    out.push(EventRow {
                        session_id: fallback_key.clone(),
                        source_path: rel.clone(),
                        seq: Some(seq),
                        ..bad_line_row(line, &e.0, bytes)
                    })?;
                    seq += 1;
                    continue;
                }
            };
            let Some(rec) = value.as_object() else {
                let reason = format!(
                    "expected a JSON object, found {}",
                    super::record::json_kind(&value)
                );
                out.diag(DiagKind::BadLine, Some(&rel), Some(line), reason.clone());
                out.push(EventRow {
                    session_id: fallback_key.clone(),
                    source_path: rel.clone(),
                    seq: Some(seq),
                    ..bad_line_row(line, &reason, bytes)
                })?;
                seq += 1;
                continue;
            };
            let turn_id = rec.get("turn_id").and_then(Value::as_str).map(String::from);
            if turn_id != turn.id {
                flush(out, &mut turn)?;
                turn.id = turn_id;
            }
            let session = rec
                .get("chat_id")
                .and_then(Value::as_str)
                .map(|c| format!("websocket:{c}"))
                .or_else(|| fallback_key.clone());
            let base = EventRow {
                session_id: session,
                seq: Some(seq),
                ts_utc: rec
                    .get("created_at_ms")
                    .and_then(Value::as_i64)
                    .and_then(crate::time::from_epoch_ms),
                source_path: rel.clone(),
                source_line: Some(line),
                x_group: Group::Record,
                x_turn: turn.id.clone(),
                ..Default::default()
            };
            if rec.get("event").and_then(Value::as_str) == Some("turn_end") {
                attach_turn_end(&mut turn, rec);
                flush(out, &mut turn)?;
            } else {
                let rows = map_record(rec, &base, out.options.include_thinking);
                turn.rows.extend(rows);
            }
            seq += 1;
        }
    }
    flush(out, &mut turn)
}

fn flush(out: &mut StoreOutput<'_>, turn: &mut Turn) -> Result<(), StoreError> {
    for row in turn.rows.drain(..) {
        out.push(row)?;
    }
    Ok(())
}

fn attach_turn_end(turn: &mut Turn, rec: &Map<String, Value>) {
    let idx = turn
        .rows
        .iter()
        .rposition(|r| r.turn_type == TurnType::Assistant)
        .or(turn.rows.len().checked_sub(1));
    let Some(last) = idx.and_then(|i| turn.rows.get_mut(i)) else {
        return;
    };
    let mut end = Map::new();
    for (k, v) in rec {
        if !matches!(
            k.as_str(),
            "event" | "chat_id" | "turn_id" | "turn_phase" | "turn_seq"
        ) {
            end.insert(k.clone(), v.clone());
        }
    }
    last.x_rounds = rounds(rec);
    last.native
        .get_or_insert_default()
        .insert("turn_end".into(), Value::Object(end));
}

/// A `turn_end`'s `round_usages` as `prompt:completion` pairs joined by `,`
/// (`x_rounds`); a count a round lacks is empty; `None` without a list.
fn rounds(rec: &Map<String, Value>) -> Option<String> {
    let list = rec.get("round_usages")?.as_array()?;
    let count = |r: &Value, k: &str| {
        r.get(k)
            .and_then(Value::as_i64)
            .map(|n| n.to_string())
            .unwrap_or_default()
    };
    let pairs: Vec<String> = list
        .iter()
        .map(|r| {
            format!(
                "{}:{}",
                count(r, "prompt_tokens"),
                count(r, "completion_tokens")
            )
        })
        .collect();
    (!pairs.is_empty()).then(|| pairs.join(","))
}

fn native_of(rec: &Map<String, Value>, skip: &[&str]) -> Option<Map<String, Value>> {
    let m: Map<String, Value> = rec
        .iter()
        .filter(|(k, _)| !FRAME.contains(&k.as_str()) && !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut m = m;
    if let Some(e) = rec.get("event") {
        m.insert("event".into(), e.clone());
    }
    Some(m)
}

/// Map one record (not `turn_end`) to rows. No I/O: the fuzz target calls it.
pub fn map_record(
    rec: &Map<String, Value>,
    base: &EventRow,
    include_thinking: bool,
) -> Vec<EventRow> {
    let event = rec.get("event").and_then(Value::as_str).unwrap_or("");
    let text = rec.get("text").and_then(Value::as_str).map(String::from);
    let mut rows = Vec::new();
    let row = |turn_type, text: Option<String>, native| EventRow {
        turn_type,
        x_match_text: true,
        text,
        native,
        ..base.clone()
    };
    match event {
        "user" => rows.push(row(TurnType::User, text, native_of(rec, &[]))),
        "message" => {
            let events = rec
                .get("tool_events")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let kind = rec.get("kind").and_then(Value::as_str);
            for ev in &events {
                let phase = ev.get("phase").and_then(Value::as_str).unwrap_or("");
                let name = ev.get("name").and_then(Value::as_str).map(String::from);
                let id = ev.get("call_id").and_then(Value::as_str).map(String::from);
                let args = ev.get("arguments").cloned().unwrap_or(Value::Null);
                let mut n = Map::new();
                n.insert("event".into(), json!("message"));
                n.insert("phase".into(), json!(phase));
                for k in ["kind", "turn_id", "turn_phase", "turn_seq"] {
                    if let Some(v) = rec.get(k) {
                        n.insert(k.into(), v.clone());
                    }
                }
                for k in ["files", "embeds"] {
                    if let Some(v) = ev
                        .get(k)
                        .filter(|v| v.as_array().is_none_or(|a| !a.is_empty()))
                    {
                        n.insert(k.into(), v.clone());
                    }
                }
                let (turn_type, t) = match phase {
                    "start" => {
                        n.insert("arguments".into(), args.clone());
                        (TurnType::ToolUse, Some(tool_call_text(&args)))
                    }
                    _ => {
                        let result = ev
                            .get("result")
                            .filter(|v| !v.is_null())
                            .or_else(|| ev.get("error").filter(|v| !v.is_null()));
                        if let Some(e) = ev.get("error").filter(|v| !v.is_null()) {
                            n.insert("error".into(), e.clone());
                        }
                        (
                            TurnType::ToolResult,
                            result.map(|v| {
                                v.as_str()
                                    .map(String::from)
                                    .unwrap_or_else(|| v.to_string())
                            }),
                        )
                    }
                };
                rows.push(EventRow {
                    turn_type,
                    tool_name: name,
                    tool_use_id: id,
                    x_match_text: true,
                    text: t,
                    native: Some(n),
                    ..base.clone()
                });
            }
            let has_text = text.as_deref().is_some_and(|t| !t.is_empty());
            match (kind, events.is_empty(), has_text) {
                (None, _, true) => rows.push(row(
                    TurnType::Assistant,
                    text,
                    native_of(rec, &["tool_events"]),
                )),
                (Some(_), true, _) | (None, true, false) => rows.push(row(
                    TurnType::System,
                    text,
                    native_of(rec, &["tool_events"]),
                )),
                _ => {}
            }
        }
        "stream_end" => {
            // an empty text is a step that only called tools: no chat row
            if rec.get("merge_next").and_then(Value::as_bool) != Some(true)
                && text.as_deref().is_some_and(|t| !t.is_empty())
            {
                rows.push(row(TurnType::Assistant, text, native_of(rec, &[])));
            }
        }
        "reasoning_end" => {
            if include_thinking {
                rows.push(row(TurnType::Thinking, text, native_of(rec, &[])));
            }
        }
        "delta" | "reasoning_delta" | "turn_end" => {}
        "file_edit" => {
            let edits = rec.get("edits").map(Value::to_string).unwrap_or_default();
            rows.push(EventRow {
                turn_type: TurnType::System,
                text: Some(format!("file edit: {edits}")),
                native: native_of(rec, &["edits"]),
                ..base.clone()
            });
        }
        other => {
            let t = text.filter(|t| !t.is_empty()).unwrap_or_else(|| {
                format!("webui {}", if other.is_empty() { "record" } else { other })
            });
            rows.push(EventRow {
                turn_type: TurnType::System,
                text: Some(t),
                native: native_of(rec, &[]),
                ..base.clone()
            });
        }
    }
    for (i, r) in rows.iter_mut().enumerate() {
        r.x_sub = i as i32;
        if r.turn_type == TurnType::System {
            r.x_match = None;
            r.x_match_text = false;
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::obj;

    #[test]
    fn a_turn_end_puts_its_rounds_token_counts_on_the_answer_row() {
        let mut turn = Turn::default();
        turn.rows.push(EventRow {
            turn_type: TurnType::Assistant,
            ..EventRow::default()
        });
        turn.rows.push(EventRow {
            turn_type: TurnType::System,
            ..EventRow::default()
        });
        attach_turn_end(
            &mut turn,
            &obj(
                r#"{"event":"turn_end","usage":{"prompt_tokens":9},"round_usages":[{"prompt_tokens":2959,"completion_tokens":125,"cached_tokens":2048},{"prompt_tokens":2747},{}]}"#,
            ),
        );
        assert_eq!(turn.rows[0].x_rounds.as_deref(), Some("2959:125,2747:,:"));
        assert_eq!(turn.rows[1].x_rounds, None);
        let native = turn.rows[0]
            .native
            .as_ref()
            .map(|n| n["turn_end"]["usage"].clone());
        assert_eq!(native, Some(serde_json::json!({"prompt_tokens": 9})));
        // a turn_end without the list (an older nanobot): no rounds
        let mut older = Turn::default();
        older.rows.push(EventRow::default());
        attach_turn_end(&mut older, &obj(r#"{"event":"turn_end","latency_ms":5}"#));
        assert_eq!(older.rows[0].x_rounds, None);
    }

    #[test]
    fn segment_owner() {
        assert_eq!(
            owner(".nanobot/webui/websocket_b8.segments/000001.jsonl"),
            ".nanobot/webui/websocket_b8.jsonl"
        );
    }

    #[test]
    fn tool_events_become_tool_rows_and_breadcrumbs_do_not_repeat() {
        let base = EventRow::default();
        let start = map_record(
            &obj(
                r#"{"event":"message","text":"exec(\"ls\")","kind":"tool_hint","tool_events":[{"phase":"start","call_id":"c1","name":"exec","arguments":{"command":"ls"},"files":[],"embeds":[]}]}"#,
            ),
            &base,
            false,
        );
        assert_eq!(start.len(), 1);
        assert_eq!(
            (
                start[0].turn_type,
                start[0].text.as_deref(),
                start[0].tool_use_id.as_deref()
            ),
            (TurnType::ToolUse, Some("ls"), Some("c1"))
        );
        let end = map_record(
            &obj(
                r#"{"event":"message","text":"","kind":"progress","tool_events":[{"phase":"end","call_id":"c1","name":"exec","result":"a\nb"}]}"#,
            ),
            &base,
            false,
        );
        assert_eq!(
            (end[0].turn_type, end[0].text.as_deref()),
            (TurnType::ToolResult, Some("a\nb"))
        );
        let crumb = map_record(
            &obj(r#"{"event":"message","text":"thinking…","kind":"progress"}"#),
            &base,
            false,
        );
        assert_eq!(
            (crumb[0].turn_type, crumb[0].x_match.as_deref()),
            (TurnType::System, None)
        );
        let reasoning = obj(r#"{"event":"reasoning_end","text":"hm"}"#);
        assert!(map_record(&reasoning, &base, false).is_empty());
        assert_eq!(
            map_record(&reasoning, &base, true)[0].turn_type,
            TurnType::Thinking
        );
        assert!(
            map_record(
                &obj(r#"{"event":"stream_end","text":"x","merge_next":true}"#),
                &base,
                false
            )
            .is_empty()
        );
    }
}
