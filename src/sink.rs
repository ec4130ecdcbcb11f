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
//! exists ([`crate::workspace::process_alive`]: a load running beside this
//! one keeps its temps) — and nothing else. OUT.parquet is written by
//! [`write_events`] from the engine's narrow plan and the stage's blob
//! files; the other tables by DuckDB's COPY.
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
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, ArrowPrimitiveType, AsArray, PrimitiveArray, StringBuilder};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Int32Type, Int64Type, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;
use duckdb::Connection;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::compute_leaves;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::config::OutputPaths;
use crate::dataset::Dataset;
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
                .map(|t| (*t, Pending::new(&d.join(format!("{t}.parquet")))))
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
            out: paths.out.as_deref().map(Pending::new),
            tables,
            db: paths.db.as_deref().map(Pending::new),
            dataset,
            summary_json: paths.summary_json.as_deref().map(Pending::new),
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
        write_events(conn, blobs, &events).map_err(|e| OutputError::new(&dest, e))?;
        if let (Some(_), Some(ds)) = (&self.out, &self.dataset) {
            std::fs::copy(&events, ds.events_file()).map_err(|e| OutputError::new(&ds.dir, e))?;
        }
        if let Some(ds) = &self.dataset {
            ds.write_tables(conn, load_id)
                .map_err(|e| OutputError::new(&ds.dir, e))?;
        }
        for (t, p) in &self.tables {
            conn.execute_batch(&format!(
                "COPY (SELECT * FROM {t} ORDER BY ALL) TO {} (FORMAT parquet, COMPRESSION zstd)",
                sql_str(&p.tmp)
            ))
            .map_err(|e| OutputError::new(&p.dest, e))?;
        }
        if let Some(p) = &self.db {
            let mut script = format!(
                "ATTACH {} AS outdb (STORAGE_VERSION 'v1.0.0');\n",
                sql_str(&p.tmp)
            );
            // OUT.parquet is already in order: copy it rather than sort again
            script.push_str(&format!(
                "CREATE TABLE outdb.events AS SELECT * FROM read_parquet({});\n",
                sql_str(&events)
            ));
            for t in TABLES {
                script.push_str(&format!(
                    "CREATE TABLE outdb.{t} AS SELECT * FROM {t} ORDER BY ALL;\n"
                ));
            }
            script.push_str("DETACH outdb;");
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

/// One output file being written.
#[derive(Debug, Clone)]
pub struct Pending {
    pub tmp: PathBuf,
    pub dest: PathBuf,
}

fn tmp_prefix(dest: &Path) -> String {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.nanoload-")
}

impl Pending {
    pub fn new(dest: &Path) -> Pending {
        let dir = dest.parent().map(Path::to_path_buf).unwrap_or_default();
        let tmp = dir.join(format!("{}{}.tmp", tmp_prefix(dest), std::process::id()));
        Pending {
            tmp,
            dest: dest.to_path_buf(),
        }
    }

    /// Remove temps a killed earlier run left for this destination: those
    /// named by a pid that is no longer a process.
    pub fn clean_stale(&self) {
        let dir = self
            .dest
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let prefix = tmp_prefix(&self.dest);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.filter_map(Result::ok) {
            let n = e.file_name().to_string_lossy().into_owned();
            let pid = n
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".tmp"))
                .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
                .and_then(|pid| pid.parse::<u32>().ok());
            let stale = pid.is_some_and(|pid| !crate::workspace::process_alive(pid));
            if stale && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Check the destination directory accepts a file and the destination
    /// can be replaced by one (before any work).
    pub fn probe(&self) -> std::io::Result<()> {
        std::fs::File::create(&self.tmp)?;
        let replaceable = self.check_dest();
        std::fs::remove_file(&self.tmp)?;
        replaceable
    }

    /// Whether renaming the temp file onto the destination would be
    /// refused: the destination is a directory (`rename` gives `EISDIR`), or
    /// another user's file in a sticky directory (`/tmp`) that is not ours
    /// either (`EPERM`; the temp file's owner is who we write as).
    pub fn check_dest(&self) -> std::io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let Ok(dest) = std::fs::symlink_metadata(&self.dest) else {
            return Ok(());
        };
        if dest.is_dir() {
            return Err(std::io::Error::other("it is a directory"));
        }
        let dir = self.tmp.parent().map(std::fs::metadata).transpose()?;
        let me = std::fs::metadata(&self.tmp).map(|m| m.uid());
        if let (Some(dir), Ok(me)) = (dir, me)
            && dir.mode() & 0o1000 != 0
            && me != 0
            && me != dest.uid()
            && me != dir.uid()
        {
            return Err(std::io::Error::other(format!(
                "it is owned by uid {} in a sticky directory: it cannot be replaced",
                dest.uid()
            )));
        }
        Ok(())
    }

    /// The temp file is there to be renamed.
    fn check_tmp(&self) -> std::io::Result<()> {
        match std::fs::symlink_metadata(&self.tmp) {
            Ok(m) if m.is_file() => Ok(()),
            Ok(_) => Err(std::io::Error::other(format!(
                "{} is not a file",
                self.tmp.display()
            ))),
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", self.tmp.display()),
            )),
        }
    }

    pub fn discard(&self) {
        let _ = std::fs::remove_file(&self.tmp);
        let mut wal = self.tmp.clone().into_os_string();
        wal.push(".wal");
        let _ = std::fs::remove_file(PathBuf::from(wal));
    }

    pub fn commit(&self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.dest)
    }
}

