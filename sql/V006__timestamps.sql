-- V006 timestamps
-- Purpose: timestamp_utc for every kept row. True-UTC sources keep their time
--          (time_basis 'utc'). A local-time row gets local − offset where the
--          offset is, in order: --utc-offset ('local_given'); the derived
--          offset of its instance and local day, or of the nearest day with
--          evidence (ties: the earlier day) ('local_derived'); else 0
--          ('local_as_utc', the instance has no evidence at all). On a day
--          the offset changes (tz_switches), the offset in force at its own
--          time: up to the day's last pair of the old offset the old one,
--          from its first pair of the new offset the new one; between them
--          the nearer pair's, with time_basis 'local_uncertain'. A row or
--          LLM call with only a true-UTC time gets, for its local time, the
--          offset in force at its instant by the same rules (utc_locals).
-- Grain:   events_utc: one row per kept event; utc_locals: one row per
--          instance and true-UTC instant.
-- Inputs:  events_kept (V004), stage_llm_calls, tz_days, tz_votes and
--          tz_evidence (V005), params (given_offset_minutes).
-- Output:  utc_instants (instance, t: a true-UTC instant of a row without a
--          local time or of an LLM call; day: its local day by the offset
--          of the latest evidence day begun by then), local_days (instance,
--          local day of rows with only a local time and of utc_instants),
--          local_day_offsets (offset_minutes: that day's, or the nearest
--          evidence day's), tz_switches (before_offset, after_offset,
--          last_before, first_after: a day the offset changes),
--          the macro switch_offset(t, last_before, first_after,
--          before_offset, after_offset) (the switch-day rule, once),
--          utc_locals (instance, t, offset_minutes: the offset in force
--          at t by the same rules, NULL without evidence),
--          events_utc (view: events_kept plus
--          utc_offset_minutes, time_basis, timestamp_utc); drops
--          tz_evidence, tz_votes (V005) and utc_instants, unread after it.
-- Creates: table local_day_offsets, table local_days, table tz_switches,
-- Creates: table utc_locals, view events_utc
-- The day an instance's offset changes, before_offset to after_offset, and
-- the evidence around the switch: last_before, the last pair of the old
-- offset, and first_after, the first pair of the new one (a row that pairs
-- at both counts only when no other row does). A day changes offset
--   won    when its winner differs from the previous evidence day's;
--   within when it keeps the previous day's winner but its last pairs are
--          of a DST step from it (dst_step, V005) and follow every pair
--          of the winner: the switch is inside the day when the next
--          evidence day is won by the new offset, or when the new offset
--          ties the winner (which continuity kept) and the winner's last
--          pair is before 04:00 (zones change offset at night).
-- Rows up to last_before keep the old offset, rows from first_after take
-- the new one, rows between are uncertain.
CREATE TABLE tz_switches AS
WITH days AS (
    SELECT instance, day, offset_minutes, pairs,
        lag(offset_minutes) OVER (PARTITION BY instance ORDER BY day) AS prev_offset,
        lead(offset_minutes) OVER (PARTITION BY instance ORDER BY day) AS next_offset
    FROM tz_days
),
candidates AS (
    SELECT instance, day, prev_offset AS before_offset, offset_minutes AS after_offset,
        true AS won, NULL AS confirmed, NULL AS tie
    FROM days
    WHERE prev_offset IS NOT NULL AND prev_offset <> offset_minutes
    UNION ALL
    SELECT d.instance, d.day, d.offset_minutes, v.offset_minutes,
        false, v.offset_minutes = d.next_offset, v.pairs >= d.pairs
    FROM days d
    JOIN tz_votes v USING (instance, day)
    WHERE v.offset_minutes <> d.offset_minutes AND dst_step(v.offset_minutes, d.offset_minutes)
      AND (d.prev_offset IS NULL OR d.prev_offset = d.offset_minutes)
),
-- each paired row once, with the offsets it fits
evidence AS (
    SELECT instance, day, ts_local, list(DISTINCT offset_minutes) AS fits
    FROM tz_evidence GROUP BY ALL
),
placed AS (
    SELECT c.*,
        coalesce(max(e.ts_local) FILTER (list_contains(e.fits, c.before_offset)
                                         AND NOT list_contains(e.fits, c.after_offset)),
                 max(e.ts_local) FILTER (list_contains(e.fits, c.before_offset))) AS last_before,
        coalesce(min(e.ts_local) FILTER (list_contains(e.fits, c.after_offset)
                                         AND NOT list_contains(e.fits, c.before_offset)),
                 min(e.ts_local) FILTER (list_contains(e.fits, c.after_offset))) AS first_after
    FROM candidates c
    JOIN evidence e USING (instance, day)
    GROUP BY ALL
)
SELECT instance, day, before_offset, after_offset, last_before, first_after
FROM placed
WHERE CASE WHEN won THEN last_before IS NULL OR last_before < first_after
           ELSE last_before < first_after
                AND (confirmed OR (tie AND CAST(last_before AS TIME) < TIME '04:00')) END
