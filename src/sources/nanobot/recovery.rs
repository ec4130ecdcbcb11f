//! What an interrupted turn leaves besides a session's saved messages, in
//! either era: the `runtime_checkpoint` (the turn's in-flight assistant
//! message and completed tool results; 0.3.5 keeps it in the session
//! metadata, the database era in its `checkpoints` table) and the
//! `pending_user_followups` (user messages queued while the turn ran; the
//! database era's `pending_inputs`). nanobot loses both when the turn never
//! completes. The stores read them; [`recovered`] (pure) decides which
//! messages are not saved yet and how they are marked, [`push_recovered`]
//! maps them after the saved ones.
//!
//! ```text
//! runtime_checkpoint {phase, iteration, model, assistant_message{role, content, tool_calls},
//!                     completed_tool_results[{role: tool, tool_call_id, name, content}], …}
//!   → the assistant message, then each tool result, unless every tool call
//!     id it names is in a saved message (restored since)
//!   mark {from: checkpoint, phase, iteration, model}
//! pending_user_followups [{id, sender_id, chat_id, content, media, metadata}]
//!   → a user message, unless a saved user message has the same text (nanobot
//!     keeps no id on the saved message to match by)
//!   mark {from: pending_input, kind, position, id, channel_chat, state}
//! ```

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::record::SessionMapper;
use crate::store::{StoreError, StoreOutput};

/// What a session's saved messages hold, for the recovered ones to skip.
#[derive(Debug, Default)]
pub struct Saved {
    /// The last saved message's sequence number (`-1`: none).
    pub last: i64,
    /// The `content` of every saved user message.
    user_texts: HashSet<String>,
    /// Every tool call id a saved message names.
    call_ids: HashSet<String>,
}

impl Saved {
    pub fn new() -> Self {
        Saved {
            last: -1,
            ..Saved::default()
        }
    }

    /// Note one saved message record at sequence number `seq`.
    pub fn note(&mut self, rec: &Value, seq: i64) {
        self.last = self.last.max(seq);
        if rec.get("role").and_then(Value::as_str) == Some("user")
            && let Some(Value::String(t)) = rec.get("content")
        {
            self.user_texts.insert(t.clone());
        }
        if let Some(Value::String(id)) = rec.get("tool_call_id") {
            self.call_ids.insert(id.clone());
        }
        for call in rec
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(Value::String(id)) = call.get("id") {
                self.call_ids.insert(id.clone());
            }
        }
    }
}

/// One queued input: (kind, position, record).
pub type Pending = (String, Option<i64>, Value);

/// The messages to recover, in order, each with its `native.recovered` mark.
pub fn recovered(
    checkpoint: Option<&Value>,
    pending: &[Pending],
    saved: &Saved,
) -> Vec<(Value, Value)> {
    let mut out = Vec::new();
    if let Some(cp) = checkpoint.filter(|c| c.is_object()) {
        let mut mark = Map::new();
        mark.insert("from".into(), json!("checkpoint"));
        for k in ["phase", "iteration", "model"] {
            if let Some(v) = cp.get(k) {
                mark.insert(k.into(), v.clone());
            }
        }
        let mark = Value::Object(mark);
        let records = cp
            .get("assistant_message")
            .filter(|v| v.is_object())
            .into_iter()
            .chain(
                cp.get("completed_tool_results")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten(),
            );
        for rec in records {
            let ids: Vec<&str> = rec
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| c.get("id").and_then(Value::as_str))
                .chain(rec.get("tool_call_id").and_then(Value::as_str))
                .collect();
            if !ids.is_empty() && ids.iter().all(|id| saved.call_ids.contains(*id)) {
                continue;
            }
            out.push((rec.clone(), mark.clone()));
        }
    }
    for (kind, position, input) in pending {
        let Some(text) = input.get("content").and_then(Value::as_str) else {
            continue;
        };
        if saved.user_texts.contains(text) {
            continue;
        }
        out.push((
            json!({"role": "user", "content": text}),
            json!({
                "from": "pending_input", "kind": kind, "position": position,
                "id": input.get("id"), "channel_chat": input.get("chat_id"),
                "state": "queued while a turn ran; never saved as a message",
            }),
        ));
    }
    out
}

/// Push recovered messages after position `last`, each marked `native.recovered`.
pub fn push_recovered(
    out: &mut StoreOutput<'_>,
    mapper: &mut SessionMapper,
    records: Vec<(Value, Value)>,
    last: i64,
    line: i64,
) -> Result<(), StoreError> {
    for (i, (rec, mark)) in records.into_iter().enumerate() {
        for mut row in mapper
            .map(&rec, last + 1 + i as i64, line)
            .unwrap_or_default()
        {
            row.native
                .get_or_insert_with(Map::new)
                .insert("recovered".into(), mark.clone());
            out.push(row)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_and_queued_inputs_not_saved_since_are_recovered() {
        let cp = json!({"phase": "tools_completed", "iteration": 1, "model": "m",
            "assistant_message": {"role": "assistant", "content": "reading", "tool_calls": [{"id": "c1"}]},
            "completed_tool_results": [{"role": "tool", "tool_call_id": "c1", "content": "ok"}]});
        let pending: Vec<Pending> = vec![
            (
                "pending_user_followups".into(),
                Some(0),
                json!({"id": "p0", "content": "also this"}),
            ),
            (
                "pending_user_followups".into(),
                Some(1),
                json!({"id": "p1", "content": "said again"}),
            ),
        ];
        let mut saved = Saved::new();
        saved.note(&json!({"role": "user", "content": "said again"}), 4);
        let got = recovered(Some(&cp), &pending, &saved);
        let roles: Vec<(&str, &str)> = got
            .iter()
            .map(|(r, m)| {
                (
                    r["role"].as_str().unwrap_or(""),
                    m["from"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            roles,
            [
                ("assistant", "checkpoint"),
                ("tool", "checkpoint"),
                ("user", "pending_input")
            ]
        );
        assert_eq!(saved.last, 4);
        // restored since: the saved messages name the call
        saved.note(
            &json!({"role": "assistant", "tool_calls": [{"id": "c1"}]}),
            5,
        );
        saved.note(&json!({"role": "tool", "tool_call_id": "c1"}), 6);
        assert_eq!(recovered(Some(&cp), &[], &saved).len(), 0);
    }
}
