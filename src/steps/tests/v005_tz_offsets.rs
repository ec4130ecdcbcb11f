//! The tests of `sql/V005__tz_offsets.sql`.

use super::*;

#[test]
fn tz_offset_of_120_minutes_from_an_llm_call_pair() -> Res {
    let mut h = Steps::new()?;
    h.event(
        DB,
        &[
            ("session_id", "cli:direct"),
            ("x_namespace", "ws1"),
            ("source_path", WS1_DB),
            ("seq", "1"),
            ("turn_type", "user"),
            ("x_call_source", "user"),
            ("ts_local", "2026-03-02 12:00:00"),
        ],
    )?;
    // the turn's first call, 3 s after the message, in UTC
    h.llm_call(&[
        ("source", "user"),
        ("started_at_ms", &ms("2026-03-02 10:00:03")),
    ])?;
    // a call of another source is no evidence for a `user` message
    h.llm_call(&[
        ("source", "cron"),
        ("started_at_ms", &ms("2026-03-02 11:00:05")),
    ])?;
    h.run_through("tz_offsets")?;
    assert_eq!(
        h.rows("SELECT instance, day, offset_minutes, kind FROM tz_evidence")?,
        vec![".nanobot | 2026-03-02 | 120 | llm"]
    );
    assert_eq!(
        h.rows(
            "SELECT instance, first_day, last_day, offset_minutes, pairs, agreement FROM tz_offsets"
        )?,
        vec![".nanobot | 2026-03-02 | 2026-03-02 | 120 | 1 | 1.0"]
    );
    Ok(())
}

#[test]
fn a_tie_in_the_offset_vote_goes_to_the_neighbouring_days_offset() -> Res {
    let mut h = Steps::new()?;
    // Chatham (+13:45): each user message's call starts 2 s after it,
    // in UTC; on 2026-03-02 a cron message at 09:30:00 meets a cron call
    // at 09:00:05 UTC by chance (a 30-minute offset, one pair), which
    // ties the day's one true pair
    let user = |seq: &str, source: &str, local: &str| cli_user(&h, seq, source, local);
    user("1", "user", "2026-03-01 09:00:00")?;
    user("2", "user", "2026-03-01 11:00:00")?;
    user("3", "user", "2026-03-02 09:00:00")?;
    user("4", "cron", "2026-03-02 09:30:00")?;
    for (source, utc) in [
        ("user", "2026-02-28 19:15:02"),
        ("user", "2026-02-28 21:15:02"),
        ("user", "2026-03-01 19:15:02"),
        ("cron", "2026-03-02 09:00:05"),
    ] {
        h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
    }
    h.run_through("tz_offsets")?;
    assert_eq!(
        h.rows("SELECT day, offset_minutes, pairs, day_pairs FROM tz_days ORDER BY day")?,
        vec!["2026-03-01 | 825 | 2 | 5", "2026-03-02 | 825 | 1 | 2"]
    );
    Ok(())
}

#[test]
fn one_pair_shows_a_dst_step_but_not_a_jump_to_another_zone() -> Res {
    let mut h = Steps::new()?;
    // Chatham (+13:45, +12:45 from the DST end): 2026-03-01 has two true
    // pairs; on 03-02 the only pair is a cron message at 09:30:00 meeting
    // a cron call at 09:00:05 UTC by chance (+00:30); on 03-03 one true
    // pair at +12:45, an hour from 03-01's offset (a DST step)
    let user = |seq: &str, source: &str, local: &str| cli_user(&h, seq, source, local);
    user("1", "user", "2026-03-01 09:00:00")?;
    user("2", "user", "2026-03-01 11:00:00")?;
    user("3", "cron", "2026-03-02 09:30:00")?;
    user("4", "user", "2026-03-03 09:00:00")?;
    // 03-04: a chance cron pair at +13:15, half an hour from 03-01's
    // offset (only Lord Howe steps by half an hour, between +10:30 and +11:00)
    user("5", "cron", "2026-03-04 09:30:00")?;
    for (source, utc) in [
        ("user", "2026-02-28 19:15:02"),
        ("user", "2026-02-28 21:15:02"),
        ("cron", "2026-03-02 09:00:05"),
        ("user", "2026-03-02 20:15:02"),
        ("cron", "2026-03-03 20:15:05"),
    ] {
        h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
    }
    h.run_through("tz_offsets")?;
    assert_eq!(
        h.rows("SELECT day, offset_minutes, pairs, day_pairs FROM tz_days ORDER BY day")?,
        vec![
            "2026-03-01 | 825 | 2 | 3",
            "2026-03-02 | 825 | 0 | 1",
            "2026-03-03 | 765 | 1 | 1",
            "2026-03-04 | 825 | 0 | 1",
        ]
    );
    Ok(())
}