/// Text bytes per row group of OUT.parquet: the writer buffers a whole
/// group and a reader reads a column chunk at once (DuckDB's default of
/// 122 880 rows is kept when rows are small; 2 048 rows is the least).
const ROW_GROUP_BYTES: i64 = 4 << 20;

/// The zstd level of OUT.parquet.
const ZSTD_LEVEL: i32 = 1;

/// The columns of `events_plan` after the contract's: where a row's text
/// and native are (see [`crate::stage`]).
const PLAN_COLUMNS: &str = "x_wide, x_blob, x_off, x_text_len, x_native_len";

/// The tables V016 looks a plan row's repeated strings up in, each with its
/// key: the plan holds the key, dense from 1, and the row's columns are the
/// table's (`sess_id` → agent, instance, session_id, session_uid;
/// `store_id` → source_kind, source_role, source_path, load_id).
const PLAN_DIMENSIONS: [(&str, &str); 2] =
    [("plan_sessions", "sess_id"), ("plan_stores", "store_id")];

/// An error of the events writer, on one line.
pub type WriteError = Box<dyn std::error::Error + Send + Sync>;

/// Write `events` to the Parquet file `dest` in the output order
/// (docs/design.md "Output order"): V016's
/// `events_plan` holds every row's narrow columns in out_pos order, the
/// strings a session or a store repeats as ids into small tables
/// ([`PLAN_DIMENSIONS`], read once); the plan is scanned once in its
/// stored order and cut into row groups, the ids looked up, and the text and
/// native of each row the steps did not read (`x_wide` false) read from the
/// blob files the stage wrote, so the engine never sorts, joins or copies
/// the wide values:
///
/// ```text
/// plan_sessions, plan_stores (one row per id)                        → in memory
/// SELECT plan columns, ids, x_wide, x_blob, x_off, x_text_len, x_native_len, out_pos
///   FROM events_plan                      (narrow; streamed, out_pos 1, 2, … checked)
/// every `group` rows:
///     ids → their strings; text, native ← blob-<x_blob>.bin at x_off (unless x_wide)
///                                                                    → one row group of dest
/// ```
pub fn write_events(
    conn: &Connection,
    blobs: &BTreeMap<i32, PathBuf>,
    dest: &Path,
) -> Result<(), WriteError> {
    let (total, rows): (i64, i64) = conn.query_row(
        "SELECT CAST(coalesce(sum(x_bytes), 0) AS BIGINT), count(*) FROM events_plan",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let group = (ROW_GROUP_BYTES * rows.max(1) / total.max(1)).clamp(2048, 122_880);
    let files = blobs
        .iter()
        .map(|(id, p)| Ok((*id, std::fs::File::open(p)?)))
        .collect::<std::io::Result<BTreeMap<i32, std::fs::File>>>()?;
    let fields = out_fields(conn)?;
    let layout = Layout::new(conn, &fields)?;
    let schema = Arc::new(Schema::new(fields));
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(ZSTD_LEVEL)?))
        .set_max_row_group_row_count(Some(group as usize))
        .set_column_dictionary_enabled(ColumnPath::from("text"), false)
        .set_column_dictionary_enabled(ColumnPath::from("native"), false)
        .build();
    let writer = ArrowWriter::try_new(std::fs::File::create(dest)?, schema.clone(), Some(props))?;
    // Encoding and compressing run on their own thread (a row group's columns
    // in parallel, see `encode`), while this one reads
    // the plan and the blobs (`None`: the row group ends).
    let (send, receive) = std::sync::mpsc::sync_channel::<Option<RecordBatch>>(4);
    std::thread::scope(|scope| {
        let encoder = scope.spawn(|| encode(writer, &schema, receive));
        let read = read_plan(conn, &files, &layout, &schema, (rows, group), &send);
        drop(send);
        let encoded = encoder
            .join()
            .map_err(|_| WriteError::from("the Parquet encoder panicked"))?;
        // a failed encoder ends the reading early: its error is the cause
        encoded.and(read)
    })
}

