//! Helpers every test module may use: run the binary on a home, read its
//! outputs back through DuckDB, hash a tree, run the audits of `sql/audits/`;
//! and the facts of `fixtures/nanobot/home-a` that more than one module
//! checks. Test modules import from here (and from `fixture_homes`), never
//! from each other.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::{Arc, LazyLock, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use duckdb::Connection;
use sha2::{Digest, Sha256};

pub type TestResult = Result<(), Box<dyn std::error::Error>>;

#[path = "bless.rs"]
mod bless_rule;
pub use bless_rule::{bless, bless_from};

/// The WebUI session key of `fixtures/nanobot/home-a` (EXPECTED.md).
pub const WS: &str = "websocket:b8e1c3f2-5d7a-4e61-9f0b-2a4c6d8e0f13";

/// The secrets of `fixtures/nanobot/home-a` (EXPECTED.md: the config.json
/// keys and the pending pairing code), none of which may reach any output.
pub const NB_SECRETS: [&str; 10] = [
    "sk-or-v1-FAKE-a1b2c3d4e5f6a7b8c9d0",
    "sk-FAKE-proj-0123456789abcdefALICE",
    "7012345678:AAFAKE-telegram-bot-token-alice",
    "xoxb-FAKE-1111-2222-alice",
    "xapp-FAKE-3333-alice",
    "nb-api-FAKE-7f3e2d1c",
    "ghp_FAKEalice0000000000000000000000000000",
    "sk-ant-FAKE-work-000111222",
    "FAKE.discord.work.token",
    "I7NE-KJ8F",
];

pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// One finished run of the binary.
pub struct Run {
    pub dir: tempfile::TempDir,
    pub out: PathBuf,
    pub tables: PathBuf,
    pub output: Output,
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.output.status.code()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.output.stderr).into_owned()
    }
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }
    /// A DuckDB connection with `events` (OUT.parquet) and, when written,
    /// every `--tables` file as a view.
    pub fn conn(&self) -> Result<Connection, duckdb::Error> {
        let c = Connection::open_in_memory()?;
        c.execute_batch(&format!(
            "CREATE VIEW events AS SELECT * FROM read_parquet('{}');",
            self.out.display()
        ))?;
        if let Ok(rd) = std::fs::read_dir(&self.tables) {
            for e in rd.filter_map(Result::ok) {
                let p = e.path();
                if let Some(stem) = p
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .filter(|_| p.extension().is_some_and(|x| x == "parquet"))
                {
                    c.execute_batch(&format!(
                        "CREATE VIEW {stem} AS SELECT * FROM read_parquet('{}');",
                        p.display()
                    ))?;
                }
            }
        }
        Ok(c)
    }
    /// Rows of a query, every value rendered as text (NULL → "NULL").
    pub fn rows(&self, sql: &str) -> Result<Vec<Vec<String>>, duckdb::Error> {
        query(&self.conn()?, sql)
    }
    pub fn one(&self, sql: &str) -> Result<String, Box<dyn std::error::Error>> {
        let rows = self.rows(sql)?;
        rows.into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .ok_or_else(|| format!("no row for {sql}").into())
    }
}

pub fn query(c: &Connection, sql: &str) -> Result<Vec<Vec<String>>, duckdb::Error> {
    let wrapped = format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})");
    let mut stmt = c.prepare(&wrapped)?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let n = r.as_ref().column_count();
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(
                r.get::<_, Option<String>>(i)?
                    .unwrap_or_else(|| "NULL".into()),
            );
        }
        out.push(row);
    }
    Ok(out)
}

/// How long one run of the binary, or of a script of the tests, may take
/// before the watchdog kills it ([`output_within`]): far above the slowest
/// fixture load of a debug build on a busy machine. The tests assert no
/// speed; this bound only turns a hang into a failure that names its case.
pub const HANG_LIMIT: Duration = Duration::from_secs(600);

