//! The merge of one sync's staged rows into the ledger's tables: the
//! ledger's tables made or upgraded, each staged row matched to its row by
//! identity (`row_key`), new rows added, rows not seen marked gone.

use super::*;

/// The merge of one sync, inside its transaction: sources, events, calls,
/// then the `loads` row; committed here.
pub(super) fn merged(
    conn: &Connection,
    staged: &crate::stage::Staged,
    stores: &Stores,
    load_id: &str,
    config: &Config,
    started: SystemTime,
) -> Result<(i64, Merged, Merged), duckdb::Error> {
    store_facts(conn, staged, stores)?;
    let home = config.home.to_string_lossy().into_owned();
    let kept_homes = record_home(conn, &home)?;
    // in a ledger of several HOMEs a sync settles only what its own HOME's
    // syncs first saw: the others' stores have the same relative paths
    let mine = |col: &str| {
        if kept_homes > 1 {
            format!(
                " AND {col} IN (SELECT sync FROM loads WHERE home = {})",
                crate::steps::sql_text(&home)
            )
        } else {
            String::new()
        }
    };
    // a path at or below a place this sync could not see (no statement
    // gains the test when every place was seen)
    let seen = |col: &str| {
        if stores.unseen.is_empty() {
            "true".to_string()
        } else {
            format!(
                "NOT EXISTS (SELECT 1 FROM unseen_places u
                             WHERE u.rel = '' OR {col} = u.rel OR starts_with({col}, u.rel || '/'))"
            )
        }
    };
    // the stores whose rows this sync settles: those it read to their end,
    // and those no longer on disk (neither read nor unchanged) where it
    // could see: the directory that held them was read; a present row of
    // theirs that it did not see is gone (a row's store: `store_path`, the
    // store's main path, whichever of its files the row came from: a WebUI
    // segment, a checkpoint sidecar)
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE settled AS
         SELECT instance, source_path FROM cur_sources WHERE status IN ('ok', 'skipped')
         UNION
         SELECT instance, source_path FROM ledger_sources l
         WHERE NOT EXISTS (SELECT 1 FROM cur_sources c
                           WHERE c.instance = l.instance AND c.source_path = l.source_path)
           AND NOT EXISTS (SELECT 1 FROM unchanged_stores u
                           WHERE u.instance = l.instance AND u.source_path = l.source_path)
           AND {}{};",
        seen("l.source_path"),
        mine("l.first_seen_load")
    ))?;
    // besides: a row of a file below a place not seen (a WebUI segment in a
    // directory that could not be listed), and a WebUI reasoning row of a
    // transcript read without `--include-thinking`, which gives none
    let mut spared = format!(" AND {}{}", seen("source_path"), mine("first_seen_load"));
    if !config.extract.include_thinking {
        spared.push_str(&format!(
            " AND NOT (turn_type = 'thinking' AND source_kind = {} AND (instance, store_path) IN
                   (SELECT instance, source_path FROM cur_sources))",
            crate::steps::sql_text(crate::sources::nanobot::webui_transcript::KIND)
        ));
    }
    let legacy = legacy_keys(conn)?;
    // this sync's number: a load_id names the files and options, and an
    // unchanged home gives the same one again
    let sync: i64 = conn.query_row("SELECT coalesce(max(sync), 0) + 1 FROM loads", [], |r| {
        r.get(0)
    })?;
    let events = merge_table(
        conn,
        &Table {
            name: "ledger_events",
            schema: events_schema(),
            occurrence: "source_line NULLS LAST, seq NULLS LAST, x_row",
            spared: &spared,
            legacy,
        },
        &staged.events,
        sync,
    )?;
    let calls = merge_table(
        conn,
        &Table {
            name: "ledger_llm_calls",
            schema: llm_calls_schema(),
            occurrence: "id",
            spared: &format!(" AND {}{}", seen("source_path"), mine("first_seen_load")),
            legacy: false,
        },
        &staged.llm_calls,
        sync,
    )?;
    merge_sources(
        conn,
        sync,
        &format!("{}{}", seen("source_path"), mine("first_seen_load")),
    )?;
    if legacy {
        forget_legacy_keys(conn)?;
    }
    record_sync(
        conn,
        staged,
        sync,
        load_id,
        config,
        started,
        (&events, &calls),
    )?;
    conn.execute_batch(VERSIONS)?;
    crate::pipeline::test_pause("merged");
    conn.execute_batch("COMMIT;")?;
    Ok((sync, events, calls))
}