/// Where an output column comes from.
enum Source {
    /// The plan's column at this index of the plan query.
    Plan(usize),
    /// A column of a dimension table, looked up by the key at this index of
    /// the plan query (value `k` is the table's row `k - 1`).
    Dimension {
        key_at: usize,
        values: ArrayRef,
    },
    /// Filled from the staged columns or the blob files.
    Text,
    Native,
}

/// The query of the plan and where each output column comes from.
struct Layout {
    select: String,
    /// One per output column, in output order.
    sources: Vec<Source>,
    /// The index of the first of [`PLAN_COLUMNS`] in the plan query.
    where_at: usize,
    /// The index of `out_pos` in the plan query (after [`PLAN_COLUMNS`]).
    pos_at: usize,
    text_at: usize,
    native_at: usize,
}

impl Layout {
    fn new(conn: &Connection, fields: &[Field]) -> Result<Layout, WriteError> {
        let plan = column_names(conn, "events_plan")?;
        let mut selected: Vec<String> = Vec::new();
        let mut select_at = |name: &str| match selected.iter().position(|c| c == name) {
            Some(i) => i,
            None => {
                selected.push(name.to_string());
                selected.len() - 1
            }
        };
        // the dimension tables, read only when a column is not in the plan
        let mut dimensions = Vec::new();
        if fields.iter().any(|f| {
            let name = f.name().as_str();
            name != "text" && name != "native" && !plan.iter().any(|c| c == name)
        }) {
            for (table, key) in PLAN_DIMENSIONS {
                dimensions.push((key, dimension(conn, table, key)?));
            }
        }
        let mut sources = Vec::with_capacity(fields.len());
        for f in fields {
            let name = f.name().as_str();
            let found = dimensions
                .iter()
                .find_map(|(key, cols)| cols.get(name).map(|v| (*key, v.clone())));
            sources.push(if name == "text" || name == "native" {
                select_at(name);
                if name == "text" {
                    Source::Text
                } else {
                    Source::Native
                }
            } else if plan.iter().any(|c| c == name) {
                Source::Plan(select_at(name))
            } else if let Some((key, values)) = found {
                Source::Dimension {
                    key_at: select_at(key),
                    values,
                }
            } else {
                return Err(format!("events.{name}: neither in events_plan nor looked up").into());
            });
        }
        let text_at = column_index(&selected, "text")?;
        let native_at = column_index(&selected, "native")?;
        let where_at = selected.len();
        let pos_at = where_at + PLAN_COLUMNS.split(", ").count();
        let select = format!(
            "SELECT {}, {PLAN_COLUMNS}, out_pos FROM events_plan",
            selected.join(", ")
        );
        Ok(Layout {
            select,
            sources,
            where_at,
            pos_at,
            text_at,
            native_at,
        })
    }
}

/// A dimension table's columns but its key, each as one array indexed by
/// key − 1 (checked: the keys are 1…n in order).
fn dimension(
    conn: &Connection,
    table: &str,
    key: &str,
) -> Result<BTreeMap<String, ArrayRef>, WriteError> {
    let mut stmt = conn.prepare(&format!("SELECT * FROM {table} ORDER BY {key}"))?;
    let batches: Vec<RecordBatch> = stmt.query_arrow([])?.collect();
    let schema = stmt.schema();
    let all = arrow::compute::concat_batches(&schema, &batches)?;
    let key_at = schema.index_of(key)?;
    let keys = cast(all.column(key_at), &DataType::Int64)?;
    let dense = keys
        .as_primitive::<Int64Type>()
        .iter()
        .enumerate()
        .all(|(i, k)| k == Some(i as i64 + 1));
    if !dense {
        return Err(format!("{table}.{key}: not 1…n").into());
    }
    Ok(schema
        .fields()
        .iter()
        .zip(all.columns())
        .filter(|(f, _)| f.name() != key)
        .map(|(f, c)| (f.name().clone(), c.clone()))
        .collect())
}

fn column_names(conn: &Connection, table: &str) -> Result<Vec<String>, WriteError> {
    let mut stmt = conn.prepare(&format!("SELECT column_name FROM (DESCRIBE {table})"))?;
    Ok(stmt
        .query_map([], |r| r.get(0))?
        .collect::<duckdb::Result<_>>()?)
}

