-- Rule:   an event's session is a row of `sessions`: events.session_uid is
--         NULL exactly when session_id is (docs/design.md "Session
--         identity"), and a non-NULL one names a sessions row with the same
--         agent, instance and session_id.
-- Grain:  one row per distinct (agent, instance, session_id, session_uid) of
--         events that breaks the rule, with the reason.
-- Inputs: events, sessions.
SELECT DISTINCT e.agent, e.instance, e.session_id, e.session_uid,
    CASE WHEN e.session_uid IS NULL THEN 'session_uid NULL but session_id set'
         WHEN e.session_id IS NULL THEN 'session_uid set but session_id NULL'
         ELSE 'no sessions row with this session_uid, agent, instance and session_id'
    END AS problem
FROM events e
WHERE (e.session_uid IS NULL) <> (e.session_id IS NULL)
   OR (e.session_uid IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM sessions s
        WHERE s.session_uid = e.session_uid AND s.agent = e.agent
          AND s.instance = e.instance AND s.session_id = e.session_id))
ORDER BY ALL;
