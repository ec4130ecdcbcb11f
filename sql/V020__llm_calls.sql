-- V020 llm_calls
-- Purpose: the llm_calls output: nanobot's llm_usage rows with `instance`,
--          `started_at` as UTC and their session (V017), then (appended)
--          `cost_usd` (V019's prices; NULL unmatched), the local time by the
--          offsets of V006; then (appended) nanoclaw's calls (V018), one per
--          counted transcript response, and `agent`.
-- Grain:   one row per llm_calls row of each nanobot instance and per
--          counted transcript response of nanoclaw.
-- Inputs:  stage_llm_calls, llm_attribution (V017), transcript_usage (V018),
--          model_prices and the macro call_cost (V019), utc_locals (V006),
--          events_plan, plan_sessions, plan_stores (V016), diagnostics;
--          drops ordinals (V015).
-- Output:  llm_calls (the output table; cost_usd, then started_at_local and
--          utc_offset_minutes appended: the local time by utc_locals of
--          V006; then agent, message_id, request_id), and rows appended to
--          diagnostics (`local_time_unknown`: per instance, the events and
--          llm_calls rows left without a local time).
-- Creates: table llm_calls
CREATE TABLE llm_calls AS
SELECT c.instance,
    c.id, c.started_at_ms, c.duration_ms, c.provider, c.model, c.source, c.stream, c.finish_reason,
    c.input_tokens, c.output_tokens, c.total_tokens, c.cache_read_tokens, c.cache_write_tokens,
    c.reported_tokens, c.estimated_tokens, c.generation_ms, c.measured_output_tokens, c.ttft_ms,
    c.timed_requests, c.error_status_code, c.error_kind,
    CAST(make_timestamp(c.started_at_ms * 1000) AS TIMESTAMPTZ) AS started_at,
    a.session_id,
    c.source_path,
    a.session_uid,
    CAST(call_cost(c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens,
                   m.input, m.output, m.cache_read, m.cache_write) AS DOUBLE) AS cost_usd,
    make_timestamp(c.started_at_ms * 1000) + to_minutes(u.offset_minutes) AS started_at_local,
    u.offset_minutes AS utc_offset_minutes,
    'nanobot' AS agent,
    CAST(NULL AS VARCHAR) AS message_id,
    CAST(NULL AS VARCHAR) AS request_id,
    -- nanobot's per-call key (llm_usage user_version 2); NULL for nanoclaw.
    -- The outputs write it after load_id (engine::AFTER_LOAD_ID)
    c.call_id
FROM stage_llm_calls c
LEFT JOIN llm_attribution a USING (instance, source_path, id)
LEFT JOIN model_prices m ON m.agent = 'nanobot' AND m.provider IS NOT DISTINCT FROM c.provider
                        AND m.model = c.model
LEFT JOIN utc_locals u ON u.instance = c.instance AND u.t = make_timestamp(c.started_at_ms * 1000)
UNION ALL BY NAME
-- nanoclaw's Claude Code responses in nanobot's terms: `id` the
-- transcript line, input counting the cache reads and writes (Anthropic's
-- input_tokens leave them out), total = input + output; the columns a
-- transcript has no value for (duration, source, nanobot's timings and
-- errors) NULL
SELECT t.instance, t.source_line AS id, epoch_ms(t.timestamp_utc) AS started_at_ms,
    t.provider, t.model, t.stop_reason AS finish_reason,
    t.in_tokens AS input_tokens, t.output AS output_tokens,
    CASE WHEN t.in_tokens IS NOT NULL OR t.output IS NOT NULL
         THEN coalesce(t.in_tokens, 0) + coalesce(t.output, 0) END AS total_tokens,
    t.cache_read AS cache_read_tokens, t.cache_write AS cache_write_tokens,
    t.timestamp_utc AS started_at, t.session_id, t.source_path, t.session_uid,
    CAST(call_cost(t.in_tokens, t.cache_read, t.cache_write, t.output,
                   m.input, m.output, m.cache_read, m.cache_write) AS DOUBLE) AS cost_usd,
    t.timestamp_local AS started_at_local, t.utc_offset_minutes,
    'nanoclaw' AS agent, t.message_id, t.request_id
FROM (SELECT *,
          CASE WHEN input IS NOT NULL OR cache_read IS NOT NULL OR cache_write IS NOT NULL
               THEN coalesce(input, 0) + coalesce(cache_read, 0) + coalesce(cache_write, 0)
          END AS in_tokens
      FROM transcript_usage) t
LEFT JOIN model_prices m ON m.agent = 'nanoclaw' AND m.provider = t.provider AND m.model = t.model;

-- What has no local time and why: an instance without offset evidence (no
-- session message pairs with an LLM call, a WebUI record or a run record;
-- nanoclaw keeps only UTC) leaves timestamp_local / started_at_local NULL.
INSERT INTO diagnostics BY NAME
SELECT 'loss' AS kind, x.agent, x.instance, min(x.source_path) AS source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'no local time for '
    || concat_ws(' and ',
                 CASE WHEN sum(x.events) > 0 THEN CAST(sum(x.events) AS VARCHAR) || ' events rows' END,
                 CASE WHEN sum(x.calls) > 0 THEN CAST(sum(x.calls) AS VARCHAR) || ' llm_calls rows' END)
    || ' with only a UTC time: instance ' || x.instance || ' holds no evidence of its UTC '
    || 'offset (timestamp_local and started_at_local are NULL; --utc-offset gives one)' AS message,
    CAST(NULL AS VARCHAR) AS session_id, diag_code('local_time_unknown') AS code
FROM (
    SELECT s.agent, s.instance, t.source_path, count(*) AS events, 0 AS calls
    FROM events_plan p
    JOIN plan_sessions s USING (sess_id)
    JOIN plan_stores t USING (store_id)
    WHERE p.time_basis = 'utc' AND p.timestamp_local IS NULL
    GROUP BY ALL
    UNION ALL
    SELECT agent, instance, source_path, 0, count(*)
    FROM llm_calls WHERE started_at_local IS NULL
    GROUP BY ALL
) x
GROUP BY x.agent, x.instance;

-- V015's ordinals (a row per event) is not read after this step (the
-- ledger's export reads it before the step): free its memory for the
-- writer (the peak RSS).
DROP TABLE ordinals;
