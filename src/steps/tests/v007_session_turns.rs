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
