//! `nanoclaw.opencode_db`: the OpenCode CLI's database that backs a nanoclaw
//! session's `continuation:opencode` (an agent group on nanoclaw's OpenCode
//! provider). docs/design.md "nanoclaw: OpenCode sessions".
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/<session_id>/opencode-xdg/   XDG_DATA_HOME, one per session
//!   opencode/opencode.db (+ -wal: the server is killed, rows live in the WAL)
//!   (opencode/auth.json, storage/, log/ are never read; nor the tables account,
//!    control_account, session_share, permission)
//!   session(id ses_…, parent_id, title, directory, version, time_created ms)
//!                              → system `opencode session <id>: <title> (version <v>)`
//!   message(id msg_…, session_id, time_created ms, data JSON)  ordered by (session, time, id)
//!     data.role = user         → its `text` parts: user; other parts: system
//!     data.role = assistant{modelID, providerID, tokens{input, output, reasoning,
//!                           cache{read, write}}, error?}       one per model call
//!   part(id prt_…, message_id, time_created ms, data JSON)      ordered by id
//!     text → assistant; reasoning → thinking;
//!     tool{tool, callID, state{status, input, output | error, metadata.exit}}
//!          → tool_use + tool_result (native.is_error: status `error`, or an exit code not 0)
//!     step-start, step-finish, snapshot, patch → no row (the message carries the usage)
//!     other → system `opencode part <type>`
//!   an assistant message's error → system `opencode error: <name>: <message>`
//! ```
//! `source_line` numbers the rows in this order (no line in a database).
//! native: `transcript_id` (the OpenCode session id; a subagent session's
//! rows keep their own id and `parent_session`), `message_id`, `provider`
//! (`providerID`), `agent_group_id`; on the first row of an assistant
//! message `usage` in the steps' transcript shape (`input_tokens` without
//! the cache, `cache_read_input_tokens`, `cache_creation_input_tokens`,
//! `output_tokens`, `reasoning_output_tokens`) and `usage_counted: true`.
//! `session_id` is the nanoclaw session of the folder (one OpenCode data
//! directory per nanoclaw session).

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{has_table, tool_call_text};
use crate::store::{StoreError, StoreOutput};

/// One OpenCode session: id, parent id, facts (title, directory, version),
/// created (epoch ms).
type Session = (String, Option<String>, Map<String, Value>, Option<i64>);

/// One OpenCode message with its parts, as stored (no I/O below this).
#[derive(Debug, Clone)]
pub struct Message {
    pub id: String,
    pub session: String,
    pub created_ms: Option<i64>,
    pub data: Value,
    /// (part id, created ms, data)
    pub parts: Vec<(String, Option<i64>, Value)>,
}

fn ms(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_i64)
        .and_then(crate::time::from_epoch_ms)
}

/// The usage of an assistant message in the steps' transcript shape.
fn usage(tokens: &Value) -> Option<Value> {
    let t = tokens.as_object()?;
    let n = |v: Option<&Value>| v.and_then(Value::as_i64);
    let mut u = Map::new();
    for (k, v) in [
        ("input_tokens", n(t.get("input"))),
        (
            "cache_read_input_tokens",
            n(t.get("cache").and_then(|c| c.get("read"))),
        ),
        (
            "cache_creation_input_tokens",
            n(t.get("cache").and_then(|c| c.get("write"))),
        ),
        ("output_tokens", n(t.get("output"))),
        ("reasoning_output_tokens", n(t.get("reasoning"))),
    ] {
        if let Some(v) = v {
            u.insert(k.into(), json!(v));
        }
    }
    (!u.is_empty()).then_some(Value::Object(u))
}

