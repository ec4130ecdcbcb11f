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
