//! No secret in any byte nanoload writes. The secrets corpus
//! (`tests/secrets/corpus.json`: fakes in the shapes of gitleaks' rules and
//! detect-secrets' plugins) planted in every context by nanobot 0.3.5's own
//! storage code (`fixtures/secrets/nanobot-corpus`) and by nanoclaw's exact
//! schema into a nanoclaw home, loaded with `--tables`, `--db`, `--cache`
//! and `--summary-json`; every output read back decoded and as raw bytes,
//! the cache's files too, stdout and stderr. nanoclaw's credential fields
//! (`fixtures/nanoclaw/home-mcp`, written by nanoclaw's own code).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use aho_corasick::AhoCorasick;
use duckdb::Connection;
use nanoload::secrets::corpus::{KNOWN_MISSES, in_context};
use serde_json::Value;

use crate::common::*;

fn json(rel: &str) -> Result<Value, Box<dyn std::error::Error>> {
    Ok(serde_json::from_str(&std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel),
    )?)?)
}

/// Every 12-character window of `value` (the whole value when shorter)
/// that could only come from it: six distinct characters or more (a PEM
/// body's `AAAAAAAAABAA` is structure every key shares, and a Parquet
/// file's bytes hold such runs by themselves).
fn windows(value: &str) -> Vec<String> {
    let chars: Vec<char> = value.chars().collect();
    if chars.len() <= 12 {
        return vec![value.to_string()];
    }
    chars
        .windows(12)
        .filter(|w| w.iter().collect::<BTreeSet<_>>().len() >= 6)
        .map(|w| w.iter().collect())
        .collect()
}

/// What one run wrote, decoded (OUT, each `--tables` file, every table of
/// the `--db` file, the cache's Parquet files, the summary, stdout, stderr)
/// and raw (every file written, by path).
struct Written {
    run: std::sync::Arc<Run>,
    text: String,
    files: Vec<(PathBuf, Vec<u8>)>,
}

/// Load `home` twice with `--cache` (the second run staged from the cache),
/// keeping everything the second run wrote and everything in the cache
/// (every store's entry, nanoclaw's as nanobot's).
fn write_everything(home: &Path) -> Result<Written, Box<dyn std::error::Error>> {
    let side = tempfile::tempdir()?;
    let cache = side.path().join("cache");
    let summary = side.path().join("summary.json");
    let args = [
        "--cache",
        cache.to_str().ok_or("path")?,
        "--summary-json",
        summary.to_str().ok_or("path")?,
    ];
    let first = run_home(home, &args)?;
    assert!(matches!(first.code(), Some(0 | 1)), "{}", first.stderr());
    let (run, mut text) = run_with_all_outputs(home, &args)?;
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr());
    assert!(run.stderr().contains("cache:"), "{}", run.stderr());
    let m = Connection::open_in_memory()?;
    let mut files = Vec::new();
    for root in [run.dir.path(), side.path()] {
        for e in walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
        {
            if !e.file_type().is_file() {
                continue;
            }
            let p = e.path().to_path_buf();
            if p.starts_with(&cache) && p.extension().is_some_and(|x| x == "parquet") {
                text.push_str(&all_text(
                    &m,
                    &[&format!("read_parquet('{}')", p.display())],
                )?);
            }
            files.push((p.clone(), std::fs::read(&p)?));
        }
    }
    text.push_str(&std::fs::read_to_string(&summary)?);
    assert!(
        files
            .iter()
            .any(|(p, _)| p.to_string_lossy().contains("blob-")),
        "the cache holds blob files"
    );
    Ok(Written { run, text, files })
}

