-- V007 events
-- Purpose: the final `events` table (OUT.parquet): contract columns in
--          contract order, plus `load_id` and `ordinal`.
--          ordinal = position in the session's native order:
--            nanobot  session-level rows, then by time (a row without a time
--                     takes the time of the row before it in its store),
--                     primary before secondary, source_path, seq, source_line,
--                     index inside the record;
--            nanoclaw session-level rows, inbound by (seq, id), outbound by
--                     (seq, id), then catalog/state rows (x_group 0…3).
-- Grain:   one row per event.
-- Inputs:  events_linked (V006), params (load_id).
CREATE TABLE events_ordered AS
SELECT *,
    coalesce(timestamp_utc,
             last_value(timestamp_utc IGNORE NULLS) OVER (
                 PARTITION BY source_path, session_id
                 ORDER BY seq NULLS FIRST, source_line, x_sub
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS order_ts
FROM events_linked;

CREATE TABLE events AS
SELECT
    agent, instance, session_id, parent_session_id, project_path,
    CAST(NULL AS VARCHAR) AS git_branch,
    seq,
    CAST(timestamp_utc AS TIMESTAMPTZ) AS timestamp_utc,
    ts_local AS timestamp_local,
    CAST(utc_offset_minutes AS INTEGER) AS utc_offset_minutes,
    time_basis, turn_type, model, tool_name, tool_use_id, text,
    source_kind, source_role, source_path, source_line, native,
    (SELECT load_id FROM params) AS load_id,
    row_number() OVER (
        PARTITION BY agent, instance, session_id
        ORDER BY x_group,
                 CASE WHEN agent = 'nanobot' THEN order_ts END NULLS LAST,
                 CASE WHEN agent = 'nanobot' THEN source_role END,
                 CASE WHEN agent = 'nanobot' THEN source_path END,
                 seq NULLS FIRST, x_id NULLS FIRST, source_path, source_line, x_sub
    ) AS ordinal
FROM events_ordered;
