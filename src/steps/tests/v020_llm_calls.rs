//! The tests of `sql/V020__llm_calls.sql`.

use super::*;

#[test]
fn a_utc_row_and_a_call_take_the_offset_in_force_at_their_instant() -> Res {
    let mut h = Steps::new()?;
    berlin_switch_day(&h)?;
    // rows with only a UTC time: before the switch, nearer its last
    // CEST pair (23:30 UTC), nearer its first CET pair (08:00 UTC),
    // after it, two days later (no evidence: the 25th's); and one of
    // an instance without evidence
    for (i, utc) in [
        "2026-10-24 18:30:00",
        "2026-10-24 23:35:00",
        "2026-10-25 07:50:00",
        "2026-10-25 12:00:00",
        "2026-10-27 10:00:00",
    ]
    .iter()
    .enumerate()
    {
        h.event(
            WEBUI,
            &[
                ("session_id", "websocket:c1"),
                ("source_path", WEBUI_C1),
                ("seq", &(i + 1).to_string()),
                ("text", &format!("utc {i}")),
                ("ts_utc", utc),
            ],
        )?;
    }
    h.event(
        WEBUI,
        &[
            ("instance", ".nanobot-work"),
            ("session_id", "websocket:c2"),
            ("source_path", ".nanobot-work/webui/websocket_c2.jsonl"),
            ("seq", "1"),
            ("ts_utc", "2026-10-25 12:00:00"),
        ],
    )?;
    h.llm_call(&[
        ("instance", ".nanobot-work"),
        ("source_path", ".nanobot-work/llm_usage.sqlite3"),
        ("source", "user"),
        ("started_at_ms", &ms("2026-10-25 12:00:01")),
    ])?;
    h.run_through("llm_calls")?;
    assert_eq!(
            h.rows(
                "SELECT instance, timestamp_utc::TIMESTAMP, timestamp_local, utc_offset_minutes, time_basis
                 FROM events WHERE source_kind = 'nanobot.webui_transcript'
                 ORDER BY instance, timestamp_utc"
            )?,
            vec![
                ".nanobot | 2026-10-24 18:30:00 | 2026-10-24 20:30:00 | 120 | utc",
                ".nanobot | 2026-10-24 23:35:00 | 2026-10-25 01:35:00 | 120 | utc",
                ".nanobot | 2026-10-25 07:50:00 | 2026-10-25 08:50:00 | 60 | utc",
                ".nanobot | 2026-10-25 12:00:00 | 2026-10-25 13:00:00 | 60 | utc",
                ".nanobot | 2026-10-27 10:00:00 | 2026-10-27 11:00:00 | 60 | utc",
                ".nanobot-work | 2026-10-25 12:00:00 | NULL | NULL | utc",
            ]
        );
    assert_eq!(
        h.rows(
            "SELECT instance, started_at::TIMESTAMP, started_at_local, utc_offset_minutes
                 FROM llm_calls ORDER BY instance, started_at"
        )?,
        vec![
            ".nanobot | 2026-10-24 18:00:02 | 2026-10-24 20:00:02 | 120",
            ".nanobot | 2026-10-24 23:30:02 | 2026-10-25 01:30:02 | 120",
            ".nanobot | 2026-10-25 08:00:02 | 2026-10-25 09:00:02 | 60",
            ".nanobot | 2026-10-25 08:30:02 | 2026-10-25 09:30:02 | 60",
            ".nanobot-work | 2026-10-25 12:00:01 | NULL | NULL",
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT kind, instance, source_path, message FROM diagnostics
                 WHERE code = 'local_time_unknown'"
        )?,
        vec![
            "loss | .nanobot-work | .nanobot-work/llm_usage.sqlite3 | no local time for 1 events rows and 1 llm_calls rows with only a UTC time: instance .nanobot-work holds no evidence of its UTC offset (timestamp_local and started_at_local are NULL; --utc-offset gives one)"
        ]
    );
    Ok(())
}