/// Write each batch received; `None` ends a row group. Whole row groups
/// are encoded and compressed in parallel, one per thread (as many as
/// rayon's pool has: the extraction threads are idle by now), each column
/// by one [`parquet::arrow::arrow_writer::ArrowColumnWriter`], and appended
/// in row-group order, columns in schema order: the same bytes as
/// [`ArrowWriter`]'s own flush. By groups, not by columns: `text` is about
/// 90 % of a group's bytes, so one group's columns kept one core busy.
/// A group is handed out only while fewer than `2 × threads` wait to be
/// appended, so a slow group (one huge row) does not let the others pile up.
fn encode(
    writer: ArrowWriter<std::fs::File>,
    schema: &Schema,
    receive: std::sync::mpsc::Receiver<Option<RecordBatch>>,
) -> Result<(), WriteError> {
    use std::sync::{Condvar, Mutex, mpsc};
    type Chunks = Vec<parquet::arrow::arrow_writer::ArrowColumnChunk>;
    let (mut file, factory) = writer.into_serialized_writer()?;
    let threads = rayon::current_num_threads().max(1);
    let (to_encode, groups) = mpsc::sync_channel::<(usize, Vec<RecordBatch>)>(threads);
    // the workers own the receiving end: when they have all stopped (an
    // error), sending fails instead of blocking
    let groups = Arc::new(Mutex::new(groups));
    let (to_append, encoded) = mpsc::channel::<Result<(usize, Chunks), WriteError>>();
    // groups appended so far (usize::MAX once the appender has stopped)
    let appended = (Mutex::new(0usize), Condvar::new());
    let set_appended = |n: usize| {
        if let Ok(mut a) = appended.0.lock() {
            *a = n;
        }
        appended.1.notify_all();
    };
    let encode_group = |group: usize, batches: &[RecordBatch]| -> Result<Chunks, WriteError> {
        let writers = factory.create_column_writers(group)?;
        if writers.len() != schema.fields().len() {
            return Err("events: a nested column (one writer per field expected)".into());
        }
        let mut chunks = Vec::with_capacity(writers.len());
        for (i, mut w) in writers.into_iter().enumerate() {
            for b in batches {
                for leaf in compute_leaves(schema.field(i), b.column(i))? {
                    w.write(&leaf)?;
                }
            }
            chunks.push(w.close()?);
        }
        Ok(chunks)
    };
    std::thread::scope(|scope| -> Result<(), WriteError> {
        for _ in 0..threads {
            let (groups, to_append) = (groups.clone(), to_append.clone());
            scope.spawn(move || {
                loop {
                    // one worker waits for the next group, the others for the lock
                    let next = groups.lock().map(|g| g.recv());
                    let Ok(Ok((group, batches))) = next else {
                        break;
                    };
                    let done = encode_group(group, &batches).map(|c| (group, c));
                    if to_append.send(done).is_err() {
                        break;
                    }
                }
            });
        }
        drop((to_append, groups));
        // the appender, in row-group order
        let (file, set_appended) = (&mut file, &set_appended);
        let append = scope.spawn(move || {
            let appending = || -> Result<(), WriteError> {
                let mut waiting: BTreeMap<usize, Chunks> = BTreeMap::new();
                let mut next = 0;
                for done in encoded {
                    let (group, chunks) = done?;
                    waiting.insert(group, chunks);
                    while let Some(chunks) = waiting.remove(&next) {
                        let mut row_group = file.next_row_group()?;
                        for chunk in chunks {
                            chunk.append_to_row_group(&mut row_group)?;
                        }
                        row_group.close()?;
                        next += 1;
                        set_appended(next);
                    }
                }
                if !waiting.is_empty() {
                    return Err("a row group was not encoded".into());
                }
                Ok(())
            };
            let done = appending();
            // whatever happened, the hand-out below stops waiting
            set_appended(usize::MAX);
            done
        });
        let mut batches: Vec<RecordBatch> = Vec::new();
        let mut group = 0;
        for batch in receive {
            match batch {
                Some(b) => batches.push(b),
                None if batches.is_empty() => {}
                None => {
                    let ahead = appended.0.lock().and_then(|a| {
                        appended
                            .1
                            .wait_while(a, |a| group >= a.saturating_add(2 * threads))
                    });
                    drop(ahead.map_err(|_| WriteError::from("the Parquet appender panicked"))?);
                    // a failed encoder or appender has dropped its end
                    if to_encode
                        .send((group, std::mem::take(&mut batches)))
                        .is_err()
                    {
                        break;
                    }
                    group += 1;
                }
            }
        }
        drop(to_encode);
        append
            .join()
            .map_err(|_| WriteError::from("the Parquet appender panicked"))?
    })?;
    file.close()?;
    Ok(())
}

