//! `nanoload sync`: lock, extract HOME as a load does (every row wide), and
//! merge the staged rows into the ledger in one transaction ([`super::merge`]);
//! what could not be read keeps its rows as they were.

use super::*;

/// Sync HOME into the ledger (`opts.out` is the ledger: the checks of an
/// output hold for it — absolute, outside HOME).
/// A ledger belongs to the HOME of its first sync (`ledger_meta` key
/// `home`): a sync of another is refused ([`SyncError::OtherHome`]) unless
/// `add_home`, which adds it.
pub fn sync(opts: &Options, add_home: bool) -> Result<SyncSummary, SyncError> {
    let started = SystemTime::now();
    let config = Config::new(opts)?;
    let Some(ledger) = config.outputs.out.clone() else {
        return Err(ConfigError::Usage("sync needs LEDGER.duckdb".into()).into());
    };
    // a file that is not a DuckDB database is never taken for a ledger
    // (checked again under the lock; no lock file is left beside it)
    not_a_ledger_file(&ledger)?;
    let lock_existed = lock_path(&ledger).exists();
    let lock_file = lock(&ledger)?;
    let new = !ledger.exists();
    let result = not_a_ledger_file(&ledger)
        .and_then(|()| sync_locked(opts, config, &ledger, started, add_home));
    if result.is_err() && new {
        // a first sync that failed leaves no ledger behind (an existing
        // one is as it was: the merge is one transaction)
        let _ = std::fs::remove_file(&ledger);
        let _ = std::fs::remove_file(crate::engine::wal_of(&ledger));
    }
    // nothing is left beside a file that is not ours, nor where a first
    // sync failed; the lock is only ever tried, never waited for, so no
    // other sync holds the removed name
    let refused = matches!(result, Err(SyncError::NotALedger { .. }));
    if !lock_existed && (refused || (result.is_err() && new)) {
        drop(lock_file);
        let _ = std::fs::remove_file(lock_path(&ledger));
    }
    result
}

/// Refuse a file at LEDGER that is not a DuckDB database (by its magic
/// bytes: a Parquet OUT, a text, a SQLite database).
pub(super) fn not_a_ledger_file(ledger: &Path) -> Result<(), SyncError> {
    match crate::dest::not_duckdb(ledger) {
        Ok(None) => Ok(()),
        Ok(Some(what)) => Err(SyncError::NotALedger {
            path: ledger.to_path_buf(),
            what,
        }),
        Err(e) => Err(SyncError::Ledger {
            path: ledger.to_path_buf(),
            message: format!("cannot read it: {e}"),
        }),
    }
}