#[test]
fn an_llm_call_belongs_to_the_turn_containing_it_and_to_none_between_turns() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    for utc in [
        "2026-03-02 10:00:20", // inside turn 1
        "2026-03-02 10:00:32", // turn 1's answer + 2 s (a time in whole seconds)
        "2026-03-02 10:00:39", // its answer + 9 s: a turn's calls start before it
        "2026-03-02 10:30:00", // between the turns
        "2026-03-02 11:00:19", // inside turn 2
    ] {
        h.llm_call(&[("source", "user"), ("started_at_ms", &ms(utc))])?;
    }
    h.run_through("llm_calls")?;
    let c1 = uid("ws1", "websocket:c1");
    assert_eq!(
        h.rows("SELECT id, started_at, session_id, session_uid FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | 2026-03-02 10:00:20+00 | websocket:c1 | {c1}"),
            format!("2 | 2026-03-02 10:00:32+00 | websocket:c1 | {c1}"),
            "3 | 2026-03-02 10:00:39+00 | NULL | NULL".to_string(),
            "4 | 2026-03-02 10:30:00+00 | NULL | NULL".to_string(),
            format!("5 | 2026-03-02 11:00:19+00 | websocket:c1 | {c1}"),
        ]
    );
    Ok(())
}

#[test]
fn an_llm_call_goes_to_a_turn_of_its_own_source() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // a user turn 10:00–10:05 and, in the same session, a subagent's
    // result injected at 10:30 (a hidden turn: system calls only)
    session_rows(
        &h,
        &[
            (1, "user", "long job", "2026-03-02 10:00:00"),
            (2, "assistant", "done", "2026-03-02 10:05:00"),
            (3, "assistant", "subagent done", "2026-03-02 10:30:00"),
            (4, "assistant", "noted", "2026-03-02 10:30:20"),
        ],
    )?;
    // a cron run in another chat, 10:02–10:04, while the user turn runs
    telegram_turn(
        &h,
        "cron",
        ("cron: digest", "2026-03-02 10:02:00"),
        ("digest", "2026-03-02 10:04:00"),
    )?;
    for (source, utc) in [
        ("user", "2026-03-02 10:03:00"), // the user turn, not the later cron turn
        ("cron", "2026-03-02 10:03:00"), // the cron turn
        ("dream", "2026-03-02 10:03:00"), // a memory archive: no chat
        ("system", "2026-03-02 10:03:00"), // a title: the user turn
        ("user", "2026-03-02 10:20:00"), // after the final answer: none
        ("system", "2026-03-02 10:30:10"), // the injected message's turn
        ("user", "2026-03-02 10:30:10"), // not a user turn: none
    ] {
        h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
    }
    h.run_through("llm_calls")?;
    let c1 = uid("ws1", "websocket:c1");
    let tg = uid("ws1", "telegram:42");
    assert_eq!(
        h.rows("SELECT id, source, coalesce(session_uid, 'NULL') FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | user | {c1}"),
            format!("2 | cron | {tg}"),
            "3 | dream | NULL".to_string(),
            format!("4 | system | {c1}"),
            "5 | user | NULL".to_string(),
            format!("6 | system | {c1}"),
            "7 | user | NULL".to_string(),
        ]
    );
    Ok(())
}

#[test]
fn of_two_overlapping_chats_a_call_goes_to_the_one_that_saved_its_answer() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // chat c1: a user turn 10:00–10:05 whose tool call is saved at 10:03:30
    session_rows(
        &h,
        &[
            (1, "user", "long job", "2026-03-02 10:00:00"),
            (2, "tool_use", "call_a", "2026-03-02 10:03:30"),
            (3, "tool_result", "call_a", "2026-03-02 10:03:31"),
            (4, "assistant", "done", "2026-03-02 10:05:00"),
        ],
    )?;
    // chat telegram:42: a user turn 10:02–10:04, inside c1's
    telegram_turn(
        &h,
        "user",
        ("quick question", "2026-03-02 10:02:00"),
        ("quick answer", "2026-03-02 10:04:00"),
    )?;
    for (utc, duration) in [
        ("2026-03-02 10:03:00", "30000"), // ends 10:03:30: c1's tool call
        ("2026-03-02 10:03:40", "20000"), // ends 10:04:00: the telegram answer
        ("2026-03-02 10:03:00", "5000"),  // ends 10:03:05: no answer, the later start
        ("2026-03-02 10:03:00", "=NULL"), // no duration: the later start
        ("2026-03-02 10:03:29", "1500"),  // ends 10:03:30.5, c1's row 0.5 s before: c1
        ("2026-03-02 10:03:00", "27000"), // ends 10:03:27, 3 s before c1's row: telegram
    ] {
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms(utc)),
            ("duration_ms", duration),
        ])?;
    }
    h.run_through("llm_calls")?;
    let c1 = uid("ws1", "websocket:c1");
    let tg = uid("ws1", "telegram:42");
    assert_eq!(
        h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | {c1}"),
            format!("2 | {tg}"),
            format!("3 | {tg}"),
            format!("4 | {tg}"),
            format!("5 | {c1}"),
            format!("6 | {tg}"),
        ]
    );
    Ok(())
}