/// The most bytes one read of a blob file fetches for a run of rows
/// (a single longer row is read whole).
const MAX_READ: u64 = 4 << 20;

/// Stream `events_plan` once, in its stored order (out_pos 1, 2, …,
/// checked row by row, and `rows` of them in all), cut it into row groups
/// of `group` rows, fill in the blob texts and send each group as one
/// batch, then `None`.
///
/// One scan: a range query per row group (`out_pos` between two
/// parameters, sorted) cost 8 ms each, 2 of the write's 2.9 s at 1 GB.
/// DuckDB returns a table's rows in insertion order
/// (`preserve_insertion_order`, set by the engine), and V016 inserts them
/// sorted; a row out of place ends the write with an error. A group is
/// sent as one batch, so its pages do not depend on DuckDB's chunk sizes.
fn read_plan(
    conn: &Connection,
    files: &BTreeMap<i32, std::fs::File>,
    layout: &Layout,
    schema: &Arc<Schema>,
    (rows, group): (i64, i64),
    send: &std::sync::mpsc::SyncSender<Option<RecordBatch>>,
) -> Result<(), WriteError> {
    let mut stmt = conn.prepare(&layout.select)?;
    let mut buf = Vec::new();
    let mut parts: Vec<RecordBatch> = Vec::new();
    let (mut in_group, mut next_pos) = (0i64, 1i64);
    let mut flush = |parts: &mut Vec<RecordBatch>| -> Result<(), WriteError> {
        let Some(first) = parts.first() else {
            return Ok(());
        };
        let plan = arrow::compute::concat_batches(&first.schema(), parts.iter())?;
        parts.clear();
        let filled = fill_group(&plan, files, layout, schema, &mut buf)?;
        send.send(Some(filled))
            .and_then(|()| send.send(None))
            .map_err(|_| "the Parquet encoder stopped".into())
    };
    for batch in stmt.stream_arrow([])? {
        let batch = batch?;
        let pos = plan_column::<Int64Type>(&batch, layout.pos_at, "out_pos")?;
        for p in pos.iter() {
            if p != Some(next_pos) {
                let p = p.map_or("NULL".to_string(), |p| p.to_string());
                return Err(format!(
                    "events_plan: out_pos {p} where {next_pos} was due (rows out of order)"
                )
                .into());
            }
            next_pos += 1;
        }
        let mut start = 0;
        while start < batch.num_rows() {
            let take = (batch.num_rows() - start).min((group - in_group) as usize);
            parts.push(batch.slice(start, take));
            (start, in_group) = (start + take, in_group + take as i64);
            if in_group == group {
                flush(&mut parts)?;
                in_group = 0;
            }
        }
    }
    if next_pos - 1 != rows {
        return Err(format!(
            "events_plan: {} rows read where {rows} were counted",
            next_pos - 1
        )
        .into());
    }
    flush(&mut parts)
}

