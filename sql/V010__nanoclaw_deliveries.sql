-- V010 nanoclaw_deliveries
-- Purpose: which `delivered` rows (inbound.db) fold into their outbound row.
--          A `delivered` row whose message_out_id is an outbound
--          `messages_out` row of the same session is folded into that row's
--          native (`delivered`: platform_message_id, status, delivered_at)
--          by V014 and leaves the events; one whose outbound row is missing
--          stays as an orphan fact, `nanoclaw delivered: … (outbound row
--          missing)`.
-- Grain:   nc_delivery_joined: one row per delivered row that folds.
-- Inputs:  nc_rows (V009).
-- Output:  nc_delivered (message_out_id: the outbound message it reports;
--          record: its inbound.db record), nc_outbound (the outbound
--          messages), nc_delivery_joined (the nc_delivered rows whose
--          outbound message exists).
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
