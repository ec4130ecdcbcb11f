//! The CI entry points themselves: `.ci/run` and `scripts/check.sh` refuse,
//! as their first action, to run under `CI` with a variable that blesses
//! goldens or snapshots (`NANOLOAD_BLESS`, `INSTA_UPDATE` other than `no`,
//! `INSTA_FORCE_PASS`): one line naming it, exit 2, nothing started. The
//! scripts run with stub `cargo`, `python3`, `pip`, `apt-get` and `rustup`
//! first on PATH, each of which records its call and fails, so the test
//! sees whether anything was started and never starts a real build.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

const BLESS_VARS: [&str; 3] = ["NANOLOAD_BLESS", "INSTA_UPDATE", "INSTA_FORCE_PASS"];

/// A directory of stub programs that append their name to `calls` and exit 1.
fn stubs(dir: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir(&bin)?;
    let calls = dir.join("calls");
    for name in ["cargo", "python3", "pip", "apt-get", "rustup"] {
        let p = bin.join(name);
        std::fs::write(
            &p,
            format!("#!/bin/sh\necho {name} >> '{}'\nexit 1\n", calls.display()),
        )?;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(calls)
}

/// Run `script` (relative to the repository) with `env` on top of an
/// environment without any bless variable or `CI`, the stubs first on PATH:
/// its exit code, stderr, and the stubs it called.
fn run_script(
    script: &str,
    env: &[(&str, &str)],
) -> Result<(Option<i32>, String, String), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let calls = stubs(dir.path())?;
    let path = format!(
        "{}:{}",
        dir.path().join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cmd = Command::new(root.join(script));
    cmd.current_dir(root).env("PATH", path).env_remove("CI");
    for v in BLESS_VARS {
        cmd.env_remove(v);
    }
    cmd.envs(env.iter().copied());
    let o = output_within(&mut cmd, HANG_LIMIT, &format!("{script} with {env:?}"))?;
    let called = std::fs::read_to_string(&calls).unwrap_or_default();
    Ok((
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        called,
    ))
}

/// Under `CI=true` every bless variable, whatever its value (`0` and empty
/// included), stops `scripts/check.sh` before it starts anything: exit 2 and
/// one stderr line naming the variable; `.ci/run` (which sets `CI=true`
/// itself) likewise. `INSTA_UPDATE=no`, or a bless variable outside CI,
/// passes the check (the script goes on to its first command, a stub here).
#[test]
fn ci_refuses_every_bless_variable_before_anything_runs() -> TestResult {
    let refused = [
        ("NANOLOAD_BLESS", "0"),
        ("NANOLOAD_BLESS", "1"),
        ("NANOLOAD_BLESS", ""),
        ("INSTA_UPDATE", "always"),
        ("INSTA_UPDATE", "auto"),
        ("INSTA_UPDATE", ""),
        ("INSTA_FORCE_PASS", "1"),
        ("INSTA_FORCE_PASS", "0"),
    ];
    for (var, value) in refused {
        let (code, stderr, called) =
            run_script("scripts/check.sh", &[("CI", "true"), (var, value)])?;
        assert_eq!(code, Some(2), "{var}={value:?}: {stderr}");
        assert_eq!(
            stderr,
            format!(
                "check.sh: CI is set (CI=true) and so is {var}={value:?}: CI never blesses goldens or snapshots; unset {var}\n"
            ),
            "{var}={value:?}"
        );
        assert_eq!(called, "", "{var}={value:?} started {called:?}");
    }
    // .ci/run sets CI=true when it is not set
    let (code, stderr, called) = run_script(".ci/run", &[("NANOLOAD_BLESS", "0")])?;
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "check.sh: CI is set (CI=true) and so is NANOLOAD_BLESS=\"0\": CI never blesses goldens or snapshots; unset NANOLOAD_BLESS\n"
    );
    assert_eq!(called, "");
    // what CI itself sets passes the check, and so does blessing outside CI:
    // the script goes on and calls its first stub
    for env in [
        &[("CI", "true"), ("INSTA_UPDATE", "no")][..],
        &[("NANOLOAD_BLESS", "1")][..],
    ] {
        let (code, stderr, called) = run_script("scripts/check.sh", env)?;
        assert_ne!(code, Some(0), "{env:?}: {stderr}");
        assert!(!stderr.contains("never blesses"), "{env:?}: {stderr}");
        assert_ne!(called, "", "{env:?}: nothing started: {stderr}");
    }
    Ok(())
}
