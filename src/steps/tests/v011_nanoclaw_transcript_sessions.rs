//! The tests of `sql/V011__nanoclaw_transcript_sessions.sql`.

use super::*;

#[test]
fn a_transcript_belongs_to_the_session_naming_its_claude_continuation() -> Res {
    let mut h = Steps::new()?;
    nanoclaw_session(&h)?;
    // a Codex thread backs its session as a Claude Code transcript does;
    // another provider's continuation backs none
    for (session, provider, id) in [("s2", "codex", "c2"), ("s3", "gemini", "c5")] {
        h.event(
            OUTBOUND,
            &[
                ("session_id", session),
                ("x_group", &group(Group::State)),
                (
                    "native",
                    &format!(
                        r#"{{"table":"session_state","continuation":{{"provider":"{provider}","id":"{id}"}}}}"#
                    ),
                ),
            ],
        )?;
    }
    // c3 resumed c1 (its first line copied from c1, sessionId c1), c4
    // resumed c3; c9 is named by no session. The line u1 with usage of
    // (m, r) in c1 and copied into c3 (the copy is dropped, c1 keeps the
    // usage) and (m9, r) twice in c9 (the larger keeps it).
    let usage = |path: &str, line: &str, native: &str| -> Res {
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("source_path", path),
                ("source_line", line),
                ("native", native),
            ],
        )
    };
    let u = r#""usage":{"input_tokens":1,"output_tokens":9}"#;
    usage(
        "p/c1.jsonl",
        "5",
        &format!(
            r#"{{"transcript_id":"c1","sessionId":"c1","uuid":"u1","message_id":"m","requestId":"r",{u}}}"#
        ),
    )?;
    usage(
        "p/c3.jsonl",
        "1",
        &format!(
            r#"{{"transcript_id":"c3","sessionId":"c1","uuid":"u1","message_id":"m","requestId":"r",{u}}}"#
        ),
    )?;
    usage(
        "p/c4.jsonl",
        "1",
        r#"{"transcript_id":"c4","sessionId":"c3"}"#,
    )?;
    usage(
        "p/c9.jsonl",
        "1",
        &format!(
            r#"{{"transcript_id":"c9","sessionId":"c9","message_id":"m9","requestId":"r",{u}}}"#
        ),
    )?;
    usage(
        "p/c9.jsonl",
        "2",
        r#"{"transcript_id":"c9","sessionId":"c9","message_id":"m9","requestId":"r","usage":{"input_tokens":1,"output_tokens":20}}"#,
    )?;
    h.run_through("nanoclaw_transcript_sessions")?;
    assert_eq!(
        h.rows(
            "SELECT instance, continuation_id, session_id FROM nc_transcript_sessions ORDER BY ALL"
        )?,
        vec![". | c1 | s1", ". | c2 | s2", ". | c3 | s1", ". | c4 | s1"]
    );
    assert_eq!(
        h.rows(
            "SELECT source_path, source_line FROM nc_rows
                 WHERE x_row IN (SELECT x_row FROM nc_usage_repeats) ORDER BY ALL"
        )?,
        vec!["p/c9.jsonl | 1"]
    );
    // c3's line 1 is c1's line u1 copied into the resumed file: one row
    // (c1's, the file the line names), the copy dropped as a duplicate
    assert_eq!(
            h.rows(
                "SELECT r.source_path, r.source_line, d.reason FROM dropped_rows d JOIN nc_rows r USING (x_row)"
            )?,
            vec!["p/c3.jsonl | 1 | copy of a Claude Code line another transcript file of the session holds"]
        );
    Ok(())
}

