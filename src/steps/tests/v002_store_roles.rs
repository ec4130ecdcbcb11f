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
