//! Extractor throughput: one Criterion group per store kind of
//! [`nanoload::sources::REGISTRY`], each over a few MB grown from the
//! repository's fixtures, reported as bytes of input per second.
//!
//! ```text
//! fixtures/<home> ──copied──▶ <tempdir>/home ──the kind's store(s) grown (once per group)
//!     │                                         from the fixture's own records, ids varied
//!     ▼
//! discover(home) ──▶ the grown store(s) ── Throughput::Bytes = their files on disk
//!     │                                    (main file + parts + sidecars)
//!     ▼ every iteration, one store after another, as extract::extract_all does:
//! scratch dir ──▶ StoreOutput (secret scanner on, the default) ──REGISTRY[i].extract──▶ finish
//!                      │ every BATCH rows
//!                      ▼
//!                 ArrowRows: events_batch / llm_calls_batch, then dropped
//! ```
//! Measured: reading (SQLite stores: the private snapshot copy too), decoding,
//! mapping to rows, secret redaction, Arrow batch building. Not measured:
//! discovery, Parquet encoding (the stage's writer), the SQL steps.
//!
//! ```text
//! group                        fixture  →  grown to (a few MB, ids varied where a key needs it)
//! nanobot.session_jsonl        home-a cli:direct session
//!                              → metadata + its messages repeated (tool call ids varied), 4 MiB
//! nanobot.session_db           home-a sessions.sqlite3, its one corrupt record dropped
//!                              → sessions and their messages copied under new keys, 4 MiB
//! nanobot.webui_transcript     home-a websocket transcript (segment + active file)
//!                              → its turns repeated (turn, call ids varied): 2 MiB segments + active, 4 MiB
//! nanobot.webui_index          home-a .webui_session_index.json → its entries repeated (keys varied), 4 MiB
//! nanobot.cli_history          home-a history/cli_history → its entries repeated, 4 MiB
//! nanobot.memory_history       home-a memory/history.jsonl → entries repeated (cursor varied), 4 MiB;
//!                              realwriter/legacy-history HISTORY.md → repeated, 4 MiB
//! nanobot.cron_run             home-a cron run record → one file per run (run ids varied), 1 MiB of files
//! nanobot.trigger_run          home-a trigger run record → one file per run (delivery ids varied), 1 MiB
//! nanobot.permissions          home-a config.json + pairing.json → one instance (.nanobot-bNNN) per copy, 1 MiB
//! nanobot.llm_usage            home-a llm_usage.sqlite3 → llm_calls copied under new ids, 4 MiB
//! nanoclaw.catalog             nanoclaw/home-a data/v2.db
//!                              → every non-empty table but schema_version copied under new keys, 4 MiB
//! nanoclaw.inbound             nanoclaw/home-a inbound.db (6 messages)
//!                              → messages_in, delivered copied under new ids and seqs, 4 MiB
//! nanoclaw.outbound            nanoclaw/home-a outbound.db (6 messages)
//!                              → messages_out, processing_ack copied under new ids and seqs, 4 MiB
//! nanoclaw.claude_transcript   nanoclaw/home-cc main transcript
//!                              → its lines repeated (uuids, message, request, tool ids varied), 4 MiB
//! ```
//! Every input is checked once before it is measured: the store reads `ok`
//! and yields rows (one stderr line per input: stores, bytes, rows).
//!
//! `cargo bench --manifest-path benches/criterion/Cargo.toml --bench
//! extractors` (this crate links the library without DuckDB); `… -- --test`
//! runs each benchmark once.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use nanoload::discover::discover;
use nanoload::schema::{EventRow, LlmCallRow, events_batch, llm_calls_batch};
use nanoload::secrets::Scanner;
use nanoload::sources::REGISTRY;
use nanoload::store::{
    ExtractOptions, RowWriter, Store, StoreError, StoreOutput, StoreReport, WriteError,
};
use serde_json::Value;
use tempfile::TempDir;

/// A single-store input grows to this; a kind with one store per record to [`MANY`].
const TARGET: usize = 4 << 20;
const MANY: usize = 1 << 20;
/// The WebUI recorder's rollover size: older turns move to `.segments/`.
const SEGMENT: usize = 2 << 20;