/// Run `cmd` (stdin closed, stdout and stderr captured) in a process group
/// of its own, waiting at most `limit`: past it the whole group is killed
/// and the error names `case`, so a hung run fails its test instead of
/// hanging the suite.
pub fn output_within(
    cmd: &mut std::process::Command,
    limit: Duration,
    case: &str,
) -> Result<Output, Box<dyn std::error::Error>> {
    use std::os::unix::process::CommandExt;
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("{case}: cannot start {:?}: {e}", cmd.get_program()))?;
    wait_within(child, limit, case)
}

/// Wait for a spawned `child` at most `limit` ([`output_within`]), reading
/// whatever of its stdout and stderr was piped.
pub fn wait_within(
    child: Child,
    limit: Duration,
    case: &str,
) -> Result<Output, Box<dyn std::error::Error>> {
    use std::io::Read;
    fn drain<R: Read + Send + 'static>(r: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            if let Some(mut r) = r {
                let _ = r.read_to_end(&mut v);
            }
            v
        })
    }
    let mut child = child;
    let (out, err) = (drain(child.stdout.take()), drain(child.stderr.take()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() >= limit {
            // its group first (a script's children hold the pipes too), then
            // the child itself, in case it was not spawned as a group leader
            let _ = std::process::Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .stderr(Stdio::null())
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "{case}: killed after {} s without finishing (a hang)",
                limit.as_secs()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let joined = |h: std::thread::JoinHandle<Vec<u8>>| {
        h.join()
            .map_err(|_| format!("{case}: the thread reading its output panicked"))
    };
    Ok(Output {
        status,
        stdout: joined(out)?,
        stderr: joined(err)?,
    })
}

/// Run `nanoload HOME <tmp>/out.parquet --tables <tmp>/tables [extra…]`.
///
/// A committed fixture home (under `fixtures/`) is loaded once per (home,
/// flags) for the whole test binary and the load shared: a fixture never
/// changes while the tests run and a test only reads a load's files (a test
/// that must change one copies the home or runs the binary itself). Any
/// other home, and any flags naming a path (`--db`, `--dataset`, `--cache`:
/// a run that writes or reads beyond its own directory), get their own run.
pub fn run_home(home: &Path, extra: &[&str]) -> Result<Arc<Run>, Box<dyn std::error::Error>> {
    if !home.starts_with(fixture("")) || extra.iter().any(|a| a.contains('/')) {
        return Ok(Arc::new(fresh_run(home, extra, &std::env::temp_dir())?));
    }
    let key = (
        home.to_path_buf(),
        extra.iter().map(|s| (*s).to_string()).collect::<Vec<_>>(),
    );
    // one cell per (home, flags), as fixture_homes::load keeps its loads
    let cell = Arc::clone(
        SHARED
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default(),
    );
    let run = cell.get_or_init(|| {
        shared_root()
            .and_then(|root| fresh_run(home, extra, &root))
            .map(Arc::new)
            .map_err(|e| e.to_string())
    });
    Ok(Arc::clone(run.as_ref().map_err(|e| e.clone())?))
}

/// The cache directory (XDG_CACHE_HOME) of this test process's readers
/// given a HOME: never the user's own.
pub fn private_cache() -> Result<PathBuf, Box<dyn std::error::Error>> {
    let dir = shared_root()?.join("xdg-cache");
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// The shared loads, by (fixture home, flags).
type SharedLoads = HashMap<(PathBuf, Vec<String>), Arc<OnceLock<Result<Arc<Run>, String>>>>;
static SHARED: LazyLock<Mutex<SharedLoads>> = LazyLock::new(Mutex::default);

/// Where this test process keeps its shared loads: a static is never
/// dropped, so they live under cargo's target tmp dir, one directory per
/// process, and the directories of processes that have ended are removed.
fn shared_root() -> Result<PathBuf, Box<dyn std::error::Error>> {
    static ROOT: LazyLock<Result<PathBuf, String>> = LazyLock::new(|| {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-loads");
        if let Ok(rd) = std::fs::read_dir(&base) {
            for e in rd.filter_map(Result::ok) {
                let alive = e
                    .file_name()
                    .to_str()
                    .and_then(|n| n.parse::<u32>().ok())
                    .is_some_and(nanoload::rundir::process_alive);
                if !alive {
                    let _ = std::fs::remove_dir_all(e.path());
                }
            }
        }
        let root = base.join(std::process::id().to_string());
        std::fs::create_dir_all(&root).map_err(|e| format!("{}: {e}", root.display()))?;
        Ok(root)
    });
    Ok(ROOT.clone()?)
}

fn fresh_run(home: &Path, extra: &[&str], tmp: &Path) -> Result<Run, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir_in(tmp)?;
    let out = dir.path().join("out.parquet");
    let tables = dir.path().join("tables");
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.arg(home)
        .arg(&out)
        .arg("--tables")
        .arg(&tables)
        .args(extra);
    let case = format!("nanoload {} {extra:?}", home.display());
    let output = output_within(&mut cmd, HANG_LIMIT, &case)?;
    Ok(Run {
        dir,
        out,
        tables,
        output,
    })
}

/// Every entry under `root`: relative path → file hash, `dir`, or `link -> target`;
/// plus mode and mtime, so a touched file shows.
pub fn tree(root: &Path) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    for e in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let Ok(e) = e else { continue };
        let rel = e
            .path()
            .strip_prefix(root)
            .unwrap_or(e.path())
            .to_string_lossy()
            .into_owned();
        let md = std::fs::symlink_metadata(e.path()).ok();
        let stamp = md.as_ref().map(|m| {
            use std::os::unix::fs::MetadataExt;
            format!("mode={:o} mtime={}.{}", m.mode(), m.mtime(), m.mtime_nsec())
        });
        let what = if e.file_type().is_symlink() {
            format!(
                "link -> {}",
                std::fs::read_link(e.path())
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            )
        } else if e.file_type().is_dir() {
            "dir".to_string()
        } else {
            match std::fs::read(e.path()) {
                Ok(b) => Sha256::digest(&b)
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect::<String>(),
                Err(err) => format!("unreadable: {err}"),
            }
        };
        m.insert(rel, format!("{what} {}", stamp.unwrap_or_default()));
    }
    m
}

