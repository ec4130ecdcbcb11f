//! Golden outputs: what every fixture home loads to, kept in
//! `tests/golden/<fixture>.txt` so that a change of code that must not change
//! behaviour (a refactor) proves it, and a change that does shows its diff.
//!
//! ```text
//! tests/golden/nanobot-home-a.txt        one file per fixture home (`/` → `-`)
//!   exit 0                               the run's exit code
//!   sha256 out.parquet <hex>             bytes of OUT.parquet and of each --tables file
//!   sha256 tables/sessions.parquet <hex>
//!   ## events (123 rows)                 every table of the --db file, each row as
//!   {"agent":"nanobot",…}                its JSON text, ORDER BY that text
//! ```
//! Each home is copied to a temp dir (tarballs unpacked) and every file's
//! mtime set to [`MTIME`], so `load_id` and mtime-stamped rows do not depend
//! on the checkout. `NANOLOAD_BLESS=1 cargo test golden` rewrites the files;
//! review their diff like code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use duckdb::Connection;
use sha2::{Digest, Sha256};

use crate::common::*;

/// The mtime every file of a golden home gets (2026-11-01T00:00:00Z).
const MTIME: i64 = 1_793_491_200;

/// Fixture homes besides every directory of `fixtures/bad/`.
const HOMES: &[&str] = &[
    "nanobot/home-a",
    "nanoclaw/home-a",
    "nanoclaw/home-b",
    "realwriter/dbera-aborted-import",
    "realwriter/dbera-deleted",
    "realwriter/dbera-import",
    "realwriter/gateway",
    "realwriter/legacy-history",
    "realwriter/legacy-upgrade",
    "realwriter/workspaces",
];

fn homes() -> Result<Vec<String>, Box<dyn std::error::Error>> {
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

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn golden_file(home: &str) -> PathBuf {
    golden_dir().join(format!("{}.txt", home.replace('/', "-")))
}

/// The fixture as a home in a temp dir: a real-writer tarball unpacked,
/// anything else copied; every file's mtime set to [`MTIME`].
fn materialize(rel: &str) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
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

/// Load one fixture home and render everything it produced.
fn render(rel: &str) -> Result<String, Box<dyn std::error::Error>> {
    let home = materialize(rel)?;
    let out_dir = tempfile::tempdir()?;
    let db = out_dir.path().join("all.duckdb");
    let run = run_home(
        home.path(),
        &["--db", db.to_str().ok_or("path")?, "--threads", "2"],
    )?;
    let mut s = String::new();
    writeln!(s, "exit {}", run.code().unwrap_or(-1))?;
    if run.code() == Some(2) {
        writeln!(s, "stderr {}", run.stderr().trim_end())?;
        return Ok(s);
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
    Ok(s)
}

/// The first lines where two renderings differ, for the failure message.
fn first_differences(want: &str, got: &str) -> String {
    let (w, g): (Vec<&str>, Vec<&str>) = (want.lines().collect(), got.lines().collect());
    let mut s = String::new();
    let mut shown = 0;
    for i in 0..w.len().max(g.len()) {
        let (a, b) = (w.get(i), g.get(i));
        if a != b && shown < 6 {
            let _ = writeln!(
                s,
                "  line {}:\n    want {}\n    got  {}",
                i + 1,
                a.map_or("<none>", |x| &x[..x.len().min(300)]),
                b.map_or("<none>", |x| &x[..x.len().min(300)])
            );
            shown += 1;
        }
    }
    s
}

/// Every fixture home loads to exactly its golden text: the same exit code,
/// the same bytes of OUT.parquet and of every `--tables` file, the same rows
/// in every table of the `--db` file.
#[test]
fn every_fixture_loads_to_its_golden_output() -> TestResult {
    let bless = std::env::var_os("NANOLOAD_BLESS").is_some();
    let mut failures = Vec::new();
    for home in homes()? {
        let got = render(&home)?;
        let file = golden_file(&home);
        if bless {
            std::fs::create_dir_all(golden_dir())?;
            std::fs::write(&file, &got)?;
            continue;
        }
        let want = std::fs::read_to_string(&file).unwrap_or_default();
        if want != got {
            failures.push(format!(
                "{home}: output differs from {} (NANOLOAD_BLESS=1 rewrites it)\n{}",
                file.display(),
                first_differences(&want, &got)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Every golden file belongs to a fixture home that is still loaded.
#[test]
fn every_golden_file_has_its_fixture() -> TestResult {
    let want: Vec<PathBuf> = homes()?.iter().map(|h| golden_file(h)).collect();
    let mut on_disk: Vec<PathBuf> = std::fs::read_dir(golden_dir())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    on_disk.sort();
    let mut want_sorted = want.clone();
    want_sorted.sort();
    assert_eq!(on_disk, want_sorted);
    Ok(())
}
