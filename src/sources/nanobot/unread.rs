//! Files under a nanobot instance that nanoload lists in `sources` without
//! reading them (status `skipped`, no rows).
//!
//! ```text
//! .nanobot*/sessions/<ns>/.session_search.sqlite3   nanobot.session_search: the search cache,
//!                                                   a lower-cased copy of every message: never read
//! a file no store claims where nanobot keeps state  nanobot.unknown_store: one `warning` naming it,
//!   .nanobot*/*.sqlite3                             its size and, for a SQLite file, its tables
//!   .nanobot*/{sessions,webui}/**/*.{sqlite3,json}  (from a private snapshot: the names and row
//!   .nanobot*/<workspace>/sessions/*.{sqlite3,json} counts, never a value)
//! ```
//! Discovery gives a file to `nanobot.unknown_store` by [`is_unknown_store`]
//! when no glob claims it (and it is not a file 0.3.5 writes beside a
//! store: a WebUI transcript's `*.segments/manifest.json`); a release that adds a store (a WebUI transcript
//! database, a new sidecar) is named once instead of ignored.

use std::path::Path;

use crate::diag::DiagKind;
use crate::sources::shared::columns;
use crate::store::{StoreError, StoreOutput};

/// Whether an unclaimed file at `rel` is where nanobot keeps its state and
/// has a store's shape (a SQLite database, a JSON sidecar): the walk hands
/// it to `nanobot.unknown_store`. A workspace's own files (the user's
/// project) are never candidates, its `sessions/` excepted.
pub fn is_unknown_store(rel: &str, home: &Path) -> bool {
    let parts: Vec<&str> = rel.split('/').collect();
    if !parts.first().is_some_and(|p| p.starts_with(".nanobot")) {
        return false;
    }
    let name = parts.last().copied().unwrap_or_default();
    // files nanobot 0.3.5 writes beside its stores that hold no rows of
    // their own: a WebUI transcript's segment manifest
    if name == "manifest.json" && parts.len() >= 2 && parts[parts.len() - 2].ends_with(".segments")
    {
        return false;
    }
    let sqlite = name.ends_with(".sqlite3") || name.ends_with(".sqlite") || name.ends_with(".db");
    let json = name.ends_with(".json");
    match parts.as_slice() {
        [_, _] => sqlite,
        [_, "sessions" | "webui", ..] => sqlite || json,
        [_, ws, "sessions", _] => {
            (sqlite || json) && super::workspace::is_workspace_dir(&home.join(parts[0]).join(ws))
        }
        _ => false,
    }
}

/// `nanobot.session_search`: listed, never read.
pub fn skip(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    out.skip();
    Ok(())
}

/// `nanobot.unknown_store`: one warning naming the file, its size and (a
/// SQLite file) its tables with their row counts.
pub fn name_it(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    out.skip();
    let bytes = out.store.bytes;
    let mut what = format!("a file nanoload does not know: {bytes} bytes");
    let rel = out.store.rel.clone();
    if !rel.ends_with(".json") {
        match tables(out) {
            Ok(t) if t.is_empty() => what.push_str(", a SQLite database without tables"),
            Ok(t) => what.push_str(&format!(", SQLite tables {}", t.join(", "))),
            Err(_) => what.push_str(", not a SQLite database"),
        }
    }
    out.diag(
        DiagKind::Warning,
        None,
        None,
        format!("{what}; not read (a store of a newer nanobot?)"),
    );
    Ok(())
}

/// `<table> (<n> rows[, columns …])` of each table, from the private snapshot.
fn tables(out: &StoreOutput<'_>) -> Result<Vec<String>, StoreError> {
    let snap = out.snapshot()?;
    let conn = &snap.conn;
    let err = |e: rusqlite::Error| StoreError::Unreadable(e.to_string());
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
             ORDER BY name",
        )
        .map_err(err)?;
    let names: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(err)?
        .collect::<Result<_, _>>()
        .map_err(err)?;
    let mut out = Vec::new();
    for t in names {
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM \"{}\"", t.replace('"', "\"\"")),
                [],
                |r| r.get(0),
            )
            .map_err(err)?;
        let cols = columns(conn, &t).map_err(err)?;
        out.push(format!("{t} ({n} rows: {})", cols.join(", ")));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_state_shaped_files_where_nanobot_keeps_state_are_candidates() -> std::io::Result<()> {
        let home = tempfile::tempdir()?;
        std::fs::create_dir_all(home.path().join(".nanobot/workspace/memory"))?;
        for (rel, want) in [
            (".nanobot/webui/transcripts.sqlite3", true),
            (".nanobot/sessions/ns/x.goals.json", true),
            (".nanobot/sessions/ns/deep/y.db", true),
            (".nanobot/usage.sqlite3", true),
            (".nanobot/workspace/sessions/k.sidecar.json", true),
            (".nanobot/webui/k.segments/manifest.json", false),
            (".nanobot/workspace/notes/data.json", false),
            (".nanobot/workspace/app.sqlite3", false),
            (".nanobot/cron/jobs.json", false),
            (".nanobot/sessions/ns/k.jsonl", false),
            ("other/sessions/x.json", false),
        ] {
            assert_eq!(is_unknown_store(rel, home.path()), want, "{rel}");
        }
        Ok(())
    }
}