const NANOBOT: &str = "nanobot/home-a";
const NANOBOT_NS: &str = ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2";
const NANOCLAW: &str = "nanoclaw/home-a";
const NANOCLAW_SESSION: &str = "data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io";
const CC_TRANSCRIPT: &str = "data/v2-sessions/ag-1800000000010-ccc111/.claude-shared/projects/-workspace-agent/3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e.jsonl";

// --- the row writer: Arrow batches built, then dropped -----------------------------

struct ArrowRows;

impl RowWriter for ArrowRows {
    fn write_events(
        &self,
        _kind: &'static str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), WriteError> {
        black_box(events_batch(rows, natives, &[], 1).map_err(WriteError::new)?);
        Ok(())
    }
    fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), WriteError> {
        black_box(llm_calls_batch(rows).map_err(WriteError::new)?);
        Ok(())
    }
}

/// Every store read as `extract::extract_all` reads one (scratch dir, the
/// kind's extractor, finish), one after another on this thread.
fn extract(
    stores: &[Store],
    home: &Path,
    options: &ExtractOptions,
    scratch: &Path,
) -> Vec<StoreReport> {
    let rows_to = ArrowRows;
    stores
        .iter()
        .enumerate()
        .map(|(i, store)| {
            let dir = scratch.join(format!("store-{i:06}"));
            let mut out = StoreOutput::new(store, home, options, &rows_to, dir.clone());
            let result = std::fs::create_dir_all(&dir)
                .map_err(|e| StoreError::io("cannot create scratch directory", e))
                .and_then(|()| (REGISTRY[store.extractor].extract)(&mut out));
            let report = out.finish(result);
            let _ = std::fs::remove_dir_all(&dir);
            report
        })
        .collect()
}

// --- inputs ------------------------------------------------------------------

/// A HOME in a tempdir, with the stores one benchmark reads.
struct Input {
    name: &'static str,
    _dir: TempDir,
    home: PathBuf,
    scratch: PathBuf,
    stores: Vec<Store>,
    bytes: u64,
}

fn fixture(rel: &str) -> PathBuf {
    // this crate is benches/criterion of the repository
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(fixture(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// A tempdir holding `home/`, a copy of a fixture home (symlinks left out).
fn home_from(fixture_home: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let home = dir.path().join("home");
    let src = fixture(fixture_home);
    for e in walkdir::WalkDir::new(&src) {
        let e = e.expect("walk fixture");
        let rel = e.path().strip_prefix(&src).expect("under the fixture");
        let dst = home.join(rel);
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dst).expect("mkdir");
        } else if e.file_type().is_file() {
            std::fs::copy(e.path(), &dst).expect("copy");
        }
    }
    (dir, home)
}

fn write(home: &Path, rel: &str, text: &str) {
    let path = home.join(rel);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(&path, text).expect("write");
}

/// Discover `home`, keep the stores of `kind` whose path `keep` accepts.
fn input(
    name: &'static str,
    dir: TempDir,
    home: PathBuf,
    kind: &str,
    keep: impl Fn(&str) -> bool,
) -> Input {
    let found = discover(&home, false).expect("discover");
    let stores: Vec<Store> = found
        .stores
        .into_iter()
        .filter(|s| s.kind == kind && keep(&s.rel))
        .collect();
    assert!(!stores.is_empty(), "{name}: no {kind} store");
    let bytes = stores
        .iter()
        .flat_map(|s| s.files())
        .map(|(_, b, _)| b)
        .sum();
    let scratch = dir.path().join("scratch");
    Input {
        name,
        _dir: dir,
        home,
        scratch,
        stores,
        bytes,
    }
}

/// Append `tag` to every string under one of `keys`, at any depth.
fn vary(v: &mut Value, keys: &[&str], tag: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    Value::String(s) if keys.contains(&k.as_str()) => s.push_str(tag),
                    _ => vary(x, keys, tag),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| vary(x, keys, tag)),
        _ => {}
    }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"))
}

