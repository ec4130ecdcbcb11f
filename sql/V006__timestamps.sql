-- V006 timestamps
-- Purpose: timestamp_utc for every kept row. True-UTC sources keep their time
--          (time_basis 'utc'). A local-time row gets local − offset where the
--          offset is, in order: --utc-offset ('local_given'); the derived
--          offset of its instance and local day, or of the nearest day with
--          evidence (ties: the earlier day) ('local_derived'); else 0
--          ('local_as_utc', the instance has no evidence at all).
-- Grain:   one row per kept event.
-- Inputs:  events_kept (V004), tz_days (V005), params (given_offset_minutes).
-- Output:  local_days (instance, local day of rows with only a local time),
--          local_day_offsets (offset_minutes: that day's, or the nearest
--          evidence day's), events_utc (view: events_kept plus
--          utc_offset_minutes, time_basis, timestamp_utc).
CREATE TABLE local_days AS
SELECT DISTINCT instance, CAST(ts_local AS DATE) AS day
FROM events_kept
WHERE ts_local IS NOT NULL AND ts_utc IS NULL;

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

-- A view, not a copy of the rows (see events_kept, V004).
CREATE VIEW events_utc AS
SELECT e.*,
    CASE WHEN e.ts_utc IS NOT NULL OR e.ts_local IS NULL THEN NULL
         ELSE coalesce(p.given_offset_minutes, o.offset_minutes, 0) END AS utc_offset_minutes,
    CASE WHEN e.ts_utc IS NOT NULL THEN 'utc'
         WHEN e.ts_local IS NULL THEN NULL
         WHEN p.given_offset_minutes IS NOT NULL THEN 'local_given'
         WHEN o.offset_minutes IS NOT NULL THEN 'local_derived'
         ELSE 'local_as_utc' END AS time_basis,
    coalesce(e.ts_utc,
             e.ts_local - to_minutes(coalesce(p.given_offset_minutes, o.offset_minutes, 0))) AS timestamp_utc
FROM events_kept e
CROSS JOIN params p
LEFT JOIN local_day_offsets o
       ON o.instance = e.instance AND o.day = CAST(e.ts_local AS DATE) AND e.ts_utc IS NULL;

