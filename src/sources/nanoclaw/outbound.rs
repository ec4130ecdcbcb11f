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
//! session (`native.continuation`); for `claude` the transcript is looked
//! for under `<agent_group>/.claude-shared/projects/*/<id>.jsonl[.rotated-*]`,
//! for `codex` under `<agent_group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl`,
//! for `opencode` at `<session>/opencode-xdg/opencode/opencode.db`,
//! and declared lost when absent.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::SessionDb;
use super::content::{SecretRules, message_native};
use crate::diag::{DiagCode, DiagKind, Diagnostic};
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

/// Where an OpenCode session's database is, below its nanoclaw session folder.
pub const OPENCODE_DB: &str = "opencode-xdg/opencode/opencode.db";

/// Whether a Claude transcript for `id` exists in the agent group's shared dir.
pub fn claude_transcript_exists(agent_group_dir: &Path, id: &str) -> bool {
    let Ok(projects) = std::fs::read_dir(agent_group_dir.join(".claude-shared/projects")) else {
        return false;
    };
    projects.filter_map(Result::ok).any(|p| {
        let dir = p.path();
        dir.join(format!("{id}.jsonl")).is_file()
            || std::fs::read_dir(&dir).ok().is_some_and(|files| {
                files.filter_map(Result::ok).any(|f| {
                    f.file_name()
                        .to_string_lossy()
                        .starts_with(&format!("{id}.jsonl.rotated-"))
                })
            })
    })
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let db = SessionDb::open(
        out,
        "inbound.db",
        DiagCode::InboundMissing,
        "the session's inbound messages and deliveries are lost",
    )?;
    db.push_messages(
        out,
        "messages_out",
        TurnType::Assistant,
        Group::Outbound,
        outbound_native,
    )?;
    let store = out.store;
    let session_dir = store
        .abs
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let ag_dir = session_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    db.push_state(
        out,
        &["processing_ack", "session_state", "container_state"],
        |out, r, native| {
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
            if (provider == "claude" && claude_transcript_exists(&ag_dir, id))
                || (provider == "codex" && super::codex_rollout::rollout_exists(&ag_dir, id))
                || (provider == "opencode" && session_dir.join(OPENCODE_DB).is_file())
            {
                return;
            }
            let where_ = match provider {
                "claude" => "no <agent group>/.claude-shared/projects/*/<id>.jsonl".to_string(),
                "codex" => {
                    "no <agent group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl".to_string()
                }
                "opencode" => format!("no <session>/{OPENCODE_DB}"),
                _ => format!("the {provider} provider's transcripts are not read"),
            };
            out.push_diag(
                Diagnostic::new(
                    DiagKind::Loss,
                    store.rel.clone(),
                    format!(
                        "backing transcript of continuation:{provider} {id} unavailable ({where_})"
                    ),
                )
                .of(store.agent, &store.instance)
                .session(&db.session)
                .code(DiagCode::TranscriptMissing),
            );
        },
    )
}
