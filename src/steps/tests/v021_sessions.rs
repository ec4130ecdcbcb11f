//! The tests of `sql/V021__sessions.sql`.

use super::*;

#[test]
fn sessions_count_rows_and_calls_and_flag_sessions_only_copies_hold() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    h.llm_call(&[
        ("source", "user"),
        ("started_at_ms", &ms("2026-03-02 10:00:20")),
        ("input_tokens", "100"),
    ])?;
    // a deleted session: only a frozen copy holds it
    h.event(
        JSONL,
        &[
            ("session_id", "cli:old"),
            ("x_namespace", "ws1"),
            (
                "source_path",
                ".nanobot/sessions/ws1/jsonl-backup/Y2xpOm9sZA.jsonl",
            ),
            ("source_role", "secondary"),
            ("turn_type", "user"),
            ("x_record", "old"),
        ],
    )?;
    nanoclaw_session(&h)?;
    h.run_through("sessions")?;
    assert_eq!(
        h.rows(
            "SELECT session_id, rows, user_rows, in_primary_store, secondary_only, llm_calls,
                        input_tokens, continuation
                 FROM sessions ORDER BY session_id NULLS FIRST"
        )?,
        vec![
            "cli:old | 1 | 1 | false | true | 0 | NULL | NULL",
            // a nanoclaw session without counted usage: 0 calls, no tokens
            "s1 | 4 | 0 | true | false | 0 | NULL | claude:c1",
            "websocket:c1 | 4 | 2 | true | false | 1 | 100 | NULL",
        ]
    );
    Ok(())
}

