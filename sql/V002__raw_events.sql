-- V001 raw_events
-- Purpose: one typed table of every row the extractors staged, before dedup.
-- Grain:   one row per extracted event (all stores, all agents).
-- Inputs:  stage_events (view over the staged Parquet files, created by the
--          engine before this file runs).
CREATE TABLE raw_events AS
SELECT
    agent, instance, session_id, parent_session_id, project_path,
    seq,
    CAST(ts_utc AS TIMESTAMP)   AS ts_utc,
    CAST(ts_local AS TIMESTAMP) AS ts_local,
    turn_type, model, tool_name, tool_use_id, text,
    source_kind, source_role, source_path, source_line, native,
    x_group, x_sub, x_record, x_match, x_id, x_meta, x_call_source,
    -- a row identity for the views' joins (never output, so its order is free)
    row_number() OVER () AS x_row
FROM stage_events;