/// The rows of one message (no I/O).
pub fn message_rows(m: &Message) -> Vec<EventRow> {
    let d = &m.data;
    let role = d.get("role").and_then(Value::as_str).unwrap_or("");
    let assistant = role == "assistant";
    let model = d.get("modelID").and_then(Value::as_str).map(String::from);
    let mut base_native = Map::new();
    base_native.insert("message_id".into(), json!(m.id));
    if let Some(p) = d.get("providerID").and_then(Value::as_str) {
        base_native.insert("provider".into(), json!(p));
    }
    let msg_ts = ms(d.get("time").and_then(|t| t.get("created"))).or(m.created_ms);
    let mut rows = Vec::new();
    let row =
        |turn_type: TurnType, ts: Option<i64>, text: Option<String>, extra: &[(&str, Value)]| {
            let mut n = base_native.clone();
            for (k, v) in extra {
                n.insert((*k).into(), v.clone());
            }
            EventRow {
                turn_type,
                text,
                ts_utc: ts.or(msg_ts),
                x_group: Group::Transcript,
                native: Some(n),
                ..Default::default()
            }
        };
    for (part_id, created, p) in &m.parts {
        let ptype = p.get("type").and_then(Value::as_str).unwrap_or("");
        let start = ms(p.get("time").and_then(|t| t.get("start"))).or(*created);
        let text = p.get("text").and_then(Value::as_str).map(String::from);
        let part = [("part_id", json!(part_id))];
        match (ptype, assistant) {
            ("text", false) => rows.push(row(TurnType::User, start, text, &part)),
            ("text", true) => rows.push(EventRow {
                model: model.clone(),
                ..row(TurnType::Assistant, start, text, &part)
            }),
            ("reasoning", _) => rows.push(EventRow {
                model: model.clone(),
                ..row(TurnType::Thinking, start, text, &part)
            }),
            ("tool", _) => {
                let state = p.get("state").cloned().unwrap_or(Value::Null);
                let input = state.get("input").cloned().unwrap_or(Value::Null);
                let call = p.get("callID").and_then(Value::as_str).map(String::from);
                let tool = p.get("tool").and_then(Value::as_str).map(String::from);
                let status = state.get("status").and_then(Value::as_str).unwrap_or("");
                let called = ms(state.get("time").and_then(|t| t.get("start"))).or(start);
                rows.push(EventRow {
                    model: model.clone(),
                    tool_name: tool.clone(),
                    tool_use_id: call.clone(),
                    ..row(
                        TurnType::ToolUse,
                        called,
                        Some(tool_call_text(&input)),
                        &[("part_id", json!(part_id)), ("input", input)],
                    )
                });
                if matches!(status, "completed" | "error") {
                    let exit = state
                        .get("metadata")
                        .and_then(|m| m.get("exit"))
                        .and_then(Value::as_i64);
                    let failed = status == "error" || exit.is_some_and(|e| e != 0);
                    let text = if status == "error" {
                        state.get("error").and_then(Value::as_str)
                    } else {
                        state.get("output").and_then(Value::as_str)
                    }
                    .map(String::from);
                    let end = ms(state.get("time").and_then(|t| t.get("end"))).or(called);
                    let mut extra = vec![
                        ("part_id", json!(part_id)),
                        ("status", json!(status)),
                        ("is_error", json!(failed)),
                    ];
                    if let Some(e) = exit {
                        extra.push(("exit_code", json!(e)));
                    }
                    rows.push(EventRow {
                        tool_name: tool,
                        tool_use_id: call,
                        ..row(TurnType::ToolResult, end, text, &extra)
                    });
                }
            }
            ("step-start" | "step-finish" | "snapshot" | "patch", _) => {}
            (other, _) => rows.push(row(
                TurnType::System,
                start,
                Some(match &text {
                    Some(t) => format!("opencode part {other}: {t}"),
                    None => format!("opencode part {other}"),
                }),
                &part,
            )),
        }
    }
    if let Some(err) = d.get("error").filter(|e| !e.is_null()) {
        let name = err.get("name").and_then(Value::as_str).unwrap_or("error");
        let message = err
            .get("data")
            .and_then(|x| x.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("");
        rows.push(row(
            TurnType::System,
            ms(d.get("time").and_then(|t| t.get("completed"))),
            Some(format!("opencode error: {name}: {message}")),
            &[],
        ));
    }
    if assistant {
        // the call's usage rides on its first row
        let u = d.get("tokens").and_then(usage);
        for (i, r) in rows.iter_mut().enumerate() {
            let n = r.native.get_or_insert_with(Map::new);
            let counted = i == 0 && u.is_some();
            n.insert("usage_counted".into(), json!(counted));
            if counted && let Some(u) = &u {
                n.insert("usage".into(), u.clone());
                if let Some(f) = d.get("finish").filter(|f| !f.is_null()) {
                    n.insert("stop_reason".into(), f.clone());
                }
            }
        }
    }
    for (i, r) in rows.iter_mut().enumerate() {
        r.x_sub = i as i32;
    }
    rows
}

/// A row's `data` column as the JSON object it must be; else a `bad_record`
/// naming `what` (the row is skipped, the rest still load).
fn data_object(
    out: &mut StoreOutput<'_>,
    raw: Option<&str>,
    rowid: i64,
    what: &str,
) -> Option<Value> {
    match raw.map(crate::jsonl::parse) {
        Some(Ok(v @ Value::Object(_))) => Some(v),
        _ => {
            out.diag(
                DiagKind::BadRecord,
                None,
                Some(rowid),
                format!("{what}: data is not a JSON object"),
            );
            None
        }
    }
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let (_, ag, session) = super::session_parts(&store.rel).unwrap_or_default();
    let snap = out.snapshot()?;
    let conn = &snap.conn;
    let err = |what: &str, e: rusqlite::Error| StoreError::Unreadable(format!("{what}: {e}"));
    for t in ["session", "message", "part"] {
        if !has_table(conn, t).map_err(|e| err("schema", e))? {
            return Err(StoreError::Unreadable(format!(
                "no {t} table (not an OpenCode database)"
            )));
        }
    }
    let text = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Option<String>> { r.get(i) };
    // the sessions (a subagent session names its parent)
    let mut sessions: Vec<Session> = Vec::new();
    {
        let mut stmt = conn
            .prepare(
                "SELECT id, parent_id, title, directory, version, time_created
                 FROM session ORDER BY time_created, id",
            )
            .map_err(|e| err("session", e))?;
        let mut rows = stmt.query([]).map_err(|e| err("session", e))?;
        while let Some(r) = rows.next().map_err(|e| err("session", e))? {
            let id: String = r.get(0).map_err(|e| err("session", e))?;
            let mut facts = Map::new();
            for (i, k) in [
                (1, "parent_id"),
                (2, "title"),
                (3, "directory"),
                (4, "version"),
            ] {
                if let Some(v) = text(r, i).map_err(|e| err("session", e))? {
                    facts.insert(k.into(), json!(v));
                }
            }
            let created: Option<i64> = r.get(5).map_err(|e| err("session", e))?;
            let parent = text(r, 1).map_err(|e| err("session", e))?;
            sessions.push((id, parent, facts, created));
        }
    }
    let parent_of: std::collections::BTreeMap<String, Option<String>> = sessions
        .iter()
        .map(|(id, p, ..)| (id.clone(), p.clone()))
        .collect();
    let mut messages: Vec<Message> = Vec::new();
    {
        let mut stmt = conn
            .prepare(
                "SELECT m.id, m.session_id, m.time_created, m.data, m.rowid FROM message m
                 ORDER BY m.session_id, m.time_created, m.id",
            )
            .map_err(|e| err("message", e))?;
        let mut rows = stmt.query([]).map_err(|e| err("message", e))?;
        while let Some(r) = rows.next().map_err(|e| err("message", e))? {
            let id: String = r.get(0).map_err(|e| err("message", e))?;
            let raw: Option<String> = r.get(3).map_err(|e| err("message", e))?;
            let rowid: i64 = r.get(4).map_err(|e| err("message", e))?;
            let Some(data) = data_object(out, raw.as_deref(), rowid, &format!("message {id}"))
            else {
                continue;
            };
            messages.push(Message {
                id,
                session: r.get(1).map_err(|e| err("message", e))?,
                created_ms: r.get(2).map_err(|e| err("message", e))?,
                data,
                parts: Vec::new(),
            });
        }
    }
    {
        let index: std::collections::HashMap<String, usize> = messages
            .iter()
            .enumerate()
            .map(|(i, m)| (m.id.clone(), i))
            .collect();
        let mut stmt = conn
            .prepare("SELECT id, message_id, time_created, data, rowid FROM part ORDER BY message_id, id")
            .map_err(|e| err("part", e))?;
        let mut rows = stmt.query([]).map_err(|e| err("part", e))?;
        while let Some(r) = rows.next().map_err(|e| err("part", e))? {
            let id: String = r.get(0).map_err(|e| err("part", e))?;
            let message: String = r.get(1).map_err(|e| err("part", e))?;
            let created: Option<i64> = r.get(2).map_err(|e| err("part", e))?;
            let raw: Option<String> = r.get(3).map_err(|e| err("part", e))?;
            let rowid: i64 = r.get(4).map_err(|e| err("part", e))?;
            let Some(data) = data_object(out, raw.as_deref(), rowid, &format!("part {id}")) else {
                continue;
            };
            match index.get(&message) {
                Some(&i) => {
                    messages[i]
                        .parts
                        .push((id, created.and_then(crate::time::from_epoch_ms), data))
                }
                None => out.diag(
                    DiagKind::Warning,
                    None,
                    Some(rowid),
                    format!("part {id}: its message {message} is not in the database"),
                ),
            }
        }
    }
    let mut seq = 0;
    let mut push = |out: &mut StoreOutput<'_>, transcript: &str, row: EventRow| {
        let mut native = row.native.clone().unwrap_or_default();
        native.insert("transcript_id".into(), json!(transcript));
        native.insert("agent_group_id".into(), json!(ag));
        if let Some(Some(p)) = parent_of.get(transcript) {
            native.insert("parent_session".into(), json!(p));
        }
        // the row's number in the store: a key within it (`llm_calls.id`)
        let r = out.push(EventRow {
            seq: Some(seq),
            source_line: Some(seq + 1),
            session_id: (!session.is_empty()).then(|| session.clone()),
            native: Some(native),
            ..row
        });
        seq += 1;
        r
    };
    for (id, _, facts, created) in &sessions {
        let title = facts.get("title").and_then(Value::as_str).unwrap_or("");
        let version = facts.get("version").and_then(Value::as_str).unwrap_or("");
        push(
            out,
            id,
            EventRow {
                turn_type: TurnType::System,
                text: Some(format!(
                    "opencode session {id}: {title} (version {version})"
                )),
                ts_utc: created.and_then(crate::time::from_epoch_ms),
                x_group: Group::Transcript,
                native: Some(
                    [("session".to_string(), Value::Object(facts.clone()))]
                        .into_iter()
                        .collect(),
                ),
                ..Default::default()
            },
        )?;
    }
    for m in &messages {
        for row in message_rows(m) {
            push(out, &m.session, row)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assistant_message_gives_its_parts_and_usage_once() {
        let m = Message {
            id: "msg_2".into(),
            session: "ses_1".into(),
            created_ms: Some(1_796_268_481_000),
            data: json!({"role": "assistant", "modelID": "stub-model", "providerID": "stubai",
                "time": {"created": 1_796_268_481_000_i64, "completed": 1_796_268_481_900_i64},
                "tokens": {"total": 2479, "input": 1922, "output": 45, "reasoning": 16, "cache": {"read": 512, "write": 0}},
                "finish": "tool-calls"}),
            parts: vec![
                ("prt_1".into(), None, json!({"type": "step-start"})),
                (
                    "prt_2".into(),
                    None,
                    json!({"type": "reasoning", "text": "think", "time": {"start": 1_796_268_481_100_i64}}),
                ),
                (
                    "prt_3".into(),
                    None,
                    json!({"type": "tool", "callID": "c1", "tool": "bash",
                    "state": {"status": "completed", "input": {"command": "ls /nonexistent"}, "output": "ls: no",
                              "metadata": {"exit": 2}, "time": {"start": 1_796_268_481_200_i64, "end": 1_796_268_481_300_i64}}}),
                ),
                (
                    "prt_4".into(),
                    None,
                    json!({"type": "tool", "callID": "c2", "tool": "read",
                    "state": {"status": "error", "input": {"filePath": "/x"}, "error": "File not found: /x"}}),
                ),
                (
                    "prt_5".into(),
                    None,
                    json!({"type": "step-finish", "reason": "tool-calls"}),
                ),
            ],
        };
        let rows = message_rows(&m);
        type Got<'a> = (TurnType, Option<&'a str>, Option<&'a str>, Option<Value>);
        let got: Vec<Got<'_>> = rows
            .iter()
            .map(|r| {
                (
                    r.turn_type,
                    r.text.as_deref(),
                    r.tool_name.as_deref(),
                    r.native.as_ref().and_then(|n| n.get("is_error")).cloned(),
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (TurnType::Thinking, Some("think"), None, None),
                (
                    TurnType::ToolUse,
                    Some("ls /nonexistent"),
                    Some("bash"),
                    None
                ),
                (
                    TurnType::ToolResult,
                    Some("ls: no"),
                    Some("bash"),
                    Some(json!(true))
                ),
                (
                    TurnType::ToolUse,
                    Some("{\"filePath\":\"/x\"}"),
                    Some("read"),
                    None
                ),
                (
                    TurnType::ToolResult,
                    Some("File not found: /x"),
                    Some("read"),
                    Some(json!(true))
                ),
            ]
        );
        let n = |i: usize, k: &str| rows[i].native.as_ref().and_then(|n| n.get(k)).cloned();
        assert_eq!(
            n(0, "usage"),
            Some(
                json!({"input_tokens": 1922, "cache_read_input_tokens": 512, "cache_creation_input_tokens": 0,
                        "output_tokens": 45, "reasoning_output_tokens": 16})
            )
        );
        assert_eq!(
            (n(0, "usage_counted"), n(1, "usage_counted"), n(1, "usage")),
            (Some(json!(true)), Some(json!(false)), None)
        );
        assert_eq!(rows[1].model.as_deref(), Some("stub-model"));
    }
}
