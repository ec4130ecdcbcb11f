//! The floor (issue 30): the least work any loader of the same output must
//! do, measured with nanoload's own parts. `benches/compare.sh` runs it
//! beside nanoload and the DuckDB peers; it is a yardstick, not a loader
//! (no dedup, no time zones, no sessions, no other store).
//!
//! ```text
//! HOME/.nanobot*/sessions/*/*.jsonl           (the peers' input; sorted, dealt round-robin
//! HOME/.nanobot*/webui/**/*.jsonl  with --webui  to the threads; the WebUI transcripts are
//!                                                the other large store nanoload must read;
//!                                                with --webui-parsed their lines are only
//!                                                parsed: the least a dedup against them costs)
//!   one thread per part: read the file whole, split at '\n'
//!     each line ─serde (borrowed: no Value tree)─▶ _type key role content timestamp
//!                                                  tool_calls tool_call_id name
//!                                                  reasoning_content metadata
//!                 (a transcript line: event → _type, chat_id → key, text → content,
//!                  tool_events → tool_calls)
//!       content (a string)     ─Scanner::redact─▶ text       (nanoload's scanner and memo)
//!       content (not a string), tool_calls, metadata
//!                              ─Scanner::may_match_json─▶ parsed and redact_json only then
//!       reasoning_content      ─Scanner::redact
//!     ─▶ Arrow columns (all Utf8, + filename, line) ─▶ OUT.<thread>.parquet
//!        zstd level 1 (nanoload's OUT level), no dictionary for content,
//!        a row group every ~4 MB of content (nanoload's OUT row groups)
//! ```
//! One Parquet part per thread, written in parallel: the floor of a
//! parallel write. A line that is not a JSON object is counted and skipped.
//!
//! `floor HOME OUT [--threads N] [--no-scan] [--webui | --webui-parsed]` prints one line to
//! stderr: `floor: <rows> rows, <parsed> parsed only, <bad> bad lines, <files> files,
//! <wall> s wall, <cpu> s CPU`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Builder, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use nanoload::secrets::{Counts, Scanner};
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use rayon::prelude::*;
use serde::Deserialize;
use serde_json::value::RawValue;

type Error = Box<dyn std::error::Error + Send + Sync>;

/// A session line's fields, borrowed from the line where no escape forces a copy.
#[derive(Deserialize)]
struct Record<'a> {
    #[serde(borrow, rename = "_type", alias = "event")]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "chat_id")]
    key: Option<Cow<'a, str>>,
    #[serde(borrow)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "text")]
    content: Option<&'a RawValue>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, alias = "tool_events")]
    tool_calls: Option<&'a RawValue>,
    #[serde(borrow)]
    tool_call_id: Option<Cow<'a, str>>,
    #[serde(borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow)]
    metadata: Option<&'a RawValue>,
}

/// The output's string columns, in order; `line` (Int64) follows.
const COLUMNS: [&str; 11] = [
    "_type",
    "key",
    "role",
    "content",
    "timestamp",
    "tool_calls",
    "tool_call_id",
    "name",
    "reasoning_content",
    "metadata",
    "filename",
];

/// Content bytes per row group (nanoload's OUT: `events_writer::ROW_GROUP_BYTES`).
const GROUP_BYTES: usize = 4 << 20;

/// The JSONL files of `dir` and its subdirectories.
fn jsonl_under(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), Error> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            jsonl_under(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    Ok(())
}

/// What the floor does with the WebUI transcripts.
#[derive(Clone, Copy, PartialEq)]
enum Webui {
    Skipped,
    Parsed,
    Written,
}

