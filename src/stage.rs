//! Staging: Arrow batches written as Parquet into the run's private temp dir.
//!
//! ```text
//! <tmp>/stage/events-<source_kind>.parquet   one file per store kind (events_schema)
//! <tmp>/stage/llm_calls.parquet              llm_usage rows (llm_calls_schema)
//! <tmp>/stage/diagnostics.parquet            every diagnostic so far (diagnostics_schema)
//! <tmp>/stage/sources.parquet                one row per store (sources_schema)
//! <tmp>/stage/blob-<n>.bin                   the text and native bytes of the rows no SQL
//!                                            step reads, one file per extraction thread:
//!                                            row = text ‖ native at (x_blob, x_off), lengths
//!                                            x_text_len / x_native_len; read once, by the sink
//! ```
//! Writers are opened on first use and shared by the kind's tasks (one mutex
//! per file). Row groups are capped so a large store never sits in memory.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow::datatypes::SchemaRef;
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

use crate::diag::{Diagnostic, diagnostics_batch};
use crate::schema::{
    EventRow, LlmCallRow, SourceRow, WideRef, events_batch, events_schema, llm_calls_batch,
    llm_calls_schema, read_wide, sources_batch, steps_read_wide,
};
use crate::store::WriteError;

#[derive(Debug, thiserror::Error)]
pub enum StageError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parquet {
        path: PathBuf,
        source: parquet::errors::ParquetError,
    },
    #[error("building a batch: {0}")]
    Arrow(#[from] arrow::error::ArrowError),
    #[error("a staging writer was poisoned by a panic")]
    Poisoned,
    #[error("{0}: not a staged events file (column {1})")]
    NotStaged(PathBuf, &'static str),
}

/// The extractors write their rows here in a run.
impl crate::store::RowWriter for Stage {
    fn write_events(
        &self,
        kind: &'static str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), WriteError> {
        Ok(Stage::write_events(self, kind, rows, natives)?)
    }
    fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), WriteError> {
        Ok(Stage::write_llm_calls(self, rows)?)
    }
}

impl From<StageError> for WriteError {
    fn from(e: StageError) -> WriteError {
        WriteError::new(e)
    }
}

struct Writer {
    path: PathBuf,
    inner: ArrowWriter<File>,
}

type Slot = Arc<Mutex<Option<Writer>>>;

/// One append-only blob file (see the module docs).
struct Blob {
    path: PathBuf,
    file: BufWriter<File>,
    len: u64,
}

type BlobSlot = Arc<Mutex<Option<Blob>>>;