/// [`sync`] under the ledger's lock.
pub(super) fn sync_locked(
    opts: &Options,
    mut config: Config,
    ledger: &Path,
    started: SystemTime,
    add_home: bool,
) -> Result<SyncSummary, SyncError> {
    let fail = failing(ledger);
    let mut front = Front::create(&config.home)?;
    let opened = open_ledger(&config, ledger, &front)?;
    let conn = &opened.conn;
    let has_rows = !matches!(opened.state, State::Absent);
    // another HOME's stores have the same relative paths (every home has
    // a `.nanobot`): its sync would mark this HOME's rows gone
    if has_rows && !add_home {
        let homes = homes(conn).map_err(fail)?;
        let home = config.home.to_string_lossy();
        if !homes.is_empty() && !homes.iter().any(|h| *h == home) {
            return Err(SyncError::OtherHome {
                path: ledger.to_path_buf(),
                homes,
                home: config.home.clone(),
            });
        }
    }
    let shown = opts.progress_shown();
    let (home, follow) = (&config.home, config.follow_links);
    let mut discovery = front.discover(home, &opts.home, follow, shown, &mut Default::default())?;
    // what could not be seen keeps its rows: said once per place, on the
    // line of its diagnostic
    let not_seen = unseen(conn, has_rows, &config.home, &mut discovery).map_err(fail)?;
    let load_id = discovery.load_id(&config.load_options);
    let split = split_stores(discovery, &config, &opened.known, &not_seen);
    // the ledger keeps every row's text and native itself, the keys every
    // earlier build staged, and each row's content as read (its identity)
    config.extract.stage_all_wide = true;
    config.extract.keys = crate::store::KeyDigest::Sha256;
    config.extract.content_digests = true;
    let (to_read, threads) = (&split.to_read, config.threads);
    let extraction = front.extract(to_read, &config.home, &config.extract, threads, None)?;
    let stores = Stores {
        unchanged: &split.unchanged,
        keys: &split.keys,
        files: &split.files,
        unseen: &not_seen.places,
    };
    // one transaction; one that runs out of memory is rolled back and
    // runs again at twice the limit, then at four times it, as a load's
    // steps do (a home of long texts stages rows DuckDB holds whole)
    let merge = || -> Result<(i64, Merged, Merged), Failed> {
        conn.execute_batch("BEGIN TRANSACTION;")?;
        if matches!(opened.state, State::Earlier) {
            upgrade(conn)?;
        }
        if let Some(refused) = prepare(conn)? {
            return Err(Failed::Sync(SyncError::Ledger {
                path: ledger.to_path_buf(),
                message: refused,
            }));
        }
        let staged = &extraction.staged;
        Ok(merged(conn, staged, &stores, &load_id, &config, started)?)
    };
    let (sync, events, llm_calls) =
        merge_with_retries(conn, ledger, &front, config.memory_limit, merge)?;
    conn.execute_batch("CHECKPOINT;").map_err(fail)?;
    // what HOME holds that could not be read: this sync's and the unchanged
    // stores' (a load would read and report them again)
    let all = crate::engine::read_diagnostics(conn, "ledger_diagnostics").map_err(fail)?;
    let exit = ExitCode::of(&all);
    let diagnostics = all
        .iter()
        .map(|d| (d.kind.is_read_failure(), format!("nanoload: {d}")))
        .collect();
    Ok(SyncSummary {
        sync,
        load_id,
        events,
        llm_calls,
        exit,
        diagnostics,
        stores_read: split.to_read.stores.len(),
        stores_unchanged: split.unchanged.len(),
        stores_held: split.held,
    })
}

/// A DuckDB error of the ledger at `ledger`, on one line.
fn failing(ledger: &Path) -> impl Fn(duckdb::Error) -> SyncError + Copy + '_ {
    move |e| SyncError::Ledger {
        path: ledger.to_path_buf(),
        message: crate::diag::one_line(&e.to_string()),
    }
}

/// Run `merge` (one transaction) at the memory limits a load's steps get
/// ([`crate::pipeline::memory_limits`]): one that runs out of memory is
/// rolled back, said in one warning, and runs again at twice the limit,
/// then at four times it; after that, one error.
fn merge_with_retries<T>(
    conn: &Connection,
    ledger: &Path,
    front: &Front,
    first: u64,
    mut merge: impl FnMut() -> Result<T, Failed>,
) -> Result<T, SyncError> {
    let fail = failing(ledger);
    let limits = crate::pipeline::memory_limits(first);
    // DuckDB's class of an error (its JSON) tells running out of memory
    conn.execute_batch("SET errors_as_json = true;")
        .map_err(fail)?;
    for (i, &limit) in limits.iter().enumerate() {
        conn.execute_batch(&format!(
            "SET memory_limit = '{}MiB';",
            limit.div_ceil(1 << 20)
        ))
        .map_err(fail)?;
        let failed = match merge() {
            Ok(done) => {
                conn.execute_batch("SET errors_as_json = false;")
                    .map_err(fail)?;
                return Ok(done);
            }
            Err(f) => f,
        };
        let _ = conn.execute_batch("ROLLBACK;");
        let e = match failed {
            Failed::Sync(e) => return Err(e),
            Failed::Db(e) => e,
        };
        let (out_of_memory, sentence) = crate::engine::sentence(&e);
        match limits.get(i + 1) {
            Some(&next) if out_of_memory => front.progress().warn(&format!(
                "nanoload: warning: merging into the ledger: {sentence}; the merge runs again with a memory limit of {} (was {})",
                crate::progress::human_bytes(next),
                crate::progress::human_bytes(limit)
            )),
            None if out_of_memory => {
                return Err(SyncError::Ledger {
                    path: ledger.to_path_buf(),
                    message: format!(
                        "merging into the ledger: {sentence} (the merge ran out of memory at {}, four times the limit; give a larger --memory-limit)",
                        crate::progress::human_bytes(limit)
                    ),
                });
            }
            _ => {
                return Err(SyncError::Ledger {
                    path: ledger.to_path_buf(),
                    message: sentence,
                });
            }
        }
    }
    Err(SyncError::Ledger {
        path: ledger.to_path_buf(),
        message: "internal: no memory limit left to try".into(),
    })
}