/// No window ([`windows`]) of a claimed value (`claimed_values`) occurs in
/// the decoded text or in a file's raw bytes.
fn assert_no_leak(w: &Written, claimed: &[(String, Vec<String>)]) -> TestResult {
    let needles: Vec<String> = claimed
        .iter()
        .flat_map(|(_, v)| v.iter().flat_map(|x| windows(x)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let ac = AhoCorasick::new(&needles)?;
    let mut found: BTreeSet<String> = BTreeSet::new();
    for m in ac.find_overlapping_iter(w.text.as_str()) {
        found.insert(format!(
            "decoded output: {}",
            needles[m.pattern().as_usize()]
        ));
    }
    for (p, bytes) in &w.files {
        for m in ac.find_overlapping_iter(bytes.as_slice()) {
            found.insert(format!(
                "{}: {}",
                p.display(),
                needles[m.pattern().as_usize()]
            ));
        }
    }
    let found: Vec<String> = found.into_iter().collect();
    assert!(
        found.is_empty(),
        "{} secret windows in outputs:\n{}",
        found.len(),
        found.join("\n")
    );
    Ok(())
}

/// The corpus's positives that nanoload claims in the contexts they were
/// planted in: every value and `also_secret`, by item id. Hard families and
/// the scanner's known misses (`KNOWN_MISSES`) are left out — the scanner's
/// report (`tests/secrets/REPORT.md`) counts them.
fn claimed_values(
    corpus: &Value,
    planted_contexts: &dyn Fn(&str) -> BTreeSet<String>,
) -> Vec<(String, Vec<String>)> {
    let empty = Vec::new();
    corpus["positives"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .filter(|p| {
            let fam = p["family"].as_str().unwrap_or_default();
            let shape = p["shape"].as_str().unwrap_or_default();
            let hard = corpus["families"][fam]["hard"].as_bool() == Some(true);
            let id = p["id"].as_str().unwrap_or_default();
            !hard
                && !planted_contexts(id)
                    .iter()
                    .any(|c| KNOWN_MISSES.contains(&(fam, shape, c.as_str())))
        })
        .map(|p| {
            let mut v = vec![p["value"].as_str().unwrap_or_default().to_string()];
            for a in p["also_secret"].as_array().unwrap_or(&empty) {
                v.extend(a.as_str().map(String::from));
            }
            (p["id"].as_str().unwrap_or_default().to_string(), v)
        })
        .collect()
}

/// Every positive nanobot's own code stored — pasted in prose, after CJK, glued
/// to a word, after a JSON escape in a tool call's raw arguments, in a URL
/// query, percent-encoded, in markdown, in a `.env` file a tool read, in the
/// WebUI transcript, the sidebar's cut preview, the CLI history, the memory
/// journal and two torn lines — is gone from every byte of every output and
/// of the cache: no 12 characters of any value (nor of an access key id
/// beside a secret key). Every negative stays verbatim in OUT wherever
/// nanobot stored it as pasted.
#[test]
fn the_corpus_planted_by_nanobot_leaves_no_secret_in_any_output_byte() -> TestResult {
    let corpus = json("tests/secrets/corpus.json")?;
    let planted = json("fixtures/secrets/nanobot-corpus/planted.json")?;
    let empty = Vec::new();
    let plantings = planted["plantings"].as_array().unwrap_or(&empty);
    assert_eq!(plantings.len(), 7346);
    let home = copy_home(&fixture("secrets/nanobot-corpus/home"))?;
    // the home holds every planted positive verbatim somewhere
    let mut home_text = String::new();
    for e in walkdir::WalkDir::new(home.path())
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.file_type().is_file() {
            home_text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path())?));
        }
    }
    let contexts_of = |id: &str| -> BTreeSet<String> {
        plantings
            .iter()
            .filter(|p| p["id"] == id)
            .filter_map(|p| p["context"].as_str().map(String::from))
            .collect()
    };
    // the items planted: the fixture was planted from the corpus's first
    // 384 items; the families added since (drawn from their own generator,
    // so the first items kept their values) reach the outputs through the
    // nanoclaw chats below and the scanner's own corpus test
    let claimed: Vec<_> = claimed_values(&corpus, &contexts_of)
        .into_iter()
        .filter(|(id, _)| !contexts_of(id).is_empty())
        .collect();
    assert!(claimed.len() >= 200, "{}", claimed.len());
    for (id, values) in &claimed {
        let escaped = serde_json::to_string(&values[0])?;
        assert!(
            home_text.contains(values[0].as_str()) || home_text.contains(escaped.trim_matches('"')),
            "{id} not in the home"
        );
    }

    let w = write_everything(home.path())?;
    assert_no_leak(&w, &claimed)?;

    // the negatives, where nanobot stored them as pasted, are in OUT verbatim
    let out_text = w
        .run
        .rows("SELECT text FROM events WHERE text IS NOT NULL")?;
    let out_text: String = out_text
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n");
    let ctx_by_id = |id: &str| {
        corpus["contexts"]
            .as_array()
            .and_then(|c| c.iter().find(|x| x["id"] == id))
            .cloned()
    };
    let mut checked = 0;
    let mut missing = Vec::new();
    for n in corpus["negatives"].as_array().unwrap_or(&empty) {
        let id = n["id"].as_str().unwrap_or_default();
        for p in plantings.iter().filter(|p| p["id"] == id) {
            let plain = matches!(
                p["placement"].as_str(),
                Some("session_user" | "session_assistant" | "webui_user" | "webui_assistant")
            ) && p["written"].is_null();
            let Some(ctx) = p["context"].as_str().and_then(ctx_by_id) else {
                continue;
            };
            let Some(pasted) = in_context(&ctx, n["text"].as_str().unwrap_or_default()) else {
                continue;
            };
            if !plain || ctx["placements"].is_array() {
                continue;
            }
            checked += 1;
            if !out_text.contains(pasted.as_str()) {
                missing.push(format!("{id} in {}: {pasted:?}", ctx["id"]));
            }
        }
    }
    assert!(checked > 1000, "{checked}");
    assert!(
        missing.is_empty(),
        "negatives changed:\n{}",
        missing.join("\n")
    );

    // the torn lines: their bad-line rows and diagnostics kept, the keys gone
    let torn = w.run.rows(
        "SELECT count(*) FROM events WHERE text LIKE 'parser: unparseable line%' \
         AND text LIKE '%[redacted:%'",
    )?;
    assert_eq!(torn, strs(&[&["2"]]));
    // every redaction is counted per store and in the summary
    let counted: i64 = w
        .run
        .one("SELECT sum(value::VARCHAR::BIGINT) FROM sources, json_each(redactions)")?
        .parse()?;
    assert!(counted > 5000, "{counted}");
    Ok(())
}

