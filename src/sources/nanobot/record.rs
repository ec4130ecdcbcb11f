//! The session-record mapper: one nanobot message dict → event rows. Shared by
//! the session database and every session JSONL layout; no I/O, no DuckDB
//! (a fuzz target drives it directly).
//!
//! ```text
//! {"role":"user", "content": str | [{"type":"text","text":…}], "timestamp": naive local,
//!   "_command"?, "_hidden_history"?, "_runtime_context"?: {suffix|blocks}, "_automation_turn"?}
//!      → user            (_hidden_history → system)
//! {"role":"assistant", "content", "tool_calls":[{id, function:{name, arguments}}],
//!   "reasoning_content"?, "thinking_blocks"?: [{type, thinking?, signature?, …}], "latency_ms"?}
//!      → thinking × k, tool_use × n, assistant   (x_sub 0…k-1, k…k+n-1, k+n), then a
//!        `model:` switch row after a `/model` reply; thinking: one per block (its other
//!        keys → native), plus `reasoning_content` first when the blocks do not hold it
//! {"role":"tool", "tool_call_id", "name", "content"}  → tool_result
//! metadata {key, created_at, updated_at, metadata{…}} → session start, model preset,
//!      relay and permission-mode rows (group Session)
//! ```
//! Every key without a standard column goes into `native`.

use serde_json::{Map, Value, json};

use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::tool_call_text;
use crate::store::KeyDigest;
use crate::time::parse_naive;

/// Channel prefixes of messaging platforms (a session on one is relayed).
pub const MESSAGING_CHANNELS: [&str; 18] = [
    "dingtalk",
    "discord",
    "email",
    "feishu",
    "linear",
    "matrix",
    "mattermost",
    "mochat",
    "msteams",
    "napcat",
    "qq",
    "signal",
    "slack",
    "telegram",
    "wecom",
    "weixin",
    "whatsapp",
    "whatsapp_agent",
];

/// Keys of a message record that have a standard column
/// (`thinking_blocks` only when it is a list: [`thinking_rows`]).
const MAPPED_KEYS: [&str; 7] = [
    "role",
    "content",
    "timestamp",
    "tool_calls",
    "tool_call_id",
    "name",
    "reasoning_content",
];

/// The prefix of a `/model` switch reply.
pub const SWITCH_PREFIX: &str = "Switched model preset to `";

/// A record's identity: the [`KeyDigest::record`] (32 hex digits) of a
/// canonical encoding of the value, so two copies of one record hash alike
/// whatever separators, key order or escapes their JSON text used, and
/// different records differently. The encoding is a tag byte per value;
/// strings and keys as length and raw bytes (no escaping), numbers by kind
/// and bits, arrays and objects by length, then their items (serde_json's
/// `Map`, without its `preserve_order` feature, which nothing here enables,
/// is a sorted map: `record_hash_ignores_separators_and_key_order`). Built
/// in one buffer, hashed once: serializing JSON into the hash was a seventh
/// of extraction.
pub fn record_hash(v: &Value, keys: KeyDigest) -> String {
    fn len(out: &mut Vec<u8>, tag: u8, n: usize) {
        out.push(tag);
        out.extend_from_slice(&(n as u64).to_le_bytes());
    }
    fn feed(out: &mut Vec<u8>, v: &Value) {
        match v {
            Value::Null => out.push(b'n'),
            Value::Bool(b) => out.push(if *b { b't' } else { b'f' }),
            Value::Number(n) => {
                let (tag, bits) = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                    (Some(u), _, _) => (b'u', u),
                    (None, Some(i), _) => (b'i', i as u64),
                    (None, None, f) => (b'd', f.unwrap_or(f64::NAN).to_bits()),
                };
                out.push(tag);
                out.extend_from_slice(&bits.to_le_bytes());
            }
            Value::String(s) => {
                len(out, b's', s.len());
                out.extend_from_slice(s.as_bytes());
            }
            Value::Array(a) => {
                len(out, b'a', a.len());
                a.iter().for_each(|x| feed(out, x));
            }
            Value::Object(m) => {
                len(out, b'o', m.len());
                for (k, x) in m {
                    len(out, b'k', k.len());
                    out.extend_from_slice(k.as_bytes());
                    feed(out, x);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(1024);
    feed(&mut out, v);
    keys.record(&out)
}

/// Text of a `content` value: a string, or the text parts of a list of
/// OpenAI blocks joined with newlines. `None` for null/absent.
pub fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            let parts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| match b {
                    Value::String(s) => Some(s.as_str()),
                    Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                        Some("text") | Some("input_text") | Some("output_text") | None => {
                            o.get("text").and_then(Value::as_str)
                        }
                        _ => None,
                    },
                    _ => None,
                })
                .collect();
            Some(parts.join("\n"))
        }
        other => Some(other.to_string()),
    }
}

