//! The tests of `sql/V008__deduped_secondary_copies.sql`.

use super::*;

#[test]
fn a_turn_erased_by_new_and_asked_again_mirrors_nothing_and_keeps_its_rows() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // after /new the session holds only the question asked again; nanobot
    // stamped the turn when it saved it
    session_rows(
        &h,
        &[
            (1, "user", "status?", "2026-03-02 10:20:40"),
            (2, "tool_use", "call_0", "2026-03-02 10:20:40"),
            (3, "tool_result", "call_0", "2026-03-02 10:20:40"),
            (4, "assistant", "all green", "2026-03-02 10:20:40"),
        ],
    )?;
    // the WebUI transcript still has the erased turn (the same question,
    // the same reused call id, the same answer, twenty minutes earlier),
    // the /new, then the new turn
    for (line, turn, turn_type, what, utc) in [
        ("1", "t1", "user", "status?", "2026-03-02 10:00:00"),
        ("2", "t1", "tool_use", "call_0", "2026-03-02 10:00:20"),
        ("3", "t1", "tool_result", "call_0", "2026-03-02 10:00:21"),
        ("4", "t1", "assistant", "all green", "2026-03-02 10:00:30"),
        ("5", "tn", "user", "/new", "2026-03-02 10:10:00"),
        ("6", "t2", "user", "status?", "2026-03-02 10:20:00"),
        ("7", "t2", "tool_use", "call_0", "2026-03-02 10:20:20"),
        ("8", "t2", "tool_result", "call_0", "2026-03-02 10:20:21"),
        ("9", "t2", "assistant", "all green", "2026-03-02 10:20:40"),
    ] {
        let tool = turn_type.starts_with("tool");
        h.event(
            WEBUI,
            &[
                ("session_id", "websocket:c1"),
                ("source_path", WEBUI_C1),
                ("source_line", line),
                ("x_turn", turn),
                ("turn_type", turn_type),
                ("text", if tool { "=NULL" } else { what }),
                ("x_match", if tool { "=NULL" } else { what }),
                ("tool_use_id", if tool { what } else { "=NULL" }),
                ("ts_utc", utc),
            ],
        )?;
    }
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        h.rows(
            "SELECT c.copy_turn, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
        )?,
        vec!["turn:t1 | NULL", "turn:t2 | 1", "turn:tn | NULL"]
    );
    assert_eq!(
        dropped(&h, WEBUI_C1)?,
        vec![
            "6 | same text in the session turn",
            "7 | same tool call in the session turn",
            "8 | same tool call in the session turn",
            "9 | same text in the session turn",
        ]
    );
    Ok(())
}

/// A WebUI record of `websocket:c1`: a user, assistant or tool row (the
/// tool id given as its text) of transcript turn `turn`.
fn webui_row(h: &Steps, line: &str, turn: &str, turn_type: &str, what: &str, utc: &str) -> Res {
    let tool = turn_type.starts_with("tool");
    h.event(
        WEBUI,
        &[
            ("session_id", "websocket:c1"),
            ("source_path", WEBUI_C1),
            ("source_line", line),
            ("x_turn", turn),
            ("turn_type", turn_type),
            ("text", if tool { "=NULL" } else { what }),
            ("x_match", if tool { "=NULL" } else { what }),
            ("tool_use_id", if tool { what } else { "=NULL" }),
            ("ts_utc", utc),
        ],
    )
}

#[test]
fn a_copy_turn_that_ended_before_the_session_turn_began_mirrors_nothing_without_a_recorded_new()
-> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // the session was cleared without the transcript recording a /new (a
    // WebSocket client other than the WebUI sent it: nanobot records only
    // the WebUI's messages), and holds only the question asked again
    session_rows(
        &h,
        &[
            (1, "user", "status?", "2026-03-02 10:20:00"),
            (2, "tool_use", "call_0", "2026-03-02 10:20:40"),
            (3, "tool_result", "call_0", "2026-03-02 10:20:40"),
            (4, "assistant", "all green", "2026-03-02 10:20:40"),
        ],
    )?;
    // the erased turn (the same words, the same reused call id, the same
    // answer) ended twenty minutes before the session's turn began: rows
    // minutes apart are never copies
    for (line, turn, turn_type, what, utc) in [
        ("1", "t1", "user", "status?", "2026-03-02 10:00:00"),
        ("2", "t1", "tool_use", "call_0", "2026-03-02 10:00:20"),
        ("3", "t1", "tool_result", "call_0", "2026-03-02 10:00:21"),
        ("4", "t1", "assistant", "all green", "2026-03-02 10:00:30"),
        ("5", "t2", "user", "status?", "2026-03-02 10:20:00"),
        ("6", "t2", "tool_use", "call_0", "2026-03-02 10:20:20"),
        ("7", "t2", "tool_result", "call_0", "2026-03-02 10:20:21"),
        ("8", "t2", "assistant", "all green", "2026-03-02 10:20:40"),
    ] {
        webui_row(&h, line, turn, turn_type, what, utc)?;
    }
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        h.rows(
            "SELECT c.copy_turn, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
        )?,
        vec!["turn:t1 | NULL", "turn:t2 | 1"]
    );
    assert_eq!(
        dropped(&h, WEBUI_C1)?,
        vec![
            "5 | same text in the session turn",
            "6 | same tool call in the session turn",
            "7 | same tool call in the session turn",
            "8 | same text in the session turn",
        ]
    );
    Ok(())
}

