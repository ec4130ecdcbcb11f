-- V006 dedup_secondary_copies
-- Purpose: drop rows of secondary sources that the session stores also hold
--          (docs/design.md "Dedup: secondary sources"). CLI history: a
--          session `user` row with the same text within ±2 s of local time.
--          WebUI transcript and run records, turn-aware: a copy turn (a
--          transcript `turn_id`, or one run record) mirrors the session turn
--          (a session store's rows from a `user` row to the next) whose span
--          contains its first record (offset-corrected, ±10 s), or that its
--          user text starts 10 s before to an hour after it. Tool rows pair
--          on tool_use_id whatever the times (in a mirrored turn when the id
--          is in several turns of the store: a provider reusing `call_0`);
--          user/assistant/thinking rows on text (runtime-context suffix
--          removed) in a mirrored turn. Offset unknown: same text or id within 15 h.
--          System rows never pair; an unmatched row stays (a deleted chat, a
--          /new-erased turn, a tool result nanobot dropped on save).
-- Grain:   session_turn_rows: one row per session-store row of a session;
--          session_turns: one row per (session, store, turn); copy_turns:
--          one row per copy turn; copy_turn_matches: one row per (copy turn,
--          mirrored session turn); appends to dropped_rows; events_final =
--          events_utc minus drops.
-- Inputs:  events_utc (V005), tz_days (V004), params.
CREATE TABLE session_turn_rows AS
SELECT session_uid, source_path, turn_type, x_match, tool_use_id, ts_local, timestamp_utc,
    sum(CASE WHEN turn_type = 'user' THEN 1 ELSE 0 END) OVER (
        PARTITION BY session_uid, source_path
        ORDER BY seq, source_line, x_sub ROWS UNBOUNDED PRECEDING) AS turn_no
FROM events_utc
WHERE agent = 'nanobot' AND session_store IS NOT NULL
  AND seq IS NOT NULL AND session_uid IS NOT NULL;

CREATE TABLE session_turns AS
SELECT session_uid, source_path, turn_no,
    min(timestamp_utc) FILTER (turn_type = 'user') AS turn_start,
    max(timestamp_utc) FILTER (turn_type <> 'system') AS turn_end,
    min(x_match) FILTER (turn_type = 'user') AS user_match
FROM session_turn_rows
WHERE turn_no > 0
GROUP BY ALL;

-- tool ids that more than one turn of a session store uses
CREATE TABLE repeated_tool_ids AS
SELECT session_uid, source_path, tool_use_id
FROM session_turn_rows
WHERE tool_use_id IS NOT NULL
GROUP BY ALL
HAVING count(DISTINCT turn_no) > 1;

CREATE TABLE offset_known AS
SELECT DISTINCT instance FROM tz_days
UNION
SELECT DISTINCT instance FROM events_utc, params WHERE params.given_offset_minutes IS NOT NULL;

CREATE TABLE copy_rows AS
SELECT e.x_row, e.source_kind, e.instance, e.session_uid, e.turn_type, e.x_match,
    e.tool_use_id, e.timestamp_utc,
    CASE WHEN e.turn_copy = 'webui'
         THEN coalesce('turn:' || e.x_turn, e.source_path || ':' || CAST(e.source_line AS VARCHAR))
         ELSE e.source_path END AS copy_turn,
    k.instance IS NOT NULL AS offset_known
FROM events_utc e
LEFT JOIN offset_known k ON k.instance = e.instance
WHERE e.turn_copy IS NOT NULL AND e.session_uid IS NOT NULL;

CREATE TABLE copy_turns AS
SELECT session_uid, copy_turn,
    min(timestamp_utc) AS t0,
    min(x_match) FILTER (turn_type = 'user') AS user_match
FROM copy_rows
GROUP BY ALL;

CREATE TABLE copy_turn_matches AS
SELECT DISTINCT c.session_uid, c.copy_turn, s.source_path, s.turn_no
FROM copy_turns c
JOIN session_turns s
  ON s.session_uid = c.session_uid
 AND ((s.turn_start <= c.t0 + INTERVAL 10 SECOND AND c.t0 <= s.turn_end + INTERVAL 10 SECOND)
      OR (c.user_match IS NOT NULL AND s.user_match = c.user_match
          AND s.turn_start BETWEEN c.t0 - INTERVAL 10 SECOND AND c.t0 + INTERVAL 1 HOUR));

CREATE TABLE window_drops AS
-- CLI history: same text, ±2 s local
SELECT c.x_row, c.source_kind,
    'same text in a session within 2 s (local time)' AS reason
FROM events_utc c
WHERE c.prompt_copy AND c.ts_local IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM session_turn_rows s
    WHERE s.turn_type = 'user' AND s.x_match = c.x_match AND s.ts_local IS NOT NULL
      AND s.ts_local BETWEEN c.ts_local - INTERVAL 2 SECOND AND c.ts_local + INTERVAL 2 SECOND)
