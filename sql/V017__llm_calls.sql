-- V017 llm_calls
-- Purpose: nanobot's llm_usage rows with `instance`, `started_at` as UTC and
--          the attributed session (docs/design.md "LLM call attribution").
--          A call belongs to the session whose turn contains its start: a
--          turn runs from a session `user` message (primary or surviving
--          secondary copy) to the last user/assistant/tool message before
--          the next user message of that store, however long, plus 10 s; a
--          WebUI transcript or run record turn that no session turn mirrors
--          (a chat /new erased) runs from its first to its last record,
--          plus 10 s. Where turns overlap (a subagent inside its parent's
--          turn) the turn with the latest start wins; a call in no turn has
--          session NULL (between turns, the archive call of a /new).
-- Grain:   one row per llm_calls row of each instance.
-- Inputs:  stage_llm_calls, events_linked (V014), copy_rows, copy_turns
--          and copy_turn_matches (V007), order_sessions and ordinals
--          (V015); drops ordinals.
-- Output:  turn_messages (is_user: the row starts a turn), turn_spans
--          (turn_start, turn_end: a turn's span, end + 10 s, by sess_id),
--          turns (the spans by instance and session), turn_hours (a turn
--          once per hour it touches: hour = its µs epoch // 3 600 000 000),
--          llm_attribution (the session of each attributed call), llm_calls
--          (the output table).
-- The turn arithmetic runs over integer ids (sess_id, path_id of V015's
-- ordinals), not the session and path strings, so one session of millions
-- of messages stays within the memory limit.
CREATE TABLE turn_messages AS
SELECT o.sess_id, o.path_id, e.seq, e.source_line, e.x_sub,
    e.turn_type = 'user' AS is_user, e.timestamp_utc
FROM events_linked e
-- the row's session and path ids (V015): one join on x_row, not two on
-- the strings (half the time at 1 GB)
JOIN ordinals o USING (x_row)
-- chat rows only: a hidden summary checkpoint (a `system` row) is written
-- when the next turn compacts, not inside the turn before it
WHERE e.agent = 'nanobot' AND e.session_store IS NOT NULL
  AND e.seq IS NOT NULL AND e.timestamp_utc IS NOT NULL AND e.session_id IS NOT NULL
  AND e.session_uid IS NOT NULL AND e.turn_type <> 'system';

CREATE TABLE turn_spans AS
WITH numbered AS (
    SELECT *,
        sum(CASE WHEN is_user THEN 1 ELSE 0 END) OVER (
            PARTITION BY sess_id, path_id
            ORDER BY seq, source_line, x_sub ROWS UNBOUNDED PRECEDING) AS turn_no
    FROM turn_messages
)
SELECT sess_id, min(timestamp_utc) FILTER (is_user) AS turn_start,
    max(timestamp_utc) + INTERVAL 10 SECOND AS turn_end
FROM numbered
WHERE turn_no > 0
GROUP BY sess_id, path_id, turn_no
UNION ALL
-- copy turns that mirror no session turn
SELECT s.sess_id, c.t0, max(r.timestamp_utc) + INTERVAL 10 SECOND
FROM copy_turns c
JOIN copy_rows r USING (session_uid, copy_turn)
JOIN order_sessions s ON s.agent = 'nanobot' AND s.session_uid = c.session_uid
WHERE NOT EXISTS (SELECT 1 FROM copy_turn_matches m
                  WHERE m.session_uid = c.session_uid AND m.copy_turn = c.copy_turn)
GROUP BY s.sess_id, c.session_uid, c.copy_turn, c.t0;

CREATE TABLE turns AS
SELECT s.instance, s.session_id, s.session_uid, t.turn_start, t.turn_end
FROM turn_spans t
JOIN order_sessions s USING (sess_id)
WHERE t.turn_start IS NOT NULL;

-- each turn once per hour it touches, so a call probes only the turns of its
-- hour (an equi-join) instead of every turn of its instance (a range join)
CREATE TABLE turn_hours AS
SELECT t.*, h.hour
FROM turns t,
    unnest(range(epoch_us(t.turn_start) // 3600000000,
                 epoch_us(t.turn_end) // 3600000000 + 1)) h(hour);

CREATE TABLE llm_attribution AS
SELECT c.instance, c.source_path, c.id, t.session_id, t.session_uid
FROM stage_llm_calls c
JOIN turn_hours t
  ON t.instance = c.instance
 AND t.hour = c.started_at_ms * 1000 // 3600000000
 AND make_timestamp(c.started_at_ms * 1000) BETWEEN t.turn_start AND t.turn_end
QUALIFY row_number() OVER (PARTITION BY c.instance, c.source_path, c.id
                           ORDER BY t.turn_start DESC, t.session_id, t.session_uid) = 1;

CREATE TABLE llm_calls AS
SELECT c.instance,
    c.id, c.started_at_ms, c.duration_ms, c.provider, c.model, c.source, c.stream, c.finish_reason,
    c.input_tokens, c.output_tokens, c.total_tokens, c.cache_read_tokens, c.cache_write_tokens,
    c.reported_tokens, c.estimated_tokens, c.generation_ms, c.measured_output_tokens, c.ttft_ms,
    c.timed_requests, c.error_status_code, c.error_kind,
    CAST(make_timestamp(c.started_at_ms * 1000) AS TIMESTAMPTZ) AS started_at,
    a.session_id,
    c.source_path,
    a.session_uid
FROM stage_llm_calls c
LEFT JOIN llm_attribution a USING (instance, source_path, id);

-- turn_messages and V015's ordinals (each a row per event) are not read
-- after this step: free their memory for the writer (the peak RSS).
DROP TABLE turn_messages;
DROP TABLE ordinals;