/// How a sync's merge failed: DuckDB (perhaps out of memory, which a higher
/// limit can cure) or the ledger's own refusal.
enum Failed {
    Db(duckdb::Error),
    Sync(SyncError),
}

impl From<duckdb::Error> for Failed {
    fn from(e: duckdb::Error) -> Failed {
        Failed::Db(e)
    }
}

/// The ledger attached to a sync's connection, as it was found.
struct Opened {
    conn: Connection,
    state: State,
    /// The key of each store as the ledger last read it.
    known: std::collections::HashMap<StoreId, String>,
}

/// Attach `ledger` (a new one in storage version v1.2.0, the first whose
/// strings zstd compresses — docs/design.md "The ledger": its size; an
/// existing one keeps the version it has) to an in-memory DuckDB spilling
/// into the run dir; a ledger of another format, and a database that holds
/// anything but a ledger, are refused before anything is read.
fn open_ledger(config: &Config, ledger: &Path, front: &Front) -> Result<Opened, SyncError> {
    let fail = failing(ledger);
    let existed = ledger.exists();
    let version = if existed {
        ""
    } else {
        " (STORAGE_VERSION 'v1.2.0')"
    };
    let conn = crate::engine::open_in_memory(&crate::engine::Settings {
        memory_limit: config.memory_limit,
        spill: Some(&front.run_dir().spill_dir()),
        threads: Some(config.threads),
    })
    .map_err(fail)?;
    conn.execute_batch(&format!(
        "ATTACH {} AS ledger{version}; USE ledger;",
        sql_str(ledger)
    ))
    .map_err(|e| {
        if existed {
            unopened(ledger, &e, true)
        } else {
            fail(e)
        }
    })?;
    compress_strings(&conn).map_err(fail)?;
    let state = state(&conn).map_err(fail)?;
    let known = match &state {
        State::Other(refused) => {
            return Err(SyncError::Ledger {
                path: ledger.to_path_buf(),
                message: refused.clone(),
            });
        }
        // a database that holds anything is someone else's: never given
        // the ledger's tables
        State::Absent if existed => match user_tables(&conn).map_err(fail)? {
            tables if tables.is_empty() => Default::default(),
            tables => {
                return Err(SyncError::NotALedger {
                    path: ledger.to_path_buf(),
                    what: crate::dest::What::DuckDb { tables: Ok(tables) },
                });
            }
        },
        State::Absent => Default::default(),
        State::Ours | State::Earlier => known_stores(&conn).map_err(fail)?,
    };
    Ok(Opened { conn, state, known })
}

/// Discovery's stores, told apart for a sync.
struct Split {
    /// The stores to read: their files changed since the ledger read them
    /// (or it never did), with discovery's diagnostics and places.
    to_read: crate::discover::Discovery,
    /// The stores whose files are as the ledger last read them: not read.
    unchanged: Vec<StoreId>,
    /// The key of every store not held back.
    keys: Vec<(StoreId, String)>,
    /// (instance, store path, file path) of every file of every store.
    files: Vec<(String, String, String)>,
    /// How many stores are held back: they read a file in a place not seen.
    held: usize,
}

