-- V011 nanoclaw_transcript_sessions
-- Purpose: the session each transcript (Claude Code, a Codex rollout, an
--          OpenCode database) belongs to, and which row carries each
--          response's usage. A Claude Code file's id is its continuation
--          (`<id>.jsonl`, `<id>.jsonl.rotated-<ms>`, a subagent's
--          `<id>/subagents/agent-<agent>.jsonl`), linked to others through
--          the session ids their lines carry (a resumed file opens with
--          lines copied from the file it resumes). Every file linked, at
--          any distance, to the continuation a session's outbound
--          `continuation:claude|codex|opencode` names belongs to that
--          session (a Codex thread id, an OpenCode session id); a
--          continuation a session names itself stays with it. (V014 gives
--          the rows that session and its session_uid; namespace ''.)
--          Usage: among the rows carrying `native.usage`, one per (session,
--          or the file's continuation when no session names it; message.id;
--          requestId) keeps it — the largest input+output+cache total, then
--          one with `speed`, then the first by source_path and source_line;
--          a line without message.id is counted as it is. The others lose
--          their usage in V014 (`usage_counted: false`).
--          A line a resumed file copies (same `uuid` and part in the
--          session) is one row: the file the line names keeps it, the copies
--          are dropped (`dropped_rows`) before the usage choice.
--          An exchange archive's session, and its rows a primary holds
--          (dropped: nc_transcript_copies), as said above their SQL.
-- Grain:   nc_transcript_sessions: one row per (instance, continuation id);
--          nc_transcript_links: one row per (instance, file id, Claude
--          session id its lines name); nc_usage_repeats: one row per
--          transcript row whose usage another row of its session carries.
-- Inputs:  nc_rows (V009).
-- Output:  nc_continuations (provider, continuation_id: a backing session
--          an outbound row names), nc_transcript_links (continuation_id,
--          linked_id), nc_transcript_sessions (session_id: the first
--          session naming the claude continuation, else the first naming a
--          continuation linked to it), nc_archive_sessions (source_path,
--          thread, agent_group_id, session_id, joined_by: `continuation` or
--          `folder`), nc_transcript_copies (x_row, source_kind, reason:
--          Claude Code line copies and exchange archive copies; also
--          appended to dropped_rows), nc_usage_repeats (x_row).
-- Creates: table nc_archive_sessions, table nc_continuations,
-- Creates: table nc_transcript_copies, table nc_transcript_links,
-- Creates: table nc_transcript_sessions, table nc_usage_repeats
CREATE TABLE nc_continuations AS
SELECT DISTINCT instance, session_id,
    j->'continuation'->>'provider' AS provider,
    j->'continuation'->>'id' AS continuation_id
FROM nc_rows
WHERE nanoclaw = 'outbound' AND (j->'continuation') IS NOT NULL;

CREATE TABLE nc_transcript_links AS
SELECT DISTINCT instance, j->>'transcript_id' AS continuation_id, j->>'sessionId' AS linked_id
FROM nc_rows
WHERE nanoclaw = 'transcript' AND (j->>'sessionId') <> (j->>'transcript_id');

CREATE TABLE nc_transcript_sessions AS
WITH RECURSIVE named AS (
    SELECT instance, continuation_id, min(session_id) AS session_id
    FROM nc_continuations
    WHERE provider IN ('claude', 'codex', 'opencode')
    GROUP BY ALL
),
edges AS (
    SELECT instance, continuation_id AS a, linked_id AS b FROM nc_transcript_links
    UNION
    SELECT instance, linked_id AS a, continuation_id AS b FROM nc_transcript_links
),
reached(instance, continuation_id, session_id) AS (
    SELECT instance, continuation_id, session_id FROM named
    UNION
    SELECT r.instance, e.b, r.session_id
    FROM reached r
    JOIN edges e ON e.instance = r.instance AND e.a = r.continuation_id
)
SELECT * FROM named
UNION ALL
SELECT r.instance, r.continuation_id, min(r.session_id) AS session_id
FROM reached r
ANTI JOIN named n ON n.instance = r.instance AND n.continuation_id = r.continuation_id
GROUP BY ALL;

CREATE TABLE nc_transcript_copies AS
SELECT x_row, source_kind,
    'copy of a Claude Code line another transcript file of the session holds' AS reason
FROM (
    SELECT r.x_row, r.source_kind,
        row_number() OVER (
            PARTITION BY r.instance, coalesce('session:' || t.session_id, 'file:' || (r.j->>'transcript_id')),
                         r.j->>'uuid', r.x_sub
            ORDER BY (r.j->>'sessionId') IS NOT DISTINCT FROM (r.j->>'transcript_id') DESC,
                     r.source_path, r.source_line) AS pick
    FROM nc_rows r
    LEFT JOIN nc_transcript_sessions t
           ON t.instance = r.instance AND t.continuation_id = (r.j->>'transcript_id')
    WHERE r.nanoclaw = 'transcript' AND (r.j->>'uuid') IS NOT NULL
)
WHERE pick > 1;

