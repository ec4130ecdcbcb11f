//! The library entry point: one [`run`] from HOME to OUT.parquet, a script
//! over the stages, one module each.
//!
//! ```text
//! config ─▶ sink::Outputs::prepare ─▶ workspace ─▶ discover ─▶ extract (rayon) ─▶ stage
//!   ─▶ engine: load, sql steps ─▶ sink: write to temp names, rename all ─▶ summary
//! ```
//! Nothing is written inside HOME; scratch files live in the private
//! workspace, removed when the run ends.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cache::{Cache, CacheError};
use crate::config::{Config, ConfigError, Options};
use crate::discover::discover;
use crate::engine::{Engine, EngineError};
use crate::extract::{ExtractError, extract};
use crate::sink::{OutputError, Outputs};
use crate::summary::Summary;
use crate::timings::Timings;
use crate::workspace::{Workspace, WorkspaceError};

/// A run that wrote nothing (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Output(#[from] OutputError),
    #[error(transparent)]
    Workspace(#[from] WorkspaceError),
    #[error(transparent)]
    Cache(#[from] CacheError),
    #[error("internal: {0}")]
    Discover(#[from] globset::Error),
    #[error(transparent)]
    Extract(#[from] ExtractError),
    #[error(transparent)]
    Engine(#[from] EngineError),
}

/// Run nanoload.
pub fn run(opts: &Options) -> Result<Summary, RunError> {
    let started = Instant::now();
    let mut t = Timings::default();
    let config = Config::new(opts)?;
    let outputs = Outputs::prepare(&config.outputs)?;
    let workspace = Workspace::create(&config.home)?;

    let discovery = t.time("discover", || discover(&config.home, config.follow_links))?;
    let load_id = discovery.load_id();
    test_pause("discovered");
    let ex = &config.extract;
    let cache = (config.cache.as_deref())
        .map(|dir| Cache::open(dir, &config.home, ex, config.follow_links))
        .transpose()?;
    let threads = config.threads;
    let extraction = extract(
        &discovery,
        &config.home,
        ex,
        &workspace,
        threads,
        cache.as_ref(),
    )?;
    t.extend(extraction.timings.clone());
    test_pause("staged");

    let memory_limit = config.memory_limit_for(extraction.max_row_bytes());
    let engine = Engine::open(&workspace.spill_dir(), config.threads, memory_limit)?;
    let staged = &extraction.staged;
    t.time("load", || {
        engine.load(staged, config.utc_offset_minutes, &load_id, &config.prices)
    })?;
    t.extend(engine.run_steps()?);
    let diagnostics = engine.diagnostics()?;

    t.time("write", || outputs.write(&engine, &staged.blobs))?;
    test_pause("written");
    outputs.commit()?;

    Ok(Summary::new(
        load_id,
        &discovery,
        &extraction,
        engine.counts()?,
        diagnostics,
        Timings {
            total: started.elapsed(),
            ..t
        },
        outputs.paths(),
    ))
}

/// Test-only hook: with `NANOLOAD_TEST_PAUSE=<point>:<file>`, the run creates
/// `<file>` when it reaches `<point>` (`discovered`, `staged`, `written`) and
/// waits until a test removes it (at most two minutes). Lets tests delete a
/// store after discovery or kill the process with outputs half-written.
fn test_pause(point: &str) {
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