#[test]
fn a_system_call_right_after_a_webui_chats_answer_is_its_title_call() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // WebUI chat c1: a user turn 10:00–10:05, its answer saved at 10:05
    session_rows(
        &h,
        &[
            (1, "user", "long job", "2026-03-02 10:00:00"),
            (2, "assistant", "done", "2026-03-02 10:05:00"),
        ],
    )?;
    // chat telegram:42: a user turn 10:04:30–10:06, started later
    telegram_turn(
        &h,
        "user",
        ("quick question", "2026-03-02 10:04:30"),
        ("quick answer", "2026-03-02 10:06:00"),
    )?;
    for (source, utc, duration) in [
        ("user", "2026-03-02 10:04:40", "20000"), // c1's answer, returns 10:05:00
        ("system", "2026-03-02 10:05:00", "2000"), // at once: c1's title (explore seed 119)
        ("system", "2026-03-02 10:05:03", "2000"), // 3 s later: the later start
        ("user", "2026-03-02 10:05:30", "30000"), // telegram's answer
        ("system", "2026-03-02 10:06:01", "2000"), // after telegram's answer: no WebUI chat
    ] {
        h.llm_call(&[
            ("source", source),
            ("started_at_ms", &ms(utc)),
            ("duration_ms", duration),
        ])?;
    }
    h.run_through("llm_calls")?;
    let c1 = uid("ws1", "websocket:c1");
    let tg = uid("ws1", "telegram:42");
    assert_eq!(
        h.rows("SELECT id, session_uid FROM title_calls ORDER BY id")?,
        vec![format!("2 | {c1}")]
    );
    assert_eq!(
        h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | {c1}"),
            format!("2 | {c1}"),
            format!("3 | {tg}"),
            format!("4 | {tg}"),
            format!("5 | {tg}"),
        ]
    );
    Ok(())
}

#[test]
fn a_failed_attempt_goes_where_its_retry_goes() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    // WebUI chat c1: a user turn 10:00–10:05
    session_rows(
        &h,
        &[
            (1, "user", "long job", "2026-03-02 10:00:00"),
            (2, "assistant", "done", "2026-03-02 10:05:00"),
        ],
    )?;
    // chat telegram:42: a user turn 10:03–10:04:30, started later
    telegram_turn(
        &h,
        "user",
        ("quick question", "2026-03-02 10:03:00"),
        ("quick answer", "2026-03-02 10:04:30"),
    )?;
    for (utc, duration, finish) in [
        ("2026-03-02 10:03:10", "2000", "error"), // its retry 2 s after its end: c1
        ("2026-03-02 10:03:12", "108000", "stop"), // returns 10:05, c1's answer
        ("2026-03-02 10:04:00", "30000", "stop"), // returns 10:04:30, telegram's answer
        ("2026-03-02 10:04:10", "1000", "error"), // no retry: the later start
        ("2026-03-02 10:04:40", "1000", "error"), // two calls after it: no retry
        ("2026-03-02 10:04:42", "1000", "stop"),
        ("2026-03-02 10:04:43", "1000", "stop"),
    ] {
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms(utc)),
            ("duration_ms", duration),
            ("finish_reason", finish),
        ])?;
    }
    h.run_through("llm_calls")?;
    assert_eq!(
        h.rows("SELECT failed_id, next_id FROM retries ORDER BY ALL")?,
        vec!["1 | 2"]
    );
    let c1 = uid("ws1", "websocket:c1");
    let tg = uid("ws1", "telegram:42");
    assert_eq!(
        h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | {c1}"),
            format!("2 | {c1}"),
            format!("3 | {tg}"),
            format!("4 | {tg}"),
            format!("5 | {c1}"),
            format!("6 | {c1}"),
            format!("7 | {c1}"),
        ]
    );
    Ok(())
}

