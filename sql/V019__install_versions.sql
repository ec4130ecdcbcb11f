-- V019 install_versions
-- Purpose: the version of the agent that wrote each store, where the
--          install records it on disk: a nanoclaw install's upgrade marker
--          (`data/upgrade-state.json`, nanoclaw ≥ 2.1.0: the version its
--          setup, update or migration reached) gives every store of the
--          install that version. nanobot records none: NULL.
-- Grain:   install_versions: one row per nanoclaw install with a marker
--          that names a version; sources: one row per store.
-- Inputs:  nc_rows (V009: the marker's row, part `marker`, its native as j),
--          sources (the stores, loaded by the engine from the stage).
-- Output:  install_versions (instance, version), sources.agent_version
--          (appended; NULL where the install records no version).
CREATE TABLE install_versions AS
SELECT instance, min(j->>'version') AS version
FROM nc_rows
WHERE nanoclaw = 'marker' AND (j->>'version') IS NOT NULL
GROUP BY instance;

ALTER TABLE sources ADD COLUMN agent_version VARCHAR;

UPDATE sources SET agent_version = v.version
FROM install_versions v
WHERE sources.agent = 'nanoclaw' AND sources.instance = v.instance;
