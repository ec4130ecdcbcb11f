-- V001 session_identity
-- Purpose: the identity of every session the staged rows name
--          (docs/design.md "Session identity"). One nanobot instance can
--          hold one session key in several namespaces (two workspaces each
--          with `cli:direct`): a session is (agent, instance, namespace,
--          session_id), and session_uid = the first 16 hex digits of
--          SHA-256 over `agent \0 instance \0 namespace \0 session_id`.
--          namespace: the workspace-id directory of a nanobot session store
--          (x_namespace); for any other nanobot row the store's own
--          workspace when that namespace holds the key (memory journal, run
--          records), else the single namespace of its instance that holds
--          the key; with none or several, '' and a `warning`. nanoclaw: ''.
--          A legacy-layout session copy (x_legacy) whose session a store of
--          record (database, canonical namespace JSONL) also holds is
--          demoted to secondary (`demoted_stores`); the JSONL of a
--          namespace whose database import never completed (no tables) are
--          promoted back to primary (`promoted_stores`).
-- Grain:   session_identity: one row per distinct (agent, instance,
--          session_id, x_namespace, store kind class) of the staged rows;
--          promoted_stores, demoted_stores: one row per store path.
-- Inputs:  stage_events, diagnostics, sources, kinds.
CREATE TABLE session_keys AS
SELECT DISTINCT s.agent, s.instance, s.session_id, s.x_namespace,
    k.session_store IS NOT NULL AS is_store
FROM stage_events s
LEFT JOIN kinds k ON k.source_kind = s.source_kind
WHERE s.session_id IS NOT NULL;

-- which namespaces hold which key (session stores with a namespace)
CREATE TABLE namespace_keys AS
SELECT DISTINCT instance, session_id, x_namespace AS namespace
FROM session_keys
WHERE agent = 'nanobot' AND is_store AND x_namespace IS NOT NULL;

CREATE TABLE key_holders AS
SELECT instance, session_id, count(*) AS holders, min(namespace) AS only_namespace
FROM namespace_keys
GROUP BY ALL;

CREATE TABLE session_identity AS
WITH resolved AS (
    SELECT k.*,
        CASE WHEN k.agent <> 'nanobot' THEN ''
             WHEN k.is_store AND k.x_namespace IS NOT NULL THEN k.x_namespace
             WHEN own.namespace IS NOT NULL THEN own.namespace
             WHEN h.holders = 1 THEN h.only_namespace
             ELSE '' END AS namespace,
        k.agent = 'nanobot' AND NOT (k.is_store AND k.x_namespace IS NOT NULL)
            AND own.namespace IS NULL AND coalesce(h.holders, 0) <> 1 AS unresolved,
        coalesce(h.holders, 0) AS holders
    FROM session_keys k
    LEFT JOIN namespace_keys own
           ON k.agent = 'nanobot' AND own.instance = k.instance
          AND own.session_id = k.session_id AND own.namespace = k.x_namespace
    LEFT JOIN key_holders h
           ON k.agent = 'nanobot' AND h.instance = k.instance AND h.session_id = k.session_id
)
SELECT *,
    left(sha256(agent || chr(0) || instance || chr(0) || namespace || chr(0) || session_id), 16) AS session_uid
FROM resolved;

INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, e.agent, e.instance, min(e.source_path) AS source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'session ' || e.session_id || ': ' ||
    CASE WHEN any_value(i.holders) = 0 THEN 'no session store of ' || e.instance || ' holds this key'
         ELSE CAST(any_value(i.holders) AS VARCHAR) || ' namespaces of ' || e.instance || ' hold this key' END
    || '; the rows of ' || CAST(count(DISTINCT e.source_path) AS VARCHAR)
    || ' store(s) keep namespace '''' (their own session_uid)' AS message,
    e.session_id, 'namespace_unresolved' AS code
FROM stage_events e
LEFT JOIN kinds k ON k.source_kind = e.source_kind
JOIN session_identity i
  ON i.agent = e.agent AND i.instance = e.instance AND i.session_id = e.session_id
 AND i.x_namespace IS NOT DISTINCT FROM e.x_namespace
 AND i.is_store = (k.session_store IS NOT NULL)
-- (a session store outside any namespace that no namespace shares the key
-- with is simply its own session: no warning)
WHERE i.unresolved AND NOT (i.is_store AND i.holders = 0)
GROUP BY e.agent, e.instance, e.session_id;

-- A namespace whose sessions.sqlite3 has no tables (an import that never
-- completed, code `session_db_empty`): its JSONL files were never frozen and
-- stay the store of record.
CREATE TABLE promoted_stores AS
SELECT DISTINCT s.source_path
FROM sources s
JOIN (SELECT regexp_replace(source_path, '/sessions\.sqlite3$', '') AS ns_dir
      FROM diagnostics WHERE code = 'session_db_empty') d
  ON s.source_role = 'secondary'
 AND s.source_path LIKE d.ns_dir || '/%' AND NOT contains(substr(s.source_path, strlen(d.ns_dir) + 2), '/')
-- canonical files only: a legacy-named one is never loaded by nanobot
SEMI JOIN (SELECT DISTINCT source_path FROM stage_events
           WHERE source_kind IN (SELECT source_kind FROM kinds WHERE session_store = 'jsonl')
             AND NOT x_legacy) c USING (source_path)
WHERE s.source_kind IN (SELECT source_kind FROM kinds WHERE session_store = 'jsonl');

-- Legacy copies beside a store of record of the same session.
CREATE TABLE demoted_stores AS
WITH uids AS (
    SELECT DISTINCT e.source_path, e.x_legacy, i.session_uid
    FROM stage_events e
    JOIN session_identity i
      ON i.agent = e.agent AND i.instance = e.instance AND i.session_id = e.session_id
     AND i.x_namespace IS NOT DISTINCT FROM e.x_namespace AND i.is_store
    WHERE e.source_kind IN (SELECT source_kind FROM kinds WHERE session_store IS NOT NULL)
)
SELECT DISTINCT l.source_path
FROM uids l
JOIN uids r ON r.session_uid = l.session_uid AND NOT r.x_legacy
WHERE l.x_legacy;

UPDATE sources SET source_role = CASE
        WHEN source_path IN (SELECT source_path FROM demoted_stores) THEN 'secondary'
        ELSE 'primary' END
WHERE source_path IN (SELECT source_path FROM demoted_stores)
   OR source_path IN (SELECT source_path FROM promoted_stores);
