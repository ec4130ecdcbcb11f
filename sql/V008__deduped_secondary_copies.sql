-- V008 deduped_secondary_copies
-- Purpose: which session turn each secondary copy's turn mirrors, then
--          drop the secondary rows the session stores also hold
--          (docs/design.md "Dedup: secondary sources"). A copy turn (a
--          WebUI `turn_id`, a record without one, or one run record)
--          mirrors a session turn (V007) only when the whole turn pairs:
--          the turn contains the copy's first record (UTC, ±10 s) or starts
--          with its user text from 10 s before to an hour after it; the
--          user texts agree; the copy's last answer record lies inside the
--          turn (±10 s: a copy turn that ended before the session turn
--          began is never its copy); no recorded `/new` lies between the copy's
--          end and the turn's start; every tool call id of the copy is the
--          turn's (assistant texts are not compared: a continued answer
--          is one text in the transcript, two turns in the session). CLI history: a session `user` row with the same
--          text within ±2 s local. Turn copies: tool rows on tool_use_id,
--          user/assistant/thinking rows on text, in a mirrored turn; offset
--          unknown: same text or id within 15 h. System rows never pair.
-- Grain:   copy_rows: one row per row of a turn copy with a session;
--          copy_turns: one row per copy turn; copy_news: one per /new;
--          copy_turn_matches: one per (copy turn, mirrored session turn);
--          window_drops: one per dropped row; events_deduped: the rest.
-- Inputs:  events_utc (V006), offset_known, session_turns and
--          session_turn_rows (V007).
-- Output:  copy_rows (copy_turn: its key; offset_known: times compare),
--          copy_turns (t0: first record; t9: last assistant, thinking or
--          tool record; user_match; call_source: `cron` for a run record,
--          else `user`), copy_news, copy_turn_matches, window_drops
--          (x_row, source_kind, reason), appended to dropped_rows;
--          events_deduped (view: events_utc's columns); drops
--          session_messages (V007, unread after it, kept for its tests) first
--          and session_turn_rows (V007) last.
-- Creates: table copy_news, table copy_rows, table copy_turn_matches,
-- Creates: table copy_turns, table window_drops, view events_deduped
-- V007's session_messages, a row per session message (the largest table
-- of the steps on a large home), is not read after V007: free it before
-- the tables below.
DROP TABLE session_messages;

CREATE TABLE copy_rows AS
SELECT e.x_row, e.source_kind, e.instance, e.session_uid, e.turn_type, e.x_match,
    e.tool_use_id, e.timestamp_utc, e.turn_copy,
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
    max(timestamp_utc) FILTER (turn_type IN ('assistant', 'thinking', 'tool_use', 'tool_result')) AS t9,
    min(x_match) FILTER (turn_type = 'user') AS user_match,
    CASE WHEN min(turn_copy) = 'run' THEN 'cron' ELSE 'user' END AS call_source
FROM copy_rows
GROUP BY ALL;

-- the `/new` commands a copy recorded (the session keeps none: /new clears it)
CREATE TABLE copy_news AS
SELECT session_uid, timestamp_utc
FROM copy_rows
WHERE turn_type = 'user' AND lower(trim(x_match)) = '/new' AND timestamp_utc IS NOT NULL;

CREATE TABLE copy_turn_matches AS
WITH candidates AS (
    SELECT DISTINCT c.session_uid, c.copy_turn, s.source_path, s.turn_no
    FROM copy_turns c
    JOIN session_turns s
      ON s.session_uid = c.session_uid
     AND ((s.turn_start <= c.t0 + INTERVAL 10 SECOND AND c.t0 <= s.turn_end + INTERVAL 10 SECOND)
          OR (c.user_match IS NOT NULL AND s.user_match = c.user_match
              AND s.turn_start BETWEEN c.t0 - INTERVAL 10 SECOND AND c.t0 + INTERVAL 1 HOUR))
     AND (c.user_match IS NULL OR s.user_match = c.user_match)
     -- the copy's answer lies inside the session turn: it ends no later
     -- than the turn does, and no earlier than the turn begins (a turn
     -- asked again with the same words minutes after the copy's is not
     -- its original, whether or not the copy recorded the /new between)
     AND (c.t9 IS NULL OR c.t9 BETWEEN s.turn_start - INTERVAL 10 SECOND
                                   AND s.turn_end + INTERVAL 10 SECOND)
     -- no /new of the chat between the copy turn's end and the session
     -- turn's start: the /new erased the copy's turn from the session
     AND NOT EXISTS (SELECT 1 FROM copy_news n
                     WHERE n.session_uid = c.session_uid
                       AND n.timestamp_utc > coalesce(c.t9, c.t0)
                       AND n.timestamp_utc < s.turn_start)
),
-- the copy's tool calls, each with whether the candidate turn has it
copy_calls AS (
    SELECT k.session_uid, k.copy_turn, k.source_path, k.turn_no,
        EXISTS (SELECT 1 FROM session_turn_rows s
                WHERE s.session_uid = k.session_uid AND s.source_path = k.source_path
                  AND s.turn_no = k.turn_no AND s.turn_type = 'tool_use'
                  AND s.tool_use_id = r.tool_use_id) AS found
    FROM candidates k
    JOIN copy_rows r USING (session_uid, copy_turn)
    WHERE r.turn_type = 'tool_use' AND r.tool_use_id IS NOT NULL
)
SELECT k.*
FROM candidates k
WHERE NOT EXISTS (SELECT 1 FROM copy_calls p
                  WHERE p.session_uid = k.session_uid AND p.copy_turn = k.copy_turn
                    AND p.source_path = k.source_path AND p.turn_no = k.turn_no
                    AND NOT p.found);

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
-- tool rows: the same call in a mirrored session turn
SELECT w.x_row, w.source_kind,
    CASE WHEN w.offset_known THEN 'same tool call in the session turn'
         ELSE 'same tool call in the session within 15 h (offset unknown)' END AS reason
FROM copy_rows w
WHERE w.tool_use_id IS NOT NULL AND w.turn_type IN ('tool_use', 'tool_result')
  AND EXISTS (
    SELECT 1 FROM session_turn_rows s
    WHERE s.session_uid = w.session_uid AND s.turn_type = w.turn_type
      AND s.tool_use_id = w.tool_use_id
      AND (CASE WHEN w.offset_known
                THEN EXISTS (SELECT 1 FROM copy_turn_matches m
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

-- The rows both dedups keep (V004's and this step's): a view, not a copy of
-- the rows (see events_kept, V004).
-- session_turn_rows (V007, a row per row of the sessions a turn copy
-- holds) is not read after the window above.
DROP TABLE session_turn_rows;

CREATE VIEW events_deduped AS
SELECT e.*
FROM events_utc e
ANTI JOIN window_drops d USING (x_row);

