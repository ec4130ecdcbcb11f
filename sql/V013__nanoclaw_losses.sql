-- V013 nanoclaw_losses
-- Purpose: the nanoclaw losses only a join across stores shows, declared in
--          diagnostics (kind `loss`; the rows are kept; each store reads
--          only its own files, so these are derived here, from `sources`
--          and the rows). A session folder without a catalog row:
--          `catalog_row_missing`; but an install whose `data/v2.db` is
--          absent while its session folders exist (the central database
--          elsewhere: `NANOCLAW_DB_URL`, nanoclaw's PostgreSQL driver) says
--          so once, `central_db_absent`. A catalog session without its
--          folder: `session_folder_missing`. A session database without
--          its sibling (both are created with the session):
--          `outbound_missing`, `inbound_missing`. A continuation whose
--          transcript is not among the install's stores (below, by
--          provider): `transcript_missing`.
--          And the losses nanoclaw's registry entry declares, one per
--          session and kind where it applies (never one per row):
--          `model_rendering_absent` and `lineage_unknown` (every session),
--          `state_without_history` (the session has session_state,
--          container_state, processing_ack, destinations or session_routing
--          rows: only their latest values exist), `questions_deleted` (the session
--          asked questions: answered ones are deleted from pending_questions),
--          `usage_absent` (no backing transcript row carries counted usage).
-- Grain:   one diagnostics row per (instance, session, code); one per
--          install for central_db_absent; one per continuation for
--          transcript_missing.
-- Inputs:  nc_rows (V009), nc_transcript_sessions (V011), sources, kinds,
--          diagnostics (the extractors').
-- Output:  appends central_db_absent, catalog_row_missing, session_folder_missing,
--          outbound_missing, inbound_missing, transcript_missing and the
--          declared losses to diagnostics (temp tables nc_catalog_sources:
--          the installs whose data/v2.db was found, nc_sessions: each
--          session's place and what it holds, nc_usage_sessions: sessions
--          with counted transcript usage).
-- Creates: table nc_catalog_sources, table nc_sessions,
-- Creates: table nc_usage_sessions
-- The installs whose central catalog was found (read or not: a v2.db that
-- fails to read is an `unreadable` of its own, its sessions still each
-- `catalog_row_missing`).
CREATE TEMP TABLE nc_catalog_sources AS
SELECT DISTINCT instance FROM sources
WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'catalog');

INSERT INTO diagnostics BY NAME
SELECT DISTINCT 'loss' AS kind, 'nanoclaw' AS agent, r.instance,
    regexp_replace(r.source_path, '/[^/]*$', '') AS source_path, CAST(NULL AS BIGINT) AS source_line,
    'session folder has no row in data/v2.db sessions: its rows are kept, the agent group taken from the path' AS message,
    r.session_id, diag_code('catalog_row_missing') AS code
FROM nc_rows r
WHERE r.nanoclaw IN ('inbound', 'outbound')
  AND NOT EXISTS (SELECT 1 FROM nc_rows c
                  WHERE c.nanoclaw = 'catalog' AND c.x_group = x_group_session()
                    AND c.instance = r.instance AND c.session_id = r.session_id)
  AND r.instance IN (SELECT instance FROM nc_catalog_sources);

-- An install with session folders and no data/v2.db: its catalog is not a
-- SQLite file (or was not copied). Said once per install, naming the setting.
INSERT INTO diagnostics BY NAME
SELECT 'loss' AS kind, 'nanoclaw' AS agent, r.instance,
    CASE WHEN r.instance = '.' THEN '' ELSE r.instance || '/' END || 'data/v2.db' AS source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'central database absent beside data/v2-sessions/ (' || count(DISTINCT r.session_id)
        || ' session folders): an install whose NANOCLAW_DB_URL names a PostgreSQL database keeps its catalog there, which nanoload does not read (or data/v2.db was not copied); every session''s catalog row (agent group name, provider, status, route) is lost, the agent group taken from the path' AS message,
    CAST(NULL AS VARCHAR) AS session_id, diag_code('central_db_absent') AS code
FROM nc_rows r
WHERE r.nanoclaw IN ('inbound', 'outbound')
  AND r.instance NOT IN (SELECT instance FROM nc_catalog_sources)
GROUP BY r.instance;

-- A catalog session whose folder is gone: both session DBs are lost.
INSERT INTO diagnostics BY NAME
SELECT DISTINCT 'loss' AS kind, 'nanoclaw' AS agent, c.instance,
    CASE WHEN c.instance = '.' THEN '' ELSE c.instance || '/' END
        || 'data/v2-sessions/' || (c.j->'record'->>'agent_group_id') || '/' || c.session_id AS source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'session folder missing (inbound.db and outbound.db are created with the session): only the catalog row remains' AS message,
    c.session_id, diag_code('session_folder_missing') AS code