#[test]
fn a_webui_turn_whose_rounds_name_its_calls_takes_no_other_call() -> Res {
    // a WebUI turn 10:00–10:20 (chat c1) with one round, 6765 prompt and
    // 381 completion tokens (its transcript's turn_end); inside it, the
    // calls of a turn /new erased from another chat (explore seed 66)
    let home = |rounds: &str, spawn: bool| -> Res<Steps> {
        let h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        let mut rows = vec![(1, "user", "long job", "2026-03-02 10:00:00")];
        if spawn {
            rows.push((2, "tool_use", "call_spawn", "2026-03-02 10:20:00"));
            rows.push((3, "tool_result", "call_spawn", "2026-03-02 10:20:00"));
        }
        rows.push((4, "assistant", "done", "2026-03-02 10:20:00"));
        session_rows(&h, &rows)?;
        if spawn {
            h.exec(&format!(
                    "UPDATE stage_events SET tool_name = 'spawn' WHERE tool_use_id = 'call_spawn' AND source_path = {}",
                    quote(WS1_DB)
                ))?;
        }
        webui(&h, "1", "t1", "user", "long job", "2026-03-02 10:00:00")?;
        h.event(
            WEBUI,
            &[
                ("session_id", "websocket:c1"),
                ("source_path", WEBUI_C1),
                ("source_line", "2"),
                ("x_turn", "t1"),
                ("turn_type", "assistant"),
                ("text", "done"),
                ("x_match", "done"),
                ("ts_utc", "2026-03-02 10:20:00"),
                ("x_rounds", rounds),
            ],
        )?;
        for (utc, duration, input, output) in [
            ("2026-03-02 10:00:01", "1199000", "6765", "381"), // the round: c1
            ("2026-03-02 10:05:00", "60000", "1128", "296"),   // another chat's
            ("2026-03-02 10:07:00", "60000", "3656", "133"),   // another chat's
            ("2026-03-02 10:09:00", "60000", "=NULL", "=NULL"), // an error: may be c1's
        ] {
            h.llm_call(&[
                ("source", "user"),
                ("started_at_ms", &ms(utc)),
                ("duration_ms", duration),
                ("input_tokens", input),
                ("output_tokens", output),
            ])?;
        }
        Ok(h)
    };
    let c1 = uid("ws1", "websocket:c1");
    let mut h = home("6765:381", false)?;
    h.run_through("llm_calls")?;
    assert_eq!(
        h.rows("SELECT id, coalesce(session_uid, 'NULL') FROM llm_calls ORDER BY id")?,
        vec![
            format!("1 | {c1}"),
            "2 | NULL".to_string(),
            "3 | NULL".to_string(),
            format!("4 | {c1}"),
        ]
    );
    // rounds that name no call (tokens counted otherwise) prove nothing,
    // and a turn that spawned a subagent has calls besides its rounds
    // (the subagent's, explore seed 108): every call inside the turn
    // stays its
    let all_c1 = |h: &Steps| -> Res {
        assert_eq!(
            h.rows(&format!(
                "SELECT count(*) FROM llm_calls WHERE session_uid = {}",
                quote(&c1)
            ))?,
            vec!["4".to_string()]
        );
        Ok(())
    };
    let mut h = home("6765:380", false)?;
    h.run_through("llm_calls")?;
    all_c1(&h)?;
    let mut h = home("6765:381", true)?;
    h.run_through("llm_calls")?;
    all_c1(&h)?;
    Ok(())
}

