//! `nanoclaw.catalog`: the central `data/v2.db` (WAL; rows may exist only in `-wal`).
//!
//! ```text
//! sessions(id, agent_group_id, messaging_group_id, thread_id, agent_provider, status,
//!          container_status, last_active, created_at)
//!   → `session start: id=<id> agent_group=<ag> channel=<channel_type> platform=<platform_id>
//!      thread=<thread_id> status=<status>` at created_at (channel/platform from messaging_groups)
//! every other table (enumerated from sqlite_master: installs add module tables)
//!   → `nanoclaw <table>: <primary key>`, native {"table","record"}, session_id when the
//!     row names one; credential columns are never selected:
//!     container_configs.mcp_servers, pending_approvals.payload,
//!     pending_{sender,channel}_approvals.original_message, chat_sdk_locks.token;
//!     chat_sdk_kv and chat_sdk_lists (adapter state) are not read at all.
//! ```
//! project_path = `groups/<folder>` of the session's (or row's) agent group.
//! One `loss` diagnostic per install: nanoclaw keeps no model, tool or usage evidence.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::content::{REDACTED, SecretRules, answer_secrets};
use super::{TIME_COLUMNS, default_order, primary_key, read_table, state_row};
use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::has_table;
use crate::store::{StoreError, StoreOutput};

/// (table, columns never read)
pub const EXCLUDED: [(&str, &[&str]); 5] = [
    ("container_configs", &["mcp_servers"]),
    ("pending_approvals", &["payload"]),
    ("pending_sender_approvals", &["original_message"]),
    ("pending_channel_approvals", &["original_message"]),
    ("chat_sdk_locks", &["token"]),
];

/// Tables never read (adapter key/value state).
pub const SKIPPED_TABLES: [&str; 2] = ["chat_sdk_kv", "chat_sdk_lists"];

fn excluded(table: &str) -> &'static [&'static str] {
    EXCLUDED
        .iter()
        .find(|(t, _)| *t == table)
        .map(|(_, c)| *c)
        .unwrap_or(&[])
}

/// Redact secret-shaped option values in an `options_json` text.
pub fn redact_options_json(text: &str, rules: &SecretRules) -> String {
    let Ok(options) = serde_json::from_str::<Value>(text) else {
        return text.to_string();
    };
    let mut secrets = Vec::new();
    answer_secrets(&json!({ "options": options }), rules, &mut secrets);
    secrets
        .iter()
        .fold(text.to_string(), |t, sec| t.replace(sec.as_str(), REDACTED))
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
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
            let (channel, platform) = rec
                .get("messaging_group_id")
                .and_then(Value::as_str)
                .and_then(|m| mgs.get(m))
                .map(|(c, p)| (c.as_str().map(String::from), p.as_str().map(String::from)))
                .unwrap_or((None, None));
            let (channel_v, platform_v) = (channel.clone(), platform.clone());
            let mut parts = vec![format!("id={}", s(rec.get("id")).unwrap_or_default())];
            for (k, v) in [
                ("agent_group", s(rec.get("agent_group_id"))),
                ("channel", channel),
                ("platform", platform),
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
                native: Some(crate::schema::object(json!({"table": "sessions", "record": Value::Object(rec.clone()), "channel_type": channel_v, "platform_id": platform_v}))),
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
        let pk = primary_key(conn, table).map_err(|e| err(table, e))?;
        let order = default_order(conn, table);
        let rows = match read_table(conn, table, excluded(table), &order) {
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
            let session = s(row.record.get("session_id"));
            let ag = if table == "agent_groups" {
                row.record.get("id")
            } else {
                row.record.get("agent_group_id")
            };
            let project = project(ag);
            out.push(EventRow {
                session_id: session,
                project_path: project,
                ..state_row(table, &pk, &row, &TIME_COLUMNS)
            })?;
        }
    }
    out.push_diag(
        crate::diag::Diagnostic::new(
            DiagKind::Loss,
            store.rel.clone(),
            "nanoclaw keeps no model, tool-call or token-usage evidence in its databases (only backing provider transcripts do)",
        )
        .of(store.agent, &store.instance)
        .code("no_usage_evidence"),
    );
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