/// Once every row of the earlier format seen again has its new identity,
/// no sync need compute the earlier one any more.
fn forget_legacy_keys(conn: &Connection) -> Result<(), duckdb::Error> {
    let left: i64 = conn.query_row(
        &format!("SELECT count(*) FROM ledger_events WHERE {CONTENT} IS NULL"),
        [],
        |r| r.get(0),
    )?;
    if left == 0 {
        conn.execute_batch("DELETE FROM ledger_meta WHERE key = 'legacy_row_keys';")?;
    }
    Ok(())
}

/// The HOME of this sync is one the ledger keeps (recorded at its first
/// sync; a ledger of an earlier build records those its syncs read): how
/// many it keeps now.
fn record_home(conn: &Connection, home: &str) -> Result<i64, duckdb::Error> {
    conn.execute(
        "INSERT INTO ledger_meta
         SELECT 'home', h FROM (SELECT DISTINCT home AS h FROM loads WHERE home IS NOT NULL
                                UNION SELECT ?)
         WHERE h NOT IN (SELECT value FROM ledger_meta WHERE key = 'home')
         ORDER BY h",
        [home],
    )?;
    conn.query_row(
        "SELECT count(*) FROM ledger_meta WHERE key = 'home'",
        [],
        |r| r.get(0),
    )
}

/// The temp tables the merge reads besides the staged rows: this sync's
/// `sources` rows, its unchanged stores, every store's key and files, and
/// the places it could not see.
fn store_facts(
    conn: &Connection,
    staged: &crate::stage::Staged,
    stores: &Stores,
) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "CREATE TEMP TABLE cur_sources AS SELECT * FROM read_parquet({});
         CREATE TEMP TABLE unchanged_stores (source_kind VARCHAR, instance VARCHAR, source_path VARCHAR);
         CREATE TEMP TABLE store_keys (source_kind VARCHAR, instance VARCHAR, source_path VARCHAR, state_key VARCHAR);
         CREATE TEMP TABLE store_files (instance VARCHAR, store_path VARCHAR, file_path VARCHAR);
         CREATE TEMP TABLE unseen_places (rel VARCHAR);",
        sql_str(&staged.sources)
    ))?;
    {
        let mut app = conn.appender("unchanged_stores")?;
        for (k, i, p) in stores.unchanged {
            app.append_row([k, i, p])?;
        }
        app.flush()?;
        let mut app = conn.appender("store_keys")?;
        for ((k, i, p), key) in stores.keys {
            app.append_row([k, i, p, key])?;
        }
        app.flush()?;
        let mut app = conn.appender("store_files")?;
        for (i, store, file) in stores.files {
            app.append_row([i, store, file])?;
        }
        app.flush()?;
        let mut app = conn.appender("unseen_places")?;
        for rel in stores.unseen {
            app.append_row([rel])?;
        }
        app.flush()?;
    }
    Ok(())
}

/// What the sync read, recorded: the diagnostics of reading HOME (the
/// unchanged stores' as the ledger has them, the rest this sync's: what
/// an export stages, as a load does) and its `loads` row.
fn record_sync(
    conn: &Connection,
    staged: &crate::stage::Staged,
    sync: i64,
    load_id: &str,
    config: &Config,
    started: SystemTime,
    (events, calls): (&Merged, &Merged),
) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "DELETE FROM ledger_diagnostics
         WHERE instance IS NULL OR (instance || chr(31) || source_path) NOT IN
             (SELECT f.instance || chr(31) || f.file_path FROM store_files f
              JOIN unchanged_stores u ON u.instance = f.instance AND u.source_path = f.store_path);
         INSERT INTO ledger_diagnostics SELECT *, {sync} FROM read_parquet({});",
        sql_str(&staged.diagnostics)
    ))?;
    // what this sync could not read: a store, a directory, a link (prune
    // asks --force to remove what such a sync marked gone)
    let unreadable: i64 = conn.query_row(
        "SELECT count(*) FROM ledger_diagnostics WHERE kind IN (?, ?)",
        [
            crate::diag::DiagKind::Unreadable.as_str(),
            crate::diag::DiagKind::SkippedLink.as_str(),
        ],
        |r| r.get(0),
    )?;
    let finished = SystemTime::now();
    conn.execute(
        "INSERT INTO loads (sync, load_id, started_at, finished_at, home, options, added, changed,
                            gone, rows, present, unreadable)
         VALUES (?, ?, make_timestamp(?), make_timestamp(?), ?, ?, ?, ?, ?, ?, ?, ?)",
        duckdb::params![
            sync,
            load_id,
            micros(started),
            micros(finished),
            config.home.to_string_lossy(),
            config.shown_options(),
            (events.added + calls.added) as i64,
            (events.changed + calls.changed) as i64,
            (events.gone + calls.gone) as i64,
            (events.rows + calls.rows) as i64,
            (events.present + calls.present) as i64,
            unreadable,
        ],
    )?;
    Ok(())
}