/// Copy a directory tree into `dst` (created if missing) with `cp -a`:
/// modes, mtimes and links as links.
pub fn copy_tree(src: &Path, dst: &Path) -> TestResult {
    std::fs::create_dir_all(dst)?;
    let st = std::process::Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", src.display()))
        .arg(dst)
        .status()?;
    if !st.success() {
        return Err(format!("cp -a {} failed", src.display()).into());
    }
    Ok(())
}

/// Copy a fixture home into a temp dir, keeping mtimes.
pub fn copy_home(src: &Path) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    copy_tree(src, dir.path())?;
    Ok(dir)
}

/// A home of both agents: `fixtures/nanobot/home-a` (its `.nanobot*`) with
/// `fixtures/nanoclaw/home-cc` as the nanoclaw install root `nanoclaw/`,
/// each as its agent wrote it.
pub fn mixed_home() -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = copy_home(&fixture("nanobot/home-a"))?;
    std::fs::remove_file(dir.path().join("EXPECTED.md"))?;
    copy_tree(&fixture("nanoclaw/home-cc"), &dir.path().join("nanoclaw"))?;
    Ok(dir)
}

/// Every value of every table, decoded and rendered as text, as one string.
pub fn all_text(c: &Connection, tables: &[&str]) -> Result<String, duckdb::Error> {
    let mut s = String::new();
    for t in tables {
        for row in query(c, &format!("SELECT * FROM {t}"))? {
            s.push_str(&row.join("\t"));
            s.push('\n');
        }
    }
    Ok(s)
}

pub use nanoload::sink::TABLES;

/// Run with OUT, `--tables` and `--db`; return the exit code and every
/// output decoded as text: OUT.parquet, each `--tables` file, every table of
/// the `--db` file, stderr and stdout.
pub fn all_outputs(
    home: &Path,
    extra: &[&str],
) -> Result<(Option<i32>, String), Box<dyn std::error::Error>> {
    let (run, all) = run_with_all_outputs(home, extra)?;
    Ok((run.code(), all))
}

