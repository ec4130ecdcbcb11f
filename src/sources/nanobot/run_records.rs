//! What `nanobot.cron_run` and `nanobot.trigger_run` share: audit records of
//! scheduled and triggered runs (secondary, true UTC), one JSON file each.
//!
//! ```text
//! .nanobot*/**/cron/runs/<safe run id>.json      pretty JSON, rewritten at each status
//!   {job_id, job_name, session_key, prompt_ref{…}, prompt_vars{message}, rendered_prompt,
//!    status, response?|error?, run_id "<job>:<start ms>:<8hex>", updated_at_ms}
//!   → user   "Scheduled cron job triggered: <job_name>\n\n<message>" (else rendered_prompt) at the start in run_id
//!     assistant <response>                                                   at updated_at_ms
//!     system "cron run: job <job_name> (<job_id>) run <run_id> status=<s>[ error=<e>]" at updated_at_ms
//! .nanobot*/**/triggers/runs/<delivery id>.json
//!   {kind:"local_trigger", trigger_id, delivery_id, content, created_at_ms, attempts, trigger_name?,
//!    session_key?, status, error?, response?, run_id, updated_at_ms}
//!   → user   "Local trigger received: <trigger_name or trigger_id>\n\n<content>" at created_at_ms
//!     assistant <response>, system "trigger run: trigger <name> (<id>) delivery <d> status=<s> attempts=<n>[ error=<e>]"
//! ```
//! The user row carries the text the session stores for the turn, so it
//! pairs with the session's copy. project_path: the workspace's `.workspace`.

use std::path::Path;

use serde_json::{Map, Value};

use super::workspace;
use crate::diag::DiagKind;
use crate::jsonl::decode_text;
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::str_field;
use crate::store::{StoreError, StoreOutput};
use crate::time::from_epoch_ms;

/// The workspace of `<workspace>/{cron,triggers}/runs/x.json`.
fn workspace_of(rel: &str, home: &Path) -> workspace::WorkspaceIdentity {
    let parts: Vec<&str> = rel.split('/').collect();
    let n = parts.len();
    if n < 4 {
        return workspace::WorkspaceIdentity::default();
    }
    workspace::identity(home, parts[0], &parts[..n - 3].join("/"))
}

/// ` error=<error>` when the record carries a non-null error, else "".
pub fn error_suffix(o: &Map<String, Value>) -> String {
    match o.get("error").filter(|e| !e.is_null()) {
        Some(Value::String(e)) => format!(" error={e}"),
        Some(e) => format!(" error={e}"),
        None => String::new(),
    }
}

pub fn num(o: &Map<String, Value>, k: &str) -> Option<i64> {
    o.get(k)
        .and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
}

pub fn rows(
    o: &Map<String, Value>,
    prompt: String,
    started_ms: Option<i64>,
    status: String,
) -> Vec<EventRow> {
    let updated = num(o, "updated_at_ms").and_then(from_epoch_ms);
    let base = EventRow {
        session_id: str_field(o, "session_key").map(String::from),
        source_line: Some(1),
        x_group: Group::Record,
        ..Default::default()
    };
    let mut native = o.clone();
    for k in ["response", "content", "rendered_prompt"] {
        native.remove(k);
    }
    let mut out = vec![EventRow {
        turn_type: TurnType::User,
        ts_utc: started_ms.and_then(from_epoch_ms),
        x_match_text: true,
        text: Some(prompt),
        x_call_source: Some("cron".into()),
        x_sub: 0,
        ..base.clone()
    }];
    if let Some(r) = str_field(o, "response") {
        out.push(EventRow {
            turn_type: TurnType::Assistant,
            ts_utc: updated,
            x_match_text: true,
            text: Some(r.to_string()),
            x_sub: 1,
            ..base.clone()
        });
    }
    out.push(EventRow {
        turn_type: TurnType::System,
        ts_utc: updated,
        text: Some(status),
        native: Some(native),
        x_sub: 2,
        ..base
    });
    out
}

pub fn extract_with(
    out: &mut StoreOutput<'_>,
    map: fn(&Map<String, Value>) -> Vec<EventRow>,
) -> Result<(), StoreError> {
    let bytes = std::fs::read(&out.store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let ws = workspace_of(&out.store.rel, out.home);
    let project = ws.project_path.clone();
    let text = String::from_utf8_lossy(&bytes);
    let value = match decode_text(&text) {
        Ok(d) => d.value,
        Err(e) => {
            out.diag(
                DiagKind::BadRecord,
                None,
                None,
                format!("not a JSON run record: {}", e.0),
            );
            return out.push(EventRow {
                project_path: project,
                ..crate::sources::shared::bad_line_row(1, &e.0, &bytes)
            });
        }
    };
    let Some(o) = value.as_object() else {
        let reason = format!(
            "expected a JSON object, found {}",
            super::record::json_kind(&value)
        );
        out.diag(DiagKind::BadRecord, None, None, reason.clone());
        return out.push(EventRow {
            project_path: project,
            ..crate::sources::shared::bad_line_row(1, &reason, &bytes)
        });
    };
    for row in map(o) {
        out.push(EventRow {
            project_path: project.clone(),
            x_namespace: ws.namespace.clone(),
            ..row
        })?;
    }
    Ok(())
}
