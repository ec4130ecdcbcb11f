-- Rule:   `sessions` has one row per session_uid, and its session_uid is
--         never NULL (docs/design.md "Session identity": two namespaces'
--         `cli:direct` are two uids, so two rows, never one).
-- Grain:  one row per session_uid that is NULL or held by more than one
--         sessions row.
-- Inputs: sessions.
SELECT session_uid, count(*) AS sessions,
    string_agg(agent || ' ' || instance || ' ' || coalesce(session_id, 'NULL'), '; ') AS held_by
FROM sessions
GROUP BY session_uid
HAVING count(*) > 1 OR session_uid IS NULL
ORDER BY session_uid;
