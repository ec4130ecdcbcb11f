//! The tests of `sql/V010__nanoclaw_links.sql`.

use super::*;

#[test]
fn a_delivered_row_folds_only_when_its_outbound_row_exists() -> Res {
    let mut h = Steps::new()?;
    nanoclaw_session(&h)?;
    h.run_through("nanoclaw_links")?;
    assert_eq!(
        h.rows("SELECT session_id, message_out_id, record->>'status' FROM nc_delivery_joined")?,
        vec!["s1 | m1 | delivered"]
    );
    Ok(())
}

#[test]
fn an_edit_or_reaction_links_to_the_one_message_its_id_names() -> Res {
    let mut h = Steps::new()?;
    nanoclaw_messages(&h)?;
    for (id, seq, op, target) in [
        ("e1", "5", "edit", "p1"),
        ("e2", "7", "reaction", "in1"),
        ("e3", "9", "edit", "m1"),
        ("e4", "11", "edit", "elsewhere"),
    ] {
        h.event(
                OUTBOUND,
                &[
                    ("session_id", "s1"),
                    ("x_id", id),
                    ("seq", seq),
                    ("native", &format!(r#"{{"table":"messages_out","operation":"{op}","target_message_id":"{target}"}}"#)),
                ],
            )?;
        // the same id in another session is never a target
        h.event(
            INBOUND,
            &[
                ("session_id", "s2"),
                ("x_id", target),
                ("seq", "4"),
                ("native", r#"{"table":"messages_in"}"#),
            ],
        )?;
    }
    h.run_through("nanoclaw_links")?;
    assert_eq!(
        h.rows(
            "SELECT e.seq, l.patch FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY e.seq"
        )?,
        vec![
            r#"5 | {"linked_to":{"relation":"edit","seq":3}}"#,
            r#"7 | {"linked_to":{"relation":"reaction","seq":2}}"#,
            r#"9 | {"linked_to":{"relation":"edit","seq":3}}"#,
        ]
    );
    Ok(())
}

#[test]
fn a_question_links_to_its_answer_only_when_both_are_one() -> Res {
    let mut h = Steps::new()?;
    let card = |seq: &str, q: &str| {
        h.event(
                OUTBOUND,
                &[("session_id", "s1"), ("seq", seq), ("native", &format!(r#"{{"table":"messages_out","content_type":"ask_question","question_id":"{q}"}}"#))],
            )
    };
    let answer = |seq: &str, q: &str| {
        h.event(
                INBOUND,
                &[("session_id", "s1"), ("seq", seq), ("native", &format!(r#"{{"table":"messages_in","content_type":"question_response","question_id":"{q}"}}"#))],
            )
    };
    card("3", "q1")?;
    answer("4", "q1")?;
    card("5", "q2")?;
    answer("6", "q2")?;
    answer("8", "q2")?;
    card("7", "q3")?;
    card("9", "q3")?;
    answer("10", "q3")?;
    card("11", "q4")?;
    h.run_through("nanoclaw_links")?;
    assert_eq!(
        h.rows(
            "SELECT e.seq, l.patch FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY e.seq"
        )?,
        vec![
            r#"3 | {"answered_by":{"seq":4}}"#,
            r#"4 | {"linked_to":{"relation":"answer","seq":3}}"#,
        ]
    );
    assert_eq!(
        h.rows("SELECT code, message FROM diagnostics ORDER BY message")?,
        vec![
            "question_link_ambiguous | question q2: 1 card(s) and 2 answer(s) in the session: not linked",
            "question_link_ambiguous | question q3: 2 card(s) and 1 answer(s) in the session: not linked",
        ]
    );
    Ok(())
}

#[test]
fn a_messaging_group_joins_only_when_the_route_matches() -> Res {
    let mut h = Steps::new()?;
    let start = |sid: &str, mg: &str| {
        h.event(
                CATALOG,
                &[
                    ("session_id", sid),
                    ("x_group", &group(Group::Session)),
                    ("native", &format!(r#"{{"table":"sessions","messaging_group":{{"id":"{mg}","channel_type":"slack","platform_id":"slack:C1"}}}}"#)),
                ],
            )
    };
    let routing = |sid: &str, platform: &str| {
        h.event(
                INBOUND,
                &[("session_id", sid), ("x_group", &group(Group::State)), ("native", &format!(r#"{{"table":"session_routing","record":{{"channel_type":"slack","platform_id":"{platform}"}}}}"#))],
            )
    };
    let message = |sid: &str, channel: &str, platform: &str| {
        h.event(
                INBOUND,
                &[("session_id", sid), ("native", &format!(r#"{{"table":"messages_in","channel_type":"{channel}","platform_id":"{platform}"}}"#))],
            )
    };
    // s1 routed to the group's chat; s2 routed elsewhere (its message
    // from the group's chat does not count beside session_routing); s3
    // has no session_routing, a message from the chat; s4 only an
    // agent-to-agent message: no evidence, no join, no warning
    start("s1", "mg1")?;
    routing("s1", "slack:C1")?;
    start("s2", "mg1")?;
    routing("s2", "slack:C2")?;
    message("s2", "slack", "slack:C1")?;
    start("s3", "mg1")?;
    message("s3", "slack", "slack:C1")?;
    start("s4", "mg1")?;
    message("s4", "agent", "slack:C1")?;
    h.run_through("nanoclaw_links")?;
    assert_eq!(
            h.rows("SELECT e.session_id, l.patch, l.route FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY 1")?,
            vec![
                r#"s1 | {"channel_type":"slack","platform_id":"slack:C1"} |  channel=slack platform=slack:C1"#,
                r#"s3 | {"channel_type":"slack","platform_id":"slack:C1"} |  channel=slack platform=slack:C1"#,
            ]
        );
    assert_eq!(
        h.rows("SELECT session_id, code FROM diagnostics")?,
        vec!["s2 | route_mismatch"]
    );
    Ok(())
}