/// The text the user typed: the session copy minus the runtime context that
/// `_runtime_context` says was appended (`"\n\n" + suffix`, or its blocks).
pub fn strip_runtime_context(text: &str, record: &Map<String, Value>) -> String {
    let Some(rc) = record.get("_runtime_context").and_then(Value::as_object) else {
        return text.to_string();
    };
    if let Some(suffix) = rc.get("suffix").and_then(Value::as_str)
        && let Some(t) = text.strip_suffix(suffix)
    {
        return t.strip_suffix("\n\n").unwrap_or(t).to_string();
    }
    if let Some(blocks) = rc.get("blocks").and_then(Value::as_array) {
        let mut t = text;
        for b in blocks.iter().rev() {
            let bt = match b {
                Value::String(s) => Some(s.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            };
            if let Some(rest) = bt.and_then(|bt| t.strip_suffix(bt)) {
                t = rest
                    .strip_suffix("\n\n")
                    .or_else(|| rest.strip_suffix('\n'))
                    .unwrap_or(rest);
            }
        }
        return t.to_string();
    }
    text.to_string()
}

/// Per-session state of the mapper.
#[derive(Debug, Clone, Default)]
pub struct SessionMapper {
    pub session_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub project_path: Option<String>,
    /// The store's workspace-id namespace (`x_namespace`).
    pub namespace: Option<String>,
    /// The store is a legacy-layout copy (`x_legacy`).
    pub legacy: bool,
    /// How the record keys are digested ([`crate::store::ExtractOptions::keys`]).
    pub keys: KeyDigest,
    /// `metadata._nanobot_model_preset`.
    pub preset: Option<String>,
    /// Whether the session holds a `/model` switch: then the model column is
    /// empty until the first switch and no preset row is written.
    pub has_switch: bool,
    current_model: Option<String>,
    requested: Option<String>,
}

/// Facts of a session's metadata (the JSONL metadata line, or a `sessions` row).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionMeta {
    pub key: Option<String>,
    pub created_at: Option<String>,
    pub updated_at: Option<String>,
    pub metadata: Map<String, Value>,
    /// Everything else of the metadata line / row, for `native`.
    pub extra: Map<String, Value>,
}

impl SessionMeta {
    /// From a JSONL metadata line.
    pub fn from_line(v: &Map<String, Value>) -> SessionMeta {
        let mut extra = Map::new();
        for (k, val) in v {
            if !matches!(
                k.as_str(),
                "_type" | "key" | "created_at" | "updated_at" | "metadata"
            ) {
                extra.insert(k.clone(), val.clone());
            }
        }
        SessionMeta {
            key: v.get("key").and_then(Value::as_str).map(String::from),
            created_at: v
                .get("created_at")
                .and_then(Value::as_str)
                .map(String::from),
            updated_at: v
                .get("updated_at")
                .and_then(Value::as_str)
                .map(String::from),
            metadata: v
                .get("metadata")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            extra,
        }
    }

