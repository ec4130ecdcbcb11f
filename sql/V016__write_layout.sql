-- V016 write_layout
-- Purpose: the writer's layout of OUT.parquet (docs/design.md "Output
--          order": agent, instance, session_id, session_uid, ordinal;
--          sess_id follows the first four and ordinal is unique in a
--          session, so this is the total order), computed narrow so the
--          writer (run::write_events) cuts OUT into byte ranges and never
--          sorts the wide rows at once; then the events materialized once
--          with it.
-- Grain:   one row per event.
-- Inputs:  ordinals (V015), events_linked (V014), event_rows (V015).
-- Output:  row_bytes (x_bytes: the row's text and native bytes),
--          write_layout (out_pos: the row's place in OUT.parquet, 1…n;
--          out_offset: the x_bytes of all rows before it), events_wide (the
--          contract columns, then x_row, out_pos, out_offset, x_bytes: what
--          the writer reads), events (view: events_wide's contract
--          columns; replaces V015's view, so events_linked can be freed).
CREATE TABLE row_bytes AS
SELECT x_row, coalesce(strlen(text), 0) + coalesce(strlen(native), 0) AS x_bytes
FROM events_linked;

CREATE TABLE write_layout AS
SELECT x_row, x_bytes,
    row_number() OVER w AS out_pos,
    coalesce(sum(x_bytes) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS out_offset
FROM ordinals
JOIN row_bytes USING (x_row)
WINDOW w AS (ORDER BY sess_id, ordinal);

-- events_wide: the contract columns plus the writer's helpers (x_row,
-- out_pos, out_offset, x_bytes); `events` shows the contract columns.
CREATE TABLE events_wide AS
SELECT r.*, l.out_pos, l.out_offset, l.x_bytes
FROM event_rows r
JOIN write_layout l ON l.x_row = r.x_row;

CREATE OR REPLACE VIEW events AS
SELECT * EXCLUDE (x_row, out_pos, out_offset, x_bytes) FROM events_wide;
-- event_rows reads events_linked, which V017 frees
DROP VIEW event_rows;
