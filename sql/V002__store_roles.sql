-- V002 store_roles
-- Purpose: the final role of each nanobot session store (docs/design.md
--          "Stores and roles"). A legacy-layout session copy (x_legacy)
--          whose session a store of record (database, canonical namespace
--          JSONL) also holds is demoted to secondary; the canonical JSONL
--          of a namespace whose database import never completed (its
--          sessions.sqlite3 has no tables, code `session_db_empty`) are
--          promoted back to primary. `sources.source_role` says so; the
--          rows take it in raw_events.
-- Grain:   promoted_stores, demoted_stores: one row per store path;
--          session_stores: one row per (store path, session).
-- Inputs:  stage_events, session_identity (V001), sources, diagnostics,
--          kinds, kind_session_store() (kinds row-wise).
-- Output:  promoted_stores (secondary session JSONL that are the store of
--          record after all), session_stores (each distinct source_path,
--          x_legacy, session_uid, instance, session_id of the session
--          stores' rows), demoted_stores (primary legacy copies that
--          are secondary after all); updates sources.source_role.
-- Creates: table demoted_stores, table promoted_stores, table session_stores

-- A namespace whose sessions.sqlite3 has no tables (an import that never
-- completed, code `session_db_empty`): its JSONL files were never frozen and
-- stay the store of record.
CREATE TABLE promoted_stores AS
SELECT DISTINCT s.source_path
FROM sources s
JOIN (SELECT regexp_replace(source_path, '/sessions\.sqlite3$', '') AS ns_dir
      FROM diagnostics WHERE code = diag_code('session_db_empty')) d
  ON s.source_role = 'secondary'
 AND starts_with(s.source_path, d.ns_dir || '/') AND NOT contains(substr(s.source_path, strlen(d.ns_dir) + 2), '/')
-- canonical files only: a legacy-named one is never loaded by nanobot
SEMI JOIN (SELECT DISTINCT source_path FROM stage_events
           WHERE kind_session_store(source_kind) = 'jsonl'
             AND NOT x_legacy) c USING (source_path)
WHERE s.source_kind IN (SELECT source_kind FROM kinds WHERE session_store = 'jsonl');

-- Each session a session store holds: read from the rows once, for the
-- demotion below and for V007's turns (their integer pair_no).
CREATE TABLE session_stores AS
SELECT DISTINCT e.source_path, e.x_legacy, i.session_uid, i.instance, i.session_id
FROM stage_events e
JOIN session_identity i
  ON i.agent = e.agent AND i.instance = e.instance AND i.session_id = e.session_id
 AND i.x_namespace IS NOT DISTINCT FROM e.x_namespace AND i.is_store
-- (the kind's trait row-wise: an IN over kinds lets DuckDB hash the
-- staged side, out of memory at the default limit on a large home)
WHERE kind_session_store(e.source_kind) IS NOT NULL;

-- Legacy copies beside a store of record of the same session.
CREATE TABLE demoted_stores AS
SELECT DISTINCT l.source_path
FROM session_stores l
JOIN session_stores r ON r.session_uid = l.session_uid AND NOT r.x_legacy
WHERE l.x_legacy;

UPDATE sources SET source_role = CASE
        WHEN source_path IN (SELECT source_path FROM demoted_stores) THEN 'secondary'
        ELSE 'primary' END
WHERE source_path IN (SELECT source_path FROM demoted_stores)
   OR source_path IN (SELECT source_path FROM promoted_stores);
