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
-- Inputs:  stage_llm_calls, events_linked (V006).
CREATE TABLE turn_messages AS
SELECT instance, session_id, source_path, seq, source_line, x_sub, turn_type, timestamp_utc
FROM events_linked
WHERE agent = 'nanobot' AND source_kind IN ('nanobot.session_db', 'nanobot.session_jsonl')
  AND seq IS NOT NULL AND timestamp_utc IS NOT NULL AND session_id IS NOT NULL;

CREATE TABLE turns AS
WITH numbered AS (
    SELECT *,
        sum(CASE WHEN turn_type = 'user' THEN 1 ELSE 0 END) OVER (
            PARTITION BY instance, session_id, source_path
            ORDER BY seq, source_line, x_sub ROWS UNBOUNDED PRECEDING) AS turn_no
    FROM turn_messages
),
starts AS (
    SELECT instance, session_id, source_path, turn_no, timestamp_utc AS turn_start
    FROM numbered WHERE turn_type = 'user'
)
SELECT s.instance, s.session_id, s.turn_start,
    max(n.timestamp_utc) FILTER (n.timestamp_utc <= s.turn_start + INTERVAL 10 MINUTE) + INTERVAL 10 SECOND AS turn_end
FROM starts s
JOIN numbered n USING (instance, session_id, source_path, turn_no)
GROUP BY ALL;

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
