//! The command line itself: `--help` explains every flag (snapshot), a bad
//! argument exits 2 with one stderr line and writes nothing, and the
//! end-of-run summary counts every source kind (snapshot; `--quiet` keeps
//! only the read failures).

use crate::common::*;

#[test]
fn help_explains_every_flag() -> TestResult {
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("--help")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("help", String::from_utf8_lossy(&o.stdout));
    Ok(())
}

#[test]
fn bad_arguments_exit_2_with_one_line() -> TestResult {
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanobot/home-a"))
        .arg("/tmp/x.parquet")
        .arg("--utc-offset")
        .arg("2")
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.starts_with("error: invalid value '2' for '--utc-offset <±HH:MM>': \"2\" is not an offset of the form +HH:MM or -HH:MM"), "{err}");
    let dir = tempfile::tempdir()?;
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanobot/home-a"))
        .arg(dir.path().join("o.parquet"))
        .args(["--secret-pattern", "("])
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("nanoload: error: --secret-pattern \"(\": regex parse error"),
        "{err}"
    );
    assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
    Ok(())
}

#[test]
fn summary_counts_every_kind() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    // the time taken and load_id (file mtimes) vary: mask them
    let masked: Vec<String> = r
        .stderr()
        .lines()
        .map(|l| {
            let l = regex::Regex::new(r"load_id [0-9a-f]{16}")
                .map(|re| re.replace(l, "load_id <id>").into_owned())
                .unwrap_or_default();
            regex::Regex::new(r"took [0-9.]+s")
                .map(|re| re.replace(&l, "took <t>").into_owned())
                .unwrap_or_default()
        })
        .collect();
    insta::assert_snapshot!("summary_nanobot_home_a", masked.join("\n"));
    let q = run_home(&fixture("nanobot/home-a"), &["--quiet"])?;
    assert_eq!(
        q.stderr().lines().count(),
        2,
        "--quiet keeps only the read failures: {}",
        q.stderr()
    );
    Ok(())
}