/// [`all_outputs`], keeping the run for queries.
pub fn run_with_all_outputs(
    home: &Path,
    extra: &[&str],
) -> Result<(Arc<Run>, String), Box<dyn std::error::Error>> {
    let db = tempfile::tempdir()?;
    let db_file = db.path().join("all.duckdb");
    let mut args: Vec<&str> = vec!["--db", db_file.to_str().ok_or("path")?];
    args.extend(extra);
    let run = run_home(home, &args)?;
    let mut all = run.stderr();
    all.push_str(&run.stdout());
    if run.code() == Some(2) {
        return Ok((run, all));
    }
    let c = Connection::open(&db_file)?;
    let mut db_tables = vec!["events"];
    db_tables.extend(TABLES);
    all.push_str(&all_text(&c, &db_tables)?);
    let m = Connection::open_in_memory()?;
    all.push_str(&all_text(
        &m,
        &[&format!("read_parquet('{}')", run.out.display())],
    )?);
    for t in TABLES {
        all.push_str(&all_text(
            &m,
            &[&format!(
                "read_parquet('{}/{t}.parquet')",
                run.tables.display()
            )],
        )?);
    }
    // nothing but the outputs is left behind
    for (dir, want) in [
        (run.dir.path(), vec!["out.parquet", "tables"]),
        (db.path(), vec!["all.duckdb"]),
    ] {
        let mut left: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        if left != want {
            return Err(format!("unexpected files beside the outputs: {left:?}").into());
        }
    }
    Ok((run, all))
}

/// Expected rows from string literals.
pub fn strs(v: &[&[&str]]) -> Vec<Vec<String>> {
    v.iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect()
}

/// Every audit of `sql/audits/` (`A###__rule.sql`, each a query returning the
/// rows that break its rule), sorted by name; read at test time, so adding
/// an audit is adding a file.
pub fn audit_files() -> Result<Vec<PathBuf>, std::io::Error> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sql/audits");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    v.sort();
    Ok(v)
}

