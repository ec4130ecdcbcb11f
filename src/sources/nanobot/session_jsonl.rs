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
//! .nanobot*/sessions/<workspace-id>/<b64 stem>.checkpoint.json  (a part of the store) 0.3.5's
//!          checkpoint of an interrupted turn: {version, session_key, base_updated_at,
//!          base_message_count, checkpoint{…}, provider_state (not read)}
//! ```
//! An interrupted turn (the checkpoint file's, else the metadata's
//! `runtime_checkpoint`, and its `pending_user_followups`) follows the
//! saved messages as rows marked `native.recovered` (recovery.rs).
//! Role: secondary when the namespace's `sessions.sqlite3` exists (the import
//! froze these files), else primary. One row per message as `record.rs` maps
//! it, `seq` = message index, `source_line` = line number; a line that does not
//! decode becomes a bad-line row and the rest of the file still loads.

use std::fs::File;
use std::io::{BufReader, Seek, SeekFrom};
use std::path::Path;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};

use super::record::{self, SessionMapper, SessionMeta};
use super::recovery;
use super::workspace;
use crate::diag::DiagKind;
use crate::jsonl::{self, Lines, decode_line};
use crate::schema::{EventRow, Role};
use crate::store::{StoreError, StoreOutput};

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

/// The role of a session JSONL, from the paths discovery found:
/// - a namespace's canonical file (`<urlsafe-b64 key>.jsonl`): primary,
///   secondary beside a `sessions.sqlite3` (the import froze it);
/// - files nanobot 0.3.5 never loads — a legacy-named file in a namespace,
///   `jsonl-backup/`, `.migration-conflicts/` — secondary;
/// - the global pre-namespace directory: secondary once the instance has a
///   namespace (0.3.x ran, and ignores it), else primary;
/// - a workspace's `sessions/`: secondary once that workspace's namespace
///   holds a session store (0.3.5 copied the file there), else primary.
///
/// A primary legacy file may still become secondary in the views, where a
/// store of record holds the same session ([`is_legacy`], V002).
pub fn role(rel: &str, home: &Path, all: &std::collections::BTreeSet<String>) -> Role {
    let has_store = |ns: &str| {
        let prefix = format!("{ns}/");
        all.range(prefix.clone()..)
            .take_while(|p| p.starts_with(&prefix))
            .next()
            .is_some()
    };
    let secondary = match layout(rel) {
        Layout::Namespace { namespace } => {
            is_legacy(rel) || all.contains(&format!("{namespace}/sessions.sqlite3"))
        }
        Layout::Global => {
            let inst = rel.split('/').next().unwrap_or_default();
            let sessions = format!("{inst}/sessions/");
            all.range(sessions.clone()..)
                .take_while(|p| p.starts_with(&sessions))
                .any(|p| p[sessions.len()..].contains('/'))
        }
        Layout::Workspace { .. } => namespace_of(rel, home).is_some_and(|ns| has_store(&ns)),
    };
    if secondary {
        Role::Secondary
    } else {
        Role::Primary
    }
}

/// A file in a layout nanobot 0.3.x never loads as a session: the global
/// pre-namespace directory, a workspace's `sessions/`, a legacy-named file
/// moved into a namespace (0.3.5 loads only `<urlsafe-b64 key>.jsonl`),
/// `.migration-conflicts/` and `jsonl-backup/` copies. Where a store of
/// record (the database or a canonical namespace file) holds the same
/// session, the views make such a file secondary (docs/design.md "Stores and
/// roles").
pub fn is_legacy(rel: &str) -> bool {
    match layout(rel) {
        Layout::Global | Layout::Workspace { .. } => true,
        Layout::Namespace { .. } => {
            rel.contains("/.migration-conflicts/")
                || rel.contains("/jsonl-backup/")
                || decode_stem(stem_of(rel)).is_none()
        }
    }
}