/// Tell `discovery`'s stores apart: a store whose files are as the ledger
/// last read them (`known`: the key of `--cache`, every byte hashed) is
/// not read again; one that reads a file in a place not seen is not read,
/// its rows staying as they were.
fn split_stores(
    discovery: crate::discover::Discovery,
    config: &Config,
    known: &std::collections::HashMap<StoreId, String>,
    not_seen: &NotSeen,
) -> Split {
    use rayon::prelude::*;
    let options = crate::cache::options_key(&config.extract, config.follow_links);
    let keys: Vec<String> = discovery
        .stores
        .par_iter()
        .map(|s| crate::cache::store_key(&options, s, &config.home))
        .collect();
    let crate::discover::Discovery {
        stores,
        diagnostics,
        links_skipped,
        files_seen,
        unseen,
    } = discovery;
    let (mut unchanged, mut read, mut store_keys) = (Vec::new(), Vec::new(), Vec::new());
    let (mut files, mut held) = (Vec::new(), 0);
    for (k, (store, key)) in stores.into_iter().zip(keys).enumerate() {
        let id = (
            store.kind.to_string(),
            store.instance.clone(),
            store.rel.clone(),
        );
        for f in std::iter::once(store.rel.clone())
            .chain(store.parts.iter().map(|p| p.rel.clone()))
            .chain(store.sidecars.iter().map(|p| p.rel.clone()))
        {
            files.push((store.instance.clone(), store.rel.clone(), f));
        }
        if not_seen.held.contains(&k) {
            held += 1;
            continue;
        }
        let same = known.get(&id) == Some(&key);
        store_keys.push((id.clone(), key));
        if same {
            unchanged.push(id);
        } else {
            read.push(store);
        }
    }
    Split {
        to_read: crate::discover::Discovery {
            stores: read,
            diagnostics,
            links_skipped,
            files_seen,
            unseen,
        },
        unchanged,
        keys: store_keys,
        files,
        held,
    }
}

/// The HOMEs a ledger keeps: those `ledger_meta` records (key `home`), or,
/// in a ledger of a build that did not record them, those its syncs read
/// (`loads.home`).
pub(super) fn homes(conn: &Connection) -> Result<Vec<String>, duckdb::Error> {
    let mut s = conn.prepare(
        "SELECT DISTINCT value FROM ledger_meta WHERE key = 'home'
         UNION SELECT DISTINCT home FROM loads
         WHERE home IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ledger_meta WHERE key = 'home')
         ORDER BY 1",
    )?;
    let homes = s.query_map([], |r| r.get::<_, String>(0))?;
    homes.collect()
}

/// A store's identity in the ledger: kind, instance, path.
type StoreId = (String, String, String);

/// What a sync could not see (docs/design.md "Ledger", the gone rule).
#[derive(Debug, Default)]
pub(super) struct NotSeen {
    /// Paths relative to HOME ("" is HOME itself) below which no row and
    /// no store is marked gone: the places discovery could not see into,
    /// an empty directory where an instance the ledger holds was, and the
    /// files of the stores held back.
    places: Vec<String>,
    /// The stores (indices into discovery's) not read this sync: a file
    /// they read besides their own (`store::Reads::Also`: a namespace's
    /// `.workspace`) is in such a place, and their rows would lose what it
    /// tells them.
    held: std::collections::BTreeSet<usize>,
}

