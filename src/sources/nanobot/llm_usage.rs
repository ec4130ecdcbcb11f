//! `nanobot.llm_usage`: one row per provider call attempt → the `llm_calls` table.
//!
//! ```text
//! .nanobot*/llm_usage.sqlite3 [-wal -shm]   (WAL; a long-lived writer: rows often only in -wal)
//!   llm_calls(id PK, started_at_ms (UTC epoch ms), duration_ms, provider, model, source,
//!             stream, finish_reason, input_tokens, output_tokens, total_tokens,
//!             cache_read_tokens, cache_write_tokens, reported_tokens, estimated_tokens,
//!             generation_ms, measured_output_tokens, ttft_ms, timed_requests,
//!             error_status_code, error_kind,
//!             call_id)  user_version 2 (a v1 database upgraded: the last column, old rows NULL)
//! ```
//! `PRAGMA user_version` above 2: one `warning` (columns still read by name).
//! Read from a private snapshot, by column name (a missing column is NULL);
//! NULL stays NULL (not reported ≠ 0). No session key: the views attribute
//! calls to sessions by time.

use crate::diag::DiagKind;
use crate::schema::{LLM_INT_COLUMNS, LlmCallRow};
use crate::sources::shared::columns;
use crate::store::{StoreError, StoreOutput};

/// The newest `llm_usage.sqlite3` schema nanoload knows (`PRAGMA
/// user_version`): 2, nanobot's `llm_usage/store.py` at 4cd1a085.
pub const KNOWN_VERSION: i64 = 2;

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let snap = out.snapshot()?;
    let conn = &snap.conn;
    let sqlerr = |e: rusqlite::Error| StoreError::Unreadable(format!("llm_calls: {e}"));
    let present = columns(conn, "llm_calls").map_err(sqlerr)?;
    if present.is_empty() {
        return Err(StoreError::Unreadable("no llm_calls table".into()));
    }
    // nanobot numbers its schema (store.py SCHEMA_VERSION): 1 in 0.3.5, 2
    // adds call_id; a later one is read by column name, with a warning
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sqlerr)?;
    if version > KNOWN_VERSION {
        out.diag(
            DiagKind::Warning,
            None,
            None,
            format!(
                "llm_usage schema version {version} is newer than nanoload knows ({KNOWN_VERSION}): \
                 columns read by name, a column it added is not read"
            ),
        );
    }
    let col = |c: &str| {
        if present.iter().any(|p| p == c) {
            c.to_string()
        } else {
            format!("NULL AS {c}")
        }
    };
    let mut cols = vec![
        col("id"),
        col("started_at_ms"),
        col("duration_ms"),
        col("provider"),
        col("model"),
        col("source"),
        col("stream"),
        col("finish_reason"),
    ];
    cols.extend(LLM_INT_COLUMNS.iter().map(|c| col(c)));
    cols.push(col("error_kind"));
    cols.push(col("call_id"));
    let sql = format!(
        "SELECT rowid, {} FROM llm_calls ORDER BY id, rowid",
        cols.join(", ")
    );
    let mut stmt = conn.prepare(&sql).map_err(sqlerr)?;
    let mut rows = stmt.query([]).map_err(sqlerr)?;
    while let Some(r) = rows.next().map_err(sqlerr)? {
        let rowid: i64 = r.get(0).map_err(sqlerr)?;
        let int = |i: usize| r.get::<_, Option<i64>>(i).ok().flatten();
        let text = |i: usize| r.get::<_, Option<String>>(i).ok().flatten();
        let (Some(id), Some(started)) = (int(1), int(2)) else {
            out.diag(
                DiagKind::BadRecord,
                None,
                Some(rowid),
                "llm_calls row without an integer id or started_at_ms",
            );
            continue;
        };
        let mut ints = [None; 12];
        for (k, v) in ints.iter_mut().enumerate() {
            *v = int(9 + k);
        }
        out.push_llm(LlmCallRow {
            instance: store.instance.clone(),
            source_path: store.rel.clone(),
            id,
            started_at_ms: started,
            duration_ms: int(3),
            provider: text(4),
            model: text(5),
            source: text(6),
            stream: int(7),
            finish_reason: text(8),
            ints,
            error_kind: text(9 + LLM_INT_COLUMNS.len()),
            call_id: text(10 + LLM_INT_COLUMNS.len()),
        })?;
    }
    Ok(())
}
