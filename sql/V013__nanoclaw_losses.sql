-- V013 nanoclaw_losses
-- Purpose: the nanoclaw losses only a join across stores shows, declared in
--          diagnostics (kind `loss`; the rows are kept). A session folder
--          without a catalog row: `catalog_row_missing`. A catalog session
--          without its folder (inbound.db and outbound.db are created with
--          the session): `session_folder_missing`.
-- Grain:   one diagnostics row per (instance, session) lost.
-- Inputs:  nc_rows (V009), sources, kinds.
-- Output:  appends catalog_row_missing and session_folder_missing losses to
--          diagnostics.
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
