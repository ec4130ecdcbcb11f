//! `nanoclaw.catalog`: the central `data/v2.db` (WAL; rows may exist only in `-wal`).
//!
//! ```text
//! sessions(id, agent_group_id, messaging_group_id, thread_id, agent_provider, status,
//!          container_status, last_active, created_at)
//!   → `session start: id=<id> agent_group=<ag> thread=<thread_id> status=<status>` at
//!     created_at; native.messaging_group = {id, channel_type, platform_id} of the
//!     messaging_groups row its messaging_group_id names: a candidate, joined
//!     (` channel=… platform=…` after agent_group) only when the session's route matches (V010);
//!     native.nanoclaw_version = the install's version, put in by the steps
//!     (V022) from the upgrade marker's row: this store reads only v2.db
//! every other table (enumerated from sqlite_master: installs add module tables)
//!   known ([`KNOWN_TABLES`], by allow-list of columns)
//!   → `nanoclaw <table>: <primary key>`, native {"table","record"}, session_id when the
//!     row names one; credential columns are never selected:
//!     container_configs.mcp_servers, container_configs.env, agent_templates.bundle,
//!     pending_approvals.payload,
//!     pending_{sender,channel}_approvals.original_message, chat_sdk_locks.token;
//!     a column not in the list is not read (one `warning`);
//!     chat_sdk_kv and chat_sdk_lists (adapter state) are not read at all.
//!     delivery_attempts(message_id, session_id, attempts, last_attempt_at,
//!                       next_attempt_at, last_error) (migration 024)
//!       → `nanoclaw delivery_attempts: <message id>: <n> attempts, last …,
//!         next …, last error: …` at last_attempt_at, in the message's session.
//!   unknown → one row `nanoclaw table <t>: <n> rows, columns …`, no values.
//! ```
//! project_path = `groups/<folder>` of the session's (or row's) agent group.
//! The losses every session declares (no model rendering, no usage, …) are
//! the steps' (sql/V013__nanoclaw_losses.sql), one per session and kind.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::content::{REDACTED, SecretRules, answer_secrets};
use super::{TIME_COLUMNS, default_order, primary_key, read_table, state_row};
use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{columns, has_table};
use crate::store::{StoreError, StoreOutput};