/// The session files of every nanobot instance of `home`, and its WebUI
/// transcripts unless `webui` skips them, sorted; each with whether its
/// rows are scanned and written (`false`: parsed only).
fn session_files(home: &Path, webui: Webui) -> Result<Vec<(PathBuf, bool)>, Error> {
    let mut files = Vec::new();
    for instance in std::fs::read_dir(home)? {
        let instance = instance?.path();
        let named = instance
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(".nanobot"));
        if !named {
            continue;
        }
        if webui != Webui::Skipped && instance.join("webui").is_dir() {
            let mut transcripts = Vec::new();
            jsonl_under(&instance.join("webui"), &mut transcripts)?;
            files.extend(
                transcripts
                    .into_iter()
                    .map(|f| (f, webui == Webui::Written)),
            );
        }
        let sessions = instance.join("sessions");
        if !sessions.is_dir() {
            continue;
        }
        for workspace in std::fs::read_dir(&sessions)? {
            let workspace = workspace?.path();
            if !workspace.is_dir() {
                continue;
            }
            for f in std::fs::read_dir(&workspace)? {
                let f = f?.path();
                if f.extension().is_some_and(|e| e == "jsonl") {
                    files.push((f, true));
                }
            }
        }
    }
    files.sort();
    Ok(files)
}

/// A JSON value's text redacted: looked at only when a rule's needle is in it.
fn redact_raw(scanner: Option<&Scanner>, raw: &RawValue, counts: &mut Counts) -> String {
    let json = raw.get();
    match scanner {
        Some(s) if s.may_match_json(json) => match serde_json::from_str(json) {
            Ok(mut v) => {
                s.redact_json(&mut v, counts);
                v.to_string()
            }
            Err(_) => json.to_string(),
        },
        _ => json.to_string(),
    }
}

/// A string redacted (borrowed when nothing matched).
fn redact_str<'a>(scanner: Option<&Scanner>, text: &'a str, counts: &mut Counts) -> Cow<'a, str> {
    match scanner.and_then(|s| s.redact(text, counts)) {
        Some(r) => Cow::Owned(r),
        None => Cow::Borrowed(text),
    }
}

