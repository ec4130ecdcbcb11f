//! Every fixture home loaded once per test run, for the modules that check
//! all of them (`golden`, `audits`, `report`): each home is copied to a temp
//! dir (tarballs unpacked) with every file's mtime set to [`MTIME`], loaded
//! with `--tables`, `--db` and `--summary-json`, rendered as text (the golden
//! format, see `golden.rs`), every audit of `sql/audits/` run on its `--db`
//! file, and the bytes of OUT.parquet, the `--tables` files and the summary
//! kept ([`Loaded::files`]).
//! The first test to ask for a home loads it; a test asking for it later, or
//! meanwhile from another thread, gets the same result.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use duckdb::Connection;
use sha2::{Digest, Sha256};

use crate::common::*;

/// The mtime every file of a loaded fixture home gets (2026-11-01T00:00:00Z),
/// so `load_id` and mtime-stamped rows do not depend on the checkout.
pub const MTIME: i64 = 1_793_491_200;

/// Fixture homes besides every directory of `fixtures/bad/`.
const HOMES: &[&str] = &[
    "nanobot/home-a",
    "nanoclaw/home-a",
    "nanoclaw/home-b",
    "nanoclaw/home-2-0",
    "nanoclaw/home-links",
    "nanoclaw/home-cc",
    "nanoclaw/home-mcp",
    "nanoclaw/home-codex",
    "nanoclaw/home-codex-archive",
    "nanoclaw/home-opencode",
    "realwriter/dbera-aborted-import",
    "realwriter/dbera-deleted",
    "realwriter/dbera-import",
    "realwriter/gateway",
    "realwriter/legacy-history",
    "realwriter/jsonl-interrupted",
    "realwriter/legacy-upgrade",
    "realwriter/newer-dbera-interrupted",
    "realwriter/newer-subagents",
    "realwriter/pasted-secrets",
    "realwriter/reasked-thinking",
    "realwriter/workspaces",
];

/// Every fixture home, as a path under `fixtures/`: [`HOMES`], then every
/// directory of `fixtures/bad/` by name.
pub fn homes() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let mut v: Vec<String> = HOMES.iter().map(|s| s.to_string()).collect();
    let mut bad: Vec<String> = std::fs::read_dir(fixture("bad"))?
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| format!("bad/{}", e.file_name().to_string_lossy()))
        .collect();
    bad.sort();
    v.extend(bad);
    Ok(v)
}

/// What one fixture home loads to.
#[derive(Clone)]
pub struct Loaded {
    /// The exit code, the hashes of OUT.parquet and of each `--tables` file,
    /// and every row of every `--db` table (the golden text).
    pub rendering: String,
    /// Per audit of `sql/audits/` (by name, in file order), the rows that
    /// break its rule; empty when the run wrote nothing (exit 2).
    pub audits: Vec<(String, Vec<String>)>,
    /// The outputs' bytes by name (`out.parquet`, `tables/<table>.parquet`,
    /// `summary.json`); empty when the run wrote nothing (exit 2).
    pub files: Arc<BTreeMap<String, Vec<u8>>>,
}

impl Loaded {
    /// Write the outputs back under `dir` (`dir/out.parquet`, `dir/tables/`,
    /// `dir/summary.json`).
    pub fn write_files(&self, dir: &Path) -> std::io::Result<()> {
        for (name, bytes) in self.files.iter() {
            let p = dir.join(name);
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)?;
            }
            std::fs::write(p, bytes)?;
        }
        Ok(())
    }
}

type Cell = Arc<OnceLock<Result<Loaded, String>>>;

static LOADS: Mutex<BTreeMap<String, Cell>> = Mutex::new(BTreeMap::new());

/// The fixture home `rel` (a path under `fixtures/`), loaded once per run.
pub fn load(rel: &str) -> Result<Loaded, String> {
    let cell = LOADS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .entry(rel.to_string())
        .or_default()
        .clone();
    cell.get_or_init(|| load_now(rel).map_err(|e| format!("{rel}: {e}")))
        .clone()
}

/// The fixture as a home in a temp dir: a real-writer tarball unpacked,
/// anything else copied; every file's mtime set to [`MTIME`].
pub fn materialize(rel: &str) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let src = fixture(rel);
    let dir = tempfile::tempdir()?;
    let tarball = src.join("home.tar.gz");
    if tarball.is_file() {
        let st = std::process::Command::new("tar")
            .arg("-xzf")
            .arg(&tarball)
            .arg("-C")
            .arg(dir.path())
            .status()?;
        if !st.success() {
            return Err(format!("tar -xzf {} failed", tarball.display()).into());
        }
    } else if src.join("home").is_dir() {
        copy_tree(&src.join("home"), dir.path())?;
    } else {
        copy_tree(&src, dir.path())?;
    }
    let t = filetime::FileTime::from_unix_time(MTIME, 0);
    for e in walkdir::WalkDir::new(dir.path()).follow_links(false) {
        let e = e?;
        if e.file_type().is_file() {
            filetime::set_file_mtime(e.path(), t)?;
        }
    }
    Ok(dir)
}

fn sha256_hex(p: &Path) -> Result<String, std::io::Error> {
    Ok(Sha256::digest(std::fs::read(p)?)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Load one fixture home, render everything it produced and run every audit
/// on its `--db` file.
fn load_now(rel: &str) -> Result<Loaded, Box<dyn std::error::Error>> {
    let home = materialize(rel)?;
    let out_dir = tempfile::tempdir()?;
    let db = out_dir.path().join("all.duckdb");
    let summary = out_dir.path().join("summary.json");
    let run = run_home(
        home.path(),
        &[
            "--db",
            db.to_str().ok_or("path")?,
            "--threads",
            "2",
            "--summary-json",
            summary.to_str().ok_or("path")?,
        ],
    )?;
    let mut s = String::new();
    writeln!(s, "exit {}", run.code().unwrap_or(-1))?;
    if run.code() == Some(2) {
        writeln!(s, "stderr {}", run.stderr().trim_end())?;
        return Ok(Loaded {
            rendering: s,
            audits: Vec::new(),
            files: Arc::default(),
        });
    }
    let mut files = BTreeMap::new();
    files.insert("out.parquet".to_string(), std::fs::read(&run.out)?);
    files.insert("summary.json".to_string(), std::fs::read(&summary)?);
    for t in TABLES {
        let f = run.tables.join(format!("{t}.parquet"));
        files.insert(format!("tables/{t}.parquet"), std::fs::read(f)?);
    }
    writeln!(s, "sha256 out.parquet {}", sha256_hex(&run.out)?)?;
    for t in TABLES {
        let f = run.tables.join(format!("{t}.parquet"));
        writeln!(s, "sha256 tables/{t}.parquet {}", sha256_hex(&f)?)?;
    }
    let c = Connection::open(&db)?;
    let _ = c.execute_batch("SET TimeZone = 'UTC';");
    for t in std::iter::once("events").chain(TABLES) {
        let rows = query(
            &c,
            &format!("SELECT to_json(x)::VARCHAR FROM {t} AS x ORDER BY ALL"),
        )?;
        writeln!(s, "## {t} ({} rows)", rows.len())?;
        for r in rows {
            writeln!(s, "{}", r.join("\t"))?;
        }
    }
    let mut audits = Vec::new();
    for f in audit_files()? {
        let name = audit_name(&f);
        let rows = audit_violations(&c, &std::fs::read_to_string(&f)?)
            .map_err(|e| format!("audit {name}: {e}"))?;
        audits.push((name, rows));
    }
    Ok(Loaded {
        rendering: s,
        audits,
        files: Arc::new(files),
    })
}