UNION ALL
-- tool rows: the same call in the session (in the same turn when the id repeats)
SELECT w.x_row, w.source_kind, 'same tool call in the session' AS reason
FROM copy_rows w
WHERE w.tool_use_id IS NOT NULL AND w.turn_type IN ('tool_use', 'tool_result')
  AND EXISTS (
    SELECT 1 FROM session_turn_rows s
    WHERE s.session_uid = w.session_uid AND s.turn_type = w.turn_type
      AND s.tool_use_id = w.tool_use_id
      AND (CASE WHEN w.offset_known
                THEN NOT EXISTS (SELECT 1 FROM repeated_tool_ids r
                                 WHERE r.session_uid = s.session_uid AND r.source_path = s.source_path
                                   AND r.tool_use_id = s.tool_use_id)
                     OR EXISTS (SELECT 1 FROM copy_turn_matches m
                                WHERE m.session_uid = w.session_uid AND m.copy_turn = w.copy_turn
                                  AND m.source_path = s.source_path AND m.turn_no = s.turn_no)
                ELSE s.timestamp_utc BETWEEN w.timestamp_utc - INTERVAL 15 HOUR
                                         AND w.timestamp_utc + INTERVAL 15 HOUR END))
UNION ALL
-- user, assistant and thinking texts: the same text in a mirrored session turn
SELECT w.x_row, w.source_kind,
    CASE WHEN w.offset_known THEN 'same text in the session turn'
         ELSE 'same text in the session within 15 h (offset unknown)' END AS reason
FROM copy_rows w
WHERE w.turn_type IN ('user', 'assistant', 'thinking') AND w.x_match IS NOT NULL
  AND EXISTS (
    SELECT 1 FROM session_turn_rows s
    WHERE s.session_uid = w.session_uid AND s.turn_type = w.turn_type AND s.x_match = w.x_match
      AND (CASE WHEN w.offset_known
                THEN EXISTS (SELECT 1 FROM copy_turn_matches m
                             WHERE m.session_uid = w.session_uid AND m.copy_turn = w.copy_turn
                               AND m.source_path = s.source_path AND m.turn_no = s.turn_no)
                ELSE s.timestamp_utc BETWEEN w.timestamp_utc - INTERVAL 15 HOUR
                                         AND w.timestamp_utc + INTERVAL 15 HOUR END));

INSERT INTO dropped_rows SELECT * FROM window_drops;

-- WebUI rows take the project of their session (the transcript has none).
CREATE TABLE session_projects AS
SELECT session_uid, min(project_path) AS project_path
FROM events_utc
WHERE agent = 'nanobot' AND project_path IS NOT NULL AND session_uid IS NOT NULL
  AND session_store IS NOT NULL
GROUP BY ALL;

CREATE TABLE events_final AS
SELECT e.* REPLACE (coalesce(e.project_path, p.project_path) AS project_path)
FROM events_utc e
LEFT JOIN session_projects p
       ON e.turn_copy = 'webui' AND p.session_uid = e.session_uid
ANTI JOIN window_drops d USING (x_row);

-- events_utc (a full copy of every row) is not read after this file: free
-- its memory and spill space.
DROP TABLE events_utc;
