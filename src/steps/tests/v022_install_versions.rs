//! The tests of `sql/V022__install_versions.sql`.

use super::*;

/// An install's upgrade marker gives each of its stores the version it
/// names; another install without one, and nanobot's stores, get none.
#[test]
fn an_installs_marker_versions_its_stores_and_no_other() -> Res {
    let mut h = Steps::new()?;
    nanoclaw_session(&h)?;
    h.event(
        "nanoclaw.upgrade_state",
        &[
            ("source_path", "data/upgrade-state.json"),
            ("text", "nanoclaw install: version=2.2.0 via=setup"),
            ("native", r#"{"version":"2.2.0","via":"setup"}"#),
        ],
    )?;
    for (kind, path, instance) in [
        (CATALOG, "data/v2.db", "."),
        (INBOUND, "data/v2-sessions/ag1/s1/inbound.db", "."),
        ("nanoclaw.upgrade_state", "data/upgrade-state.json", "."),
        (CATALOG, "other/data/v2.db", "other"),
        ("nanobot.session_db", WS1_DB, ".nanobot"),
    ] {
        h.source(kind, path, &[("instance", instance)])?;
    }
    h.run_through("install_versions")?;
    assert_eq!(
        h.rows("SELECT instance, version FROM install_versions")?,
        vec![". | 2.2.0"]
    );
    assert_eq!(
        h.rows("SELECT source_path, agent_version FROM sources ORDER BY source_path")?,
        vec![
            ".nanobot/sessions/ws1/sessions.sqlite3 | NULL",
            "data/upgrade-state.json | 2.2.0",
            "data/v2-sessions/ag1/s1/inbound.db | 2.2.0",
            "data/v2.db | 2.2.0",
            "other/data/v2.db | NULL",
        ]
    );
    Ok(())
}

/// The install's version is on the session start rows of its catalog
/// (`native.nanoclaw_version`), put in among the keys where the catalog's
/// sorted object has it, the rest of the text as it was (a value that
/// spells `"record":` in it included); a row that has one already (staged
/// by an earlier build) keeps it, and another install's rows get none.
#[test]
fn an_installs_version_is_on_the_session_start_rows_of_its_catalog() -> Res {
    let mut h = Steps::new()?;
    h.event(
        "nanoclaw.upgrade_state",
        &[
            ("source_path", "data/upgrade-state.json"),
            ("text", "nanoclaw install: version=2.2.0 via=setup"),
            ("native", r#"{"version":"2.2.0","via":"setup"}"#),
        ],
    )?;
    let start = |instance: &str, session: &str, native: &str| {
        let path = if instance == "." {
            "data/v2.db".to_string()
        } else {
            format!("{instance}/data/v2.db")
        };
        h.event(
            CATALOG,
            &[
                ("instance", instance),
                ("source_path", &path),
                ("session_id", session),
                ("x_group", &group(Group::Session)),
                ("x_start", "true"),
                ("text", &format!("session start: id={session}")),
                ("native", native),
            ],
        )
    };
    start(
        ".",
        "s1",
        r#"{"messaging_group":null,"record":{"agent_group_id":"ag1","id":"s1","thread_id":"t \u001f é"},"table":"sessions"}"#,
    )?;
    start(
        ".",
        "s2",
        r#"{"messaging_group":{"channel_type":"slack","id":"mg1","platform_id":"x,\"record\":y"},"record":{"agent_group_id":"ag1","id":"s2"},"table":"sessions"}"#,
    )?;
    start(
        ".",
        "s3",
        r#"{"messaging_group":null,"nanoclaw_version":"2.1.0","record":{"agent_group_id":"ag1","id":"s3"},"table":"sessions"}"#,
    )?;
    start(
        "other",
        "s4",
        r#"{"messaging_group":null,"record":{"agent_group_id":"ag1","id":"s4"},"table":"sessions"}"#,
    )?;
    h.run_through("install_versions")?;
    assert_eq!(
        h.rows(
            "SELECT s.instance, s.session_id, p.native FROM events_plan p
             JOIN plan_sessions s USING (sess_id) WHERE p.x_start ORDER BY ALL"
        )?,
        vec![
            r#". | s1 | {"messaging_group":null,"nanoclaw_version":"2.2.0","record":{"agent_group_id":"ag1","id":"s1","thread_id":"t \u001f é"},"table":"sessions"}"#,
            r#". | s2 | {"messaging_group":{"channel_type":"slack","id":"mg1","platform_id":"x,\"record\":y"},"nanoclaw_version":"2.2.0","record":{"agent_group_id":"ag1","id":"s2"},"table":"sessions"}"#,
            r#". | s3 | {"messaging_group":null,"nanoclaw_version":"2.1.0","record":{"agent_group_id":"ag1","id":"s3"},"table":"sessions"}"#,
            r#"other | s4 | {"messaging_group":null,"record":{"agent_group_id":"ag1","id":"s4"},"table":"sessions"}"#,
        ]
    );
    Ok(())
}
