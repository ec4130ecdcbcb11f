//! The tests of `sql/V017__call_attribution.sql`.

use super::*;

/// Each call's session as the step attributes it, before any cost or
/// local time: a call inside a turn's span, and up to 2 s after its answer,
/// is that turn's session; one between turns is no session's.
#[test]
fn each_call_is_attributed_to_the_turn_that_contains_it() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    for utc in [
        "2026-03-02 10:00:20", // inside turn 1
        "2026-03-02 10:00:32", // turn 1's answer + 2 s
        "2026-03-02 10:30:00", // between the turns
        "2026-03-02 11:00:19", // inside turn 2
    ] {
        h.llm_call(&[("source", "user"), ("started_at_ms", &ms(utc))])?;
    }
    h.run_through("call_attribution")?;
    let c1 = uid("ws1", "websocket:c1");
    assert_eq!(
        h.rows("SELECT id, session_id, session_uid FROM llm_attribution ORDER BY id")?,
        vec![
            format!("1 | websocket:c1 | {c1}"),
            format!("2 | websocket:c1 | {c1}"),
            "3 | NULL | NULL".to_string(),
            format!("4 | websocket:c1 | {c1}"),
        ]
    );
    Ok(())
}
