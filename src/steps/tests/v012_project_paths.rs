//! The tests of `sql/V012__project_paths.sql`.

use super::*;

#[test]
fn projects_come_from_the_session_stores_and_the_agent_group() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE stage_events SET project_path = '/home/u/proj' WHERE source_line = 2")?;
    webui(
        &h,
        "1",
        "t1",
        "user",
        "from the webui",
        "2026-03-02 10:00:01",
    )?;
    nanoclaw_session(&h)?;
    h.run_through("project_paths")?;
    assert_eq!(
        h.rows("SELECT session_uid, project_path FROM session_projects")?,
        vec![format!("{} | /home/u/proj", uid("ws1", "websocket:c1"))]
    );
    assert_eq!(
        h.rows("SELECT instance, agent_group_id, folder FROM nc_folders")?,
        vec![". | ag1 | main"]
    );
    Ok(())
}