FROM nc_rows c
WHERE c.nanoclaw = 'catalog' AND c.x_group = x_group_session()
  AND NOT EXISTS (SELECT 1 FROM sources s
                  WHERE s.source_kind IN (SELECT source_kind FROM kinds
                                          WHERE nanoclaw IN ('inbound', 'outbound'))
                    AND s.instance = c.instance
                    AND strpos(s.source_path, 'data/v2-sessions/') > 0
                    AND contains(substr(s.source_path, strpos(s.source_path, 'data/v2-sessions/') + 17),
                                 '/' || c.session_id || '/'));

-- A session database without its sibling: both are created with the
-- session, so what the missing one held is lost. A loss the staged
-- diagnostics hold already is not said twice (a ledger synced by a build
-- whose extractors declared it themselves stages it).
INSERT INTO diagnostics BY NAME
SELECT * FROM (
    SELECT 'loss' AS kind, 'nanoclaw' AS agent, s.instance,
        regexp_replace(s.source_path, '[^/]*$', '') || m.sibling AS source_path,
        CAST(NULL AS BIGINT) AS source_line,
        m.sibling || ' missing (both session databases are created with the session): ' || m.lost AS message,
        regexp_extract(s.source_path, '(^|/)data/v2-sessions/[^/]+/([^/]+)/[^/]+$', 2) AS session_id,
        m.code
    FROM sources s
    JOIN (VALUES ('inbound', 'outbound', 'outbound.db', diag_code('outbound_missing'),
                  'the session''s outbound messages, acks and state are lost'),
                 ('outbound', 'inbound', 'inbound.db', diag_code('inbound_missing'),
                  'the session''s inbound messages and deliveries are lost')) m(part, other, sibling, code, lost)
      ON s.source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = m.part)
    WHERE NOT EXISTS (SELECT 1 FROM sources o
                      WHERE o.source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = m.other)
                        AND o.instance = s.instance
                        AND o.source_path = regexp_replace(s.source_path, '[^/]*$', '') || m.sibling)
    EXCEPT
    SELECT kind, agent, instance, source_path, source_line, message, session_id, code FROM diagnostics
);

-- A continuation (outbound `session_state` `continuation:<provider>`) whose
-- transcript is not among the install's stores: Claude Code's is `<id>.jsonl`
-- or a rotated `<id>.jsonl.rotated-*` in a project of its agent group's
-- `.claude-shared/projects/`; Codex's a rollout `rollout-*-<id>.jsonl` of its
-- agent group's `.codex-shared/sessions/`; OpenCode's the session folder's
-- `opencode-xdg/opencode/opencode.db`; no other provider's transcripts are
-- read. (A transcript store's kind is told by its path, which its glob
-- fixes.) Said on the outbound.db that names it.
INSERT INTO diagnostics BY NAME
SELECT * FROM (
    WITH named AS (
        SELECT instance, session_id, source_path,
            j->'continuation'->>'provider' AS provider,
            j->'continuation'->>'id' AS id,
            regexp_replace(source_path, '/[^/]*$', '') AS session_dir,
            regexp_replace(source_path, '/[^/]*/[^/]*$', '') AS group_dir
        FROM nc_rows
        WHERE nanoclaw = 'outbound' AND (j->'continuation') IS NOT NULL
    ),
    -- each transcript store by the provider its path is of, the directory
    -- a continuation finds it from (the agent group's, or the session
    -- folder's for OpenCode) and each continuation id its name backs: keys
    -- to join on (a rollout backs every id its name ends in after a dash)
    transcripts AS (
        SELECT instance, 'claude' AS provider,
            regexp_extract(source_path, '^(.*)/\.claude-shared/projects/[^/]+/[^/]+$', 1) AS dir,
            regexp_extract(regexp_extract(source_path, '[^/]*$'), '^(.*?)\.jsonl(\.rotated-.*)?$', 1) AS id
        FROM sources
        WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'transcript')
          AND regexp_matches(source_path, '/\.claude-shared/projects/[^/]+/[^/]+\.jsonl(\.rotated-[^/]*)?$')
        UNION ALL
        SELECT instance, 'codex', dir, array_to_string(parts[k + 1:], '-')
        FROM (SELECT instance,
                  regexp_extract(source_path, '^(.*)/\.codex-shared/sessions/', 1) AS dir,
                  string_split(regexp_extract(source_path, '/(rollout-[^/]*)\.jsonl$', 1), '-') AS parts
              FROM sources
              WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'transcript')
                AND regexp_matches(source_path, '/\.codex-shared/sessions/(.*/)?rollout-[^/]*\.jsonl$')),
            range(1, len(parts)) r(k)
        UNION ALL
        SELECT instance, 'opencode', regexp_extract(source_path, '^(.*)/opencode-xdg/opencode/opencode\.db$', 1), ''
        FROM sources
        WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'transcript')
          AND ends_with(source_path, '/opencode-xdg/opencode/opencode.db')
    )
    SELECT 'loss' AS kind, 'nanoclaw' AS agent, c.instance, c.source_path,
        CAST(NULL AS BIGINT) AS source_line,
        'backing transcript of continuation:' || c.provider || ' ' || c.id || ' unavailable ('
            || CASE c.provider
                   WHEN 'claude' THEN 'no <agent group>/.claude-shared/projects/*/<id>.jsonl'
                   WHEN 'codex' THEN 'no <agent group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl'
                   WHEN 'opencode' THEN 'no <session>/opencode-xdg/opencode/opencode.db'
                   ELSE 'the ' || c.provider || ' provider''s transcripts are not read' END
            || ')' AS message,
        c.session_id, diag_code('transcript_missing') AS code
    FROM named c
    WHERE NOT EXISTS (
        SELECT 1 FROM transcripts t
        WHERE t.instance = c.instance AND t.provider = c.provider
          AND t.dir = CASE c.provider WHEN 'opencode' THEN c.session_dir ELSE c.group_dir END
          AND t.id = CASE c.provider WHEN 'opencode' THEN '' ELSE c.id END)
    EXCEPT
    SELECT kind, agent, instance, source_path, source_line, message, session_id, code FROM diagnostics
);

