//! The tests of `sql/V013__nanoclaw_losses.sql`.

use super::*;

#[test]
fn a_folder_without_catalog_row_and_a_catalog_session_without_folder_are_losses() -> Res {
    let mut h = Steps::new()?;
    let catalog = |id: &str| {
        let native =
            format!(r#"{{"table":"sessions","record":{{"id":"{id}","agent_group_id":"ag1"}}}}"#);
        h.event(
            CATALOG,
            &[
                ("session_id", id),
                ("x_group", &group(Group::Session)),
                ("native", &native),
            ],
        )
    };
    h.source(CATALOG, "data/v2.db", &[])?;
    catalog("s1")?;
    catalog("s3")?;
    for id in ["s1", "s2"] {
        let path = format!("data/v2-sessions/ag1/{id}/inbound.db");
        h.source(INBOUND, &path, &[])?;
        h.event(INBOUND, &[("session_id", id), ("source_path", &path)])?;
    }
    h.run_through("nanoclaw_losses")?;
    assert_eq!(
        h.rows(
            "SELECT kind, code, session_id, source_path FROM diagnostics
                    WHERE code IN ('catalog_row_missing', 'session_folder_missing') ORDER BY code"
        )?,
        vec![
            // s2 has a folder but no catalog row
            "loss | catalog_row_missing | s2 | data/v2-sessions/ag1/s2",
            // s3 has a catalog row but no folder
            "loss | session_folder_missing | s3 | data/v2-sessions/ag1/s3",
        ]
    );
    Ok(())
}

#[test]
fn session_folders_without_a_central_db_are_one_loss_per_install() -> Res {
    let mut h = Steps::new()?;
    // install `pg`: two session folders and no data/v2.db (its central
    // database in PostgreSQL); install `sq`: v2.db found, one folder without
    // its catalog row
    h.source(CATALOG, "sq/data/v2.db", &[("instance", "sq")])?;
    for (instance, id) in [("pg", "s1"), ("pg", "s2"), ("sq", "s3")] {
        let path = format!("{instance}/data/v2-sessions/ag1/{id}/inbound.db");
        h.source(INBOUND, &path, &[("instance", instance)])?;
        h.event(
            INBOUND,
            &[
                ("session_id", id),
                ("source_path", &path),
                ("instance", instance),
            ],
        )?;
    }
    h.run_through("nanoclaw_losses")?;
    assert_eq!(
        h.rows(
            "SELECT instance, code, coalesce(session_id, '-'), source_path, message FROM diagnostics
                    WHERE code IN ('catalog_row_missing', 'central_db_absent') ORDER BY ALL"
        )?,
        vec![
            "pg | central_db_absent | - | pg/data/v2.db | central database absent beside \
             data/v2-sessions/ (2 session folders): an install whose NANOCLAW_DB_URL names a \
             PostgreSQL database keeps its catalog there, which nanoload does not read (or \
             data/v2.db was not copied); every session's catalog row (agent group name, \
             provider, status, route) is lost, the agent group taken from the path",
            "sq | catalog_row_missing | s3 | sq/data/v2-sessions/ag1/s3 | session folder has no \
             row in data/v2.db sessions: its rows are kept, the agent group taken from the path",
        ]
    );
    Ok(())
}

#[test]
fn declared_losses_are_one_per_session_and_kind_where_they_apply() -> Res {
    let mut h = Steps::new()?;
    let path = "data/v2-sessions/ag1/s1/outbound.db";
    // s1: a question card and two state rows; s2: one message
    h.event(
        OUTBOUND,
        &[
            ("session_id", "s1"),
            ("source_path", path),
            (
                "native",
                r#"{"table":"messages_out","content_type":"ask_question","question_id":"q"}"#,
            ),
        ],
    )?;
    for table in ["session_state", "container_state"] {
        h.event(
            OUTBOUND,
            &[
                ("session_id", "s1"),
                ("source_path", path),
                ("x_group", &group(Group::State)),
                ("native", &format!(r#"{{"table":"{table}"}}"#)),
            ],
        )?;
    }
    h.event(
        INBOUND,
        &[
            ("session_id", "s2"),
            ("source_path", "data/v2-sessions/ag1/s2/inbound.db"),
            ("native", r#"{"table":"messages_in"}"#),
        ],
    )?;
    h.run_through("nanoclaw_losses")?;
    assert_eq!(
            h.rows("SELECT session_id, code, source_path FROM diagnostics
                    WHERE code NOT IN ('catalog_row_missing', 'session_folder_missing', 'central_db_absent')
                    ORDER BY ALL")?,
            vec![
                "s1 | lineage_unknown | data/v2-sessions/ag1/s1",
                "s1 | model_rendering_absent | data/v2-sessions/ag1/s1",
                "s1 | questions_deleted | data/v2-sessions/ag1/s1",
                "s1 | state_without_history | data/v2-sessions/ag1/s1",
                "s1 | usage_absent | data/v2-sessions/ag1/s1",
                "s2 | lineage_unknown | data/v2-sessions/ag1/s2",
                "s2 | model_rendering_absent | data/v2-sessions/ag1/s2",
                "s2 | usage_absent | data/v2-sessions/ag1/s2",
            ]
        );
    assert_eq!(
        h.rows("SELECT message FROM diagnostics WHERE code = 'state_without_history'")?,
        vec![
            "mutable state without history: only the latest container_state, session_state values exist (earlier continuations, routes and acks are overwritten)"
        ]
    );
    Ok(())
}

/// A session database without its sibling, and a continuation whose
/// provider's transcript is not among the install's stores, are losses
/// derived from `sources` (each store reads only its own files): a Claude
/// Code continuation is backed by `<agent group>/.claude-shared/projects/*/
/// <id>.jsonl` or a rotated `<id>.jsonl.rotated-*` of its agent group, a
/// Codex one by a rollout `…/rollout-*-<id>.jsonl` of its agent group's
/// CODEX_HOME, an OpenCode one by the session folder's `opencode.db`; a
/// subagent file, another agent group's or another install's file backs
/// none, and another provider's transcripts are never read.
#[test]
fn a_session_database_without_its_sibling_and_a_continuation_without_its_transcript_are_losses()
-> Res {
    let mut h = Steps::new()?;
    let ag = "data/v2-sessions/ag1";
    let continuation = |session: &str, provider: &str, id: &str| {
        let path = format!("{ag}/{session}/outbound.db");
        let native = format!(
            r#"{{"table":"session_state","agent_group_id":"ag1","record":{{"key":"continuation:{provider}","value":"{id}"}},"continuation":{{"provider":"{provider}","id":"{id}"}}}}"#
        );
        h.event(
            OUTBOUND,
            &[
                ("session_id", session),
                ("source_path", &path),
                ("x_group", &group(Group::State)),
                ("native", &native),
            ],
        )
    };
    // s1: both databases; each continuation backed
    // s2: inbound.db alone; s3: outbound.db alone, no continuation backed
    for (kind, path) in [
        (INBOUND, "s1/inbound.db"),
        (OUTBOUND, "s1/outbound.db"),
        (
            "nanoclaw.opencode_db",
            "s1/opencode-xdg/opencode/opencode.db",
        ),
        (INBOUND, "s2/inbound.db"),
        (OUTBOUND, "s3/outbound.db"),
        (
            "nanoclaw.codex_rollout",
            ".codex-shared/sessions/2026/12/03/rollout-2026-12-03T03-27-55-t1.jsonl",
        ),
        (
            TRANSCRIPT,
            ".claude-shared/projects/-workspace-agent/c1.jsonl",
        ),
        (
            TRANSCRIPT,
            ".claude-shared/projects/-workspace-agent/c2.jsonl.rotated-1772719200000",
        ),
        (
            TRANSCRIPT,
            ".claude-shared/projects/-workspace-agent/c9/subagents/agent-a1.jsonl",
        ),
    ] {
        h.source(kind, &format!("{ag}/{path}"), &[])?;
    }
    // another agent group's and another install's files back nothing here
    h.source(
        TRANSCRIPT,
        "data/v2-sessions/ag2/.claude-shared/projects/-workspace-agent/c8.jsonl",
        &[],
    )?;
    for (kind, path) in [
        (
            "nanoclaw.codex_rollout",
            "other/data/v2-sessions/ag1/.codex-shared/sessions/2026/12/03/rollout-2026-12-03T03-27-55-t8.jsonl",
        ),
        (
            "nanoclaw.opencode_db",
            "other/data/v2-sessions/ag1/s3/opencode-xdg/opencode/opencode.db",
        ),
    ] {
        h.source(kind, path, &[("instance", "other")])?;
    }
    continuation("s1", "claude", "c1")?;
    continuation("s1", "codex", "t1")?;
    continuation("s1", "opencode", "o1")?;
    h.source(OUTBOUND, &format!("{ag}/s4/outbound.db"), &[])?;
    h.source(INBOUND, &format!("{ag}/s4/inbound.db"), &[])?;
    continuation("s4", "claude", "c2")?;
    continuation("s3", "claude", "c9")?;
    continuation("s3", "claude-old", "c8")?;
    continuation("s3", "codex", "t8")?;
    continuation("s3", "opencode", "o3")?;
    // a loss the stage holds already (staged from a ledger whose build's
    // extractor declared it) is not declared twice
    h.diagnostic(&[
        ("kind", "loss"),
        ("agent", "nanoclaw"),
        ("instance", "."),
        ("source_path", "data/v2-sessions/ag1/s2/outbound.db"),
        (
            "message",
            "outbound.db missing (both session databases are created with the session): \
             the session's outbound messages, acks and state are lost",
        ),
        ("session_id", "s2"),
        ("code", "outbound_missing"),
    ])?;
    h.run_through("nanoclaw_losses")?;
    assert_eq!(
        h.rows(
            "SELECT kind, agent, instance, coalesce(session_id, '-'), source_path,
                    coalesce(CAST(source_line AS VARCHAR), '-'), code, message FROM diagnostics
             WHERE code IN ('inbound_missing', 'outbound_missing', 'transcript_missing')
             ORDER BY ALL"
        )?,
        vec![
            "loss | nanoclaw | . | s2 | data/v2-sessions/ag1/s2/outbound.db | - | outbound_missing | \
             outbound.db missing (both session databases are created with the session): the \
             session's outbound messages, acks and state are lost",
            "loss | nanoclaw | . | s3 | data/v2-sessions/ag1/s3/inbound.db | - | inbound_missing | \
             inbound.db missing (both session databases are created with the session): the \
             session's inbound messages and deliveries are lost",
            "loss | nanoclaw | . | s3 | data/v2-sessions/ag1/s3/outbound.db | - | transcript_missing | \
             backing transcript of continuation:claude c9 unavailable (no <agent \
             group>/.claude-shared/projects/*/<id>.jsonl)",
            "loss | nanoclaw | . | s3 | data/v2-sessions/ag1/s3/outbound.db | - | transcript_missing | \
             backing transcript of continuation:claude-old c8 unavailable (the claude-old \
             provider's transcripts are not read)",
            "loss | nanoclaw | . | s3 | data/v2-sessions/ag1/s3/outbound.db | - | transcript_missing | \
             backing transcript of continuation:codex t8 unavailable (no <agent \
             group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl)",
            "loss | nanoclaw | . | s3 | data/v2-sessions/ag1/s3/outbound.db | - | transcript_missing | \
             backing transcript of continuation:opencode o3 unavailable (no \
             <session>/opencode-xdg/opencode/opencode.db)",
        ]
    );
    Ok(())
}

/// A catalog session's folder is found by its id's bytes: `_` in an id is
/// a character, not a wildcard, so the folder of `sX1` is not taken for
/// that of `s_1`, whose folder is gone.
#[test]
fn a_session_id_with_an_underscore_is_matched_by_its_own_folder_only() -> Res {
    let mut h = Steps::new()?;
    h.source(CATALOG, "data/v2.db", &[])?;
    for id in ["s_1", "sX1"] {
        let native =
            format!(r#"{{"table":"sessions","record":{{"id":"{id}","agent_group_id":"ag1"}}}}"#);
        h.event(
            CATALOG,
            &[
                ("session_id", id),
                ("x_group", &group(Group::Session)),
                ("native", &native),
            ],
        )?;
    }
    let path = "data/v2-sessions/ag1/sX1/inbound.db";
    h.source(INBOUND, path, &[])?;
    h.event(INBOUND, &[("session_id", "sX1"), ("source_path", path)])?;
    h.run_through("nanoclaw_losses")?;
    assert_eq!(
        h.rows(
            "SELECT code, session_id, source_path FROM diagnostics
                    WHERE code IN ('catalog_row_missing', 'session_folder_missing') ORDER BY ALL"
        )?,
        vec!["session_folder_missing | s_1 | data/v2-sessions/ag1/s_1"]
    );
    Ok(())
}
