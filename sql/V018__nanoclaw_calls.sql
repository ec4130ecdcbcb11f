-- V018 nanoclaw_calls
-- Purpose: nanoclaw's LLM calls: each Claude Code (or Codex) response with
--          counted usage ("LLM calls of both agents"), its usage as numbers,
--          for the prices (V019), llm_calls (V020) and sessions (V021).
-- Grain:   one row per transcript row that keeps `native.usage` with
--          `usage_counted` (one per usage identity).
-- Inputs:  events (V016's view: the transcript rows and their native), kinds.
-- Output:  transcript_usage (instance, session_id, session_uid, source_path,
--          source_line, timestamp_utc, timestamp_local, utc_offset_minutes,
--          model, provider: a Codex rollout's, else anthropic; message_id,
--          request_id, stop_reason; input, output, cache_read, cache_write).
-- Creates: table transcript_usage
-- nanoclaw's calls: each Claude Code response with counted usage (the row
-- that keeps `native.usage`, one per usage identity: docs/design.md
-- "nanoclaw: Claude Code transcripts"), with its usage as numbers
CREATE TABLE transcript_usage AS
SELECT instance, session_id, session_uid, source_path, source_line, timestamp_utc,
    timestamp_local, utc_offset_minutes, model,
    -- Claude Code's responses go to Anthropic's API; a Codex rollout names its provider
    coalesce(j->>'provider', 'anthropic') AS provider,
    j->>'message_id' AS message_id, j->>'requestId' AS request_id, j->>'stop_reason' AS stop_reason,
    TRY_CAST(j->'usage'->>'input_tokens' AS BIGINT) AS input,
    TRY_CAST(j->'usage'->>'output_tokens' AS BIGINT) AS output,
    TRY_CAST(j->'usage'->>'cache_read_input_tokens' AS BIGINT) AS cache_read,
    TRY_CAST(j->'usage'->>'cache_creation_input_tokens' AS BIGINT) AS cache_write
FROM (SELECT instance, session_id, session_uid, source_path, source_line, timestamp_utc,
          timestamp_local, utc_offset_minutes, model, native::JSON AS j
      FROM events
      WHERE kind_nanoclaw(source_kind) = 'transcript')
WHERE (j->>'usage_counted') = 'true';
