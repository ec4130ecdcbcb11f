//! A HOME as the SOURCE of `usage`, `report`, `sql`, `mcp` and `otlp`:
//! answered from a ledger nanoload keeps for that HOME in the user's cache
//! directory. Every call syncs it (`ledger::sync`: its redaction, its lock,
//! a store whose files did not change is not read again) and answers from
//! its export (`ledger::export`, every row ever seen), which is reused while
//! what the ledger holds has not changed. `--no-keep`, and a cache that
//! cannot be written, answer from a private temp load instead.
//! docs/design.md "The kept ledger".
//!
//! ```text
//! $XDG_CACHE_HOME/nanoload/        (else $HOME/.cache/nanoload, macOS ~/Library/Caches/nanoload)
//!                                  mode 0700, created when missing
//!   home-<id>.json                 the HOME it keeps (canonical path), its last sync (UTC)
//!   home-<id>.lock                 held by the call that syncs and exports (one at a time)
//!   home-<id>.duckdb               the ledger (+ .duckdb.lock, .duckdb.wal: the sync's)
//!   home-<id>.out-<key>/           its export: out.parquet, tables/, `complete` written last
//!                                  (locked shared while read: not removed under a reader)
//!   home-<id>.out-<key>.failed     its export failed (out of memory): not tried again for
//!                                  that key, the call answers from a temp load
//! <id>:  16 hex of SHA-256 over the canonical HOME path
//! <key>: 16 hex of SHA-256 over this build, what the ledger holds (the last
//!        sync that added, changed or marked gone a row; its stores; its
//!        diagnostics) and the price table the export prices with
//! ```
//! `cache list` reads the `home-<id>.json` records; `cache clear` removes
//! only names of this pattern and names anything else it finds.

use std::fs::File;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::config::{ConfigError, Options};
use crate::ledger::SyncError;
use crate::pipeline::FrontError;
use crate::summary::ExitCode;

/// What every name nanoload writes in the cache directory starts with.
const PREFIX: &str = "home-";

/// The export's memory limit (as `otlp`'s export of a ledger).
const EXPORT_MEMORY: u64 = 256 << 20;

/// The export's memory limit: [`EXPORT_MEMORY`], or a test's
/// `NANOLOAD_TEST_EXPORT_MEMORY=<bytes>` (an export that runs out of memory
/// while the temp load that answers instead does not).
fn export_memory() -> u64 {
    std::env::var("NANOLOAD_TEST_EXPORT_MEMORY")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(EXPORT_MEMORY)
}