/// The corpus pasted into nanoclaw chats: inbound messages and outbound
/// replies in nanoclaw's exact schema (rows added to `home-mcp`'s session
/// databases, copied from the rows nanoclaw wrote), in the contexts a chat
/// carries. No 12 characters of any claimed positive reach any output.
#[test]
fn the_corpus_pasted_into_nanoclaw_chats_leaves_no_secret() -> TestResult {
    let corpus = json("tests/secrets/corpus.json")?;
    let home = copy_home(&fixture("nanoclaw/home-mcp"))?;
    let sess = walkdir::WalkDir::new(home.path().join("data/v2-sessions"))
        .into_iter()
        .filter_map(Result::ok)
        .find(|e| e.file_name() == "inbound.db")
        .and_then(|e| e.path().parent().map(Path::to_path_buf))
        .ok_or("no session")?;
    let contexts: Vec<Value> = corpus["contexts"]
        .as_array()
        .ok_or("contexts")?
        .iter()
        .filter(|c| !c["placements"].is_array())
        .cloned()
        .collect();
    let empty = Vec::new();
    let positives = corpus["positives"].as_array().unwrap_or(&empty);
    let mut n = 0;
    for (db, table, from) in [
        ("inbound.db", "messages_in", "kind = 'chat-sdk'"),
        ("outbound.db", "messages_out", "kind = 'chat'"),
    ] {
        let c = rusqlite::Connection::open(sess.join(db))?;
        let cols: Vec<String> = {
            let mut st = c.prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?;
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<Result<_, _>>()?
        };
        let pick = |col: &str| match col {
            "id" => "?1".to_string(),
            "seq" => "?2".to_string(),
            "content" => "json_object('text', ?3)".to_string(),
            "series_id" => "?1".to_string(),
            other => other.to_string(),
        };
        let sql = format!(
            "INSERT INTO {table} ({}) SELECT {} FROM {table} WHERE {from} ORDER BY seq LIMIT 1",
            cols.join(", "),
            cols.iter().map(|c| pick(c)).collect::<Vec<_>>().join(", ")
        );
        let mut seq: i64 =
            c.query_row(&format!("SELECT max(seq) FROM {table}"), [], |r| r.get(0))?;
        for (i, p) in positives.iter().enumerate() {
            let text = p["text"].as_str().unwrap_or_default();
            for ctx in &contexts {
                let Some(pasted) = in_context(ctx, text) else {
                    continue;
                };
                seq += 2;
                let id = format!(
                    "corpus-{table}-{i}-{}",
                    ctx["id"].as_str().unwrap_or_default()
                );
                n += c.execute(&sql, rusqlite::params![id, seq, pasted])?;
            }
        }
    }
    assert!(n > 4000, "{n}");
    let w = write_everything(home.path())?;
    let claimed = claimed_values(&corpus, &|_| {
        contexts
            .iter()
            .filter_map(|c| c["id"].as_str().map(String::from))
            .collect()
    });
    assert_no_leak(&w, &claimed)?;
    let rows: i64 = w
        .run
        .one("SELECT count(*) FROM events WHERE text LIKE '%[redacted:%' AND agent = 'nanoclaw'")?
        .parse()?;
    assert!(rows > 3000, "{rows}");
    Ok(())
}

