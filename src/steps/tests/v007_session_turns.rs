//! The tests of `sql/V007__session_turns.sql`.

use super::*;

#[test]
fn a_turn_ends_at_its_final_answer_and_an_injected_message_starts_a_hidden_turn() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    session_rows(
        &h,
        &[
            // before the first user message: no turn
            (0, "assistant", "welcome", "2026-03-02 09:00:00"),
            (1, "user", "check disk", "2026-03-02 10:00:00"),
            (2, "assistant", "looking", "2026-03-02 10:05:00"),
            (2, "tool_use", "call_0", "2026-03-02 10:05:00"),
            (3, "tool_result", "call_0", "2026-03-02 10:05:00"),
            (4, "assistant", "disk ok", "2026-03-02 10:05:00"),
            // a subagent's result, injected eleven days later, and the
            // answer to it: a hidden turn of its own
            (5, "assistant", "subagent done", "2026-03-13 08:00:00"),
            (6, "assistant", "noted", "2026-03-13 08:00:30"),
            (7, "user", "cron: backup", "2026-03-13 09:00:00"),
            (8, "tool_use", "call_0", "2026-03-13 09:01:00"),
            (9, "tool_result", "call_0", "2026-03-13 09:01:00"),
            (10, "assistant", "backup ok", "2026-03-13 09:01:00"),
            // a helper's result injected into the running turn: the
            // turn goes on to the answer after it
            (11, "system", "subagent result", "2026-03-13 09:04:00"),
            (12, "assistant", "the helper says ok", "2026-03-13 09:05:00"),
        ],
    )?;
    h.run_through("session_turns")?;
    assert_eq!(
        h.rows(
            "SELECT turn_no, turn_start, turn_end, user_match, call_source
                 FROM session_turns ORDER BY turn_no"
        )?,
        vec![
            "1 | 2026-03-02 10:00:00 | 2026-03-02 10:05:00 | check disk | user",
            "2 | 2026-03-13 08:00:00 | 2026-03-13 08:00:30 | NULL | system",
            "3 | 2026-03-13 09:00:00 | 2026-03-13 09:05:00 | cron: backup | cron",
        ]
    );
    assert_eq!(
        h.rows("SELECT seq, turn_no FROM session_messages ORDER BY seq")?,
        vec![
            "0 | 0", "1 | 1", "2 | 1", "3 | 1", "4 | 1", "5 | 2", "6 | 2", "7 | 3", "8 | 3",
            "9 | 3", "10 | 3", "11 | 3", "12 | 3",
        ]
    );
    Ok(())
}

/// Turns are counted per session and store: two sessions of one database
/// with the same seq numbers, and a JSONL store of one of them, each number
/// their own turns from 1 (V007 keys them by `session_pairs.pair_no`).
#[test]
fn turns_are_numbered_per_session_and_store() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    let jsonl = ".nanobot/sessions/ws1/d2Vic29ja2V0OmMx.jsonl";
    // (kind, store path, session, its messages' (turn_type, text) by seq)
    type Store<'a> = (&'a str, &'a str, &'a str, &'a [(&'a str, &'a str)]);
    let messages: [Store; 3] = [
        (
            DB,
            WS1_DB,
            "websocket:c1",
            &[
                ("user", "a"),
                ("assistant", "A"),
                ("user", "b"),
                ("assistant", "B"),
            ],
        ),
        (
            DB,
            WS1_DB,
            "websocket:c2",
            &[("user", "x"), ("assistant", "X")],
        ),
        (
            JSONL,
            jsonl,
            "websocket:c1",
            &[("user", "j"), ("assistant", "J")],
        ),
    ];
    for (kind, path, session, rows) in messages {
        for (seq, (turn_type, text)) in rows.iter().enumerate() {
            let seq = seq.to_string();
            h.event(
                kind,
                &[
                    ("session_id", session),
                    ("x_namespace", "ws1"),
                    ("source_path", path),
                    ("source_line", &seq),
                    ("seq", &seq),
                    ("turn_type", turn_type),
                    ("text", text),
                    ("x_match", text),
                    ("x_record", &format!("{session}/{text}")),
                    (
                        "x_call_source",
                        if *turn_type == "user" {
                            "user"
                        } else {
                            "=NULL"
                        },
                    ),
                    ("ts_local", &format!("2026-03-02 10:0{seq}:00")),
                ],
            )?;
        }
    }
    h.run_through("session_turns")?;
    assert_eq!(
        h.rows(
            "SELECT session_id, source_path, seq, turn_no, user_match FROM session_messages
             ORDER BY session_id, source_path, seq"
        )?,
        vec![
            format!("websocket:c1 | {jsonl} | 0 | 1 | j"),
            format!("websocket:c1 | {jsonl} | 1 | 1 | NULL"),
            format!("websocket:c1 | {WS1_DB} | 0 | 1 | a"),
            format!("websocket:c1 | {WS1_DB} | 1 | 1 | NULL"),
            format!("websocket:c1 | {WS1_DB} | 2 | 2 | b"),
            format!("websocket:c1 | {WS1_DB} | 3 | 2 | NULL"),
            format!("websocket:c2 | {WS1_DB} | 0 | 1 | x"),
            format!("websocket:c2 | {WS1_DB} | 1 | 1 | NULL"),
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT session_id, source_path, turn_no, user_match FROM session_turns
             ORDER BY session_id, source_path, turn_no"
        )?,
        vec![
            format!("websocket:c1 | {jsonl} | 1 | j"),
            format!("websocket:c1 | {WS1_DB} | 1 | a"),
            format!("websocket:c1 | {WS1_DB} | 2 | b"),
            format!("websocket:c2 | {WS1_DB} | 1 | x"),
        ]
    );
    Ok(())
}
