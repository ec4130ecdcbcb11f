//! `nanobot.session_db`: the SQLite-era store of record.
//!
//! ```text
//! .nanobot*/sessions/<workspace-id>/sessions.sqlite3 [-wal -shm]   (WAL, user_version 1)
//!   sessions(key PK, created_at, updated_at, metadata JSON, provider_state, last_archived,
//!            revision, generation, title, preview, visible_updated_at)
//!   messages(session_key, position, record JSON)   PK (session_key, position)
//!   checkpoints(session_key PK, record JSON)   the in-flight state of an interrupted turn
//!                                              (`runtime_checkpoint`: phase, iteration, model,
//!                                              assistant_message, completed_tool_results)
//!   pending_inputs(session_key, kind, position, record JSON)   user messages queued while a
//!                                              turn ran (`pending_user_followups`)
//! .nanobot*/sessions/<workspace-id>/.workspace      → project_path
//! ```
//! Read from a private snapshot (snapshot.rs). One session per `sessions`
//! row in `created_at` order, then sessions that only have messages left;
//! messages by `position`; `source_line` = the row's rowid, `seq` = position.
//! A record or metadata value that does not decode is its own `parser:` row.
//! A session's checkpoint messages and queued inputs follow its saved
//! messages as rows with `native.recovered` ({from, phase, iteration, model}
//! or {from: pending_input, kind, position, id, state}), unless a saved
//! message holds them already (the same tool call ids; a user message with
//! the same text).

use rusqlite::types::ValueRef;
use serde_json::{Map, Value};

use super::record::{self, SessionMapper, SessionMeta};
use super::recovery::{self, Saved};
use super::workspace;
use crate::diag::{DiagCode, DiagKind};
use crate::jsonl::decode_text;
use crate::schema::{EventRow, Group, TurnType};
use crate::sources::shared::{has_table, no_tables, value_json};
use crate::store::{StoreError, StoreOutput};

/// Text of a column value; BLOBs decoded lossily, NULL/numbers as `None`.
fn text_of(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Integer(i) => Some(i.to_string()),
        ValueRef::Real(r) => Some(r.to_string()),
        ValueRef::Null => None,
    }
}