/// The catalog tables nanoload knows, with the columns known not to hold
/// credentials: only these are read (nanoclaw's schema as its migrations
/// create it, to migration 025 of the line after 2.2.0: `host-coordination`,
/// `approvals-instance`, `container-config-speed`; and `agent-templates`,
/// `host-leadership` of the nanocoai line). Never read: `container_configs.mcp_servers`,
/// `container_configs.env` (per-group container environment: API keys),
/// `agent_templates.bundle` (a template's every file),
/// `pending_approvals.payload`, `pending_{sender,channel}_approvals.original_message`,
/// `chat_sdk_locks.token`. A column a later release adds is not read (one
/// `warning` names it); a table nanoload does not know gives one row with its
/// name, row count and column names, no values.
pub const KNOWN_TABLES: [(&str, &[&str]); 25] = [
    (
        "agent_destinations",
        &[
            "agent_group_id",
            "local_name",
            "target_type",
            "target_id",
            "created_at",
        ],
    ),
    (
        "agent_group_members",
        &["user_id", "agent_group_id", "added_by", "added_at"],
    ),
    (
        "agent_groups",
        &["id", "name", "folder", "agent_provider", "created_at"],
    ),
    (
        "agent_message_policies",
        &[
            "from_agent_group_id",
            "to_agent_group_id",
            "approver",
            "created_at",
        ],
    ),
    (
        "agent_templates",
        &["name", "digest", "source", "updated_at"],
    ),
    ("chat_sdk_locks", &["thread_id", "expires_at"]),
    ("chat_sdk_subscriptions", &["thread_id", "subscribed_at"]),
    (
        "container_configs",
        &[
            "agent_group_id",
            "provider",
            "model",
            "effort",
            "image_tag",
            "assistant_name",
            "max_messages_per_prompt",
            "skills",
            "packages_apt",
            "packages_npm",
            "additional_mounts",
            "updated_at",
            "cli_scope",
            "timezone",
            "blocked_hosts",
            "speed",
        ],
    ),
    (
        "delivery_attempts",
        &[
            "message_id",
            "session_id",
            "attempts",
            "last_attempt_at",
            "next_attempt_at",
            "last_error",
        ],
    ),
    (
        "host_instances",
        &[
            "instance_id",
            "install_id",
            "hostname",
            "pid",
            "started_at",
            "lease_expires_at",
            "stopped_at",
        ],
    ),
    (
        "host_leadership",
        &[
            "install_id",
            "leader_instance_id",
            "acquired_at",
            "lease_expires_at",
        ],
    ),
    (
        "messaging_group_agents",
        &[
            "id",
            "messaging_group_id",
            "agent_group_id",
            "session_mode",
            "priority",
            "created_at",
            "engage_mode",
            "engage_pattern",
            "sender_scope",
            "ignored_message_policy",
            "threads",
        ],
    ),
    (
        "messaging_groups",
        &[
            "id",
            "channel_type",
            "platform_id",
            "instance",
            "name",
            "is_group",
            "unknown_sender_policy",
            "created_at",
            "denied_at",
            "detached_at",
        ],
    ),
    (
        "pending_approvals",
        &[
            "approval_id",
            "session_id",
            "request_id",
            "action",
            "created_at",
            "agent_group_id",
            "channel_type",
            "platform_id",
            "platform_message_id",
            "expires_at",
            "status",
            "title",
            "options_json",
            "approver_user_id",
            "question",
            "instance",
        ],
    ),
    (
        "pending_channel_approvals",
        &[
            "messaging_group_id",
            "agent_group_id",
            "approver_user_id",
            "created_at",
            "title",
            "options_json",
            "question",
        ],
    ),
    (
        "pending_questions",
        &[
            "question_id",
            "session_id",
            "message_out_id",
            "platform_id",
            "channel_type",
            "thread_id",
            "title",
            "options_json",
            "created_at",
        ],
    ),
    (
        "pending_sender_approvals",
        &[
            "id",
            "messaging_group_id",
            "agent_group_id",
            "sender_identity",
            "sender_name",
            "approver_user_id",
            "created_at",
            "title",
            "options_json",
            "question",
        ],
    ),
    ("schema_version", &["version", "name", "applied"]),
    (
        "session_claims",
        &[
            "session_id",
            "incarnation",
            "claimed_by",
            "claimed_at",
            "container_ref",
            "stop_intent",
            "updated_at",
        ],
    ),
    (
        "sessions",
        &[
            "id",
            "agent_group_id",
            "messaging_group_id",
            "thread_id",
            "agent_provider",
            "status",
            "container_status",
            "last_active",
            "created_at",
        ],
    ),
    (
        "unregistered_senders",
        &[
            "channel_type",
            "platform_id",
            "user_id",
            "sender_name",
            "reason",
            "messaging_group_id",
            "agent_group_id",
            "message_count",
            "first_seen",
            "last_seen",
        ],
    ),
    (
        "user_dms",
        &[
            "user_id",
            "channel_type",
            "messaging_group_id",
            "resolved_at",
        ],
    ),
    (
        "user_roles",
        &[
            "user_id",
            "role",
            "agent_group_id",
            "granted_by",
            "granted_at",
        ],
    ),
    ("users", &["id", "kind", "display_name", "created_at"]),
    (
        "wake_signals",
        &[
            "id",
            "session_id",
            "reason",
            "created_at",
            "consumed_at",
            "consumed_by",
        ],
    ),
];

/// Credential columns of known tables: never read, and no warning for them.
pub const NEVER_READ: [(&str, &str); 7] = [
    ("container_configs", "mcp_servers"),
    ("container_configs", "env"),
    ("agent_templates", "bundle"),
    ("pending_approvals", "payload"),
    ("pending_sender_approvals", "original_message"),
    ("pending_channel_approvals", "original_message"),
    ("chat_sdk_locks", "token"),
];

/// Known tables never read at all (adapter key/value state).
pub const SKIPPED_TABLES: [&str; 2] = ["chat_sdk_kv", "chat_sdk_lists"];

/// The columns of `table` known not to hold credentials; `None`: an unknown table.
fn known_columns(table: &str) -> Option<&'static [&'static str]> {
    KNOWN_TABLES
        .iter()
        .find(|(t, _)| *t == table)
        .map(|(_, c)| *c)
}

