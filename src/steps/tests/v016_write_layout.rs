//! The tests of `sql/V016__write_layout.sql`.

use super::*;

#[test]
fn write_layout_is_the_output_order_with_where_each_text_is() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    nanoclaw_session(&h)?;
    h.event(
        CLI,
        &[
            ("text", "a prompt of no session"),
            ("ts_local", "2026-03-02 09:00:00"),
            ("x_text_len", "5"),
            ("x_native_len", "2"),
        ],
    )?;
    h.run_through("write_layout")?;
    // out_pos runs 1…n in the output order (docs/design.md "Output order")
    assert_eq!(
            h.rows(
                "SELECT out_pos FROM events_plan JOIN plan_sessions USING (sess_id)
                 ORDER BY agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST, ordinal"
            )?,
            (1..=10).map(|i| i.to_string()).collect::<Vec<_>>()
        );
    // stored in that order (the writer reads ranges of out_pos), x_bytes
    // the staged text and native lengths
    assert_eq!(
        h.rows("SELECT list(out_pos) = list_sort(list(out_pos)), sum(x_bytes) FROM events_plan")?,
        vec!["true | 7"]
    );
    // the ids stand for one set of strings each
    assert_eq!(
        h.rows(
            "SELECT count(*) = count(DISTINCT (agent, instance, session_id, session_uid))
                 FROM plan_sessions
                 UNION ALL
                 SELECT count(*) = count(DISTINCT (source_kind, source_role, source_path, load_id))
                 FROM plan_stores"
        )?,
        vec!["true", "true"]
    );
    // events: the contract columns; events_plan: the ones the ids do not
    // stand for, the ids, and where the text is
    let contract = [
        "agent",
        "instance",
        "session_id",
        "parent_session_id",
        "project_path",
        "git_branch",
        "seq",
        "timestamp_utc",
        "timestamp_local",
        "utc_offset_minutes",
        "time_basis",
        "turn_type",
        "model",
        "tool_name",
        "tool_use_id",
        "text",
        "source_kind",
        "source_role",
        "source_path",
        "source_line",
        "native",
        "load_id",
        "ordinal",
        "session_uid",
        // NULL in the view: the events writer computes it from each row's text and native
        "tool_error",
    ];
    assert_eq!(columns(&h, "events")?, contract);
    let looked_up = [
        "agent",
        "instance",
        "session_id",
        "session_uid",
        "source_kind",
        "source_role",
        "source_path",
        "load_id",
    ];
    let mut plan: Vec<&str> = vec!["out_pos", "sess_id", "store_id"];
    plan.extend((contract.iter()).filter(|c| !looked_up.contains(c) && **c != "tool_error"));
    plan.extend([
        "x_start",
        "x_wide",
        "x_blob",
        "x_off",
        "x_text_len",
        "x_native_len",
        "x_bytes",
    ]);
    assert_eq!(columns(&h, "events_plan")?, plan);
    // events reads the materialized plan: the views of the rows it was
    // built from can go
    h.exec("DROP VIEW events_linked")?;
    assert_eq!(h.rows("SELECT count(*) FROM events")?, vec!["10"]);
    Ok(())
}

#[test]
fn the_plan_joined_by_sort_is_the_plan_joined_by_hash() -> Res {
    let mut plans = Vec::new();
    for plan in [PlanJoin::Hash, PlanJoin::Sort] {
        let mut h = Steps::new()?;
        h.plan = plan;
        two_turns(&h)?;
        nanoclaw_session(&h)?;
        h.run_through("write_layout")?;
        // every column, in the stored order the writer reads
        plans.push(h.rows("SELECT * FROM events_plan")?);
    }
    assert_eq!(plans[0].len(), 9);
    assert_eq!(plans[0], plans[1]);
    Ok(())
}
