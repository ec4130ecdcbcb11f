-- V010 nanoclaw_links
-- Purpose: the links between nanoclaw rows that nanoclaw's registry entry
--          allows, each made only when it is unambiguous (applied by V014):
--          * a `delivered` row (inbound.db) whose message_out_id is an
--            outbound `messages_out` row of the same session folds into
--            that row's native (`delivered`: platform_message_id, status,
--            delivered_at) and leaves the events; one whose outbound row
--            is missing stays, `nanoclaw delivered: … (outbound row missing)`;
--          * an edit or reaction (outbound `operation`) links to the one row
--            of its session its `messageId` names: a messages_in.id, a
--            delivered platform_message_id, or a messages_out.id (nanoclaw's
--            `getMessageIdBySeq`); native.linked_to {relation, seq};
--          * an answer (inbound `question_response`) links to its question
--            card (outbound `ask_question`, same questionId, same session)
--            only when the session holds exactly one card and one answer for
--            the id (native.linked_to on the answer, native.answered_by on
--            the card); otherwise no link and a `warning`;
--          * the catalog session's messaging group joins (native
--            channel_type/platform_id, ` channel=… platform=…` in the text)
--            only when the session's route matches it: its inbound.db
--            `session_routing` row, or, where that table is absent (older
--            session DBs), the reply address of its channel messages. A route
--            that differs gives a `warning`; no route evidence, no join.
-- Grain:   nc_delivery_joined: one row per delivered row that folds;
--          nc_links: one row per event that gains native facts or a route.
-- Inputs:  nc_rows (V009).
-- Output:  nc_delivered, nc_outbound, nc_delivery_joined, nc_links (x_row,
--          patch: JSON merged into native, route: ` channel=… platform=…`
--          for the session start text, after its agent_group);
--          temp tables nc_message_ids, nc_operation_targets, nc_questions,
--          nc_routes; appends `question_link_ambiguous`, `link_target_ambiguous` and
--          `route_mismatch` warnings to diagnostics.
-- Creates: table nc_delivered, table nc_delivery_joined, table nc_links,
-- Creates: table nc_message_ids, table nc_operation_targets,
-- Creates: table nc_outbound, table nc_questions, table nc_routes
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

-- The ids a message of a session answers to (getMessageIdBySeq).
CREATE TEMP TABLE nc_message_ids AS
SELECT instance, session_id, x_row, seq, x_id AS message_id
FROM nc_rows
WHERE (nanoclaw = 'inbound' AND (j->>'table') = 'messages_in')
   OR (nanoclaw = 'outbound' AND (j->>'table') = 'messages_out')
UNION
SELECT o.instance, o.session_id, o.x_row, o.seq, d.record->>'platform_message_id'
FROM nc_rows o
JOIN nc_delivered d
  ON d.instance = o.instance AND d.session_id = o.session_id AND d.message_out_id = o.x_id
WHERE o.nanoclaw = 'outbound' AND (o.j->>'table') = 'messages_out'
  AND (d.record->>'platform_message_id') IS NOT NULL;

CREATE TEMP TABLE nc_operation_targets AS
SELECT op.x_row, op.instance, op.session_id, op.source_path, op.seq,
    op.j->>'operation' AS relation, op.j->>'target_message_id' AS target,
    list(DISTINCT m.seq) FILTER (WHERE m.x_row IS NOT NULL) AS target_seqs
FROM nc_rows op
LEFT JOIN nc_message_ids m
  ON m.instance = op.instance AND m.session_id = op.session_id
 AND m.message_id = op.j->>'target_message_id' AND m.x_row <> op.x_row
WHERE op.nanoclaw = 'outbound' AND (op.j->>'target_message_id') IS NOT NULL
GROUP BY ALL;

CREATE TEMP TABLE nc_questions AS
SELECT instance, session_id, j->>'question_id' AS question_id,
    list(x_row ORDER BY seq, x_row) FILTER (WHERE nanoclaw = 'outbound') AS cards,
    list(seq ORDER BY seq, x_row) FILTER (WHERE nanoclaw = 'outbound') AS card_seqs,
    list(x_row ORDER BY seq, x_row) FILTER (WHERE nanoclaw = 'inbound') AS answers,
    list(seq ORDER BY seq, x_row) FILTER (WHERE nanoclaw = 'inbound') AS answer_seqs,
    min(source_path) FILTER (WHERE nanoclaw = 'outbound') AS source_path