/// `ledger_versions`: a record the agent rewrote in place, as the pair of
/// its rows — the old version (gone) and the one first seen in the next
/// sync at the same place of the same store, the same kind of row
/// (`turn_type`, `x_sub`) and the same message (nanobot's `x_msgkey`, role
/// and timestamp as written; nanoclaw's `x_id`; else the same line and
/// seq). A view, made again by every sync, so a ledger of an earlier build
/// gains it.
pub(super) const VERSIONS: &str = "CREATE OR REPLACE VIEW ledger_versions AS
SELECT o.row_key AS old_row_key, n.row_key AS new_row_key,
       o.agent, o.instance, o.session_id, o.source_path, o.turn_type,
       o.last_seen_load AS old_last_seen_load, n.first_seen_load AS new_first_seen_load,
       o.text AS old_text, n.text AS new_text
FROM ledger_events o
JOIN ledger_events n
  ON n.instance = o.instance AND n.source_path = o.source_path
 AND n.source_kind = o.source_kind AND n.turn_type = o.turn_type
 AND n.x_sub IS NOT DISTINCT FROM o.x_sub
 AND n.first_seen_load = o.last_seen_load + 1
 AND CASE WHEN o.x_msgkey IS NOT NULL THEN n.x_msgkey = o.x_msgkey
          WHEN o.x_id IS NOT NULL THEN n.x_id = o.x_id
          ELSE n.source_line IS NOT DISTINCT FROM o.source_line AND n.seq IS NOT DISTINCT FROM o.seq END
WHERE NOT o.present AND n.row_key <> o.row_key;";

/// Create the ledger's tables (a new ledger), or check that it is one this
/// build reads.
pub(super) fn prepare(conn: &Connection) -> Result<Option<String>, duckdb::Error> {
    match state(conn)? {
        State::Ours => return Ok(None),
        State::Other(refused) => return Ok(Some(refused)),
        State::Earlier => {
            return Ok(Some(format!(
                "a ledger of format {EARLIER_FORMAT} that was not upgraded (internal)"
            )));
        }
        State::Absent => {}
    }
    let signature = columns_signature();
    let seen = "row_key VARCHAR, first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, store_path VARCHAR, gone_load BIGINT";
    let table = |name: &str, schema: &SchemaRef, extra: &str| {
        let cols = joined(kept(schema), ", ", |(n, t)| format!("\"{n}\" {t}"));
        format!("CREATE TABLE {name} ({cols}, {extra});")
    };
    conn.execute_batch(&format!(
        "CREATE TABLE ledger_meta (key VARCHAR, value VARCHAR);
         CREATE TABLE loads (sync BIGINT, load_id VARCHAR, started_at TIMESTAMP, finished_at TIMESTAMP,
             home VARCHAR, options VARCHAR, added BIGINT, changed BIGINT, gone BIGINT,
             rows BIGINT, present BIGINT, unreadable BIGINT);
         {}
         {}
         {}",
        table("ledger_events", &events_schema(), seen),
        table("ledger_llm_calls", &llm_calls_schema(), seen),
        table(
            "ledger_sources",
            &sources_schema(),
            "first_seen_load BIGINT, last_seen_load BIGINT, present BOOLEAN, state_key VARCHAR, gone_load BIGINT"
        ),
    ))?;
    conn.execute_batch(&table(
        "ledger_diagnostics",
        &diagnostics_schema(),
        "sync BIGINT",
    ))?;
    let mut app = conn.appender("ledger_meta")?;
    app.append_row(["format", FORMAT])?;
    app.append_row(["columns", signature.as_str()])?;
    let by = format!("nanoload {}", env!("CARGO_PKG_VERSION"));
    app.append_row(["created_by", by.as_str()])?;
    app.flush()?;
    Ok(None)
}

