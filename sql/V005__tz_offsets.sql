-- V005 tz_offsets
-- Purpose: derive each instance's UTC offset per local calendar day
--          from true-UTC evidence, on the 15-minute grid from −12:00 to +14:00
--          (integer minutes: an offset derived from evidence, not a zone's). A pair is:
--            llm    a session `user` message (primary or surviving secondary
--                   copy) and an llm_calls row of its source (`user`, or
--                   `cron` for automation turns) starting 0–10 s after the
--                   message's local time minus the candidate offset;
--            webui  a WebUI `user` record and the session's copy of the same
--                   text, within 10 s once corrected;
--            run    a cron/trigger run record's prompt and its session turn,
--                   within 10 s once corrected;
--            archive a nanoclaw exchange archive's answer (`Archived:`, the
--                   local minute of 0–10 s after it) and the same answer in
--                   its thread's transcript (UTC): nanoclaw's one evidence.
--          A day's winner has the most pairs; a tie goes to the offset of
--          the nearest day with a clear winner before it, then after it
--          (continuity), then to a DST step from the nearest day won by
--          two pairs or more, then to the offset with more WebUI/run-record
--          pairs, and only then to the smallest absolute offset. A winner
--          of one pair that differs from the nearest day won by two or more
--          (before, else after) by other than a DST step (60 min; 30 for
--          Lord Howe) gives way to that day's offset.
--          Consecutive evidence days with the same winner form one range.
-- Grain:   tz_evidence: one row per (pair, candidate offset);
--          tz_days: one row per instance and local day with evidence;
--          tz_offsets: one row per instance and range of days.
-- Inputs:  events_kept (V004), stage_llm_calls.
-- Output:  tz_session_users (session `user` rows with a local time),
--          tz_utc_records (kind: the turn copy, `webui` or `run`),
--          tz_user_slices (a session user row once per 4-hour block of its
--          window and 10-s slice a fitting call starts in), tz_evidence (kind: `llm`, `webui`, `run` or
--          `archive`; offset_minutes: a
--          candidate, local − UTC), tz_votes (pairs, copy_pairs: each
--          candidate offset's votes of a day), tz_days (offset_minutes: the day's
--          winner; pairs: its votes; day_pairs: all votes of the day),
--          tz_offsets (the output table: pairs, agreement = the winners'
--          share of the range's votes), the macro dst_step(a, b) (a is b
--          or a DST step from it); tz_session_users, tz_utc_records and
--          tz_user_slices are dropped at the end, unread after it.
-- Creates: table tz_days, table tz_evidence, table tz_offsets, table tz_votes
CREATE TABLE tz_session_users AS
SELECT instance, session_uid, ts_local, x_match, x_call_source
FROM events_kept
WHERE agent = 'nanobot' AND turn_type = 'user' AND ts_local IS NOT NULL
  AND session_store IS NOT NULL;

-- UTC-stamped records that have a session copy: WebUI user records, run prompts.
CREATE TABLE tz_utc_records AS
SELECT instance, session_uid, ts_utc, x_match, turn_copy AS kind
FROM events_kept
WHERE agent = 'nanobot' AND turn_type = 'user' AND ts_utc IS NOT NULL AND session_id IS NOT NULL
  AND turn_copy IS NOT NULL;

-- The 10-s slice (0…89) of its quarter hour an epoch time in ms falls in.
CREATE TEMP MACRO quarter_slice(ms) AS ((ms % 900000 + 900000) % 900000) // 10000;

-- Each user row once per 4-hour block of its window, so a call probes only
-- the rows of its block (an equi-join), not every row of its instance; and
-- once per 10-s slice of the quarter hour a fitting call starts in: a pair
-- fits only when (S − L) mod 15 min ∈ [0, 10 s], so S's slice is L's or the
-- next (mod 90). With hours and no slices every call met every user row of
-- its 26 hours, to keep a small part of the pairs, and their count grew
-- with the square of the rows per hour (BENCHMARKS.md "The SQL dataflow").
-- Blocks and slices by a cross join with constants (faster than unnest's
-- lateral join); a table, so that DuckDB knows it is the large side and
-- hashes the calls.
CREATE TABLE tz_user_slices AS
SELECT u.instance, u.ts_local, u.x_call_source,
    u.first_block + b.k AS block, (quarter_slice(epoch_ms(u.ts_local)) + p.j) % 90 AS slice
FROM (SELECT *,
          (epoch_ms(ts_local) - 14 * 3600000) // 14400000 AS first_block,
          (epoch_ms(ts_local) + 12 * 3600000 + 10000) // 14400000 AS last_block
      FROM tz_session_users) u
