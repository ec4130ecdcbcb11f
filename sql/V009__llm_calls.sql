-- V008 llm_calls
-- Purpose: nanobot's llm_usage rows with `instance`, `started_at` as UTC and
--          the attributed session. A call belongs to the session whose turn
--          contains its start: a turn runs from a session `user` message
--          (primary or surviving secondary copy) to the last message before
--          the next user message that is at most 10 minutes after it,
--          offset-corrected, plus 10 s. Where turns overlap (a subagent inside
--          its parent's turn) the turn with the latest user message wins;
--          otherwise session_id is NULL (e.g. the consolidation call of /new).
-- Grain:   one row per llm_calls row of each instance.
-- Inputs:  stage_llm_calls, events_linked (V006), order_sessions and
--          order_paths (V007).
-- The turn arithmetic runs over integer ids (order_sessions, order_paths
-- of V007), not the session and path strings, so one session of millions
-- of messages stays within the memory limit.
CREATE TABLE turn_messages AS
SELECT s.sess_id, p.path_id, e.seq, e.source_line, e.x_sub,
    e.turn_type = 'user' AS is_user, e.timestamp_utc
FROM events_linked e
JOIN order_paths p USING (source_path)
JOIN order_sessions s ON s.agent = e.agent AND s.instance = e.instance
                     AND s.session_id = e.session_id
WHERE e.agent = 'nanobot' AND e.source_kind IN ('nanobot.session_db', 'nanobot.session_jsonl')
  AND e.seq IS NOT NULL AND e.timestamp_utc IS NOT NULL AND e.session_id IS NOT NULL;

CREATE TABLE turn_spans AS
WITH numbered AS (
    SELECT *,
        sum(CASE WHEN is_user THEN 1 ELSE 0 END) OVER (
            PARTITION BY sess_id, path_id
            ORDER BY seq, source_line, x_sub ROWS UNBOUNDED PRECEDING) AS turn_no
    FROM turn_messages
),
starts AS (
    SELECT sess_id, path_id, turn_no, timestamp_utc AS turn_start
    FROM numbered WHERE is_user
)
SELECT st.sess_id, st.turn_start,
    max(n.timestamp_utc) FILTER (n.timestamp_utc <= st.turn_start + INTERVAL 10 MINUTE) + INTERVAL 10 SECOND AS turn_end
FROM starts st
JOIN numbered n USING (sess_id, path_id, turn_no)
GROUP BY st.sess_id, st.turn_start;

CREATE TABLE turns AS
SELECT s.instance, s.session_id, t.turn_start, t.turn_end
FROM turn_spans t
JOIN order_sessions s USING (sess_id);

CREATE TABLE llm_attribution AS
SELECT c.instance, c.id, t.session_id
FROM stage_llm_calls c
JOIN turns t
  ON t.instance = c.instance
 AND make_timestamp(c.started_at_ms * 1000) BETWEEN t.turn_start AND t.turn_end
QUALIFY row_number() OVER (PARTITION BY c.instance, c.source_path, c.id
                           ORDER BY t.turn_start DESC, t.session_id) = 1;

CREATE TABLE llm_calls AS
SELECT c.instance,
    c.id, c.started_at_ms, c.duration_ms, c.provider, c.model, c.source, c.stream, c.finish_reason,
    c.input_tokens, c.output_tokens, c.total_tokens, c.cache_read_tokens, c.cache_write_tokens,
    c.reported_tokens, c.estimated_tokens, c.generation_ms, c.measured_output_tokens, c.ttft_ms,
    c.timed_requests, c.error_status_code, c.error_kind,
    CAST(make_timestamp(c.started_at_ms * 1000) AS TIMESTAMPTZ) AS started_at,
    a.session_id,
    c.source_path
FROM stage_llm_calls c
LEFT JOIN llm_attribution a USING (instance, id);

-- events_linked (a full copy of every row) is not read after this file: free
-- its memory and spill space.
DROP TABLE events_linked;