/// `lines` (JSONL) repeated until `target` bytes, copy `r` with `keys` tagged `~r`.
fn repeat_jsonl(lines: &[&str], keys: &[&str], target: usize) -> Vec<String> {
    let values: Vec<Value> = lines.iter().map(|l| parse(l)).collect();
    let mut out = Vec::new();
    let mut size = 0;
    for r in 0.. {
        for v in &values {
            let mut v = v.clone();
            if r > 0 {
                vary(&mut v, keys, &format!("~{r}"));
            }
            let line = v.to_string();
            size += line.len() + 1;
            out.push(line);
        }
        if size >= target {
            break;
        }
    }
    out
}

fn jsonl(lines: &[String]) -> String {
    let mut s = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines {
        s.push_str(l);
        s.push('\n');
    }
    s
}

/// Grow a SQLite database to `target` bytes by copying the rows of `tables`
/// (as they are now) again and again: copy `r` suffixes `~r` to every text
/// column of a primary key or UNIQUE index, and adds `r × 2^20` to an
/// integer column that is a key by itself (even: `seq` keeps its parity).
fn grow_db(path: &Path, tables: &[&str], target: u64) {
    let conn = rusqlite::Connection::open(path).expect("open");
    // a copy may name a row of another table that is copied under a new key
    conn.execute_batch("PRAGMA foreign_keys = OFF")
        .expect("foreign_keys");
    let mut inserts = Vec::new();
    for t in tables {
        let cols: Vec<(String, String, i64)> = conn
            .prepare(&format!("PRAGMA table_info(\"{t}\")"))
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(1)?, r.get(2)?, r.get(5)?)))?
                    .collect()
            })
            .expect("table_info");
        let mut keys: Vec<Vec<String>> = vec![
            cols.iter()
                .filter(|c| c.2 > 0)
                .map(|c| c.0.clone())
                .collect(),
        ];
        let indexes: Vec<(String, bool)> = conn
            .prepare(&format!("PRAGMA index_list(\"{t}\")"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(1)?, r.get(2)?)))?.collect())
            .expect("index_list");
        for (index, _) in indexes.into_iter().filter(|(_, unique)| *unique) {
            let names: Vec<String> = conn
                .prepare(&format!("PRAGMA index_info(\"{index}\")"))
                .and_then(|mut s| s.query_map([], |r| r.get(2))?.collect())
                .expect("index_info");
            keys.push(names);
        }
        let mut list = String::new();
        let mut exprs = String::new();
        for (name, ty, _) in &cols {
            let sep = if list.is_empty() { "" } else { ", " };
            let _ = write!(list, "{sep}\"{name}\"");
            let in_key = keys.iter().any(|k| k.contains(name));
            let alone = keys.iter().any(|k| k.len() == 1 && k[0] == *name);
            let expr = if in_key && !ty.to_uppercase().contains("INT") {
                format!("\"{name}\" || '~' || ?1")
            } else if alone {
                format!("\"{name}\" + ?1 * 1048576")
            } else {
                format!("\"{name}\"")
            };
            let _ = write!(exprs, "{sep}{expr}");
        }
        conn.execute_batch(&format!(
            "CREATE TEMP TABLE \"orig_{t}\" AS SELECT * FROM main.\"{t}\""
        ))
        .expect("copy table");
        inserts.push(format!(
            "INSERT INTO main.\"{t}\" ({list}) SELECT {exprs} FROM temp.\"orig_{t}\""
        ));
    }
    let size = |c: &rusqlite::Connection| -> i64 {
        c.query_row(
            "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size",
            [],
            |r| r.get(0),
        )
        .expect("size")
    };
    let mut r: i64 = 1;
    while size(&conn) < target as i64 {
        let tx = conn.unchecked_transaction().expect("begin");
        for _ in 0..32 {
            for sql in &inserts {
                tx.execute(sql, [r]).expect("insert");
            }
            r += 1;
        }
        tx.commit().expect("commit");
    }
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .expect("checkpoint");
}

// --- the groups --------------------------------------------------------------

