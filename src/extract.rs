//! Extraction: every store in its own Rayon task, rows streamed in bounded
//! batches to the stage.
//!
//! ```text
//! Store ──extractor fn──▶ StoreOutput::push(EventRow) ─(every BATCH rows)─▶ Stage (Parquet per kind)
//!                         StoreOutput::diag(…)        ─────────────────────▶ diagnostics
//!                         StoreOutput::push_llm(…)    ─────────────────────▶ Stage (llm_calls)
//! ```
//! An extractor returns `Err(StoreError)` only when the whole store (or the
//! rest of it) cannot be read; rows pushed before that are kept.

use std::path::{Path, PathBuf};

use rayon::prelude::*;
use regex::Regex;

use crate::diag::{DiagKind, Diagnostic};
use crate::discover::Store;
use crate::schema::{EventRow, LlmCallRow, TurnType};
use crate::stage::{Stage, StageError};

/// Rows per staged batch, and the text bytes that flush a batch early: the
/// most any store holds in memory at once (one huge line is one row).
pub const BATCH: usize = 4096;
pub const BATCH_BYTES: usize = 16 << 20;

/// The dedup key of a text: the text itself when short, else its SHA-256
/// (equal texts give equal keys; the views never hold a text twice).
pub fn match_key(text: String) -> String {
    use sha2::Digest;
    if text.len() <= 72 {
        return text;
    }
    let d = sha2::Sha256::digest(text.as_bytes());
    format!(
        "sha256:{}",
        d.iter().map(|b| format!("{b:02x}")).collect::<String>()
    )
}

/// Options that change what extractors emit.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Emit WebUI `reasoning_end` records as `thinking` rows.
    pub include_thinking: bool,
    /// Extra secret shapes (`--secret-pattern`), searched anywhere in a value.
    pub secret_patterns: Vec<Regex>,
}

/// A store that could not be read (or not read to its end).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Unreadable(String),
    #[error("staging failed: {0}")]
    Stage(#[from] StageError),
}

impl StoreError {
    pub fn io(what: &str, e: std::io::Error) -> StoreError {
        StoreError::Unreadable(format!("{what}: {e}"))
    }
}

/// Per-store result for the `sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    pub rows: u64,
    pub status: &'static str,
    pub diagnostics: Vec<Diagnostic>,
    /// The largest row (text + native bytes) the store yielded.
    pub max_row_bytes: usize,
    /// Set when staging itself failed: the run must stop (exit 2).
    pub fatal: Option<String>,
}

/// What an extractor writes to.
pub struct StoreOutput<'a> {
    pub store: &'a Store,
    pub home: &'a Path,
    pub options: &'a ExtractOptions,
    /// A private directory for this store's scratch files (SQLite snapshots).
    pub scratch: PathBuf,
    stage: &'a Stage,
    buf: Vec<EventRow>,
    buf_bytes: usize,
    max_row_bytes: usize,
    llm: Vec<LlmCallRow>,
    rows: u64,
    diagnostics: Vec<Diagnostic>,
}

impl<'a> StoreOutput<'a> {
    pub fn new(
        store: &'a Store,
        home: &'a Path,
        options: &'a ExtractOptions,
        stage: &'a Stage,
        scratch: PathBuf,
    ) -> Self {
        StoreOutput {
            store,
            home,
            options,
            scratch,
            stage,
            buf: Vec::new(),
            buf_bytes: 0,
            max_row_bytes: 0,
            llm: Vec::new(),
            rows: 0,
            diagnostics: Vec::new(),
        }
    }

    /// Add a row; the store's identity fills what the row leaves empty.
    pub fn push(&mut self, mut row: EventRow) -> Result<(), StoreError> {
        row.agent.get_or_insert(self.store.agent);
        if row.instance.is_empty() {
            row.instance.clone_from(&self.store.instance);
        }
        if row.source_kind.is_empty() {
            row.source_kind = self.store.kind;
        }
        if row.source_path.is_empty() {
            row.source_path.clone_from(&self.store.rel);
        }
        row.x_match = match row.turn_type {
            // tool rows pair on tool_use_id; their text is not a key
            TurnType::ToolUse | TurnType::ToolResult => None,
            _ => row.x_match.take().map(match_key),
        };
        let bytes =
            row.text.as_ref().map_or(0, String::len) + row.native.as_ref().map_or(0, String::len);
        self.max_row_bytes = self.max_row_bytes.max(bytes);
        self.buf_bytes += bytes;
        self.buf.push(row);
        self.rows += 1;
        if self.buf.len() >= BATCH || self.buf_bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Add an `llm_calls` row.
    pub fn push_llm(&mut self, row: LlmCallRow) -> Result<(), StoreError> {
        self.llm.push(row);
        self.rows += 1;
        if self.llm.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Record a diagnostic about this store (`line` = 1-based line or rowid).
    pub fn diag(
        &mut self,
        kind: DiagKind,
        path: Option<&str>,
        line: Option<i64>,
        message: impl Into<String>,
    ) {
        let mut d = Diagnostic::new(kind, path.unwrap_or(&self.store.rel), message)
            .of(self.store.agent, &self.store.instance);
        d.source_line = line;
        self.diagnostics.push(d);
    }

    /// Record a fully built diagnostic (losses with codes and sessions).
    pub fn push_diag(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.buf.is_empty() {
            self.stage.write_events(self.store.kind, &self.buf)?;
            self.buf.clear();
            self.buf_bytes = 0;
        }
        if !self.llm.is_empty() {
            self.stage.write_llm_calls(&self.llm)?;
            self.llm.clear();
        }
        Ok(())
    }

    fn finish(mut self, result: Result<(), StoreError>) -> StoreReport {
        let mut fatal = None;
        match result.and_then(|()| self.flush()) {
            Ok(()) => {}
            Err(StoreError::Unreadable(msg)) => {
                self.diag(DiagKind::Unreadable, None, None, msg);
                // What was read before the failure is still staged.
                if let Err(e) = self.flush() {
                    fatal = Some(e.to_string());
                }
            }
            Err(StoreError::Stage(e)) => fatal = Some(e.to_string()),
        }
        let failed = self
            .diagnostics
            .iter()
            .any(|d| d.kind == DiagKind::Unreadable);
        let partial = self.diagnostics.iter().any(|d| d.kind.is_read_failure());
        let status = match (failed, partial) {
            (true, _) if self.rows == 0 => "failed",
            (true, _) | (false, true) => "partial",
            _ => "ok",
        };
        self.diagnostics.sort();
        StoreReport {
            max_row_bytes: self.max_row_bytes,
            rows: self.rows,
            status,
            diagnostics: self.diagnostics,
            fatal,
        }
    }
}

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
                .and_then(|()| (store.extractor().extract)(&mut out));
            let report = out.finish(result);
            // Snapshots are private copies: drop them as soon as the store is read.
            let _ = std::fs::remove_dir_all(&dir);
            report
        })
        .collect()
}
