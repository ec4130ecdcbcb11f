-- V011 nanoclaw_transcript_sessions
-- Purpose: the session each Claude Code transcript belongs to: the one whose
--          outbound `continuation:claude` names the transcript's file.
--          (V014 gives the transcript rows that session and its
--          session_uid; nanoclaw's namespace is ''.)
-- Grain:   nc_transcript_sessions: one row per (instance, continuation id).
-- Inputs:  nc_rows (V009).
-- Output:  nc_continuations (provider, continuation_id: a backing session
--          an outbound row names), nc_transcript_sessions (session_id: the
--          first session naming the claude continuation).
CREATE TABLE nc_continuations AS
SELECT DISTINCT instance, session_id,
    j->'continuation'->>'provider' AS provider,
    j->'continuation'->>'id' AS continuation_id
FROM nc_rows
WHERE nanoclaw = 'outbound' AND (j->'continuation') IS NOT NULL;

CREATE TABLE nc_transcript_sessions AS
SELECT instance, continuation_id, min(session_id) AS session_id
FROM nc_continuations
WHERE provider = 'claude'
GROUP BY ALL;