/// nanoclaw's `add_mcp_server` requests, an `ncl` request with `--headers`,
/// the response listing the MCP servers and the host's approval note
/// (`fixtures/nanoclaw/home-mcp`, written by nanoclaw 2.2.0's own code):
/// their credential fields are `[redacted:field]`, their structure and
/// non-secret fields (server name, command, args, keys) stay, and the
/// fields are counted in `sources.redactions`.
#[test]
fn nanoclaw_credential_fields_are_redacted_by_allow_list() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-mcp"))?;
    let (run, all) = run_with_all_outputs(home.path(), &[])?;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    let expected = std::fs::read_to_string(fixture("nanoclaw/EXPECTED-home-mcp.md"))?;
    let section = expected
        .split("## Secrets")
        .nth(1)
        .ok_or("no Secrets section")?;
    let secrets: Vec<&str> = section
        .split("\n## ")
        .next()
        .unwrap_or("")
        .split('`')
        .skip(1)
        .step_by(2)
        .collect();
    assert_eq!(secrets.len(), 8, "{secrets:?}");
    for s in &secrets {
        assert!(!all.contains(s), "{s} in an output");
    }
    assert_eq!(
        run.rows(
            "SELECT text, native->>'$.content.env' FROM events \
             WHERE native->>'$.content.action' = 'add_mcp_server' ORDER BY seq"
        )?,
        strs(&[
            &[
                r#"add_mcp_server github npx ["-y","@modelcontextprotocol/server-github"]"#,
                r#"{"API_KEY":"[redacted:field]","DATABASE_URL":"[redacted:field]","GITHUB_PERSONAL_ACCESS_TOKEN":"[redacted:field]"}"#,
            ],
            &[
                "add_mcp_server zapier https://mcp.zapier.com/[redacted:field]",
                "NULL"
            ],
        ])
    );
    let fields: i64 = run
        .one(
            "SELECT sum((redactions->>'$.field')::BIGINT) FROM sources \
             WHERE source_kind LIKE 'nanoclaw.%'",
        )?
        .parse()?;
    assert!(fields >= 8, "{fields}");
    Ok(())
}

