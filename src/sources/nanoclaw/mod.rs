//! nanoclaw stores (an install root holding `data/v2.db`).
//!
//! ```text
//! <root>/data/v2.db                                          catalog (WAL)       catalog.rs
//! <root>/data/v2-sessions/<agent_group_id>/<session_id>/
//!     inbound.db     messages_in, delivered, destinations, session_routing      inbound.rs
//!     outbound.db    messages_out, processing_ack, session_state, container_state outbound.rs
//! <root>/data/v2-sessions/<agent_group_id>/.claude-shared/projects/*/<continuation>.jsonl[.rotated-<ms>]
//!                    Claude Code transcripts backing `continuation:claude`     claude_transcript.rs
//! <root>/data/v2-sessions/<agent_group_id>/.codex-shared/sessions/YYYY/MM/DD/rollout-*-<thread>.jsonl
//!                    Codex rollouts backing `continuation:codex`               codex_rollout.rs
//! <root>/data/v2-sessions/<agent_group_id>/<session_id>/opencode-xdg/opencode/opencode.db
//!                    the OpenCode sessions backing `continuation:opencode`     opencode_db.rs
//! <root>/data/upgrade-state.json                             install version     upgrade_state.rs
//! <root>/groups/<folder>/conversations/<date>-<provider>-<thread>.md
//!                    a provider's per-thread exchange archive (secondary)      exchange_archive.rs
//! ```
//! Every database is read from a private snapshot, columns by name. Rows of
//! catalog and state tables become `nanoclaw <table>: <primary key>` system
//! rows with `native = {"table", "record"}` (JSON text columns as strings,
//! integers beyond 2^53 as strings); credential columns never leave here.
//!
//! Each store reads only its own files (`store::Reads::Own`), so `--cache`
//! and `sync` pass over one whose files are unchanged. What one store says of
//! another — a session database without its sibling, a continuation whose
//! transcript is absent, the install's version on the session start rows —
//! the steps derive from `sources` and the rows (sql/V013__nanoclaw_losses.sql,
//! sql/V022__install_versions.sql).

use rusqlite::Connection;
use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::snapshot::Snapshot;
use crate::sources::shared::{column_json, columns, has_table};
use crate::store::{StoreError, StoreOutput};
use content::SecretRules;

pub mod catalog;
pub mod claude_transcript;
pub mod codex_rollout;
pub mod content;
pub mod exchange_archive;
pub mod inbound;
pub mod opencode_db;
pub mod outbound;
pub mod upgrade_state;

/// The install root of a nanoclaw store path (relative to HOME): the
/// directory holding `data/v2.db` and `data/v2-sessions/` (`.` for HOME
/// itself), and the path below its `data/`. The root's `data/` is the last
/// `data` component followed by `v2.db` or `v2-sessions/`, so an install
/// inside a folder named `data` (`data/nc/data/v2.db`) keeps its own root.
pub fn install_root(rel: &str) -> Option<(String, &str)> {
    let i = rel
        .match_indices("data/")
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || rel.as_bytes()[i - 1] == b'/')
        .filter(|&i| {
            let below = &rel[i + "data/".len()..];
            below == "v2.db"
                || below.starts_with("v2.db-")
                || below.starts_with("v2-sessions/")
                || below == "upgrade-state.json"
        })
        .last()?;
    let root = rel[..i].trim_end_matches('/');
    let root = if root.is_empty() { "." } else { root };
    Some((root.to_string(), &rel[i + "data/".len()..]))
}

/// (install root, agent group id, session id) of a session DB path
/// `<root>/data/v2-sessions/<ag>/<sess>/<file>` (relative to HOME).
pub fn session_parts(rel: &str) -> Option<(String, String, String)> {
    let (root, below) = install_root(rel)?;
    let rest: Vec<&str> = below.strip_prefix("v2-sessions/")?.split('/').collect();
    match rest.as_slice() {
        [ag, sess, ..] => Some((root, ag.to_string(), sess.to_string())),
        _ => None,
    }
}

