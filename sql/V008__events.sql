-- V008 events
-- Purpose: the final `events` table (OUT.parquet): contract columns in
--          contract order, plus `load_id`, `ordinal` and `session_uid`.
--          ordinal = position in the session's (session_uid's) native order:
--            nanobot  session-level rows, then by time (a row without a time
--                     takes the time of the row before it in its store),
--                     primary before secondary, source_path, seq, source_line,
--                     index inside the record;
--            nanoclaw session-level rows, inbound by (seq, id), outbound by
--                     (seq, id), then catalog/state rows (x_group 0…3).
--          The window functions run over a narrow projection (integer ids
--          for paths and sessions, no text), so one session of millions of
--          rows still sorts within the memory limit; the wide rows join back.
-- Grain:   one row per event.
-- Output:  events (view), events_wide (the same rows with the writer's
--          x_row, out_pos, out_offset, x_bytes).
-- Inputs:  events_linked (V007), params (load_id).
CREATE TABLE order_paths AS
SELECT source_path, CAST(row_number() OVER (ORDER BY source_path) AS INTEGER) AS path_id
FROM (SELECT DISTINCT source_path FROM events_linked);

CREATE TABLE order_sessions AS
SELECT agent, instance, session_id, session_uid,
    CAST(row_number() OVER (ORDER BY agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST) AS INTEGER) AS sess_id
FROM (SELECT DISTINCT agent, instance, session_id, session_uid FROM events_linked);

CREATE TABLE order_keys AS
SELECT e.x_row, p.path_id, s.sess_id, e.agent = 'nanobot' AS is_nanobot,
    e.x_group, e.timestamp_utc, e.source_role = 'secondary' AS is_secondary,
    e.seq, e.x_id, e.source_line, e.x_sub,
    coalesce(strlen(e.text), 0) + coalesce(strlen(e.native), 0) AS x_bytes
FROM events_linked e
JOIN order_paths p USING (source_path)
JOIN order_sessions s ON s.agent = e.agent AND s.instance = e.instance
                     AND s.session_id IS NOT DISTINCT FROM e.session_id
                     AND s.session_uid IS NOT DISTINCT FROM e.session_uid;

CREATE TABLE order_times AS
SELECT *,
    coalesce(timestamp_utc,
             last_value(timestamp_utc IGNORE NULLS) OVER (
                 PARTITION BY path_id, sess_id
                 ORDER BY seq NULLS FIRST, source_line, x_sub
                 ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS order_ts
FROM order_keys;

CREATE TABLE ordinals AS
SELECT x_row, sess_id, x_bytes,
    row_number() OVER (
        PARTITION BY sess_id
        ORDER BY x_group,
                 CASE WHEN is_nanobot THEN order_ts END NULLS LAST,
                 CASE WHEN is_nanobot THEN is_secondary END,
                 CASE WHEN is_nanobot THEN path_id END,
                 seq NULLS FIRST, x_id NULLS FIRST, path_id, source_line, x_sub
    ) AS ordinal
FROM order_times;

-- out_pos: the row's place in OUT.parquet (docs/design.md "Output order":
-- agent, instance, session_id, session_uid, ordinal; sess_id follows the
-- first four and ordinal is unique in a session, so this is the total
-- order); out_offset: the
-- text and native bytes of all rows before it. Both are computed narrow
-- so the writer can cut OUT into byte ranges and never sorts the wide
-- rows at once.
CREATE TABLE out_positions AS
SELECT x_row, ordinal, x_bytes,
    row_number() OVER w AS out_pos,
    coalesce(sum(x_bytes) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS out_offset
FROM ordinals
WINDOW w AS (ORDER BY sess_id, ordinal);

-- events_wide: the contract columns plus the writer's helpers (x_row,
-- out_pos, out_offset, x_bytes); `events` shows the contract columns.
CREATE TABLE events_wide AS
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
    p.ordinal,
    session_uid,
    x_row, p.out_pos, p.out_offset, p.x_bytes
FROM events_linked
JOIN out_positions p USING (x_row);

CREATE VIEW events AS SELECT * EXCLUDE (x_row, out_pos, out_offset, x_bytes) FROM events_wide;
