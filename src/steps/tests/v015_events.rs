//! The tests of `sql/V015__events.sql`.

use super::*;

#[test]
fn ordinal_is_unique_and_in_time_order_within_a_session() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // a database row without a time takes the time of the row before it
    // (`hello`, seq 2, whose record it is part of)
    h.event(
        DB,
        &[
            ("session_id", "websocket:c1"),
            ("x_namespace", "ws1"),
            ("source_path", WS1_DB),
            ("source_line", "5"),
            ("seq", "2"),
            ("x_sub", "1"),
            ("text", "untimed"),
        ],
    )?;
    // the session-level row comes first, whatever its time
    h.event(
        DB,
        &[
            ("session_id", "websocket:c1"),
            ("x_namespace", "ws1"),
            ("source_path", WS1_DB),
            ("x_group", &group(Group::Session)),
            ("text", "session start"),
            ("ts_local", "2026-03-02 12:00:00"),
        ],
    )?;
    // a WebUI row only the transcript has falls in by its time
    webui(
        &h,
        "1",
        "t1",
        "assistant",
        "only here",
        "2026-03-02 10:00:45",
    )?;
    h.run_through("events")?;
    assert_eq!(
        h.rows(
            "SELECT o.ordinal, e.text, CAST(e.timestamp_utc AS TIMESTAMPTZ)
                 FROM ordinals o JOIN events_linked e USING (x_row)
                 WHERE e.session_id = 'websocket:c1' ORDER BY o.ordinal"
        )?,
        vec![
            "1 | session start | 2026-03-02 12:00:00+00",
            "2 | hi | 2026-03-02 10:00:00+00",
            "3 | hello | 2026-03-02 10:00:30+00",
            "4 | untimed | NULL",
            "5 | only here | 2026-03-02 10:00:45+00",
            "6 | again | 2026-03-02 11:00:00+00",
            "7 | sure | 2026-03-02 11:00:20+00",
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT count(*) = count(DISTINCT (e.session_uid, o.ordinal)) AND min(o.ordinal) = 1
                        AND max(o.ordinal) = count(*)
                 FROM ordinals o JOIN events_linked e USING (x_row)"
        )?,
        vec!["true"]
    );
    Ok(())
}