#[test]
fn llm_calls_are_priced_by_exact_then_normalised_model_and_an_unknown_model_is_null() -> Res {
    let mut h = Steps::new()?;
    test_prices(&h)?;
    let call = |provider: &str, model: &str, tokens: &[(&str, &str)]| -> Res {
        let mut given = vec![
            ("provider", provider),
            ("model", model),
            ("started_at_ms", "0"),
        ];
        given.extend_from_slice(tokens);
        h.llm_call(&given)
    };
    let (inp, out, read, write) = (
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    );
    // 1: a cached call, found after the normalisation (4.5 → 4-5) under
    //    `anthropic/claude-sonnet-4-5`, the undated key (input 3e-6):
    //    (1000 − 600 − 100) × 3e-6 + 600 × 3e-7 + 100 × 3.75e-6 + 50 × 1.5e-5
    //    = 0.0009 + 0.00018 + 0.000375 + 0.00075 = 0.002205
    call(
        "anthropic",
        "claude-sonnet-4.5",
        &[(inp, "1000"), (read, "600"), (write, "100"), (out, "50")],
    )?;
    // 2: OpenRouter's name of it, normalised model alone:
    //    2000 × 3e-6 + 100 × 1.5e-5 = 0.006 + 0.0015 = 0.0075
    call(
        "openrouter",
        "anthropic/claude-sonnet-4.5",
        &[(inp, "2000"), (out, "100")],
    )?;
    // 3: exact model, the dated key's `<provider>/<key>` name: 1000 × 4e-6 = 0.004
    call(
        "anthropic",
        "anthropic/claude-sonnet-4-5-20250929",
        &[(inp, "1000")],
    )?;
    // 4: case normalised; no cache price: cache reads at the input price:
    //    600 × 1e-6 + 400 × 1e-6 + 10 × 2e-6 = 0.0006 + 0.0004 + 0.00002 = 0.00102
    call(
        "openai",
        "GPT-X",
        &[(inp, "1000"), (read, "400"), (out, "10")],
    )?;
    // 5: exact provider/model wins over the normalised vendor/model-1-0:
    //    (10 + 10) × 5e-6 = 0.0001
    call(
        "openrouter",
        "vendor/model-1.0",
        &[(inp, "10"), (out, "10")],
    )?;
    // 6, 7: a model no row prices: NULL, never 0
    call("mystery", "unknown-model", &[(inp, "100")])?;
    call("mystery", "unknown-model", &[(inp, "100")])?;
    // 8: a priced model whose call reported no tokens (an error): 0
    call("anthropic", "claude-sonnet-4.5", &[])?;
    // 9: no model: NULL, and no warning (nothing to name)
    h.llm_call(&[
        ("provider", "anthropic"),
        ("started_at_ms", "0"),
        (inp, "5"),
    ])?;
    h.run_through("llm_calls")?;
    assert_eq!(
        h.rows("SELECT id, cost_usd FROM llm_calls ORDER BY id")?,
        vec![
            "1 | 0.002205",
            "2 | 0.0075",
            "3 | 0.004",
            "4 | 0.00102",
            "5 | 0.0001",
            "6 | NULL",
            "7 | NULL",
            "8 | 0.0",
            "9 | NULL",
        ]
    );
    // which rule found which row (1 exact provider/model, 2 exact model,
    // 3 and 4 the same normalised)
    assert_eq!(
        h.rows("SELECT provider, model, price_model, price_step FROM model_prices ORDER BY ALL")?,
        vec![
            "anthropic | anthropic/claude-sonnet-4-5-20250929 | claude-sonnet-4-5-20250929 | 2",
            "anthropic | claude-sonnet-4.5 | claude-sonnet-4-5 | 3",
            "mystery | unknown-model | NULL | NULL",
            "openai | GPT-X | gpt-x | 3",
            "openrouter | anthropic/claude-sonnet-4.5 | claude-sonnet-4-5 | 4",
            "openrouter | vendor/model-1.0 | openrouter/vendor/model-1.0 | 1",
        ]
    );
    // one warning per model, naming it
    assert_eq!(
        h.rows(
            "SELECT kind, agent, instance, source_path, message, code FROM diagnostics
                 WHERE kind = 'warning'"
        )?,
        vec![
            "warning | nanobot | .nanobot | .nanobot/llm_usage.sqlite3 | no price for model unknown-model (provider mystery): cost_usd is NULL for its 2 llm_calls rows (--prices FILE can price it) | price_unknown"
        ]
    );
    // the normalisation: case, `.` between digits, a trailing date stamp
    assert_eq!(
        h.rows(
            "SELECT price_name('Claude-Sonnet-4.5-20250929'), price_name('v3.5.1@20250929'),
                        price_name('gpt-4o-2024-08-06'), price_name('gpt-4-0613'),
                        price_name('o.k-1.x')"
        )?,
        vec!["claude-sonnet-4-5 | v3-5-1 | gpt-4o | gpt-4-0613 | o.k-1.x"]
    );
    Ok(())
}
