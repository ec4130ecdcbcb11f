-- V007 nanoclaw_links
-- Purpose: nanoclaw joins that span stores.
--          delivered: a `delivered` row (inbound.db) whose message_out_id is an
--            outbound row of the same session is folded into that row's
--            native (`delivered`: platform_message_id, status, delivered_at);
--            one whose outbound row is missing stays as an orphan fact,
--            `nanoclaw delivered: … (outbound row missing)`.
--          transcripts: Claude Code transcript rows join the session whose
--            `continuation:claude` names their file (and take its
--            session_uid: nanoclaw's namespace is '').
--          project_path: `groups/<folder>` of the row's agent group.
--          A session folder without a catalog row is declared a loss
--            (`catalog_row_missing`); its rows are kept. A catalog session
--            without its folder is one too (`session_folder_missing`).
-- Grain:   events_linked: one row per kept event (joined delivered rows folded).
-- Inputs:  events_final (V006), sources, diagnostics.
CREATE TABLE nc_rows AS
SELECT *, native::JSON AS j
FROM events_final
WHERE agent = 'nanoclaw';

CREATE TABLE nc_folders AS
SELECT DISTINCT instance, j->'record'->>'id' AS agent_group_id, j->'record'->>'folder' AS folder
FROM nc_rows
WHERE nanoclaw = 'catalog' AND (j->>'table') = 'agent_groups';

CREATE TABLE nc_delivered AS
SELECT x_row, instance, session_id, x_id AS message_out_id, j->'record' AS record
FROM nc_rows
WHERE nanoclaw = 'inbound' AND (j->>'table') = 'delivered';

CREATE TABLE nc_outbound AS
SELECT instance, session_id, x_id AS message_out_id
FROM nc_rows
WHERE nanoclaw = 'outbound' AND (j->>'table') = 'messages_out';

CREATE TABLE nc_delivery_joined AS
SELECT d.*
FROM nc_delivered d
SEMI JOIN nc_outbound o USING (instance, session_id, message_out_id);

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

INSERT INTO diagnostics
SELECT DISTINCT 'loss', 'nanoclaw', r.instance, regexp_replace(r.source_path, '/[^/]*$', ''), NULL,
    'session folder has no row in data/v2.db sessions: its rows are kept, the agent group taken from the path',
    r.session_id, 'catalog_row_missing'
FROM nc_rows r
WHERE r.nanoclaw IN ('inbound', 'outbound')
  AND NOT EXISTS (SELECT 1 FROM nc_rows c
                  WHERE c.nanoclaw = 'catalog' AND c.x_group = x_group_session()
                    AND c.instance = r.instance AND c.session_id = r.session_id);

-- A catalog session whose folder is gone: both session DBs are lost.
INSERT INTO diagnostics
SELECT DISTINCT 'loss', 'nanoclaw', c.instance,
    CASE WHEN c.instance = '.' THEN '' ELSE c.instance || '/' END
        || 'data/v2-sessions/' || (c.j->'record'->>'agent_group_id') || '/' || c.session_id,
    NULL,
    'session folder missing (inbound.db and outbound.db are created with the session): only the catalog row remains',
    c.session_id, 'session_folder_missing'
FROM nc_rows c
WHERE c.nanoclaw = 'catalog' AND c.x_group = x_group_session()
  AND NOT EXISTS (SELECT 1 FROM sources s
                  WHERE s.source_kind IN (SELECT source_kind FROM kinds
                                          WHERE nanoclaw IN ('inbound', 'outbound'))
                    AND s.instance = c.instance
                    AND s.source_path LIKE '%data/v2-sessions/%/' || c.session_id || '/%');

CREATE TABLE events_linked AS
SELECT e.* REPLACE (
        CASE WHEN e.nanoclaw = 'transcript' THEN coalesce(e.session_id, t.session_id)
             ELSE e.session_id END AS session_id,
        CASE WHEN e.nanoclaw = 'transcript' AND e.session_id IS NULL AND t.session_id IS NOT NULL
             THEN left(sha256('nanoclaw' || chr(0) || e.instance || chr(0) || '' || chr(0) || t.session_id), 16)
             ELSE e.session_uid END AS session_uid,
        coalesce(e.project_path, 'groups/' || f.folder) AS project_path,
        CASE WHEN dj.message_out_id IS NOT NULL
             THEN CAST(json_merge_patch(e.native::JSON, json_object('delivered', dj.record)) AS VARCHAR)
             ELSE e.native END AS native,
        CASE WHEN e.nanoclaw = 'inbound' AND (e.native::JSON->>'table') = 'delivered'
             THEN e.text || ' (outbound row missing)'
             ELSE e.text END AS text)
FROM events_final e
LEFT JOIN nc_folders f
       ON e.agent = 'nanoclaw' AND f.instance = e.instance
      AND f.agent_group_id = (CAST(e.native AS JSON)->>'agent_group_id')
LEFT JOIN nc_transcript_sessions t
       ON e.nanoclaw = 'transcript' AND t.instance = e.instance
      AND t.continuation_id = (CAST(e.native AS JSON)->>'transcript_id')
LEFT JOIN nc_delivery_joined dj
       ON e.nanoclaw = 'outbound' AND dj.instance = e.instance
      AND dj.session_id = e.session_id AND dj.message_out_id = e.x_id
WHERE e.x_row NOT IN (SELECT x_row FROM nc_delivery_joined);

-- events_final (a full copy of every row) is not read after this file: free
-- its memory and spill space.
DROP TABLE events_final;