/// The workspace-id of the namespace that governs this file (the last part
/// of [`namespace_of`]).
pub fn namespace_id(rel: &str, home: &Path) -> Option<String> {
    namespace_of(rel, home).and_then(|ns| ns.rsplit('/').next().map(String::from))
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
fn has_switch(file: &mut File) -> Result<bool, std::io::Error> {
    let finder = memchr::memmem::Finder::new(record::SWITCH_PREFIX.as_bytes());
    let mut lines = Lines::new(BufReader::with_capacity(jsonl::READ_BUF, &mut *file));
    let mut found = false;
    while let Some(jsonl::Line { bytes, .. }) = lines.next_line()? {
        if finder.find(bytes).is_some()
            && decode_line(bytes)
                .is_ok_and(|d| d.is_some_and(|d| record::is_switch_reply(&d.value)))
        {
            found = true;
            break;
        }
    }
    drop(lines);
    file.seek(SeekFrom::Start(0))?;
    Ok(found)
}

/// What one line of a session JSONL is.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    Blank,
    Metadata(Map<String, Value>),
    ProviderState,
    Message(Value),
    /// Does not decode: the decoder's message.
    Bad(String),
}

/// Decode and classify one line (no I/O); `repairs` as `jsonl::decode_line` reports them.
pub fn classify(bytes: &[u8]) -> (Line, Vec<&'static str>) {
    match decode_line(bytes) {
        Ok(None) => (Line::Blank, Vec::new()),
        Err(e) => (Line::Bad(e.0), Vec::new()),
        Ok(Some(d)) => {
            let line = match d.value.get("_type").and_then(Value::as_str) {
                Some("metadata") => {
                    Line::Metadata(d.value.as_object().cloned().unwrap_or_default())
                }
                Some("provider_state") => Line::ProviderState,
                _ => Line::Message(d.value),
            };
            (line, d.repairs)
        }
    }
}

