//! `nanobot.session_jsonl`: session JSONL files in every layout nanobot has used.
//!
//! ```text
//! .nanobot*/sessions/<workspace-id>/<b64 stem>.jsonl           namespace (0.3.x store of record)
//! .nanobot*/sessions/<workspace-id>/<key with ':'→'_'>.jsonl   legacy name moved into the namespace
//! .nanobot*/sessions/<workspace-id>/.migration-conflicts/<stem>.<side>.<12hex>.<8hex>.jsonl
//! .nanobot*/sessions/<workspace-id>/jsonl-backup/<name>.jsonl  copies made by the database import
//! .nanobot*/sessions/*.jsonl                                   pre-namespace (global)
//! .nanobot*/<workspace>/sessions/*.jsonl                       oldest layout
//!
//! line 1   {"_type": "metadata", "key", "created_at", "updated_at", "metadata": {…}, …}
//! line 2?  {"_type": "provider_state", "state": {…}}            (opaque; not read)
//! line n   one message dict per line (record.rs)
//! ```
//! Role: secondary when the namespace's `sessions.sqlite3` exists (the import
//! froze these files), else primary. One row per message as `record.rs` maps
//! it, `seq` = message index, `source_line` = line number; a line that does not
//! decode becomes a bad-line row and the rest of the file still loads.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;

use super::record::{self, SessionMapper, SessionMeta};
use super::workspace;
use crate::diag::DiagKind;
use crate::extract::{StoreError, StoreOutput};
use crate::jsonl::{Lines, decode_line};
use crate::schema::{EventRow, Role};

/// Where a session JSONL sits, from its path relative to HOME.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layout {
    /// `.nanobot*/sessions/<ns>/…`: the namespace directory (relative to HOME).
    Namespace { namespace: String },
    /// `.nanobot*/sessions/*.jsonl`
    Global,
    /// `.nanobot*/<workspace>/sessions/*.jsonl`
    Workspace { instance: String, workspace: String },
}

pub fn layout(rel: &str) -> Layout {
    let p: Vec<&str> = rel.split('/').collect();
    match p.as_slice() {
        [_, "sessions", _file] => Layout::Global,
        [inst, "sessions", ns, ..] => Layout::Namespace {
            namespace: format!("{inst}/sessions/{ns}"),
        },
        [inst, ws, ..] => Layout::Workspace {
            instance: (*inst).to_string(),
            workspace: format!("{inst}/{ws}"),
        },
        _ => Layout::Global,
    }
}

/// The namespace directory (relative to HOME) whose database and
/// `.workspace` govern this file.
fn namespace_of(rel: &str, home: &Path) -> Option<String> {
    match layout(rel) {
        Layout::Namespace { namespace } => Some(namespace),
        Layout::Global => None,
        Layout::Workspace {
            instance,
            workspace,
        } => workspace::workspace_id(&home.join(workspace))
            .map(|id| format!("{instance}/sessions/{id}")),
    }
}

/// Secondary when the governing namespace holds a `sessions.sqlite3`.
pub fn role(rel: &str, home: &Path, all: &[String]) -> Role {
    match namespace_of(rel, home) {
        Some(ns) if all.iter().any(|s| *s == format!("{ns}/sessions.sqlite3")) => Role::Secondary,
        _ => Role::Primary,
    }
}