struct SessionRow {
    rowid: i64,
    key: String,
    created_at: Option<String>,
    updated_at: Option<String>,
    metadata: Option<String>,
    extra: Map<String, Value>,
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let snap = out.snapshot()?;
    let conn = &snap.conn;
    let sqlerr = |what: &str, e: rusqlite::Error| StoreError::Unreadable(format!("{what}: {e}"));
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| sqlerr("user_version", e))?;
    if version > 1 {
        out.diag(DiagKind::Warning, None, None, format!("user_version {version}: newer than the version 1 nanoload knows; read by column name"));
    }
    let has_sessions = has_table(conn, "sessions").map_err(|e| sqlerr("schema", e))?;
    let has_messages = has_table(conn, "messages").map_err(|e| sqlerr("schema", e))?;
    if !has_sessions && !has_messages {
        if no_tables(conn).map_err(|e| sqlerr("schema", e))? {
            // nanobot creates the file, then imports the namespace's JSONL in
            // one transaction; an aborted import (a duplicate key) leaves the
            // file without tables and the JSONL the store of record (V002)
            out.push_diag(
                crate::diag::Diagnostic::new(
                    DiagKind::Warning,
                    store.rel.as_str(),
                    "no tables: the one-time JSONL import never completed; the namespace's JSONL files stay the store of record",
                )
                .of(store.agent, &store.instance)
                .code(DiagCode::SessionDbEmpty),
            );
            return Ok(());
        }
        return Err(StoreError::Unreadable(
            "not a nanobot session database: no sessions or messages table".into(),
        ));
    }
    let namespace = store
        .abs
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let project = workspace::project_path(&namespace);
    let namespace_id = namespace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());

    let mut sessions: Vec<SessionRow> = Vec::new();
    if has_sessions {
        let mut stmt = conn
            .prepare("SELECT rowid AS nanoload_rowid, * FROM sessions ORDER BY created_at, key")
            .map_err(|e| sqlerr("sessions", e))?;
        let names: Vec<String> = stmt.column_names().map(String::from).collect();
        let mut rows = stmt.query([]).map_err(|e| sqlerr("sessions", e))?;
        while let Some(r) = rows.next().map_err(|e| sqlerr("sessions", e))? {
            let mut s = SessionRow {
                rowid: 0,
                key: String::new(),
                created_at: None,
                updated_at: None,
                metadata: None,
                extra: Map::new(),
            };
            for (i, name) in names.iter().enumerate() {
                let v = r.get_ref(i).map_err(|e| sqlerr("sessions", e))?;
                match name.as_str() {
                    "nanoload_rowid" => s.rowid = r.get(i).unwrap_or(0),
                    "key" => s.key = text_of(v).unwrap_or_default(),
                    "created_at" => s.created_at = text_of(v),
                    "updated_at" => s.updated_at = text_of(v),
                    "metadata" => s.metadata = text_of(v),
                    // opaque provider conversation state: not read
                    "provider_state" => {}
                    _ => {
                        s.extra.insert(name.clone(), value_json(v));
                    }
                }
            }
            sessions.push(s);
        }
    } else {
        out.diag(
            DiagKind::Unreadable,
            None,
            None,
            "no sessions table: messages loaded without session metadata",
        );
    }
    // Sessions whose row is gone but whose messages remain.
    let mut orphan_keys: Vec<String> = Vec::new();
    if has_messages {
        let mut stmt = conn
            .prepare("SELECT DISTINCT session_key FROM messages ORDER BY session_key")
            .map_err(|e| sqlerr("messages", e))?;
        let keys = stmt
            .query_map([], |r| r.get::<_, Option<String>>(0))
            .map_err(|e| sqlerr("messages", e))?;
        for k in keys {
            let k = k.map_err(|e| sqlerr("messages", e))?.unwrap_or_default();
            if !sessions.iter().any(|s| s.key == k) {
                orphan_keys.push(k);
            }
        }
    } else {
        out.diag(
            DiagKind::Unreadable,
            None,
            None,
            "no messages table: sessions loaded without messages",
        );
    }
    let switch_keys = if has_messages {
        switch_sessions(conn).map_err(|e| sqlerr("messages", e))?
    } else {
        Vec::new()
    };
    let out_keys = out.options.keys;
    let new_mapper = |key: &str| {
        let mut m = SessionMapper::new(project.clone());
        m.keys = out_keys;
        m.namespace.clone_from(&namespace_id);
        m.session_id = Some(key.to_string());
        m.has_switch = switch_keys.contains(&key.to_string());
        m
    };

    for s in &sessions {
        let mut mapper = new_mapper(&s.key);
        let mut meta = SessionMeta {
            key: Some(s.key.clone()),
            created_at: s.created_at.clone(),
            updated_at: s.updated_at.clone(),
            metadata: Map::new(),
            extra: s.extra.clone(),
        };
        let mut bad_meta = None;
        match s.metadata.as_deref().map(decode_text) {
            Some(Ok(d)) => match d.value {
                Value::Object(m) => meta.metadata = m,
                other => {
                    bad_meta = Some(format!(
                        "expected a JSON object, found {}",
                        record::json_kind(&other)
                    ))
                }
            },
            Some(Err(e)) => bad_meta = Some(e.0),
            None => bad_meta = Some("NULL".into()),
        }
        mapper.set_meta(&meta);
        for row in mapper.session_rows(&meta, Some(s.rowid)) {
            out.push(row)?;
        }
        if let Some(reason) = bad_meta {
            let raw = s.metadata.clone().unwrap_or_default();
            out.diag(
                DiagKind::BadRecord,
                None,
                Some(s.rowid),
                format!("session {}: unparseable metadata ({reason})", s.key),
            );
            out.push(EventRow {
                turn_type: TurnType::System,
                text: Some(format!(
                    "parser: unparseable session metadata ({reason}): {}",
                    crate::jsonl::preview(raw.as_bytes(), 200)
                )),
                ts_local: s.created_at.as_deref().and_then(crate::time::parse_naive),
                source_line: Some(s.rowid),
                x_sub: 9,
                native: Some(crate::sources::shared::raw_native(raw.as_bytes())),
                ..mapper.bare_row()
            })?;
        }
        let saved = if has_messages {
            messages(out, conn, &mut mapper, &s.key)?
        } else {
            Saved::new()
        };
        recovered(out, conn, &mut mapper, &s.key, &saved)?;
    }
    for key in orphan_keys {
        let mut mapper = new_mapper(&key);
        out.diag(
            DiagKind::Warning,
            None,
            None,
            format!(
                "messages of session {key} have no sessions row: loaded without a session start"
            ),
        );
        messages(out, conn, &mut mapper, &key)?;
    }
    Ok(())
}

/// Keys of sessions holding a `/model` switch reply.
fn switch_sessions(conn: &rusqlite::Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(
        "SELECT session_key, record FROM messages WHERE instr(CAST(record AS TEXT), ?1) > 0",
    )?;
    let mut rows = stmt.query([record::SWITCH_PREFIX])?;
    let mut keys = Vec::new();
    while let Some(r) = rows.next()? {
        let key: Option<String> = r.get(0)?;
        let rec = text_of(r.get_ref(1)?).unwrap_or_default();
        if decode_text(&rec).is_ok_and(|d| record::is_switch_reply(&d.value)) {
            keys.extend(key);
        }
    }
    Ok(keys)
}

