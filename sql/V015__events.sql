-- V015 events
-- Purpose: the order of `events`, the table of the contract (OUT.parquet):
--          ordinal = position in the session's (session_uid's) native order,
--          first by x_group (session, record, outbound, state, transcript:
--          the x_group_<name>() macros), then:
--            nanobot  by time (a row without a time takes the time of the
--                     row before it in its store), primary before
--                     secondary, source_path, seq, source_line, index inside
--                     the record;
--            nanoclaw session-level rows, inbound by (seq, id), outbound by
--                     (seq, id), then catalog/state rows, then the Claude
--                     Code transcript rows of all its files by time (as
--                     nanobot's), then source_path, line, index in the line.
--          The window functions run over a narrow projection (integer ids
--          for paths and sessions, no text), so one session of millions of
--          rows still sorts within the memory limit; the wide rows join back.
-- Grain:   one row per event.
-- Inputs:  events_linked (V014).
-- Output:  linked_keys (each distinct (agent, instance, session_id,
--          session_uid, source_kind, source_role, source_path) of the rows:
--          the one pass over them the ids below and V016's plan_stores
--          read), order_paths (path_id: an integer per source_path, in path
--          order), order_sessions (sess_id: an integer per (agent,
--          instance, session_id, session_uid), in output order), ordinals
--          (ordinal: the row's place in its session, 1…n; with its x_row,
--          sess_id and path_id; from order_keys, the ordering columns, narrow, and
--          order_times, order_ts: the row's time, or the time of the row
--          before it in its store and session, both in the statement).
--          The `events` view itself is V016's, over the writer's plan.
-- Creates: table linked_keys, table order_paths, table order_sessions,
-- Creates: table ordinals
-- The strings the ids below number, read from the rows once: each
-- SELECT DISTINCT over events_linked runs the view chain again, so one
-- pass serves all three.
CREATE TABLE linked_keys AS
SELECT DISTINCT agent, instance, session_id, session_uid, source_kind, source_role, source_path
FROM events_linked;

CREATE TABLE order_paths AS
SELECT source_path, CAST(row_number() OVER (ORDER BY source_path) AS INTEGER) AS path_id
FROM (SELECT DISTINCT source_path FROM linked_keys);

CREATE TABLE order_sessions AS
SELECT agent, instance, session_id, session_uid,
    CAST(row_number() OVER (ORDER BY agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST) AS INTEGER) AS sess_id
FROM (SELECT DISTINCT agent, instance, session_id, session_uid FROM linked_keys);

-- The ordering columns (order_keys), each row's order time (order_times)
-- and its ordinal in one statement: materialising the first two copied
-- every row twice more.
CREATE TABLE ordinals AS
WITH order_keys AS (
    SELECT e.x_row, p.path_id, s.sess_id, e.agent = 'nanobot' AS is_nanobot,
        e.x_group, e.timestamp_utc, e.source_role = 'secondary' AS is_secondary,
        e.seq, e.x_id, e.source_line, e.x_sub
    FROM events_linked e
    JOIN order_paths p USING (source_path)
    JOIN order_sessions s ON s.agent = e.agent AND s.instance = e.instance
                         AND s.session_id IS NOT DISTINCT FROM e.session_id
                         AND s.session_uid IS NOT DISTINCT FROM e.session_uid
),
order_times AS (
    SELECT *,
        coalesce(timestamp_utc,
                 last_value(timestamp_utc IGNORE NULLS) OVER (
                     PARTITION BY path_id, sess_id
                     ORDER BY seq NULLS FIRST, source_line, x_sub
                     ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) AS order_ts
    FROM order_keys
)
SELECT x_row, sess_id, path_id,
    row_number() OVER (
        PARTITION BY sess_id
        ORDER BY x_group,
                 CASE WHEN is_nanobot OR x_group = x_group_transcript() THEN order_ts END NULLS LAST,
                 CASE WHEN is_nanobot THEN is_secondary END,
                 CASE WHEN is_nanobot OR x_group = x_group_transcript() THEN path_id END,
                 seq NULLS FIRST, x_id NULLS FIRST, path_id, source_line, x_sub
    ) AS ordinal
FROM order_times;