QUALIFY row_number() OVER (PARTITION BY instance, day
                           ORDER BY won DESC, confirmed DESC, after_offset) = 1;

-- Every true-UTC instant of a row without a local time and of an LLM call,
-- with the local day it falls on by a first guess: the offset of the
-- latest evidence day begun by then (else the first evidence day's).
CREATE TABLE utc_instants AS
WITH instants AS (
    SELECT DISTINCT instance, ts_utc AS t
    FROM events_kept WHERE ts_utc IS NOT NULL AND ts_local IS NULL
    UNION
    SELECT DISTINCT instance, make_timestamp(started_at_ms * 1000)
    FROM stage_llm_calls WHERE started_at_ms IS NOT NULL
),
-- a day begins at the offset in force at its midnight: on a day whose
-- offset changes (a DST switch, after midnight), the previous evidence day's
-- offset at its end (its switch's new offset when it changed within)
day_starts AS (
    SELECT d.instance,
        CAST(d.day AS TIMESTAMP) - to_minutes(coalesce(
            lag(coalesce(s.after_offset, d.offset_minutes))
                OVER (PARTITION BY d.instance ORDER BY d.day), d.offset_minutes))
            AS starts_utc,
        d.offset_minutes
    FROM tz_days d
    LEFT JOIN tz_switches s USING (instance, day)
),
firsts AS (
    SELECT instance, arg_min(offset_minutes, day) AS offset_minutes FROM tz_days GROUP BY instance
),
guessed AS (
    SELECT i.instance, i.t, coalesce(d.offset_minutes, f.offset_minutes) AS guess
    FROM instants i
    ASOF LEFT JOIN day_starts d ON d.instance = i.instance AND i.t >= d.starts_utc
    LEFT JOIN firsts f ON f.instance = i.instance
)
SELECT instance, t, CAST(t + to_minutes(guess) AS DATE) AS day
FROM guessed;

CREATE TABLE local_days AS
SELECT DISTINCT instance, CAST(ts_local AS DATE) AS day
FROM events_kept
WHERE ts_local IS NOT NULL AND ts_utc IS NULL
UNION
SELECT DISTINCT instance, day FROM utc_instants WHERE day IS NOT NULL;

CREATE TABLE local_day_offsets AS
WITH before AS (
    SELECT d.instance, d.day, t.day AS evidence_day, t.offset_minutes
    FROM local_days d ASOF LEFT JOIN tz_days t ON d.instance = t.instance AND d.day >= t.day
),
after AS (
    SELECT d.instance, d.day, t.day AS evidence_day, t.offset_minutes
    FROM local_days d ASOF LEFT JOIN tz_days t ON d.instance = t.instance AND d.day <= t.day
)
SELECT b.instance, b.day,
    CASE WHEN b.evidence_day IS NULL THEN a.offset_minutes
         WHEN a.evidence_day IS NULL THEN b.offset_minutes
         WHEN (a.evidence_day - b.day) < (b.day - b.evidence_day) THEN a.offset_minutes
         ELSE b.offset_minutes END AS offset_minutes
FROM before b JOIN after a USING (instance, day);

-- The one switch-day rule: the offset in force at time t on a day whose
-- offset changes, given the last pair of the old offset and the first of
-- the new one (both on t's clock: local for a local time, UTC for an
-- instant): up to the last old pair the old offset, from the first new pair
-- the new one, between them the nearer pair's (the new one's on a tie, or
-- when no old pair is on the day).
CREATE MACRO switch_offset(t, last_before, first_after, before_offset, after_offset) AS
    CASE WHEN t <= last_before THEN before_offset
         WHEN t >= first_after THEN after_offset
         WHEN last_before IS NOT NULL AND t - last_before < first_after - t THEN before_offset
         ELSE after_offset END;

-- The offset in force at each true-UTC instant, by the rule of a local
-- time on its local day (given first; on a switch day, compared with the
-- switch's pairs in UTC; between them the nearer pair's); NULL when the
-- instance has no evidence. V016 gives the rows their timestamp_local and
-- V020 the calls their started_at_local from it.
CREATE TABLE utc_locals AS
SELECT i.instance, i.t,
    CAST(CASE WHEN p.given_offset_minutes IS NOT NULL THEN p.given_offset_minutes
         WHEN s.day IS NULL THEN o.offset_minutes
         ELSE switch_offset(i.t, s.last_before - to_minutes(s.before_offset),
                            s.first_after - to_minutes(s.after_offset),
                            s.before_offset, s.after_offset) END AS INTEGER) AS offset_minutes
FROM utc_instants i
CROSS JOIN params p
LEFT JOIN local_day_offsets o ON o.instance = i.instance AND o.day = i.day
LEFT JOIN tz_switches s ON s.instance = i.instance AND s.day = i.day;

-- A view, not a copy of the rows (see events_kept, V004).
CREATE VIEW events_utc AS
WITH placed AS (
    SELECT e.*, p.given_offset_minutes AS given,
        CASE WHEN s.day IS NULL OR e.ts_utc IS NOT NULL OR e.ts_local IS NULL THEN o.offset_minutes
             ELSE switch_offset(e.ts_local, s.last_before, s.first_after,
                                s.before_offset, s.after_offset) END AS derived,
        s.day IS NOT NULL AND e.ts_utc IS NULL AND e.ts_local IS NOT NULL
            AND e.ts_local < s.first_after
            AND (s.last_before IS NULL OR e.ts_local > s.last_before) AS uncertain
    FROM events_kept e
    CROSS JOIN params p
    LEFT JOIN local_day_offsets o
           ON o.instance = e.instance AND o.day = CAST(e.ts_local AS DATE) AND e.ts_utc IS NULL
    LEFT JOIN tz_switches s
           ON s.instance = e.instance AND s.day = CAST(e.ts_local AS DATE) AND e.ts_utc IS NULL
)
SELECT * EXCLUDE (given, derived, uncertain),
    CASE WHEN ts_utc IS NOT NULL OR ts_local IS NULL THEN NULL
         ELSE coalesce(given, derived, 0) END AS utc_offset_minutes,
    CASE WHEN ts_utc IS NOT NULL THEN 'utc'
         WHEN ts_local IS NULL THEN NULL
         WHEN given IS NOT NULL THEN 'local_given'
         WHEN uncertain THEN 'local_uncertain'
         WHEN derived IS NOT NULL THEN 'local_derived'
         ELSE 'local_as_utc' END AS time_basis,
    coalesce(ts_utc, ts_local - to_minutes(coalesce(given, derived, 0))) AS timestamp_utc
FROM placed;

-- tz_evidence and tz_votes (V005) and utc_instants are not read after this
-- step (the events_utc view reads local_day_offsets and tz_switches): the
-- tables the SQL steps hold stay within the memory limit (BENCHMARKS.md
-- "The 4 GB home at 256 MiB again").
DROP TABLE tz_evidence;
DROP TABLE tz_votes;
DROP TABLE utc_instants;
