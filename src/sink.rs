//! The sink: every output written to a temp name beside its destination,
//! then all renamed into place, so each file appears complete or not at all.
//!
//! ```text
//! <dir>/.<name>.nanoload-<pid>.tmp   written first (DuckDB COPY / ATTACH)
//! <dir>/<name>                        renamed into place once every output is written
//!
//! Outputs { out: OUT.parquet, tables: --tables DIR/<table>.parquet ×5, db: --db FILE,
//!           dataset: --dataset DIR/<table>/host=NAME/part-0.parquet ×6 (src/dataset.rs),
//!           summary_json: --summary-json FILE (written by commit, from the summary) }
//! ```
//! A run first removes stale `.<name>.nanoload-<pid>.tmp` files a killed run
//! left for the same output names — only those whose process no longer
//! exists ([`crate::rundir::process_alive`]: a load running beside this
//! one keeps its temps) — and nothing else. Each output is a
//! [`crate::atomic::Pending`] file; OUT.parquet is written by
//! [`crate::events_writer::write_events`] from the engine's narrow plan and
//! the stage's blob files, the other tables by DuckDB's COPY.
//!
//! Every destination is checked when the run starts and again before the
//! first rename (its directory takes a file; it is not a directory, nor
//! another user's file in a sticky directory; a dataset's partition
//! directories are directories or absent): a failed check replaces nothing
//! (exit 2). The renames then run in one order — OUT, `--tables`, `--db`,
//! the dataset's partitions, `--summary-json` last — and one that still
//! fails stops the commit with every output named new or old
//! ([`PartialCommit`], exit 3).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::atomic::Pending;
use crate::config::OutputPaths;
use crate::dataset::Dataset;
use crate::dest::Output;
use crate::engine::{Engine, sql_str};

pub use crate::engine::TABLES;

/// An output that could not be written (exit code 2, nothing left behind).
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {message}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub message: String,
}

impl OutputError {
    fn new(path: &Path, message: impl std::fmt::Display) -> OutputError {
        OutputError {
            path: path.to_path_buf(),
            message: crate::diag::one_line(&message.to_string()),
        }
    }
}

/// Every output of the run, each by name.
pub struct Outputs {
    pub out: Option<Pending>,
    /// `--tables`: one file per [`TABLES`] entry, in that order.
    pub tables: Vec<(&'static str, Pending)>,
    pub db: Option<Pending>,
    /// `--dataset DIR --host NAME`.
    pub dataset: Option<Dataset>,
    /// `--summary-json`: written and renamed by [`Outputs::commit`].
    pub summary_json: Option<Pending>,
    /// A `--tables` directory this run created: removed again if still empty.
    _created_dir: Option<EmptyDirGuard>,
}

impl Outputs {
    /// Create a missing `--tables` directory, remove stale temps of these
    /// outputs, and check each directory accepts a file (before any work).
    pub fn prepare(paths: &OutputPaths) -> Result<Outputs, OutputError> {
        let created_dir = match &paths.tables {
            Some(d) if !d.exists() => {
                std::fs::create_dir_all(d).map_err(|e| OutputError::new(d, e))?;
                Some(EmptyDirGuard(d.clone()))
            }
            _ => None,
        };
        let tables = match &paths.tables {
            Some(d) => TABLES
                .iter()
                .map(|t| {
                    let p = Pending::new(&d.join(format!("{t}.parquet")), Output::Table(t));
                    (*t, p)
                })
                .collect(),
            None => Vec::new(),
        };
        let dataset = match &paths.dataset {
            Some((dir, host)) => {
                Some(Dataset::prepare(dir, host).map_err(|e| OutputError::new(dir, e))?)
            }
            None => None,
        };
        if let Some(Err((path, e))) = dataset.as_ref().map(Dataset::probe) {
            return Err(OutputError::new(&path, e));
        }
        let outputs = Outputs {
            out: paths
                .out
                .as_deref()
                .map(|p| Pending::new(p, Output::Events)),
            tables,
            db: paths
                .db
                .as_deref()
                .map(|p| Pending::new(p, Output::Database)),
            dataset,
            summary_json: paths
                .summary_json
                .as_deref()
                .map(|p| Pending::new(p, Output::Summary)),
            _created_dir: created_dir,
        };
        for p in outputs.all() {
            p.clean_stale();
            p.probe().map_err(|e| OutputError::new(&p.dest, e))?;
        }
        Ok(outputs)
    }