CROSS JOIN range(9) b(k)
CROSS JOIN (VALUES (0), (1)) p(j)
WHERE u.first_block + b.k <= u.last_block;

-- d = local − utc in milliseconds; a candidate o (minutes) fits when the
-- corrected local time lands in the window.
CREATE TABLE tz_evidence AS
WITH llm AS (
    SELECT u.instance, u.ts_local,
        epoch_ms(u.ts_local) - c.started_at_ms AS d
    FROM tz_user_slices u
    JOIN stage_llm_calls c
      ON c.instance = u.instance AND c.source = u.x_call_source
     AND c.started_at_ms // 14400000 = u.block
     AND quarter_slice(c.started_at_ms) = u.slice
     AND c.started_at_ms BETWEEN epoch_ms(u.ts_local) - 14 * 3600000
                             AND epoch_ms(u.ts_local) + 12 * 3600000 + 10000
),
llm_grid AS (
    -- S − (L − o) ∈ [0, 10 s]  ⇔  o·60000 ∈ [d, d + 10000]
    SELECT instance, ts_local, CAST(ceil(d / 900000.0) * 15 AS INTEGER) AS offset_minutes, 'llm' AS kind
    FROM llm
    WHERE ceil(d / 900000.0) * 900000 <= d + 10000
),
copies AS (
    SELECT u.instance, u.ts_local, r.kind,
        epoch_ms(u.ts_local) - epoch_ms(r.ts_utc) AS d
    FROM tz_session_users u
    JOIN tz_utc_records r
      ON r.instance = u.instance AND r.session_uid = u.session_uid AND r.x_match = u.x_match
     AND r.ts_utc BETWEEN u.ts_local - INTERVAL 14 HOUR - INTERVAL 10 SECOND
                      AND u.ts_local + INTERVAL 12 HOUR + INTERVAL 10 SECOND
),
copies_grid AS (
    -- |(L − o) − U| ≤ 10 s
    SELECT instance, ts_local, CAST(round(d / 900000.0) * 15 AS INTEGER) AS offset_minutes, kind
    FROM copies
    WHERE abs(d - round(d / 900000.0) * 900000) <= 10000
),
-- an exchange archive's answer and the same answer in its thread's transcript
archive AS (
    SELECT a.instance, a.ts_local, 'archive' AS kind,
        epoch_ms(a.ts_local) - epoch_ms(p.ts_utc) AS d
    FROM events_kept a
    JOIN events_kept p
      ON p.instance = a.instance AND p.agent = 'nanoclaw' AND p.nanoclaw = 'transcript'
     AND p.source_role = 'primary' AND p.turn_type = 'assistant'
     AND (p.native::JSON->>'transcript_id') = (a.native::JSON->>'transcript_id')
     AND trim(p.text, ' ' || chr(9) || chr(10) || chr(13)) = a.text
     AND p.ts_utc BETWEEN a.ts_local - INTERVAL 14 HOUR - INTERVAL 10 SECOND
                      AND a.ts_local + INTERVAL 12 HOUR + INTERVAL 60 SECOND
    WHERE a.agent = 'nanoclaw' AND a.nanoclaw = 'archive' AND a.turn_type = 'assistant'
      AND a.ts_local IS NOT NULL
),
archive_grid AS (
    -- L ≤ U' + o < L + 1 min with U' ∈ [U, U + 10 s]  ⇔  o·60000 ∈ [d − 10 s, d + 60 s)
    SELECT instance, ts_local, CAST(ceil((d - 10000) / 900000.0) * 15 AS INTEGER) AS offset_minutes, kind
    FROM archive
    WHERE ceil((d - 10000) / 900000.0) * 900000 < d + 60000
)
SELECT DISTINCT instance, CAST(ts_local AS DATE) AS day, ts_local, offset_minutes, kind
FROM (SELECT * FROM llm_grid UNION ALL SELECT * FROM copies_grid UNION ALL SELECT * FROM archive_grid)
WHERE offset_minutes BETWEEN -720 AND 840;