/// One ledger table a sync merges into.
pub(super) struct Table<'a> {
    name: &'a str,
    /// The staged schema of its rows.
    schema: SchemaRef,
    /// The order of a content's occurrences in its store.
    occurrence: &'a str,
    /// What else a row that would be gone must not be (`AND …`: below a
    /// place not seen, a reasoning row not asked for).
    spared: &'a str,
    /// The table holds rows keyed as format 2 did (no `x_content`): their
    /// earlier key is computed too, and a row found under it takes its new
    /// identity ([`upgrade`]).
    legacy: bool,
}

/// Upgrade a ledger of format 2 to this build's, inside the sync's
/// transaction (a sync that fails leaves it as it was): `x_content` added to
/// the events (NULL until a sync sees the row again: the row then takes its
/// new identity, [`merge_table`]), `gone_load` to the events, calls and
/// stores (NULL for what an earlier build marked gone: prune then asks for
/// `--force`, as that build did not record whether it could read all of
/// HOME), `unreadable` to `loads` (NULL: not recorded), and the options
/// earlier syncs recorded as given rewritten without the value of any
/// `--secret-pattern` ([`Config::shown_options`]). No row is removed.
pub(super) fn upgrade(conn: &Connection) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "ALTER TABLE ledger_events ADD COLUMN {CONTENT} VARCHAR;
         ALTER TABLE ledger_events ADD COLUMN gone_load BIGINT;
         ALTER TABLE ledger_llm_calls ADD COLUMN gone_load BIGINT;
         ALTER TABLE ledger_sources ADD COLUMN gone_load BIGINT;
         ALTER TABLE loads ADD COLUMN unreadable BIGINT;
         UPDATE ledger_meta SET value = {format} WHERE key = 'format';
         UPDATE ledger_meta SET value = {columns} WHERE key = 'columns';
         INSERT INTO ledger_meta VALUES ('legacy_row_keys', {earlier});",
        format = crate::steps::sql_text(FORMAT),
        earlier = crate::steps::sql_text(EARLIER_FORMAT),
        columns = crate::steps::sql_text(&columns_signature()),
    ))?;
    let options: Vec<(i64, String)> = {
        let mut stmt = conn.prepare(
            "SELECT sync, options FROM loads WHERE contains(options, 'secret_pattern=')",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    };
    for (sync, given) in options {
        conn.execute(
            "UPDATE loads SET options = ? WHERE sync = ?",
            duckdb::params![crate::config::without_secret_patterns(&given), sync],
        )?;
    }
    Ok(())
}

/// `cur`: this sync's staged rows of `t` (from `files`), each with its
/// identity (`row_key`: the agent's record and its occurrence; with
/// `legacy`, the earlier format's key too) and its store's main path.
fn stage_cur(
    conn: &Connection,
    t: &Table,
    files: &[PathBuf],
    legacy: bool,
) -> Result<(), duckdb::Error> {
    let ledger = t.name;
    let schema = &t.schema;
    let cols = kept(schema);
    let all = column_list(schema, "");
    let json_of = |leave: &dyn Fn(&str) -> bool| {
        joined(
            cols.iter().filter(|(n, _)| !leave(n.as_str())),
            ", ",
            |(n, _)| format!("'{n}': \"{n}\""),
        )
    };
    // the agent's record: neither where it stands nor how nanoload renders it
    let identity = json_of(&|n| PLACE.contains(&n) || RENDERED.contains(&n));
    // format 2's: its content was the rendering itself
    let legacy_identity = json_of(&|n| PLACE.contains(&n) || n == CONTENT);
    let occurrence = if schema.fields().iter().any(|f| f.name() == "x_row") {
        t.occurrence.to_string()
    } else {
        t.occurrence.replace(", x_row", "")
    };
    let store_of = "(SELECT instance, file_path, min(store_path) AS store_path
                     FROM store_files GROUP BY ALL)";
    if files.is_empty() {
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all}, CAST(NULL AS VARCHAR) AS row_key, CAST(NULL AS VARCHAR) AS legacy_key,
                    CAST(NULL AS VARCHAR) AS store_path
             FROM {ledger} WHERE false;"
        ))?;
    } else {
        // The occurrence of each content is numbered over narrow rows (the
        // content's hash, the columns that order its occurrences, the row's
        // place in its staged file), then joined back to the wide rows by
        // that place: a window over the wide rows (text and native inline)
        // runs out of memory at the default limit on a home of moderate
        // size (BENCHMARKS.md "The ledger").
        let order_cols = occurrence
            .split(',')
            .filter_map(|c| c.split_whitespace().next())
            .collect::<Vec<_>>()
            .join(", ");
        let scan = format!(
            "read_parquet({}, filename = true, file_row_number = true)",
            sql_list(files)
        );
        let (legacy_key, legacy_content) = if legacy {
            (
                format!(
                    "md5(legacy || '#' || row_number() OVER (PARTITION BY legacy ORDER BY {occurrence}))"
                ),
                format!(", md5(to_json({{{legacy_identity}}})) AS legacy"),
            )
        } else {
            ("CAST(NULL AS VARCHAR)".to_string(), String::new())
        };
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE cur_keys AS
             SELECT filename AS k_file, file_row_number AS k_row,
                    md5(content || '#' || row_number() OVER (PARTITION BY content ORDER BY {occurrence})) AS row_key,
                    {legacy_key} AS legacy_key
             FROM (SELECT filename, file_row_number, {order_cols},
                          md5(to_json({{{identity}}})) AS content{legacy_content} FROM {scan});
             CREATE OR REPLACE TEMP TABLE cur AS
             SELECT {all_s}, k.row_key, k.legacy_key, coalesce(f.store_path, s.source_path) AS store_path
             FROM {scan} s
             JOIN cur_keys k ON k.k_file = s.filename AND k.k_row = s.file_row_number
             LEFT JOIN {store_of} f ON f.instance = s.instance AND f.file_path = s.source_path;
             DROP TABLE cur_keys;",
            all_s = column_list(schema, "s."),
        ))?;
    }
    Ok(())
}

