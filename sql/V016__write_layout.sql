-- V016 write_layout
-- Purpose: the writer's plan of OUT.parquet (docs/design.md "Output
--          order": agent, instance, session_id, session_uid, ordinal;
--          sess_id follows the first four and ordinal is unique in a
--          session, so this is the total order): every row's narrow
--          columns, sorted once, with where its text and native are; the
--          sink (sink::write_events) streams it in order and reads each
--          unstaged row's text and native from the blob files, so the wide
--          values are never sorted, joined or copied by the engine.
-- Grain:   one row per event.
-- Inputs:  ordinals (V015), event_rows (V015).
-- Output:  write_layout (out_pos: the row's place in OUT.parquet, 1…n),
--          events_plan (event_rows' columns, then out_pos and x_bytes:
--          the row's text and native bytes; stored in out_pos order, what
--          the writer reads), events (view: events_plan's contract columns;
--          replaces V015's view, so events_linked can be freed).
CREATE TABLE write_layout AS
SELECT x_row, row_number() OVER (ORDER BY sess_id, ordinal) AS out_pos
FROM ordinals;

CREATE TABLE events_plan AS
SELECT r.*, l.out_pos,
    coalesce(r.x_text_len, 0) + coalesce(r.x_native_len, 0) AS x_bytes
FROM event_rows r
JOIN write_layout l ON l.x_row = r.x_row
ORDER BY l.out_pos;

CREATE OR REPLACE VIEW events AS
SELECT * EXCLUDE (x_row, x_wide, x_blob, x_off, x_text_len, x_native_len, out_pos, x_bytes)
FROM events_plan;
DROP VIEW event_rows;