-- Whether offset a is b or a DST step from it (60 minutes; 30 between
-- +10:30 and +11:00, Lord Howe's, the one zone that steps by half an hour);
-- true when b is unknown. V006 reads it for the switch inside a day.
CREATE MACRO dst_step(a, b) AS
    b IS NULL OR abs(a - b) IN (0, 60) OR (least(a, b) = 630 AND greatest(a, b) = 660);

-- Each day's votes: the pairs of each candidate offset (V006 compares a
-- day's other offsets with its winner by them).
CREATE TABLE tz_votes AS
SELECT instance, day, offset_minutes, count(*) AS pairs,
    count(*) FILTER (kind <> 'llm') AS copy_pairs
FROM tz_evidence GROUP BY ALL;

CREATE TABLE tz_days AS
WITH ranked AS (
    SELECT *,
        sum(pairs) OVER (PARTITION BY instance, day) AS day_pairs,
        row_number() OVER (PARTITION BY instance, day
                           ORDER BY pairs DESC, offset_minutes) AS by_pairs,
        lead(pairs) OVER (PARTITION BY instance, day
                          ORDER BY pairs DESC, offset_minutes) AS runner_up
    FROM tz_votes
),
-- days whose winner has more pairs than any other offset of the day
clear AS (
    SELECT instance, day, offset_minutes, pairs
    FROM ranked WHERE by_pairs = 1 AND (runner_up IS NULL OR runner_up < pairs)
),
-- the clear days whose winner stands on two pairs or more
clear_strong AS (
    SELECT instance, day, offset_minutes FROM clear WHERE pairs >= 2
),
-- each day's nearest clear day before it and after it
neighbours AS (
    SELECT d.instance, d.day, b.offset_minutes AS before_offset, a.offset_minutes AS after_offset
    FROM (SELECT DISTINCT instance, day FROM tz_votes) d
    ASOF LEFT JOIN clear b ON b.instance = d.instance AND d.day > b.day
    ASOF LEFT JOIN clear a ON a.instance = d.instance AND d.day < a.day
),
-- each day's nearest day before it (else after it) whose winner stands on
-- two pairs or more
strong AS (
    SELECT d.instance, d.day, coalesce(b.offset_minutes, a.offset_minutes) AS offset_minutes
    FROM (SELECT DISTINCT instance, day FROM tz_votes) d
    ASOF LEFT JOIN clear_strong b ON b.instance = d.instance AND d.day > b.day
    ASOF LEFT JOIN clear_strong a ON a.instance = d.instance AND d.day < a.day
),
decided AS (
    -- most pairs; a tie is decided by continuity (the offset of the nearest
    -- clear day before, then after), then by a DST step from (or the
    -- offset of) the nearest strong day (a lone pair 45 min from it is a
    -- coincidence), then by the pairs of a WebUI or run record copy (exact,
    -- where a minute-aligned call may be a coincidence), and only then by
    -- the smallest absolute offset
    SELECT r.*,
        row_number() OVER (PARTITION BY r.instance, r.day
                           ORDER BY r.pairs DESC,
                                    r.offset_minutes IS NOT DISTINCT FROM n.before_offset DESC,
                                    r.offset_minutes IS NOT DISTINCT FROM n.after_offset DESC,
                                    dst_step(r.offset_minutes, s.offset_minutes) DESC,
                                    r.copy_pairs DESC,
                                    abs(r.offset_minutes), r.offset_minutes) AS rank
    FROM ranked r
    JOIN neighbours n USING (instance, day)
    JOIN strong s USING (instance, day)
),
-- one pair can show a DST change (60 minutes from that day; 30 between
-- +10:30 and +11:00, Lord Howe's, the one zone that steps by half an
-- hour), never a jump to another zone: such a day keeps the strong day's
-- offset
kept AS (
    SELECT w.instance, w.day, w.day_pairs,
        CASE WHEN w.pairs = 1 AND NOT dst_step(w.offset_minutes, s.offset_minutes)
             THEN s.offset_minutes ELSE w.offset_minutes END AS offset_minutes
    FROM decided w
    JOIN strong s USING (instance, day)
    WHERE w.rank = 1
)
SELECT k.instance, k.day, k.offset_minutes, coalesce(v.pairs, 0) AS pairs, k.day_pairs
FROM kept k
LEFT JOIN tz_votes v USING (instance, day, offset_minutes);

CREATE TABLE tz_offsets AS
WITH runs AS (
    SELECT *,
        row_number() OVER (PARTITION BY instance ORDER BY day)
          - row_number() OVER (PARTITION BY instance, offset_minutes ORDER BY day) AS run
    FROM tz_days
)
SELECT instance,
    min(day) AS first_day,
    max(day) AS last_day,
    offset_minutes,
    CAST(sum(pairs) AS BIGINT) AS pairs,
    round(sum(pairs) / sum(day_pairs), 4) AS agreement
FROM runs
GROUP BY instance, offset_minutes, run
ORDER BY instance, first_day;

-- tz_user_slices (four times the session user rows) is not read after
-- tz_evidence, nor tz_session_users and tz_utc_records after this step:
-- free their memory before the steps that copy every row.
DROP TABLE tz_user_slices;
DROP TABLE tz_session_users;
DROP TABLE tz_utc_records;