/// One row group of the plan with its text and native filled in from the
/// staged columns or the blob files, and the ids looked up.
fn fill_group(
    batch: &RecordBatch,
    files: &BTreeMap<i32, std::fs::File>,
    layout: &Layout,
    schema: &Arc<Schema>,
    buf: &mut Vec<u8>,
) -> Result<RecordBatch, WriteError> {
    let n = layout.where_at;
    let wide = batch
        .column(n)
        .as_boolean_opt()
        .ok_or("events_plan.x_wide: not BOOLEAN")?;
    let blob = plan_column::<Int32Type>(batch, n + 1, "x_blob")?;
    let off = plan_column::<Int64Type>(batch, n + 2, "x_off")?;
    let text_len = plan_column::<Int64Type>(batch, n + 3, "x_text_len")?;
    let native_len = plan_column::<Int64Type>(batch, n + 4, "x_native_len")?;
    let staged_text = cast(batch.column(layout.text_at), &DataType::Utf8)?;
    let staged_native = cast(batch.column(layout.native_at), &DataType::Utf8)?;
    let (staged_text, staged_native) = (
        staged_text.as_string::<i32>(),
        staged_native.as_string::<i32>(),
    );
    let blob_row = |i: usize| -> Option<(i32, u64, Option<usize>, Option<usize>)> {
        if wide.is_null(i) || wide.value(i) {
            return None;
        }
        let tl = text_len.is_valid(i).then(|| text_len.value(i) as usize);
        let nl = native_len.is_valid(i).then(|| native_len.value(i) as usize);
        Some((blob.value(i), off.value(i) as u64, tl, nl))
    };
    // sized up front: grown by doubling, the two buffers of a group
    // were a third of the run's page faults
    let (mut text_bytes, mut native_bytes) = (0, 0);
    for i in 0..batch.num_rows() {
        let (t, n) = match blob_row(i) {
            Some((_, _, tl, nl)) => (tl.unwrap_or(0), nl.unwrap_or(0)),
            None => (
                staged_text.value_length(i) as usize,
                staged_native.value_length(i) as usize,
            ),
        };
        text_bytes += t;
        native_bytes += n;
    }
    let mut text = StringBuilder::with_capacity(batch.num_rows(), text_bytes);
    let mut native = StringBuilder::with_capacity(batch.num_rows(), native_bytes);
    let len = |tl: Option<usize>, nl: Option<usize>| (tl.unwrap_or(0) + nl.unwrap_or(0)) as u64;
    let mut i = 0;
    while i < batch.num_rows() {
        let Some((file_id, start, _, _)) = blob_row(i) else {
            text.append_option(staged_text.is_valid(i).then(|| staged_text.value(i)));
            native.append_option(staged_native.is_valid(i).then(|| staged_native.value(i)));
            i += 1;
            continue;
        };
        // the run of rows whose texts follow each other in one blob
        // file: one read for all of them
        let (mut end, mut stop) = (i, start);
        while end < batch.num_rows() {
            let Some((f, o, tl, nl)) = blob_row(end) else {
                break;
            };
            if f != file_id || o != stop || (end > i && stop - start >= MAX_READ) {
                break;
            }
            stop = o + len(tl, nl);
            end += 1;
        }
        let file = files
            .get(&file_id)
            .ok_or("a row names a blob file the stage did not write")?;
        buf.resize((stop - start) as usize, 0);
        file.read_exact_at(buf, start)?;
        for r in i..end {
            let Some((_, o, tl, nl)) = blob_row(r) else {
                break;
            };
            let at = (o - start) as usize;
            let (t, nat) = buf[at..at + len(tl, nl) as usize].split_at(tl.unwrap_or(0));
            text.append_option(tl.map(|_| std::str::from_utf8(t)).transpose()?);
            native.append_option(nl.map(|_| std::str::from_utf8(nat)).transpose()?);
        }
        i = end;
    }
    let (mut text, mut native) = (Some(text.finish()), Some(native.finish()));
    let mut out: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
    for (source, f) in layout.sources.iter().zip(schema.fields()) {
        out.push(match source {
            Source::Text => Arc::new(text.take().ok_or("events.text: twice")?),
            Source::Native => Arc::new(native.take().ok_or("events.native: twice")?),
            Source::Plan(at) => cast(batch.column(*at), f.data_type())?,
            Source::Dimension { key_at, values } => {
                // key k is the dimension's row k − 1
                let keys = cast(batch.column(*key_at), &DataType::Int64)?;
                let rows = keys
                    .as_primitive::<Int64Type>()
                    .iter()
                    .map(|k| match k {
                        Some(k) if k >= 1 && k as usize <= values.len() => Ok(Some((k - 1) as u32)),
                        Some(k) => Err(format!("{}: no key {k}", f.name())),
                        None => Ok(None),
                    })
                    .collect::<Result<arrow::array::UInt32Array, _>>()?;
                cast(&arrow::compute::take(values, &rows, None)?, f.data_type())?
            }
        });
    }
    Ok(RecordBatch::try_new(schema.clone(), out)?)
}

/// A column of a plan batch as the integer type the plan declares.
fn plan_column<'a, T: ArrowPrimitiveType>(
    batch: &'a RecordBatch,
    at: usize,
    name: &str,
) -> Result<&'a PrimitiveArray<T>, WriteError> {
    batch
        .column(at)
        .as_primitive_opt::<T>()
        .ok_or_else(|| format!("events_plan.{name}: not {}", T::DATA_TYPE).into())
}

fn column_index(columns: &[String], name: &str) -> Result<usize, WriteError> {
    columns
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| format!("events has no column {name}").into())
}

