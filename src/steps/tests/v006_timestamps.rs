//! The tests of `sql/V006__timestamps.sql`.

use super::*;

#[test]
fn timestamps_take_the_derived_offset_of_the_nearest_evidence_day() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    // evidence on 2026-03-02: a call 3 s after `hi`, two hours earlier in UTC
    h.llm_call(&[
        ("source", "user"),
        ("started_at_ms", &ms("2026-03-02 08:00:03")),
    ])?;
    // no evidence on 2026-03-05: the nearest evidence day's offset
    h.event(
        DB,
        &[
            ("session_id", "websocket:c1"),
            ("x_namespace", "ws1"),
            ("source_path", WS1_DB),
            ("source_line", "5"),
            ("seq", "5"),
            ("ts_local", "2026-03-05 09:00:00"),
        ],
    )?;
    // true UTC stays; an instance without evidence is read as UTC
    webui(
        &h,
        "1",
        "t1",
        "user",
        "from the webui",
        "2026-03-02 08:00:01",
    )?;
    h.event(
        DB,
        &[
            ("instance", ".nanobot-work"),
            ("session_id", "cli:direct"),
            ("source_path", ".nanobot-work/sessions/w/sessions.sqlite3"),
            ("source_line", "9"),
            ("ts_local", "2026-03-02 10:00:00"),
        ],
    )?;
    h.run_through("timestamps")?;
    assert_eq!(
        h.rows(
            "SELECT instance, source_line, ts_local, time_basis, utc_offset_minutes, timestamp_utc
                 FROM events_utc ORDER BY instance, source_kind, source_line"
        )?,
        vec![
            ".nanobot | 1 | 2026-03-02 10:00:00 | local_derived | 120 | 2026-03-02 08:00:00",
            ".nanobot | 2 | 2026-03-02 10:00:30 | local_derived | 120 | 2026-03-02 08:00:30",
            ".nanobot | 3 | 2026-03-02 11:00:00 | local_derived | 120 | 2026-03-02 09:00:00",
            ".nanobot | 4 | 2026-03-02 11:00:20 | local_derived | 120 | 2026-03-02 09:00:20",
            ".nanobot | 5 | 2026-03-05 09:00:00 | local_derived | 120 | 2026-03-05 07:00:00",
            ".nanobot | 1 | NULL | utc | NULL | 2026-03-02 08:00:01",
            ".nanobot-work | 9 | 2026-03-02 10:00:00 | local_as_utc | 0 | 2026-03-02 10:00:00",
        ]
    );
    Ok(())
}

#[test]
fn rows_of_a_switch_day_take_the_offset_in_force_at_their_time() -> Res {
    let mut h = Steps::new()?;
    berlin_switch_day(&h)?;
    h.run_through("timestamps")?;
    assert_eq!(
        h.rows(
            "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
        )?,
        vec!["2026-10-25 | 120 | 60 | 2026-10-25 01:30:00 | 2026-10-25 09:00:00"]
    );
    assert_eq!(
        h.rows(
            "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq IS NOT NULL ORDER BY seq"
        )?,
        vec![
            "1 | 120 | local_derived | 2026-10-24 18:00:00",
            "2 | 120 | local_derived | 2026-10-24 23:30:00",
            // after the last CEST pair, before the first CET one
            "3 | 120 | local_uncertain | 2026-10-24 23:40:00",
            "4 | 60 | local_uncertain | 2026-10-25 07:00:00",
            "5 | 60 | local_derived | 2026-10-25 08:00:00",
            "6 | 60 | local_derived | 2026-10-25 08:30:00",
        ]
    );
    Ok(())
}