/// A `delivery_attempts` row as evidence on the outbound message it
/// concerns: `nanoclaw delivery_attempts: <message id>: <n> attempt(s)[, last
/// <when>][, next <when>][, last error: <error>]` (nanoclaw keeps the row
/// while the delivery is retried and deletes it once delivered or given up).
fn delivery_text(rec: &serde_json::Map<String, Value>) -> String {
    let text = |k: &str| rec.get(k).and_then(Value::as_str);
    let n = rec.get("attempts").and_then(Value::as_i64).unwrap_or(0);
    let mut t = format!(
        "nanoclaw delivery_attempts: {}: {n} attempt{}",
        super::key_text(rec.get("message_id")),
        if n == 1 { "" } else { "s" }
    );
    for (label, key) in [("last", "last_attempt_at"), ("next", "next_attempt_at")] {
        if let Some(v) = text(key) {
            t.push_str(&format!(", {label} {v}"));
        }
    }
    if let Some(e) = text("last_error") {
        t.push_str(&format!(", last error: {e}"));
    }
    t
}

/// Redact secret-shaped option values in an `options_json` text.
pub fn redact_options_json(text: &str, rules: &SecretRules) -> String {
    let Ok(options) = crate::jsonl::parse(text) else {
        return text.to_string();
    };
    let mut secrets = Vec::new();
    answer_secrets(&json!({ "options": options }), rules, &mut secrets);
    secrets
        .iter()
        .fold(text.to_string(), |t, sec| t.replace(sec.as_str(), REDACTED))
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let snap = out.snapshot()?;
    let conn = &snap.conn;
    let rules = SecretRules::new(out.options.secret_patterns.clone());
    let err = |what: &str, e: rusqlite::Error| StoreError::Unreadable(format!("{what}: {e}"));

    let mut folders: BTreeMap<String, String> = BTreeMap::new();
    if has_table(conn, "agent_groups").map_err(|e| err("schema", e))? {
        for r in
            read_table(conn, "agent_groups", &[], "rowid").map_err(|e| err("agent_groups", e))?
        {
            if let (Some(Value::String(id)), Some(Value::String(folder))) =
                (r.record.get("id"), r.record.get("folder"))
            {
                folders.insert(id.clone(), folder.clone());
            }
        }
    }
    let mut mgs: BTreeMap<String, (Value, Value)> = BTreeMap::new();
    if has_table(conn, "messaging_groups").map_err(|e| err("schema", e))? {
        for r in read_table(conn, "messaging_groups", &[], "rowid")
            .map_err(|e| err("messaging_groups", e))?
        {
            if let Some(Value::String(id)) = r.record.get("id") {
                mgs.insert(
                    id.clone(),
                    (
                        r.record.get("channel_type").cloned().unwrap_or(Value::Null),
                        r.record.get("platform_id").cloned().unwrap_or(Value::Null),
                    ),
                );
            }
        }
    }
    let project = |ag: Option<&Value>| {
        ag.and_then(Value::as_str)
            .and_then(|a| folders.get(a))
            .map(|f| format!("groups/{f}"))
    };
    let s = |v: Option<&Value>| v.and_then(Value::as_str).map(String::from);

    if has_table(conn, "sessions").map_err(|e| err("schema", e))? {
        let order = "created_at, id";
        for r in read_table(conn, "sessions", &[], order).map_err(|e| err("sessions", e))? {
            let rec = &r.record;
            // The messaging group is only a candidate: the steps join it
            // (channel= platform= back in the text) when the session's route
            // matches (sql/V010__nanoclaw_links.sql).
            let group = rec
                .get("messaging_group_id")
                .and_then(Value::as_str)
                .and_then(|m| {
                    mgs.get(m)
                        .map(|(c, p)| json!({"id": m, "channel_type": c, "platform_id": p}))
                });
            let mut parts = vec![format!("id={}", s(rec.get("id")).unwrap_or_default())];
            for (k, v) in [
                ("agent_group", s(rec.get("agent_group_id"))),
                ("thread", s(rec.get("thread_id"))),
                ("status", s(rec.get("status"))),
            ] {
                if let Some(v) = v {
                    parts.push(format!("{k}={v}"));
                }
            }
            out.push(EventRow {
                session_id: s(rec.get("id")),
                project_path: project(rec.get("agent_group_id")),
                ts_utc: s(rec.get("created_at")).as_deref().and_then(crate::time::parse_utc),
                turn_type: TurnType::System,
                text: Some(format!("session start: {}", parts.join(" "))),
                source_line: r.rowid,
                x_group: Group::Session,
                x_start: true,
                native: Some(crate::schema::object(json!({"table": "sessions", "record": Value::Object(rec.clone()), "messaging_group": group}))),
                ..Default::default()
            })?;
        }
    }

    let mut tables: Vec<String> = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
            .map_err(|e| err("schema", e))?;
        for t in stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| err("schema", e))?
        {
            tables.push(t.map_err(|e| err("schema", e))?);
        }
    }
    for table in tables
        .iter()
        .filter(|t| *t != "sessions" && !SKIPPED_TABLES.contains(&t.as_str()))
    {
        let columns = columns(conn, table).map_err(|e| err(table, e))?;
        let Some(allowed) = known_columns(table) else {
            // a table a module or a later release added: it may hold tokens
            let n: i64 = conn
                .query_row(
                    &format!("SELECT count(*) FROM {}", super::quote(table)),
                    [],
                    |r| r.get(0),
                )
                .map_err(|e| err(table, e))?;
            out.push(EventRow {
                turn_type: TurnType::System,
                text: Some(format!(
                    "nanoclaw table {table}: {n} rows, columns {} (values not read: a table nanoload does not know may hold credentials)",
                    columns.join(", ")
                )),
                x_group: Group::State,
                x_id: Some(format!("{table}/*")),
                native: Some(crate::schema::object(json!({"table": table, "rows": n, "columns": columns, "unknown_table": true}))),
                ..Default::default()
            })?;
            continue;
        };
        // not read: every column off the list; warned of: those not known as credentials
        let skip: Vec<&str> = columns
            .iter()
            .map(String::as_str)
            .filter(|c| !allowed.contains(c))
            .collect();
        let unknown: Vec<&str> = skip
            .iter()
            .copied()
            .filter(|c| !NEVER_READ.contains(&(table.as_str(), *c)))
            .collect();
        if !unknown.is_empty() {
            out.diag(
                DiagKind::Warning,
                None,
                None,
                format!(
                    "table {table}: column(s) {} not read (not known to be free of credentials)",
                    unknown.join(", ")
                ),
            );
        }
        let pk = primary_key(conn, table).map_err(|e| err(table, e))?;
        let order = default_order(conn, table);
        let rows = match read_table(conn, table, &skip, &order) {
            Ok(r) => r,
            Err(e) => {
                out.diag(
                    DiagKind::Unreadable,
                    None,
                    None,
                    format!("table {table}: {e}"),
                );
                continue;
            }
        };
        for mut row in rows {
            if let Some(Value::String(o)) = row.record.get_mut("options_json") {
                *o = redact_options_json(o, &rules);
            }
            // an approval card's question shows the request: its URLs keep
            // only their origin (docs/design.md "Secrets")
            if table.starts_with("pending_")
                && let Some(Value::String(q)) = row.record.get_mut("question")
                && let Some(r) = super::content::redact_urls(q)
            {
                *q = r;
            }
            let session = s(row.record.get("session_id"));
            let ag = if table == "agent_groups" {
                row.record.get("id")
            } else {
                row.record.get("agent_group_id")
            };
            let project = project(ag);
            let mut event = state_row(table, &pk, &row, &TIME_COLUMNS);
            if table == "delivery_attempts" {
                event.text = Some(delivery_text(&row.record));
            }
            out.push(EventRow {
                session_id: session,
                project_path: project,
                ..event
            })?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_json_secret_values_are_redacted() {
        let r = SecretRules::default();
        assert_eq!(
            redact_options_json(
                r#"[{"label":"New","value":"ghp_x"},{"label":"No","value":"no"}]"#,
                &r
            ),
            r#"[{"label":"New","value":"[redacted]"},{"label":"No","value":"no"}]"#
        );
        assert_eq!(redact_options_json("[]", &r), "[]");
    }
}
