//! Every reader gives the same answer from every SOURCE kind of the same
//! data: `usage` (its table and `--json`), `report` (the text of the page's
//! tables), `sql` (fixed queries, `--json`), `otlp` (the traces file) and
//! `mcp` (a `query` call and `usage_by_day`, over stdio) run on a HOME
//! (`--no-keep`, and kept in a fresh XDG_CACHE_HOME), on OUT.parquet with
//! `--tables`, on the tables directory alone, on a `--db` file and on a
//! ledger of `nanoload sync`, for a nanobot home, a nanoclaw home and a home
//! of both; every answer is compared with OUT's, byte for byte.
//!
//! What is documented to differ (docs/design.md "Readers and SOURCE"), and
//! so left out of the comparison:
//! - a tables directory holds the side tables, not `events`: the readers of
//!   events (`report`, `otlp`, the `sql` and `mcp` queries of `events`) are
//!   not run on it;
//! - `sql` and `mcp` show a ledger as its own tables (`ledger_events`,
//!   `loads`, …: the history, with what is gone), not as a load's outputs;
//!   `usage`, `report` and `otlp` read its export, and are compared;
//! - `load_id`, and the `seen` columns of a ledger's export: each load, sync
//!   and export has its own; no query here names them, and `report` is
//!   compared by the text of its tables, which show neither.
//!
//! Every mismatch of the table is collected and all are shown at the end,
//! one line each: `reader × kind: what differs`.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

/// One SOURCE kind of the data of a home: the arguments that name it (after
/// the reader's own positional ones go the flags) and its cache directory.
struct Kind {
    name: &'static str,
    /// SOURCE, the positional argument.
    source: PathBuf,
    /// Flags naming the rest of SOURCE (`--tables DIR`, `--no-keep`).
    flags: Vec<OsString>,
    /// XDG_CACHE_HOME for the readers run on it (a HOME kept writes there).
    cache: PathBuf,
    /// Whether it holds `events` (a tables directory does not).
    events: bool,
    /// Whether it is a ledger (`sql` and `mcp` show its own tables).
    ledger: bool,
}

/// The SOURCE kinds of one home, made from one load (with `--db`) and one
/// sync; `work` holds them all.
fn kinds(home: &Path, work: &Path) -> Result<Vec<Kind>, Box<dyn std::error::Error>> {
    let out = work.join("out.parquet");
    let tables = work.join("tables");
    let db = work.join("load.duckdb");
    let ledger = work.join("history.duckdb");
    let scratch = work.join("scratch-cache");
    let kept = work.join("kept-cache");
    std::fs::create_dir_all(&scratch)?;
    std::fs::create_dir_all(&kept)?;
    let o = nanoload(
        &scratch,
        &[
            home.as_os_str(),
            out.as_os_str(),
            OsStr::new("--tables"),
            tables.as_os_str(),
            OsStr::new("--db"),
            db.as_os_str(),
            OsStr::new("--quiet"),
        ],
    )?;
    assert!(o.status.code().is_some_and(|c| c <= 1), "load: {}", err(&o));
    let o = nanoload(
        &scratch,
        &[
            OsStr::new("sync"),
            home.as_os_str(),
            ledger.as_os_str(),
            OsStr::new("--quiet"),
        ],
    )?;
    assert!(o.status.code().is_some_and(|c| c <= 1), "sync: {}", err(&o));
    let kind = |name, source: &Path, flags: Vec<OsString>, cache: &Path, events| Kind {
        name,
        source: source.to_path_buf(),
        flags,
        cache: cache.to_path_buf(),
        events,
        ledger: name == "ledger",
    };
    Ok(vec![
        kind(
            "OUT --tables",
            &out,
            vec!["--tables".into(), tables.clone().into()],
            &scratch,
            true,
        ),
        kind(
            "HOME --no-keep",
            home,
            vec!["--no-keep".into()],
            &scratch,
            true,
        ),
        kind("HOME kept", home, vec![], &kept, true),
        kind("tables dir", &tables, vec![], &scratch, false),
        kind("--db file", &db, vec![], &scratch, true),
        kind("ledger", &ledger, vec![], &scratch, true),
    ])
}

/// `nanoload ARGS` with XDG_CACHE_HOME `cache`, no COLUMNS (a pipe: every
/// column).
fn nanoload<S: AsRef<OsStr>>(
    cache: &Path,
    args: &[S],
) -> Result<Output, Box<dyn std::error::Error>> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("COLUMNS");
    output_within(&mut cmd, HANG_LIMIT, "nanoload (sources table)")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// What a reader showed of one kind: its answer, or why it gave none (the
