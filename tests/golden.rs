//! Golden outputs: what every fixture home loads to, kept per table in
//! `tests/golden/<fixture>/` so that a change of code that must not change
//! behaviour (a refactor) proves it, and a change that does shows its diff
//! in the table it touches.
//!
//! ```text
//! tests/golden/nanobot-home-a/           one folder per fixture home (`/` → `-`)
//!   bytes.txt                            the run's exit code; the SHA-256 of OUT.parquet and of
//!     exit 1                             each --tables file (byte determinism, its own test)
//!     sha256 out.parquet <hex>
//!   events.txt                           every table of the --db file, one file each:
//!     ## events (119 rows)               its row count, then each row as its JSON text,
//!     {"agent":"nanobot",…}              ORDER BY that text
//!   sessions.txt, llm_calls.txt, …
//! ```
//! The homes are loaded by `fixture_homes` (copied to a temp dir, every
//! file's mtime set to `fixture_homes::MTIME`, so `load_id` and mtime-stamped
//! rows do not depend on the checkout), once for this module and `audits`.
//! `NANOLOAD_BLESS=1 cargo test golden` rewrites the files (only that value,
//! and never under CI: there any `NANOLOAD_BLESS` fails the tests); review
//! their diff like code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::common::*;
use crate::fixture_homes::{homes, load};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn golden_home(home: &str) -> PathBuf {
    golden_dir().join(home.replace('/', "-"))
}

/// A home's rendering as its golden files: `bytes.txt` (the exit code and
/// the output files' hashes, everything before the first table), then one
/// `<table>.txt` per `## <table> (N rows)` section, in the rendering's order;
/// the parts put together are the rendering.
fn parts(rendering: &str) -> Vec<(String, String)> {
    let mut out = vec![("bytes.txt".to_string(), String::new())];
    for line in rendering.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("## ") {
            let table = rest.split(' ').next().unwrap_or_default();
            out.push((format!("{table}.txt"), String::new()));
        }
        if let Some((_, text)) = out.last_mut() {
            text.push_str(line);
        }
    }
    out
}

/// The first 300 characters of a line (never cut inside a character).
fn head(line: &str) -> String {
    line.chars().take(300).collect()
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
                a.map_or("<none>".into(), |x| head(x)),
                b.map_or("<none>".into(), |x| head(x))
            );
            shown += 1;
        }
    }
    s
}

/// Compare (or, with `NANOLOAD_BLESS=1` outside CI, write) the golden files
/// of every fixture home that `pick` selects from its parts: one failure per
/// file that differs. Under CI any `NANOLOAD_BLESS` fails at once
/// (`common::bless`).
fn check(pick: fn(&str) -> bool) -> TestResult {
    let bless = bless()?;
    let mut failures = Vec::new();
    for home in homes()? {
        let dir = golden_home(&home);
        let got = parts(&load(&home)?.rendering);
        if bless {
            std::fs::create_dir_all(&dir)?;
        }
        for (name, text) in got.iter().filter(|(n, _)| pick(n)) {
            let file = dir.join(name);
            if bless {
                std::fs::write(&file, text)?;
                continue;
            }
            let want = std::fs::read_to_string(&file).unwrap_or_default();
            if want != *text {
                failures.push(format!(
                    "{home}: {name} differs from {} (NANOLOAD_BLESS=1 rewrites it)\n{}",
                    file.display(),
                    first_differences(&want, text)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Every fixture home's run gives its golden exit code and the same bytes
/// of OUT.parquet and of every `--tables` file.
#[test]
fn every_fixture_writes_its_golden_bytes() -> TestResult {
    check(|name| name == "bytes.txt")
}

/// Every fixture home loads to exactly its golden rows, table by table, in
/// every table of the `--db` file.
#[test]
fn every_fixture_loads_to_its_golden_tables() -> TestResult {
    check(|name| name != "bytes.txt")
}

/// Every golden folder belongs to a fixture home that is still loaded, and
/// holds exactly the files its load gives (no table left over or missing).
#[test]
fn every_golden_file_has_its_fixture() -> TestResult {
    let mut want: Vec<PathBuf> = Vec::new();
    for home in homes()? {
        let dir = golden_home(&home);
        want.extend(
            parts(&load(&home)?.rendering)
                .into_iter()
                .map(|(n, _)| dir.join(n)),
        );
    }
    want.sort();
    let mut on_disk: Vec<PathBuf> = walkdir::WalkDir::new(golden_dir())
        .min_depth(1)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.into_path())
        .collect();
    on_disk.sort();
    assert_eq!(on_disk, want);
    Ok(())
}

/// Under `CI` the golden tests never rewrite their files: with
/// `NANOLOAD_BLESS` set to any value, `1` included, this test binary run
/// again on a golden test fails at once, naming the variable and why.
#[test]
fn ci_never_blesses_the_goldens() -> TestResult {
    for value in ["1", "0"] {
        let mut cmd = std::process::Command::new(std::env::current_exe()?);
        cmd.args([
            "golden::every_fixture_writes_its_golden_bytes",
            "--exact",
            "--test-threads",
            "1",
        ])
        .env("CI", "true")
        .env("NANOLOAD_BLESS", value);
        let o = output_within(&mut cmd, HANG_LIMIT, &format!("NANOLOAD_BLESS={value}"))?;
        let stdout = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            o.status.code(),
            Some(101),
            "NANOLOAD_BLESS={value}: {stdout}"
        );
        // the test's error, as the test harness prints it
        let want = format!(
            "Error: {:?}",
            format!(
                "NANOLOAD_BLESS={value:?} under CI=\"true\": CI never blesses; unset NANOLOAD_BLESS"
            )
        );
        assert!(stdout.contains(&want), "NANOLOAD_BLESS={value}: {stdout}");
    }
    Ok(())
}

/// Only `NANOLOAD_BLESS=1` blesses, and only outside CI; under CI (set, not
/// empty) any value of it is an error naming the variable.
#[test]
fn only_bless_1_outside_ci_blesses() {
    assert_eq!(bless_from(None, None), Ok(false));
    assert_eq!(bless_from(None, Some("1")), Ok(true));
    assert_eq!(bless_from(Some(""), Some("1")), Ok(true));
    for b in ["0", "", "yes", "true"] {
        assert_eq!(bless_from(None, Some(b)), Ok(false), "{b:?}");
    }
    assert_eq!(bless_from(Some("true"), None), Ok(false));
    assert_eq!(
        bless_from(Some("true"), Some("0")),
        Err(
            "NANOLOAD_BLESS=\"0\" under CI=\"true\": CI never blesses; unset NANOLOAD_BLESS"
                .to_string()
        )
    );
    assert!(bless_from(Some("1"), Some("1")).is_err());
}