/// The Parquet fields of OUT: `events`' columns with DuckDB's types as
/// DuckDB's own writer stores them (strings UTF-8, TIMESTAMPTZ as UTC
/// microseconds, TIMESTAMP as naive microseconds), every column optional.
fn out_fields(conn: &Connection) -> Result<Vec<Field>, WriteError> {
    let mut stmt = conn.prepare("SELECT column_name, column_type FROM (DESCRIBE events)")?;
    let columns: Vec<(String, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<duckdb::Result<_>>()?;
    columns
        .iter()
        .map(|(c, t)| {
            let dt = match t.as_str() {
                "VARCHAR" => DataType::Utf8,
                "BIGINT" => DataType::Int64,
                "INTEGER" => DataType::Int32,
                "BOOLEAN" => DataType::Boolean,
                "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, None),
                "TIMESTAMP WITH TIME ZONE" => {
                    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
                }
                other => return Err(format!("events.{c}: no Parquet type for {other}").into()),
            };
            Ok(Field::new(c, dt, true))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use duckdb::Connection;

    use crate::engine::sql_str;
    use std::collections::BTreeMap;

    /// A dead process's temp of this output goes; a live process's (a load
    /// running beside this one), another output's and any other file stay.
    #[test]
    fn stale_temps_of_this_output_are_removed_and_nothing_else() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let dest = d.path().join("out.parquet");
        let mut dead = std::process::Command::new("true").spawn()?;
        dead.wait()?;
        let (dead, live) = (dead.id(), std::process::id());
        let names = [
            format!(".out.parquet.nanoload-{dead}.tmp"),
            format!(".out.parquet.nanoload-{live}.tmp"),
            ".out.parquet.nanoload-x.tmp".into(),
            format!(".other.parquet.nanoload-{dead}.tmp"),
            "keep.txt".into(),
        ];
        for n in &names {
            std::fs::write(d.path().join(n), b"x")?;
        }
        Pending::new(&dest).clean_stale();
        let mut left: Vec<String> = std::fs::read_dir(d.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = names[1..].to_vec();
        want.sort();
        assert_eq!(left, want);
        Ok(())
    }

    /// The parallel encoder writes the bytes [`ArrowWriter`] writes itself
    /// for the same batches and row-group ends (three groups of several
    /// batches, an empty end between two, nulls, a long text).
    #[test]
    fn the_parallel_encoder_writes_the_bytes_of_arrow_writer() -> Result<(), WriteError> {
        use arrow::array::{Int64Array, StringArray};
        let dir = tempfile::tempdir()?;
        let schema = Arc::new(Schema::new(vec![
            Field::new("n", DataType::Int64, true),
            Field::new("text", DataType::Utf8, true),
            Field::new("kind", DataType::Utf8, true),
        ]));
        let level = ZstdLevel::try_new(ZSTD_LEVEL)?;
        let props = || {
            WriterProperties::builder()
                .set_compression(Compression::ZSTD(level))
                .set_column_dictionary_enabled(ColumnPath::from("text"), false)
                .build()
        };
        let mut sent: Vec<Option<RecordBatch>> = Vec::new();
        for group in 0..3i64 {
            for part in 0..4i64 {
                let base = group * 1000 + part * 250;
                let n: Int64Array = (base..base + 250)
                    .map(|i| (i % 11 != 0).then_some(i))
                    .collect();
                let text: StringArray = (base..base + 250)
                    .map(|i| {
                        (i % 13 != 0)
                            .then(|| format!("t{i}-{}", "y".repeat((i as usize * 7) % 900)))
                    })
                    .collect();
                let kind: StringArray = (base..base + 250)
                    .map(|i| Some(["user", "assistant", "tool"][i as usize % 3]))
                    .collect();
                sent.push(Some(RecordBatch::try_new(
                    schema.clone(),
                    vec![Arc::new(n), Arc::new(text), Arc::new(kind)],
                )?));
            }
            sent.push(None);
            if group == 1 {
                sent.push(None);
            }
        }
        let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
        let mut plain =
            ArrowWriter::try_new(std::fs::File::create(&a)?, schema.clone(), Some(props()))?;
        for batch in &sent {
            match batch {
                Some(b) => plain.write(b)?,
                None => plain.flush()?,
            }
        }
        plain.close()?;
        let (send, receive) = std::sync::mpsc::sync_channel(sent.len());
        for batch in sent {
            send.send(batch)?;
        }
        drop(send);
        let writer =
            ArrowWriter::try_new(std::fs::File::create(&b)?, schema.clone(), Some(props()))?;
        encode(writer, &schema, receive)?;
        let (a, b) = (std::fs::read(a)?, std::fs::read(b)?);
        assert!(a.len() > 20_000, "{} bytes", a.len());
        assert!(a == b, "{} bytes vs {} bytes", a.len(), b.len());
        Ok(())
    }

    /// 3 000 rows whose place (`out_pos`) is a permutation of their
    /// storage order, texts of 3–2 002 bytes (one of 50 000), a native on
    /// every third; every seventh row's text and native staged (`x_wide`),
    /// the others' in one blob file.
    #[test]
    fn events_are_written_in_out_pos_order_with_their_blob_texts() -> Result<(), WriteError> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open_in_memory()?;
        let mut blob = Vec::new();
        let mut rows = Vec::new();
        for i in 0..3000i64 {
            let pad = if i == 1500 {
                50_000
            } else {
                (i as usize * 31) % 2000
            };
            let text = format!("t{i}-{}", "x".repeat(pad));
            let native = (i % 3 == 0).then(|| format!("{{\"n\":{i}}}"));
            let wide = i % 7 == 0;
            let off = blob.len();
            if !wide {
                blob.extend_from_slice(text.as_bytes());
                blob.extend_from_slice(native.as_deref().unwrap_or("").as_bytes());
            }
            let q = |v: Option<&str>| v.map_or("NULL".to_string(), |v| format!("'{v}'"));
            rows.push(format!(
                "({i}, {pos}, {t}, {n}, {wide}, {b}, {off}, {tl}, {nl})",
                pos = (i * 1237) % 3000 + 1,
                t = q(wide.then_some(text.as_str())),
                n = q(native.as_deref().filter(|_| wide)),
                b = if wide { "NULL" } else { "1" },
                tl = text.len(),
                nl = native
                    .as_ref()
                    .map_or("NULL".to_string(), |n| n.len().to_string()),
            ));
        }
        let path = dir.path().join("blob-1.bin");
        std::fs::write(&path, &blob)?;
        conn.execute_batch(&format!(
            "CREATE TABLE plan (i BIGINT, out_pos BIGINT, text VARCHAR, native VARCHAR,
                 x_wide BOOLEAN, x_blob INTEGER, x_off BIGINT, x_text_len BIGINT, x_native_len BIGINT);
             INSERT INTO plan VALUES {};
             CREATE TABLE events_plan AS
             SELECT *, coalesce(x_text_len, 0) + coalesce(x_native_len, 0) AS x_bytes
             FROM plan ORDER BY out_pos;
             CREATE VIEW events AS SELECT i, text, native FROM events_plan;",
            rows.join(", ")
        ))?;
        let out = dir.path().join("out.parquet");
        write_events(&conn, &BTreeMap::from([(1, path)]), &out)?;
        // every row at its out_pos, with its own text and native
        let (n, ordered, same): (i64, bool, bool) = conn.query_row(
            &format!(
                "SELECT count(*), bool_and(p.out_pos = o.n),
                     bool_and(o.text = 't' || o.i || '-' || repeat('x', CASE WHEN o.i = 1500 THEN 50000 ELSE (o.i * 31) % 2000 END)
                              AND o.native IS NOT DISTINCT FROM CASE WHEN o.i % 3 = 0 THEN '{{\"n\":' || o.i || '}}' END)
                 FROM (SELECT *, row_number() OVER () AS n FROM read_parquet({})) o
                 JOIN plan p USING (i)",
                sql_str(&out)
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        assert_eq!((n, ordered, same), (3000, true, true));
        // the types DuckDB reads back
        let types: String = conn.query_row(
            &format!(
                "SELECT string_agg(column_type, ',') FROM (DESCRIBE SELECT * FROM read_parquet({}))",
                sql_str(&out)
            ),
            [],
            |r| r.get(0),
        )?;
        assert_eq!(types, "BIGINT,VARCHAR,VARCHAR");
        Ok(())
    }

    /// A plan whose stored order is not out_pos (V016 inserts it sorted;
    /// here it is not): the write stops with an error naming the first row
    /// out of place and leaves no row group behind it unchecked.
    #[test]
    fn a_plan_stored_out_of_order_is_an_error() -> Result<(), WriteError> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(
            "CREATE TABLE events_plan (i BIGINT, out_pos BIGINT, text VARCHAR, native VARCHAR,
                 x_wide BOOLEAN, x_blob INTEGER, x_off BIGINT, x_text_len BIGINT,
                 x_native_len BIGINT, x_bytes BIGINT);
             INSERT INTO events_plan VALUES
                 (1, 1, 'a', NULL, true, NULL, NULL, 1, NULL, 1),
                 (2, 3, 'c', NULL, true, NULL, NULL, 1, NULL, 1),
                 (3, 2, 'b', NULL, true, NULL, NULL, 1, NULL, 1);
             CREATE VIEW events AS SELECT i, text, native FROM events_plan;",
        )?;
        let out = dir.path().join("out.parquet");
        let err = write_events(&conn, &BTreeMap::new(), &out)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("events_plan: out_pos 3 where 2 was due (rows out of order)")
        );
        Ok(())
    }
}