/// Every value of `sql`'s one column, one per line: raw (`raw`) or each
/// as a JSON string (`json`), so detect-secrets sees a value that is one bare
/// token whole, and an assignment as written.
fn dump(c: &Connection, sql: &str, dir: &Path, name: &str) -> TestResult {
    let values: Vec<String> = query(c, sql)?
        .into_iter()
        .flatten()
        .filter(|v| v != "NULL")
        .collect();
    std::fs::write(dir.join(format!("{name}.raw.txt")), values.join("\n"))?;
    let quoted: Vec<String> = values
        .iter()
        .map(serde_json::to_string)
        .collect::<Result<_, _>>()?;
    std::fs::write(dir.join(format!("{name}.json.txt")), quoted.join("\n"))?;
    Ok(())
}

/// A finding detect-secrets makes on nanoload's output that is not a leak:
/// a bare hex digest or uuid (32, 40 or 64 lower-case hex: hashes, ids, git
/// SHAs — no family nanoload claims is bare hex), or a text that holds (or is
/// part of) one of `known`: the corpus's negatives (look-alikes nanoload keeps
/// on purpose) and the positives it does not claim (the report's known misses
/// and unclaimed families).
fn explained(m: &str, known: &[String]) -> bool {
    let t = m.trim_matches('\\');
    let hex = |n: usize| {
        t.len() == n
            && t.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    hex(32)
        || hex(40)
        || hex(64)
        || known
            .iter()
            .any(|k| (k.len() >= 8 && t.contains(k.as_str())) || (t.len() >= 8 && k.contains(t)))
}

/// An independent second opinion: Yelp's detect-secrets (pinned in
/// `tests/detect_secrets/requirements.txt`, verification off, the network
/// closed) over a dump of every fixture home's outputs and of the corpus
/// home's — `text` and `native` of every event, every diagnostic message —
/// finds nothing the planted lists do not explain: never a planted secret,
/// never a marker, and no other finding than a corpus look-alike or a bare
/// hex digest.
#[test]
#[ignore = "tools tier (detect-secrets): scripts/check.sh runs it (cargo test -- --ignored)"]
fn detect_secrets_finds_nothing_the_planted_lists_do_not_explain() -> TestResult {
    let python = venv_python("NANOLOAD_DETECT_SECRETS_PYTHON", "detect_secrets/setup.sh")?;
    let corpus = json("tests/secrets/corpus.json")?;
    let planted = json("fixtures/secrets/nanobot-corpus/planted.json")?;
    let empty = Vec::new();
    let plantings = planted["plantings"].as_array().unwrap_or(&empty);
    let claimed = claimed_values(&corpus, &|id: &str| {
        plantings
            .iter()
            .filter(|p| p["id"] == id)
            .filter_map(|p| p["context"].as_str().map(String::from))
            .collect()
    });
    let claimed_ids: BTreeSet<&str> = claimed.iter().map(|(id, _)| id.as_str()).collect();
    // what a finding may hold: a look-alike, or a positive nanoload does not claim
    let known: Vec<String> = corpus["negatives"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .chain(
            corpus["positives"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .filter(|p| !claimed_ids.contains(p["id"].as_str().unwrap_or_default())),
        )
        .filter_map(|n| n["text"].as_str().map(String::from))
        .collect();
    // what a finding may never hold: 12 characters of a claimed positive, a
    // fixture's planted secret
    let mut leaks: Vec<String> = claimed
        .iter()
        .flat_map(|(_, v)| v.iter().flat_map(|x| windows(x)))
        .collect();
    leaks.extend(fixture_secrets()?.into_iter().filter(|s| s.len() >= 8));
    let leak_ac = AhoCorasick::new(&leaks)?;
    let dumps = tempfile::tempdir()?;
    let mut runs: Vec<(String, tempfile::TempDir)> = Vec::new();
    for home in crate::fixture_homes::homes()? {
        let loaded = crate::fixture_homes::load(&home)?;
        if loaded.files.is_empty() {
            continue;
        }
        let dir = tempfile::tempdir()?;
        loaded.write_files(dir.path())?;
        runs.push((home, dir));
    }
    let corpus_home = copy_home(&fixture("secrets/nanobot-corpus/home"))?;
    let corpus_run = run_home(corpus_home.path(), &[])?;
    assert_eq!(corpus_run.code(), Some(1), "{}", corpus_run.stderr());
    let m = Connection::open_in_memory()?;
    // a thinking block's signature and a redacted block's content: opaque
    // values the provider issues with its answer (high entropy, no
    // credential), as nanobot stored them
    let mut known = known;
    for (_, d) in &runs {
        let out = d.path().join("out.parquet");
        let mut stmt = m.prepare(&format!(
            "SELECT native::VARCHAR FROM read_parquet('{}') WHERE native::VARCHAR LIKE '{{\"signature\":%' OR native::VARCHAR LIKE '{{\"redactedContentBase64\":%'",
            out.display()
        ))?;
        let natives = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        for native in natives {
            if let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&native) {
                known.extend(
                    ["signature", "redactedContentBase64"]
                        .iter()
                        .filter_map(|k| o.get(*k).and_then(Value::as_str))
                        .map(String::from),
                );
            }
        }
    }
    let mut n = 0;
    for (name, out, tables) in runs
        .iter()
        .map(|(h, d)| {
            (
                h.replace('/', "_"),
                d.path().join("out.parquet"),
                d.path().join("tables"),
            )
        })
        .chain([(
            "secrets_nanobot-corpus".to_string(),
            corpus_run.out.clone(),
            corpus_run.tables.clone(),
        )])
    {
        let dir = dumps.path().join(&name);
        std::fs::create_dir_all(&dir)?;
        let out = format!("read_parquet('{}')", out.display());
        dump(&m, &format!("SELECT text FROM {out}"), &dir, "text")?;
        dump(
            &m,
            &format!("SELECT native::VARCHAR FROM {out}"),
            &dir,
            "native",
        )?;
        dump(
            &m,
            &format!(
                "SELECT message FROM read_parquet('{}/diagnostics.parquet')",
                tables.display()
            ),
            &dir,
            "diagnostics",
        )?;
        n += 1;
    }
    assert!(n >= 27, "{n}");
    let scan = std::process::Command::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/detect_secrets/scan.py"))
        .arg(dumps.path())
        .output()?;
    assert!(
        scan.status.success(),
        "{}",
        String::from_utf8_lossy(&scan.stderr)
    );
    let findings: Vec<Value> = serde_json::from_slice(&scan.stdout)?;
    // it does look: the corpus home's look-alikes are flagged
    assert!(findings.len() > 20, "{}", findings.len());
    let mut bad = Vec::new();
    for f in &findings {
        let (file, m) = (
            f["file"].as_str().unwrap_or(""),
            f["match"].as_str().unwrap_or(""),
        );
        if leak_ac.is_match(m) || m.contains("[redacted:") || !explained(m, &known) {
            bad.push(format!("{file}:{} {} {m:?}", f["line"], f["type"]));
        }
    }
    assert!(
        bad.is_empty(),
        "{} unexplained findings:\n{}",
        bad.len(),
        bad.join("\n")
    );
    Ok(())
}

/// Every string of a JSON value.
fn json_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| json_strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| json_strings(x, out)),
        _ => {}
    }
}

