//! Extraction: every store in its own Rayon task, rows streamed in bounded
//! batches to the stage (the extractors' API is [`crate::store`]).
//!
//! ```text
//! [Store] ──REGISTRY[store.extractor].extract──▶ StoreOutput ──(every BATCH rows)──▶ Stage
//!                                                         └──▶ StoreReport (rows, status, diagnostics)
//! ```

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::cache::{Cache, CacheCounts};
use crate::diag::Diagnostic;
use crate::discover::Discovery;
use crate::progress::Progress;
use crate::rundir::RunDir;
use crate::schema::{EventRow, LlmCallRow, SourceRow};
use crate::sources::REGISTRY;
use crate::stage::{Stage, StageError, Staged};
use crate::store::{ExtractOptions, RowWriter, Store, StoreOutput, StoreReport, WriteError};
use crate::timings::Timings;

/// Extraction that cannot go on (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ExtractError {
    #[error("internal: {0}")]
    Pool(#[from] rayon::ThreadPoolBuildError),
    #[error("{0}")]
    Stage(#[from] StageError),
    /// Staging failed inside a store's task.
    #[error("{0}")]
    Fatal(String),
}

/// What extraction staged, with one report per discovered store.
pub struct Extraction {
    pub staged: Staged,
    pub reports: Vec<StoreReport>,
    /// `extract` (reading every store on the pool) and `stage` (finishing
    /// the staged files).
    pub timings: Timings,
    /// How `--cache` was used.
    pub cache: Option<CacheCounts>,
}

impl Extraction {
    /// The largest row (text + native bytes) any store yielded.
    pub fn max_row_bytes(&self) -> u64 {
        self.reports
            .iter()
            .map(|r| r.max_row_bytes as u64)
            .max()
            .unwrap_or(0)
    }
}

/// The stack of each extraction thread: enough to walk a JSON value
/// [`crate::jsonl::MAX_DEPTH`] levels deep ([`crate::jsonl::WALK_STACK`]).
pub const WORKER_STACK: usize = crate::jsonl::WALK_STACK;

/// Read every discovered store on a pool of `threads`, stage the rows, then
/// the diagnostics so far and one `sources` row per store.
pub fn extract(
    discovery: &Discovery,
    home: &Path,
    options: &ExtractOptions,
    run_dir: &RunDir,
    threads: usize,
    cache: Option<&Cache>,
    progress: &Progress,
) -> Result<Extraction, ExtractError> {
    let stage = Stage::new(&run_dir.stage_dir())?.all_wide(options.stage_all_wide);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .stack_size(WORKER_STACK)
        .build()?;
    let scratch = run_dir.scratch_dir();
    let stores = &discovery.stores;
    progress.extracting(stores.len() as u64, stores.iter().map(store_bytes).sum());
    let mut timings = Timings::default();
    let reports: Vec<StoreReport> = timings.time("extract", || {
        pool.install(|| extract_all(stores, home, options, &stage, &scratch, cache, progress))
    });
    progress.staging();
    if let Some(c) = cache {
        c.prune();
    }
    if let Some(fatal) = reports.iter().find_map(|r| r.fatal.clone()) {
        return Err(ExtractError::Fatal(fatal));
    }
    let mut diagnostics: Vec<Diagnostic> = discovery.diagnostics.clone();
    diagnostics.extend(reports.iter().flat_map(|r| r.diagnostics.iter().cloned()));
    diagnostics.sort();
    let sources = source_rows(&discovery.stores, &reports);
    let staged = timings.time("stage", || stage.finish(&diagnostics, &sources))?;
    Ok(Extraction {
        staged,
        reports,
        timings,
        cache: cache.map(Cache::counts),
    })
}

/// The `sources` table: one row per store, with how it was read.
fn source_rows(stores: &[Store], reports: &[StoreReport]) -> Vec<SourceRow> {
    stores
        .iter()
        .zip(reports)
        .map(|(s, r)| SourceRow {
            source_kind: s.kind.to_string(),
            source_role: s.role.as_str().to_string(),
            source_path: s.rel.clone(),
            bytes: store_bytes(s) as i64,
            rows: r.rows as i64,
            status: r.status.to_string(),
            agent: s.agent.as_str().to_string(),
            instance: s.instance.clone(),
            parts: s.parts.len() as i64,
            redactions: crate::secrets::counts_json(&r.redactions),
        })
        .collect()
}

/// A store's bytes: its file and its parts (`sources.bytes`).
fn store_bytes(s: &Store) -> u64 {
    s.bytes + s.parts.iter().map(|p| p.bytes).sum::<u64>()
}

/// A row writer that counts the event rows passing through, and the bytes
/// the extractor says it read, to `--progress`.
struct Counted<'a> {
    rows_to: &'a dyn RowWriter,
    progress: &'a Progress,
    /// This store's rows counted so far.
    rows: &'a AtomicU64,
    /// This store's bytes said to be read so far (a retried snapshot copy
    /// may say more than the store holds: at most `limit` are counted).
    bytes: &'a AtomicU64,
    limit: u64,
}

impl RowWriter for Counted<'_> {
    fn write_events(
        &self,
        kind: &'static str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), WriteError> {
        self.rows_to.write_events(kind, rows, natives)?;
        let n = rows.len() as u64;
        self.rows.fetch_add(n, Ordering::Relaxed);
        self.progress.rows(n);
        Ok(())
    }
    fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), WriteError> {
        self.rows_to.write_llm_calls(rows)
    }
    fn read_bytes(&self, n: u64) {
        let before = self.bytes.fetch_add(n, Ordering::Relaxed);
        let add = n.min(self.limit.saturating_sub(before));
        if add > 0 {
            self.progress.bytes_read(add);
        }
    }
}

/// Run every store's extractor in parallel (on the current Rayon pool),
/// or stage it from `cache`. Reports come back in store order, whatever
/// the scheduling.
pub fn extract_all(
    stores: &[Store],
    home: &Path,
    options: &ExtractOptions,
    stage: &Stage,
    scratch: &Path,
    cache: Option<&Cache>,
    progress: &Progress,
) -> Vec<StoreReport> {
    stores
        .par_iter()
        .enumerate()
        .map(|(i, store)| {
            let dir = scratch.join(format!("store-{i:06}"));
            let counted = AtomicU64::new(0);
            let counted_bytes = AtomicU64::new(0);
            let read = |rows_to: &dyn RowWriter| {
                let rows_to = Counted {
                    rows_to,
                    progress,
                    rows: &counted,
                    bytes: &counted_bytes,
                    limit: store_bytes(store),
                };
                // the scratch dir is created by the first snapshot the store takes
                let mut out = StoreOutput::new(store, home, options, &rows_to, dir.clone());
                let result = (REGISTRY[store.extractor].extract)(&mut out);
                let report = out.finish(result);
                // Snapshots are private copies: drop them as soon as the store is read.
                let _ = std::fs::remove_dir_all(&dir);
                report
            };
            let report = match cache {
                Some(c) => c.stage(store, home, stage, read),
                None => read(stage),
            };
            let rows = counted.load(Ordering::Relaxed);
            let bytes = counted_bytes
                .load(Ordering::Relaxed)
                .min(store_bytes(store));
            progress.store_read(store_bytes(store), report.rows, rows, bytes);
            report
        })
        .collect()
}
