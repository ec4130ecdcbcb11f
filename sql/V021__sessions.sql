-- V021 sessions
-- Purpose: one row per session (session_uid, docs/design.md "Session
--          identity"; two namespaces' `cli:direct` are two rows): channel
--          and chat, the session's own created/updated times (as written),
--          first/last event time (UTC), row counts by turn type, tool
--          calls, parent, model preset, project, whether the primary store
--          still has the session (deleted sessions survive only in
--          secondary copies), the llm_calls attributed to it (both
--          agents': V020) with their token sums (NULL when nothing is
--          reported: not reported is not zero), and for nanoclaw the agent group (the
--          catalog's, else the session folder's), messaging group,
--          thread, status, message counts, the backing continuation and
--          the declared losses.
--          The namespace and session_uid follow; then (appended) for
--          nanoclaw the Claude Code transcript turns (API responses: one per
--          message.id + requestId, or per line without an id) with and
--          without counted usage, `losses` (every loss code declared for the
--          session, comma-separated) and the nanoclaw route's channel_type
--          and platform_id (only when the messaging group joined, V010);
--          then (appended) `cost_usd` (docs/design.md "Cost"): the
--          session's llm_calls costs summed (a nanoclaw session's: its
--          Claude Code responses with counted usage); NULL when it has
--          none, or when one of them has no price (a partial sum would
--          understate it).
-- Grain:   one row per session_uid.
-- Inputs:  events, events_plan (x_start, the counts), plan_sessions and plan_stores
--          (V016), llm_calls and model_prices and the macros call_cost
--          and calls_cost (V019, by sql/shared/pricing.sql),
--          session_identity (V001), diagnostics, kinds.
-- Output:  session_starts (j: the native of a row that starts the session,
--          x_start, its text `session start: …`; pick = 1:
--          the one whose facts the session takes, primary first),
--          session_losses (the session's declared losses, by code; an
--          install's central_db_absent counts for each of its sessions and
--          sets catalog_row_missing),
--          session_continuations (continuation: the backing sessions,
--          `provider:id`, comma-separated), session_transcript_turns
--          (turns, turns_with_usage), sessions (the output table;
--          in_primary_store: a primary row of a message store;
--          secondary_only: its negation).
-- Creates: table session_continuations, table session_losses,
-- Creates: table session_starts, table session_transcript_turns,
-- Creates: table sessions
CREATE TABLE session_starts AS
SELECT s.session_uid, t.source_role, p.native::JSON AS j, p.timestamp_local,
    row_number() OVER (PARTITION BY s.session_uid
                       ORDER BY t.source_role, t.source_kind, t.source_path) AS pick
FROM events_plan p
JOIN plan_sessions s USING (sess_id)
JOIN plan_stores t USING (store_id)
WHERE p.x_start AND s.session_uid IS NOT NULL;

-- An install's own loss (central_db_absent, session_id NULL) is every
-- session's of that install: no session of it has its catalog row.
CREATE TABLE session_losses AS
WITH per_session AS (
    SELECT agent, instance, session_id, code FROM diagnostics
    WHERE kind = 'loss' AND session_id IS NOT NULL
)
SELECT agent, instance, session_id,
    bool_or(code = diag_code('outbound_missing')) AS outbound_missing,
    bool_or(code = diag_code('inbound_missing')) AS inbound_missing,
    bool_or(code IN (diag_code('catalog_row_missing'), diag_code('central_db_absent'))) AS catalog_row_missing,
    bool_or(code = diag_code('transcript_missing')) AS transcript_missing,
    bool_or(code = diag_code('session_folder_missing')) AS session_folder_missing,
    string_agg(DISTINCT code, ',' ORDER BY code) AS losses
FROM (SELECT * FROM per_session
      UNION ALL
      SELECT DISTINCT s.agent, s.instance, s.session_id, d.code
      FROM diagnostics d JOIN per_session s USING (agent, instance)
      WHERE d.kind = 'loss' AND d.session_id IS NULL AND d.code = diag_code('central_db_absent'))
GROUP BY ALL;

CREATE TABLE session_continuations AS
SELECT session_uid,
    string_agg(DISTINCT (native::JSON->'continuation'->>'provider') || ':' || (native::JSON->'continuation'->>'id'), ',') AS continuation
FROM events
WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'outbound')
  AND (native::JSON->'continuation') IS NOT NULL
GROUP BY ALL;

CREATE TABLE session_transcript_turns AS
SELECT session_uid,
    count(DISTINCT turn) AS turns,
    count(DISTINCT turn) FILTER (counted) AS turns_with_usage
