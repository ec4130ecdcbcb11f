//! `nanoclaw.codex_rollout`: the Codex CLI's rollout transcripts that back a
//! nanoclaw session's `continuation:codex` (an agent group whose provider is
//! Codex: the model, tool and usage evidence the nanoclaw databases lack).
//! docs/design.md "nanoclaw: Codex rollouts".
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/.codex-shared/        CODEX_HOME, one per agent group
//!   sessions/YYYY/MM/DD/rollout-<local time>-<thread id>.jsonl   one file per thread
//!   (auth.json, config.toml, *.sqlite, shell_snapshots/ … are never read)
//!   one JSON object per line: {"timestamp": UTC, "type": …, "payload": {…}}
//!   session_meta                    → system `codex thread <id>: cli=<v> provider=<p> cwd=<cwd>`
//!   turn_context{model, turn_id}    → no row; the model of the rows that follow
//!   response_item message  user     → user (an `<environment_context>` block → system)
//!                          developer→ system
//!                          assistant→ assistant
//!                 reasoning         → thinking (the summary texts)
//!                 function_call{name, arguments, call_id}      → tool_use
//!                 function_call_output{call_id, output}        → tool_result; native.is_error =
//!                   the output's `Process exited with code N` / `Exit code: N` is not 0
//!                 custom_tool_call{name, input, call_id}       → tool_use
//!                 custom_tool_call_output{call_id, output}     → tool_result (as above)
//!                 other             → system `codex <type>`
//!   event_msg token_count{info.last_token_usage}  → the usage of the model call whose rows
//!                   precede it (on the first of them, `usage_counted: true`)
//!             turn_aborted, error → system; the others repeat response items → no row
//!   compacted                       → system `codex compacted: <message>`
//! ```
//! native: `transcript_id` (the thread id, from the file name), `turn_id`,
//! `message_id` (`<thread>#<n>`: the n-th model call of the file),
//! `agent_group_id`, `provider` (session_meta's `model_provider`, else
//! `openai`), `usage` in the shape the steps read for every transcript
//! (`input_tokens` without the cached part, `cache_read_input_tokens`,
//! `output_tokens` with the reasoning, `reasoning_output_tokens`).
//! The steps join a thread to the session whose outbound `session_state`
//! names it (`continuation:codex`), as they join Claude Code transcripts.

use std::fs::File;
use std::io::BufReader;

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::jsonl::{Line, Lines, decode_line};
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{bad_line_row, tool_call_text};
use crate::store::{StoreError, StoreOutput};

/// The thread id a rollout file names: `rollout-<time>-<uuid>.jsonl` (the
/// uuid is the last five dash-separated fields).
pub fn thread_id(rel: &str) -> String {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let stem = name.strip_suffix(".jsonl").unwrap_or(name);
    let fields: Vec<&str> = stem.split('-').collect();
    if fields.len() >= 5 {
        fields[fields.len() - 5..].join("-")
    } else {
        stem.to_string()
    }
}

/// The exit code a Codex tool output reports (`Process exited with code N`
/// of exec_command, `Exit code: N` of a custom tool).
fn exit_code(output: &str) -> Option<i64> {
    for marker in ["Process exited with code ", "Exit code: "] {
        if let Some(at) = output.find(marker) {
            let digits: String = output[at + marker.len()..]
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
    }
    None
}

/// The text of a message's content parts (`input_text`, `output_text`).
fn content_text(payload: &Value) -> Option<String> {
    let parts: Vec<&str> = payload
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!parts.is_empty()).then(|| parts.join("\n"))
}

/// What one rollout line says, read in order: the rows it gives, the model
/// state it changes, the usage it reports (no I/O).
#[derive(Debug, Default)]
pub struct Rollout {
    model: Option<String>,
    turn_id: Option<String>,
    provider: Option<String>,
}

/// One line's effect.
#[derive(Debug, Default)]
pub struct LineRows {
    pub rows: Vec<EventRow>,
    /// A `token_count`: the last model call's usage, in the steps' shape.
    pub usage: Option<Value>,
}

