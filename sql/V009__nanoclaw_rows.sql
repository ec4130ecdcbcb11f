-- V009 nanoclaw_rows
-- Purpose: the kept nanoclaw rows with their native facts parsed once, for
--          the nanoclaw steps that join across stores (V010–V013).
-- Grain:   one row per kept nanoclaw event.
-- Inputs:  events_deduped (V008).
-- Output:  nc_rows (events_deduped's columns plus j: native as JSON).
-- Creates: table nc_rows
CREATE TABLE nc_rows AS
SELECT *, native::JSON AS j
FROM events_deduped
WHERE agent = 'nanoclaw';