/// The redactions the scanner makes in `texts` (path, redacted text).
fn redactions_in(texts: &[(String, String)]) -> Vec<String> {
    let s = nanoload::secrets::Scanner::new(&[]);
    texts
        .iter()
        .filter_map(|(path, t)| {
            let mut c = nanoload::secrets::Counts::new();
            s.redact(t, &mut c).map(|out| {
                let line = out
                    .lines()
                    .find(|l| l.contains("[redacted:"))
                    .unwrap_or_default()
                    .chars()
                    .take(200)
                    .collect::<String>();
                format!("{path}: {c:?}: {line}")
            })
        })
        .collect()
}

/// The instructions the agents give themselves are not secrets: what
/// nanoclaw composes into every group's `CLAUDE.md` (the composed file, its
/// `CLAUDE.local.md`, `instructions.prepend.md`, persona and memory files)
/// and what it sends a Codex thread (the base instructions, the developer
/// messages, the environment and `AGENTS.md` blocks), in every nanoclaw
/// home committed here (written by nanoclaw's own code), pass the scanner
/// with no redaction. (nanobot's bundled skills and prompts:
/// `secrets::nanobots_bundled_skills_and_prompts_are_not_redacted`.)
#[test]
fn the_agents_own_instruction_files_are_not_redacted() -> TestResult {
    let root = fixture("nanoclaw");
    let mut texts: Vec<(String, String)> = Vec::new();
    for e in walkdir::WalkDir::new(&root)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
    {
        let p = e.path();
        let rel = p.strip_prefix(&root)?.display().to_string();
        let in_groups = p.components().any(|c| c.as_os_str() == "groups");
        if in_groups && p.extension().is_some_and(|x| x == "md") {
            texts.push((rel, std::fs::read_to_string(p)?));
        } else if p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
        {
            for line in std::fs::read_to_string(p)?.lines() {
                let r: Value = serde_json::from_str(line)?;
                let pl = &r["payload"];
                let instructions = r["type"] == "session_meta"
                    || (pl["type"] == "message" && pl["role"] == "developer")
                    || (pl["type"] == "message"
                        && pl["role"] == "user"
                        && pl["content"][0]["text"]
                            .as_str()
                            .is_some_and(|t| t.starts_with('<') || t.starts_with("# AGENTS.md")));
                if instructions {
                    let mut out = Vec::new();
                    json_strings(pl, &mut out);
                    texts.extend(out.into_iter().map(|t| (rel.clone(), t)));
                }
            }
        }
    }
    let bytes: usize = texts.iter().map(|(_, t)| t.len()).sum();
    assert!(
        texts.len() >= 40 && bytes > 50_000,
        "{} texts, {bytes} bytes",
        texts.len()
    );
    let found = redactions_in(&texts);
    assert!(found.is_empty(), "{}", found.join("\n"));
    Ok(())
}