/// exit code and stderr). A reader's exit 1 (what HOME could not read, as a
/// load says it) is an answer.
type Shown = Result<String, String>;

/// `reader ARGS… SOURCE-FLAGS…` on `k`: stdout, or the failure.
fn read(k: &Kind, reader: &str, positional: &[&OsStr], extra: &[&str]) -> Shown {
    let mut a: Vec<OsString> = vec![reader.into(), k.source.clone().into()];
    a.extend(positional.iter().map(|p| p.to_os_string()));
    a.extend(k.flags.iter().cloned());
    a.extend(extra.iter().map(OsString::from));
    let o = nanoload(&k.cache, &a).map_err(|e| e.to_string())?;
    match o.status.code() {
        Some(0 | 1) => Ok(String::from_utf8_lossy(&o.stdout).into_owned()),
        // sql --json gives its error on stdout
        c => Err(format!(
            "exit {c:?}: {}{}",
            err(&o).trim_end(),
            String::from_utf8_lossy(&o.stdout).trim_end()
        )),
    }
}

/// The text of every `<table>` of a report page, one line per row, cells
/// split by tabs, the markup dropped.
fn page_tables(html: &str) -> String {
    let mut s = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<table") {
        let Some(j) = rest[i..].find("</table>") else {
            break;
        };
        let table = &rest[i..i + j];
        for row in table.split("</tr>") {
            let mut cells = Vec::new();
            for cell in row.split("</t") {
                let text = strip_tags(cell);
                if !text.trim().is_empty() {
                    cells.push(text.trim().to_string());
                }
            }
            if !cells.is_empty() {
                s.push_str(&cells.join("\t"));
                s.push('\n');
            }
        }
        s.push('\n');
        rest = &rest[i + j..];
    }
    s
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in s.chars() {
        match c {
            '<' => inside = true,
            '>' => inside = false,
            c if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

/// `report SOURCE page.html`: the text of its tables.
fn report(k: &Kind, work: &Path) -> Shown {
    let page = work.join(format!("{}.html", k.name.replace([' ', '-'], "_")));
    read(k, "report", &[page.as_os_str()], &[])?;
    let html = std::fs::read_to_string(&page).map_err(|e| e.to_string())?;
    Ok(page_tables(&html))
}

/// `otlp SOURCE traces.jsonl`: the file's bytes.
fn otlp(k: &Kind, work: &Path) -> Shown {
    let file = work.join(format!("{}.jsonl", k.name.replace([' ', '-'], "_")));
    read(k, "otlp", &[file.as_os_str()], &[])?;
    std::fs::read_to_string(&file).map_err(|e| e.to_string())
}

/// One `nanoload mcp SOURCE` server given `calls` (`tools/call` of each
/// tool with its arguments): each call's result, as the client sees it.
fn mcp(k: &Kind, calls: &[(&str, serde_json::Value)]) -> Shown {
    use std::io::Write;
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.arg("mcp")
        .arg(&k.source)
        .args(&k.flags)
        .env("XDG_CACHE_HOME", &k.cache)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| e.to_string())?;
    {
        let mut stdin = child.stdin.take().ok_or("stdin")?;
        for (i, (tool, args)) in calls.iter().enumerate() {
            let id = i64::try_from(i).unwrap_or(0);
            writeln!(stdin, "{}", mcp_request(id, tool, args.clone()))
                .map_err(|e| e.to_string())?;
        }
    }
    let o = wait_within(child, HANG_LIMIT, "nanoload mcp (sources table)")
        .map_err(|e| e.to_string())?;
    if o.status.code() != Some(0) {
        return Err(format!(
            "exit {:?}: {}",
            o.status.code(),
            err(&o).trim_end()
        ));
    }
    let mut shown = String::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
        shown.push_str(&v["result"].to_string());
        shown.push('\n');
    }
    Ok(shown)
}

/// The `sql` queries, each of the tables a load writes, none naming
/// `load_id`; whether it reads `events`.
const QUERIES: [(&str, bool); 4] = [
    (
        "SELECT agent, turn_type, count(*) AS n FROM events GROUP BY ALL ORDER BY ALL",
        true,
    ),
    (
        "SELECT agent, provider, model, count(*) AS calls, sum(total_tokens) AS tokens,
                sum(cost_usd::DECIMAL(38, 12)) AS cost
         FROM llm_calls GROUP BY ALL ORDER BY ALL",
        false,
    ),
    (
        "SELECT session_uid, title, llm_calls, round(cost_usd, 6) AS cost
         FROM sessions ORDER BY ALL",
        false,
    ),
    (
        "SELECT kind, code, count(*) AS n FROM diagnostics GROUP BY ALL ORDER BY ALL",
        false,
    ),
];

