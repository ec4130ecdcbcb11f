-- V012 project_paths
-- Purpose: the project of rows that have none of their own. A WebUI
--          transcript row takes the project of its session (the session
--          stores' rows; the transcript has none); a nanoclaw row takes
--          `groups/<folder>` of its agent group. Applied by V014.
-- Grain:   session_projects: one row per nanobot session with a project;
--          nc_folders: one row per nanoclaw agent group.
-- Inputs:  events_deduped (V008), nc_rows (V009).
-- Output:  session_projects (project_path: the least of its session-store
--          rows'),
--          nc_folders (folder of each agent_group_id, from the catalog).
-- Creates: table nc_folders, table session_projects

-- WebUI rows take the project of their session (the transcript has none).
CREATE TABLE session_projects AS
SELECT session_uid, min(project_path) AS project_path
FROM events_deduped
WHERE agent = 'nanobot' AND project_path IS NOT NULL AND session_uid IS NOT NULL
  AND session_store IS NOT NULL
GROUP BY ALL;

CREATE TABLE nc_folders AS
SELECT DISTINCT instance, j->'record'->>'id' AS agent_group_id, j->'record'->>'folder' AS folder
FROM nc_rows
WHERE nanoclaw = 'catalog' AND (j->>'table') = 'agent_groups';