impl Blob {
    /// Append a row's text and native (either may be absent): the offset
    /// the text starts at, its native right after it.
    fn append(&mut self, parts: [Option<&str>; 2]) -> Result<i64, StageError> {
        let off = self.len as i64;
        for bytes in parts.into_iter().flatten() {
            self.file
                .write_all(bytes.as_bytes())
                .map_err(|source| StageError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            self.len += bytes.len() as u64;
        }
        Ok(off)
    }
}

/// The staged files of one run.
pub struct Stage {
    dir: PathBuf,
    slots: Mutex<BTreeMap<String, Slot>>,
    /// Blob files by number (1 + the Rayon thread index; 0 off the pool).
    blobs: Mutex<BTreeMap<i32, BlobSlot>>,
    /// `x_row` of the next staged row (the steps' row identity, unique in
    /// the run; which row gets which number depends on the scheduling, and
    /// no output depends on it).
    next_row: std::sync::atomic::AtomicI64,
    /// One blob file whatever the thread ([`Stage::entry`]).
    fixed_blob: Option<i32>,
    /// Every row's text and native in the staged columns ([`Stage::all_wide`]).
    all_wide: bool,
}

/// What staging produced: file paths by table.
#[derive(Debug, Default, Clone)]
pub struct Staged {
    pub events: Vec<PathBuf>,
    pub llm_calls: Vec<PathBuf>,
    /// Every diagnostic of discovery and extraction (`diagnostics.parquet`).
    pub diagnostics: PathBuf,
    /// One row per store (`sources.parquet`).
    pub sources: PathBuf,
    /// The blob files by number (`x_blob`).
    pub blobs: BTreeMap<i32, PathBuf>,
}

/// Staged columns whose values are (nearly) all different: no dictionary.
/// Interning values for dictionaries is a visible part of extraction, and
/// for these columns it buys nothing; the columns the steps group and join
/// on by value (paths, ids, roles) keep theirs, which DuckDB reads as
/// dictionary vectors (without any, the steps are slower on a large home).
/// The numbers and times too: a row group of 65 536 eight-byte values
/// never reaches the dictionary's 1 MiB page limit, so the writer would
/// intern every `x_row`, offset and time (BENCHMARKS.md "Staged numbers
/// without a dictionary").
const UNIQUE_COLUMNS: &[&str] = &[
    "text",
    "native",
    "tool_use_id",
    "x_record",
    "x_match",
    "x_msgkey",
    "x_content",
    "seq",
    "ts_utc",
    "ts_local",
    "source_line",
    "x_off",
    "x_text_len",
    "x_native_len",
    "x_row",
    "id",
    "started_at_ms",
    "duration_ms",
];

/// Staged event columns that say where a row's text is in this run's
/// stage, or which row of the run it is: a ledger does not keep them, and
/// [`Stage::write_kept`] makes them again.
pub const STAGE_ONLY: [&str; 6] = [
    "x_wide",
    "x_blob",
    "x_off",
    "x_text_len",
    "x_native_len",
    "x_row",
];

/// Row-group bounds of the staging files. DuckDB reads a column chunk as one
/// buffer and the writer holds a row group until it is full, so the byte
/// bound caps memory on both sides (a single larger row still fits alone).
const ROW_GROUP_ROWS: usize = 65_536;
const ROW_GROUP_BYTES: usize = 16 << 20;

impl Stage {
    pub fn new(dir: &Path) -> Result<Stage, StageError> {
        std::fs::create_dir_all(dir).map_err(|source| StageError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        Ok(Stage {
            dir: dir.to_path_buf(),
            slots: Mutex::new(BTreeMap::new()),
            blobs: Mutex::new(BTreeMap::new()),
            next_row: std::sync::atomic::AtomicI64::new(1),
            fixed_blob: None,
            all_wide: false,
        })
    }

    /// With `on`, every row's text and native go to the staged columns, as
    /// the rows the steps read do (`nanoload sync`: the ledger keeps them).
    pub fn all_wide(self, on: bool) -> Stage {
        Stage {
            all_wide: on,
            ..self
        }
    }

    /// The stage of one store's cache entry ([`crate::cache`]): the same
    /// files, one blob file (`blob-0.bin`), rows numbered from 1; closed
    /// with [`Stage::finish_entry`], read into a run with [`Stage::import`].
    pub fn entry(dir: &Path) -> Result<Stage, StageError> {
        Ok(Stage {
            fixed_blob: Some(ENTRY_BLOB),
            ..Stage::new(dir)?
        })
    }

    /// This thread's blob file, opened on first use: its number and slot.
    fn blob(&self) -> Result<(i32, BlobSlot), StageError> {
        let id = self
            .fixed_blob
            .unwrap_or_else(|| rayon::current_thread_index().map_or(0, |i| i as i32 + 1));
        let slot = {
            let mut blobs = self.blobs.lock().map_err(|_| StageError::Poisoned)?;
            blobs.entry(id).or_default().clone()
        };
        {
            let mut guard = slot.lock().map_err(|_| StageError::Poisoned)?;
            if guard.is_none() {
                let path = self.dir.join(format!("blob-{id}.bin"));
                let file = create(&path)?;
                *guard = Some(Blob {
                    path,
                    file: BufWriter::with_capacity(1 << 20, file),
                    len: 0,
                });
            }
        }
        Ok((id, slot))
    }

    fn slot(&self, name: &str) -> Result<Slot, StageError> {
        let mut slots = self.slots.lock().map_err(|_| StageError::Poisoned)?;
        Ok(slots.entry(name.to_string()).or_default().clone())
    }

    fn write(&self, name: &str, schema: SchemaRef, batch: &RecordBatch) -> Result<(), StageError> {
        let slot = self.slot(name)?;
        let mut guard = slot.lock().map_err(|_| StageError::Poisoned)?;
        if guard.is_none() {
            let path = self.dir.join(format!("{name}.parquet"));
            let file = create(&path)?;
            let props = UNIQUE_COLUMNS
                .iter()
                .fold(
                    WriterProperties::builder()
                        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
                        .set_max_row_group_bytes(Some(ROW_GROUP_BYTES)),
                    |b, c| b.set_column_dictionary_enabled(ColumnPath::from(*c), false),
                )
                .build();
            let inner = ArrowWriter::try_new(file, schema, Some(props)).map_err(|source| {
                StageError::Parquet {
                    path: path.clone(),
                    source,
                }
            })?;
            *guard = Some(Writer { path, inner });
        }
        if let Some(w) = guard.as_mut() {
            w.inner.write(batch).map_err(|source| StageError::Parquet {
                path: w.path.clone(),
                source,
            })?;
        }
        Ok(())
    }

    /// Stage rows of one kind: the text and native of each row no step
    /// reads ([`steps_read_wide`]) go to this thread's blob file, the rest
    /// to the kind's Parquet file.
    pub fn write_events(
        &self,
        kind: &str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), StageError> {
        let (id, slot) = self.blob()?;
        let mut guard = slot.lock().map_err(|_| StageError::Poisoned)?;
        let mut wide = Vec::with_capacity(rows.len());
        if let Some(blob) = guard.as_mut() {
            for (r, n) in rows.iter().zip(natives) {
                let text_len = r.text.as_ref().map(|t| t.len() as i64);
                let native_len = n.as_ref().map(|t| t.len() as i64);
                if self.all_wide || steps_read_wide(r) {
                    wide.push(WideRef {
                        staged: true,
                        blob: None,
                        text_len,
                        native_len,
                    });
                    continue;
                }
                let off = blob.append([r.text.as_deref(), n.as_deref()])?;
                wide.push(WideRef {
                    staged: false,
                    blob: Some((id, off)),
                    text_len,
                    native_len,
                });
            }
        }
        drop(guard);
        let first_row = self
            .next_row
            .fetch_add(rows.len() as i64, std::sync::atomic::Ordering::Relaxed);
        let batch = events_batch(rows, natives, &wide, first_row)?;
        self.write(&format!("events-{kind}"), events_schema(), &batch)
    }

    /// Stage rows a ledger kept, as [`Stage::write_events`] stages rows
    /// read from a store: `batch` holds the events schema's columns but
    /// [`STAGE_ONLY`], in order, each row's text and native whole; the text
    /// and native of each row no step reads go to this thread's blob file,
    /// so the engine never holds them. The rows' `x_row` numbers are the
    /// returned one and those after it, in the batch's order.
    pub fn write_kept(&self, kind: &str, batch: &RecordBatch) -> Result<i64, StageError> {
        use arrow::array::{Array, ArrayRef, BooleanArray, Int32Array, Int64Array, StringArray};
        let schema = events_schema();
        let kept: Vec<usize> = (0..schema.fields().len())
            .filter(|&i| !STAGE_ONLY.contains(&schema.field(i).name().as_str()))
            .collect();
        let not_kept = |column| StageError::NotStaged(self.dir.join(kind), column);
        if batch.num_columns() != kept.len() {
            return Err(not_kept("the kept events columns"));
        }
        let at = |name: &str| {
            kept.iter()
                .position(|&i| schema.field(i).name() == name)
                .and_then(|k| batch.columns().get(k))
        };
        let strings = |name: &'static str| {
            at(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>())
                .ok_or_else(|| not_kept(name))
        };
        let (agent, text, native) = (strings("agent")?, strings("text")?, strings("native")?);
        let start = at("x_start")
            .and_then(|c| c.as_any().downcast_ref::<BooleanArray>())
            .ok_or_else(|| not_kept("x_start"))?;
        let n = batch.num_rows();
        let (mut wide, mut blob_of, mut off) = (
            Vec::with_capacity(n),
            Vec::<Option<i32>>::with_capacity(n),
            Vec::<Option<i64>>::with_capacity(n),
        );
        let (id, slot) = self.blob()?;
        {
            let mut guard = slot.lock().map_err(|_| StageError::Poisoned)?;
            let Some(blob) = guard.as_mut() else {
                return Err(StageError::Poisoned);
            };
            for r in 0..n {
                let agent = value(agent, r).and_then(crate::schema::Agent::parse);
                let is_wide = self.all_wide || read_wide(agent, start.value(r));
                wide.push(is_wide);
                if is_wide {
                    blob_of.push(None);
                    off.push(None);
                    continue;
                }
                blob_of.push(Some(id));
                off.push(Some(blob.append([value(text, r), value(native, r)])?));
            }
        }
        let wide = BooleanArray::from(wide);
        let (blob_of, off): (ArrayRef, ArrayRef) = (
            Arc::new(Int32Array::from(blob_of)),
            Arc::new(Int64Array::from(off)),
        );
        // a row whose text went to the blob file has none in the staged columns
        let only_wide = |a: &StringArray| -> ArrayRef {
            Arc::new(
                (0..n)
                    .map(|r| if wide.value(r) { value(a, r) } else { None })
                    .collect::<StringArray>(),
            )
        };
        let len = |a: &StringArray| -> ArrayRef {
            Arc::new(
                (0..n)
                    .map(|r| value(a, r).map(|v| v.len() as i64))
                    .collect::<Int64Array>(),
            )
        };
        let first_row = self
            .next_row
            .fetch_add(n as i64, std::sync::atomic::Ordering::Relaxed);
        let mut columns: Vec<ArrayRef> = Vec::with_capacity(schema.fields().len());
        let mut next_kept = batch.columns().iter();
        for field in schema.fields() {
            let column: ArrayRef = match field.name().as_str() {
                "text" => {
                    next_kept.next();
                    only_wide(text)
                }
                "native" => {
                    next_kept.next();
                    only_wide(native)
                }
                "x_wide" => Arc::new(wide.clone()),
                "x_blob" => blob_of.clone(),
                "x_off" => off.clone(),
                "x_text_len" => len(text),
                "x_native_len" => len(native),
                "x_row" => Arc::new(Int64Array::from_iter_values(
                    (0..n as i64).map(|r| first_row + r),
                )),
                _ => {
                    let column = next_kept
                        .next()
                        .ok_or_else(|| not_kept("the kept events columns"))?;
                    if column.data_type() == field.data_type() {
                        column.clone()
                    } else {
                        arrow::compute::cast(column, field.data_type())?
                    }
                }
            };
            columns.push(column);
        }
        let batch = RecordBatch::try_new(schema.clone(), columns)?;
        self.write(&format!("events-{kind}"), schema, &batch)?;
        Ok(first_row)
    }

