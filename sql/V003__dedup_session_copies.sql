-- V002 dedup_frozen_copies
-- Purpose: drop secondary session copies (frozen namespace JSONL, jsonl-backup,
--          workspace-layout files beside a database) whose records the
--          primary store still holds. Same session key and the same JSON
--          object (x_record = hash of its canonical JSON; the database stores
--          compact JSON, the files spaced JSON) are the same message: the
--          primary row wins. A record only in a copy (lost to /new, a rewind,
--          a deleted session) stays, once, from the first copy by path.
--          Session-metadata rows of a copy (model, relay, permission mode)
--          are dropped when a primary store has the session.
-- Grain:   dropped_rows: one row per dropped raw row (with its reason);
--          events_kept: raw_events minus dropped_rows.
-- Inputs:  raw_events.
CREATE TABLE session_records AS
SELECT DISTINCT agent, instance, session_id, x_record, source_role, source_path, source_line
FROM raw_events
WHERE x_record IS NOT NULL;

CREATE TABLE record_occurrences AS
SELECT *,
    row_number() OVER (PARTITION BY agent, instance, session_id, x_record, source_path
                       ORDER BY source_line) AS occ
FROM session_records;

CREATE TABLE record_primary_counts AS
SELECT agent, instance, session_id, x_record, count(*) AS n
FROM session_records
WHERE source_role = 'primary'
GROUP BY ALL;

-- Secondary records: matched by the primary store, or repeated in an
-- earlier secondary copy.
CREATE TABLE dropped_records AS
WITH sec AS (
    SELECT o.*, coalesce(p.n, 0) AS primary_n,
        row_number() OVER (PARTITION BY o.agent, o.instance, o.session_id, o.x_record, o.occ
                           ORDER BY o.source_path) AS copy_rank
    FROM record_occurrences o
    LEFT JOIN record_primary_counts p USING (agent, instance, session_id, x_record)
    WHERE o.source_role = 'secondary'
)
SELECT source_path, source_line,
    CASE WHEN occ <= primary_n THEN 'same record in the primary store'
         ELSE 'same record in an earlier secondary copy' END AS reason
FROM sec
WHERE occ <= primary_n OR (occ > primary_n AND copy_rank > 1);

CREATE TABLE primary_sessions AS
SELECT DISTINCT agent, instance, session_id
FROM raw_events
WHERE source_role = 'primary' AND session_id IS NOT NULL;

CREATE TABLE dropped_rows AS
SELECT r.x_row, r.source_kind, d.reason
FROM raw_events r
JOIN dropped_records d USING (source_path, source_line)
WHERE r.source_role = 'secondary' AND r.x_record IS NOT NULL
UNION ALL
SELECT r.x_row, r.source_kind,
    'session metadata of a copy; the primary store has the session'
FROM raw_events r
SEMI JOIN primary_sessions p USING (agent, instance, session_id)
WHERE r.source_role = 'secondary' AND r.x_meta;

CREATE TABLE events_kept AS
SELECT r.*
FROM raw_events r
ANTI JOIN dropped_rows d USING (x_row);

-- raw_events (a full copy of every row) is not read after this file: free
-- its memory and spill space.
DROP TABLE raw_events;
