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
//! The homes are loaded by `fixture_homes` (copied to a temp dir, every
//! file's mtime set to `fixture_homes::MTIME`, so `load_id` and mtime-stamped
//! rows do not depend on the checkout), once for this module and `audits`.
//! `NANOLOAD_BLESS=1 cargo test golden` rewrites the files; review their
//! diff like code.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::common::*;
use crate::fixture_homes::{homes, load};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn golden_file(home: &str) -> PathBuf {
    golden_dir().join(format!("{}.txt", home.replace('/', "-")))
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

/// Every fixture home loads to exactly its golden text: the same exit code,
/// the same bytes of OUT.parquet and of every `--tables` file, the same rows
/// in every table of the `--db` file.
#[test]
fn every_fixture_loads_to_its_golden_output() -> TestResult {
    let bless = std::env::var_os("NANOLOAD_BLESS").is_some();
    let mut failures = Vec::new();
    for home in homes()? {
        let got = load(&home)?.rendering;
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
