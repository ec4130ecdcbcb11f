//! The pipeline's two halves, each written once and driven by the commands
//! that need it: the front half (a private run dir, discovery, extraction
//! to staged Parquet) and the engine half (the staged rows loaded into
//! DuckDB and the SQL steps run over them, again at a higher memory limit
//! when DuckDB runs out of memory), with the hooks a driver gives.
//!
//! ```text
//! driver          front half                                   engine half
//! crate::run      Front::create → discover → extract (--cache)  engine(Steps: progress) → sink
//! (a load)
//! ledger::sync    Front::create → discover → (places not seen,  —  (the ledger's merge instead)
//!                 unchanged stores held back) → extract
//! ledger::export  Front::create → (stage_kept: the ledger's     engine(its hook places the seen
//!                 rows staged)                                 columns) → sink
//! ```
//! Hooks: [`Steps::loading`] before the rows load, [`Steps::before`] before
//! each step (it may make tables of its own, which the steps then see),
//! [`Steps::again`] when an attempt starts over at a higher limit.
//! The test-only hooks of a run (`NANOLOAD_TEST_PAUSE`,
//! `NANOLOAD_TEST_MEMORY_LIMIT`) are here too, checked once per run.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use duckdb::Connection;

use crate::cache::Cache;
use crate::discover::Discovery;
use crate::engine::{Engine, EngineError};
use crate::extract::{ExtractError, Extraction};
use crate::prices::PriceTable;
use crate::progress::{Progress, Show, human_bytes};
use crate::rundir::{RunDir, RunDirError};
use crate::stage::Staged;
use crate::store::ExtractOptions;
use crate::timings::{Clock, Timings};