/// An audit's name: its file name without `.sql`.
pub fn audit_name(file: &Path) -> String {
    file.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The rows an audit returns on the tables of `c` (each as its JSON text):
/// the violations of its rule, none when the rule holds. `kinds` (the
/// registry's kind traits) is created first when `c` lacks it.
pub fn audit_violations(c: &Connection, audit_sql: &str) -> Result<Vec<String>, duckdb::Error> {
    let has_kinds: i64 = c.query_row(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'kinds'",
        [],
        |r| r.get(0),
    )?;
    if has_kinds == 0 {
        c.execute_batch(&nanoload::steps::kinds_sql())?;
    }
    let body = audit_sql.trim().trim_end_matches(';');
    let rows = query(c, &format!("SELECT to_json(v) FROM (\n{body}\n) AS v"))?;
    Ok(rows.into_iter().map(|r| r.join("\t")).collect())
}

/// The python of a pinned test venv: `$var` (scripts/check.sh sets it);
/// with `CI=true` a missing variable fails the test; outside CI, `setup`
/// (a script under tests/, e.g. `spark/setup.sh`) makes or reuses the venv
/// and prints its python last.
pub fn venv_python(var: &str, setup: &str) -> Result<String, Box<dyn std::error::Error>> {
    installed(var, setup)
}

/// What an install script of the tests made (`tests/<setup>` prints it as
/// its last line: a venv's python, tests/browser's node_modules): `$var`
/// when set (scripts/check.sh runs the scripts in the background and sets
/// it); with `CI=true` a missing variable fails the test, nothing is
/// skipped; outside CI the script is run now (a failure names it).
pub fn installed(var: &str, setup: &str) -> Result<String, Box<dyn std::error::Error>> {
    if let Ok(p) = std::env::var(var) {
        return Ok(p);
    }
    if std::env::var("CI").as_deref() == Ok("true") {
        return Err(format!(
            "CI=true but {var} is not set: scripts/check.sh installs tests/{setup}"
        )
        .into());
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(setup);
    let out = std::process::Command::new(&script).output()?;
    if !out.status.success() {
        return Err(format!(
            "{} failed ({}): {}",
            script.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let stdout = String::from_utf8(out.stdout)?;
    Ok(stdout.trim().lines().last().unwrap_or("").to_string())
}

/// Every backticked string of the "Secret…" section of each fixture's
/// EXPECTED*.md, plus every pending pairing code of every pairing.json.
pub fn fixture_secrets() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut secrets = Vec::new();
    for e in walkdir::WalkDir::new(fixture(""))
        .into_iter()
        .filter_map(Result::ok)
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with("EXPECTED") && name.ends_with(".md") {
            let text = std::fs::read_to_string(e.path())?;
            let mut in_section = false;
            for line in text.lines() {
                if line.starts_with("## ") {
                    in_section = line.contains("Secret");
                    continue;
                }
                if in_section {
                    secrets.extend(
                        line.split('`')
                            .skip(1)
                            .step_by(2)
                            .filter(|s| s.len() >= 8)
                            .map(String::from),
                    );
                }
            }
        }
        // the keys the real-writer harness planted in chats (facts.json)
        if name == "facts.json" {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(e.path())?)?;
            if let Some(list) = v.get("secrets").and_then(|p| p.as_array()) {
                secrets.extend(list.iter().filter_map(|s| s.as_str().map(String::from)));
            }
        }
        if name == "pairing.json" {
            let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(e.path())?)?;
            if let Some(p) = v.get("pending").and_then(|p| p.as_object()) {
                secrets.extend(p.keys().cloned());
            }
        }
    }
    Ok(secrets)
}

/// The sums over `llm_calls` that `nanoload usage --json` and
/// `--summary-json` report, in the order of SQL's `count(*),
/// sum(input_tokens), …, round(sum(cost_usd), 6), count(*) - count(cost_usd)`.
pub const CALL_SUMS: [&str; 8] = [
    "calls",
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "total_tokens",
    "cost_usd",
    "unpriced_calls",
];

/// The `fields` of a JSON object as a DuckDB row renders them: null as
/// `NULL`, a string as it is, `cost_usd` to 6 places.
pub fn json_cells(obj: &serde_json::Value, fields: &[&str]) -> Vec<String> {
    fields
        .iter()
        .map(|f| match &obj[*f] {
            serde_json::Value::Null => "NULL".to_string(),
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) if *f == "cost_usd" => {
                format!("{:.6}", n.as_f64().unwrap_or(f64::NAN))
            }
            x => x.to_string(),
        })
        .collect()
}