FROM nc_rows
WHERE (j->>'question_id') IS NOT NULL AND session_id IS NOT NULL
  AND ((nanoclaw = 'outbound' AND (j->>'content_type') = 'ask_question')
       OR (nanoclaw = 'inbound' AND (j->>'content_type') = 'question_response'))
GROUP BY ALL;

CREATE TEMP TABLE nc_routes AS
WITH starts AS (
    SELECT x_row, instance, session_id, source_path,
        j->'messaging_group'->>'id' AS messaging_group_id,
        j->'messaging_group'->>'channel_type' AS channel_type,
        j->'messaging_group'->>'platform_id' AS platform_id
    FROM nc_rows
    WHERE nanoclaw = 'catalog' AND x_group = x_group_session()
      AND (j->'messaging_group'->>'id') IS NOT NULL
), routing AS (
    SELECT instance, session_id,
        j->'record'->>'channel_type' AS channel_type, j->'record'->>'platform_id' AS platform_id
    FROM nc_rows
    WHERE nanoclaw = 'inbound' AND (j->>'table') = 'session_routing'
), routes AS (
    SELECT * FROM routing
    UNION ALL
    -- a session DB without session_routing: its channel messages' reply
    -- address (not agent-to-agent, echo or task rows)
    SELECT m.instance, m.session_id, m.j->>'channel_type', m.j->>'platform_id'
    FROM nc_rows m
    WHERE m.nanoclaw = 'inbound' AND (m.j->>'table') = 'messages_in'
      AND (m.j->>'platform_id') IS NOT NULL
      AND coalesce(m.j->>'channel_type', '') NOT IN ('', 'agent', 'session-echo')
      AND NOT EXISTS (SELECT 1 FROM nc_rows r
                      WHERE r.nanoclaw = 'inbound' AND (r.j->>'table') = 'session_routing'
                        AND r.instance = m.instance AND r.session_id = m.session_id)
)
SELECT s.x_row, s.instance, s.session_id, s.source_path, s.messaging_group_id,
    s.channel_type, s.platform_id,
    coalesce(bool_or(r.channel_type = s.channel_type AND r.platform_id = s.platform_id), false) AS matched,
    string_agg(DISTINCT r.channel_type || ' ' || r.platform_id, ', '
               ORDER BY r.channel_type || ' ' || r.platform_id) AS seen
FROM starts s
LEFT JOIN routes r ON r.instance = s.instance AND r.session_id = s.session_id
GROUP BY ALL;

CREATE TABLE nc_links AS
SELECT x_row, json_object('linked_to', json_object('relation', relation, 'seq', target_seqs[1])) AS patch,
    NULL::VARCHAR AS route
FROM nc_operation_targets
WHERE len(target_seqs) = 1
UNION ALL
SELECT answers[1], json_object('linked_to', json_object('relation', 'answer', 'seq', card_seqs[1])), NULL
FROM nc_questions
WHERE len(cards) = 1 AND len(answers) = 1
UNION ALL
SELECT cards[1], json_object('answered_by', json_object('seq', answer_seqs[1])), NULL
FROM nc_questions
WHERE len(cards) = 1 AND len(answers) = 1
UNION ALL
SELECT x_row, json_object('channel_type', channel_type, 'platform_id', platform_id),
    ' channel=' || channel_type || ' platform=' || platform_id
FROM nc_routes
WHERE matched;

INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, 'nanoclaw' AS agent, instance, source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'question ' || question_id || ': ' || coalesce(len(cards), 0) || ' card(s) and '
        || coalesce(len(answers), 0) || ' answer(s) in the session: not linked' AS message,
    session_id, diag_code('question_link_ambiguous') AS code
FROM nc_questions
WHERE coalesce(len(cards), 0) > 1 OR coalesce(len(answers), 0) > 1;

INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, 'nanoclaw' AS agent, instance, source_path,
    CAST(NULL AS BIGINT) AS source_line,
    relation || ' at seq ' || seq || ' names ' || target || ', which ' || len(target_seqs)
        || ' messages of the session answer to: not linked' AS message,
    session_id, diag_code('link_target_ambiguous') AS code
FROM nc_operation_targets
WHERE len(target_seqs) > 1;

INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, 'nanoclaw' AS agent, instance, source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'session ' || session_id || ': messaging group ' || messaging_group_id || ' (' || channel_type
        || ' ' || platform_id || ') does not match the session''s route (' || seen || '): not joined' AS message,
    session_id, diag_code('route_mismatch') AS code
FROM nc_routes
WHERE NOT matched AND seen IS NOT NULL;
