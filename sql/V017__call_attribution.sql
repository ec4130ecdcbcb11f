-- V017 call_attribution
-- Purpose: each nanobot llm_usage call's session (docs/design.md "LLM call
--          attribution"). A call belongs to the session whose turn (V007)
--          contains its start, up to 2 s after its final answer, and whose
--          calls carry its source; where turns overlap: its own source, the
--          WebUI turn whose rounds name it (round_claims), the WebUI chat
--          whose title call it is (title_calls), the one saved when it
--          returned (call_answers), the latest start. A failed attempt goes
--          where its retry goes (retries); a call in no turn has session
--          NULL; a subagent task's usage (source `subagent`) goes to the
--          session whose task it was (its record rows' session).
-- Grain:   turns: one per turn; llm_attribution: one per stage_llm_calls row.
-- Inputs:  stage_llm_calls, raw_events (V003: x_rounds), session_turns (V007),
--          copy_rows, copy_turns, copy_turn_matches (V008), order_sessions
--          (V015), events (V016's view: a subagent task's rows).
-- Output:  turns (instance, session_id, session_uid, call_source,
--          turn_start, turn_end: the span, end + 10 s; answered_at: its
--          end, the final answer's time), turn_hours (a turn
--          once per hour it touches: hour = its µs epoch // 3 600 000 000),
--          the macro call_fits_turn(call source, turn source), the macro
--          end_seconds(started_at_ms, duration_ms, lo, hi) (the seconds
--          of the window lo–hi ms after a call's end),
--          call_answers (instance, source_path, id, session_uid: a session
--          with an assistant row at the call's end), title_calls
--          (instance, source_path, id, session_uid), round_claims (a turn's
--          span, its rounds and the calls they name), accounted_turns,
--          turn_attribution (a call's turn by the rules above), retries
--          (failed_id, next_id: a failed attempt and the next),
--          llm_attribution (instance, source_path, id, session_id,
--          session_uid: a failed attempt goes where its last retry does).
-- Creates: table accounted_turns, table call_answers, table llm_attribution,
-- Creates: table retries, table round_claims, table title_calls,
-- Creates: table turn_attribution, table turn_hours, table turns
-- Every turn of the session stores (V007), and each copy turn that mirrors
-- none (a chat /new erased), as spans with the source of their calls.
CREATE TABLE turns AS
SELECT instance, session_id, session_uid, call_source, turn_start,
    turn_end + INTERVAL 10 SECOND AS turn_end, turn_end AS answered_at
FROM session_turns
WHERE turn_start IS NOT NULL AND session_id IS NOT NULL
UNION ALL
SELECT s.instance, s.session_id, c.session_uid, c.call_source, c.t0,
    max(r.timestamp_utc) + INTERVAL 10 SECOND, max(r.timestamp_utc)
FROM copy_turns c
JOIN copy_rows r USING (session_uid, copy_turn)
JOIN order_sessions s ON s.agent = 'nanobot' AND s.session_uid = c.session_uid
WHERE c.t0 IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM copy_turn_matches m
                  WHERE m.session_uid = c.session_uid AND m.copy_turn = c.copy_turn)
GROUP BY s.instance, s.session_id, c.session_uid, c.copy_turn, c.call_source, c.t0;

-- each turn once per hour it touches, so a call probes only the turns of its
-- hour (an equi-join) instead of every turn of its instance (a range join).
-- Here and in the end_seconds() buckets below the list is unnested in the
-- select list, not in FROM: DuckDB plans a lateral unnest as a join of the
-- rows with the unnested distinct inputs, work the select list does not do
-- (BENCHMARKS.md "Where the CPU goes, by part").
CREATE TABLE turn_hours AS
SELECT t.*, unnest(range(epoch_us(t.turn_start) // 3600000000,
                         epoch_us(t.turn_end) // 3600000000 + 1)) AS hour
FROM turns t;

-- A call goes to a turn whose calls carry its source (nanobot's
-- llm_usage/context.py): `user` and `api` calls to user and api turns,
-- `cron` calls to cron and trigger turns, `dream` calls (the memory
-- archive of a /new or /compact, Dream) to dream turns, `system` calls (a
-- chat's title, an injected message's turn) to system, user and api turns;
-- a call without a source to any turn. Among those containing its start,
-- the one of its own source first, then the latest start (a subagent
-- inside its parent's turn).
CREATE MACRO call_fits_turn(call_source, turn_source) AS
    call_source IS NULL OR call_source = turn_source
    OR (call_source IN ('user', 'api') AND turn_source IN ('user', 'api'))
    OR (call_source = 'system' AND turn_source IN ('user', 'api'));

-- The whole seconds a window from `lo` to `hi` ms after a call's end (start
-- + duration) touches: the equi-join key of "within seconds of a call's
-- end" (call_answers, title_calls, retries), instead of a range join over
-- every call.
CREATE MACRO end_seconds(started_at_ms, duration_ms, lo, hi) AS
    range((started_at_ms + duration_ms + lo) // 1000, (started_at_ms + duration_ms + hi) // 1000 + 1);

-- The sessions that saved a turn when a call returned: nanobot stamps the
-- messages of a turn as it saves the turn, right after the turn's final
-- call returns (agent/loop.py `_save_turn`), so a session's assistant row
-- stamped from 1 s before to 2 s after a call's end (start + duration)
-- marks that call as the final call of that session's turn. Where turns of
-- two chats overlap, the one whose session saved at the call's end wins.
-- (Equi-joined on end_seconds.)
CREATE TABLE call_answers AS
WITH ends AS (
    SELECT c.instance, c.source_path, c.id, c.started_at_ms + c.duration_ms AS end_ms,
        unnest(end_seconds(c.started_at_ms, c.duration_ms, -1000, 2000)) AS sec
    FROM stage_llm_calls c
    WHERE c.started_at_ms IS NOT NULL AND c.duration_ms IS NOT NULL
),
answers AS (
    SELECT instance, session_uid, epoch_us(timestamp_utc) AS us
    FROM events
    WHERE agent = 'nanobot' AND turn_type IN ('assistant', 'tool_use')
      AND session_uid IS NOT NULL AND timestamp_utc IS NOT NULL
)
SELECT DISTINCT e.instance, e.source_path, e.id, a.session_uid
FROM ends e
JOIN answers a ON a.instance = e.instance AND a.us // 1000000 = e.sec
WHERE a.us BETWEEN (e.end_ms - 1000) * 1000 AND (e.end_ms + 2000) * 1000;

-- A WebUI chat's title call: nanobot asks for a chat's title right after
-- the turn's final call returns, with source `system`
-- (session/webui_turns.py `maybe_generate_webui_title_after_turn`, for a
-- `websocket` chat only), so a `system` call starting 0–2 s after the end
-- of a call that a WebUI chat saved as its answer (call_answers) is that
-- chat's title call. (Equi-joined on end_seconds.)
CREATE TABLE title_calls AS
WITH answered AS (
    SELECT p.instance, p.source_path, p.started_at_ms + p.duration_ms AS end_ms,
        a.session_uid, unnest(end_seconds(p.started_at_ms, p.duration_ms, 0, 2000)) AS sec
    FROM call_answers a
    JOIN stage_llm_calls p USING (instance, source_path, id)
    WHERE p.source IN ('user', 'api')
      AND a.session_uid IN (SELECT session_uid FROM turns WHERE starts_with(session_id, 'websocket:'))
)
SELECT DISTINCT t.instance, t.source_path, t.id, w.session_uid
FROM stage_llm_calls t
JOIN answered w
  ON w.instance = t.instance AND w.source_path = t.source_path
 AND w.sec = t.started_at_ms // 1000
WHERE t.source = 'system' AND t.started_at_ms BETWEEN w.end_ms AND w.end_ms + 2000;

-- The calls a WebUI turn names: nanobot's transcript ends a turn with its
-- `round_usages`, the usage of each provider response of the turn in order
-- (agent/runner.py appends each response's usage; webui/transcript.py
-- writes them in `turn_end`), staged as `x_rounds` on the turn's answer row.
-- A round names its call by tokens (prompt = input_tokens, completion =
-- output_tokens) among the calls that start inside the turn. A turn that
-- spawned no subagent (whose calls are not its rounds) and each of whose
-- rounds names some call has its calls accounted for: a call of the
-- turn's own source with tokens that none of its rounds names is another
-- chat's (a turn /new erased, a deleted chat's), and a named call is the
-- turn's. (A chat's title call, source `system`, is no round of its turn.)
CREATE TABLE round_claims AS
WITH rounds AS (
    SELECT DISTINCT instance, session_uid, ts_utc,
        TRY_CAST(split_part(pair, ':', 1) AS BIGINT) AS input_tokens,
        TRY_CAST(split_part(pair, ':', 2) AS BIGINT) AS output_tokens
    FROM (SELECT instance, session_uid, ts_utc, unnest(string_split(x_rounds, ',')) AS pair
          FROM raw_events
          WHERE x_rounds IS NOT NULL AND session_uid IS NOT NULL AND ts_utc IS NOT NULL)
),
turn_rounds AS (
    SELECT DISTINCT t.instance, t.session_uid, t.turn_start, t.turn_end,
        r.input_tokens, r.output_tokens
    FROM turns t
    JOIN rounds r
      ON r.instance = t.instance AND r.session_uid = t.session_uid
     AND r.ts_utc BETWEEN t.turn_start AND t.turn_end
)
SELECT r.instance, r.session_uid, r.turn_start, r.turn_end, r.input_tokens, r.output_tokens,
    c.source_path, c.id
FROM turn_rounds r
LEFT JOIN stage_llm_calls c
  ON c.instance = r.instance
 AND c.input_tokens = r.input_tokens AND c.output_tokens = r.output_tokens
 AND make_timestamp(c.started_at_ms * 1000) BETWEEN r.turn_start AND r.turn_end;

CREATE TABLE accounted_turns AS
SELECT r.instance, r.session_uid, r.turn_start
FROM round_claims r
-- a subagent's calls are no rounds of the turn that spawned it
WHERE NOT EXISTS (SELECT 1 FROM events e
                  WHERE e.agent = 'nanobot' AND e.turn_type = 'tool_use'
                    AND e.tool_name = 'spawn' AND e.session_uid = r.session_uid
                    AND e.timestamp_utc BETWEEN r.turn_start AND r.turn_end)
GROUP BY ALL
HAVING bool_and(r.id IS NOT NULL);

CREATE TABLE turn_attribution AS
SELECT c.instance, c.source_path, c.id, t.session_id, t.session_uid
FROM stage_llm_calls c
JOIN turn_hours t
  ON t.instance = c.instance
 AND t.hour = c.started_at_ms * 1000 // 3600000000
 AND make_timestamp(c.started_at_ms * 1000) BETWEEN t.turn_start AND t.turn_end
LEFT JOIN call_answers a
  ON a.instance = c.instance AND a.source_path = c.source_path AND a.id = c.id
 AND a.session_uid = t.session_uid
LEFT JOIN (SELECT DISTINCT instance, session_uid, turn_start, source_path, id
           FROM round_claims WHERE id IS NOT NULL) n
  ON n.instance = c.instance AND n.source_path = c.source_path AND n.id = c.id
 AND n.session_uid = t.session_uid AND n.turn_start = t.turn_start
LEFT JOIN accounted_turns k
  ON k.instance = t.instance AND k.session_uid = t.session_uid AND k.turn_start = t.turn_start
LEFT JOIN title_calls ti
  ON ti.instance = c.instance AND ti.source_path = c.source_path AND ti.id = c.id
 AND ti.session_uid = t.session_uid
WHERE call_fits_turn(c.source, t.call_source)
  -- a turn's calls start before its answer is saved, its title call at
  -- once after (2 s, for a time stamped in whole seconds)
  AND make_timestamp(c.started_at_ms * 1000) <= t.answered_at + INTERVAL 2 SECOND
  AND NOT (k.session_uid IS NOT NULL AND n.id IS NULL AND c.source = t.call_source
           AND c.input_tokens IS NOT NULL AND c.output_tokens IS NOT NULL)
QUALIFY row_number() OVER (PARTITION BY c.instance, c.source_path, c.id
                           ORDER BY c.source IS NOT DISTINCT FROM t.call_source DESC,
                                    n.id IS NOT NULL DESC,
                                    ti.id IS NOT NULL DESC,
                                    a.session_uid IS NOT NULL DESC,
                                    t.turn_start DESC, t.session_id, t.session_uid) = 1;

-- A failed attempt and its retry: nanobot retries a transient provider
-- error after 1, 2 then 4 s (providers/base.py `_run_with_retry`), so a
-- call that ended in `error` is followed by the next attempt of the same
-- turn, the one call of its source starting 0–5 s after its end. A failed
-- attempt has no tokens for a round to name; it goes where its last retry
-- goes (nowhere when that turn was erased), else by the turn rules.
-- (Equi-joined on end_seconds.)
CREATE TABLE retries AS
WITH failed AS (
    SELECT f.instance, f.source_path, f.id, f.source, f.started_at_ms + f.duration_ms AS end_ms,
        unnest(end_seconds(f.started_at_ms, f.duration_ms, 0, 5000)) AS sec
    FROM stage_llm_calls f
    WHERE f.finish_reason = 'error'
)
SELECT f.instance, f.source_path, f.id AS failed_id, min(n.id) AS next_id
FROM failed f
JOIN stage_llm_calls n
  ON n.instance = f.instance AND n.source_path = f.source_path
 AND n.started_at_ms // 1000 = f.sec
 AND n.source IS NOT DISTINCT FROM f.source AND n.id <> f.id
 AND n.started_at_ms BETWEEN f.end_ms AND f.end_ms + 5000
GROUP BY f.instance, f.source_path, f.id
HAVING count(DISTINCT n.id) = 1;

CREATE TABLE llm_attribution AS
WITH RECURSIVE chain AS (
    SELECT instance, source_path, failed_id AS id, next_id AS last_id, 1 AS hops FROM retries
    UNION ALL
    SELECT c.instance, c.source_path, c.id, r.next_id, c.hops + 1
    FROM chain c
    JOIN retries r ON r.instance = c.instance AND r.source_path = c.source_path
                  AND r.failed_id = c.last_id
    WHERE c.hops < 8
),
last_attempts AS (
    SELECT instance, source_path, id, arg_max(last_id, hops) AS last_id
    FROM chain GROUP BY ALL
)
SELECT c.instance, c.source_path, c.id,
    CASE WHEN c.source = 'subagent' THEN o.session_id
         WHEN l.id IS NULL THEN a.session_id ELSE r.session_id END AS session_id,
    CASE WHEN c.source = 'subagent' THEN o.session_uid
         WHEN l.id IS NULL THEN a.session_uid ELSE r.session_uid END AS session_uid
FROM stage_llm_calls c
LEFT JOIN turn_attribution a USING (instance, source_path, id)
LEFT JOIN last_attempts l USING (instance, source_path, id)
LEFT JOIN turn_attribution r
  ON r.instance = l.instance AND r.source_path = l.source_path AND r.id = l.last_id
-- a subagent task's usage (source `subagent`, id = the task's line in its
-- record file) belongs to the session whose task it was: its rows' session
-- (only the rows at a subagent call's line are grouped: a group per row of
-- `events` is a hash table of every row, more than the memory limit holds
-- on a large home)
LEFT JOIN (SELECT e.instance, e.source_path, e.source_line,
               min(e.session_id) AS session_id, min(e.session_uid) AS session_uid
           FROM events e
           SEMI JOIN (SELECT DISTINCT instance, source_path, id FROM stage_llm_calls
                      WHERE source = 'subagent') s
             ON s.instance = e.instance AND s.source_path = e.source_path
            AND s.id = e.source_line
           GROUP BY ALL) o
  ON c.source = 'subagent' AND o.instance = c.instance AND o.source_path = c.source_path
 AND o.source_line = c.id;
