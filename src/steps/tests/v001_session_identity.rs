//! The tests of `sql/V001__session_identity.sql`.

use super::*;

#[test]
fn session_identity_keeps_two_namespaces_apart_and_warns_on_an_ambiguous_key() -> Res {
    let mut h = Steps::new()?;
    for ns in ["ws1", "ws2"] {
        let path = format!(".nanobot/sessions/{ns}/sessions.sqlite3");
        h.event(
            DB,
            &[
                ("session_id", "cli:direct"),
                ("x_namespace", ns),
                ("source_path", &path),
            ],
        )?;
    }
    h.event(
        DB,
        &[
            ("session_id", "websocket:c1"),
            ("x_namespace", "ws1"),
            ("source_path", WS1_DB),
        ],
    )?;
    // WebUI rows name a key, not a namespace
    h.event(
        WEBUI,
        &[("session_id", "websocket:c1"), ("source_path", WEBUI_C1)],
    )?;
    h.event(
        WEBUI,
        &[
            ("session_id", "cli:direct"),
            ("source_path", ".nanobot/webui/cli.jsonl"),
        ],
    )?;
    h.run_through("session_identity")?;
    // two workspaces' cli:direct are two sessions
    assert_eq!(
        h.rows(
            "SELECT namespace, session_uid FROM session_identity
                 WHERE is_store AND session_id = 'cli:direct' ORDER BY namespace"
        )?,
        vec![
            format!("ws1 | {}", uid("ws1", "cli:direct")),
            format!("ws2 | {}", uid("ws2", "cli:direct")),
        ]
    );
    // the one namespace holding the key is the WebUI row's
    assert_eq!(
        h.rows(
            "SELECT namespace, session_uid FROM session_identity
                 WHERE NOT is_store AND session_id = 'websocket:c1'"
        )?,
        vec![format!("ws1 | {}", uid("ws1", "websocket:c1"))]
    );
    // two namespaces hold cli:direct: '' and one warning
    assert_eq!(
        h.rows(
            "SELECT namespace, unresolved FROM session_identity
                 WHERE NOT is_store AND session_id = 'cli:direct'"
        )?,
        vec![" | true"]
    );
    assert_eq!(
        h.rows("SELECT kind, code, session_id, source_path FROM diagnostics")?,
        vec!["warning | namespace_unresolved | cli:direct | .nanobot/webui/cli.jsonl"]
    );
    Ok(())
}