/// The places this sync cannot see, with what the ledger holds there: each
/// is said on one line — its discovery diagnostic (a warning becomes
/// `unreadable`), or a new `unreadable`/`skipped_link` one — ending with
/// what the ledger keeps of it, and makes the exit code 1. `has_rows`: the
/// ledger has its tables (not a new one).
pub(super) fn unseen(
    conn: &Connection,
    has_rows: bool,
    home: &Path,
    d: &mut crate::discover::Discovery,
) -> Result<NotSeen, duckdb::Error> {
    use crate::diag::{DiagKind, Diagnostic};
    use crate::discover::Unseen;
    let mut places: Vec<(Unseen, DiagKind)> = d
        .unseen
        .iter()
        .map(|u| {
            let kind = if u.link {
                DiagKind::SkippedLink
            } else {
                DiagKind::Unreadable
            };
            (u.clone(), kind)
        })
        .collect();
    // the stores the ledger holds as present, by path
    let present: Vec<(String, String)> = if has_rows {
        let mut stmt = conn.prepare(
            "SELECT instance, source_path FROM ledger_sources WHERE present ORDER BY ALL",
        )?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?
    } else {
        Vec::new()
    };
    let found: std::collections::BTreeSet<&str> =
        d.stores.iter().map(|s| s.instance.as_str()).collect();
    let empty = unmounted(home, &present, &found, &places);
    places.extend(empty.into_iter().map(|u| (u, DiagKind::Unreadable)));
    // the files stores read besides their own (`Reads::Also`); one that is
    // there but cannot be opened is a place not seen too (a load reads it
    // as absent: the rows would lose what it tells them)
    let reads: Vec<(usize, Vec<String>)> = d
        .stores
        .iter()
        .enumerate()
        .filter_map(|(k, s)| match crate::sources::REGISTRY[s.extractor].reads {
            crate::store::Reads::Also(files) => Some((k, files(&s.rel, home))),
            _ => None,
        })
        .collect();
    let mut checked = std::collections::BTreeSet::new();
    for f in reads.iter().flat_map(|(_, files)| files) {
        if !checked.insert(f.as_str()) || places.iter().any(|(p, _)| p.holds(f)) {
            continue;
        }
        let path = home.join(f);
        if path.is_file()
            && let Err(e) = std::fs::File::open(&path)
        {
            places.push((
                Unseen {
                    rel: f.clone(),
                    why: e.to_string(),
                    link: false,
                },
                DiagKind::Unreadable,
            ));
        }
    }
    if places.is_empty() {
        return Ok(NotSeen::default());
    }
    // the stores that read a file in such a place
    let mut out = NotSeen::default();
    let mut held_in = vec![0usize; places.len()];
    for (k, files) in &reads {
        let (k, s) = (*k, &d.stores[*k]);
        if let Some(p) = files
            .iter()
            .find_map(|f| places.iter().position(|(p, _)| p.holds(f)))
        {
            out.held.insert(k);
            held_in[p] += 1;
            out.places.extend(s.files().map(|(f, _, _)| f.to_string()));
        }
    }
    for ((place, kind), held) in places.iter().zip(held_in) {
        out.places.push(place.rel.clone());
        let Some(said) = kept_there(conn, place, &present, held)? else {
            continue;
        };
        // HOME is named `.` on a line
        let path = if place.rel.is_empty() {
            "."
        } else {
            &place.rel
        };
        match d
            .diagnostics
            .iter_mut()
            .find(|x| x.source_path == path && x.source_line.is_none())
        {
            Some(x) => {
                if !x.kind.is_read_failure() {
                    x.kind = *kind;
                }
                x.message = format!("{}; {said}", x.message);
            }
            None => d.diagnostics.push(Diagnostic::new(
                *kind,
                path,
                format!("{}; {said}", place.why),
            )),
        }
    }
    d.diagnostics.sort();
    Ok(out)
}