/// Why a HOME gave no outputs to read.
#[derive(Debug, thiserror::Error)]
pub enum KeepError {
    /// A directory with no agent state and no tables.
    #[error(
        "{}: neither a HOME nor a tables directory: no agent state under it (a .nanobot* directory, a nanoclaw root with data/v2.db) and no <table>.parquet file in it",
        path.display()
    )]
    Neither { path: PathBuf },
    /// `--tables` given with a HOME.
    #[error("{}: is a HOME; --tables goes with OUT.parquet", path.display())]
    TablesWithHome { path: PathBuf },
    #[error("{}: {source}", path.display())]
    Home {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Bad options (a `--prices` file that does not parse, …).
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Reading HOME failed as a load or a sync fails.
    #[error(transparent)]
    Sync(#[from] SyncError),
    #[error(transparent)]
    Load(#[from] crate::run::RunError),
    /// `cache clear`: the cache directory cannot be read.
    #[error("{}: {source}", path.display())]
    Cache {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl KeepError {
    pub fn exit_code(&self) -> ExitCode {
        match self {
            KeepError::Sync(e) => e.exit_code(),
            KeepError::Load(e) => e.exit_code(),
            _ => ExitCode::Failed,
        }
    }
}

/// A HOME's outputs, ready to be read as any load's OUT and `--tables`.
#[derive(Debug)]
pub struct Served {
    pub out: PathBuf,
    pub tables: PathBuf,
    /// For stderr: what reading HOME could not read (as a load says it),
    /// and the note of a cache that could not be kept.
    pub lines: Vec<String>,
    /// As a load's: 1 when some input could not be read.
    pub exit: ExitCode,
    /// The ledger it was answered from (None: a temp load).
    pub ledger: Option<PathBuf>,
    /// A temp load's directory, removed when this is dropped.
    _temp: Option<tempfile::TempDir>,
    /// The export's `complete`, locked shared while this is read: a later
    /// call of another state of the ledger does not remove it meanwhile.
    _reading: Option<File>,
}

/// Whether `dir` is a tables directory (a load's `--tables DIR`): it holds
/// `<table>.parquet` files and no agent's state at its top (a `.nanobot*`
/// entry, `data/v2.db`, or a directory holding `data/v2.db`).
pub fn is_tables_dir(dir: &Path) -> bool {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut parquet = false;
    for e in rd.filter_map(Result::ok) {
        let name = e.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(".nanobot") || e.path().join("data/v2.db").exists() {
            return false;
        }
        parquet |= name.ends_with(".parquet") && e.path().is_file();
    }
    parquet && !dir.join("data/v2.db").exists()
}

/// Whether SOURCE is a HOME: a directory that is not a tables directory.
pub fn is_home(source: &Path) -> bool {
    source.is_dir() && !is_tables_dir(source)
}

/// SOURCE served when it is a HOME ([`serve`]); None when it is not (an
/// OUT, a tables directory, a database: read as they are).
pub fn serve_if_home(
    source: &Path,
    tables: Option<&Path>,
    keep: bool,
) -> Result<Option<Served>, KeepError> {
    if !is_home(source) {
        return Ok(None);
    }
    if tables.is_some() {
        return Err(KeepError::TablesWithHome {
            path: source.to_path_buf(),
        });
    }
    serve(source, keep).map(Some)
}

/// HOME's outputs: from its kept ledger (synced now), or with `keep` false,
/// or when the cache cannot be used (one note line says why), from a
/// private temp load.
pub fn serve(home: &Path, keep: bool) -> Result<Served, KeepError> {
    // named as the user gave it
    serve_canonical(home, keep).map_err(|e| match e {
        KeepError::Neither { .. } => KeepError::Neither {
            path: home.to_path_buf(),
        },
        e => e,
    })
}

fn serve_canonical(home: &Path, keep: bool) -> Result<Served, KeepError> {
    let canon = home.canonicalize().map_err(|source| KeepError::Home {
        path: home.to_path_buf(),
        source,
    })?;
    if !keep {
        return temp_load(&canon, Vec::new());
    }
    let Some(dir) = cache_dir() else {
        let note = "nanoload: note: cannot keep a ledger: no cache directory (XDG_CACHE_HOME and HOME are not set to absolute paths); a temp load of HOME answers instead (nothing is kept)";
        return temp_load(&canon, vec![note.into()]);
    };
    match kept(&canon, &dir) {
        Ok(s) => Ok(s),
        Err(Unkept::Fail(e)) => Err(e),
        Err(Unkept::Fallback(why)) => {
            let note = format!(
                "nanoload: note: cannot keep a ledger in {}: {}; a temp load of HOME answers instead (nothing is kept)",
                dir.display(),
                crate::diag::one_line(&why)
            );
            temp_load(&canon, vec![note])
        }
    }
}

/// The directory nanoload keeps its ledgers in: `$XDG_CACHE_HOME/nanoload`,
/// else the platform's cache directory's (an environment variable that is
/// not an absolute path is not used, as the XDG spec says).
pub fn cache_dir() -> Option<PathBuf> {
    let absolute = |v: std::ffi::OsString| Some(PathBuf::from(v)).filter(|p| p.is_absolute());
    if let Some(x) = std::env::var_os("XDG_CACHE_HOME").and_then(absolute) {
        return Some(x.join("nanoload"));
    }
    let home = std::env::var_os("HOME").and_then(absolute)?;
    Some(if cfg!(target_os = "macos") {
        home.join("Library/Caches/nanoload")
    } else {
        home.join(".cache/nanoload")
    })
}

/// The id of a canonical HOME path.
fn home_id(home: &Path) -> String {
    let digest = Sha256::digest(home.as_os_str().as_encoded_bytes());
    crate::store::hex(&digest)[..16].to_string()
}

/// Why the kept ledger did not answer.
enum Unkept {
    /// A failure a temp load would meet as well (bad flags, no agent state).
    Fail(KeepError),
    /// The cache cannot be used: a temp load answers (the reason, for the note).
    Fallback(String),
}

/// Create the cache directory (mode 0700) or make an existing one private.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let not_dir = |p: &Path| {
        std::io::Error::new(
            std::io::ErrorKind::NotADirectory,
            format!("{} is not a directory", p.display()),
        )
    };
    if let Some(parent) = dir.parent() {
        if parent.exists() && !parent.is_dir() {
            return Err(not_dir(parent));
        }
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    // a link or a file where the directory should be is not followed
    let m = std::fs::symlink_metadata(dir)?;
    if !m.is_dir() {
        return Err(not_dir(dir));
    }
    if m.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// [`serve`] from the kept ledger.
fn kept(home: &Path, dir: &Path) -> Result<Served, Unkept> {
    let io = |e: std::io::Error| Unkept::Fallback(e.to_string());
    // the export prices with the built-in table; a reader's pricing flags
    // price its outputs again at read, as any output's
    let prices = crate::prices::PriceTable::builtin().map_err(|e| Unkept::Fallback(e.0))?;
    private_dir(dir).map_err(io)?;
    let id = home_id(home);
    let name = |suffix: &str| dir.join(format!("{PREFIX}{id}{suffix}"));
    let ledger = name(".duckdb");
    let lock = File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(name(".lock"))
        .map_err(io)?;
    // another call of this HOME syncs and exports first; this one then
    // finds its work done
    lock.lock().map_err(io)?;
    let new = !ledger.exists();
    let forget = || {
        if new {
            for s in [".lock", ".duckdb.lock", ".json"] {
                let _ = std::fs::remove_file(name(s));
            }
        }
    };
    let mut o = Options::new(home, &ledger);
    o.quiet = true;
    o.kept = true;
    let synced = match crate::ledger::sync(&o, false) {
        Ok(s) => s,
        Err(e) => {
            forget();
            return Err(match e {
                SyncError::Front(FrontError::NoStores { .. }) => Unkept::Fail(KeepError::Neither {
                    path: home.to_path_buf(),
                }),
                SyncError::Config(_) | SyncError::Front(_) => Unkept::Fail(KeepError::Sync(e)),
                other => Unkept::Fallback(other.to_string()),
            });
        }
    };
    let (held, last_sync) = held(&ledger).map_err(|e| Unkept::Fallback(e.to_string()))?;
    let key = {
        let mut h = Sha256::new();
        for part in [crate::BUILD_ID, &held, &format!("{prices:?}")] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        crate::store::hex(&h.finalize())[..16].to_string()
    };
    let outdir = name(&format!(".out-{key}"));
    let out = outdir.join("out.parquet");
    let tables = outdir.join("tables");
    // an export that failed (it ran out of memory) is not tried again for
    // the same state of the ledger: the call answers from a temp load at once
    let failed = name(&format!(".out-{key}.failed"));
    if let Ok(why) = std::fs::read_to_string(&failed) {
        return Err(Unkept::Fallback(format!(
            "its export failed for this state of the ledger ({})",
            why.trim()
        )));
    }
    if !outdir.join("complete").is_file() {
        // an export a killed call left unfinished is made again
        if std::fs::symlink_metadata(&outdir).is_ok() {
            std::fs::remove_dir_all(&outdir).map_err(io)?;
        }
        std::fs::create_dir(&outdir).map_err(io)?;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        crate::ledger::export(&crate::ledger::ExportArgs {
            ledger: ledger.clone(),
            out: out.clone(),
            tables: Some(tables.clone()),
            snapshot: false,
            dataset: None,
            threads,
            memory_limit: export_memory(),
            prices: prices.clone(),
        })
        .map_err(|e| {
            let why = crate::diag::one_line(&e.to_string());
            let _ = std::fs::remove_dir_all(&outdir);
            let _ = std::fs::write(&failed, format!("{why}\n"));
            Unkept::Fallback(why)
        })?;
        File::create(outdir.join("complete")).map_err(io)?;
    }
    let reading = File::open(outdir.join("complete")).map_err(io)?;
    reading.lock_shared().map_err(io)?;
    // the exports of this HOME's earlier states, but those a reader (an
    // `mcp HOME` server) still reads
    let current = outdir.file_name().map(|n| n.to_os_string());
    let earlier = format!("{PREFIX}{id}.out-");
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.filter_map(Result::ok) {
            let n = e.file_name();
            if !n.to_string_lossy().starts_with(&earlier) || Some(&n) == current.as_ref() {
                continue;
            }
            let unread = File::open(e.path().join("complete")).map(|f| f.try_lock().is_ok());
            if unread.unwrap_or(true) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    write_record(&name(".json"), home, &last_sync).map_err(io)?;
    drop(lock);
    Ok(Served {
        out,
        tables,
        lines: synced.lines(&ledger, true),
        exit: synced.exit,
        ledger: Some(ledger),
        _temp: None,
        _reading: Some(reading),
    })
}

/// What the ledger holds, as the key of its export: the last sync that
/// added, changed or marked gone a row, its stores and its diagnostics
/// (without the sync numbers every sync moves on); and its last sync's
/// finish (UTC).
fn held(ledger: &Path) -> duckdb::Result<(String, String)> {
    let conn = crate::engine::reader()?;
    conn.execute_batch(&format!(
        "ATTACH {} AS kept (READ_ONLY); USE kept;",
        crate::engine::sql_str(ledger)
    ))?;
    let digest = |table: &str, moving: &str| {
        format!(
            "(SELECT md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY CAST(t AS VARCHAR)), ''))
              FROM (SELECT * EXCLUDE ({moving}) FROM {table}) t)"
        )
    };
    conn.query_row(
        &format!(
            "SELECT concat_ws(' ',
                (SELECT coalesce(max(sync), 0) FROM loads WHERE added + changed + gone > 0),
                {}, {}),
                (SELECT strftime(max(finished_at), '%Y-%m-%d %H:%M:%S') FROM loads)",
            digest("ledger_sources", "last_seen_load"),
            digest("ledger_diagnostics", "sync"),
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// `home-<id>.json`: the HOME (for `cache list`) and its last sync,
/// written to a temporary name and renamed.
fn write_record(path: &Path, home: &Path, last_sync: &str) -> std::io::Result<()> {
    let doc = serde_json::json!({
        "home": home.to_string_lossy(),
        "last_sync_utc": last_sync,
    });
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp-{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, format!("{doc}\n"))?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// A load of HOME into a private temp dir (removed with the [`Served`]),
/// quietly: its lines are what it could not read.
fn temp_load(home: &Path, notes: Vec<String>) -> Result<Served, KeepError> {
    let work = tempfile::Builder::new()
        .prefix("nanoload-home-")
        .tempdir()
        .map_err(|source| KeepError::Home {
            path: std::env::temp_dir(),
            source,
        })?;
    let out = work.path().join("out.parquet");
    let tables = work.path().join("tables");
    let mut o = Options::new(home, &out);
    o.tables = Some(tables.clone());
    o.quiet = true;
    let summary = match crate::run::run(&o) {
        Ok(s) => s,
        Err(crate::run::RunError::Front(FrontError::NoStores { .. })) => {
            return Err(KeepError::Neither {
                path: home.to_path_buf(),
            });
        }
        Err(e) => return Err(e.into()),
    };
    let mut lines = notes;
    lines.extend(summary.stderr_lines(true));
    Ok(Served {
        out,
        tables,
        lines,
        exit: summary.exit,
        ledger: None,
        _temp: Some(work),
        _reading: None,
    })
}

/// One kept HOME, as `cache list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub id: String,
    /// The HOME (None: its record is missing or not readable).
    pub home: Option<String>,
    /// The ledger's bytes (with its write-ahead log).
    pub bytes: u64,
    pub last_sync: Option<String>,
}

/// What a name in the cache directory is.
enum Entry {
    /// One of the files of a kept HOME (its id).
    Ours(String),
    Foreign,
}

fn entry(name: &std::ffi::OsStr) -> Entry {
    let Some(name) = name.to_str() else {
        return Entry::Foreign;
    };
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return Entry::Foreign;
    };
    let hex16 = |s: &str| s.len() == 16 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let (id, suffix) = rest.split_at(rest.len().min(16));
    if !hex16(id) {
        return Entry::Foreign;
    }
    let known = matches!(
        suffix,
        ".json" | ".lock" | ".duckdb" | ".duckdb.lock" | ".duckdb.wal"
    ) || suffix
        .strip_prefix(".json.tmp-")
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        || suffix
            .strip_prefix(".out-")
            .is_some_and(|k| hex16(k) || k.strip_suffix(".failed").is_some_and(hex16));
    if known {
        Entry::Ours(id.to_string())
    } else {
        Entry::Foreign
    }
}

/// Every kept HOME in `dir`, by HOME (a missing directory keeps none).
pub fn list(dir: &Path) -> std::io::Result<Vec<Kept>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut ids = std::collections::BTreeSet::new();
    for e in rd {
        if let Entry::Ours(id) = entry(&e?.file_name()) {
            ids.insert(id);
        }
    }
    let mut v: Vec<Kept> = ids
        .into_iter()
        .map(|id| {
            let file = |s: &str| dir.join(format!("{PREFIX}{id}{s}"));
            let record: Option<serde_json::Value> = std::fs::read(file(".json"))
                .ok()
                .and_then(|b| serde_json::from_slice(&b).ok());
            let field = |k: &str| {
                record
                    .as_ref()
                    .and_then(|r| r[k].as_str().map(String::from))
            };
            let bytes = [".duckdb", ".duckdb.wal"]
                .iter()
                .filter_map(|s| std::fs::metadata(file(s)).ok())
                .map(|m| m.len())
                .sum();
            Kept {
                home: field("home"),
                last_sync: field("last_sync_utc"),
                bytes,
                id,
            }
        })
        .collect();
    v.sort_by(|a, b| (&a.home, &a.id).cmp(&(&b.home, &b.id)));
    Ok(v)
}

/// `cache list`'s text.
pub fn listing(dir: &Path, kept: &[Kept]) -> String {
    if kept.is_empty() {
        return format!("nothing kept in {}\n", dir.display());
    }
    let mut s = format!("{:<19}  {:>13}  HOME\n", "LAST SYNC (UTC)", "LEDGER BYTES");
    for k in kept {
        s.push_str(&format!(
            "{:<19}  {:>13}  {}\n",
            k.last_sync.as_deref().unwrap_or("(none)"),
            crate::readout::thousands(i64::try_from(k.bytes).unwrap_or(i64::MAX)),
            k.home
                .clone()
                .unwrap_or_else(|| format!("(unknown HOME, id {})", k.id))
        ));
    }
    s.push_str(&format!(
        "kept in {}; `nanoload cache clear [HOME]` removes them\n",
        dir.display()
    ));
    s
}

/// What `cache clear` did.
#[derive(Debug, Default)]
pub struct Cleared {
    /// Each HOME removed (as its record names it) and the bytes freed.
    pub removed: Vec<(String, u64)>,
    /// HOMEs another nanoload is syncing now: left as they are.
    pub busy: Vec<String>,
    /// Entries nanoload did not write: left alone (every HOME's clear only).
    pub foreign: Vec<PathBuf>,
}

/// Remove the files kept for `home` (canonical, else absolute), or for
/// every HOME; never a name nanoload does not write.
pub fn clear(dir: &Path, home: Option<&Path>) -> Result<Cleared, KeepError> {
    let cache = |source: std::io::Error| KeepError::Cache {
        path: dir.to_path_buf(),
        source,
    };
    let only = home
        .map(|h| {
            h.canonicalize()
                .or_else(|_| std::path::absolute(h))
                .map(|p| home_id(&p))
        })
        .transpose()
        .map_err(|source| KeepError::Home {
            path: home.map(Path::to_path_buf).unwrap_or_default(),
            source,
        })?;
    let kept = list(dir).map_err(cache)?;
    let mut done = Cleared::default();
    if only.is_none()
        && let Ok(rd) = std::fs::read_dir(dir)
    {
        for e in rd.filter_map(Result::ok) {
            if matches!(entry(&e.file_name()), Entry::Foreign) {
                done.foreign.push(e.path());
            }
        }
        done.foreign.sort();
    }
    for k in kept {
        if only.as_ref().is_some_and(|id| *id != k.id) {
            continue;
        }
        let shown = k
            .home
            .clone()
            .unwrap_or_else(|| format!("(unknown HOME, id {})", k.id));
        // a call syncing this HOME now holds its lock: left to finish
        let lock = File::options()
            .write(true)
            .open(dir.join(format!("{PREFIX}{}.lock", k.id)));
        let _held = match lock {
            Ok(f) => match f.try_lock() {
                Ok(()) => Some(f),
                Err(std::fs::TryLockError::WouldBlock) => {
                    done.busy.push(shown);
                    continue;
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(cache(e)),
            },
            Err(_) => None,
        };
        let mut bytes = 0;
        let rd = std::fs::read_dir(dir).map_err(cache)?;
        for e in rd.filter_map(Result::ok) {
            if !matches!(entry(&e.file_name()), Entry::Ours(id) if id == k.id) {
                continue;
            }
            let p = e.path();
            let m = std::fs::symlink_metadata(&p).map_err(cache)?;
            if m.is_dir() {
                bytes += walkdir::WalkDir::new(&p)
                    .into_iter()
                    .filter_map(Result::ok)
                    .filter_map(|f| f.metadata().ok())
                    .filter(|m| m.is_file())
                    .map(|m| m.len())
                    .sum::<u64>();
                std::fs::remove_dir_all(&p).map_err(cache)?;
            } else {
                bytes += m.len();
                std::fs::remove_file(&p).map_err(cache)?;
            }
        }
        done.removed.push((shown, bytes));
    }
    Ok(done)
}
