-- V007 mirrored_turns
-- Purpose: which session turn each turn of a secondary copy mirrors
--          (docs/design.md "Dedup: secondary sources"). A session turn is a
--          session store's rows from a `user` row to the next. A copy turn
--          is a WebUI transcript `turn_id` (a record without one is its own
--          turn) or one run record. A copy turn mirrors the session turn
--          whose span contains its first record (offset-corrected UTC,
--          ±10 s), or, when it has a user text, the turn that the same text
--          starts 10 s before to an hour after it.
-- Grain:   session_turn_rows: one row per session-store row of a session
--          a turn copy holds;
--          session_turns: one row per (session, store, turn); copy_turns:
--          one row per copy turn; copy_turn_matches: one row per (copy turn,
--          mirrored session turn).
-- Inputs:  events_utc (V006), tz_days (V005), params.
-- Output:  session_turn_rows (turn_no: how many `user` rows of the store
--          precede or are the row; 0 before the first), session_turns
--          (turn_start: its user row's time, turn_end: its last non-system
--          row's; user_match: its user text), repeated_tool_ids (tool ids
--          more than one turn of a store uses: a provider reusing
--          `call_0`), offset_known (instances whose offset is derived or
--          given), copy_rows (copy_turn: the copy turn's key;
--          offset_known: its instance's offset is known, so times compare),
--          copy_turns (t0: its first record's time; user_match),
--          copy_turn_matches.
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

-- Only the sessions a turn copy holds: a session without one has no turn
-- to mirror (its rows were all numbered, every session row of a home).
CREATE TABLE session_turn_rows AS
SELECT session_uid, source_path, turn_type, x_match, tool_use_id, ts_local, timestamp_utc,
    sum(CASE WHEN turn_type = 'user' THEN 1 ELSE 0 END) OVER (
        PARTITION BY session_uid, source_path
        ORDER BY seq, source_line, x_sub ROWS UNBOUNDED PRECEDING) AS turn_no
FROM events_utc e
SEMI JOIN (SELECT DISTINCT session_uid FROM copy_rows) c USING (session_uid)
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
