-- V022 install_versions
-- Purpose: the version of the agent that wrote each store, where the
--          install records it on disk: a nanoclaw install's upgrade marker
--          (`data/upgrade-state.json`, nanoclaw ≥ 2.1.0: the version its
--          setup, update or migration reached) gives every store of the
--          install that version, and the session start rows of its catalog
--          `native.nanoclaw_version` (the marker is its own store: the
--          catalog does not read it). nanobot records none: NULL.
-- Grain:   install_versions: one row per nanoclaw install with a marker
--          that names a version; sources: one row per store; events_plan:
--          one row per event.
-- Inputs:  nc_rows (V009: the marker's row, part `marker`, its native as j),
--          sources (the stores, loaded by the engine from the stage),
--          events_plan, plan_sessions and plan_stores (V016: the session
--          start rows, x_start, with their native), kinds.
-- Output:  install_versions (instance, version), sources.agent_version
--          (appended; NULL where the install records no version),
--          nc_start_versions (temp: out_pos and the new native of each
--          catalog session start row of an install with a version),
--          events_plan.native of those rows (updated: `nanoclaw_version`
--          added).
-- Creates: table install_versions, table nc_start_versions
CREATE TABLE install_versions AS
SELECT instance, min(j->>'version') AS version
FROM nc_rows
WHERE nanoclaw = 'marker' AND (j->>'version') IS NOT NULL
GROUP BY instance;

ALTER TABLE sources ADD COLUMN agent_version VARCHAR;

UPDATE sources SET agent_version = v.version
FROM install_versions v
WHERE sources.agent = 'nanoclaw' AND sources.instance = v.instance;

-- The version on the session start rows of the install's catalog. Their
-- native is the catalog's object as its extractor wrote it (keys sorted:
-- messaging_group, record, table), with the route V014 merged appended
-- after them: the key goes in where the sorted object has it, before
-- "record", and the rest of the text stays byte for byte (a JSON merge
-- would append it and write every value again, control characters
-- escaped otherwise). A string value cannot hold `,"record":` (its quotes
-- are escaped), so its first place is the key's; an object of another
-- shape gets the key by a merge. A row that has one already (staged from
-- a ledger an earlier build synced, whose catalog read the marker) keeps it.
CREATE TEMP TABLE nc_start_versions AS
SELECT p.out_pos,
    CASE WHEN json_extract(p.native, '$.nanoclaw_version') IS NOT NULL THEN NULL
         WHEN json_keys(p.native)[1:2] = ['messaging_group', 'record']
         THEN left(p.native, position(',"record":' IN p.native))
              || '"nanoclaw_version":' || CAST(to_json(v.version) AS VARCHAR) || ','
              || substr(p.native, position(',"record":' IN p.native) + 1)
         ELSE CAST(json_merge_patch(p.native::JSON, json_object('nanoclaw_version', v.version)) AS VARCHAR)
    END AS native
FROM events_plan p
JOIN plan_sessions s USING (sess_id)
JOIN install_versions v ON v.instance = s.instance
WHERE p.x_start AND s.agent = 'nanoclaw'
  AND p.store_id IN (SELECT store_id FROM plan_stores
                     WHERE source_kind IN (SELECT source_kind FROM kinds WHERE nanoclaw = 'catalog'));

UPDATE events_plan SET native = n.native
FROM nc_start_versions n
WHERE events_plan.out_pos = n.out_pos AND n.native IS NOT NULL;
