-- Rule:   `ordinal` is unique within a session: no two events of one
--         (agent, instance, session_id, session_uid) share an ordinal. Rows of
--         no session (session_id and session_uid NULL) form one ordinal
--         sequence per agent and instance, so NULLs group together here as
--         they do in V015's PARTITION BY (docs/design.md "Output order": the
--         sort key ends in ordinal and is a total order).
-- Grain:  one row per (agent, instance, session_id, session_uid, ordinal)
--         held by more than one event.
-- Inputs: events.
SELECT agent, instance, session_id, session_uid, ordinal, count(*) AS events
FROM events
GROUP BY agent, instance, session_id, session_uid, ordinal
HAVING count(*) > 1
ORDER BY agent, instance, session_id, session_uid, ordinal;
