//! Incremental extraction (`--cache DIR`): each store's staged rows kept
//! between runs, and reused only while everything that shaped them is
//! unchanged.
//!
//! ```text
//! DIR/                                  created mode 0700; never inside HOME
//!   v1/<home>/                          <home>: 16 hex of SHA-256 of the canonical HOME path
//!     <key>/                            one entry = one store as one run read it (64 hex)
//!       events-<kind>.parquet           its rows as staged (x_blob 0 = blob-0.bin, x_row 1…)
//!       llm_calls.parquet               its llm_calls rows, if any
//!       blob-0.bin                      the text ‖ native of its rows no step reads
//!       report.json                     rows, status, largest row, blob bytes, redactions,
//!                                       diagnostics (the store's `sources` row and stderr lines)
//!     .tmp-<pid>-<key>/                 an entry being written, renamed to <key> when complete
//! ```
//! The key is a SHA-256 over the cache format, nanoload's version and build
//! identity ([`crate::BUILD_ID`]: a hash of its sources); every
//! option that changes extraction (`--secret-pattern`, `--no-redact`,
//! `--include-thinking`, `--follow-links`); the store's kind, role,
//! instance and path; and for every file it reads — its main file, parts,
//! sidecars (`-wal`, `-journal`) and what its kind declares
//! ([`Reads::Also`]: `.workspace`, `workspace-id`) — the path, size,
//! mtime_ns and the BLAKE3 of all its bytes (streamed), or "absent". The
//! content is in the key, so a file rewritten in place with its size and
//! mtime put back (`cp -p`, `rsync -a`, an editor that restores them) is
//! never served stale: a hit costs one read of every file the store reads,
//! a miss two (the key before extraction and again after it).
//!
//! A hit is staged from its entry ([`Stage::import`]); a miss is extracted
//! into the run's stage and a new entry ([`Stage::entry`]) at once, and the
//! entry is kept only when the store's files did not change while it was
//! read and no part of it was unreadable. Entries of this HOME that the run did not use
//! are removed at the end ([`Cache::prune`]). Every store is cacheable: no
//! store's rows depend on another store (a nanoclaw install's cross-store
//! facts are the SQL steps'). One run at a time per cache directory and HOME.

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::diag::{DiagKind, Diagnostic};
use crate::schema::{EventRow, LlmCallRow};
use crate::sources::REGISTRY;
use crate::stage::{Stage, StageError};
use crate::store::{ExtractOptions, Reads, RowWriter, Store, StoreReport, WriteError, hex};

/// Bumped whenever what an entry holds changes shape.
const FORMAT: &str = "nanoload-cache 1";

/// The buffer a file's bytes are hashed through.
const HASH_BUFFER: usize = 256 << 10;

thread_local! {
    /// Each thread's [`HASH_BUFFER`], allocated once: a zeroed buffer of
    /// this size allocated per file is, under jemalloc, pages handed back
    /// to the kernel and faulted in again, file after file: an unchanged
    /// `sync` of a large home took several times glibc's page faults and
    /// system time that way.
    static HASH_BUF: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0u8; HASH_BUFFER]);
}

#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("--cache {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a run used the cache: stores staged from an entry, stores extracted
/// (and cached, unless they changed while read or were not read to their end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounts {
    pub reused: u64,
    pub extracted: u64,
}

/// An open cache directory, for one HOME and one set of options.
pub struct Cache {
    /// `DIR/v1/<home>`.
    dir: PathBuf,
    /// The hash of the format, version and extraction options.
    options: [u8; 32],
    used: Mutex<BTreeSet<String>>,
    reused: AtomicU64,
    extracted: AtomicU64,
}

