//! The library entry point: one [`run`] from HOME to OUT.parquet, a script
//! over the stages, one module each.
//!
//! ```text
//! config ─▶ sink::Outputs::prepare ─▶ rundir ─▶ discover ─▶ extract (rayon) ─▶ stage
//!   ─▶ engine: load, sql steps (again at 2 ×, 4 × the memory limit when out of memory)
//!   ─▶ sink: write to temp names ─▶ summary
//!   ─▶ sink: --summary-json, check every target, rename all (exit 3 if a rename then fails)
//!                                             (progress: drawn throughout, cleared at the end)
//! ```
//! Nothing is written inside HOME; scratch files live in the private
//! run dir, removed when the run ends.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cache::{Cache, CacheError};
use crate::config::{Config, ConfigError, Options};
use crate::discover::discover;
use crate::engine::{Engine, EngineError};
use crate::extract::{ExtractError, extract};
use crate::progress::{Progress, human_bytes};
use crate::rundir::{RunDir, RunDirError};
use crate::sink::{CommitError, OutputError, Outputs};
use crate::stage::Staged;
use crate::summary::{ExitCode, Summary};
use crate::timings::{Clock, Timings};

/// A run that wrote nothing (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    RunDir(#[from] RunDirError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("internal: {0}")]
    Discover(#[from] globset::Error),
    #[error(transparent)]
    Extract(#[from] ExtractError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The commit stopped: nothing replaced (exit code 2), or some outputs
    /// replaced and the others not (exit code 3).
    #[error(transparent)]
    Commit(#[from] CommitError),
    /// HOME holds no store of either agent: nothing to load (exit code 4).
    #[error("{}: no agent state found{}", home.display(), no_stores_hint(home))]
    NoStores { home: std::path::PathBuf },
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

impl RunError {
    /// The process exit code: 3 when the outputs are partly this run's
    /// ([`crate::sink::PartialCommit`]), 4 when HOME holds no store, else 2
    /// (nothing written).
    pub fn exit_code(&self) -> ExitCode {
        match self {
            RunError::Commit(CommitError::Partly(_)) => ExitCode::PartlyReplaced,
            RunError::NoStores { .. } => ExitCode::NoStores,
            _ => ExitCode::Failed,
        }
    }

    /// The stderr lines after the error's own: for a partial commit, each
    /// output as `new: <path>` or `old: <path>`.
    pub fn detail_lines(&self) -> Vec<String> {
        match self {
            RunError::Commit(CommitError::Partly(p)) => p.lines(),
            _ => Vec::new(),
        }
    }
}

/// Run nanoload.
pub fn run(opts: &Options) -> Result<Summary, RunError> {
    let started = Clock::start();
    let mut t = Timings::default();
    check_test_hooks()?;
    let config = Config::new(opts)?;
    let outputs = Outputs::prepare(&config.outputs)?;
    let run_dir = RunDir::create(&config.home)?;
    let progress = Progress::start(opts.progress_shown());

    let discovery = t.time("discover", || discover(&config.home, config.follow_links))?;
    if discovery.stores.is_empty() && discovery.diagnostics.is_empty() {
        return Err(RunError::NoStores {
            home: opts.home.clone(),
        });
    }
    let load_id = discovery.load_id(&config.load_options);
    test_pause("discovered");
    let ex = &config.extract;
    let cache = open_cache(&config)?;
    let extraction = extract(
        &discovery,
        &config.home,
        ex,
        &run_dir,
        config.threads,
        cache.as_ref(),
        &progress,
    )?;
    t.extend(extraction.timings.clone());
    test_pause("staged");

    let staged = &extraction.staged;
    let limit = config.memory_limit_for(extraction.max_row_bytes());
    let engine = load_and_run_steps(
        &config, &run_dir, staged, &load_id, limit, &progress, &mut t,
    )?;
    let diagnostics = engine.diagnostics()?;

    progress.writing(outputs.paths().len());
    t.time("write", || outputs.write(&engine, &staged.blobs, &load_id))?;
    test_pause("written");
    let (total, total_cpu) = started.elapsed();
    let counts = engine.counts()?;
    let summary = Summary::new(
        load_id,
        &discovery,
        &extraction,
        counts,
        diagnostics,
        Timings {
            total,
            total_cpu,
            ..t
        },
        outputs.paths(),
    );
    outputs.commit(&summary.json(), || test_pause("probed"))?;
    Ok(summary)
}

/// Open the engine, load the staged rows and run the SQL steps, at the
/// memory limits of [`memory_limits`] in turn ([`with_memory_retries`]).
fn load_and_run_steps(
    config: &Config,
    run_dir: &RunDir,
    staged: &Staged,
    load_id: &str,
    limit: u64,
    progress: &Progress,
    t: &mut Timings,
) -> Result<Engine, RunError> {
    let warn = |w: &str| progress.warn(w);
    Ok(with_memory_retries(limit, &warn, t, |limit, tried| {
        let engine = Engine::open(&run_dir.spill_dir(), config.threads, limit)?;
        progress.loading();
        tried.time("load", || {
            engine.load(staged, config.utc_offset_minutes, load_id, &config.prices)
        })?;
        tried.extend(engine.run_steps(|i, n, step| {
            progress.sql_step(i, n, step);
            false
        })?);
        Ok(engine)
    })?)
}

/// Run `attempt` (open an engine, load, run the SQL steps: what it returns)
/// at the memory limits of [`memory_limits`] in turn, from `first`: an
/// attempt that runs out of memory is dropped (its engine and spill files)
/// with a warning (`warn`, one line) and the next one starts over; the
/// attempt that succeeds adds its timings to `t`, a failed one a phase of
/// its own. After four times the limit, one error line.
pub(crate) fn with_memory_retries<T>(
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
fn memory_limits(first: u64) -> Vec<u64> {
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

/// `--cache DIR`, opened for this HOME and these options.
fn open_cache(config: &Config) -> Result<Option<Cache>, CacheError> {
    (config.cache.as_deref())
        .map(|dir| Cache::open(dir, &config.home, &config.extract, config.follow_links))
        .transpose()
}

/// Test-only hook: with `NANOLOAD_TEST_PAUSE=<point>:<file>`, the run creates
/// `<file>` when it reaches `<point>` (`discovered`, `staged`, `written`,
/// `probed`: every output checked, none renamed yet) and
/// waits until a test removes it (at most two minutes). Lets tests delete a
/// store after discovery, kill the process with outputs half-written, or
/// make a rename fail after the commit's checks.
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