    /// OUT, then the `--tables` files, the `--db` file, the `--summary-json` file.
    pub fn all(&self) -> impl Iterator<Item = &Pending> {
        self.out
            .iter()
            .chain(self.tables.iter().map(|(_, p)| p))
            .chain(self.db.iter())
            .chain(self.summary_json.iter())
    }

    /// Destination paths, in [`Outputs::all`] order, then the dataset's
    /// partition directories.
    pub fn paths(&self) -> Vec<PathBuf> {
        let files = self.all().map(|p| p.dest.clone());
        files
            .chain(self.dataset.iter().flat_map(Dataset::dests))
            .collect()
    }

    /// Write every output under its temp name; on failure none is left.
    pub fn write(
        &self,
        engine: &Engine,
        blobs: &BTreeMap<i32, PathBuf>,
        load_id: &str,
    ) -> Result<(), OutputError> {
        let first = self.paths().into_iter().next().unwrap_or_default();
        engine
            .for_writing()
            .map_err(|e| OutputError::new(&first, e))?;
        let written = self.write_all(engine.conn(), blobs, load_id);
        if written.is_err() {
            self.all().for_each(Pending::discard);
        }
        written
    }

    fn write_all(
        &self,
        conn: &Connection,
        blobs: &BTreeMap<i32, PathBuf>,
        load_id: &str,
    ) -> Result<(), OutputError> {
        // events are written once: to OUT, else to the dataset (then copied)
        let (events, dest) = match (&self.out, &self.dataset) {
            (Some(out), _) => (out.tmp.clone(), out.dest.clone()),
            (None, Some(ds)) => (ds.events_file(), ds.dir.clone()),
            (None, None) => return Ok(()),
        };
        crate::events_writer::write_events(conn, blobs, &events)
            .map_err(|e| OutputError::new(&dest, e))?;
        if let (Some(_), Some(ds)) = (&self.out, &self.dataset) {
            std::fs::copy(&events, ds.events_file()).map_err(|e| OutputError::new(&ds.dir, e))?;
        }
        if let Some(ds) = &self.dataset {
            ds.write_tables(conn, load_id)
                .map_err(|e| OutputError::new(&ds.dir, e))?;
        }
        for (t, p) in &self.tables {
            conn.execute_batch(&format!(
                "COPY ({}) TO {} (FORMAT parquet, COMPRESSION zstd)",
                crate::engine::side_table_rows(t, load_id),
                sql_str(&p.tmp)
            ))
            .map_err(|e| OutputError::new(&p.dest, e))?;
        }
        if let Some(p) = &self.db {
            // The same bytes whatever --threads, run after run: DuckDB lays
            // out a database written on several threads in the order its
            // workers finish, and its FSST, bitpacking and ALP segments
            // carry bytes that differ from run to run even on one thread
            // (docs/design.md "Atomic output"). So the file is written on
            // one thread without those four, and the engine's settings are
            // put back after it.
            let threads: i64 = conn
                .query_row("SELECT current_setting('threads')::BIGINT", [], |r| {
                    r.get(0)
                })
                .map_err(|e| OutputError::new(&p.dest, e))?;
            let mut script = format!(
                "SET threads = 1;\nSET disabled_compression_methods = 'fsst,bitpacking,alp,alprd';\n\
                 ATTACH {} AS outdb (STORAGE_VERSION 'v1.0.0');\n",
                sql_str(&p.tmp)
            );
            // OUT.parquet is already in order: copy it rather than sort again
            script.push_str(&format!(
                "CREATE TABLE outdb.events AS SELECT * FROM read_parquet({});\n",
                sql_str(&events)
            ));
            for t in TABLES {
                script.push_str(&format!(
                    "CREATE TABLE outdb.{t} AS {};\n",
                    crate::engine::side_table_rows(t, load_id)
                ));
            }
            script.push_str(&format!(
                "DETACH outdb;\nSET threads = {threads};\nRESET disabled_compression_methods;"
            ));
            conn.execute_batch(&script)
                .map_err(|e| OutputError::new(&p.dest, e))?;
        }
        Ok(())
    }

