//! The events writer: OUT.parquet from V016's narrow plan and the blob
//! files of the stage, in the output order (docs/design.md "Output order").
//!
//! ```text
//! plan_sessions, plan_stores (one row per id)                        → in memory
//! events_plan (narrow, out_pos order) ─▶ read_plan: a row group at a time,
//!     ids → strings, text/native ← stage/blob-<n>.bin (unless x_wide)
//!     tool_error ← agent, turn_type, text, native (crate::readout::tool_error)
//!   ─▶ encode: each row group a task on rayon's pool (at most 2 × threads in flight), appended in order
//!   ─▶ dest (zstd, ~4 MB of text per row group)
//! ```

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

/// The column the writer computes itself ([`Source::ToolError`]).
const TOOL_ERROR: &str = "tool_error";

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
    // Encoding and compressing run on their own thread (row groups in
    // parallel on rayon's pool, see `encode`), while this one reads
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
    /// `tool_error`: computed from the row's agent, turn_type, text and
    /// native once they are filled in (`crate::readout::tool_error`).
    ToolError,
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
            sources.push(if name == TOOL_ERROR {
                for needed in ["agent", "turn_type", "text", "native"] {
                    if !fields.iter().any(|f| f.name() == needed) {
                        return Err(format!("events.{TOOL_ERROR}: events has no {needed}").into());
                    }
                }
                Source::ToolError
            } else if name == "text" || name == "native" {
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

/// Encode the row groups `receive` sends (batches; `None` ends a group)
/// and append them to `writer`'s file in order. Each group is a task on
/// rayon's pool (the extraction threads are idle by now): its columns
/// encoded and compressed by one
/// [`parquet::arrow::arrow_writer::ArrowColumnWriter`] each; this thread
/// appends the encoded groups in row-group order, columns in schema order:
/// the same bytes as [`ArrowWriter`]'s own flush. By groups, not by
/// columns: `text` is most of a group's bytes, so one group's columns
/// would keep one core busy and the others idle. At most twice as many groups as the pool has
/// threads are in flight (a slow group, one huge row, does not let the
/// others pile up in memory).
fn encode(
    writer: ArrowWriter<std::fs::File>,
    schema: &Schema,
    receive: std::sync::mpsc::Receiver<Option<RecordBatch>>,
) -> Result<(), WriteError> {
    type Chunks = Vec<parquet::arrow::arrow_writer::ArrowColumnChunk>;
    let (mut file, factory) = writer.into_serialized_writer()?;
    let window = 2 * rayon::current_num_threads().max(1);
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
    let (done, encoded) = std::sync::mpsc::channel::<(usize, Result<Chunks, WriteError>)>();
    // take one encoded group (waiting for it when `block`), append every
    // group now due in order; returns how many groups are appended
    let mut waiting: BTreeMap<usize, Chunks> = BTreeMap::new();
    let mut next = 0usize;
    let mut append = |block: bool| -> Result<usize, WriteError> {
        let got = if block {
            Some(
                encoded
                    .recv()
                    .map_err(|_| "a row group's encoder stopped")?,
            )
        } else {
            encoded.try_recv().ok()
        };
        if let Some((group, chunks)) = got {
            waiting.insert(group, chunks?);
        }
        while let Some(chunks) = waiting.remove(&next) {
            let mut row_group = file.next_row_group()?;
            for chunk in chunks {
                chunk.append_to_row_group(&mut row_group)?;
            }
            row_group.close()?;
            next += 1;
        }
        Ok(next)
    };
    rayon::in_place_scope(|scope| -> Result<(), WriteError> {
        let spawn = |group: usize, batches: Vec<RecordBatch>| {
            let (done, encode_group) = (done.clone(), &encode_group);
            scope.spawn(move |_| {
                // a panic is an error of its group, so the appender never waits for it
                let chunks = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    encode_group(group, &batches)
                }))
                .unwrap_or_else(|_| Err("a row group's encoder panicked".into()));
                let _ = done.send((group, chunks));
            });
        };
        let (mut sent, mut appended) = (0usize, 0usize);
        let mut batches: Vec<RecordBatch> = Vec::new();
        for batch in receive {
            match batch {
                Some(b) => batches.push(b),
                None if batches.is_empty() => {}
                None => {
                    spawn(sent, std::mem::take(&mut batches));
                    sent += 1;
                    appended = append(false)?;
                    while sent - appended >= window {
                        appended = append(true)?;
                    }
                }
            }
        }
        if !batches.is_empty() {
            spawn(sent, batches);
            sent += 1;
        }
        while appended < sent {
            appended = append(true)?;
        }
        Ok(())
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
/// parameters, sorted) pays a sort and a plan per group, most of the
/// write's time on a large home.
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
    // fault in fresh pages at every doubling, a large share of a run's
    // page faults
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
            // the stage wrote valid text; checked again, with SIMD: every
            // byte of every text passes here
            let at = (o - start) as usize;
            let (t, nat) = buf[at..at + len(tl, nl) as usize].split_at(tl.unwrap_or(0));
            text.append_option(tl.map(|_| simdutf8::basic::from_utf8(t)).transpose()?);
            native.append_option(nl.map(|_| simdutf8::basic::from_utf8(nat)).transpose()?);
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
            // after the columns it is computed from (below)
            Source::ToolError => arrow::array::new_null_array(f.data_type(), batch.num_rows()),
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
    if let Some(at) = (layout.sources.iter()).position(|s| matches!(s, Source::ToolError)) {
        out[at] = Arc::new(tool_errors(schema, &out)?);
    }
    Ok(RecordBatch::try_new(schema.clone(), out)?)
}

/// `events.tool_error` of a row group whose other columns are filled in:
/// on each `tool_result` row whether it reports a failure
/// ([`crate::readout::tool_error`]), NULL on every other row.
fn tool_errors(
    schema: &Schema,
    out: &[ArrayRef],
) -> Result<arrow::array::BooleanArray, WriteError> {
    let column = |name: &str| -> Result<&arrow::array::StringArray, WriteError> {
        let at = schema.index_of(name)?;
        out.get(at)
            .and_then(|a| a.as_string_opt::<i32>())
            .ok_or_else(|| format!("events.{name}: not VARCHAR").into())
    };
    let (agent, turn_type) = (column("agent")?, column("turn_type")?);
    let (text, native) = (column("text")?, column("native")?);
    fn value(a: &arrow::array::StringArray, i: usize) -> Option<&str> {
        a.is_valid(i).then(|| a.value(i))
    }
    Ok((0..agent.len())
        .map(|i| {
            (value(turn_type, i) == Some("tool_result")).then(|| {
                crate::readout::tool_error(
                    value(agent, i) == Some("nanoclaw"),
                    value(text, i),
                    value(native, i),
                )
            })
        })
        .collect())
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
mod tests;