/// nanobot-ai 0.3.5's bundled skills (`nanobot/skills/**`) and prompt
/// templates (`nanobot/templates/**`, which it copies into every
/// workspace and sends as the system prompt) pass the scanner with no
/// redaction. Tools tier: the package is the realwriter venv's
/// (`NANOLOAD_REALWRITER_PYTHON`, which scripts/check.sh sets).
#[test]
#[ignore = "tools tier (nanobot-ai): scripts/check.sh runs it (cargo test -- --ignored)"]
fn nanobots_bundled_skills_and_prompts_are_not_redacted() -> TestResult {
    let python = match std::env::var("NANOLOAD_REALWRITER_PYTHON") {
        Ok(p) => p,
        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
            return Err("CI=true but NANOLOAD_REALWRITER_PYTHON is not set".into());
        }
        Err(_) => {
            eprintln!("NANOLOAD_REALWRITER_PYTHON not set: nanobot's package not scanned");
            return Ok(());
        }
    };
    let out = std::process::Command::new(&python)
        .args([
            "-c",
            "import nanobot, os; print(nanobot.__version__); print(os.path.dirname(nanobot.__file__))",
        ])
        .output()?;
    let stdout = String::from_utf8(out.stdout)?;
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("0.3.5"), "{stdout}");
    let pkg = PathBuf::from(lines.next().ok_or("no package path")?);
    let mut texts: Vec<(String, String)> = Vec::new();
    for dir in ["skills", "templates"] {
        for e in walkdir::WalkDir::new(pkg.join(dir))
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_file())
        {
            let p = e.path();
            if p.extension()
                .is_some_and(|x| x == "md" || x == "txt" || x == "j2" || x == "sh")
            {
                texts.push((
                    p.strip_prefix(&pkg)?.display().to_string(),
                    std::fs::read_to_string(p)?,
                ));
            }
        }
    }
    assert!(texts.len() >= 30, "{}", texts.len());
    let found = redactions_in(&texts);
    assert!(found.is_empty(), "{}", found.join("\n"));
    Ok(())
}