FROM (SELECT session_uid, j->>'usage_counted' = 'true' AS counted,
          coalesce((j->>'message_id') || chr(0) || coalesce(j->>'requestId', ''),
                   source_path || chr(0) || source_line) AS turn
      FROM (SELECT session_uid, source_path, source_line, native::JSON AS j
            FROM events
            WHERE kind_nanoclaw(source_kind) = 'transcript' AND session_uid IS NOT NULL)
      WHERE (j->'usage_counted') IS NOT NULL)
GROUP BY ALL;

CREATE TABLE sessions AS
-- The counts per session and store first, over events_plan's integer ids
-- (grouping the events view by its four session strings, with a DISTINCT
-- per session for tool_calls and source_kinds, costs more); a store's
-- traits and folder are a property of
-- the store, so the session rolls its stores up.
WITH per_store AS (
    SELECT sess_id, store_id,
        min(timestamp_utc) AS first_event_utc,
        max(timestamp_utc) AS last_event_utc,
        count(*) AS rows,
        count(*) FILTER (turn_type = 'user') AS user_rows,
        count(*) FILTER (turn_type = 'assistant') AS assistant_rows,
        count(*) FILTER (turn_type = 'tool_use') AS tool_use_rows,
        count(*) FILTER (turn_type = 'tool_result') AS tool_result_rows,
        count(*) FILTER (turn_type = 'thinking') AS thinking_rows,
        count(*) FILTER (turn_type = 'system') AS system_rows,
        min(parent_session_id) AS parent_session_id,
        min(project_path) AS project_path
    FROM events_plan
    GROUP BY sess_id, store_id
),
tool_calls AS (
    SELECT sess_id, count(DISTINCT tool_use_id) AS tool_calls
    FROM events_plan
    WHERE turn_type = 'tool_use'
    GROUP BY sess_id
),
ev AS (
    SELECT s.agent, s.instance, s.session_id, s.session_uid,
        min(e.first_event_utc) AS first_event_utc,
        max(e.last_event_utc) AS last_event_utc,
        CAST(sum(e.rows) AS BIGINT) AS rows,
        CAST(sum(e.user_rows) AS BIGINT) AS user_rows,
        CAST(sum(e.assistant_rows) AS BIGINT) AS assistant_rows,
        CAST(sum(e.tool_use_rows) AS BIGINT) AS tool_use_rows,
        CAST(sum(e.tool_result_rows) AS BIGINT) AS tool_result_rows,
        CAST(sum(e.thinking_rows) AS BIGINT) AS thinking_rows,
        CAST(sum(e.system_rows) AS BIGINT) AS system_rows,
        coalesce(min(c.tool_calls), 0) AS tool_calls,
        min(e.parent_session_id) AS parent_session_id,
        min(e.project_path) AS project_path,
        bool_or(t.source_role = 'primary' AND kind_message_store(t.source_kind)) AS in_primary_store,
        string_agg(DISTINCT t.source_kind, ',' ORDER BY t.source_kind) AS source_kinds,
        CAST(coalesce(sum(e.user_rows) FILTER (kind_nanoclaw(t.source_kind) = 'inbound'), 0) AS BIGINT)
            AS messages_in,
        CAST(coalesce(sum(e.assistant_rows) FILTER (kind_nanoclaw(t.source_kind) = 'outbound'), 0) AS BIGINT)
            AS messages_out,
        -- the agent group of a nanoclaw session's folder (data/v2-sessions/<ag>/<session>/)
        nullif(min(regexp_extract(t.source_path, 'data/v2-sessions/([^/]+)/[^/]+/[^/]+$', 1))
                   FILTER (kind_nanoclaw(t.source_kind) IN ('inbound', 'outbound')), '') AS folder_agent_group
    FROM per_store e
    JOIN plan_sessions s USING (sess_id)
    JOIN plan_stores t USING (store_id)
    LEFT JOIN tool_calls c USING (sess_id)
    WHERE s.session_uid IS NOT NULL
    GROUP BY s.agent, s.instance, s.session_id, s.session_uid
),
calls AS (
    SELECT l.session_uid,
        count(*) AS llm_calls,
        sum(l.input_tokens) AS input_tokens,
        sum(l.output_tokens) AS output_tokens,
        sum(l.total_tokens) AS total_tokens,
        sum(l.cache_read_tokens) AS cache_read_tokens,
        sum(l.cache_write_tokens) AS cache_write_tokens,
        -- the calls' costs as exact DECIMALs (llm_calls.cost_usd is their DOUBLE)
        calls_cost(m.price_model IS NOT NULL,
                   call_cost(l.input_tokens, l.cache_read_tokens, l.cache_write_tokens,
                             l.output_tokens, m.input, m.output, m.cache_read, m.cache_write)) AS cost
    FROM llm_calls l
    LEFT JOIN model_prices m ON m.agent = l.agent AND m.provider IS NOT DISTINCT FROM l.provider
                            AND m.model = l.model
    WHERE l.session_uid IS NOT NULL
    GROUP BY ALL
)
SELECT ev.agent, ev.instance, ev.session_id,
    CASE WHEN ev.agent = 'nanobot' THEN split_part(ev.session_id, ':', 1)
         ELSE s.channel_type END AS channel,
    CASE WHEN ev.agent = 'nanobot' AND contains(ev.session_id, ':')
         THEN substr(ev.session_id, strpos(ev.session_id, ':') + 1)
         WHEN ev.agent = 'nanoclaw' THEN s.platform_id END AS chat_id,
    coalesce(s.created_at, s.record_created_at) AS created_at,
    coalesce(s.updated_at, s.record_last_active) AS updated_at,
    ev.first_event_utc, ev.last_event_utc,
    ev.rows, ev.user_rows, ev.assistant_rows, ev.tool_use_rows, ev.tool_result_rows,
    ev.thinking_rows, ev.system_rows, ev.tool_calls,
    ev.parent_session_id,
    s.model_preset,
    ev.project_path,
    coalesce(ev.in_primary_store, false) AS in_primary_store,
    NOT coalesce(ev.in_primary_store, false) AS secondary_only,
    ev.source_kinds,
    CAST(coalesce(c.llm_calls, 0) AS BIGINT) AS llm_calls,
    CAST(c.input_tokens AS BIGINT) AS input_tokens,
    CAST(c.output_tokens AS BIGINT) AS output_tokens,
    CAST(c.total_tokens AS BIGINT) AS total_tokens,
    CAST(c.cache_read_tokens AS BIGINT) AS cache_read_tokens,
    CAST(c.cache_write_tokens AS BIGINT) AS cache_write_tokens,
    -- nanoclaw
    coalesce(s.agent_group_id, ev.folder_agent_group) AS agent_group_id,
    s.messaging_group_id,
    s.thread_id,
    s.session_status,
    CASE WHEN ev.agent = 'nanoclaw' THEN ev.messages_in END AS messages_in,
    CASE WHEN ev.agent = 'nanoclaw' THEN ev.messages_out END AS messages_out,
    k.continuation,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(l.outbound_missing, false) END AS outbound_missing,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(l.inbound_missing, false) END AS inbound_missing,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(l.catalog_row_missing, false) END AS catalog_row_missing,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(l.transcript_missing, false) END AS transcript_missing,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(l.session_folder_missing, false) END AS session_folder_missing,
    ns.namespace,
    ev.session_uid,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(tt.turns_with_usage, 0) END AS transcript_turns_with_usage,
    CASE WHEN ev.agent = 'nanoclaw' THEN coalesce(tt.turns - tt.turns_with_usage, 0) END AS transcript_turns_without_usage,
    l.losses,
    CASE WHEN ev.agent = 'nanoclaw' THEN s.channel_type END AS channel_type,
    CASE WHEN ev.agent = 'nanoclaw' THEN s.platform_id END AS platform_id,
    CAST(c.cost AS DOUBLE) AS cost_usd
