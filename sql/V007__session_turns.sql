-- V007 session_turns
-- Purpose: the one definition of a turn (docs/design.md "Turns"), read by
--          the secondary-copy dedup (V008) and the LLM call attribution
--          (V017). A turn is a run of one session store's chat messages
--          (user, assistant, tool; hidden and system rows are none). It
--          starts at a `user` message, at a message nanobot injected (a
--          subagent's result arriving after the turn ended: a hidden turn),
--          or at any other message right after a final answer (an assistant
--          message without tool calls, not injected); it ends at its final
--          answer, or where the next turn starts. A subagent's result
--          injected into the running turn (a hidden row) continues it. Messages before a store's first `user` message
--          belong to no turn. A turn's `call_source` is the llm_usage source
--          nanobot gives the calls it makes (nanobot/llm_usage/context.py):
--          `cron` for a cron or trigger turn (its user message is an
--          automation turn) or a `cron:`/`heartbeat` session, `dream`,
--          `api` and `system` for those key prefixes, `system` for a hidden
--          turn, else `user`.
-- Grain:   session_messages: one row per (session, store, seq);
--          session_turns: one row per (session, store, turn);
--          session_turn_rows: one row per session-store row of a session
--          a turn copy holds.
-- Inputs:  events_utc (V006), tz_days (V005), params.
-- Output:  session_messages (is_user, injected, calls_tools, answers,
--          continues: the message's rows; ts: its time; user_match, call_source: of its user row;
--          turn_no: how many turns start at or before it, 0 before the
--          first), session_turns (turn_start: its first message's time,
--          turn_end: its last message's; user_match: its user text;
--          call_source), offset_known (instances whose offset is derived or
--          given), session_turn_rows (turn_no of each row).
CREATE TABLE offset_known AS
SELECT DISTINCT instance FROM tz_days
UNION
SELECT DISTINCT instance FROM events_utc, params WHERE params.given_offset_minutes IS NOT NULL;

CREATE TABLE session_messages AS
WITH messages AS (
    SELECT session_uid, source_path, seq,
        min(instance) AS instance, min(session_id) AS session_id,
        bool_or(turn_type = 'user') AS is_user,
        -- a message nanobot injected (a subagent's result): it starts a
        -- hidden turn and is not that turn's final answer
        bool_or(turn_type = 'assistant' AND x_call_source = 'system') AS injected,
        bool_or(turn_type = 'tool_use') AS calls_tools,
        bool_or(turn_type = 'assistant') AS answers,
        -- a hidden subagent result injected into the running turn: the
        -- turn goes on after it, even past an answer without tool calls
        bool_and(turn_type = 'system') AS continues,
        min(timestamp_utc) FILTER (turn_type <> 'system') AS ts,
        min(x_match) FILTER (turn_type = 'user') AS user_match,
        min(x_call_source) FILTER (turn_type = 'user') AS call_source
    FROM events_utc
    WHERE agent = 'nanobot' AND session_store IS NOT NULL
      AND seq IS NOT NULL AND session_uid IS NOT NULL
      AND (turn_type <> 'system' OR x_call_source = 'continue')
    GROUP BY session_uid, source_path, seq
),
starts AS (
    SELECT *,
        NOT continues AND (is_user OR injected
        OR coalesce(lag(answers AND NOT calls_tools AND NOT is_user AND NOT injected) OVER (
            PARTITION BY session_uid, source_path ORDER BY seq), false)) AS starts_turn
    FROM messages
)
SELECT * EXCLUDE (starts_turn),
    sum(CASE WHEN starts_turn THEN 1 ELSE 0 END) OVER (
        PARTITION BY session_uid, source_path ORDER BY seq ROWS UNBOUNDED PRECEDING) AS turn_no
FROM starts;

CREATE TABLE session_turns AS
SELECT session_uid, source_path, turn_no,
    min(instance) AS instance, min(session_id) AS session_id,
    min(ts) AS turn_start, max(ts) AS turn_end,
    min(user_match) AS user_match,
    CASE WHEN min(session_id) LIKE 'cron:%' OR min(session_id) = 'heartbeat' THEN 'cron'
         WHEN min(session_id) LIKE 'dream:%' THEN 'dream'
         WHEN min(session_id) LIKE 'api:%' THEN 'api'
         WHEN min(session_id) LIKE 'system:%' THEN 'system'
         WHEN NOT arg_min(is_user, seq) THEN 'system' -- a hidden turn
         ELSE coalesce(arg_min(call_source, seq), 'user') END AS call_source
FROM session_messages
WHERE turn_no > 0
GROUP BY session_uid, source_path, turn_no;

-- Each row of the sessions a turn copy holds, with its turn (V008 pairs copy
-- rows with them); only those sessions: a session without a copy has no
-- turn to mirror.
CREATE TABLE session_turn_rows AS
SELECT e.session_uid, e.source_path, e.turn_type, e.x_match, e.tool_use_id, e.ts_local,
    e.timestamp_utc, coalesce(m.turn_no, 0) AS turn_no
FROM events_utc e
LEFT JOIN session_messages m USING (session_uid, source_path, seq)
WHERE e.agent = 'nanobot' AND e.session_store IS NOT NULL
  AND e.seq IS NOT NULL AND e.session_uid IS NOT NULL
  AND e.session_uid IN (SELECT DISTINCT session_uid FROM events_utc
                        WHERE turn_copy IS NOT NULL AND session_uid IS NOT NULL);