    pub fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), StageError> {
        let batch = llm_calls_batch(rows)?;
        self.write("llm_calls", llm_calls_schema(), &batch)
    }

    /// Close every writer and write the two small tables. An empty file of
    /// each schema is always written, so the steps have a table to read even
    /// when a home holds no such store.
    pub fn finish(
        self,
        diagnostics: &[Diagnostic],
        sources: &[SourceRow],
    ) -> Result<Staged, StageError> {
        self.write_events_empty()?;
        self.write("llm_calls", llm_calls_schema(), &llm_calls_batch(&[])?)?;
        let mut staged = Staged {
            diagnostics: self.dir.join("diagnostics.parquet"),
            sources: self.dir.join("sources.parquet"),
            ..Staged::default()
        };
        write_file(&staged.diagnostics, &diagnostics_batch(diagnostics)?)?;
        write_file(&staged.sources, &sources_batch(sources)?)?;
        let blobs = self.blobs.into_inner().map_err(|_| StageError::Poisoned)?;
        for (id, slot) in blobs {
            let blob = Arc::try_unwrap(slot).map_err(|_| StageError::Poisoned)?;
            let Some(mut b) = blob.into_inner().map_err(|_| StageError::Poisoned)? else {
                continue;
            };
            b.file.flush().map_err(|source| StageError::Io {
                path: b.path.clone(),
                source,
            })?;
            staged.blobs.insert(id, b.path);
        }
        let slots = self.slots.into_inner().map_err(|_| StageError::Poisoned)?;
        for (name, slot) in slots {
            let writer = Arc::try_unwrap(slot).map_err(|_| StageError::Poisoned)?;
            let Some(w) = writer.into_inner().map_err(|_| StageError::Poisoned)? else {
                continue;
            };
            w.inner.close().map_err(|source| StageError::Parquet {
                path: w.path.clone(),
                source,
            })?;
            if name.starts_with("events-") {
                staged.events.push(w.path);
            } else {
                staged.llm_calls.push(w.path);
            }
        }
        Ok(staged)
    }

