-- Rule:   a session's uid is the first 16 hex digits of SHA-256 over
--         `agent \0 instance \0 namespace \0 session_id` (docs/design.md
--         "Session identity"), computed from the sessions row's own columns,
--         spelled out here rather than by V001's session_uid_of, so a change
--         to the macro is caught.
-- Grain:  one row per sessions row whose session_uid differs from that hash.
-- Inputs: sessions.
SELECT agent, instance, namespace, session_id, session_uid,
    left(sha256(agent || chr(0) || instance || chr(0) || namespace || chr(0) || session_id), 16) AS expected
FROM sessions
WHERE session_uid IS DISTINCT FROM
      left(sha256(agent || chr(0) || instance || chr(0) || namespace || chr(0) || session_id), 16)
ORDER BY ALL;