    pub fn preset(&self) -> Option<String> {
        self.metadata
            .get("_nanobot_model_preset")
            .and_then(Value::as_str)
            .map(String::from)
    }

    pub fn parent(&self) -> Option<String> {
        self.metadata
            .get("parent_session_key")
            .and_then(Value::as_str)
            .map(String::from)
    }
}

/// Split a session key into (channel, chat id).
pub fn split_key(key: &str) -> (&str, Option<&str>) {
    match key.split_once(':') {
        Some((c, chat)) => (c, Some(chat)),
        None => (key, None),
    }
}

fn is_messaging(channel: &str) -> bool {
    MESSAGING_CHANNELS.contains(&channel)
}

/// A `native` object, or none when it is empty.
fn non_empty(m: &Map<String, Value>) -> Option<Map<String, Value>> {
    (!m.is_empty()).then(|| m.clone())
}

impl SessionMapper {
    pub fn new(project_path: Option<String>) -> Self {
        SessionMapper {
            project_path,
            ..Default::default()
        }
    }

    /// Adopt a session's metadata: key, parent, preset.
    pub fn set_meta(&mut self, meta: &SessionMeta) {
        if meta.key.is_some() {
            self.session_id.clone_from(&meta.key);
        }
        self.parent_session_id = meta.parent();
        self.preset = meta.preset();
        self.current_model = if self.has_switch {
            None
        } else {
            self.preset.clone()
        };
    }

    /// The session's identity columns, without the model in force: the
    /// start of a row that stands for an unreadable record of the session.
    pub fn bare_row(&self) -> EventRow {
        EventRow {
            model: None,
            ..self.base()
        }
    }

    fn base(&self) -> EventRow {
        EventRow {
            session_id: self.session_id.clone(),
            parent_session_id: self.parent_session_id.clone(),
            project_path: self.project_path.clone(),
            model: self.current_model.clone(),
            x_namespace: self.namespace.clone(),
            x_legacy: self.legacy,
            ..Default::default()
        }
    }

    /// The session-level rows of a session's metadata: session start, then
    /// model preset, relay and permission-mode rows (marked `x_meta`).
    pub fn session_rows(&self, meta: &SessionMeta, line: Option<i64>) -> Vec<EventRow> {
        let mut rows = Vec::new();
        let ts = meta.created_at.as_deref().and_then(parse_naive);
        let key = meta.key.as_deref().or(self.session_id.as_deref());
        let last_channel = meta.metadata.get("last_channel").and_then(Value::as_str);
        let mut parts = Vec::new();
        if let Some(k) = key {
            parts.push(format!("key={k}"));
            let (channel, chat) = split_key(k);
            parts.push(format!("channel={channel}"));
            if let Some(c) = chat {
                parts.push(format!("chat={c}"));
            }
        }
        if let Some(lc) = last_channel {
            parts.push(format!("last_channel={lc}"));
        }
        if let Some(c) = &meta.created_at {
            parts.push(format!("created_at={c}"));
        }
        if let Some(u) = &meta.updated_at {
            parts.push(format!("updated_at={u}"));
        }
        let mut native = meta.extra.clone();
        for (k, v) in [
            ("created_at", &meta.created_at),
            ("updated_at", &meta.updated_at),
        ] {
            if let Some(v) = v {
                native.insert(k.into(), Value::String(v.clone()));
            }
        }
        if !meta.metadata.is_empty() {
            native.insert("metadata".into(), Value::Object(meta.metadata.clone()));
        }
        let mut push = |text: String, meta_row: bool, native: Option<Map<String, Value>>| {
            let sub = rows.len() as i32;
            rows.push(EventRow {
                ts_local: ts,
                text: Some(text),
                source_line: line,
                x_group: Group::Session,
                x_sub: sub,
                x_meta: meta_row,
                x_start: sub == 0,
                native,
                ..self.base()
            });
        };
        push(
            format!("session start: {}", parts.join(" ")),
            false,
            non_empty(&native),
        );
        if let (Some(p), false) = (&self.preset, self.has_switch) {
            push(format!("model: {p} (preset)"), true, None);
        }
        if let Some(k) = key {
            let (channel, chat) = split_key(k);
            if is_messaging(channel) {
                push(
                    format!(
                        "session relayed: {channel} chat {} (from session key)",
                        chat.unwrap_or("")
                    ),
                    true,
                    None,
                );
            }
            if let Some(lc) = last_channel {
                let (lch, lchat) = split_key(lc);
                if lc != k && is_messaging(lch) {
                    push(
                        format!(
                            "session relayed: {lch} chat {} (from metadata.last_channel)",
                            lchat.unwrap_or("")
                        ),
                        true,
                        None,
                    );
                }
            }
        }
        if let Some(scope) = meta
            .metadata
            .get("workspace_scope")
            .and_then(Value::as_object)
        {
            let mode = scope
                .get("access_mode")
                .and_then(Value::as_str)
                .unwrap_or("");
            let project = scope
                .get("project_path")
                .and_then(Value::as_str)
                .unwrap_or("");
            push(
                format!(
                    "permission mode: access_mode={mode} project={project} (from session metadata workspace_scope)"
                ),
                true,
                None,
            );
        }
        rows
    }

