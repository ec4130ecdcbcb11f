-- Rule:   a tool call is answered once: within one turn of a session, a
--         tool_use_id has at most one `tool_result` row. A turn starts at
--         each `user` row of a nanobot session store (database or session
--         JSONL, primary or surviving secondary copy, as in docs/design.md
--         "Turns") or of a kept turn copy (a WebUI or run-record turn no
--         session turn mirrors: a turn /new erased, which may reuse the
--         ids of the turns after it) and runs to the next, in ordinal
--         order; rows before the first such row (and every row of a
--         nanoclaw session, which has none) are turn 0. Per turn, not per session:
--         a provider that numbers its calls per turn (`call_0`) reuses an id
--         in several turns, nanobot drops the later results on save (the id
--         was already answered) and the WebUI transcript's copy of each is
--         kept once, as secondary (docs/design.md "Dedup: secondary
--         sources"); the real-writer homes `gateway` and `workspaces` hold
--         such sessions.
-- Grain:  one row per (agent, instance, session_id, session_uid, turn,
--         tool_use_id) with more than one `tool_result` row.
-- Inputs: events, kinds.
WITH turns AS (
    SELECT e.*,
        count(*) FILTER (e.turn_type = 'user'
                         AND (k.session_store IS NOT NULL OR k.turn_copy IS NOT NULL))
            OVER (PARTITION BY e.agent, e.instance, e.session_id, e.session_uid
                  ORDER BY e.ordinal ROWS UNBOUNDED PRECEDING) AS turn
    FROM events e
    LEFT JOIN kinds k USING (source_kind)
)
SELECT agent, instance, session_id, session_uid, turn, tool_use_id,
    count(*) AS tool_results,
    string_agg(source_kind || ' ' || source_role || ' ' || source_path || ':' || source_line,
               '; ' ORDER BY ordinal) AS rows_from
FROM turns
WHERE turn_type = 'tool_result' AND tool_use_id IS NOT NULL
GROUP BY agent, instance, session_id, session_uid, turn, tool_use_id
HAVING count(*) > 1
ORDER BY agent, instance, session_id, session_uid, turn, tool_use_id;