impl Rollout {
    /// The provider the thread's calls went to.
    pub fn provider(&self) -> &str {
        self.provider.as_deref().unwrap_or("openai")
    }

    pub fn map_line(&mut self, v: &Value) -> LineRows {
        let mut out = LineRows::default();
        let Some(o) = v.as_object() else {
            return out;
        };
        let ts = o
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_utc);
        let payload = o.get("payload").cloned().unwrap_or(Value::Null);
        let ptype = payload.get("type").and_then(Value::as_str).unwrap_or("");
        let mut native = Map::new();
        if let Some(t) = &self.turn_id {
            native.insert("turn_id".into(), json!(t));
        }
        let base = EventRow {
            ts_utc: ts,
            x_group: Group::Transcript,
            ..Default::default()
        };
        let s = |k: &str| payload.get(k).and_then(Value::as_str).map(String::from);
        let row = |turn_type: TurnType, text: Option<String>, extra: Map<String, Value>| {
            let mut n = native.clone();
            n.extend(extra);
            EventRow {
                turn_type,
                text,
                native: Some(n),
                ..base.clone()
            }
        };
        match o.get("type").and_then(Value::as_str).unwrap_or("") {
            "session_meta" => {
                if let Some(p) = s("model_provider") {
                    self.provider = Some(p);
                }
                let mut facts = Map::new();
                for k in [
                    "id",
                    "cli_version",
                    "originator",
                    "source",
                    "model_provider",
                    "cwd",
                ] {
                    if let Some(x) = payload.get(k).filter(|x| !x.is_null()) {
                        facts.insert(k.into(), x.clone());
                    }
                }
                let text = format!(
                    "codex thread {}: cli={} provider={} cwd={}",
                    s("id").unwrap_or_default(),
                    s("cli_version").unwrap_or_default(),
                    self.provider(),
                    s("cwd").unwrap_or_default()
                );
                out.rows.push(row(
                    TurnType::System,
                    Some(text),
                    [("session_meta".to_string(), Value::Object(facts))]
                        .into_iter()
                        .collect(),
                ));
            }
            "turn_context" => {
                self.model = s("model").or(self.model.take());
                self.turn_id = s("turn_id").or(self.turn_id.take());
            }
            "response_item" => {
                let model = self.model.clone();
                let mut r = match ptype {
                    "message" => {
                        let text = content_text(&payload);
                        match payload.get("role").and_then(Value::as_str) {
                            Some("assistant") => row(TurnType::Assistant, text, Map::new()),
                            Some("user")
                                if !text
                                    .as_deref()
                                    .is_some_and(|t| t.starts_with("<environment_context>")) =>
                            {
                                row(TurnType::User, text, Map::new())
                            }
                            role => row(
                                TurnType::System,
                                text,
                                [("role".to_string(), json!(role))].into_iter().collect(),
                            ),
                        }
                    }
                    "reasoning" => {
                        let summary: Vec<&str> = payload
                            .get("summary")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect();
                        row(
                            TurnType::Thinking,
                            (!summary.is_empty()).then(|| summary.join("\n")),
                            Map::new(),
                        )
                    }
                    "function_call" | "custom_tool_call" => {
                        let input = if ptype == "function_call" {
                            payload.get("arguments").cloned().unwrap_or(Value::Null)
                        } else {
                            payload.get("input").cloned().unwrap_or(Value::Null)
                        };
                        let parsed = match &input {
                            Value::String(a) => crate::jsonl::parse(a).unwrap_or(input.clone()),
                            other => other.clone(),
                        };
                        let text = parsed
                            .get("cmd")
                            .and_then(Value::as_str)
                            .map(String::from)
                            .unwrap_or_else(|| tool_call_text(&input));
                        EventRow {
                            tool_name: s("name"),
                            tool_use_id: s("call_id"),
                            ..row(
                                TurnType::ToolUse,
                                Some(text),
                                [("input".to_string(), parsed)].into_iter().collect(),
                            )
                        }
                    }
                    "function_call_output" | "custom_tool_call_output" => {
                        let output = match payload.get("output") {
                            Some(Value::String(t)) => Some(t.clone()),
                            Some(Value::Null) | None => None,
                            Some(other) => Some(other.to_string()),
                        };
                        let code = output.as_deref().and_then(exit_code);
                        let mut extra = Map::new();
                        extra.insert(
                            "is_error".into(),
                            code.map_or(Value::Null, |c| json!(c != 0)),
                        );
                        if let Some(c) = code {
                            extra.insert("exit_code".into(), json!(c));
                        }
                        EventRow {
                            tool_use_id: s("call_id"),
                            ..row(TurnType::ToolResult, output, extra)
                        }
                    }
                    other => row(
                        TurnType::System,
                        Some(format!("codex {other}")),
                        [("payload".to_string(), payload.clone())]
                            .into_iter()
                            .collect(),
                    ),
                };
                if matches!(
                    r.turn_type,
                    TurnType::Assistant | TurnType::Thinking | TurnType::ToolUse
                ) {
                    r.model = model;
                }
                out.rows.push(r);
            }
            "event_msg" => match ptype {
                "token_count" => {
                    if let Some(u) = payload
                        .get("info")
                        .and_then(|i| i.get("last_token_usage"))
                        .filter(|u| u.is_object())
                    {
                        let n = |k: &str| u.get(k).and_then(Value::as_i64);
                        let cached = n("cached_input_tokens");
                        let mut usage = Map::new();
                        if let Some(i) = n("input_tokens") {
                            usage.insert(
                                "input_tokens".into(),
                                json!(i - cached.unwrap_or(0).min(i)),
                            );
                        }
                        if let Some(c) = cached {
                            usage.insert("cache_read_input_tokens".into(), json!(c));
                        }
                        for k in ["output_tokens", "reasoning_output_tokens"] {
                            if let Some(x) = n(k) {
                                usage.insert(k.into(), json!(x));
                            }
                        }
                        out.usage = Some(Value::Object(usage));
                    }
                }
                "turn_aborted" | "error" => {
                    let text = s("reason").or_else(|| s("message")).unwrap_or_default();
                    out.rows.push(row(
                        TurnType::System,
                        Some(format!("codex {ptype}: {text}")),
                        Map::new(),
                    ));
                }
                _ => {}
            },
            "compacted" => out.rows.push(row(
                TurnType::System,
                Some(format!(
                    "codex compacted: {}",
                    s("message").unwrap_or_default()
                )),
                Map::new(),
            )),
            _ => {}
        }
        out
    }
}