/// HOME holds no store of either agent: nothing to load or sync (exit
/// code 4).
#[derive(Debug, thiserror::Error)]
pub enum FrontError {
    #[error("{}: no agent state found{}", home.display(), no_stores_hint(home))]
    NoStores { home: PathBuf },
    #[error("internal: {0}")]
    Discover(#[from] globset::Error),
    #[error(transparent)]
    Extract(#[from] ExtractError),
}

/// Where nanoload looked, and what HOME should be instead when it is an
/// agent's own directory.
fn no_stores_hint(home: &Path) -> String {
    let name = home
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent = home
        .parent()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let instead = if name.starts_with(".nanobot") {
        format!(
            "; {name} is a nanobot instance itself: give the directory that holds it ({parent})"
        )
    } else if name == "data" && home.join("v2.db").is_file() {
        format!(
            "; this is a nanoclaw install's data directory: give the install root ({parent}) or a directory above it"
        )
    } else {
        String::new()
    };
    format!(
        " (nanoload reads nanobot instances, the .nanobot* directories directly under HOME, and nanoclaw install roots, directories under HOME holding data/v2.db){instead}"
    )
}

/// The front half of one run: its private run dir (removed when dropped)
/// and, once [`Front::discover`] ran, its progress display.
pub struct Front {
    run_dir: RunDir,
    progress: Progress,
}

impl Front {
    /// A run over `home` (or a ledger's export): its run dir, created now
    /// (never inside HOME).
    pub fn create(home: &Path) -> Result<Front, RunDirError> {
        Ok(Front {
            run_dir: RunDir::create(home)?,
            progress: Progress::hidden(),
        })
    }

    pub fn run_dir(&self) -> &RunDir {
        &self.run_dir
    }

    /// The progress display (drawn from [`Front::discover`] on; a hidden
    /// one before).
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// The stores under `home` (`opts_home` as the user gave it, for the
    /// error), progress shown from now when `shown`: a HOME with neither a
    /// store nor anything that could not be read is [`FrontError::NoStores`].
    pub fn discover(
        &mut self,
        home: &Path,
        opts_home: &Path,
        follow_links: bool,
        shown: Show,
        t: &mut Timings,
    ) -> Result<Discovery, FrontError> {
        self.progress = Progress::start(shown);
        let discovery = t.time("discover", || crate::discover::discover(home, follow_links))?;
        if discovery.stores.is_empty() && discovery.diagnostics.is_empty() {
            return Err(FrontError::NoStores {
                home: opts_home.to_path_buf(),
            });
        }
        test_pause("discovered");
        Ok(discovery)
    }

    /// Read `discovery`'s stores and stage their rows in the run dir
    /// (each store from `cache` where its files did not change).
    pub fn extract(
        &self,
        discovery: &Discovery,
        home: &Path,
        options: &ExtractOptions,
        threads: usize,
        cache: Option<&Cache>,
    ) -> Result<Extraction, FrontError> {
        let extraction = crate::extract::extract(
            discovery,
            home,
            options,
            &self.run_dir,
            threads,
            cache,
            &self.progress,
        )?;
        test_pause("staged");
        Ok(extraction)
    }
}

/// What the engine half runs: the staged rows and how they load.
pub struct EngineRun<'a> {
    /// Where DuckDB spills (the run dir's).
    pub spill: &'a Path,
    pub threads: usize,
    /// The first memory limit ([`memory_limits`]: then twice and four times it).
    pub memory_limit: u64,
    pub staged: &'a Staged,
    pub utc_offset_minutes: Option<i32>,
    pub load_id: &'a str,
    pub prices: &'a PriceTable,
}

/// A driver's hooks into the engine half.
pub trait Steps {
    /// Before the staged rows load (each attempt).
    fn loading(&mut self) {}
    /// Before step `i` of `n` (`kinds`, then `V001__…` without `.sql`),
    /// with the engine's connection: whether the hook made tables or
    /// views itself (the steps read their catalog again).
    fn before(&mut self, _conn: &Connection, _i: usize, _n: usize, _step: &str) -> bool {
        false
    }
    /// An attempt ran out of memory: the next starts over with a new engine.
    fn again(&mut self) {}
}

/// Load the staged rows and run the SQL steps, at the limits of
/// [`memory_limits`] in turn ([`with_memory_retries`]), warning with `warn`
/// (one line) when an attempt starts over; the engine that succeeded.
pub fn engine(
    run: &EngineRun,
    hooks: &mut dyn Steps,
    warn: &dyn Fn(&str),
    t: &mut Timings,
) -> Result<Engine, EngineError> {
    let mut first = true;
    with_memory_retries(run.memory_limit, warn, t, |limit, tried| {
        if !std::mem::take(&mut first) {
            hooks.again();
        }
        let engine = Engine::open(run.spill, run.threads, limit)?;
        hooks.loading();
        tried.time("load", || {
            engine.load(run.staged, run.utc_offset_minutes, run.load_id, run.prices)
        })?;
        tried.extend(engine.run_steps(|i, n, step| hooks.before(engine.conn(), i, n, step))?);
        Ok(engine)
    })
}

/// Run `attempt` (open an engine, load, run the SQL steps: what it returns)
/// at the memory limits of [`memory_limits`] in turn, from `first`: an
/// attempt that runs out of memory is dropped (its engine and spill files)
/// with a warning (`warn`, one line) and the next one starts over; the
/// attempt that succeeds adds its timings to `t`, a failed one a phase of
/// its own. After four times the limit, one error line.
fn with_memory_retries<T>(
    first: u64,
    warn: &dyn Fn(&str),
    t: &mut Timings,
    mut attempt: impl FnMut(u64, &mut Timings) -> Result<T, EngineError>,
) -> Result<T, EngineError> {
    let limits = memory_limits(first);
    for (i, &limit) in limits.iter().enumerate() {
        let (mut tried, began) = (Timings::default(), Clock::start());
        match (attempt(limit, &mut tried), limits.get(i + 1)) {
            (Ok(done), _) => {
                t.extend(tried);
                return Ok(done);
            }
            (Err(e), Some(&next)) if e.is_out_of_memory() => {
                warn(&format!(
                    "nanoload: warning: {e}; the SQL steps run again with a memory limit of {} (was {})",
                    human_bytes(next),
                    human_bytes(limit)
                ));
                // the failed attempt as one phase: its steps' times are lost with it
                t.phases.push(began.phase(format!(
                    "load and sql, out of memory at {}",
                    human_bytes(limit)
                )));
            }
            (Err(e), None) if e.is_out_of_memory() => {
                return Err(EngineError::ResourcesExhausted {
                    limit: human_bytes(limit),
                    cause: Box::new(e),
                });
            }
            (Err(e), _) => return Err(e),
        }
    }
    Err(EngineError::Invalid("no memory limit left to try".into()))
}

/// The memory limits the engine is opened with, in order: `first` (the
/// configured limit, raised to fit the largest row), then twice and four
/// times it, each tried only when a SQL step or the load ran out of memory
/// at the limit before (docs/design.md "Bounded memory"). A failed attempt
/// leaves nothing behind: its engine, and the spill files it made, are
/// dropped before the next one opens.
pub(crate) fn memory_limits(first: u64) -> Vec<u64> {
    let first = test_memory_limit().unwrap_or(first);
    vec![first, first.max(1) * 2, first.max(1) * 4]
}

/// The places [`test_pause`] can hold a run at.
const PAUSE_POINTS: &[&str] = &["discovered", "staged", "written", "probed", "merged"];

/// The test-only hooks' variables, when set, are well formed: a test whose
/// hook is mistyped fails at once (exit 2) instead of testing a run that
/// never paused or never ran short of memory.
pub(crate) fn check_test_hooks() -> Result<(), EngineError> {
    let bad = |var: &str, value: std::ffi::OsString, want: &str| {
        EngineError::Invalid(format!(
            "{var}={:?} is not {want} (a variable of the tests)",
            value.to_string_lossy()
        ))
    };
    if let Some(v) = std::env::var_os("NANOLOAD_TEST_PAUSE") {
        let ok = v
            .to_str()
            .and_then(|s| s.split_once(':'))
            .is_some_and(|(p, f)| PAUSE_POINTS.contains(&p) && !f.is_empty());
        if !ok {
            return Err(bad(
                "NANOLOAD_TEST_PAUSE",
                v,
                &format!(
                    "<point>:<file> with <point> one of {}",
                    PAUSE_POINTS.join(", ")
                ),
            ));
        }
    }
    if let Some(v) = std::env::var_os("NANOLOAD_TEST_MEMORY_LIMIT")
        && v.to_str().and_then(|s| s.parse::<u64>().ok()).is_none()
    {
        return Err(bad("NANOLOAD_TEST_MEMORY_LIMIT", v, "a number of bytes"));
    }
    Ok(())
}

/// Test-only hook: `NANOLOAD_TEST_MEMORY_LIMIT=<bytes>` replaces the first
/// limit (below the 64 MiB floor), so a test can make a small home run out
/// of memory and watch the load go on at twice and four times it.
fn test_memory_limit() -> Option<u64> {
    std::env::var("NANOLOAD_TEST_MEMORY_LIMIT")
        .ok()?
        .parse()
        .ok()
}

/// Test-only hook: with `NANOLOAD_TEST_PAUSE=<point>:<file>`, the run creates
/// `<file>` when it reaches `<point>` (`discovered`, `staged`, `written`,
/// `probed`: every output checked, none renamed yet; `merged`: a sync's
/// rows merged, not committed) and waits until a test removes it (at most
/// two minutes). Lets tests delete a store after discovery, kill the
/// process with outputs half-written, or make a rename fail after the
/// commit's checks.
pub(crate) fn test_pause(point: &str) {
    let Ok(spec) = std::env::var("NANOLOAD_TEST_PAUSE") else {
        return;
    };
    let Some((p, file)) = spec.split_once(':') else {
        return;
    };
    if p != point || std::fs::write(file, b"").is_err() {
        return;
    }
    let start = Instant::now();
    while Path::new(file).exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tries `query` in an engine at each limit [`with_memory_retries`]
    /// gives: how many attempts ran and how it ended.
    fn attempts_of(query: &str) -> (usize, Result<(), EngineError>) {
        let spill = tempfile::tempdir().map_err(|e| e.to_string());
        let mut attempts = 0;
        let ended = with_memory_retries(16 << 20, &|_| {}, &mut Timings::default(), |limit, _| {
            attempts += 1;
            let spill = spill
                .as_ref()
                .map_err(|e| EngineError::Invalid(e.clone()))?;
            let engine = Engine::open(spill.path(), 1, limit)?;
            engine.conn().execute_batch(query)?;
            Ok(())
        });
        (attempts, ended)
    }

    /// An error whose words say "Out of Memory Error" is not DuckDB running
    /// out of memory: only DuckDB's own class of the error is tried again at
    /// a higher limit, and a real one ends, after the last limit, as
    /// resources exhausted with DuckDB's error kept as its source.
    #[test]
    fn only_duckdbs_out_of_memory_is_tried_again() {
        let (attempts, ended) =
            attempts_of("SELECT error('Out of Memory Error: words in a message, not a failure')");
        assert_eq!(attempts, 1, "{ended:?}");
        assert!(
            matches!(ended, Err(EngineError::Database { .. })),
            "{ended:?}"
        );
        let (attempts, ended) = attempts_of(
            "SELECT length(string_agg(repeat('x', 1000) || i, '')) FROM range(400000) t(i)",
        );
        assert_eq!(attempts, 3, "{ended:?}");
        assert!(
            matches!(&ended, Err(EngineError::ResourcesExhausted { .. })),
            "{ended:?}"
        );
        if let Err(EngineError::ResourcesExhausted { limit, cause }) = &ended {
            assert_eq!(limit, &human_bytes(64 << 20));
            assert!(cause.is_out_of_memory(), "{cause:?}");
            assert!(std::error::Error::source(&**cause).is_some());
        }
    }
}