impl Cache {
    /// Open (creating, mode 0700) the cache directory `dir` for `home`
    /// (canonical). The caller has checked that `dir` is outside HOME.
    pub fn open(
        dir: &Path,
        home: &Path,
        options: &ExtractOptions,
        follow_links: bool,
    ) -> Result<Cache, CacheError> {
        let home_hash = hex(&Sha256::digest(home.as_os_str().as_encoded_bytes()));
        let dir = dir.join("v1").join(&home_hash[..16]);
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(|source| CacheError::Io {
            path: dir.clone(),
            source,
        })?;
        Ok(Cache {
            dir,
            options: options_hash(crate::BUILD_ID, options, follow_links),
            used: Mutex::new(BTreeSet::new()),
            reused: AtomicU64::new(0),
            extracted: AtomicU64::new(0),
        })
    }

    /// The entry key of `store` as its files are now.
    pub fn key(&self, store: &Store, home: &Path) -> String {
        store_key(&self.options, store, home)
    }

    /// Stage `store` from its entry, or extract it with `extract` (which
    /// stages into the row writer it is given and reports) into a new entry and
    /// stage that.
    pub fn stage(
        &self,
        store: &Store,
        home: &Path,
        stage: &Stage,
        extract: impl FnOnce(&dyn RowWriter) -> StoreReport,
    ) -> StoreReport {
        let key = self.key(store, home);
        let entry = self.dir.join(&key);
        if let Some(report) = read_report(&entry) {
            self.mark_used(&key);
            self.reused.fetch_add(1, Ordering::Relaxed);
            return match stage.import(&entry) {
                Ok(()) => report,
                Err(e) => fatal(format!("cache entry {}: {e}", entry.display())),
            };
        }
        self.extracted.fetch_add(1, Ordering::Relaxed);
        let tmp = self.dir.join(format!(".tmp-{}-{key}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let entry_stage = match Stage::entry(&tmp) {
            Ok(s) => s,
            Err(e) => return fatal(format!("--cache: {e}")),
        };
        // the rows go to the run's stage and to the entry at once
        let report = extract(&Tee(stage, &entry_stage));
        let kept = entry_stage.finish_entry().and_then(|blob_len| {
            // a store that changed while it was read, or could not be read
            // to its end, is staged but not kept
            let keep = report.fatal.is_none()
                && !report
                    .diagnostics
                    .iter()
                    .any(|d| d.kind == DiagKind::Unreadable)
                && self.key(store, home) == key;
            if keep {
                write_report(&tmp, &report, blob_len)?;
                let _ = std::fs::remove_dir_all(&entry);
                std::fs::rename(&tmp, &entry).map_err(|source| StageError::Io {
                    path: entry.clone(),
                    source,
                })?;
                self.mark_used(&key);
            }
            Ok(())
        });
        let _ = std::fs::remove_dir_all(&tmp);
        match kept {
            Ok(()) => report,
            Err(e) => fatal(format!("--cache {}: {e}", self.dir.display())),
        }
    }

    fn mark_used(&self, key: &str) {
        if let Ok(mut used) = self.used.lock() {
            used.insert(key.to_string());
        }
    }

    /// Remove the entries (and unfinished entries) of this HOME the run did
    /// not use: a changed store's old entry is never valid again.
    pub fn prune(&self) {
        let Ok(used) = self.used.lock() else { return };
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        for e in entries.filter_map(Result::ok) {
            let name = e.file_name().to_string_lossy().into_owned();
            if !used.contains(&name) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }

    pub fn counts(&self) -> CacheCounts {
        CacheCounts {
            reused: self.reused.load(Ordering::Relaxed),
            extracted: self.extracted.load(Ordering::Relaxed),
        }
    }
}

/// A report for a store whose staging failed (the run stops, exit 2).
fn fatal(msg: String) -> StoreReport {
    StoreReport {
        rows: 0,
        status: "failed",
        diagnostics: Vec::new(),
        max_row_bytes: 0,
        fatal: Some(msg),
        redactions: Default::default(),
    }
}

/// What every key of one run shares: the cache format, nanoload's version,
/// the build's identity (`build`: [`crate::BUILD_ID`], so an entry another
/// build wrote — another scanner, another record hash — is never reused) and
/// every option that changes extraction.
/// What an entry key starts with: the cache format, nanoload's version and
/// build identity, and the options that change extraction.
pub fn options_key(options: &ExtractOptions, follow_links: bool) -> [u8; 32] {
    options_hash(crate::BUILD_ID, options, follow_links)
}

/// The key of `store` as its files are now (after `options`, an
/// [`options_key`]): its kind, role, instance and path, and the state —
/// path, size, mtime_ns, BLAKE3 of every byte — of every file it reads
/// (its own and what its kind declares, [`Reads`]). `nanoload sync` keeps
/// it per store, as the cache keeps its entries.
pub fn store_key(options: &[u8; 32], store: &Store, home: &Path) -> String {
    let also = match REGISTRY[store.extractor].reads {
        Reads::Own => Vec::new(),
        Reads::Also(files) => files(&store.rel, home),
    };
    let mut h = Sha256::new();
    h.update(options);
    for f in [store.kind, store.role.as_str(), &store.instance, &store.rel] {
        field(&mut h, f);
    }
    field(&mut h, if store.present { "present" } else { "absent" });
    let own = std::iter::once(store.abs.clone())
        .filter(|_| store.present)
        .chain(store.parts.iter().map(|f| f.abs.clone()))
        .chain(store.sidecars.iter().map(|f| f.abs.clone()));
    for (i, abs) in own.enumerate() {
        field(&mut h, &i.to_string());
        file_state(&mut h, &abs);
    }
    for rel in also {
        field(&mut h, &rel);
        file_state(&mut h, &home.join(&rel));
    }
    hex(&h.finalize())
}

fn options_hash(build: &str, options: &ExtractOptions, follow_links: bool) -> [u8; 32] {
    let mut h = Sha256::new();
    field(&mut h, FORMAT);
    field(&mut h, crate::VERSION);
    field(&mut h, build);
    field(
        &mut h,
        &format!("include_thinking={}", options.include_thinking),
    );
    field(&mut h, &format!("redact={}", options.scanner.is_some()));
    field(&mut h, &format!("keys={:?}", options.keys));
    field(&mut h, &format!("follow_links={follow_links}"));
    for p in &options.secret_patterns {
        field(&mut h, &format!("secret_pattern={}", p.as_str()));
    }
    h.finalize().into()
}

/// One length-prefixed field of a key.
fn field(h: &mut Sha256, s: &str) {
    h.update((s.len() as u64).to_le_bytes());
    h.update(s.as_bytes());
}

/// A file's size, mtime_ns and the BLAKE3 of all its bytes (with how
/// many were read: a file growing while it is hashed gives a state no
/// later read repeats), or "absent".
fn file_state(h: &mut Sha256, path: &Path) {
    let state = || -> std::io::Result<String> {
        let mut f = std::fs::File::open(path)?;
        let meta = f.metadata()?;
        let mtime = meta
            .modified()?
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // BLAKE3, not SHA-256 as the key around it: every byte of every
        // store passes here on each sync and cached load, and BLAKE3's SIMD
        // code hashes several times faster a core than SHA-256 even on the
        // CPU's SHA extensions (BENCHMARKS.md "The ledger")
        let mut content = blake3::Hasher::new();
        let mut read: u64 = 0;
        HASH_BUF.with_borrow_mut(|buf| -> std::io::Result<()> {
            loop {
                match f.read(buf) {
                    Ok(0) => return Ok(()),
                    Ok(n) => {
                        content.update(&buf[..n]);
                        read += n as u64;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
        })?;
        Ok(format!(
            "{} {mtime} {read} {}",
            meta.len(),
            content.finalize().to_hex()
        ))
    };
    field(h, &state().unwrap_or_else(|_| "absent".into()));
}

/// Stages rows twice: into the run and into a new cache entry.
struct Tee<'a>(&'a Stage, &'a Stage);

impl RowWriter for Tee<'_> {
    fn write_events(
        &self,
        kind: &'static str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), WriteError> {
        self.0.write_events(kind, rows, natives)?;
        Ok(self.1.write_events(kind, rows, natives)?)
    }
    fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), WriteError> {
        self.0.write_llm_calls(rows)?;
        Ok(self.1.write_llm_calls(rows)?)
    }
}

/// Keep what the run needs of a store's report beside its rows.
fn write_report(entry: &Path, r: &StoreReport, blob_len: u64) -> Result<(), StageError> {
    let v = serde_json::json!({
        "rows": r.rows,
        "status": r.status,
        "max_row_bytes": r.max_row_bytes,
        "blob_bytes": blob_len,
        "redactions": r.redactions,
        "diagnostics": r.diagnostics.iter().map(Diagnostic::to_json).collect::<Vec<_>>(),
    });
    let path = entry.join("report.json");
    std::fs::write(&path, v.to_string()).map_err(|source| StageError::Io { path, source })
}

/// The report of a complete entry; `None` when there is none or it does
/// not hold together (then the store is extracted again).
fn read_report(entry: &Path) -> Option<StoreReport> {
    let text = std::fs::read_to_string(entry.join("report.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let status = ["ok", "partial", "failed"]
        .into_iter()
        .find(|s| v.get("status").and_then(|x| x.as_str()) == Some(*s))?;
    let blob_bytes = v.get("blob_bytes")?.as_u64()?;
    let on_disk = std::fs::metadata(entry.join("blob-0.bin")).map_or(0, |m| m.len());
    if on_disk != blob_bytes {
        return None;
    }
    // every staged file opens (its footer reads): a damaged one is found
    // before any of the entry's rows are staged
    for e in std::fs::read_dir(entry).ok()? {
        let path = e.ok()?.path();
        if path.extension().is_some_and(|x| x == "parquet") {
            crate::stage::read_file(&path).ok()?;
        }
    }
    let mut redactions = crate::secrets::Counts::new();
    for (rule, n) in v.get("redactions")?.as_object()? {
        redactions.insert(crate::secrets::rule_name(rule)?, n.as_u64()?);
    }
    let diagnostics = v
        .get("diagnostics")?
        .as_array()?
        .iter()
        .map(Diagnostic::from_json)
        .collect::<Option<Vec<_>>>()?;
    Some(StoreReport {
        rows: v.get("rows")?.as_u64()?,
        status,
        diagnostics,
        max_row_bytes: usize::try_from(v.get("max_row_bytes")?.as_u64()?).ok()?,
        fatal: None,
        redactions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The content is in the key: a file rewritten in place with its size
    /// and mtime put back, the change far from both ends, gives another
    /// state; the same bytes give the same state.
    #[test]
    fn a_files_state_holds_all_its_bytes() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let path = d.path().join("s.jsonl");
        let mut bytes = vec![b'a'; 3 * HASH_BUFFER + 17];
        std::fs::write(&path, &bytes)?;
        let mtime = std::fs::metadata(&path)?.modified()?;
        let state = || {
            let mut h = Sha256::new();
            file_state(&mut h, &path);
            hex(&h.finalize())
        };
        let before = state();
        bytes[HASH_BUFFER + 5] = b'b';
        std::fs::write(&path, &bytes)?;
        std::fs::File::options()
            .write(true)
            .open(&path)?
            .set_modified(mtime)?;
        assert_eq!(std::fs::metadata(&path)?.modified()?, mtime);
        let after = state();
        assert_ne!(before, after);
        assert_eq!(after, state());
        Ok(())
    }

    /// An entry written by another build is never reused: the build's
    /// identity is part of every key, beside the options.
    #[test]
    fn the_key_holds_the_build_identity() {
        let o = ExtractOptions::default();
        assert_eq!(crate::BUILD_ID.len(), 16);
        assert!(crate::BUILD_ID.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(options_hash("a", &o, false), options_hash("a", &o, false));
        assert_ne!(options_hash("a", &o, false), options_hash("b", &o, false));
        assert_ne!(options_hash("a", &o, false), options_hash("a", &o, true));
    }
}