    /// Close a cache entry's files ([`Stage::entry`]); the bytes of its
    /// blob file.
    pub fn finish_entry(self) -> Result<u64, StageError> {
        let mut blob_len = 0;
        for (_, slot) in self.blobs.into_inner().map_err(|_| StageError::Poisoned)? {
            let blob = Arc::try_unwrap(slot).map_err(|_| StageError::Poisoned)?;
            if let Some(mut b) = blob.into_inner().map_err(|_| StageError::Poisoned)? {
                b.file.flush().map_err(|source| StageError::Io {
                    path: b.path.clone(),
                    source,
                })?;
                blob_len += b.len;
            }
        }
        for (_, slot) in self.slots.into_inner().map_err(|_| StageError::Poisoned)? {
            let writer = Arc::try_unwrap(slot).map_err(|_| StageError::Poisoned)?;
            if let Some(w) = writer.into_inner().map_err(|_| StageError::Poisoned)? {
                w.inner.close().map_err(|source| StageError::Parquet {
                    path: w.path.clone(),
                    source,
                })?;
            }
        }
        Ok(blob_len)
    }

    /// Stage the rows of a cache entry (written by [`Stage::entry`]) as if
    /// their store had just been read: the entry's blob appended to this
    /// thread's blob file, each row's `x_blob` / `x_off` pointed there, and
    /// new `x_row` numbers.
    pub fn import(&self, entry: &Path) -> Result<(), StageError> {
        let not_staged = |column| StageError::NotStaged(entry.to_path_buf(), column);
        let (id, slot) = self.blob()?;
        let base = {
            let mut guard = slot.lock().map_err(|_| StageError::Poisoned)?;
            let Some(blob) = guard.as_mut() else {
                return Err(StageError::Poisoned);
            };
            let base = blob.len;
            let src = entry.join(format!("blob-{ENTRY_BLOB}.bin"));
            if src.exists() {
                let io = |source| StageError::Io {
                    path: src.clone(),
                    source,
                };
                blob.file.flush().map_err(io)?;
                let mut from = File::open(&src).map_err(io)?;
                blob.len += std::io::copy(&mut from, blob.file.get_mut()).map_err(io)?;
            }
            base as i64
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(entry)
            .map_err(|source| StageError::Io {
                path: entry.to_path_buf(),
                source,
            })?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
            .collect();
        files.sort();
        for path in files {
            let Some(name) = path.file_stem().and_then(|n| n.to_str()) else {
                continue;
            };
            let events = name.starts_with("events-");
            let schema = if events {
                events_schema()
            } else {
                llm_calls_schema()
            };
            for batch in read_file(&path)? {
                let batch = batch?;
                let batch = if events {
                    self.renumber(&batch, id, base)
                        .ok_or_else(|| not_staged("x_off, x_blob"))??
                } else {
                    RecordBatch::try_new(schema.clone(), batch.columns().to_vec())?
                };
                self.write(name, schema.clone(), &batch)?;
            }
        }
        Ok(())
    }

    /// An entry's staged events with this run's `x_row` numbers, and their
    /// blob pointers moved to blob file `id` at `base`.
    /// `None` when the batch's pointer columns are not of the staged types.
    fn renumber(
        &self,
        batch: &RecordBatch,
        id: i32,
        base: i64,
    ) -> Option<Result<RecordBatch, StageError>> {
        use arrow::array::{Array, ArrayRef, Int32Array, Int64Array};
        let schema = events_schema();
        let first = self.next_row.fetch_add(
            batch.num_rows() as i64,
            std::sync::atomic::Ordering::Relaxed,
        );
        let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
        for (i, field) in schema.fields().iter().enumerate() {
            let col = batch.columns().get(i)?;
            let ints = |c: &ArrayRef| c.as_any().downcast_ref::<Int64Array>().cloned();
            let new: ArrayRef = match field.name().as_str() {
                "x_row" => Arc::new(Int64Array::from_iter_values(
                    (0..batch.num_rows() as i64).map(|r| first + r),
                )),
                "x_off" => {
                    let off = ints(col)?;
                    Arc::new(
                        off.iter()
                            .map(|o| o.map(|o| o + base))
                            .collect::<Int64Array>(),
                    )
                }
                "x_blob" => {
                    let blob = col.as_any().downcast_ref::<Int32Array>()?;
                    Arc::new(blob.iter().map(|b| b.map(|_| id)).collect::<Int32Array>())
                }
                _ => continue,
            };
            *columns.get_mut(i)? = new;
        }
        Some(RecordBatch::try_new(schema, columns).map_err(StageError::from))
    }

    fn write_events_empty(&self) -> Result<(), StageError> {
        self.write("events-", events_schema(), &events_batch(&[], &[], &[], 1)?)
    }
}

/// A string column's value at `r`, `None` where null.
fn value(a: &arrow::array::StringArray, r: usize) -> Option<&str> {
    use arrow::array::Array;
    (!a.is_null(r)).then(|| a.value(r))
}

/// The blob file number of a cache entry's stage.
const ENTRY_BLOB: i32 = 0;

/// The batches of a staged Parquet file, one row group at a time.
pub fn read_file(
    path: &Path,
) -> Result<parquet::arrow::arrow_reader::ParquetRecordBatchReader, StageError> {
    let parquet = |source| StageError::Parquet {
        path: path.to_path_buf(),
        source,
    };
    let file = File::open(path).map_err(|source| StageError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(parquet)?
        .build()
        .map_err(parquet)?;
    Ok(reader)
}

/// Create (or truncate) a staging file.
fn create(path: &Path) -> Result<File, StageError> {
    File::create(path).map_err(|source| StageError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Write one batch as a whole Parquet file (small tables: diagnostics, sources).
pub fn write_file(path: &Path, batch: &RecordBatch) -> Result<(), StageError> {
    let file = create(path)?;
    let mut w =
        ArrowWriter::try_new(file, batch.schema(), None).map_err(|source| StageError::Parquet {
            path: path.to_path_buf(),
            source,
        })?;
    w.write(batch).map_err(|source| StageError::Parquet {
        path: path.to_path_buf(),
        source,
    })?;
    w.close().map_err(|source| StageError::Parquet {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    use parquet::file::reader::{FileReader, SerializedFileReader};

    use crate::schema::{Group, TurnType, llm_calls_schema};

    /// Every name in [`UNIQUE_COLUMNS`] is a staged column, and a staged
    /// file holds those columns without a dictionary page while the
    /// columns the steps group by (paths, kinds, roles) keep theirs.
    #[test]
    fn unique_columns_are_staged_without_a_dictionary() -> Result<(), Box<dyn std::error::Error>> {
        let staged: Vec<String> = [events_schema(), llm_calls_schema()]
            .iter()
            .flat_map(|s| {
                s.fields()
                    .iter()
                    .map(|f| f.name().clone())
                    .collect::<Vec<_>>()
            })
            .collect();
        for c in UNIQUE_COLUMNS {
            assert!(staged.iter().any(|s| s == c), "{c} is not a staged column");
        }
        let dir = tempfile::tempdir()?;
        let stage = Stage::new(dir.path())?.all_wide(true);
        let rows: Vec<EventRow> = (0..100)
            .map(|i| EventRow {
                instance: ".nanobot".into(),
                session_id: Some("cli:direct".into()),
                seq: Some(i),
                ts_utc: Some(1_000_000 * i),
                ts_local: Some(1_000_000 * i + 7),
                turn_type: TurnType::User,
                text: Some(format!("message {i}")),
                source_kind: "nanobot.session_jsonl",
                source_path: ".nanobot/sessions/a.jsonl".into(),
                source_line: Some(i + 1),
                x_group: Group::Record,
                x_record: Some(format!("{i:032x}")),
                source_role: Some(crate::schema::Role::Primary),
                agent: Some(crate::schema::Agent::Nanobot),
                ..Default::default()
            })
            .collect();
        stage.write_events("nanobot.session_jsonl", &rows, &vec![None; rows.len()])?;
        let calls: Vec<crate::schema::LlmCallRow> = (0..100)
            .map(|i| crate::schema::LlmCallRow {
                instance: ".nanobot".into(),
                source_path: ".nanobot/llm_usage.sqlite3".into(),
                id: i + 1,
                started_at_ms: 1_000 * i,
                duration_ms: Some(10 * i),
                ..Default::default()
            })
            .collect();
        stage.write_llm_calls(&calls)?;
        let out = stage.finish(&[], &[])?;
        // whether each column of a staged file's first row group has a
        // dictionary page (None: no such column)
        let dictionaries = |file: Option<&PathBuf>| -> Result<_, Box<dyn std::error::Error>> {
            let reader = SerializedFileReader::new(File::open(file.ok_or("no staged file")?)?)?;
            Ok(reader
                .metadata()
                .row_group(0)
                .columns()
                .iter()
                .map(|c| {
                    (
                        c.column_path().string(),
                        c.dictionary_page_offset().is_some(),
                    )
                })
                .collect::<BTreeMap<String, bool>>())
        };
        let events = dictionaries(
            out.events
                .iter()
                .find(|p| p.ends_with("events-nanobot.session_jsonl.parquet")),
        )?;
        let llm_calls = dictionaries(out.llm_calls.first())?;
        for c in UNIQUE_COLUMNS {
            let written = events.get(*c).or_else(|| llm_calls.get(*c));
            assert_eq!(written, Some(&false), "{c}");
        }
        for c in [
            "source_path",
            "source_kind",
            "instance",
            "session_id",
            "turn_type",
        ] {
            assert_eq!(events.get(c), Some(&true), "{c}");
        }
        Ok(())
    }
}