    /// Map one decoded record. `seq` is its position, `line` its source line.
    /// Returns `Err(reason)` when the value is not a message object.
    pub fn map(&mut self, value: &Value, seq: i64, line: i64) -> Result<Vec<EventRow>, String> {
        let Value::Object(rec) = value else {
            return Err(format!(
                "expected a JSON object, found {}",
                json_kind(value)
            ));
        };
        let record_key = record_hash(value, self.keys);
        let ts = rec
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(parse_naive);
        let role = rec.get("role").and_then(Value::as_str).unwrap_or("");
        let text = content_text(rec.get("content"));
        let mut native = Map::new();
        for (k, v) in rec {
            let mapped = MAPPED_KEYS.contains(&k.as_str())
                || (k == "thinking_blocks" && role == "assistant" && v.is_array());
            if !mapped {
                native.insert(k.clone(), v.clone());
            }
        }
        if !matches!(role, "user" | "assistant" | "tool") {
            native.insert(
                "role".into(),
                rec.get("role").cloned().unwrap_or(Value::Null),
            );
        }
        if let Some(Value::Array(blocks)) = rec.get("content") {
            let other = blocks
                .iter()
                .filter(|b| {
                    b.get("type")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t != "text")
                })
                .count();
            if other > 0 {
                native.insert("non_text_blocks".into(), json!(other));
            }
        }
        let base = EventRow {
            seq: Some(seq),
            ts_local: ts,
            source_line: Some(line),
            x_group: Group::Record,
            x_record: Some(record_key),
            x_msgkey: rec
                .get("timestamp")
                .and_then(Value::as_str)
                .map(|t| format!("{role}\t{t}")),
            ..self.base()
        };
        let mut rows = Vec::new();
        match role {
            "user" => {
                let hidden = is_hidden_history(rec);
                let automation = rec.contains_key("_automation_turn")
                    || rec.get("_cron_turn").and_then(Value::as_bool) == Some(true);
                let typed = text.as_deref().map(|t| strip_runtime_context(t, rec));
                if rec.get("_command").and_then(Value::as_bool) == Some(true)
                    && let Some(name) = text
                        .as_deref()
                        .and_then(|t| t.trim().strip_prefix("/model "))
                {
                    self.requested = Some(name.trim().to_string());
                }
                rows.push(EventRow {
                    turn_type: if hidden {
                        TurnType::System
                    } else {
                        TurnType::User
                    },
                    text,
                    x_match: typed,
                    // a subagent's result injected into the running turn
                    // (agent/loop.py): hidden, it continues that turn
                    x_call_source: if !hidden {
                        Some(if automation { "cron" } else { "user" }.to_string())
                    } else if rec.get("injected_event").and_then(Value::as_str)
                        == Some("subagent_result")
                    {
                        Some("continue".to_string())
                    } else {
                        None
                    },
                    native: non_empty(&native),
                    ..base.clone()
                });
            }
            "assistant" => {
                rows.extend(thinking_rows(rec, &base));
                for call in rec
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let f = call.get("function");
                    let args = f
                        .and_then(|f| f.get("arguments"))
                        .cloned()
                        .unwrap_or(Value::Null);
                    let mut n = Map::new();
                    n.insert("arguments".into(), args.clone());
                    for k in ["type", "extra_content", "provider_specific_fields"] {
                        if let Some(v) = call.get(k) {
                            n.insert(k.into(), v.clone());
                        }
                    }
                    rows.push(EventRow {
                        turn_type: TurnType::ToolUse,
                        tool_name: f
                            .and_then(|f| f.get("name"))
                            .and_then(Value::as_str)
                            .map(String::from),
                        tool_use_id: call.get("id").and_then(Value::as_str).map(String::from),
                        text: Some(tool_call_text(&args)),
                        native: non_empty(&n),
                        ..base.clone()
                    });
                }
                let has_text = text.as_deref().is_some_and(|t| !t.is_empty());
                if has_text || rows.is_empty() {
                    rows.push(EventRow {
                        turn_type: TurnType::Assistant,
                        x_match_text: true,
                        text,
                        native: non_empty(&native),
                        // a subagent's result nanobot injected: it starts a
                        // hidden turn whose calls are `system` calls
                        x_call_source: rec
                            .contains_key("injected_event")
                            .then(|| "system".to_string()),
                        ..base.clone()
                    });
                } else if let (Some(last), false) = (rows.last_mut(), native.is_empty()) {
                    // No assistant row (tool calls only): the message's own
                    // native facts ride on its last row.
                    last.native
                        .get_or_insert_default()
                        .insert("message".into(), Value::Object(native.clone()));
                }
                if let Some(row) = self.switch_row(rec, &base) {
                    rows.push(row);
                }
            }
            "tool" => rows.push(EventRow {
                turn_type: TurnType::ToolResult,
                tool_name: rec.get("name").and_then(Value::as_str).map(String::from),
                tool_use_id: rec
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .map(String::from),
                // a tool result's text is no dedup key (it pairs on its
                // call id: StoreOutput::push)
                text,
                native: non_empty(&native),
                ..base.clone()
            }),
            _ => rows.push(EventRow {
                turn_type: TurnType::System,
                text: text.or_else(|| Some(value.to_string())),
                native: non_empty(&native),
                ..base.clone()
            }),
        }
        for (i, r) in rows.iter_mut().enumerate() {
            r.x_sub = i as i32;
        }
        Ok(rows)
    }

    /// After a `/model` reply `Switched model preset to `<new>`.`: the switch row.
    fn switch_row(&mut self, rec: &Map<String, Value>, base: &EventRow) -> Option<EventRow> {
        if rec.get("_command").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        let content = rec.get("content").and_then(Value::as_str)?;
        let new = content
            .strip_prefix(SWITCH_PREFIX)?
            .split('`')
            .next()?
            .to_string();
        let resolved = content
            .lines()
            .find_map(|l| l.trim().strip_prefix("- Model: `"))
            .and_then(|r| r.split('`').next())
            .map(String::from);
        let mut text = match &self.current_model {
            Some(old) => format!("model: {old} -> {new} (preset)"),
            None => format!("model: {new} (preset)"),
        };
        if let Some(r) = self.requested.take() {
            text.push_str(&format!(" requested={r}"));
        }
        if let Some(r) = resolved {
            text.push_str(&format!(" resolved={r}"));
        }
        self.current_model = Some(new.clone());
        Some(EventRow {
            turn_type: TurnType::System,
            text: Some(text),
            model: Some(new),
            tool_name: None,
            native: None,
            ..base.clone()
        })
    }
}