fn session_jsonl() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let rel = format!("{NANOBOT_NS}/Y2xpOmRpcmVjdA.jsonl");
    // the database would make the file a frozen secondary copy; the same read either way
    std::fs::remove_file(home.join(format!("{NANOBOT_NS}/sessions.sqlite3"))).expect("rm");
    let text = read(&format!("{NANOBOT}/{rel}"));
    let lines: Vec<&str> = text.lines().collect();
    let mut out = vec![lines[0].to_string()];
    out.extend(repeat_jsonl(&lines[1..], &["id", "tool_call_id"], TARGET));
    write(&home, &rel, &jsonl(&out));
    vec![input(
        "cli:direct",
        dir,
        home,
        "nanobot.session_jsonl",
        |r| r == rel,
    )]
}

fn session_db() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let db = home.join(format!("{NANOBOT_NS}/sessions.sqlite3"));
    {
        let conn = rusqlite::Connection::open(&db).expect("open");
        conn.execute_batch("DELETE FROM messages WHERE NOT json_valid(record)")
            .expect("drop the corrupt record");
    }
    grow_db(&db, &["sessions", "messages"], TARGET as u64);
    vec![input(
        "sessions.sqlite3",
        dir,
        home,
        "nanobot.session_db",
        |_| true,
    )]
}

fn webui_transcript() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let stem = ".nanobot/webui/websocket_b8e1c3f2-5d7a-4e61-9f0b-2a4c6d8e0f13";
    let segments = format!("{stem}.segments");
    std::fs::remove_dir_all(home.join(&segments)).expect("rm segments");
    let old = read(&format!("{NANOBOT}/{segments}/000001.jsonl"));
    let active = read(&format!("{NANOBOT}/{stem}.jsonl"));
    let lines: Vec<&str> = old.lines().chain(active.lines()).collect();
    let all = repeat_jsonl(&lines, &["turn_id", "call_id"], TARGET);
    // whole turns roll into segments of 2 MiB; the rest stays active
    let mut files: Vec<Vec<String>> = vec![Vec::new()];
    let mut size = 0;
    for line in all {
        let turn_start = line.contains("\"event\":\"user\"");
        if turn_start && size >= SEGMENT {
            files.push(Vec::new());
            size = 0;
        }
        size += line.len() + 1;
        files.last_mut().expect("a file").push(line);
    }
    let last = files.pop().expect("the active file");
    for (i, f) in files.iter().enumerate() {
        write(&home, &format!("{segments}/{:06}.jsonl", i + 1), &jsonl(f));
    }
    write(&home, &format!("{stem}.jsonl"), &jsonl(&last));
    vec![input(
        "websocket transcript",
        dir,
        home,
        "nanobot.webui_transcript",
        |_| true,
    )]
}

fn webui_index() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let rel = format!("{NANOBOT_NS}/.webui_session_index.json");
    let mut index = parse(&read(&format!("{NANOBOT}/{rel}")));
    let entries = index["sessions"].as_array().cloned().expect("sessions");
    let mut grown = Vec::new();
    let mut size = 0;
    for r in 0.. {
        for e in &entries {
            let mut e = e.clone();
            vary(&mut e, &["key", "file"], &format!("~{r}"));
            size += e.to_string().len() + 2;
            grown.push(e);
        }
        if size >= TARGET {
            break;
        }
    }
    index["sessions"] = Value::Array(grown);
    write(&home, &rel, &index.to_string());
    vec![input("index", dir, home, "nanobot.webui_index", |_| true)]
}

fn cli_history() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let rel = ".nanobot/history/cli_history";
    let one = read(&format!("{NANOBOT}/{rel}"));
    write(&home, rel, &one.repeat(TARGET.div_ceil(one.len())));
    vec![input(
        "cli_history",
        dir,
        home,
        "nanobot.cli_history",
        |_| true,
    )]
}