#[test]
fn a_session_takes_its_facts_from_the_row_that_starts_it() -> Res {
    // the metadata row that starts websocket:c1 (x_start) and a message
    // a user typed that reads like one: only the first gives the
    // session's facts
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    for (line, x_start, turn_type, text, created) in [
        (
            "1",
            "true",
            "system",
            "session start: key=websocket:c1",
            "2026-03-02T09:00:00",
        ),
        (
            "2",
            "false",
            "user",
            "session start: key=forged",
            "1999-01-01T00:00:00",
        ),
    ] {
        h.event(
            DB,
            &[
                ("session_id", "websocket:c1"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("source_line", line),
                ("x_group", if x_start == "true" { "0" } else { "1" }),
                ("turn_type", turn_type),
                ("text", text),
                ("native", &format!(r#"{{"created_at":"{created}"}}"#)),
                ("x_start", x_start),
                ("ts_local", "2026-03-02 09:00:00"),
            ],
        )?;
    }
    h.run_through("sessions")?;
    assert_eq!(h.rows("SELECT count(*) FROM session_starts")?, vec!["1"]);
    assert_eq!(
        h.rows("SELECT session_id, created_at FROM sessions")?,
        vec!["websocket:c1 | 2026-03-02T09:00:00"]
    );
    Ok(())
}

#[test]
fn sessions_sum_the_cost_of_their_calls_and_of_their_claude_code_usage() -> Res {
    let mut h = Steps::new()?;
    test_prices(&h)?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // websocket:c1: a cached call in turn 1 and one in turn 2
    //   (1000 − 600 − 100) × 3e-6 + 600 × 3e-7 + 100 × 3.75e-6 + 50 × 1.5e-5 = 0.002205
    //   2000 × 3e-6 + 100 × 1.5e-5                                            = 0.0075
    //   session: 0.002205 + 0.0075 = 0.009705
    h.llm_call(&[
        ("provider", "anthropic"),
        ("model", "claude-sonnet-4.5"),
        ("started_at_ms", &ms("2026-03-02 10:00:20")),
        ("input_tokens", "1000"),
        ("cache_read_tokens", "600"),
        ("cache_write_tokens", "100"),
        ("output_tokens", "50"),
    ])?;
    h.llm_call(&[
        ("provider", "anthropic"),
        ("model", "claude-sonnet-4.5"),
        ("started_at_ms", &ms("2026-03-02 11:00:19")),
        ("input_tokens", "2000"),
        ("output_tokens", "100"),
    ])?;
    // between the turns, of no session: its unknown model changes no session
    h.llm_call(&[
        ("provider", "mystery"),
        ("model", "unknown-model"),
        ("started_at_ms", &ms("2026-03-02 10:30:00")),
        ("input_tokens", "100"),
    ])?;
    nanoclaw_session(&h)?;
    // s1's Claude Code responses (Anthropic usage: input_tokens without the
    // cache), model claude-sonnet-4-5-20250929 found exactly as
    // `anthropic/claude-sonnet-4-5-20250929`, the dated key (input 4e-6):
    //   m1: 5 × 4e-6 + 100 × 3.75e-6 + 20 × 1.5e-5 = 0.00002 + 0.000375 + 0.0003 = 0.000695
    //   m2 (cached): 7 × 4e-6 + 400 × 3e-7 + 300 × 3.75e-6 + 30 × 1.5e-5
    //      = 0.000028 + 0.00012 + 0.001125 + 0.00045                           = 0.001723
    //   m2 repeated with a smaller usage: not counted, not priced
    //   session: 0.000695 + 0.001723 = 0.002418
    let response = |session: &str, line: &str, message: &str, usage: &str, model: &str| {
        let native = format!(
            r#"{{"transcript_id":"{session}","sessionId":"{session}","message_id":"{message}","requestId":"r-{message}","usage":{usage},"usage_counted":true}}"#
        );
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("source_path", &format!("p/{session}.jsonl")),
                ("source_line", line),
                ("turn_type", "assistant"),
                ("model", model),
                ("native", &native),
            ],
        )
    };
    let sonnet = "claude-sonnet-4-5-20250929";
    response(
        "c1",
        "1",
        "m1",
        r#"{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":20}"#,
        sonnet,
    )?;
    response(
        "c1",
        "2",
        "m2",
        r#"{"input_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":400,"output_tokens":30}"#,
        sonnet,
    )?;
    response(
        "c1",
        "3",
        "m2",
        r#"{"input_tokens":1,"output_tokens":1}"#,
        sonnet,
    )?;
    // s2: backed by c2, whose one response has a model no row prices
    h.event(
        OUTBOUND,
        &[
            ("session_id", "s2"),
            ("x_group", &group(Group::State)),
            (
                "native",
                r#"{"table":"session_state","continuation":{"provider":"claude","id":"c2"}}"#,
            ),
        ],
    )?;
    response(
        "c2",
        "1",
        "m9",
        r#"{"input_tokens":10,"output_tokens":10}"#,
        "mystery-model",
    )?;
    h.run_through("sessions")?;
    assert_eq!(
        h.rows(
            "SELECT session_id, llm_calls, transcript_turns_with_usage, cost_usd
                 FROM sessions ORDER BY session_id"
        )?,
        vec![
            // each counted response is a call of its session (V017)
            "s1 | 2 | 2 | 0.002418",
            "s2 | 1 | 1 | NULL",
            "websocket:c1 | 2 | NULL | 0.009705",
        ]
    );
    // the last column, appended
    assert_eq!(
        columns(&h, "sessions")?.last().map(String::as_str),
        Some("cost_usd")
    );
    let calls = columns(&h, "llm_calls")?;
    assert_eq!(
        calls[calls.len() - 7..],
        [
            "cost_usd",
            "started_at_local",
            "utc_offset_minutes",
            "agent",
            "message_id",
            "request_id",
            // the outputs write it after load_id (engine::AFTER_LOAD_ID)
            "call_id"
        ]
    );
    assert_eq!(
        h.rows("SELECT agent, message FROM diagnostics WHERE code = 'price_unknown' ORDER BY ALL")?,
        vec![
            "nanobot | no price for model unknown-model (provider mystery): cost_usd is NULL for its 1 llm_calls rows (--prices FILE can price it)",
            "nanoclaw | no price for model mystery-model (provider anthropic): cost_usd is NULL for its 1 Claude Code responses (--prices FILE can price it)",
        ]
    );
    Ok(())
}