/// Merge one table's staged rows into its ledger table (inside the sync's
/// transaction): identity, then rows of the earlier format found again,
/// rows gone, rows seen again (their place and rendering taken), new rows.
pub(super) fn merge_table(
    conn: &Connection,
    t: &Table,
    files: &[PathBuf],
    sync: i64,
) -> Result<Merged, duckdb::Error> {
    let ledger = t.name;
    let schema = &t.schema;
    let cols = kept(schema);
    let has = |c: &str| cols.iter().any(|(n, _)| n == c);
    let place: Vec<&str> = PLACE.iter().copied().filter(|c| has(c)).collect();
    let rendered: Vec<&str> = RENDERED.iter().copied().filter(|c| has(c)).collect();
    let legacy = t.legacy && has(CONTENT);
    let load = sync;
    let rows_before = count_rows(conn, ledger)?;
    stage_cur(conn, t, files, legacy)?;
    let count = |sql: &str| -> Result<u64, duckdb::Error> {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
    };
    let staged = count("SELECT count(*) FROM cur")? > 0;
    // a row of the earlier format staged again takes its identity (and its
    // content as read); one whose new identity the ledger holds already
    // (seen again under it by an earlier sync of this format) is left, and
    // is gone as any row not seen
    if legacy && staged {
        conn.execute_batch(&format!(
            "CREATE OR REPLACE TEMP TABLE rekeyed AS
             SELECT c.row_key, c.legacy_key, c.{CONTENT} FROM cur c ANTI JOIN {ledger} l ON l.row_key = c.row_key;
             UPDATE {ledger} l SET row_key = r.row_key, {CONTENT} = r.{CONTENT}
             FROM rekeyed r WHERE l.{CONTENT} IS NULL AND l.row_key = r.legacy_key;
             DROP TABLE rekeyed;"
        ))?;
    }
    // a present row of a store this sync settles (`settled`, made by
    // [`merged`]) that it did not see is gone: `gone` is the number of rows
    // this marks. (Keys as tuples, not concatenated strings, no count
    // beside the update, and no statement over an empty `cur`: each is a
    // fixed cost of every sync, unchanged or grown; BENCHMARKS.md "The
    // ledger".)
    let gone = conn.execute(
        &format!(
            "UPDATE {ledger} SET present = false, gone_load = {load}
             WHERE present AND (instance, store_path) IN (SELECT instance, source_path FROM settled)
               AND row_key NOT IN (SELECT row_key FROM cur){spared}",
            spared = t.spared
        ),
        [],
    )? as u64;
    // the rows seen again, and the new ones (nothing to do when this sync
    // staged none: every store unchanged)
    let mut changed = 0;
    if staged {
        let differ = |cs: &[&str]| {
            joined(cs, " OR ", |c| {
                format!("l.\"{c}\" IS DISTINCT FROM c.\"{c}\"")
            })
        };
        let changed_place = if place.is_empty() {
            "false".to_string()
        } else {
            differ(&place)
        };
        let rendered_again = if rendered.is_empty() {
            "false".to_string()
        } else {
            differ(&rendered)
        };
        changed = count(&format!(
            "SELECT count(*) FROM {ledger} l JOIN cur c USING (row_key)
             WHERE NOT l.present OR {changed_place} OR {rendered_again}"
        ))?;
        let set = |cs: &[&str]| -> String {
            cs.iter()
                .map(|c| format!(", \"{c}\" = c.\"{c}\""))
                .collect()
        };
        // a row rendered otherwise now (more redacted) keeps only the new
        // rendering: the earlier one is not kept beside it
        let render = if rendered.is_empty() {
            String::new()
        } else {
            format!(
                "UPDATE {ledger} l SET {cols} FROM cur c
                 WHERE l.row_key = c.row_key AND ({rendered_again});",
                cols = set(&rendered).trim_start_matches(", ")
            )
        };
        conn.execute_batch(&format!(
            "UPDATE {ledger} l SET present = true, last_seen_load = {load}, gone_load = NULL{set_place}
             FROM cur c WHERE l.row_key = c.row_key;
             {render}
             INSERT INTO {ledger} BY NAME
             SELECT {all_c}, c.row_key, {load} AS first_seen_load, {load} AS last_seen_load,
                    true AS present, c.store_path
             FROM cur c ANTI JOIN {ledger} l ON l.row_key = c.row_key;",
            set_place = set(&place),
            all_c = column_list(schema, "c."),
        ))?;
    }
    // the present rows of the stores not read (their files unchanged) are
    // seen again
    conn.execute(
        &format!(
            "UPDATE {ledger} SET last_seen_load = {load}
             WHERE present AND (instance, store_path) IN (SELECT instance, source_path FROM unchanged_stores)"
        ),
        [],
    )?;
    let rows = count_rows(conn, ledger)?;
    let added = rows - rows_before;
    let present = count(&format!("SELECT count(*) FROM {ledger} WHERE present"))?;
    Ok(Merged {
        added,
        changed,
        gone,
        rows,
        present,
    })
}

