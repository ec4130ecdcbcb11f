-- V005 dedup_secondary_windows
-- Purpose: drop rows of secondary sources that the session stores also hold.
--          cli_history          a session `user` row (any nanobot instance:
--                               0.3.5 writes one history for all) with the
--                               same text within ±2 s of local time;
--          webui_transcript,    a session row of the same instance, session
--          cron_run,            key and turn type with the same text (the
--          trigger_run          session copy's runtime-context suffix removed)
--                               — tool rows: the same tool_use_id — within
--                               60 s of UTC once the instance's offset is
--                               known (derived or given), else within 15 h.
--          A run's `cron run:` / `trigger run:` system row and WebUI system
--          rows never pair; an unmatched row stays (that is how a deleted
--          chat or a `/new`-erased turn is recovered).
-- Grain:   appends to dropped_rows; events_final = events_utc minus drops.
-- Inputs:  events_utc (V004), tz_days (V003), params.
CREATE TABLE session_rows AS
SELECT instance, session_id, turn_type, x_match, tool_use_id, ts_local, timestamp_utc
FROM events_utc
WHERE agent = 'nanobot' AND source_kind IN ('nanobot.session_db', 'nanobot.session_jsonl')
  AND seq IS NOT NULL;

CREATE TABLE offset_known AS
SELECT DISTINCT instance FROM tz_days
UNION
SELECT DISTINCT instance FROM events_utc, params WHERE params.given_offset_minutes IS NOT NULL;

CREATE TABLE window_drops AS
-- CLI history: same text, ±2 s local
SELECT c.x_row, c.source_kind,
    'same text in a session within 2 s (local time)' AS reason
FROM events_utc c
WHERE c.source_kind = 'nanobot.cli_history' AND c.ts_local IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM session_rows s
    WHERE s.turn_type = 'user' AND s.x_match = c.x_match AND s.ts_local IS NOT NULL
      AND s.ts_local BETWEEN c.ts_local - INTERVAL 2 SECOND AND c.ts_local + INTERVAL 2 SECOND)
UNION ALL
-- WebUI transcript and run records
SELECT w.x_row, w.source_kind,
    CASE WHEN k.instance IS NULL THEN 'same row in the session within 15 h (offset unknown)'
         ELSE 'same row in the session within 60 s' END
FROM events_utc w
LEFT JOIN offset_known k ON k.instance = w.instance
WHERE w.source_kind IN ('nanobot.webui_transcript', 'nanobot.cron_run', 'nanobot.trigger_run')
  AND w.turn_type <> 'system' AND w.session_id IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM session_rows s
    WHERE s.instance = w.instance AND s.session_id = w.session_id AND s.turn_type = w.turn_type
      AND CASE WHEN w.tool_use_id IS NOT NULL THEN s.tool_use_id = w.tool_use_id
               ELSE s.x_match = w.x_match END
      AND CASE WHEN k.instance IS NOT NULL
               THEN s.timestamp_utc BETWEEN w.timestamp_utc - INTERVAL 60 SECOND AND w.timestamp_utc + INTERVAL 60 SECOND
               ELSE s.timestamp_utc BETWEEN w.timestamp_utc - INTERVAL 15 HOUR AND w.timestamp_utc + INTERVAL 15 HOUR END);

INSERT INTO dropped_rows SELECT * FROM window_drops;

-- WebUI rows take the project of their session (the transcript has none).
CREATE TABLE session_projects AS
SELECT instance, session_id, min(project_path) AS project_path
FROM events_utc
WHERE agent = 'nanobot' AND project_path IS NOT NULL AND session_id IS NOT NULL
  AND source_kind IN ('nanobot.session_db', 'nanobot.session_jsonl')
GROUP BY ALL;

CREATE TABLE events_final AS
SELECT e.* REPLACE (coalesce(e.project_path, p.project_path) AS project_path)
FROM events_utc e
LEFT JOIN session_projects p
       ON e.source_kind = 'nanobot.webui_transcript' AND p.instance = e.instance AND p.session_id = e.session_id
ANTI JOIN window_drops d USING (x_row);

-- events_utc (a full copy of every row) is not read after this file: free
-- its memory and spill space.
DROP TABLE events_utc;