-- The declared losses. A session's place: its folder when a session DB was
-- read, else the catalog.
CREATE TEMP TABLE nc_sessions AS
SELECT instance, session_id,
    coalesce(min(regexp_replace(source_path, '/[^/]*$', '')) FILTER (WHERE nanoclaw IN ('inbound', 'outbound')),
             min(source_path)) AS place,
    string_agg(DISTINCT j->>'table', ', ' ORDER BY j->>'table')
        FILTER (WHERE nanoclaw IN ('inbound', 'outbound') AND (j->>'table') IN
        ('session_state', 'container_state', 'processing_ack', 'destinations', 'session_routing')) AS state_tables,
    count(*) FILTER (WHERE nanoclaw = 'outbound' AND (j->>'content_type') = 'ask_question') AS cards
FROM nc_rows
WHERE session_id IS NOT NULL AND nanoclaw IN ('catalog', 'inbound', 'outbound')
GROUP BY ALL;

CREATE TEMP TABLE nc_usage_sessions AS
SELECT DISTINCT t.instance, t.session_id
FROM nc_rows r
JOIN nc_transcript_sessions t
  ON t.instance = r.instance AND t.continuation_id = (r.j->>'transcript_id')
WHERE r.nanoclaw = 'transcript' AND (r.j->'usage') IS NOT NULL;

INSERT INTO diagnostics BY NAME
SELECT 'loss' AS kind, 'nanoclaw' AS agent, s.instance, s.place AS source_path,
    CAST(NULL AS BIGINT) AS source_line, d.message, s.session_id, d.code
FROM nc_sessions s,
    (VALUES (diag_code('model_rendering_absent'),
             'what the model saw (system prompt, composed CLAUDE.md, tool schemas, context window) is not stored: only the messages in and out'),
            (diag_code('lineage_unknown'),
             'nanoclaw records no parent, child or copy relation between sessions, nor the context before the first outbound message')) d(code, message)
UNION ALL
SELECT 'loss', 'nanoclaw', instance, place, NULL,
    'mutable state without history: only the latest ' || state_tables || ' values exist (earlier continuations, routes and acks are overwritten)',
    session_id, diag_code('state_without_history')
FROM nc_sessions WHERE state_tables IS NOT NULL
UNION ALL
SELECT 'loss', 'nanoclaw', instance, place, NULL,
    cards || ' question card(s): answered questions and resolved approvals are deleted from data/v2.db (pending_questions, pending_approvals); only the cards and answers in the session remain',
    session_id, diag_code('questions_deleted')
FROM nc_sessions WHERE cards > 0
UNION ALL
SELECT 'loss', 'nanoclaw', s.instance, s.place, NULL,
    'no token usage: nanoclaw''s databases keep no model, tool-call or usage evidence and no backing transcript with usage was read',
    s.session_id, diag_code('usage_absent')
FROM nc_sessions s
ANTI JOIN nc_usage_sessions u USING (instance, session_id);
