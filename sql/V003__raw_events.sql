-- V003 raw_events
-- Purpose: one typed view of every row the extractors staged, before
--          dedup, with its session_uid (V001), its store's final role (V002:
--          a demoted legacy copy is secondary, a promoted JSONL primary)
--          and the traits of its kind (kinds), which the steps after this
--          one ask instead of naming kinds. A view, not a table: the staged
--          Parquet is the one copy of the rows until V016's plan, and each
--          step reads only the columns it needs through it (a table here
--          and a copy per step spill at the default memory limit on a
--          large home). On a
--          small home the engine copies this view, and each later layer
--          of the chain (events_kept … events_linked), into a table of its
--          name after its step: planning the chain in every statement
--          cost more there (src/steps/mod.rs, Chain).
-- Grain:   one row per extracted event (all stores, all agents).
-- Inputs:  stage_events (view over the staged Parquet files, created by the
--          engine before the first step), session_identity (V001),
--          promoted_stores and demoted_stores (V002), the kind_<trait>() macros
--          (the kinds table row-wise).
-- Output:  raw_events (view): the staged columns (ts_utc, ts_local as
--          TIMESTAMP; text and native only where a step reads them, x_wide:
--          nanoclaw rows and the rows that start a session, x_start;
--          every other row's are in a
--          blob file, at x_blob, x_off, for the sink),
--          source_role final; session_store, message_store, turn_copy,
--          prompt_copy, nanoclaw: the row's kind traits (see kinds);
--          session_uid; x_row (staged: numbered by the stage, unique in the
--          run): the row's identity for the later steps'
--          joins (never output, so its order is free).
-- Creates: view raw_events
CREATE VIEW raw_events AS
SELECT
    s.agent, s.instance, s.session_id, s.parent_session_id, s.project_path,
    s.seq,
    CAST(s.ts_utc AS TIMESTAMP)   AS ts_utc,
    CAST(s.ts_local AS TIMESTAMP) AS ts_local,
    s.turn_type, s.model, s.tool_name, s.tool_use_id, s.text,
    s.source_kind,
    CASE WHEN d.source_path IS NOT NULL THEN 'secondary'
         WHEN p.source_path IS NOT NULL THEN 'primary'
         ELSE s.source_role END AS source_role,
    s.source_path, s.source_line, s.native,
    s.x_group, s.x_sub, s.x_record, s.x_match, s.x_id, s.x_meta, s.x_call_source,
    s.x_msgkey, s.x_turn, s.x_rounds, s.x_start,
    -- where the row's text and native are (the staged columns, or a blob file
    -- the sink reads; docs/design.md "Staging")
    s.x_wide, s.x_blob, s.x_off, s.x_text_len, s.x_native_len,
    -- the traits of the row's kind (the kinds table row-wise: a join with
    -- kinds here may hash the wide rows), carried for the steps after this one
    kind_session_store(s.source_kind) AS session_store,
    kind_message_store(s.source_kind) AS message_store,
    kind_turn_copy(s.source_kind) AS turn_copy,
    kind_prompt_copy(s.source_kind) AS prompt_copy,
    kind_nanoclaw(s.source_kind) AS nanoclaw,
    i.session_uid,
    -- the row's identity for the later steps' joins, numbered in staging
    -- (never output, so its order is free)
    s.x_row
FROM stage_events s
LEFT JOIN session_identity i
       ON i.agent = s.agent AND i.instance = s.instance AND i.session_id = s.session_id
      AND i.x_namespace IS NOT DISTINCT FROM s.x_namespace
      AND i.is_store = (kind_session_store(s.source_kind) IS NOT NULL)
LEFT JOIN demoted_stores d ON d.source_path = s.source_path
LEFT JOIN promoted_stores p ON p.source_path = s.source_path;