/// nanobot's `safe_key`: `:` and characters unsafe in file names → `_`.
pub fn safe_key(key: &str) -> String {
    key.chars()
        .map(|c| {
            if matches!(c, ':' | '<' | '>' | '"' | '/' | '\\' | '|' | '?' | '*') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The key a file stem encodes: URL-safe base64 when it round-trips.
pub fn decode_stem(stem: &str) -> Option<String> {
    let bytes = URL_SAFE_NO_PAD.decode(stem).ok()?;
    let key = String::from_utf8(bytes).ok()?;
    (URL_SAFE_NO_PAD.encode(key.as_bytes()) == stem && !key.is_empty()).then_some(key)
}

/// The file-name stem that names the session (`.migration-conflicts` names
/// carry extra dotted parts).
fn stem_of(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let name = name.strip_suffix(".jsonl").unwrap_or(name);
    if rel.contains("/.migration-conflicts/") {
        name.split('.').next().unwrap_or(name)
    } else {
        name
    }
}

/// The key to use when the metadata line is missing.
fn key_from_name(stem: &str) -> String {
    decode_stem(stem).unwrap_or_else(|| stem.replacen('_', ":", 1))
}

/// Whether the file holds a `/model` switch reply: a cheap byte search, then
/// a decode of only the lines that contain the prefix.
fn has_switch(path: &Path) -> Result<bool, std::io::Error> {
    let finder = memchr::memmem::Finder::new(record::SWITCH_PREFIX.as_bytes());
    let mut lines = Lines::new(BufReader::new(File::open(path)?));
    while let Some((_, bytes, _)) = lines.next_line()? {
        if finder.find(bytes).is_some()
            && let Ok(Some(d)) = decode_line(bytes)
            && record::is_switch_reply(&d.value)
        {
            return Ok(true);
        }
    }
    Ok(false)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let rel = store.rel.clone();
    let project =
        namespace_of(&rel, out.home).and_then(|ns| workspace::project_path(&out.home.join(ns)));
    let mut mapper = SessionMapper::new(store.role, project);
    mapper.has_switch = has_switch(&store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let file = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(file));
    let stem = stem_of(&rel).to_string();
    let mut meta_line: Option<i64> = None;
    let mut seq: i64 = 0;
    let mut any_line = false;
    loop {
        let (line, bytes) = match lines.next_line() {
            Ok(Some((n, b, _))) => (n, b.to_vec()),
            Ok(None) => break,
            Err(e) => {
                return Err(StoreError::Unreadable(format!(
                    "read failed after line {}: {e}",
                    seq
                )));
            }
        };
        any_line = true;
        let decoded = match decode_line(&bytes) {
            Ok(Some(d)) => d,
            Ok(None) => continue,
            Err(e) => {
                ensure_key(out, &mut mapper, &stem, meta_line)?;
                bad_line(out, &mapper, line, &e.0, &bytes, seq)?;
                seq += 1;
                continue;
            }
        };
        for r in &decoded.repairs {
            out.diag(
                DiagKind::Warning,
                None,
                Some(line),
                format!("{r}; row kept"),
            );
        }
        match decoded.value.get("_type").and_then(Value::as_str) {
            Some("metadata") => {
                if let Some(first) = meta_line {
                    bad_line(
                        out,
                        &mapper,
                        line,
                        &format!("duplicate metadata line, first at line {first}"),
                        &bytes,
                        seq,
                    )?;
                    continue;
                }
                meta_line = Some(line);
                let meta = SessionMeta::from_line(
                    decoded.value.as_object().unwrap_or(&serde_json::Map::new()),
                );
                check_name(out, &stem, meta.key.as_deref(), line);
                if meta.key.is_none() {
                    out.diag(
                        DiagKind::BadRecord,
                        None,
                        Some(line),
                        "metadata line has no key; session key taken from the file name",
                    );
                    mapper.session_id = Some(key_from_name(&stem));
                }
                mapper.set_meta(&meta);
                for row in mapper.session_rows(&meta, Some(line)) {
                    out.push(row)?;
                }
            }
            Some("provider_state") => {}
            _ => {
                ensure_key(out, &mut mapper, &stem, meta_line)?;
                match mapper.map(&decoded.value, seq, line) {
                    Ok(rows) => {
                        for row in rows {
                            out.push(row)?;
                        }
                    }
                    Err(reason) => bad_line(out, &mapper, line, &reason, &bytes, seq)?,
                }
                seq += 1;
            }
        }
    }
    if !any_line {
        out.diag(
            DiagKind::Warning,
            None,
            None,
            "empty file: no session metadata and no messages",
        );
    }
    Ok(())
}

/// Before the first message: a file without a metadata line takes its key
/// from its name (reported once).
fn ensure_key(
    out: &mut StoreOutput<'_>,
    mapper: &mut SessionMapper,
    stem: &str,
    meta_line: Option<i64>,
) -> Result<(), StoreError> {
    if meta_line.is_none() && mapper.session_id.is_none() {
        let key = key_from_name(stem);
        out.diag(
            DiagKind::BadRecord,
            None,
            Some(1),
            format!("metadata line missing; session key {key} taken from the file name"),
        );
        mapper.session_id = Some(key);
    }
    Ok(())
}

fn check_name(out: &mut StoreOutput<'_>, stem: &str, key: Option<&str>, line: i64) {
    let Some(key) = key else { return };
    match decode_stem(stem) {
        Some(k) if k != key => out.diag(
            DiagKind::Warning,
            None,
            Some(line),
            format!("file name encodes session key {k:?} but the metadata line says {key:?}; using the metadata key"),
        ),
        Some(_) => {}
        None if safe_key(key) != stem => out.diag(
            DiagKind::Warning,
            None,
            Some(line),
            format!("file name {stem:?} does not name session key {key:?}; using the metadata key"),
        ),
        None => {}
    }
}

fn bad_line(
    out: &mut StoreOutput<'_>,
    mapper: &SessionMapper,
    line: i64,
    reason: &str,
    raw: &[u8],
    seq: i64,
) -> Result<(), StoreError> {
    out.diag(DiagKind::BadLine, None, Some(line), reason.to_string());
    let row = record::bad_line_row(line, reason, raw);
    out.push(EventRow {
        session_id: mapper.session_id.clone(),
        parent_session_id: mapper.parent_session_id.clone(),
        project_path: mapper.project_path.clone(),
        source_role: mapper.role,
        seq: Some(seq),
        ..row
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_and_stems() {
        assert_eq!(
            layout(".nanobot/sessions/369b/Y2xpOmRpcmVjdA.jsonl"),
            Layout::Namespace {
                namespace: ".nanobot/sessions/369b".into()
            }
        );
        assert_eq!(
            layout(".nanobot/sessions/369b/jsonl-backup/a.jsonl"),
            Layout::Namespace {
                namespace: ".nanobot/sessions/369b".into()
            }
        );
        assert_eq!(layout(".nanobot/sessions/telegram_1.jsonl"), Layout::Global);
        assert_eq!(
            layout(".nanobot/workspace/sessions/a.jsonl"),
            Layout::Workspace {
                instance: ".nanobot".into(),
                workspace: ".nanobot/workspace".into()
            }
        );
        assert_eq!(
            stem_of(
                ".n/sessions/x/.migration-conflicts/Y2xp.workspace.0123456789ab.01234567.jsonl"
            ),
            "Y2xp"
        );
        assert_eq!(decode_stem("Y2xpOmRpcmVjdA").as_deref(), Some("cli:direct"));
        assert_eq!(decode_stem("discord_99001"), None);
        assert_eq!(key_from_name("discord_99001"), "discord:99001");
        assert_eq!(safe_key("discord:99001"), "discord_99001");
    }
}
