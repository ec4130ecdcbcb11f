-- V004 deduped_session_copies
-- Purpose: drop secondary session copies (frozen namespace JSONL,
--          jsonl-backup, legacy and migration copies demoted in V002,
--          .migration-conflicts) whose messages the primary store still
--          holds (docs/design.md "Dedup: session copies"). Within one
--          session_uid a copy's record is the primary's message when
--            - it is the same JSON object (x_record = hash of its canonical
--              JSON; the database stores compact JSON, the files spaced
--              JSON), or
--            - it has the same position (seq), role and timestamp string
--              (x_msgkey) as a primary record whose content differs: the
--              store of record rewrote the message after the copy froze.
--          The primary row wins. A record only in copies (lost to /new, a
--          rewind, a deleted session) stays, once, from the first copy by
--          path. Session-metadata rows of a copy (model, relay, permission
--          mode) are dropped when a primary session store (database or
--          primary session JSONL; not the memory journal or any other
--          store) has the session.
-- Grain:   session_copy_drops: one row per dropped raw row (with its
--          reason); events_kept: raw_events minus them.
-- Inputs:  raw_events (V003).
-- Output:  copied_sessions (session_uid of every session a secondary store
--          holds records of), session_records (one row per record line of
--          a store, in those sessions),
--          record_occurrences (occ: the n-th time a store holds the
--          record), record_primary_counts (n: how often the primary stores
--          hold it), dropped_records (reason), primary_sessions (sessions a
--          primary session store holds), session_copy_drops (x_row,
--          source_kind, reason), dropped_rows (the same rows; V008 and
--          V011 append), events_kept (view: raw_events' columns, the
--          dropped rows left out).
-- Creates: table copied_sessions, table dropped_records, table dropped_rows,
-- Creates: table primary_sessions, table record_occurrences,
-- Creates: table record_primary_counts, table session_copy_drops,
-- Creates: table session_records, view events_kept
-- Only a session a copy holds records of can lose any: the records of the
-- others are not collected (they were every row of a home without copies).
CREATE TABLE copied_sessions AS
SELECT DISTINCT session_uid
FROM raw_events
WHERE x_record IS NOT NULL AND source_role = 'secondary';

CREATE TABLE session_records AS
SELECT DISTINCT r.session_uid, r.x_record, r.seq, r.x_msgkey, r.source_role, r.source_path, r.source_line
FROM raw_events r
SEMI JOIN copied_sessions c ON c.session_uid IS NOT DISTINCT FROM r.session_uid
WHERE r.x_record IS NOT NULL;

CREATE TABLE record_occurrences AS
SELECT *,
    row_number() OVER (PARTITION BY session_uid, x_record, source_path
                       ORDER BY source_line) AS occ
FROM session_records;

CREATE TABLE record_primary_counts AS
SELECT session_uid, x_record, count(*) AS n
FROM session_records
WHERE source_role = 'primary'
GROUP BY ALL;

-- Secondary records: matched by the primary store, or repeated in an
-- earlier secondary copy.
CREATE TABLE dropped_records AS
WITH sec AS (
    SELECT o.*, coalesce(p.n, 0) AS primary_n,
        row_number() OVER (PARTITION BY o.session_uid, o.x_record, o.occ
                           ORDER BY o.source_path) AS copy_rank
    FROM record_occurrences o
    LEFT JOIN record_primary_counts p USING (session_uid, x_record)
    WHERE o.source_role = 'secondary'
)
SELECT source_path, source_line,
    CASE WHEN occ <= primary_n THEN 'same record in the primary store'
         ELSE 'same record in an earlier secondary copy' END AS reason
FROM sec
WHERE occ <= primary_n OR (occ > primary_n AND copy_rank > 1);

-- The same message, rewritten by the store of record after the copy froze.
INSERT INTO dropped_records
SELECT DISTINCT s.source_path, s.source_line,
    'same message in the primary store, rewritten there (same position, role and timestamp)' AS reason
FROM session_records s
JOIN session_records p
  ON p.session_uid = s.session_uid AND p.seq = s.seq AND p.x_msgkey = s.x_msgkey
 AND p.source_role = 'primary' AND p.x_record <> s.x_record
WHERE s.source_role = 'secondary' AND s.x_msgkey IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM dropped_records d
                  WHERE d.source_path = s.source_path AND d.source_line = s.source_line);

CREATE TABLE primary_sessions AS
SELECT DISTINCT session_uid
FROM raw_events
WHERE source_role = 'primary' AND session_uid IS NOT NULL
  AND session_store IS NOT NULL;

CREATE TABLE session_copy_drops AS
SELECT r.x_row, r.source_kind, d.reason
FROM raw_events r
JOIN dropped_records d USING (source_path, source_line)
WHERE r.source_role = 'secondary' AND r.x_record IS NOT NULL
UNION ALL
SELECT r.x_row, r.source_kind,
    'session metadata of a copy; the primary store has the session' AS reason
FROM raw_events r
SEMI JOIN primary_sessions p USING (session_uid)
WHERE r.source_role = 'secondary' AND r.x_meta;

CREATE TABLE dropped_rows AS
SELECT * FROM session_copy_drops;

-- A view, not a copy of the rows: the steps after this one read the columns
-- they need through it (a copy of every row spills at the default memory
-- limit on a large home; BENCHMARKS.md "The SQL dataflow").
CREATE VIEW events_kept AS
SELECT r.*
FROM raw_events r
ANTI JOIN session_copy_drops d USING (x_row);