    /// Write the `--summary-json` file (`summary_json`, when asked for),
    /// check that every output can be put in place ([`Pending::check_dest`],
    /// [`Dataset::probe`]) — on failure all are discarded and none is
    /// replaced — then call `probed` (a test hook) and rename every output
    /// into place: the files, the dataset's partitions, the summary JSON
    /// last. A rename that still fails stops the commit: the outputs renamed
    /// before it are this run's, it and the rest are as they were
    /// ([`PartialCommit`], exit code 3).
    pub fn commit(&self, summary_json: &str, probed: impl FnOnce()) -> Result<(), CommitError> {
        let discard = || self.all().for_each(Pending::discard);
        if let Some(p) = &self.summary_json
            && let Err(e) = std::fs::write(&p.tmp, summary_json)
        {
            discard();
            return Err(OutputError::new(&p.dest, e).into());
        }
        for p in self.all() {
            if let Err(e) = p.check_dest().and_then(|()| p.check_tmp()) {
                discard();
                return Err(OutputError::new(&p.dest, e).into());
            }
        }
        if let Some(Err((path, e))) = self.dataset.as_ref().map(Dataset::probe) {
            discard();
            return Err(OutputError::new(&path, e).into());
        }
        probed();
        let steps = self.commit_steps();
        for (i, (dest, rename)) in steps.iter().enumerate() {
            if let Err(e) = rename() {
                discard();
                let error = OutputError::new(dest, e);
                if i == 0 {
                    return Err(error.into());
                }
                let paths = |s: &[CommitStep]| s.iter().map(|(p, _)| p.clone()).collect();
                return Err(PartialCommit {
                    error,
                    new: paths(&steps[..i]),
                    old: paths(&steps[i..]),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Every rename of the commit, in order, with the destination it puts
    /// in place: OUT, the `--tables` files, the `--db` file, each dataset
    /// partition, the `--summary-json` file (last: when it is there, all are).
    fn commit_steps(&self) -> Vec<CommitStep<'_>> {
        fn file(p: &Pending) -> CommitStep<'_> {
            (p.dest.clone(), Box::new(|| p.commit()))
        }
        let mut steps: Vec<CommitStep<'_>> = Vec::new();
        steps.extend(self.out.iter().map(file));
        steps.extend(self.tables.iter().map(|(_, p)| file(p)));
        steps.extend(self.db.iter().map(file));
        if let Some(ds) = &self.dataset {
            for (t, dest) in ds.partitions() {
                steps.push((dest, Box::new(move || ds.commit_table(t))));
            }
        }
        steps.extend(self.summary_json.iter().map(file));
        steps
    }
}

/// One rename of the commit: the destination, and the rename.
type CommitStep<'a> = (PathBuf, Box<dyn Fn() -> std::io::Result<()> + 'a>);

/// A commit that did not complete.
#[derive(Debug, thiserror::Error)]
pub enum CommitError {
    /// Nothing was replaced (exit code 2).
    #[error(transparent)]
    Nothing(#[from] OutputError),
    /// Some outputs were replaced, the others not (exit code 3).
    #[error(transparent)]
    Partly(#[from] PartialCommit),
}

/// A rename that failed after others succeeded: which outputs are this
/// run's and which are as they were before it (an earlier run's, or absent).
#[derive(Debug, thiserror::Error)]
#[error("{error}; the outputs are partly replaced: {} new, {} old", new.len(), old.len())]
pub struct PartialCommit {
    pub error: OutputError,
    /// Renamed into place by this run.
    pub new: Vec<PathBuf>,
    /// Not replaced: the failed one first, then the ones after it.
    pub old: Vec<PathBuf>,
}

impl PartialCommit {
    /// One stderr line per output: `new: <path>` or `old: <path>` (`old:
    /// <path> (absent)` when there is no earlier file).
    pub fn lines(&self) -> Vec<String> {
        let new = self.new.iter().map(|p| format!("new: {}", p.display()));
        let old = self.old.iter().map(|p| {
            let absent = std::fs::symlink_metadata(p).is_err();
            format!(
                "old: {}{}",
                p.display(),
                if absent { " (absent)" } else { "" }
            )
        });
        new.chain(old).collect()
    }
}

/// Removes a directory the run created when the run ends with it still empty.
struct EmptyDirGuard(PathBuf);

impl Drop for EmptyDirGuard {
    fn drop(&mut self) {
        // remove_dir only removes an empty directory: a finished run's stays.
        let _ = std::fs::remove_dir(&self.0);
    }
}