/// An exchange archive joins the session whose continuation names its
/// thread, else the only session of its folder's agent group; its rows a
/// primary holds (the thread's transcript, the session's messages; a text
/// nanoclaw cut to 2000 characters and `...` by prefix) are dropped, its
/// header where the thread's transcript is read; the rest stays.
#[test]
fn an_exchange_archive_joins_its_session_and_drops_what_a_primary_holds() -> Res {
    let mut h = Steps::new()?;
    h.event(
        CATALOG,
        &[
            ("x_group", &group(Group::State)),
            (
                "native",
                r#"{"table":"agent_groups","record":{"id":"ag1","folder":"main"}}"#,
            ),
        ],
    )?;
    h.event(
        CATALOG,
        &[
            ("session_id", "s1"),
            ("x_group", &group(Group::Session)),
            (
                "native",
                r#"{"table":"sessions","record":{"id":"s1","agent_group_id":"ag1"}}"#,
            ),
        ],
    )?;
    h.event(
        OUTBOUND,
        &[
            ("session_id", "s1"),
            ("x_group", &group(Group::State)),
            (
                "native",
                r#"{"table":"session_state","continuation":{"provider":"codex","id":"c2"}}"#,
            ),
        ],
    )?;
    h.event(
        INBOUND,
        &[
            ("session_id", "s1"),
            ("turn_type", "user"),
            ("text", "asked in the chat"),
            ("native", r#"{"table":"messages_in"}"#),
        ],
    )?;
    let long = "x".repeat(2100);
    let cut = format!("{}...", &long[..2000]);
    for (line, turn_type, text) in [("1", "user", "hi"), ("2", "assistant", long.as_str())] {
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("source_path", "rollout-c2.jsonl"),
                ("source_line", line),
                ("turn_type", turn_type),
                ("text", text),
                ("native", r#"{"transcript_id":"c2"}"#),
            ],
        )?;
    }
    // thread c2 (named by s1's continuation) and c9 (named by none)
    let archive = |path: &str, line: &str, turn_type: &str, text: &str, native: &str| {
        h.event(
            ARCHIVE,
            &[
                ("x_group", &group(Group::Transcript)),
                ("source_path", path),
                ("source_line", line),
                ("turn_type", turn_type),
                ("text", text),
                ("native", native),
            ],
        )
    };
    let a = "groups/main/conversations/2026-12-03-codex-c2.md";
    let b = "groups/main/conversations/2026-12-03-codex-c9.md";
    let c2 = r#"{"transcript_id":"c2","folder":"main","truncated":false}"#;
    let c9 = r#"{"transcript_id":"c9","folder":"main","truncated":false}"#;
    archive(
        a,
        "1",
        "system",
        "exchange archive: provider=codex thread=c2",
        r#"{"transcript_id":"c2","folder":"main","title":"Codex Conversation"}"#,
    )?;
    archive(a, "10", "user", " hi\n", c2)?;
    archive(
        a,
        "12",
        "assistant",
        &cut,
        r#"{"transcript_id":"c2","folder":"main","truncated":true}"#,
    )?;
    archive(a, "20", "user", "only in the archive", c2)?;
    archive(
        b,
        "1",
        "system",
        "exchange archive: provider=codex thread=c9",
        r#"{"transcript_id":"c9","folder":"main","title":"Codex Conversation"}"#,
    )?;
    archive(b, "10", "user", "asked in the chat", c9)?;
    archive(b, "12", "assistant", "a lost answer", c9)?;
    h.run_through("nanoclaw_transcript_sessions")?;
    assert_eq!(
        h.rows(
            "SELECT source_path, thread, agent_group_id, session_id, joined_by
             FROM nc_archive_sessions ORDER BY ALL"
        )?,
        vec![
            format!("{a} | c2 | ag1 | s1 | continuation"),
            format!("{b} | c9 | ag1 | s1 | folder"),
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT r.source_path, r.source_line, d.reason FROM dropped_rows d JOIN nc_rows r USING (x_row)
             WHERE r.nanoclaw = 'archive' ORDER BY ALL"
        )?,
        vec![
            format!("{a} | 1 | exchange archive header of a thread whose transcript is read"),
            format!("{a} | 10 | exchange archive copy of a message the transcript of its thread or the messages of its session hold"),
            format!("{a} | 12 | exchange archive copy of a message the transcript of its thread or the messages of its session hold"),
            format!("{b} | 10 | exchange archive copy of a message the transcript of its thread or the messages of its session hold"),
        ]
    );
    Ok(())
}
