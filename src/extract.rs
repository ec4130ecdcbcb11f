//! Extraction: every store in its own Rayon task, rows streamed in bounded
//! batches to the stage (the extractors' API is [`crate::store`]).
//!
//! ```text
//! [Store] ──REGISTRY[store.extractor].extract──▶ StoreOutput ──(every BATCH rows)──▶ Stage
//!                                                         └──▶ StoreReport (rows, status, diagnostics)
//! ```

use std::path::Path;

use rayon::prelude::*;

use crate::sources::REGISTRY;
use crate::stage::Stage;
use crate::store::{ExtractOptions, Store, StoreError, StoreOutput, StoreReport};

/// Run every store's extractor in parallel (on the current Rayon pool).
/// Reports come back in store order, whatever the scheduling.
pub fn extract_all(
    stores: &[Store],
    home: &Path,
    options: &ExtractOptions,
    stage: &Stage,
    scratch: &Path,
) -> Vec<StoreReport> {
    stores
        .par_iter()
        .enumerate()
        .map(|(i, store)| {
            let dir = scratch.join(format!("store-{i:06}"));
            let mut out = StoreOutput::new(store, home, options, stage, dir.clone());
            let result = std::fs::create_dir_all(&dir)
                .map_err(|e| {
                    StoreError::Unreadable(format!("cannot create scratch directory: {e}"))
                })
                .and_then(|()| (REGISTRY[store.extractor].extract)(&mut out));
            let report = out.finish(result);
            // Snapshots are private copies: drop them as soon as the store is read.
            let _ = std::fs::remove_dir_all(&dir);
            report
        })
        .collect()
}