/// An instance the ledger holds of which nothing is found, whose root —
/// or a directory above it, or a nanoclaw install's `data/` — is an empty
/// directory: a disk not mounted there, not an agent that deleted its
/// history (which leaves its instance's own files; an instance removed
/// whole leaves no directory, and its rows are gone). `present`: the
/// stores the ledger holds as present, (instance, path); `found`: the
/// instances discovery found; `places`: those already not seen.
fn unmounted(
    home: &Path,
    present: &[(String, String)],
    found: &std::collections::BTreeSet<&str>,
    places: &[(crate::discover::Unseen, crate::diag::DiagKind)],
) -> Vec<crate::discover::Unseen> {
    let mut instances: Vec<&str> = present.iter().map(|(i, _)| i.as_str()).collect();
    instances.dedup();
    let mut empty: Vec<crate::discover::Unseen> = Vec::new();
    for i in instances {
        let seen_as_unseen =
            places.iter().any(|(p, _)| p.holds(i)) || empty.iter().any(|u| u.holds(i));
        if found.contains(i) || seen_as_unseen {
            continue;
        }
        let mut dirs: Vec<String> = Vec::new();
        if i != "." {
            let parts: Vec<&str> = i.split('/').collect();
            dirs.extend((1..=parts.len()).map(|k| parts[..k].join("/")));
        }
        let data = if i == "." {
            "data".to_string()
        } else {
            format!("{i}/data")
        };
        if present
            .iter()
            .any(|(_, p)| p.starts_with(&format!("{data}/")))
        {
            dirs.push(data);
        }
        for dir in dirs {
            let Ok(mut entries) = std::fs::read_dir(home.join(&dir)) else {
                break;
            };
            if entries.next().is_none() {
                empty.push(crate::discover::Unseen {
                    rel: dir,
                    why: "an empty directory where the ledger's stores were (a disk not mounted?)"
                        .into(),
                    link: false,
                });
                break;
            }
        }
    }
    empty
}

/// What the ledger keeps at a place not seen, as the end of its line: its
/// rows and usage records there (counted only where it holds a store),
/// and the `held` stores not read because they read a file there; `None`
/// when it keeps nothing there.
fn kept_there(
    conn: &Connection,
    place: &crate::discover::Unseen,
    present: &[(String, String)],
    held: usize,
) -> Result<Option<String>, duckdb::Error> {
    let (mut rows, mut calls) = (0u64, 0u64);
    if present.iter().any(|(_, p)| place.holds(p)) {
        let count = |table: &str| -> Result<u64, duckdb::Error> {
            conn.query_row(
                &format!(
                    "SELECT count(*) FROM {table} WHERE present
                       AND ($1 = '' OR source_path = $1 OR starts_with(source_path, $1 || '/')
                            OR store_path = $1 OR starts_with(store_path, $1 || '/'))"
                ),
                [&place.rel],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as u64)
        };
        rows = count("ledger_events")?;
        calls = count("ledger_llm_calls")?;
    }
    if rows + calls == 0 && held == 0 {
        return Ok(None);
    }
    let mut said = Vec::new();
    if rows + calls > 0 {
        let what = match (rows, calls) {
            (r, 0) => format!("{r} rows"),
            (0, c) => format!("{c} usage records"),
            (r, c) => format!("{r} rows and {c} usage records"),
        };
        said.push(format!(
            "the ledger keeps its {what} there as they were, none marked gone"
        ));
    }
    if held > 0 {
        said.push(format!(
            "{held} stores that read a file there are not read this time (their rows stay as they were)"
        ));
    }
    Ok(Some(said.join("; ")))
}

/// What a sync knows of the stores besides their staged rows.
pub(super) struct Stores<'a> {
    /// The stores whose files are as the ledger last read them: not read.
    pub(super) unchanged: &'a [StoreId],
    /// The key of every store that has one ([`crate::cache::store_key`]).
    pub(super) keys: &'a [(StoreId, String)],
    /// (instance, store path, file path) of every file of every store: the
    /// store a row of that file belongs to.
    pub(super) files: &'a [(String, String, String)],
    /// Paths (relative to HOME, "" HOME itself) this sync could not see:
    /// no row or store at or below one is marked gone ([`NotSeen`]).
    pub(super) unseen: &'a [String],
}

/// The stores the ledger last read to their end, with their keys.
pub(super) fn known_stores(
    conn: &Connection,
) -> Result<std::collections::HashMap<StoreId, String>, duckdb::Error> {
    let mut stmt = conn.prepare(
        "SELECT source_kind, instance, source_path, state_key FROM ledger_sources
         WHERE present AND state_key IS NOT NULL",
    )?;
    let rows = stmt.query_map([], |r| Ok(((r.get(0)?, r.get(1)?, r.get(2)?), r.get(3)?)))?;
    rows.collect()
}
