//! `nanobot.subagent_records`: the subagent tasks a session spawned, as
//! nanobot's `SubagentRecords` keeps them beside the session file.
//!
//! ```text
//! .nanobot*/sessions/<workspace-id>/<urlsafe-b64 key>.subagents.json     the store of record
//! .nanobot*/<workspace>/sessions/<urlsafe-b64 key>.subagents.json        restore_sessions_to_workspace()'s
//!                                                                        copy: read only when the
//!                                                                        namespace holds no such file
//!   {"version": 1, "tasks": [{task_id, label, task_description, phase, owner (the parent
//!    session key), state, result, partial, iteration, usage{input_tokens, output_tokens,
//!    total_tokens, cache_read_tokens, cache_write_tokens, …, request_count}, stop_reason,
//!    error, origin_message_id, origin_turn_id, created_at, completed_at (epoch s, UTC),
//!    elapsed_seconds}]}
//!   each task → system `subagent task <id> spawned: <label> — <description>` at created_at
//!             → system `subagent task <id> <state>[ (partial)][ (<stop_reason>)]: <result | error>`
//!               at completed_at, once the task has ended
//!   native.subagent_task: the task's fields (tool_events and receipts left out)
//!   usage → one llm_calls row per task (source `subagent`), only when the
//!   instance has no `llm_usage.sqlite3`: nanobot's usage store records every
//!   call the process makes, its subagents' included, so where it exists the
//!   task's usage is already there (nothing in it names a subagent).
//! ```
//! The rows belong to the parent session (`owner`, else the key the file
//! name encodes) in the file's namespace: the same session_uid as its messages.

use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use super::workspace;
use crate::schema::{EventRow, LlmCallRow, Role, TurnType};
use crate::store::{StoreError, StoreOutput};

const SUFFIX: &str = ".subagents.json";

/// The session key a file name encodes (`<urlsafe-b64 key>.subagents.json`).
pub fn key_of(rel: &str) -> Option<String> {
    let name = rel.rsplit('/').next()?;
    let stem = name.strip_suffix(SUFFIX)?;
    let bytes = URL_SAFE_NO_PAD.decode(stem.trim_end_matches('=')).ok()?;
    String::from_utf8(bytes).ok()
}

/// Where a file lives: (instance, namespace id, the namespace's copy of it
/// when the file is a workspace's copy).
fn place(rel: &str, home: &Path) -> (String, Option<String>, Option<String>) {
    let parts: Vec<&str> = rel.split('/').collect();
    let inst = parts.first().copied().unwrap_or_default().to_string();
    match parts.as_slice() {
        [_, "sessions", ns, _] => (inst, Some((*ns).to_string()), None),
        [_, ws, "sessions", name] => {
            let id = workspace::workspace_id(&home.join(&inst).join(ws));
            let primary = id.as_ref().map(|id| format!("{inst}/sessions/{id}/{name}"));
            (inst, id, primary)
        }
        _ => (inst, None, None),
    }
}

/// The role of a file: the namespace's is primary, a workspace's copy secondary.
pub fn role(rel: &str, _home: &Path, _all: &std::collections::BTreeSet<String>) -> Role {
    if rel.split('/').nth(1) == Some("sessions") {
        Role::Primary
    } else {
        Role::Secondary
    }
}

/// The files besides its own a record file's rows depend on: what
/// [`workspace::governing_files`] lists, the namespace's copy of a
/// workspace file, and the instance's usage store (whether it exists).
pub fn reads(rel: &str, home: &Path) -> Vec<String> {
    let mut files = workspace::governing_files(rel, home);
    let (inst, _, primary) = place(rel, home);
    files.extend(primary);
    files.push(format!("{inst}/llm_usage.sqlite3"));
    files.sort();
    files.dedup();
    files
}

fn epoch_us(v: Option<&Value>) -> Option<i64> {
    v.and_then(Value::as_f64)
        .and_then(crate::time::from_epoch_secs_f64)
}

/// The states a task ends in (nanobot's `SubagentStatus.state`).
const ENDED: [&str; 5] = ["done", "incomplete", "error", "cancelled", "interrupted"];

/// The rows of one task (no I/O).
pub fn task_rows(task: &Map<String, Value>) -> Vec<EventRow> {
    let s = |k: &str| task.get(k).and_then(Value::as_str).unwrap_or("");
    let mut facts = task.clone();
    facts.remove("tool_events");
    facts.remove("receipts");
    let native: Map<String, Value> = [("subagent_task".to_string(), Value::Object(facts))]
        .into_iter()
        .collect();
    let mut rows = vec![EventRow {
        turn_type: TurnType::System,
        text: Some(format!(
            "subagent task {} spawned: {} — {}",
            s("task_id"),
            s("label"),
            s("task_description")
        )),
        ts_utc: epoch_us(task.get("created_at")),
        native: Some(native.clone()),
        ..Default::default()
    }];
    let state = s("state");
    if ENDED.contains(&state) {
        let mut text = format!("subagent task {} {state}", s("task_id"));
        if task.get("partial").and_then(Value::as_bool) == Some(true) {
            text.push_str(" (partial)");
        }
        if !s("stop_reason").is_empty() {
            text.push_str(&format!(" ({})", s("stop_reason")));
        }
        let outcome = [s("result"), s("error")]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
            .join(" — ");
        if !outcome.is_empty() {
            text.push_str(&format!(": {outcome}"));
        }
        rows.push(EventRow {
            turn_type: TurnType::System,
            text: Some(text),
            ts_utc: epoch_us(task.get("completed_at")).or(rows[0].ts_utc),
            x_sub: 1,
            native: Some(native),
            ..Default::default()
        });
    }
    rows
}

