-- Rule:   `llm_calls` has one row per row of an `llm_usage.sqlite3` and per
--         counted Claude Code response (nanoclaw: `id` is its transcript
--         line): the key (instance, source_path, id) is never NULL and never
--         repeated (V017 attributes each call to at most one session,
--         docs/design.md "LLM call attribution", "LLM calls of both agents").
-- Grain:  one row per (instance, source_path, id) that is NULL in a part or
--         held by more than one llm_calls row.
-- Inputs: llm_calls.
SELECT instance, source_path, id, count(*) AS llm_calls
FROM llm_calls
GROUP BY instance, source_path, id
HAVING count(*) > 1 OR instance IS NULL OR source_path IS NULL OR id IS NULL
ORDER BY instance, source_path, id;