/// Run `cmd` (a helper script of the tests) and read its stdout as one JSON
/// value; its failure names the program, the status and its stderr.
pub fn json_output(
    cmd: &mut std::process::Command,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let out = cmd.output()?;
    if !out.status.success() {
        return Err(format!(
            "{:?} failed ({}): {}",
            cmd.get_program(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// Append a copy of the last `messages_in` row of a nanoclaw `inbound.db`
/// with a new id, the next even seq and `text` as its content.
pub fn append_message(db: &Path, id: &str, text: &str) -> TestResult {
    let c = rusqlite::Connection::open(db)?;
    c.execute_batch(&format!(
        "CREATE TEMP TABLE m AS SELECT * FROM messages_in ORDER BY seq DESC LIMIT 1;
         UPDATE m SET id = '{id}', seq = seq + 2, content = json_object('text', '{text}');
         INSERT INTO messages_in SELECT * FROM m;"
    ))?;
    Ok(())
}

/// One change between two runs of a home of four nanoclaw installs (from
/// `fixtures/nanoclaw`: `a` home-a, `cc` home-cc, `cx` home-codex-archive,
/// `oc` home-opencode), with the stores a cached run must extract again
/// and a sync read again: the stores it adds or whose own files it changes,
/// never one it removes.
pub struct NanoclawChange {
    pub what: &'static str,
    pub extracted: u64,
    pub apply: fn(&Path) -> TestResult,
}

const A_GROUP: &str = "a/data/v2-sessions/ag-1795989906209-zr4eix";
const CC_GROUP: &str = "cc/data/v2-sessions/ag-1800000000010-ccc111";
const CX_GROUP: &str = "cx/data/v2-sessions/ag-codex";
const OC_SESSION: &str = "oc/data/v2-sessions/ag-open/sess-open-1";

pub const NANOCLAW_CHANGES: [NanoclawChange; 10] = [
    NanoclawChange {
        what: "the outbound.db of a session that had only its inbound.db appears",
        extracted: 1,
        apply: |h| {
            std::fs::copy(
                h.join(A_GROUP)
                    .join("sess-1795989906279-qf49io/outbound.db"),
                h.join(A_GROUP)
                    .join("sess-1795989913797-oledfs/outbound.db"),
            )?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "the Claude Code transcript a session's continuation names appears after it",
        extracted: 1,
        apply: |h| {
            let dir = h
                .join(A_GROUP)
                .join(".claude-shared/projects/-workspace-agent");
            std::fs::create_dir_all(&dir)?;
            std::fs::copy(
                h.join(CC_GROUP).join(
                    ".claude-shared/projects/-workspace-agent/9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl",
                ),
                dir.join("5b0f3f0e-2c61-4d7e-9a57-1f8e6c2b7d41.jsonl"),
            )?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "the outbound.db whose continuation names the transcripts is deleted",
        extracted: 0,
        apply: |h| {
            std::fs::remove_file(
                h.join(CC_GROUP)
                    .join("sess-1800000000110-cccccc/outbound.db"),
            )?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "the install is upgraded: its marker names another version",
        extracted: 1,
        apply: |h| {
            std::fs::write(
                h.join("a/data/upgrade-state.json"),
                r#"{"version": "2.3.0", "updatedAt": "2027-01-05T08:00:00.000Z", "via": "update-nanoclaw"}"#,
            )?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "the upgrade marker is deleted",
        extracted: 0,
        apply: |h| {
            let marker = h.join("a/data/upgrade-state.json");
            if marker.exists() {
                std::fs::remove_file(marker)?;
            }
            Ok(())
        },
    },
    NanoclawChange {
        what: "the central data/v2.db is deleted",
        extracted: 0,
        apply: |h| {
            std::fs::remove_file(h.join("cx/data/v2.db"))?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "the Codex rollout the archive copies is deleted",
        extracted: 0,
        apply: |h| {
            std::fs::remove_file(h.join(CX_GROUP).join(
                ".codex-shared/sessions/2026/12/03/rollout-2026-12-03T03-27-55-01a239f1-c5a9-7872-9bec-428a6519819a.jsonl",
            ))?;
            Ok(())
        },
    },
    NanoclawChange {
        what: "a session database gains a message",
        extracted: 1,
        apply: |h| {
            append_message(
                &h.join(OC_SESSION).join("inbound.db"),
                "m-appended",
                "and one more thing",
            )
        },
    },
    NanoclawChange {
        what: "the OpenCode database of a session is deleted with its -wal and -shm",
        extracted: 0,
        apply: |h| {
            for f in ["opencode.db", "opencode.db-wal", "opencode.db-shm"] {
                std::fs::remove_file(h.join(OC_SESSION).join("opencode-xdg/opencode").join(f))?;
            }
            Ok(())
        },
    },
    NanoclawChange {
        what: "a rotated Claude Code transcript is deleted",
        extracted: 0,
        apply: |h| {
            std::fs::remove_file(h.join(CC_GROUP).join(
                ".claude-shared/projects/-workspace-agent/3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e.jsonl.rotated-1772719200000",
            ))?;
            Ok(())
        },
    },
];

/// The home of four nanoclaw installs the changes apply to.
pub fn four_installs() -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    for (root, name) in [
        ("a", "home-a"),
        ("cc", "home-cc"),
        ("cx", "home-codex-archive"),
        ("oc", "home-opencode"),
    ] {
        copy_tree(
            &fixture(&format!("nanoclaw/{name}")),
            &dir.path().join(root),
        )?;
    }
    Ok(dir)
}

/// The changes of [`NANOCLAW_CHANGES`], each once, in the order `seed`
/// draws (xorshift64: the same order for a seed on every machine).
pub fn nanoclaw_changes_in_order(seed: u64) -> Vec<&'static NanoclawChange> {
    let mut order: Vec<usize> = (0..NANOCLAW_CHANGES.len()).collect();
    let mut x = seed;
    for i in (1..order.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    order.into_iter().map(|k| &NANOCLAW_CHANGES[k]).collect()
}

/// The lines of the `--timings` block in a run's stderr (after `timings
/// (s):`), each as (phase, wall seconds, CPU seconds) as printed: `<phase>
/// <wall> <share>%  cpu <cpu>`, the last `total <wall>  cpu <cpu>`.
pub fn timings_lines(stderr: &str) -> Result<Vec<(String, String, String)>, String> {
    let block = stderr
        .split("timings (s):\n")
        .nth(1)
        .ok_or_else(|| format!("no timings block: {stderr}"))?;
    block
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let wall = w.iter().position(|x| x.parse::<f64>().is_ok());
            match (wall, w.len().checked_sub(2).map(|i| (w[i], w[i + 1]))) {
                (Some(at), Some(("cpu", cpu))) if at > 0 => {
                    Ok((w[..at].join(" "), w[at].to_string(), cpu.to_string()))
                }
                _ => Err(format!("not a timings line: {l:?}")),
            }
        })
        .collect()
}

/// A query whose work is one long expression: the edit distance of three
/// strings of 50 000 characters to their reverse, one vector, so DuckDB's
/// interrupt (checked between vectors) cannot stop it; on its own it runs
/// about 25 s of CPU here, far past the 2 s timeouts of the tests.
pub const LONG_QUERY: &str = "SELECT max(levenshtein(s, reverse(s))) FROM (SELECT repeat('ab', 25000) || i AS s FROM range(3) t(i))";

/// A `tools/call` request of `tool` with `args`, id `id`.
pub fn mcp_request(id: i64, tool: &str, args: serde_json::Value) -> serde_json::Value {
    serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": args}})
}

/// The JSON a tool result carries (its structuredContent, which equals its
/// text).
pub fn mcp_structured(
    v: &serde_json::Value,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let r = &v["result"];
    assert_eq!(r["isError"], false, "{v}");
    let text: serde_json::Value =
        serde_json::from_str(r["content"][0]["text"].as_str().ok_or("text")?)?;
    assert_eq!(text, r["structuredContent"]);
    Ok(text)
}

/// Answers of one `nanoload mcp SOURCE…` server to `messages`, parsed, one
/// per line (stdin closed after them).
pub fn mcp_answers(
    source: &[&str],
    messages: &[serde_json::Value],
) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    let lines: Vec<String> = messages.iter().map(|m| m.to_string()).collect();
    Ok(mcp_lines(source, &lines)?.0)
}

/// One `nanoload mcp SOURCE…` server given `lines` (stdin closed after
/// them), which ends with exit code 0: its answers, parsed, one per line,
/// and its stderr.
pub fn mcp_lines(
    source: &[&str],
    lines: &[String],
) -> Result<(Vec<serde_json::Value>, String), Box<dyn std::error::Error>> {
    use std::io::{BufRead, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"))
        .arg("mcp")
        .args(source)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    {
        let mut stdin = child.stdin.take().ok_or("stdin")?;
        for l in lines {
            writeln!(stdin, "{l}")?;
        }
    }
    let out = wait_within(child, HANG_LIMIT, &format!("nanoload mcp {source:?}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let answers = std::io::BufReader::new(&out.stdout[..])
        .lines()
        .map(|l| Ok(serde_json::from_str(&l?)?))
        .collect::<Result<_, Box<dyn std::error::Error>>>()?;
    Ok((answers, stderr))
}
