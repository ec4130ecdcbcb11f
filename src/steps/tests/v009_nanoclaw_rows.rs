//! The tests of `sql/V009__nanoclaw_rows.sql`.

use super::*;

#[test]
fn nanoclaw_rows_are_the_nanoclaw_events_with_native_parsed() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    nanoclaw_session(&h)?;
    h.run_through("nanoclaw_rows")?;
    assert_eq!(
        h.rows("SELECT j->>'table', count(*) FROM nc_rows GROUP BY ALL ORDER BY ALL")?,
        vec![
            "agent_groups | 1",
            "delivered | 2",
            "messages_out | 1",
            "session_state | 1",
            // the transcript row's native has no table
            "NULL | 1",
        ]
    );
    Ok(())
}
