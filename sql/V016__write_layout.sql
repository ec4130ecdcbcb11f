-- V016 write_layout
-- Purpose: the writer's plan of OUT.parquet (docs/design.md "Output
--          order": agent, instance, session_id, session_uid, ordinal;
--          sess_id follows the first four and ordinal is unique in a
--          session, so this is the total order): every row's narrow
--          columns, sorted once, with where its text and native are; the
--          sink (events_writer::write_events) streams it in order and reads each
--          unstaged row's text and native from the blob files, so the wide
--          values are never sorted, joined or copied by the engine.
--          The one sorted copy of the rows holds integer ids, not the
--          strings every row of a session or of a store repeats: sess_id
--          stands for (agent, instance, session_id, session_uid)
--          (plan_sessions, V015's order_sessions), store_id for
--          (source_kind, source_role, source_path, load_id) (plan_stores);
--          the sink and the `events` view look them up (the plan with the
--          strings sorted runs out of memory at the default limit on a
--          large home).
-- Grain:   events_plan: one row per event; write_layout, plan_sessions:
--          one row per sess_id; plan_stores: one row per store_id.
-- Inputs:  ordinals, order_sessions, linked_keys (V015), events_linked (V014),
--          utc_locals (V006: the local time of a row with only a true-UTC
--          one), params (load_id), x_plan_by_sort() (the prelude's: join
--          ordinals by sort, not by hash; steps::PlanJoin).
-- Output:  write_layout (rows_before: the rows of the sessions before
--          it in OUT.parquet; a row's place there, out_pos, 1…n, is that
--          plus its ordinal), plan_sessions (sess_id →
--          agent, instance, session_id, session_uid), plan_stores (store_id
--          → source_kind, source_role, source_path, load_id), events_plan
--          (out_pos, sess_id, store_id, the other contract columns, x_start
--          for V021, and where the row's text and native are: x_wide, x_blob, x_off,
--          x_text_len, x_native_len, x_bytes = their sum; stored in out_pos
--          order, what the writer reads), events (view: the contract
--          columns of events_plan with the ids looked up; its last,
--          tool_error, NULL here: the writer computes it per row).
-- Creates: table events_plan, table plan_sessions, table plan_stores,
-- Creates: table write_layout, view events
-- Where each session's rows start in OUT: its rows are ordinals 1…n, so a
-- row's out_pos is the rows of the sessions before its own plus its ordinal
-- (one row per session, not a sorted copy of every row's ids).
CREATE TABLE write_layout AS
SELECT sess_id,
    coalesce(sum(n) OVER (ORDER BY sess_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)
        AS rows_before
FROM (SELECT sess_id, count(*) AS n FROM ordinals GROUP BY sess_id);

CREATE TABLE plan_sessions AS
SELECT sess_id, agent, instance, session_id, session_uid
FROM order_sessions;

CREATE TABLE plan_stores AS
SELECT CAST(row_number() OVER (ORDER BY source_path, source_kind, source_role) AS INTEGER) AS store_id,
    source_kind, source_role, source_path, (SELECT load_id FROM params) AS load_id
FROM (SELECT DISTINCT source_kind, source_role, source_path FROM linked_keys);

-- The rows (events_linked, the views of V003–V014) are the probe side and
-- ordinals the build side of the join on x_row: DuckDB estimated the rows
-- at a few thousand after their joins and hashed them instead (every
-- row's columns in a hash table: out of memory at the default limit on a
-- large home). So the joins run in the order written, the small or narrow
-- table on the right (the build side) of each, here and in the views.
-- ordinals itself as a hash table does not fit in the memory limit beside
-- the views' joins on a home of millions of rows (BENCHMARKS.md "The 4 GB
-- home at 256 MiB again"): there (x_plan_by_sort(), chosen by the run from
-- the staged rows and the limit: steps::PlanJoin) both sides are sorted by
-- x_row instead and matched in order (an ASOF join; every row has its ordinals
-- row, so the match is exact, and the writer checks out_pos is 1…n). The
-- branch not chosen is a constant false filter, which DuckDB drops before
-- it plans it.
SET disabled_optimizers = 'join_order,build_side_probe_side';
CREATE TABLE events_plan AS
WITH placed AS (
    SELECT e.*, o.sess_id, o.ordinal
    FROM events_linked e
    JOIN ordinals o USING (x_row)
    WHERE NOT x_plan_by_sort()
    UNION ALL
    SELECT e.*, o.sess_id, o.ordinal
    FROM events_linked e
    ASOF JOIN ordinals o ON e.x_row >= o.x_row
    WHERE x_plan_by_sort()
)
SELECT CAST(l.rows_before + e.ordinal AS BIGINT) AS out_pos, e.sess_id, t.store_id,
    e.parent_session_id, e.project_path,
    CAST(NULL AS VARCHAR) AS git_branch,
    e.seq,
    CAST(e.timestamp_utc AS TIMESTAMPTZ) AS timestamp_utc,
    coalesce(e.ts_local, e.ts_utc + to_minutes(u.offset_minutes)) AS timestamp_local,
    CAST(coalesce(e.utc_offset_minutes, u.offset_minutes) AS INTEGER) AS utc_offset_minutes,
    e.time_basis, e.turn_type, e.model, e.tool_name, e.tool_use_id, e.text,
    e.source_line, e.native,
    e.ordinal, e.x_start,
    e.x_wide, e.x_blob, e.x_off, e.x_text_len, e.x_native_len,
    coalesce(e.x_text_len, 0) + coalesce(e.x_native_len, 0) AS x_bytes
FROM placed e
JOIN write_layout l USING (sess_id)
JOIN plan_stores t USING (source_kind, source_role, source_path)
LEFT JOIN utc_locals u ON u.instance = e.instance AND u.t = e.ts_utc AND e.ts_local IS NULL
ORDER BY out_pos;
RESET disabled_optimizers;


CREATE VIEW events AS
SELECT s.agent, s.instance, s.session_id, p.parent_session_id, p.project_path,
    p.git_branch, p.seq, p.timestamp_utc, p.timestamp_local, p.utc_offset_minutes,
    p.time_basis, p.turn_type, p.model, p.tool_name, p.tool_use_id, p.text,
    t.source_kind, t.source_role, t.source_path, p.source_line, p.native,
    t.load_id, p.ordinal, s.session_uid,
    -- the events writer fills it in from each row's text and native, which
    -- the engine does not hold (crate::readout::tool_error)
    CAST(NULL AS BOOLEAN) AS tool_error
FROM events_plan p
JOIN plan_sessions s USING (sess_id)
JOIN plan_stores t USING (store_id);