/// One part: `files` into `out`; returns (rows, lines parsed only, bad lines).
fn write_part(
    files: &[(PathBuf, bool)],
    out: &Path,
    scanner: Option<&Scanner>,
    schema: &Arc<Schema>,
) -> Result<(u64, u64, u64), Error> {
    let props = WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
        .set_column_dictionary_enabled(ColumnPath::from("content"), false)
        .build();
    let mut writer =
        ArrowWriter::try_new(std::fs::File::create(out)?, schema.clone(), Some(props))?;
    let mut cols: Vec<StringBuilder> = COLUMNS.iter().map(|_| StringBuilder::new()).collect();
    let mut lines = Int64Builder::new();
    let (mut rows, mut parsed, mut bad, mut pending) = (0u64, 0u64, 0u64, 0usize);
    let mut counts = Counts::default();
    let flush = |cols: &mut Vec<StringBuilder>,
                 lines: &mut Int64Builder,
                 writer: &mut ArrowWriter<std::fs::File>|
     -> Result<(), Error> {
        let mut arrays: Vec<ArrayRef> = cols
            .iter_mut()
            .map(|b| Arc::new(b.finish()) as ArrayRef)
            .collect();
        arrays.push(Arc::new(lines.finish()));
        writer.write(&RecordBatch::try_new(schema.clone(), arrays)?)?;
        writer.flush()?;
        Ok(())
    };
    for (path, written) in files {
        let data = std::fs::read(path)?;
        let filename = path.to_string_lossy();
        // the line ends found with memchr (a byte-by-byte split cost a twentieth of the run)
        let ends = memchr::memchr_iter(b'\n', &data).chain(std::iter::once(data.len()));
        let mut start = 0;
        for (i, end) in ends.enumerate() {
            let line = &data[start..end];
            start = end + 1;
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let Ok(r) = serde_json::from_slice::<Record>(line) else {
                bad += 1;
                continue;
            };
            if !written {
                parsed += 1;
                continue;
            }
            let content: Option<Cow<str>> =
                r.content
                    .map(|c| match serde_json::from_str::<Cow<str>>(c.get()) {
                        Ok(Cow::Borrowed(s)) => redact_str(scanner, s, &mut counts),
                        Ok(Cow::Owned(s)) => {
                            Cow::Owned(redact_str(scanner, &s, &mut counts).into_owned())
                        }
                        Err(_) => Cow::Owned(redact_raw(scanner, c, &mut counts)),
                    });
            let reasoning = r
                .reasoning_content
                .as_deref()
                .map(|s| redact_str(scanner, s, &mut counts));
            let raw = |v: Option<&RawValue>, counts: &mut Counts| {
                v.map(|v| redact_raw(scanner, v, counts))
            };
            let (tool_calls, metadata) =
                (raw(r.tool_calls, &mut counts), raw(r.metadata, &mut counts));
            pending += content.as_ref().map_or(0, |c| c.len());
            let values = [
                r.kind.as_deref(),
                r.key.as_deref(),
                r.role.as_deref(),
                content.as_deref(),
                r.timestamp.as_deref(),
                tool_calls.as_deref(),
                r.tool_call_id.as_deref(),
                r.name.as_deref(),
                reasoning.as_deref(),
                metadata.as_deref(),
                Some(&*filename),
            ];
            for (b, v) in cols.iter_mut().zip(values) {
                b.append_option(v);
            }
            lines.append_value(i as i64 + 1);
            rows += 1;
            if pending >= GROUP_BYTES {
                flush(&mut cols, &mut lines, &mut writer)?;
                pending = 0;
            }
        }
    }
    flush(&mut cols, &mut lines, &mut writer)?;
    writer.close()?;
    Ok((rows, parsed, bad))
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name);
    let threads = match flag("--threads") {
        Some(i) => args.get(i + 1).ok_or("--threads N")?.parse::<usize>()?,
        None => 2,
    };
    let positional: Vec<&String> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && flag("--threads").is_none_or(|f| *i != f + 1))
        .map(|(_, a)| a)
        .collect();
    let [home, out] = positional[..] else {
        return Err(
            "usage: floor HOME OUT [--threads N] [--no-scan] [--webui | --webui-parsed]".into(),
        );
    };
    let clock = nanoload::timings::Clock::start();
    let scanner = (flag("--no-scan").is_none()).then(|| Scanner::new(&[]));
    let webui = match (flag("--webui"), flag("--webui-parsed")) {
        (Some(_), None) => Webui::Written,
        (None, Some(_)) => Webui::Parsed,
        (None, None) => Webui::Skipped,
        (Some(_), Some(_)) => return Err("--webui or --webui-parsed, not both".into()),
    };
    let files = session_files(Path::new(home), webui)?;
    let mut fields: Vec<Field> = COLUMNS
        .iter()
        .map(|c| Field::new(*c, DataType::Utf8, true))
        .collect();
    fields.push(Field::new("line", DataType::Int64, true));
    let schema = Arc::new(Schema::new(fields));
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()?;
    let parts: Vec<(u64, u64, u64)> = pool.install(|| {
        (0..threads)
            .into_par_iter()
            .map(|t| {
                let mine: Vec<(PathBuf, bool)> =
                    files.iter().skip(t).step_by(threads).cloned().collect();
                write_part(
                    &mine,
                    Path::new(&format!("{out}.{t}")),
                    scanner.as_ref(),
                    &schema,
                )
            })
            .collect::<Result<_, Error>>()
    })?;
    let (rows, parsed, bad) = parts
        .iter()
        .fold((0, 0, 0), |(r, p, b), x| (r + x.0, p + x.1, b + x.2));
    let (wall, cpu) = clock.elapsed();
    eprintln!(
        "floor: {rows} rows, {parsed} parsed only, {bad} bad lines, {} files, {:.3} s wall, {:.3} s CPU",
        files.len(),
        wall.as_secs_f64(),
        cpu.as_secs_f64()
    );
    Ok(())
}