/// Rows of a message line (no I/O); for a line that is not a message object,
/// `Err((reason, the bad-line row))`. Blank and metadata lines give no rows.
pub fn message_rows(
    mapper: &mut SessionMapper,
    l: &Line,
    raw: &[u8],
    line: i64,
    seq: i64,
) -> Result<Vec<EventRow>, Box<(String, EventRow)>> {
    let reason = match l {
        Line::Message(v) => match mapper.map(v, seq, line) {
            Ok(rows) => return Ok(rows),
            Err(reason) => reason,
        },
        Line::Bad(reason) => reason.clone(),
        Line::Blank | Line::Metadata(_) | Line::ProviderState => return Ok(Vec::new()),
    };
    let row = EventRow {
        seq: Some(seq),
        ..crate::sources::shared::bad_line_row_of(mapper.bare_row(), line, &reason, raw)
    };
    Err(Box::new((reason, row)))
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let rel = store.rel.clone();
    let project =
        namespace_of(&rel, out.home).and_then(|ns| workspace::project_path(&out.home.join(ns)));
    let mut mapper = SessionMapper::new(project);
    mapper.keys = out.options.keys;
    mapper.namespace = namespace_id(&rel, out.home);
    mapper.legacy = is_legacy(&rel);
    // 0.3.5's checkpoint of an interrupted turn, beside the file
    let sidecar = checkpoint_sidecar(out);
    if !store.present {
        // the checkpoint outlived its session file
        let key = sidecar
            .as_ref()
            .and_then(|(_, v)| v.get("session_key").and_then(Value::as_str))
            .map(String::from);
        mapper.session_id = key.or_else(|| Some(key_from_name(stem_of(&rel))));
        out.diag(
            DiagKind::Warning,
            None,
            None,
            "a checkpoint without its session file: only the interrupted turn is recovered",
        );
        let (line, md) = (0, Map::new());
        return recover(
            out,
            &mut mapper,
            line,
            &md,
            sidecar,
            &recovery::Saved::new(),
            0,
        );
    }
    // One open file for both passes: a rename over the path meanwhile (how
    // nanobot saves) cannot mix two versions.
    let mut file = File::open(&store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    mapper.has_switch = has_switch(&mut file).map_err(|e| StoreError::io("cannot read", e))?;
    let mut lines = Lines::new(BufReader::with_capacity(jsonl::READ_BUF, file));
    let stem = stem_of(&rel).to_string();
    let mut meta_line: Option<i64> = None;
    let mut seq: i64 = 0;
    let mut any_line = false;
    // what the messages saved, and the metadata line (an interrupted turn's
    // checkpoint and queued inputs may be there: recovery.rs)
    let mut saved = recovery::Saved::new();
    let mut interrupted: Option<(i64, Map<String, Value>)> = None;
    while let Some(jsonl::Line {
        number: line,
        bytes,
        read,
        ..
    }) = lines
        .next_line()
        .map_err(|e| StoreError::Unreadable(format!("read failed after message {seq}: {e}")))?
    {
        out.read_to(read);
        any_line = true;
        let (kind, repairs) = classify(bytes);
        for r in repairs {
            out.diag(
                DiagKind::Warning,
                None,
                Some(line),
                format!("{r}; row kept"),
            );
        }
        match kind {
            Line::Blank | Line::ProviderState => {}
            Line::Metadata(m) if meta_line.is_none() => {
                meta_line = Some(line);
                interrupted = Some((line, m.clone()));
                let meta = SessionMeta::from_line(&m);
                check_name(out, &stem, meta.key.as_deref(), line);
                if meta.key.is_none() {
                    // nanobot loads a session by its file name; releases
                    // before 0.1.4.post6 wrote no key into the metadata line
                    mapper.session_id = Some(key_from_name(&stem));
                }
                mapper.set_meta(&meta);
                for row in mapper.session_rows(&meta, Some(line)) {
                    out.push(row)?;
                }
            }
            Line::Metadata(_) => {
                let first = meta_line.unwrap_or_default();
                let dup = Line::Bad(format!("duplicate metadata line, first at line {first}"));
                push_rows(out, message_rows(&mut mapper, &dup, bytes, line, seq), line)?;
            }
            Line::Message(_) | Line::Bad(_) => {
                if let Line::Message(v) = &kind {
                    saved.note(v, seq);
                }
                ensure_key(out, &mut mapper, &stem, meta_line);
                push_rows(
                    out,
                    message_rows(&mut mapper, &kind, bytes, line, seq),
                    line,
                )?;
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
    let (line, md) = interrupted.unwrap_or_default();
    recover(out, &mut mapper, line, &md, sidecar, &saved, seq)
}

/// What 0.3.5 names a session's checkpoint file: `<stem>.checkpoint.json`.
pub const CHECKPOINT_SUFFIX: &str = ".checkpoint.json";

/// The session file a checkpoint file belongs to (its store: `GlobPart::PartOf`).
pub fn checkpoint_owner(rel: &str) -> String {
    format!(
        "{}.jsonl",
        rel.strip_suffix(CHECKPOINT_SUFFIX).unwrap_or(rel)
    )
}

/// The checkpoint file read with the store, when there is one: (its path,
/// its JSON) — `{version, session_key, base_updated_at, base_message_count,
/// checkpoint, provider_state}` (0.3.5's `SessionManager`); a file that does
/// not decode is a `bad_record`.
fn checkpoint_sidecar(out: &mut StoreOutput<'_>) -> Option<(String, Value)> {
    let part = out
        .store
        .parts
        .iter()
        .find(|p| p.rel.ends_with(CHECKPOINT_SUFFIX))?;
    let (rel, abs) = (part.rel.clone(), part.abs.clone());
    let decoded = std::fs::read(&abs)
        .map_err(|e| e.to_string())
        .and_then(|b| crate::jsonl::parse_slice(&b).map_err(|e| e.to_string()));
    match decoded {
        Ok(v @ Value::Object(_)) => Some((rel, v)),
        Ok(_) => {
            out.diag(
                DiagKind::BadRecord,
                Some(&rel),
                None,
                "checkpoint: not a JSON object",
            );
            None
        }
        Err(e) => {
            out.diag(
                DiagKind::BadRecord,
                Some(&rel),
                None,
                format!("checkpoint: {e}"),
            );
            None
        }
    }
}

/// An interrupted turn's messages (recovery.rs): the metadata's
/// `runtime_checkpoint` (a full save during the turn puts it there), else
/// the checkpoint file's (where 0.3.5 keeps it while the turn runs), and
/// the metadata's `pending_user_followups`. A checkpoint file nanobot would
/// discard (its `base_updated_at` or `base_message_count` no longer the
/// session's) is marked `stale`.
fn recover(
    out: &mut StoreOutput<'_>,
    mapper: &mut SessionMapper,
    line: i64,
    meta_line: &Map<String, Value>,
    sidecar: Option<(String, Value)>,
    saved: &recovery::Saved,
    messages: i64,
) -> Result<(), StoreError> {
    let md = meta_line
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let pending: Vec<recovery::Pending> = md
        .get("pending_user_followups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, v)| {
            (
                "pending_user_followups".to_string(),
                Some(i as i64),
                v.clone(),
            )
        })
        .collect();
    let (checkpoint, stored) = match (md.get("runtime_checkpoint"), &sidecar) {
        (Some(c), _) => (Some(c.clone()), "metadata"),
        (None, Some((_, v))) => (v.get("checkpoint").cloned(), "checkpoint file"),
        (None, None) => (None, ""),
    };
    let stale = sidecar.as_ref().is_some_and(|(_, v)| {
        stored == "checkpoint file"
            && (v.get("base_message_count").and_then(Value::as_i64) != Some(messages)
                || v.get("base_updated_at") != meta_line.get("updated_at"))
    });
    let mut records = recovery::recovered(checkpoint.as_ref(), &pending, saved);
    for (_, mark) in &mut records {
        if mark["from"] == "checkpoint" {
            mark["stored"] = Value::from(stored);
            if stale {
                mark["stale"] = Value::Bool(true);
            }
        }
    }
    recovery::push_recovered(out, mapper, records, saved.last.max(messages - 1), line)
}

/// Push mapped rows, or report and push a bad line.
fn push_rows(
    out: &mut StoreOutput<'_>,
    rows: Result<Vec<EventRow>, Box<(String, EventRow)>>,
    line: i64,
) -> Result<(), StoreError> {
    match rows {
        Ok(rows) => rows.into_iter().try_for_each(|r| out.push(r)),
        Err(bad) => {
            let (reason, row) = *bad;
            out.diag(DiagKind::BadLine, None, Some(line), reason);
            out.push(row)
        }
    }
}

/// Before the first message: a file without a metadata line takes its key
/// from its name (reported once).
fn ensure_key(
    out: &mut StoreOutput<'_>,
    mapper: &mut SessionMapper,
    stem: &str,
    meta_line: Option<i64>,
) {
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

    proptest::proptest! {
        /// Any bytes as a JSONL line: never a panic; either mapped rows or
        /// exactly one bad-line row.
        #[test]
        fn any_bytes_map_or_report(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300)) {
            any_line(&bytes)?;
        }

        #[test]
        fn json_shaped_lines_map_or_report(s in r#"\{"(role|_type|content)": ("(user|assistant|tool|metadata)"|\[.{0,20}\]|\{.{0,20}\}|[0-9]{1,3}|null)(, "(content|tool_calls|timestamp)": .{0,40})?\}"#) {
            any_line(s.as_bytes())?;
        }
    }

    fn any_line(bytes: &[u8]) -> Result<(), proptest::test_runner::TestCaseError> {
        let (line, _) = classify(bytes);
        let mut m = SessionMapper::default();
        match message_rows(&mut m, &line, bytes, 7, 0) {
            Ok(rows) => {
                proptest::prop_assert!(!matches!(line, Line::Message(_)) || !rows.is_empty())
            }
            Err(bad) => {
                let text = bad.1.text.clone().unwrap_or_default();
                proptest::prop_assert!(
                    text.starts_with("parser: unparseable line 7 ("),
                    "{}",
                    text
                );
                proptest::prop_assert_eq!(bad.1.source_line, Some(7));
            }
        }
        Ok(())
    }
}