fn messages(
    out: &mut StoreOutput<'_>,
    conn: &rusqlite::Connection,
    mapper: &mut SessionMapper,
    key: &str,
) -> Result<Saved, StoreError> {
    let mut saved = Saved::new();
    let sqlerr = |e: rusqlite::Error| StoreError::Unreadable(format!("messages of {key}: {e}"));
    let mut stmt = conn
        .prepare("SELECT rowid, position, record FROM messages WHERE session_key = ?1 ORDER BY position, rowid")
        .map_err(sqlerr)?;
    let mut rows = stmt.query([key]).map_err(sqlerr)?;
    while let Some(r) = rows.next().map_err(sqlerr)? {
        let rowid: i64 = r.get(0).map_err(sqlerr)?;
        let position: i64 = r.get::<_, Option<i64>>(1).map_err(sqlerr)?.unwrap_or(-1);
        let raw = text_of(r.get_ref(2).map_err(sqlerr)?);
        let mapped = match raw.as_deref().map(decode_text) {
            Some(Ok(d)) => {
                saved.note(&d.value, position);
                mapper.map(&d.value, position, rowid)
            }
            Some(Err(e)) => Err(e.0),
            None => Err("NULL record".into()),
        };
        match mapped {
            Ok(rows) => {
                for row in rows {
                    out.push(row)?;
                }
            }
            Err(reason) => {
                let raw = raw.unwrap_or_default();
                out.diag(
                    DiagKind::BadRecord,
                    None,
                    Some(rowid),
                    format!("session {key} position {position}: {reason}"),
                );
                out.push(EventRow {
                    turn_type: TurnType::System,
                    text: Some(format!(
                        "parser: unparseable record {position} ({reason}): {}",
                        crate::jsonl::preview(raw.as_bytes(), 200)
                    )),
                    seq: Some(position),
                    source_line: Some(rowid),
                    x_group: Group::Record,
                    native: Some(crate::sources::shared::raw_native(raw.as_bytes())),
                    ..mapper.bare_row()
                })?;
            }
        }
    }
    Ok(saved)
}

/// The messages of an interrupted turn that only the session's `checkpoints`
/// and `pending_inputs` rows still hold ([`recovery`]): rows after the saved
/// messages, marked `native.recovered`.
fn recovered(
    out: &mut StoreOutput<'_>,
    conn: &rusqlite::Connection,
    mapper: &mut SessionMapper,
    key: &str,
    saved: &Saved,
) -> Result<(), StoreError> {
    let sqlerr =
        |e: rusqlite::Error| StoreError::Unreadable(format!("recovered rows of {key}: {e}"));
    let mut checkpoint: Option<(i64, Value)> = None;
    if has_table(conn, "checkpoints").map_err(sqlerr)? {
        let mut stmt = conn
            .prepare("SELECT rowid, record FROM checkpoints WHERE session_key = ?1")
            .map_err(sqlerr)?;
        let mut rows = stmt.query([key]).map_err(sqlerr)?;
        while let Some(r) = rows.next().map_err(sqlerr)? {
            let rowid: i64 = r.get(0).map_err(sqlerr)?;
            let raw = text_of(r.get_ref(1).map_err(sqlerr)?).unwrap_or_default();
            match decode_text(&raw) {
                Ok(d) => checkpoint = Some((rowid, d.value)),
                Err(_) => out.diag(
                    DiagKind::BadRecord,
                    None,
                    Some(rowid),
                    format!("checkpoint of session {key}: not JSON"),
                ),
            }
        }
    }
    let mut pending: Vec<recovery::Pending> = Vec::new();
    let mut pending_rowid = None;
    if has_table(conn, "pending_inputs").map_err(sqlerr)? {
        let mut stmt = conn
            .prepare(
                "SELECT rowid, kind, position, record FROM pending_inputs
                 WHERE session_key = ?1 ORDER BY kind, position, rowid",
            )
            .map_err(sqlerr)?;
        let mut rows = stmt.query([key]).map_err(sqlerr)?;
        while let Some(r) = rows.next().map_err(sqlerr)? {
            let rowid: i64 = r.get(0).map_err(sqlerr)?;
            let kind = text_of(r.get_ref(1).map_err(sqlerr)?).unwrap_or_default();
            let pos: Option<i64> = r.get(2).map_err(sqlerr)?;
            let raw = text_of(r.get_ref(3).map_err(sqlerr)?).unwrap_or_default();
            match decode_text(&raw) {
                Ok(d) => {
                    pending_rowid.get_or_insert(rowid);
                    pending.push((kind, pos, d.value));
                }
                Err(_) => out.diag(
                    DiagKind::BadRecord,
                    None,
                    Some(rowid),
                    format!("pending input of session {key}: not JSON"),
                ),
            }
        }
    }
    let line = checkpoint
        .as_ref()
        .map(|(r, _)| *r)
        .or(pending_rowid)
        .unwrap_or(0);
    recovery::push_recovered(
        out,
        mapper,
        recovery::recovered(checkpoint.as_ref().map(|(_, v)| v), &pending, saved),
        saved.last,
        line,
    )
}