/// Each reader on each kind of `home`'s data against its answer on OUT
/// (the first kind): the mismatches, one line each.
fn table(home: &Path) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let work = tempfile::tempdir()?;
    let kinds = kinds(home, work.path())?;
    // reader name, whether it reads events, the answer of a kind; the
    // query tools (mcp, sql) are the readers from the sixth on
    type Reader<'a> = (&'a str, bool, Box<dyn Fn(&Kind) -> Shown + 'a>);
    let w = work.path();
    let mut readers: Vec<Reader> = vec![
        ("usage", false, Box::new(|k| read(k, "usage", &[], &[]))),
        (
            "usage --json",
            false,
            Box::new(|k| read(k, "usage", &[], &["--json"])),
        ),
        (
            "usage --by session",
            false,
            Box::new(|k| read(k, "usage", &[], &["--by", "session"])),
        ),
        ("report", true, Box::new(|k| report(k, w))),
        ("otlp", true, Box::new(|k| otlp(k, w))),
        (
            "mcp usage_by_day, top_sessions_by_cost",
            false,
            Box::new(|k| {
                mcp(
                    k,
                    &[
                        ("usage_by_day", serde_json::json!({})),
                        ("top_sessions_by_cost", serde_json::json!({})),
                    ],
                )
            }),
        ),
    ];
    for (q, events) in QUERIES {
        readers.push((
            q,
            events,
            Box::new(move |k| read(k, "sql", &[OsStr::new(q)], &["--json"])),
        ));
        readers.push((
            q,
            events,
            Box::new(move |k| mcp(k, &[("query", serde_json::json!({"sql": q}))])),
        ));
    }
    let mut mismatches = Vec::new();
    for (i, (name, events, run)) in readers.iter().enumerate() {
        // sql and mcp of one query alternate
        let name = if i >= 6 {
            format!(
                "{} `{}`",
                if i % 2 == 0 { "sql" } else { "mcp query" },
                one_line(name)
            )
        } else {
            (*name).to_string()
        };
        let want = match run(&kinds[0]) {
            Ok(a) if !a.trim().is_empty() => a,
            other => return Err(format!("{name} × {}: {other:?}", kinds[0].name).into()),
        };
        let query_tool = i >= 5;
        for k in &kinds[1..] {
            if (*events && !k.events) || (query_tool && k.ledger) {
                continue;
            }
            match run(k) {
                Ok(got) if got == want => {}
                Ok(got) => {
                    let at = first_difference(&got, &want);
                    mismatches.push(format!(
                        "{name} × {}: answers differ at line {}: {} (OUT: {})",
                        k.name,
                        at + 1,
                        cut(got.lines().nth(at).unwrap_or("")),
                        cut(want.lines().nth(at).unwrap_or("")),
                    ))
                }
                Err(e) => mismatches.push(format!(
                    "{name} × {}: no answer: {}",
                    k.name,
                    e.lines().next().unwrap_or("")
                )),
            }
        }
    }
    Ok(mismatches)
}

/// At most 300 characters of `s`, quoted.
fn cut(s: &str) -> String {
    let c: String = s.chars().take(300).collect();
    format!("{c:?}{}", if c.len() < s.len() { "…" } else { "" })
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The index of the first line where `a` and `b` differ.
fn first_difference(a: &str, b: &str) -> usize {
    let mut n = 0;
    let (mut x, mut y) = (a.lines(), b.lines());
    loop {
        match (x.next(), y.next()) {
            (Some(p), Some(q)) if p == q => n += 1,
            (None, None) => return n,
            _ => return n,
        }
    }
}

fn assert_one_answer(home: &Path) -> TestResult {
    let mismatches = table(home)?;
    assert!(
        mismatches.is_empty(),
        "{} of the reader × SOURCE kind table differ from OUT --tables:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    Ok(())
}

#[test]
fn every_reader_answers_alike_from_every_source_of_a_nanobot_home() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    std::fs::remove_file(home.path().join("EXPECTED.md"))?;
    assert_one_answer(home.path())
}

#[test]
fn every_reader_answers_alike_from_every_source_of_a_nanoclaw_home() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-cc"))?;
    assert_one_answer(home.path())
}

#[test]
fn every_reader_answers_alike_from_every_source_of_a_mixed_home() -> TestResult {
    let home = mixed_home()?;
    assert_one_answer(home.path())
}