#[test]
fn a_switch_inside_a_day_its_old_offset_kept_by_a_tie() -> Res {
    // 11-01 ties one pair against one (and chance pairs) and continuity
    // keeps -04:00 as its offset; its -05:00 pair follows the -04:00 one,
    // which is before 04:00: the switch is inside the day, and the rows
    // after the -05:00 pair take -05:00 (explore seed 302)
    let mut h = Steps::new()?;
    new_york_fall_back(&h, "2026-11-01 00:30:00", "2026-11-01 04:30:02")?;
    h.run_through("timestamps")?;
    assert_eq!(
        h.rows("SELECT day, offset_minutes FROM tz_days ORDER BY day")?,
        vec!["2026-10-31 | -240", "2026-11-01 | -240"]
    );
    assert_eq!(
        h.rows(
            "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
        )?,
        vec!["2026-11-01 | -240 | -300 | 2026-11-01 00:30:00 | 2026-11-01 08:20:00"]
    );
    assert_eq!(
        h.rows(
            "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq >= 3 ORDER BY seq"
        )?,
        vec![
            "3 | -240 | local_derived | 2026-11-01 04:30:00",
            "4 | -300 | local_derived | 2026-11-01 13:20:00",
            // nearer the -04:00 pair than the -05:00 one
            "5 | -240 | local_uncertain | 2026-11-01 07:00:00",
            "6 | -300 | local_derived | 2026-11-01 14:00:00",
        ]
    );
    // the same day with its -04:00 pair at 05:30: no zone changes offset
    // after 04:00, so one pair of a DST step is no evidence of a switch
    let mut h = Steps::new()?;
    new_york_fall_back(&h, "2026-11-01 05:30:00", "2026-11-01 09:30:02")?;
    h.run_through("timestamps")?;
    assert_eq!(h.rows("SELECT day FROM tz_switches")?, Vec::<String>::new());
    assert_eq!(
        h.rows("SELECT seq, utc_offset_minutes FROM events_utc WHERE seq >= 3 ORDER BY seq")?,
        vec!["3 | -240", "4 | -240", "5 | -240", "6 | -240"]
    );
    Ok(())
}

#[test]
fn a_row_that_pairs_at_both_offsets_of_a_switch_does_not_bound_it() -> Res {
    let mut h = Steps::new()?;
    // Lord Howe, +10:30 until 2026-10-04 02:00, then +11:00: on 10-04 a
    // pair at +10:30 13 s before the switch; at 08:53:27 a message meets
    // its call at +11:00 and a later call 4 s off at +10:30; two more
    // pairs at +11:00 win the day. The switch lies between 01:59:47 and
    // 11:02:29, not nowhere (explore seed 161)
    users_and_calls(
        &h,
        &[
            "2026-10-03 10:00:00",
            "2026-10-03 12:00:00",
            "2026-10-04 01:59:47",
            "2026-10-04 08:53:27",
            "2026-10-04 11:02:29",
            "2026-10-04 12:00:00",
        ],
        &[
            "2026-10-02 23:30:02",
            "2026-10-03 01:30:02",
            "2026-10-03 15:29:49",
            "2026-10-03 21:53:29",
            "2026-10-03 22:23:31",
            "2026-10-04 00:02:31",
            "2026-10-04 01:00:02",
        ],
    )?;
    h.run_through("timestamps")?;
    assert_eq!(
        h.rows(
            "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
        )?,
        vec!["2026-10-04 | 630 | 660 | 2026-10-04 01:59:47 | 2026-10-04 11:02:29"]
    );
    assert_eq!(
        h.rows(
            "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq >= 3 ORDER BY seq"
        )?,
        vec![
            "3 | 630 | local_derived | 2026-10-03 15:29:47",
            "4 | 660 | local_uncertain | 2026-10-03 21:53:27",
            "5 | 660 | local_derived | 2026-10-04 00:02:29",
            "6 | 660 | local_derived | 2026-10-04 01:00:00",
        ]
    );
    Ok(())
}

#[test]
fn timestamps_take_the_given_offset_first() -> Res {
    let mut h = Steps::new()?;
    two_turns(&h)?;
    // evidence says +120, --utc-offset -01:00 wins
    h.llm_call(&[
        ("source", "user"),
        ("started_at_ms", &ms("2026-03-02 08:00:03")),
    ])?;
    h.exec("UPDATE params SET given_offset_minutes = -60")?;
    h.run_through("timestamps")?;
    assert_eq!(
            h.rows(
                "SELECT DISTINCT time_basis, utc_offset_minutes, timestamp_utc - ts_local FROM events_utc"
            )?,
            vec!["local_given | -60 | 01:00:00"]
        );
    Ok(())
}