/// A task's usage as an `llm_calls` row (source `subagent`), when it has one.
pub fn task_call(
    task: &Map<String, Value>,
    instance: &str,
    source_path: &str,
    id: i64,
) -> Option<LlmCallRow> {
    let u = task.get("usage").filter(|u| u.is_object())?;
    let n = |k: &str| u.get(k).and_then(Value::as_i64);
    let started = epoch_us(task.get("created_at"))? / 1000;
    let mut ints = [None; 12];
    for (slot, k) in ints.iter_mut().zip(crate::schema::LLM_INT_COLUMNS) {
        *slot = n(k);
    }
    Some(LlmCallRow {
        instance: instance.to_string(),
        source_path: source_path.to_string(),
        id,
        started_at_ms: started,
        duration_ms: task
            .get("elapsed_seconds")
            .and_then(Value::as_f64)
            .map(|s| (s * 1000.0).round() as i64),
        provider: None,
        model: None,
        source: Some("subagent".into()),
        stream: None,
        finish_reason: task.get("state").and_then(Value::as_str).map(String::from),
        ints,
        error_kind: None,
        call_id: None,
    })
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let home = out.home.to_path_buf();
    let (inst, namespace, primary) = place(&store.rel, &home);
    // a workspace's copy of a file its namespace still holds: read there
    if primary.as_ref().is_some_and(|p| home.join(p).is_file()) {
        return Ok(());
    }
    let bytes = std::fs::read(&store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    out.read_to(bytes.len() as u64);
    let doc: Value = crate::jsonl::parse_slice(&bytes)
        .map_err(|e| StoreError::Unreadable(format!("not JSON: {e}")))?;
    let Some(tasks) = doc.get("tasks").and_then(Value::as_array) else {
        return Err(StoreError::Unreadable("no `tasks` list".into()));
    };
    let file_key = key_of(&store.rel);
    let project = namespace
        .as_ref()
        .and_then(|ns| workspace::project_path(&home.join(&inst).join("sessions").join(ns)));
    let usage_store = home.join(&inst).join("llm_usage.sqlite3").is_file();
    for (i, task) in tasks.iter().enumerate() {
        let Some(task) = task.as_object() else {
            out.diag(
                crate::diag::DiagKind::BadRecord,
                None,
                Some(i as i64 + 1),
                format!("task {}: not a JSON object", i + 1),
            );
            continue;
        };
        let owner = task
            .get("owner")
            .and_then(Value::as_str)
            .map(String::from)
            .or_else(|| file_key.clone());
        for row in task_rows(task) {
            out.push(EventRow {
                session_id: owner.clone(),
                project_path: project.clone(),
                x_namespace: namespace.clone(),
                source_line: Some(i as i64 + 1),
                seq: Some(i as i64),
                ..row
            })?;
        }
        if !usage_store && let Some(call) = task_call(task, &inst, &store.rel, i as i64 + 1) {
            out.push_llm(call)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_task_spawns_ends_and_reports_its_usage() {
        assert_eq!(
            key_of("x/sessions/ns/d2Vic29ja2V0OnAx.subagents.json").as_deref(),
            Some("websocket:p1")
        );
        let t = json!({"task_id": "cd24", "label": "ci logs", "task_description": "Scan CI",
            "state": "interrupted", "phase": "interrupted", "partial": true,
            "stop_reason": "host_restarted", "result": "Partial findings.", "tool_events": [1],
            "usage": {"input_tokens": 3100, "output_tokens": 96, "total_tokens": 3196,
                      "cache_read_tokens": null, "request_count": 1},
            "created_at": 1793711104.0, "completed_at": 1793712660.0, "elapsed_seconds": 39.0});
        let t = t.as_object().cloned().unwrap_or_default();
        let rows = task_rows(&t);
        let texts: Vec<&str> = rows.iter().filter_map(|r| r.text.as_deref()).collect();
        assert_eq!(
            texts,
            [
                "subagent task cd24 spawned: ci logs — Scan CI",
                "subagent task cd24 interrupted (partial) (host_restarted): Partial findings."
            ]
        );
        assert_eq!(
            (rows[0].ts_utc, rows[1].ts_utc),
            (Some(1_793_711_104_000_000), Some(1_793_712_660_000_000))
        );
        assert!(
            rows[0]
                .native
                .as_ref()
                .is_some_and(|n| n["subagent_task"].get("tool_events").is_none())
        );
        let call = task_call(&t, ".nanobot", "p", 1);
        assert_eq!(
            call.map(|c| (
                c.started_at_ms,
                c.duration_ms,
                c.ints[0],
                c.ints[1],
                c.ints[3],
                c.source
            )),
            Some((
                1_793_711_104_000,
                Some(39_000),
                Some(3100),
                Some(96),
                None,
                Some("subagent".into())
            ))
        );
        // a running task has not ended
        let mut running = t.clone();
        running.insert("state".into(), json!("running"));
        assert_eq!(task_rows(&running).len(), 1);
    }
}
