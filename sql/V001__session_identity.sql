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
--          the key; when none holds it (a deleted chat) the store's own
--          workspace; otherwise '' and a `warning` (namespace_unresolved).
--          nanoclaw: ''.
-- Grain:   session_identity: one row per distinct (agent, instance,
--          session_id, x_namespace, is_store) of the staged rows.
-- Inputs:  stage_events, kind_session_store() (kinds row-wise), diagnostics.
-- Output:  session_keys (is_store: the row comes from a session store),
--          namespace_keys (one row per namespace that holds a key in a
--          session store), key_holders (holders: how many namespaces of the
--          instance hold the key; only_namespace: the first of them),
--          session_identity (session_keys with namespace, session_uid,
--          holders, and unresolved: a nanobot key no namespace rule placed,
--          so namespace ''), the macro session_uid_of(agent, instance,
--          namespace, session_id); appends namespace_unresolved warnings
--          to diagnostics.
-- Creates: table key_holders, table namespace_keys, table session_identity,
-- Creates: table session_keys
CREATE TABLE session_keys AS
-- (the kind's trait row-wise: a join with kinds lets DuckDB hash the staged
-- side, out of memory at the default limit on a large home)
SELECT DISTINCT s.agent, s.instance, s.session_id, s.x_namespace,
    kind_session_store(s.source_kind) IS NOT NULL AS is_store
FROM stage_events s
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

-- The one formula of a session_uid (V014 names nanoclaw transcript rows'
-- sessions with it; audit A006 recomputes it by hand).
CREATE MACRO session_uid_of(agent, instance, namespace, session_id) AS
    left(sha256(agent || chr(0) || instance || chr(0) || namespace || chr(0) || session_id), 16);

CREATE TABLE session_identity AS
WITH resolved AS (
    SELECT k.*,
        CASE WHEN k.agent <> 'nanobot' THEN ''
             WHEN k.is_store AND k.x_namespace IS NOT NULL THEN k.x_namespace
             WHEN own.namespace IS NOT NULL THEN own.namespace
             WHEN h.holders = 1 THEN h.only_namespace
             -- no store holds the key any more (a deleted chat): the
             -- workspace the row's store belongs to
             WHEN coalesce(h.holders, 0) = 0 AND k.x_namespace IS NOT NULL THEN k.x_namespace
             ELSE '' END AS namespace,
        k.agent = 'nanobot' AND NOT (k.is_store AND k.x_namespace IS NOT NULL)
            AND own.namespace IS NULL AND coalesce(h.holders, 0) <> 1
            AND NOT (coalesce(h.holders, 0) = 0 AND k.x_namespace IS NOT NULL) AS unresolved,
        coalesce(h.holders, 0) AS holders
    FROM session_keys k
    LEFT JOIN namespace_keys own
           ON k.agent = 'nanobot' AND own.instance = k.instance
          AND own.session_id = k.session_id AND own.namespace = k.x_namespace
    LEFT JOIN key_holders h
           ON k.agent = 'nanobot' AND h.instance = k.instance AND h.session_id = k.session_id
)
SELECT *, session_uid_of(agent, instance, namespace, session_id) AS session_uid
FROM resolved;

INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, e.agent, e.instance, min(e.source_path) AS source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'session ' || e.session_id || ': ' ||
    CASE WHEN any_value(i.holders) = 0 THEN 'no session store of ' || e.instance || ' holds this key'
         ELSE CAST(any_value(i.holders) AS VARCHAR) || ' namespaces of ' || e.instance || ' hold this key' END
    || '; the rows of ' || CAST(count(DISTINCT e.source_path) AS VARCHAR)
    || ' store(s) keep namespace '''' (their own session_uid)' AS message,
    e.session_id, diag_code('namespace_unresolved') AS code
FROM stage_events e
JOIN session_identity i
  ON i.agent = e.agent AND i.instance = e.instance AND i.session_id = e.session_id
 AND i.x_namespace IS NOT DISTINCT FROM e.x_namespace
 AND i.is_store = (kind_session_store(e.source_kind) IS NOT NULL)
-- (a session store outside any namespace that no namespace shares the key
-- with is simply its own session: no warning)
WHERE i.unresolved AND NOT (i.is_store AND i.holders = 0)
GROUP BY e.agent, e.instance, e.session_id;