/// One table row: rowid and columns by name (minus `exclude`).
pub struct TableRow {
    pub rowid: Option<i64>,
    pub record: Map<String, Value>,
}

/// Primary-key columns of a table, in key order (empty: none).
pub fn primary_key(conn: &Connection, table: &str) -> rusqlite::Result<Vec<String>> {
    let mut stmt =
        conn.prepare("SELECT name, pk FROM pragma_table_info(?1) WHERE pk > 0 ORDER BY pk")?;
    let rows = stmt.query_map([table], |r| r.get::<_, String>(0))?;
    rows.collect()
}

fn quote(ident: &str) -> String {
    format!("\"{}\"", ident.replace('"', "\"\""))
}

/// Every row of `table` ordered by its primary key (else rowid), columns by
/// name, without the `exclude`d ones (which are never selected).
pub fn read_table(
    conn: &Connection,
    table: &str,
    exclude: &[&str],
    order: &str,
) -> rusqlite::Result<Vec<TableRow>> {
    let cols: Vec<String> = columns(conn, table)?
        .into_iter()
        .filter(|c| !exclude.contains(&c.as_str()))
        .collect();
    let without_rowid: bool = conn
        .query_row(
            "SELECT sql LIKE '%WITHOUT ROWID%' FROM sqlite_master WHERE name = ?1",
            [table],
            |r| r.get(0),
        )
        .unwrap_or(false);
    let rowid = if without_rowid { "NULL" } else { "rowid" };
    let list = cols.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ");
    let sql = format!(
        "SELECT {rowid}, {list} FROM {} ORDER BY {order}",
        quote(table)
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut record = Map::new();
        for (i, c) in cols.iter().enumerate() {
            record.insert(c.clone(), column_json(r.get_ref(i + 1)?));
        }
        out.push(TableRow {
            rowid: r.get(0)?,
            record,
        });
    }
    Ok(out)
}

/// `ORDER BY` for a table: its primary key, else rowid.
pub fn default_order(conn: &Connection, table: &str) -> String {
    let pk = primary_key(conn, table).unwrap_or_default();
    if pk.is_empty() {
        "rowid".into()
    } else {
        pk.iter().map(|c| quote(c)).collect::<Vec<_>>().join(", ")
    }
}