FROM ev
-- the start row's facts, its JSON parsed once (one `->>` each would parse
-- it again; BENCHMARKS.md "Where the CPU goes, by part")
LEFT JOIN (
    SELECT session_uid, f[1] AS channel_type, f[2] AS platform_id, f[3] AS created_at,
        f[4] AS record_created_at, f[5] AS updated_at, f[6] AS record_last_active,
        f[7] AS model_preset, f[8] AS agent_group_id, f[9] AS messaging_group_id,
        f[10] AS thread_id, f[11] AS session_status
    FROM (SELECT session_uid,
              json_extract_string(j, ['$.channel_type', '$.platform_id', '$.created_at',
                  '$.record.created_at', '$.updated_at', '$.record.last_active',
                  '$.metadata._nanobot_model_preset', '$.record.agent_group_id',
                  '$.record.messaging_group_id', '$.record.thread_id', '$.record.status']) AS f
          FROM session_starts WHERE pick = 1)
) s ON s.session_uid = ev.session_uid
LEFT JOIN calls c ON c.session_uid = ev.session_uid
LEFT JOIN session_losses l ON l.agent = ev.agent AND l.instance = ev.instance AND l.session_id = ev.session_id
LEFT JOIN session_continuations k ON ev.agent = 'nanoclaw' AND k.session_uid = ev.session_uid
LEFT JOIN (SELECT DISTINCT session_uid, namespace FROM session_identity) ns ON ns.session_uid = ev.session_uid
LEFT JOIN session_transcript_turns tt ON ev.agent = 'nanoclaw' AND tt.session_uid = ev.session_uid;
