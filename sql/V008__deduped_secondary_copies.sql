-- V008 deduped_secondary_copies
-- Purpose: drop rows of secondary sources that the session stores also hold
--          (docs/design.md "Dedup: secondary sources"). CLI history (the
--          prompt copy): a session `user` row with the same text within
--          ±2 s of local time. WebUI transcript and run records (turn
--          copies), turn-aware (V007): tool rows pair on tool_use_id
--          whatever the times (in a mirrored turn when the id is in several
--          turns of the store: a provider reusing `call_0`);
--          user/assistant/thinking rows on text (runtime-context suffix
--          removed) in a mirrored turn. Offset unknown: same text or id
--          within 15 h. System rows never pair; an unmatched row stays (a
--          deleted chat, a /new-erased turn, a tool result nanobot dropped
--          on save).
-- Grain:   window_drops: one row per dropped row; events_final: events_utc
--          minus them.
-- Inputs:  events_utc (V006), session_turn_rows, repeated_tool_ids,
--          copy_rows, copy_turn_matches (V007).
-- Output:  window_drops (x_row, source_kind, reason), appended to
--          dropped_rows; events_final (view: events_utc's columns).
CREATE TABLE window_drops AS
-- CLI history: same text, ±2 s local
SELECT c.x_row, c.source_kind,
    'same text in a session within 2 s (local time)' AS reason
FROM events_utc c
WHERE c.prompt_copy AND c.ts_local IS NOT NULL
  AND EXISTS (
    -- any session's user rows (session_turn_rows holds only the sessions of
    -- turn copies)
    SELECT 1 FROM events_utc s
    WHERE s.agent = 'nanobot' AND s.session_store IS NOT NULL
      AND s.seq IS NOT NULL AND s.session_uid IS NOT NULL
      AND s.turn_type = 'user' AND s.x_match = c.x_match AND s.ts_local IS NOT NULL
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

-- A view, not a copy of the rows (see events_kept, V004).
CREATE VIEW events_final AS
SELECT e.*
FROM events_utc e
ANTI JOIN window_drops d USING (x_row);