-- An exchange archive (a secondary copy of a thread's prompts and results)
-- belongs to the session whose continuation names its thread, else to the
-- only session of its folder's agent group (catalog `agent_groups.folder`,
-- `sessions`); to none when the group has several. Its user and assistant
-- rows are dropped where the thread's primary transcript (by thread, or by
-- session) or the session's inbound/outbound messages hold a row of the same
-- turn type and text (both trimmed; a text nanoclaw cut to 2000 characters
-- and `...` by prefix), its header where the thread's transcript is read;
-- what no primary holds stays, recovered.
CREATE TABLE nc_archive_sessions AS
WITH archives AS (
    -- one row per file (a parser row of a torn file names no thread)
    SELECT instance, source_path, min(j->>'transcript_id') AS thread, min(j->>'folder') AS folder
    FROM nc_rows
    WHERE nanoclaw = 'archive'
    GROUP BY ALL
),
folders AS (
    SELECT DISTINCT instance, j->'record'->>'id' AS agent_group_id, j->'record'->>'folder' AS folder
    FROM nc_rows
    WHERE nanoclaw = 'catalog' AND (j->>'table') = 'agent_groups'
),
group_sessions AS (
    SELECT instance, j->'record'->>'agent_group_id' AS agent_group_id,
        min(session_id) AS session_id, count(DISTINCT session_id) AS sessions
    FROM nc_rows
    WHERE nanoclaw = 'catalog' AND x_group = x_group_session()
    GROUP BY ALL
)
SELECT a.instance, a.source_path, a.thread, f.agent_group_id,
    coalesce(t.session_id, CASE WHEN g.sessions = 1 THEN g.session_id END) AS session_id,
    CASE WHEN t.session_id IS NOT NULL THEN 'continuation'
         WHEN g.sessions = 1 THEN 'folder' END AS joined_by
FROM archives a
LEFT JOIN nc_transcript_sessions t ON t.instance = a.instance AND t.continuation_id = a.thread
LEFT JOIN folders f ON f.instance = a.instance AND f.folder = a.folder
LEFT JOIN group_sessions g ON g.instance = a.instance AND g.agent_group_id = f.agent_group_id;

-- A text as compared with its archive copy: nanoclaw trims a result.
CREATE TEMP MACRO archive_trim(t) AS trim(t, ' ' || chr(9) || chr(10) || chr(13));

INSERT INTO nc_transcript_copies
WITH archived AS (
    SELECT r.x_row, r.source_kind, r.instance, r.turn_type, r.text,
        (r.j->>'title') IS NOT NULL AS is_header,
        CASE WHEN (r.j->>'truncated') = 'true'
             -- the kept prefix: `...` off, and a surrogate pair nanoclaw cut in half
             THEN rtrim(regexp_replace(r.text, '\.\.\.$', ''), chr(65533)) END AS prefix,
        s.thread, s.session_id
    FROM nc_rows r
    JOIN nc_archive_sessions s ON s.instance = r.instance AND s.source_path = r.source_path
    WHERE r.nanoclaw = 'archive'
),
primaries AS (
    SELECT r.instance, r.turn_type, r.text, r.j->>'transcript_id' AS thread, t.session_id
    FROM nc_rows r
    LEFT JOIN nc_transcript_sessions t
           ON t.instance = r.instance AND t.continuation_id = (r.j->>'transcript_id')
    WHERE r.nanoclaw = 'transcript' AND r.source_role = 'primary'
    UNION ALL
    SELECT instance, turn_type, text, NULL, session_id
    FROM nc_rows
    WHERE nanoclaw IN ('inbound', 'outbound') AND turn_type IN ('user', 'assistant')
)
SELECT DISTINCT a.x_row, a.source_kind,
    CASE WHEN a.is_header THEN 'exchange archive header of a thread whose transcript is read'
         ELSE 'exchange archive copy of a message the transcript of its thread or the messages of its session hold' END AS reason
FROM archived a
JOIN primaries p
  ON p.instance = a.instance
 AND (p.thread = a.thread OR p.session_id = a.session_id)
 AND CASE WHEN a.is_header THEN p.thread = a.thread
          ELSE a.turn_type IN ('user', 'assistant') AND p.turn_type = a.turn_type
               AND (archive_trim(p.text) = archive_trim(a.text)
                    OR (a.prefix IS NOT NULL AND starts_with(p.text, a.prefix)))
     END;

INSERT INTO dropped_rows SELECT * FROM nc_transcript_copies;

CREATE TABLE nc_usage_repeats AS
SELECT x_row
FROM (
    SELECT r.x_row,
        row_number() OVER (
            PARTITION BY r.instance, coalesce('session:' || t.session_id, 'file:' || (r.j->>'transcript_id')),
                         r.j->>'message_id', coalesce(r.j->>'requestId', '')
            ORDER BY coalesce(TRY_CAST(r.j->'usage'->>'input_tokens' AS BIGINT), 0)
                     + coalesce(TRY_CAST(r.j->'usage'->>'output_tokens' AS BIGINT), 0)
                     + coalesce(TRY_CAST(r.j->'usage'->>'cache_creation_input_tokens' AS BIGINT), 0)
                     + coalesce(TRY_CAST(r.j->'usage'->>'cache_read_input_tokens' AS BIGINT), 0) DESC,
                     (r.j->'usage'->'speed') IS NOT NULL DESC,
                     r.source_path, r.source_line, r.x_sub) AS pick
    FROM nc_rows r
    LEFT JOIN nc_transcript_sessions t
           ON t.instance = r.instance AND t.continuation_id = (r.j->>'transcript_id')
    WHERE r.nanoclaw = 'transcript' AND (r.j->'usage') IS NOT NULL
      AND (r.j->>'message_id') IS NOT NULL
      AND r.x_row NOT IN (SELECT x_row FROM nc_transcript_copies)
)
WHERE pick > 1;