/// Rows waiting for their model call's `token_count`: the usage goes on the
/// first model output (assistant, thinking, tool_use) among them; every
/// model output of the call names it by `message_id` (`<thread>#<n>`, the
/// n-th call of the file: Codex keeps no id of the model's response).
fn settle(pending: &mut [EventRow], usage: Option<Value>, provider: &str, call: &str) {
    let model_output = |r: &EventRow| {
        matches!(
            r.turn_type,
            TurnType::Assistant | TurnType::Thinking | TurnType::ToolUse
        )
    };
    let first = pending.iter().position(model_output);
    for (i, r) in pending.iter_mut().enumerate() {
        if !model_output(r) {
            continue;
        }
        let n = r.native.get_or_insert_with(Map::new);
        n.insert("provider".into(), json!(provider));
        n.insert("message_id".into(), json!(call));
        let counted = Some(i) == first && usage.is_some();
        n.insert("usage_counted".into(), json!(counted));
        if counted && let Some(u) = &usage {
            n.insert("usage".into(), u.clone());
        }
    }
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let id = thread_id(&store.rel);
    let ag = super::session_parts(&store.rel)
        .map(|(_, ag, _)| ag)
        .unwrap_or_default();
    let f = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(f));
    let mut state = Rollout::default();
    // (line, seq, row) of the model call not yet settled by a token_count
    let mut pending: Vec<(i64, i64, EventRow)> = Vec::new();
    let mut seq = 0;
    let mut calls = 0;
    let mut flush = |out: &mut StoreOutput<'_>,
                     pending: &mut Vec<(i64, i64, EventRow)>,
                     usage: Option<Value>,
                     provider: &str|
     -> Result<(), StoreError> {
        let mut rows: Vec<EventRow> = pending.iter().map(|(_, _, r)| r.clone()).collect();
        calls += 1;
        settle(&mut rows, usage, provider, &format!("{id}#{calls}"));
        for ((line, seq, _), row) in pending.drain(..).zip(rows) {
            let mut native = row.native.clone().unwrap_or_default();
            native.insert("transcript_id".into(), json!(id));
            native.insert("agent_group_id".into(), json!(ag));
            out.push(EventRow {
                seq: Some(seq),
                source_line: Some(line),
                native: Some(native),
                ..row
            })?;
        }
        Ok(())
    };
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
        match decode_line(bytes) {
            Ok(Some(d)) => {
                let got = state.map_line(&d.value);
                for (sub, row) in (0..).zip(got.rows) {
                    pending.push((n, seq, EventRow { x_sub: sub, ..row }));
                }
                if got.usage.is_some() {
                    let provider = state.provider().to_string();
                    flush(out, &mut pending, got.usage, &provider)?;
                }
            }
            Ok(None) => continue,
            Err(e) => {
                out.diag(DiagKind::BadLine, None, Some(n), e.0.clone());
                pending.push((
                    n,
                    seq,
                    EventRow {
                        x_group: Group::Transcript,
                        ..bad_line_row(n, &e.0, bytes)
                    },
                ));
            }
        }
        seq += 1;
    }
    let provider = state.provider().to_string();
    flush(out, &mut pending, None, &provider)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_ids_exit_codes_and_usage() {
        assert_eq!(
            thread_id(
                "data/v2-sessions/ag/.codex-shared/sessions/2026/12/03/rollout-2026-12-03T03-27-55-01a239f1-c5a9-7872-9bec-428a6519819a.jsonl"
            ),
            "01a239f1-c5a9-7872-9bec-428a6519819a"
        );
        assert_eq!(
            exit_code("Chunk ID: 1\nProcess exited with code 2\nOutput:\n"),
            Some(2)
        );
        assert_eq!(exit_code("Exit code: 0\nWall time: 0 seconds"), Some(0));
        assert_eq!(exit_code("no marker"), None);
        let mut r = Rollout::default();
        let line = |t: &str, p: Value| json!({"timestamp": "2026-12-03T03:27:55.866Z", "type": t, "payload": p});
        r.map_line(&line(
            "turn_context",
            json!({"turn_id": "t1", "model": "gpt-5.5"}),
        ));
        let call = r.map_line(&line(
            "response_item",
            json!({"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\": \"echo hi\"}", "call_id": "c1"}),
        ));
        assert_eq!(
            (
                call.rows[0].turn_type,
                call.rows[0].text.as_deref(),
                call.rows[0].model.as_deref(),
                call.rows[0].tool_use_id.as_deref()
            ),
            (
                TurnType::ToolUse,
                Some("echo hi"),
                Some("gpt-5.5"),
                Some("c1")
            )
        );
        let usage = r.map_line(&line(
            "event_msg",
            json!({"type": "token_count", "info": {"last_token_usage": {"input_tokens": 2434, "cached_input_tokens": 512, "output_tokens": 45, "reasoning_output_tokens": 16, "total_tokens": 2479}}}),
        ));
        assert_eq!(
            usage.usage,
            Some(
                json!({"input_tokens": 1922, "cache_read_input_tokens": 512, "output_tokens": 45, "reasoning_output_tokens": 16})
            )
        );
        let env = r.map_line(&line(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n</environment_context>"}]}),
        ));
        assert_eq!(env.rows[0].turn_type, TurnType::System);
    }
}