#[test]
fn a_message_queued_behind_a_running_turn_still_mirrors_the_turn_that_answered_it() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // the second question arrived at 10:01 while the first turn ran; nanobot
    // took it up at 10:03, when the first turn had ended
    session_rows(
        &h,
        &[
            (1, "user", "first?", "2026-03-02 10:00:00"),
            (2, "assistant", "one", "2026-03-02 10:02:50"),
            (3, "user", "second?", "2026-03-02 10:03:00"),
            (4, "tool_use", "call_7", "2026-03-02 10:03:40"),
            (5, "tool_result", "call_7", "2026-03-02 10:03:40"),
            (6, "assistant", "two", "2026-03-02 10:03:40"),
        ],
    )?;
    for (line, turn, turn_type, what, utc) in [
        ("1", "t1", "user", "first?", "2026-03-02 10:00:00"),
        ("2", "t1", "assistant", "one", "2026-03-02 10:02:50"),
        ("3", "t2", "user", "second?", "2026-03-02 10:01:00"),
        ("4", "t2", "tool_use", "call_7", "2026-03-02 10:03:20"),
        ("5", "t2", "tool_result", "call_7", "2026-03-02 10:03:21"),
        ("6", "t2", "assistant", "two", "2026-03-02 10:03:40"),
    ] {
        webui_row(&h, line, turn, turn_type, what, utc)?;
    }
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        h.rows(
            "SELECT c.copy_turn, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
        )?,
        vec!["turn:t1 | 1", "turn:t2 | 2"]
    );
    assert_eq!(
        dropped(&h, WEBUI_C1)?.len(),
        6,
        "every record is a copy of the session's"
    );
    Ok(())
}

#[test]
fn a_copy_turn_mirrors_the_session_turn_that_contains_it() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    webui(&h, "1", "t1", "user", "hi", "2026-03-02 10:00:01")?;
    webui(&h, "2", "t1", "assistant", "hello", "2026-03-02 10:00:25")?;
    webui(&h, "3", "t2", "user", "again", "2026-03-02 11:00:02")?;
    // a turn of a chat /new erased: it mirrors nothing
    webui(&h, "4", "t3", "user", "erased", "2026-03-02 12:30:00")?;
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        h.rows(
            "SELECT source_path, turn_no, turn_start, turn_end FROM session_turns ORDER BY turn_no"
        )?,
        vec![
            format!("{WS1_DB} | 1 | 2026-03-02 10:00:00 | 2026-03-02 10:00:30"),
            format!("{WS1_DB} | 2 | 2026-03-02 11:00:00 | 2026-03-02 11:00:20"),
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT c.copy_turn, c.t0, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
        )?,
        vec![
            "turn:t1 | 2026-03-02 10:00:01 | 1",
            "turn:t2 | 2026-03-02 11:00:02 | 2",
            "turn:t3 | 2026-03-02 12:30:00 | NULL",
        ]
    );
    assert_eq!(
        h.rows("SELECT DISTINCT offset_known FROM copy_rows")?,
        vec!["true"]
    );
    Ok(())
}

#[test]
fn a_webui_copy_of_a_user_message_in_its_turn_is_dropped_other_text_kept() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    webui(&h, "1", "t1", "user", "hi", "2026-03-02 10:00:01")?;
    webui(
        &h,
        "2",
        "t1",
        "user",
        "hi, but edited",
        "2026-03-02 10:00:02",
    )?;
    // the same text in the other turn is not this turn's copy
    webui(&h, "3", "t2", "user", "hi", "2026-03-02 11:00:02")?;
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        dropped(&h, WEBUI_C1)?,
        vec!["1 | same text in the session turn"]
    );
    assert_eq!(
        h.rows(&format!(
            "SELECT source_line, text FROM events_deduped WHERE source_path = {} ORDER BY 1",
            quote(WEBUI_C1)
        ))?,
        vec!["2 | hi, but edited", "3 | hi"]
    );
    Ok(())
}

#[test]
fn cli_history_within_2_s_is_dropped_at_3_s_kept() -> Res {
    const HISTORY: &str = ".nanobot/history/cli_history";
    let mut h = Steps::new()?;
    two_turns(&h)?;
    for (line, ts) in [("1", "2026-03-02 10:00:02"), ("2", "2026-03-02 10:00:03")] {
        h.event(
            CLI,
            &[
                ("source_path", HISTORY),
                ("source_line", line),
                ("turn_type", "user"),
                ("text", "hi"),
                ("x_match", "hi"),
                ("ts_local", ts),
            ],
        )?;
    }
    h.run_through("deduped_secondary_copies")?;
    assert_eq!(
        dropped(&h, HISTORY)?,
        vec!["1 | same text in a session within 2 s (local time)"]
    );
    assert_eq!(
        h.rows(&format!(
            "SELECT source_line FROM events_deduped WHERE source_path = {}",
            quote(HISTORY)
        ))?,
        vec!["2"]
    );
    Ok(())
}