/// Whether the ledger still holds rows keyed as format 2 did
/// (`ledger_meta` `legacy_row_keys`, set by [`upgrade`], removed when the
/// last of them has its new identity).
pub(super) fn legacy_keys(conn: &Connection) -> Result<bool, duckdb::Error> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM ledger_meta WHERE key = 'legacy_row_keys'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

pub(super) fn count_rows(conn: &Connection, table: &str) -> Result<u64, duckdb::Error> {
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .map(|n| n as u64)
}

/// Every store ever seen: this sync's `sources` rows replace their earlier
/// ones; a store not found now stays, not present — unless it was below a
/// place this sync could not see (`seen`: the test of a path that was),
/// where it stays as it was.
pub(super) fn merge_sources(conn: &Connection, sync: i64, seen: &str) -> Result<(), duckdb::Error> {
    let load = sync;
    // a store's identity as a tuple (as `merge_table` matches a row's store)
    let key = "(instance, source_path, source_kind)";
    let key_cols = "instance, source_path, source_kind";
    let cols = column_list(&sources_schema(), "");
    let of_c = column_list(&sources_schema(), "c.");
    // a store read now keeps its key only when it was read to its end (a
    // partial one is read again next time)
    conn.execute_batch(&format!(
        "CREATE OR REPLACE TEMP TABLE kept_sources AS
         SELECT {of_c}, coalesce(l.first_seen_load, {load}) AS first_seen_load,
             CASE WHEN c.status IN ('ok', 'skipped') THEN k.state_key END AS state_key
         FROM cur_sources c
         LEFT JOIN ledger_sources l
           ON l.source_kind = c.source_kind AND l.instance = c.instance AND l.source_path = c.source_path
         LEFT JOIN store_keys k
           ON k.source_kind = c.source_kind AND k.instance = c.instance AND k.source_path = c.source_path;
         UPDATE ledger_sources SET last_seen_load = {load}
         WHERE {key} IN (SELECT {key_cols} FROM unchanged_stores);
         UPDATE ledger_sources SET present = false, gone_load = {load}
         WHERE present
           AND {key} NOT IN (SELECT {key_cols} FROM cur_sources)
           AND {key} NOT IN (SELECT {key_cols} FROM unchanged_stores)
           AND {seen};
         DELETE FROM ledger_sources WHERE {key} IN (SELECT {key_cols} FROM cur_sources);
         INSERT INTO ledger_sources BY NAME
         SELECT {cols}, first_seen_load, {load} AS last_seen_load, true AS present, state_key
         FROM kept_sources;
         DROP TABLE kept_sources;"
    ))
}