fn memory_history() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let rel = ".nanobot/workspace/memory/history.jsonl";
    let text = read(&format!("{NANOBOT}/{rel}"));
    let values: Vec<Value> = text.lines().map(parse).collect();
    let mut lines = Vec::new();
    let mut size = 0;
    let mut cursor = 0;
    while size < TARGET {
        for v in &values {
            let mut v = v.clone();
            cursor += 1;
            v["cursor"] = cursor.into();
            let line = v.to_string();
            size += line.len() + 1;
            lines.push(line);
        }
    }
    write(&home, rel, &jsonl(&lines));
    let jsonl_input = input("history.jsonl", dir, home, "nanobot.memory_history", |r| {
        r == rel
    });

    let (dir, home) = home_from("realwriter/legacy-history/home");
    let rel = ".nanobot/workspace/memory/HISTORY.md";
    let one = read(&format!("realwriter/legacy-history/home/{rel}"));
    write(&home, rel, &one.repeat(TARGET.div_ceil(one.len())));
    let md = input("HISTORY.md", dir, home, "nanobot.memory_history", |r| {
        r == rel
    });
    vec![jsonl_input, md]
}

/// One JSON file per run record under `dir`, `vary` giving copy `i` its ids
/// and file name, until [`MANY`] bytes.
fn run_records(
    name: &'static str,
    kind: &str,
    record: &str,
    dir_rel: &str,
    vary: impl Fn(&mut Value, u64) -> String,
) -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let runs = home.join(dir_rel);
    std::fs::remove_dir_all(&runs).expect("rm runs");
    let base = parse(&read(&format!("{NANOBOT}/{dir_rel}/{record}")));
    let mut size = 0;
    for i in 0.. {
        let mut v = base.clone();
        let file = vary(&mut v, i);
        let text = serde_json::to_string_pretty(&v).expect("json");
        size += text.len();
        write(&home, &format!("{dir_rel}/{file}.json"), &text);
        if size >= MANY {
            break;
        }
    }
    vec![input(name, dir, home, kind, |_| true)]
}

fn cron_run() -> Vec<Input> {
    run_records(
        "run records",
        "nanobot.cron_run",
        "02b8f7b8_1792562400000_fe7656d3.json",
        ".nanobot/workspace/cron/runs",
        |v, i| {
            let start = 1_792_562_400_000 + i * 60_000;
            v["run_id"] = format!("02b8f7b8:{start}:fe7656d3").into();
            v["updated_at_ms"] = (start + 5_990).into();
            format!("02b8f7b8_{start}_fe7656d3")
        },
    )
}

fn trigger_run() -> Vec<Input> {
    run_records(
        "run records",
        "nanobot.trigger_run",
        "tdl_badd0d8f081d.json",
        ".nanobot/workspace/triggers/runs",
        |v, i| {
            let id = format!("tdl_{i:012x}");
            v["delivery_id"] = id.clone().into();
            v["run_id"] = id.clone().into();
            id
        },
    )
}

fn permissions() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let config = read(&format!("{NANOBOT}/.nanobot/config.json"));
    let pairing = read(&format!("{NANOBOT}/.nanobot/pairing.json"));
    let mut size = 0;
    for i in 0.. {
        write(&home, &format!(".nanobot-b{i:03}/config.json"), &config);
        write(&home, &format!(".nanobot-b{i:03}/pairing.json"), &pairing);
        size += config.len() + pairing.len();
        if size >= MANY {
            break;
        }
    }
    vec![input(
        "config.json + pairing.json",
        dir,
        home,
        "nanobot.permissions",
        |r| r.starts_with(".nanobot-b"),
    )]
}

fn llm_usage() -> Vec<Input> {
    let (dir, home) = home_from(NANOBOT);
    let rel = ".nanobot/llm_usage.sqlite3";
    grow_db(&home.join(rel), &["llm_calls"], TARGET as u64);
    vec![input(
        "llm_usage.sqlite3",
        dir,
        home,
        "nanobot.llm_usage",
        |r| r == rel,
    )]
}

fn catalog() -> Vec<Input> {
    let (dir, home) = home_from(NANOCLAW);
    let db = home.join("data/v2.db");
    let tables: Vec<String> = {
        let conn = rusqlite::Connection::open(&db).expect("open");
        let names: Vec<String> = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
            .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
            .expect("tables");
        names
            .into_iter()
            .filter(|t| t != "schema_version")
            .filter(|t| {
                conn.query_row(&format!("SELECT count(*) > 0 FROM \"{t}\""), [], |r| {
                    r.get(0)
                })
                .expect("count")
            })
            .collect()
    };
    let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
    grow_db(&db, &tables, TARGET as u64);
    vec![input("v2.db", dir, home, "nanoclaw.catalog", |_| true)]
}

