//! The library entry point: one [`run`] from HOME to OUT.parquet, a script
//! over the stages, one module each.
//!
//! ```text
//! config ─▶ sink::Outputs::prepare
//!   ─▶ pipeline::Front: rundir ─▶ discover ─▶ extract (rayon, --cache) ─▶ stage
//!   ─▶ pipeline::engine: load, sql steps (again at 2 ×, 4 × the memory limit when out of memory)
//!   ─▶ sink: write to temp names ─▶ summary
//!   ─▶ sink: --summary-json, check every target, rename all (exit 3 if a rename then fails)
//!                                             (progress: drawn throughout, cleared at the end)
//! ```
//! Nothing is written inside HOME; scratch files live in the private
//! run dir, removed when the run ends.

use crate::cache::{Cache, CacheError};
use crate::config::{Config, ConfigError, Options};
use crate::engine::EngineError;
use crate::pipeline::{self, EngineRun, Front, FrontError, check_test_hooks, test_pause};
use crate::progress::Progress;
use crate::rundir::RunDirError;
use crate::sink::{CommitError, OutputError, Outputs};
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
    /// Discovery or extraction failed, or HOME holds no store of either
    /// agent (exit code 4).
    #[error(transparent)]
    Front(#[from] FrontError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The commit stopped: nothing replaced (exit code 2), or some outputs
    /// replaced and the others not (exit code 3).
    #[error(transparent)]
    Commit(#[from] CommitError),
}

impl RunError {
    /// The process exit code: 3 when the outputs are partly this run's
    /// ([`crate::sink::PartialCommit`]), 4 when HOME holds no store, else 2
    /// (nothing written).
    pub fn exit_code(&self) -> ExitCode {
        match self {
            RunError::Commit(CommitError::Partly(_)) => ExitCode::PartlyReplaced,
            RunError::Front(FrontError::NoStores { .. }) => ExitCode::NoStores,
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
    let mut front = Front::create(&config.home)?;
    let (home, shown) = (&config.home, opts.progress_shown());
    let discovery = front.discover(home, &opts.home, config.follow_links, shown, &mut t)?;
    let load_id = discovery.load_id(&config.load_options);
    let cache = open_cache(&config)?;
    let (ex, threads) = (&config.extract, config.threads);
    let extraction = front.extract(&discovery, home, ex, threads, cache.as_ref())?;
    t.extend(extraction.timings.clone());

    let staged = &extraction.staged;
    let progress = front.progress();
    let spill = front.run_dir().spill_dir();
    let run = EngineRun {
        spill: &spill,
        threads,
        memory_limit: config.memory_limit_for(extraction.max_row_bytes()),
        staged,
        utc_offset_minutes: config.utc_offset_minutes,
        load_id: &load_id,
        prices: &config.prices,
    };
    let engine = pipeline::engine(&run, &mut Shown(progress), &|w| progress.warn(w), &mut t)?;
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

/// A load's hooks into the engine half: the steps drawn on its progress.
struct Shown<'a>(&'a Progress);

impl pipeline::Steps for Shown<'_> {
    fn loading(&mut self) {
        self.0.loading();
    }

    fn before(&mut self, _: &duckdb::Connection, i: usize, n: usize, step: &str) -> bool {
        self.0.sql_step(i, n, step);
        false
    }
}

/// `--cache DIR`, opened for this HOME and these options.
fn open_cache(config: &Config) -> Result<Option<Cache>, CacheError> {
    (config.cache.as_deref())
        .map(|dir| Cache::open(dir, &config.home, &config.extract, config.follow_links))
        .transpose()
}
