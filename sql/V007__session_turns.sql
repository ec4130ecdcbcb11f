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
-- Grain:   session_pairs: one row per (session, store);
--          session_messages: one row per (session, store, seq);
--          session_turns: one row per (session, store, turn);
--          session_turn_rows: one row per session-store row of a session
--          a turn copy holds.
-- Inputs:  events_utc (V006), session_stores (V002), tz_days (V005), params.
-- Output:  session_pairs (pair_no: an integer per (session_uid,
--          source_path), with its instance and session_id),
--          session_messages (is_user, injected, calls_tools, answers,
--          continues: the message's rows; ts: its time; user_match, call_source: of its user row;
--          turn_no: how many turns start at or before it, 0 before the
--          first), session_turns (turn_start: its first message's time,
--          turn_end: its last message's; user_match: its user text;
--          call_source), offset_known (instances whose offset is derived or
--          given), session_turn_rows (turn_no of each row).
-- Creates: table offset_known, table session_messages, table session_pairs,
-- Creates: table session_turn_rows, table session_turns
CREATE TABLE offset_known AS
SELECT DISTINCT instance FROM tz_days
UNION
SELECT DISTINCT instance FROM events_utc, params WHERE params.given_offset_minutes IS NOT NULL;

-- Each (session, store) pair numbered: the messages are grouped and their
-- windows partitioned by the integer pair_no, not by the two strings
-- (integers hash and compare for less than the strings: BENCHMARKS.md
-- "The turns keyed by an integer"); the strings join back once per message.
-- A session_uid is a hash of its instance and session_id (V001), so a pair
-- has one of each.
CREATE TABLE session_pairs AS
SELECT session_uid, source_path, min(instance) AS instance, min(session_id) AS session_id,
    CAST(row_number() OVER (ORDER BY session_uid, source_path) AS INTEGER) AS pair_no
FROM session_stores
GROUP BY session_uid, source_path;

CREATE TABLE session_messages AS
WITH messages AS (
    SELECT p.pair_no, e.seq,
        bool_or(e.turn_type = 'user') AS is_user,
        -- a message nanobot injected (a subagent's result): it starts a
        -- hidden turn and is not that turn's final answer
        bool_or(e.turn_type = 'assistant' AND e.x_call_source = 'system') AS injected,
        bool_or(e.turn_type = 'tool_use') AS calls_tools,
        bool_or(e.turn_type = 'assistant') AS answers,
        -- a hidden subagent result injected into the running turn: the
        -- turn goes on after it, even past an answer without tool calls
        bool_and(e.turn_type = 'system') AS continues,
        min(e.timestamp_utc) FILTER (e.turn_type <> 'system') AS ts,
        min(e.x_match) FILTER (e.turn_type = 'user') AS user_match,
        min(e.x_call_source) FILTER (e.turn_type = 'user') AS call_source
    FROM events_utc e
    JOIN session_pairs p USING (session_uid, source_path)
    WHERE e.agent = 'nanobot' AND e.session_store IS NOT NULL
      AND e.seq IS NOT NULL AND e.session_uid IS NOT NULL
      AND (e.turn_type <> 'system' OR e.x_call_source = 'continue')
    GROUP BY p.pair_no, e.seq
),
starts AS (
    SELECT *,
        NOT continues AND (is_user OR injected
        OR coalesce(lag(answers AND NOT calls_tools AND NOT is_user AND NOT injected) OVER (
            PARTITION BY pair_no ORDER BY seq), false)) AS starts_turn
    FROM messages
),
numbered AS (
    SELECT * EXCLUDE (starts_turn),
        sum(CASE WHEN starts_turn THEN 1 ELSE 0 END) OVER (
            PARTITION BY pair_no ORDER BY seq ROWS UNBOUNDED PRECEDING) AS turn_no
    FROM starts
)
SELECT p.session_uid, p.source_path, n.seq, p.instance, p.session_id,
    n.is_user, n.injected, n.calls_tools, n.answers, n.continues, n.ts,
    n.user_match, n.call_source, n.turn_no
FROM numbered n
JOIN session_pairs p USING (pair_no);

CREATE TABLE session_turns AS
SELECT session_uid, source_path, turn_no,
    min(instance) AS instance, min(session_id) AS session_id,
    min(ts) AS turn_start, max(ts) AS turn_end,
    min(user_match) AS user_match,
    CASE WHEN starts_with(min(session_id), 'cron:') OR min(session_id) = 'heartbeat' THEN 'cron'
         WHEN starts_with(min(session_id), 'dream:') THEN 'dream'
         WHEN starts_with(min(session_id), 'api:') THEN 'api'
         WHEN starts_with(min(session_id), 'system:') THEN 'system'
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