#[test]
fn a_tie_of_lone_pairs_goes_to_a_dst_step_from_the_nearest_strong_day() -> Res {
    let mut h = Steps::new()?;
    // Adelaide (+10:30 until the 2026-04-05 fall-back, then +09:30): on
    // 04-04, the first day, one true pair at +10:30 and a message whose
    // call is another's meets a call by chance at +08:45 (one pair
    // each); 04-05 is won at +09:30 by two pairs. Not +08:45, 45 minutes
    // from the strong day (explore seed 296)
    users_and_calls(
        &h,
        &[
            "2026-04-04 06:42:00",
            "2026-04-04 08:25:28",
            "2026-04-05 08:00:00",
            "2026-04-05 13:00:00",
        ],
        &[
            "2026-04-03 20:12:02",
            "2026-04-03 23:40:30",
            "2026-04-04 22:30:02",
            "2026-04-05 03:30:02",
        ],
    )?;
    h.run_through("tz_offsets")?;
    assert_eq!(
        h.rows(
            "SELECT day, d.offset_minutes, list(e.offset_minutes ORDER BY e.offset_minutes)
                 FROM tz_days d JOIN tz_evidence e USING (instance, day)
                 GROUP BY ALL ORDER BY day"
        )?,
        vec![
            "2026-04-04 | 630 | [525, 630]",
            "2026-04-05 | 570 | [270, 570, 570]",
        ]
    );
    Ok(())
}

/// A nanoclaw exchange archive's `Archived:` stamp (local, to the minute,
/// written 0–10 s after the answer) and the same answer in its thread's
/// transcript (true UTC) are a pair: Kolkata's +05:30.
#[test]
fn an_exchange_archive_stamp_and_its_answer_in_the_transcript_give_the_offset() -> Res {
    let mut h = Steps::new()?;
    for (thread, utc) in [
        ("t1", "2026-12-03 03:27:55.911"),
        ("t2", "2026-12-03 03:27:58"),
    ] {
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("turn_type", "assistant"),
                ("text", "Done. "),
                ("ts_utc", utc),
                ("native", &format!(r#"{{"transcript_id":"{thread}"}}"#)),
            ],
        )?;
    }
    h.event(
        ARCHIVE,
        &[
            ("x_group", &group(Group::Transcript)),
            ("turn_type", "assistant"),
            ("text", "Done."),
            ("ts_local", "2026-12-03 08:57:00"),
            ("native", r#"{"transcript_id":"t1"}"#),
        ],
    )?;
    h.run_through("tz_offsets")?;
    // t2's answer is another thread's: no pair
    assert_eq!(
        h.rows("SELECT instance, day, offset_minutes, kind FROM tz_evidence")?,
        vec![". | 2026-12-03 | 330 | archive"]
    );
    assert_eq!(
        h.rows("SELECT instance, first_day, last_day, offset_minutes, pairs FROM tz_offsets")?,
        vec![". | 2026-12-03 | 2026-12-03 | 330 | 1"]
    );
    Ok(())
}