/// The text of a key value for a row title.
pub fn key_text(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "NULL".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A `nanoclaw <table>: <primary key>` state row.
pub fn state_row(table: &str, pk: &[String], row: &TableRow, time_cols: &[&str]) -> EventRow {
    let key = if pk.is_empty() {
        row.rowid.map(|r| r.to_string()).unwrap_or_default()
    } else {
        pk.iter()
            .map(|c| key_text(row.record.get(c)))
            .collect::<Vec<_>>()
            .join("/")
    };
    let ts = time_cols.iter().find_map(|c| {
        row.record
            .get(*c)
            .and_then(Value::as_str)
            .and_then(crate::time::parse_utc)
    });
    EventRow {
        turn_type: TurnType::System,
        text: Some(format!("nanoclaw {table}: {key}")),
        ts_utc: ts,
        source_line: row.rowid,
        x_group: Group::State,
        x_id: Some(format!("{table}/{key}")),
        native: Some(crate::schema::object(
            json!({"table": table, "record": Value::Object(row.record.clone())}),
        )),
        ..Default::default()
    }
}

/// Columns that time a state row, first present wins.
pub const TIME_COLUMNS: [&str; 12] = [
    "created_at",
    "granted_at",
    "added_at",
    "resolved_at",
    "status_changed",
    "delivered_at",
    "updated_at",
    "applied",
    "last_seen",
    "last_attempt_at",
    "started_at",
    "acquired_at",
];

/// Maps one message row to (text, native); no I/O.
pub type MessageMapper =
    fn(&Map<String, Value>, &str, &SecretRules) -> (Option<String>, Map<String, Value>);

/// A session database (inbound.db or outbound.db) opened from its snapshot.
pub struct SessionDb {
    snap: Snapshot,
    pub agent_group: String,
    pub session: String,
    pub rules: SecretRules,
}

fn sql_err(what: &str, e: rusqlite::Error) -> StoreError {
    StoreError::Unreadable(format!("{what}: {e}"))
}

impl SessionDb {
    /// Open the store's snapshot. A sibling database that is missing is the
    /// steps' loss to declare (V013), not this store's: its rows do not
    /// depend on it.
    pub fn open(out: &mut StoreOutput<'_>) -> Result<SessionDb, StoreError> {
        let (_, agent_group, session) = session_parts(&out.store.rel).unwrap_or_default();
        let snap = out.snapshot()?;
        let rules = SecretRules::new(out.options.secret_patterns.clone());
        Ok(SessionDb {
            snap,
            agent_group,
            session,
            rules,
        })
    }

    pub fn conn(&self) -> &Connection {
        &self.snap.conn
    }

    /// Push a row of this session (every row of a session database is one).
    pub fn push(&self, out: &mut StoreOutput<'_>, row: EventRow) -> Result<(), StoreError> {
        out.push(EventRow {
            session_id: Some(self.session.clone()),
            ..row
        })
    }

    pub fn has(&self, table: &str) -> Result<bool, StoreError> {
        has_table(self.conn(), table).map_err(|e| sql_err("schema", e))
    }

    pub fn rows(&self, table: &str, order: &str) -> Result<Vec<TableRow>, StoreError> {
        read_table(self.conn(), table, &[], order).map_err(|e| sql_err(table, e))
    }

    /// One message row per row of `table`, by (seq, id); a missing table is unreadable.
    pub fn push_messages(
        &self,
        out: &mut StoreOutput<'_>,
        table: &str,
        turn_type: TurnType,
        group: Group,
        map: MessageMapper,
    ) -> Result<(), StoreError> {
        if !self.has(table)? {
            out.diag(
                DiagKind::Unreadable,
                None,
                None,
                format!("no {table} table"),
            );
            return Ok(());
        }
        for r in self.rows(table, "seq, id")? {
            let rec = &r.record;
            let (text, native) = map(rec, &self.agent_group, &self.rules);
            // An edit or reaction is a request to the platform, not a turn.
            let turn_type = if native.contains_key("operation") {
                TurnType::System
            } else {
                turn_type
            };
            self.push(
                out,
                EventRow {
                    seq: rec.get("seq").and_then(Value::as_i64),
                    ts_utc: rec
                        .get("timestamp")
                        .and_then(Value::as_str)
                        .and_then(crate::time::parse_utc),
                    turn_type,
                    text,
                    source_line: r.rowid,
                    x_group: group,
                    x_id: rec.get("id").and_then(Value::as_str).map(String::from),
                    native: Some(native),
                    ..Default::default()
                },
            )?;
        }
        Ok(())
    }

    /// `nanoclaw <table>: <key>` state rows of each present table; `hook`
    /// may add to a row's native object (which already names the agent group).
    pub fn push_state(
        &self,
        out: &mut StoreOutput<'_>,
        tables: &[&str],
        mut hook: impl FnMut(&TableRow, &mut Map<String, Value>),
    ) -> Result<(), StoreError> {
        for table in tables {
            if !self.has(table)? {
                continue;
            }
            let pk = primary_key(self.conn(), table).map_err(|e| sql_err(table, e))?;
            for r in self.rows(table, &default_order(self.conn(), table))? {
                let row = state_row(table, &pk, &r, &TIME_COLUMNS);
                let mut native = row.native.clone().unwrap_or_default();
                native.insert("agent_group_id".into(), json!(self.agent_group));
                hook(&r, &mut native);
                self.push(
                    out,
                    EventRow {
                        native: Some(native),
                        ..row
                    },
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths() {
        assert_eq!(
            session_parts("data/v2-sessions/ag-1/sess-2/inbound.db"),
            Some((".".to_string(), "ag-1".to_string(), "sess-2".to_string()))
        );
        assert_eq!(
            session_parts("apps/nc/data/v2-sessions/ag-1/sess-2/outbound.db"),
            Some((
                "apps/nc".to_string(),
                "ag-1".to_string(),
                "sess-2".to_string()
            ))
        );
    }
}
