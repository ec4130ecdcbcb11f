//! The tests of `sql/V019__install_versions.sql`.

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