/// nanobot's hidden-history marker (`session/history_visibility.py`):
/// The `thinking` rows of an assistant message. nanobot keeps a model's
/// reasoning in two keys (utils/helpers.py `build_assistant_message`):
/// `reasoning_content`, a text, and `thinking_blocks`, the provider's blocks
/// (Anthropic: `{"type": "thinking", "thinking", "signature"}`, with
/// `reasoning_content` empty; Bedrock also `{"type": "redacted_thinking",
/// "redactedContentBase64"|"redactedContent"}`, with `reasoning_content`
/// joining the blocks' texts). Each block is one row: its text, and its
/// other keys in `native` (the signature is opaque provider data, but it is
/// the agent's record, and what a replay of the block needs); a block that
/// is not an object is kept whole as `native.block`. `reasoning_content` is
/// a row of its own, first (nanobot shows it before the blocks:
/// `extract_reasoning`), only when it holds text the blocks do not: it is
/// not the blocks' texts joined with `""` (Bedrock) or `"\n\n"` (nanobot's
/// own join), so the same reasoning is never two rows. The WebUI keeps a
/// model call's reasoning as one text, the blocks' texts joined with `""`
/// (the Anthropic stream's thinking deltas, Bedrock's `reasoning_content`):
/// with two or more blocks, that joined text is each block row's dedup key
/// (`x_match`), so the transcript's copy pairs with them (V008).
fn thinking_rows(rec: &Map<String, Value>, base: &EventRow) -> Vec<EventRow> {
    let blocks: &[Value] = rec
        .get("thinking_blocks")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| b.get("thinking").and_then(Value::as_str))
        .collect();
    let mut rows = Vec::new();
    if let Some(r) = rec
        .get("reasoning_content")
        .and_then(Value::as_str)
        .filter(|r| !r.is_empty())
        && (texts.is_empty() || (*r != texts.concat() && *r != texts.join("\n\n")))
    {
        rows.push(EventRow {
            turn_type: TurnType::Thinking,
            text: Some(r.to_string()),
            x_match_text: true,
            ..base.clone()
        });
    }
    let joined = (texts.len() > 1).then(|| texts.concat());
    for block in blocks {
        let (text, native) = match block {
            Value::Object(b) => {
                let text = b.get("thinking").and_then(Value::as_str).map(String::from);
                let mut n = b.clone();
                if text.is_some() {
                    n.remove("thinking");
                }
                (text, n)
            }
            other => {
                let mut n = Map::new();
                n.insert("block".into(), other.clone());
                (None, n)
            }
        };
        let x_match = joined.clone().filter(|_| text.is_some());
        rows.push(EventRow {
            turn_type: TurnType::Thinking,
            x_match_text: x_match.is_none(),
            x_match,
            text,
            native: non_empty(&native),
            ..base.clone()
        });
    }
    rows
}

/// `_hidden_history` is `true` (a summary checkpoint) or an object (a
/// subagent result injected into the turn, `{"kind": "subagent_result"}`).
/// Such a message is not a chat turn: it maps to a `system` row and starts
/// no turn.
pub fn is_hidden_history(rec: &Map<String, Value>) -> bool {
    matches!(
        rec.get("_hidden_history"),
        Some(Value::Bool(true)) | Some(Value::Object(_))
    )
}

/// Whether a decoded record is a `/model` switch reply (for the pre-scan that
/// decides `has_switch`).
pub fn is_switch_reply(v: &Value) -> bool {
    v.get("role").and_then(Value::as_str) == Some("assistant")
        && v.get("_command").and_then(Value::as_bool) == Some(true)
        && v.get("content")
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with(SWITCH_PREFIX))
}

pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
