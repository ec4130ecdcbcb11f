//! `nanoclaw.outbound`: a session's container-written `outbound.db` (DELETE journal).
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/<session_id>/outbound.db
//!   messages_out(id, seq odd, in_reply_to, timestamp UTC, deliver_after, recurrence, kind,
//!                platform_id, channel_type, thread_id, content JSON)
//!                                          → `assistant` rows ordered by (seq, id), group Outbound
//!   processing_ack(message_id, status, status_changed)   ┐
//!   session_state(key, value, updated_at)                 ├ `nanoclaw <table>: <key>` state rows
//!   container_state(id = 1, current_tool, …)              ┘
//! ```
//! `session_state` `continuation:<provider>` names the backing provider
//! session (`native.continuation` = `{provider, id}`). Whether its
//! transcript is there (`claude`: `<agent_group>/.claude-shared/projects/*/<id>.jsonl[.rotated-*]`,
//! `codex`: `<agent_group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl`,
//! `opencode`: `<session>/opencode-xdg/opencode/opencode.db`) is another
//! store's fact: the steps declare it lost when no such store was found
//! (sql/V013__nanoclaw_losses.sql `transcript_missing`), and the session
//! without `inbound.db` (`inbound_missing`).

use serde_json::{Map, Value, json};

use super::SessionDb;
use super::content::{SecretRules, message_native};
use crate::schema::{Group, TurnType};
use crate::store::{StoreError, StoreOutput};

/// Native facts of one messages_out row (no I/O).
pub fn outbound_native(
    rec: &Map<String, Value>,
    agent_group: &str,
    rules: &SecretRules,
) -> (Option<String>, Map<String, Value>) {
    let (m, mut n) = message_native(
        rec,
        "messages_out",
        agent_group,
        &[
            "id",
            "kind",
            "in_reply_to",
            "platform_id",
            "channel_type",
            "thread_id",
            "deliver_after",
            "recurrence",
        ],
        rules,
    );
    let kind = rec.get("kind").and_then(Value::as_str).unwrap_or_default();
    if kind == "task_log" {
        n.insert("harness_injection".into(), json!(true));
    }
    n.insert("content".into(), m.content);
    (m.text, n)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let db = SessionDb::open(out)?;
    db.push_messages(
        out,
        "messages_out",
        TurnType::Assistant,
        Group::Outbound,
        outbound_native,
    )?;
    db.push_state(
        out,
        &["processing_ack", "session_state", "container_state"],
        |r, native| {
            let key = r
                .record
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let (Some(provider), Some(id)) = (
                key.strip_prefix("continuation:"),
                r.record.get("value").and_then(Value::as_str),
            ) else {
                return;
            };
            native.insert(
                "continuation".into(),
                json!({"provider": provider, "id": id}),
            );
        },
    )
}
