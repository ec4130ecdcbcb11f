//! The tests of `sql/V014__linked_events.sql`.

use super::*;

#[test]
fn linked_events_fold_deliveries_link_transcripts_and_fill_projects() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE stage_events SET project_path = '/home/u/proj'")?;
    webui(
        &h,
        "1",
        "t1",
        "user",
        "from the webui",
        "2026-03-02 10:00:01",
    )?;
    nanoclaw_session(&h)?;
    h.run_through("linked_events")?;
    let s1 = h.rows("SELECT DISTINCT session_uid FROM events_linked WHERE session_id = 's1'")?;
    assert_eq!(s1.len(), 1, "{s1:?}");
    // the transcript row joins s1 (and its session_uid)
    assert_eq!(
        h.rows(&format!(
            "SELECT session_id, session_uid = {} FROM events_linked WHERE nanoclaw = 'transcript'",
            quote(&s1[0])
        ))?,
        vec!["s1 | true"]
    );
    // m1's delivery rides on its outbound row; m2's stays, marked
    assert_eq!(
        h.rows(
            "SELECT source_kind, text, native::JSON->'delivered'->>'status' FROM events_linked
                 WHERE x_id IS NOT NULL ORDER BY source_kind, x_id"
        )?,
        vec![
            "nanoclaw.inbound | nanoclaw delivered: m2 (outbound row missing) | NULL",
            "nanoclaw.outbound | hello | delivered",
        ]
    );
    // projects: the WebUI row takes its session's, nanoclaw rows their group's
    assert_eq!(
        h.rows(
            "SELECT source_kind, project_path FROM events_linked
                 WHERE turn_copy = 'webui' OR nanoclaw = 'transcript' OR x_id = 'm1'
                 GROUP BY ALL ORDER BY ALL"
        )?,
        vec![
            "nanobot.webui_transcript | /home/u/proj",
            "nanoclaw.claude_transcript | groups/main",
            "nanoclaw.outbound | groups/main",
        ]
    );
    Ok(())
}
