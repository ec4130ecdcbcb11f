//! `nanoclaw.inbound`: a session's host-written `inbound.db` (DELETE journal).
//!
//! ```text
//! data/v2-sessions/<agent_group_id>/<session_id>/inbound.db
//!   messages_in(id, seq even, kind, timestamp UTC, status, process_after, recurrence, series_id,
//!               tries, trigger, platform_id, channel_type, thread_id, content JSON,
//!               source_session_id, on_wake)          → `user` rows (display role, not authorship),
//!                                                       ordered by (seq, id), group Record
//!   delivered(message_out_id, platform_message_id, status, delivered_at)
//!                                                     → merged into the outbound row by the views;
//!                                                       an orphan stays as `nanoclaw delivered: …`
//!   destinations(name, …), session_routing(id = 1, …) → `nanoclaw <table>: <key>` state rows
//! ```
//! `native` carries kind, trigger, status, reply address, series, source
//! session, the link keys (`question_id`) and the flags `agent_origin`
//! (channel_type 'agent' with a source session), `echo_copy`
//! (channel_type 'session-echo'), `harness_injection` (task) and
//! `tool_plumbing` (system). A folder without `outbound.db` is a declared
//! loss, the steps' (sql/V013__nanoclaw_losses.sql `outbound_missing`).

use serde_json::{Map, Value, json};

use super::SessionDb;
use super::content::{SecretRules, message_native};
use crate::schema::{EventRow, Group, TurnType};
use crate::store::{StoreError, StoreOutput};

/// Flags and links of one messages_in row (no I/O).
pub fn inbound_native(
    rec: &Map<String, Value>,
    agent_group: &str,
    rules: &SecretRules,
) -> (Option<String>, Map<String, Value>) {
    let (m, mut n) = message_native(
        rec,
        "messages_in",
        agent_group,
        &[
            "id",
            "kind",
            "trigger",
            "status",
            "channel_type",
            "platform_id",
            "thread_id",
            "series_id",
            "source_session_id",
            "process_after",
            "recurrence",
            "tries",
            "on_wake",
        ],
        rules,
    );
    let kind = rec.get("kind").and_then(Value::as_str).unwrap_or_default();
    let channel = rec.get("channel_type").and_then(Value::as_str);
    let source = rec.get("source_session_id").filter(|v| !v.is_null());
    n.insert(
        "agent_origin".into(),
        json!(channel == Some("agent") && source.is_some()),
    );
    if channel == Some("session-echo") {
        n.insert("echo_copy".into(), json!(true));
    }
    if kind == "task" {
        n.insert("harness_injection".into(), json!(true));
        if let Some(o) = m.content.get("originSessionId").filter(|v| !v.is_null()) {
            n.insert("origin_session_id".into(), o.clone());
        }
    }
    if let Some(p) = m.content.get("id").filter(|_| kind == "chat-sdk") {
        n.insert("platform_message_id".into(), p.clone());
    }
    n.insert("content".into(), m.content);
    (m.text, n)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let db = SessionDb::open(out)?;
    db.push_messages(
        out,
        "messages_in",
        TurnType::User,
        Group::Record,
        inbound_native,
    )?;
    if db.has("delivered")? {
        for r in db.rows("delivered", "message_out_id")? {
            let rec = &r.record;
            let id = super::key_text(rec.get("message_out_id"));
            let mut text = format!("nanoclaw delivered: {id}");
            for k in ["status", "platform_message_id"] {
                if let Some(v) = rec.get(k).filter(|v| !v.is_null()) {
                    text.push_str(&format!(" {k}={}", super::key_text(Some(v))));
                }
            }
            db.push(
                out,
                EventRow {
                ts_utc: rec.get("delivered_at").and_then(Value::as_str).and_then(crate::time::parse_utc),
                turn_type: TurnType::System,
                text: Some(text),
                source_line: r.rowid,
                x_group: Group::State,
                x_id: Some(id),
                native: Some(crate::schema::object(json!({"table": "delivered", "agent_group_id": db.agent_group, "record": Value::Object(rec.clone())}))),
                ..Default::default()
            },
            )?;
        }
    }
    db.push_state(out, &["destinations", "session_routing"], |_, _| {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::obj;

    #[test]
    fn agent_origin_needs_both_agent_channel_and_source_session() {
        let r = SecretRules::default();
        let a2a = inbound_native(&obj(r#"{"id":"a2a-1","kind":"chat","channel_type":"agent","source_session_id":"s1","content":"{\"text\":\"hi\"}"}"#), "ag", &r).1;
        assert_eq!(a2a["agent_origin"], json!(true));
        let sys = inbound_native(&obj(r#"{"id":"sys-1","kind":"chat","channel_type":"agent","source_session_id":null,"content":"{\"text\":\"x\"}"}"#), "ag", &r).1;
        assert_eq!(sys["agent_origin"], json!(false));
        let echo = inbound_native(&obj(r#"{"id":"m:echo:s","kind":"chat","channel_type":"session-echo","source_session_id":"s2","content":"{\"text\":\"x\"}"}"#), "ag", &r).1;
        assert_eq!(
            (echo["agent_origin"].clone(), echo["echo_copy"].clone()),
            (json!(false), json!(true))
        );
    }
}
