//! The tests of `sql/V002__store_roles.sql`.

use super::*;

#[test]
fn store_roles_demote_a_legacy_copy_and_promote_the_jsonl_of_an_empty_database() -> Res {
    let mut h = Steps::new()?;
    legacy_and_aborted_import(&h)?;
    h.run_through("store_roles")?;
    assert_eq!(
        h.rows("SELECT source_path, source_role FROM sources ORDER BY source_path")?,
        vec![
            ".nanobot/sessions/ws1/sessions.sqlite3 | primary",
            // the JSONL of the aborted import are the store of record…
            ".nanobot/sessions/ws2/Y2xpOmRpcmVjdA.jsonl | primary",
            // …but a legacy-named file nanobot never loads stays a copy
            ".nanobot/sessions/ws2/cli_direct.jsonl | secondary",
            ".nanobot/sessions/ws2/sessions.sqlite3 | primary",
            // the database holds the session: the legacy file is a copy
            ".nanobot/workspace/sessions/cli_direct.jsonl | secondary",
        ]
    );
    Ok(())
}

/// A namespace's files are those directly in its directory, told by the
/// path's bytes: `_` in a directory's name is a character, not a
/// wildcard, so the JSONL of `wsX2` stay copies when `ws_2`'s import never
/// completed.
#[test]
fn a_namespace_named_with_an_underscore_promotes_only_its_own_jsonl() -> Res {
    let mut h = Steps::new()?;
    const EMPTY_DB: &str = ".nanobot/sessions/ws_2/sessions.sqlite3";
    const OWN: &str = ".nanobot/sessions/ws_2/Y2xpOmRpcmVjdA.jsonl";
    const OTHER_DB: &str = ".nanobot/sessions/wsX2/sessions.sqlite3";
    const OTHER: &str = ".nanobot/sessions/wsX2/Y2xpOmRpcmVjdA.jsonl";
    h.source(DB, EMPTY_DB, &[])?;
    h.source(DB, OTHER_DB, &[])?;
    for path in [OWN, OTHER] {
        h.source(JSONL, path, &[("source_role", "secondary")])?;
    }
    h.diagnostic(&[("source_path", EMPTY_DB), ("code", "session_db_empty")])?;
    for (kind, path, ns, role) in [
        (JSONL, OWN, "ws_2", "secondary"),
        (DB, OTHER_DB, "wsX2", "primary"),
        (JSONL, OTHER, "wsX2", "secondary"),
    ] {
        h.event(
            kind,
            &[
                ("session_id", "cli:direct"),
                ("x_namespace", ns),
                ("source_path", path),
                ("source_role", role),
            ],
        )?;
    }
    h.run_through("store_roles")?;
    assert_eq!(
        h.rows("SELECT source_path, source_role FROM sources ORDER BY source_path")?,
        vec![
            ".nanobot/sessions/wsX2/Y2xpOmRpcmVjdA.jsonl | secondary",
            ".nanobot/sessions/wsX2/sessions.sqlite3 | primary",
            ".nanobot/sessions/ws_2/Y2xpOmRpcmVjdA.jsonl | primary",
            ".nanobot/sessions/ws_2/sessions.sqlite3 | primary",
        ]
    );
    Ok(())
}
