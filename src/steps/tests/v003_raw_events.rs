//! The tests of `sql/V003__raw_events.sql`.

use super::*;

#[test]
fn the_harness_stages_a_row_of_every_kind() -> Res {
    let mut h = Steps::new()?;
    for e in REGISTRY {
        h.event(e.kind, &[])?;
    }
    h.run_through("raw_events")?;
    assert_eq!(
        h.rows("SELECT count(*), count(DISTINCT source_kind) FROM raw_events")?,
        vec![format!("{n} | {n}", n = REGISTRY.len())]
    );
    Ok(())
}

#[test]
fn raw_events_take_the_final_role_the_kind_traits_and_a_row_identity() -> Res {
    let mut h = Steps::new()?;
    legacy_and_aborted_import(&h)?;
    h.event(WEBUI, &[("session_id", "cli:direct")])?;
    h.event(CLI, &[])?;
    h.event(OUTBOUND, &[("session_id", "s1")])?;
    h.run_through("raw_events")?;
    assert_eq!(
        h.rows(
            "SELECT source_path, source_role, session_store, message_store, turn_copy,
                        prompt_copy, nanoclaw
                 FROM raw_events ORDER BY source_path"
        )?,
        vec![
            ".nanobot/sessions/ws1/sessions.sqlite3 | primary | db | true | NULL | false | NULL",
            ".nanobot/sessions/ws2/Y2xpOmRpcmVjdA.jsonl | primary | jsonl | true | NULL | false | NULL",
            ".nanobot/sessions/ws2/cli_direct.jsonl | secondary | jsonl | true | NULL | false | NULL",
            ".nanobot/workspace/sessions/cli_direct.jsonl | secondary | jsonl | true | NULL | false | NULL",
            "nanobot.cli_history | secondary | NULL | false | NULL | true | NULL",
            "nanobot.webui_transcript | secondary | NULL | false | webui | false | NULL",
            "nanoclaw.outbound | primary | NULL | true | NULL | false | outbound",
        ]
    );
    // the legacy copy and the database are one session
    assert_eq!(
        h.rows(
            "SELECT count(DISTINCT session_uid) FROM raw_events
                 WHERE source_path IN ('.nanobot/sessions/ws1/sessions.sqlite3',
                                       '.nanobot/workspace/sessions/cli_direct.jsonl')"
        )?,
        vec!["1"]
    );
    assert_eq!(
        h.rows("SELECT count(*) = count(DISTINCT x_row) FROM raw_events")?,
        vec!["true"]
    );
    Ok(())
}