fn session_db_of(kind: &str, file: &str, tables: &[&str]) -> Vec<Input> {
    let (dir, home) = home_from(NANOCLAW);
    let rel = format!("{NANOCLAW_SESSION}/{file}");
    grow_db(&home.join(&rel), tables, TARGET as u64);
    vec![input("session", dir, home, kind, |r| r == rel)]
}

fn inbound() -> Vec<Input> {
    session_db_of(
        "nanoclaw.inbound",
        "inbound.db",
        &["messages_in", "delivered"],
    )
}

fn outbound() -> Vec<Input> {
    session_db_of(
        "nanoclaw.outbound",
        "outbound.db",
        &["messages_out", "processing_ack"],
    )
}

fn claude_transcript() -> Vec<Input> {
    let (dir, home) = home_from("nanoclaw/home-cc");
    let text = read(&format!("nanoclaw/home-cc/{CC_TRANSCRIPT}"));
    let lines: Vec<&str> = text.lines().collect();
    let keys = [
        "uuid",
        "parentUuid",
        "id",
        "tool_use_id",
        "requestId",
        "promptId",
    ];
    write(
        &home,
        CC_TRANSCRIPT,
        &jsonl(&repeat_jsonl(&lines, &keys, TARGET)),
    );
    vec![input(
        "main transcript",
        dir,
        home,
        "nanoclaw.claude_transcript",
        |r| r == CC_TRANSCRIPT,
    )]
}

// --- the harness -------------------------------------------------------------

fn options() -> ExtractOptions {
    ExtractOptions {
        scanner: Some(Scanner::new(&[])),
        ..ExtractOptions::default()
    }
}

/// What a group measures: its inputs, built once.
type Build = fn() -> Vec<Input>;

fn group(c: &mut Criterion, kind: &str, build: Build) {
    let options = options();
    let inputs = build();
    let mut g = c.benchmark_group(kind);
    for input in &inputs {
        let reports = extract(&input.stores, &input.home, &options, &input.scratch);
        let rows: u64 = reports.iter().map(|r| r.rows).sum();
        for (s, r) in input.stores.iter().zip(&reports) {
            assert!(
                r.status == "ok" && r.fatal.is_none(),
                "{kind} {}: {} {:?}",
                s.rel,
                r.status,
                r.diagnostics
            );
        }
        assert!(rows > 0, "{kind} {}: no rows", input.name);
        eprintln!(
            "{kind}/{}: {} store(s), {} bytes, {rows} rows",
            input.name,
            input.stores.len(),
            input.bytes
        );
        g.throughput(Throughput::Bytes(input.bytes));
        g.bench_function(input.name, |b| {
            b.iter(|| extract(&input.stores, &input.home, &options, &input.scratch))
        });
    }
    g.finish();
}

fn all(c: &mut Criterion) {
    let groups: [(&str, Build); 14] = [
        ("nanobot.session_jsonl", session_jsonl),
        ("nanobot.session_db", session_db),
        ("nanobot.webui_transcript", webui_transcript),
        ("nanobot.webui_index", webui_index),
        ("nanobot.cli_history", cli_history),
        ("nanobot.memory_history", memory_history),
        ("nanobot.cron_run", cron_run),
        ("nanobot.trigger_run", trigger_run),
        ("nanobot.permissions", permissions),
        ("nanobot.llm_usage", llm_usage),
        ("nanoclaw.catalog", catalog),
        ("nanoclaw.inbound", inbound),
        ("nanoclaw.outbound", outbound),
        ("nanoclaw.claude_transcript", claude_transcript),
    ];
    for (kind, build) in groups {
        group(c, kind, build);
    }
}

criterion_group! {
    name = benches;
    // a few MB per iteration: 10 samples over 5 s say enough
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    targets = all
}
criterion_main!(benches);
