-- V014 linked_events
-- Purpose: the kept events with what V010–V012 found across stores applied,
--          in one pass over the rows: delivered rows folded into their
--          outbound row's native and removed (an orphan's text says
--          `(outbound row missing)`); the nanoclaw links (nc_links: native
--          facts merged, a joined route's ` channel=… platform=…` put back
--          after the session start text's agent_group); transcript rows with
--          the session (and session_uid) of their continuation, and the
--          usage of a response another row of the session carries removed
--          (`usage_counted: false`); exchange archive rows with the
--          session V011 joined them to (native `session_joined_by`:
--          `continuation` or `folder`, and `agent_group_id`), their copies
--          of primary rows removed; project_path filled from
--          the session (WebUI) or the agent group (nanoclaw).
-- Grain:   events_linked: one row per kept event (folded delivered rows
--          and copies of Claude Code lines and exchange archive rows a
--          primary holds removed).
-- Inputs:  events_deduped (V008), session_uid_of (V001), nc_delivery_joined and nc_links (V010),
--          nc_transcript_sessions, nc_archive_sessions, nc_transcript_copies (removed) and
--          nc_usage_repeats (V011),
--          session_projects and nc_folders (V012).
-- Output:  events_linked (view: events_deduped's columns; the rows are
--          materialised once, in V016's plan).
-- Creates: view events_linked
CREATE VIEW events_linked AS
SELECT e.* REPLACE (
        CASE WHEN e.nanoclaw = 'transcript' THEN coalesce(e.session_id, t.session_id)
             WHEN e.nanoclaw = 'archive' THEN coalesce(e.session_id, a.session_id)
             ELSE e.session_id END AS session_id,
        CASE WHEN e.nanoclaw = 'transcript' AND e.session_id IS NULL AND t.session_id IS NOT NULL
             THEN session_uid_of('nanoclaw', e.instance, '', t.session_id)
             WHEN e.nanoclaw = 'archive' AND e.session_id IS NULL AND a.session_id IS NOT NULL
             THEN session_uid_of('nanoclaw', e.instance, '', a.session_id)
             ELSE e.session_uid END AS session_uid,
        coalesce(e.project_path, p.project_path, 'groups/' || f.folder) AS project_path,
        CASE WHEN dj.message_out_id IS NOT NULL OR l.x_row IS NOT NULL
             THEN CAST(json_merge_patch(e.native::JSON,
                                        CASE WHEN dj.message_out_id IS NOT NULL
                                             THEN json_object('delivered', dj.record) ELSE '{}'::JSON END,
                                        coalesce(l.patch, '{}'::JSON)) AS VARCHAR)
             WHEN ur.x_row IS NOT NULL
             THEN CAST(json_merge_patch(e.native::JSON, '{"usage":null,"usage_counted":false}') AS VARCHAR)
             WHEN a.joined_by IS NOT NULL
             THEN CAST(json_merge_patch(e.native::JSON,
                                        json_object('session_joined_by', a.joined_by,
                                                    'agent_group_id', a.agent_group_id)) AS VARCHAR)
             ELSE e.native END AS native,
        CASE WHEN e.nanoclaw = 'inbound' AND (e.native::JSON->>'table') = 'delivered'
             THEN e.text || ' (outbound row missing)'
             WHEN l.route IS NOT NULL
             THEN regexp_replace(e.text, '^(session start: id=\S*( agent_group=\S*)?)',
                                 '\1' || replace(l.route, '\', '\\'))
             ELSE e.text END AS text)
FROM events_deduped e
LEFT JOIN session_projects p
       ON e.turn_copy = 'webui' AND p.session_uid = e.session_uid
LEFT JOIN nc_folders f
       ON e.agent = 'nanoclaw' AND f.instance = e.instance
      AND f.agent_group_id = (CAST(e.native AS JSON)->>'agent_group_id')
LEFT JOIN nc_transcript_sessions t
       ON e.nanoclaw = 'transcript' AND t.instance = e.instance
      AND t.continuation_id = (CAST(e.native AS JSON)->>'transcript_id')
LEFT JOIN nc_archive_sessions a
       ON e.nanoclaw = 'archive' AND a.instance = e.instance AND a.source_path = e.source_path
LEFT JOIN nc_usage_repeats ur
       ON e.nanoclaw = 'transcript' AND ur.x_row = e.x_row
LEFT JOIN nc_delivery_joined dj
       ON e.nanoclaw = 'outbound' AND dj.instance = e.instance
      AND dj.session_id = e.session_id AND dj.message_out_id = e.x_id
LEFT JOIN nc_links l ON e.agent = 'nanoclaw' AND l.x_row = e.x_row
WHERE e.x_row NOT IN (SELECT x_row FROM nc_delivery_joined)
  AND e.x_row NOT IN (SELECT x_row FROM nc_transcript_copies);

