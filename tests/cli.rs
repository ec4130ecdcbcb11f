//! The command line itself: `--help` explains every flag (snapshot), a bad
//! argument exits 2 with one stderr line and writes nothing, and the
//! end-of-run summary counts every source kind (snapshot; `--quiet` keeps
//! only the read failures); `nanoload report`'s arguments likewise.

use std::path::Path;

use crate::common::*;

#[test]
fn help_explains_every_flag() -> TestResult {
    // wrapped to the width given (a terminal's, here COLUMNS)
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("--help")
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("help", String::from_utf8_lossy(&o.stdout));
    Ok(())
}

/// Every example `--help` shows runs as shown: from a directory outside
/// HOME (a copy of a fixture home stands for `~`), in order, each exiting 0
/// and none refused for writing inside HOME.
#[test]
fn every_help_example_runs_as_shown() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-a"))?;
    let work = tempfile::tempdir()?;
    let help = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("--help")
        .output()?;
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let examples: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Examples"))
        .filter_map(|l| l.strip_prefix("  nanoload "))
        .collect();
    assert_eq!(examples.len(), 6, "{help}");
    for example in examples {
        let args: Vec<std::ffi::OsString> = example
            .split_whitespace()
            .map(|a| match a.strip_prefix('~') {
                Some(rest) => format!("{}{rest}", home.path().display()).into(),
                None => a.into(),
            })
            .collect();
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .args(&args)
            .current_dir(work.path())
            .env("XDG_CACHE_HOME", work.path().join("xdg-cache"))
            .output()?;
        assert_eq!(
            o.status.code(),
            Some(0),
            "nanoload {example}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
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
    // a well-formed offset out of range says so
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanobot/home-a"))
        .arg("/tmp/x.parquet")
        .arg("--utc-offset=+25:00")
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(err.starts_with("error: invalid value '+25:00' for '--utc-offset <±HH:MM>': \"+25:00\" is out of range: an offset runs from -14:00 to +14:00, minutes below 60"), "{err}");
    let dir = tempfile::tempdir()?;
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanobot/home-a"))
        .arg(dir.path().join("o.parquet"))
        .args(["--secret-pattern", "ok", "--secret-pattern", "hunter2("])
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    // which pattern and what is wrong with it, never the pattern: it may
    // be the secret itself
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err,
        "nanoload: error: --secret-pattern #2: not a valid regular expression: unclosed group\n"
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

/// `--timings` prints one line per phase, in the order they ran — discover,
/// extract, stage, load, the kinds table and every SQL step, write — and the
/// total (the times themselves vary: only names are asserted).
#[test]
fn timings_name_every_phase_in_order() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &["--timings"])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    let err = r.stderr();
    let names: Vec<String> = timings_lines(&err)?.into_iter().map(|l| l.0).collect();
    let mut want: Vec<String> = ["discover", "extract", "stage", "load", "sql kinds"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    want.extend(
        nanoload::steps::STEPS
            .iter()
            .map(|(f, _)| format!("sql {}", f.trim_end_matches(".sql"))),
    );
    want.push("write".into());
    want.push("total".into());
    assert_eq!(names, want, "{err}");
    // without the flag, no timings
    let plain = run_home(&fixture("nanobot/home-a"), &[])?;
    assert!(!plain.stderr().contains("timings (s):"));
    Ok(())
}

#[test]
fn report_help_explains_every_argument() -> TestResult {
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .args(["report", "--help"])
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("report_help", String::from_utf8_lossy(&o.stdout));
    // `report` and `usage` are clap commands: `nanoload help COMMAND` says
    // the same as `COMMAND --help`
    for cmd in ["report", "usage"] {
        let help = |args: &[&str]| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
            Ok(assert_cmd::Command::cargo_bin("nanoload")?
                .args(args)
                .env("COLUMNS", "100")
                .output()?
                .stdout)
        };
        assert_eq!(help(&["help", cmd])?, help(&[cmd, "--help"])?, "{cmd}");
    }
    Ok(())
}

/// `nanoload usage --help`: every argument, the views, the examples; no
/// line wider than the 80 columns given.
#[test]
fn usage_help_explains_every_argument() -> TestResult {
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .args(["usage", "--help"])
        .env("COLUMNS", "80")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    let help = String::from_utf8_lossy(&o.stdout);
    for line in help.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    insta::assert_snapshot!("usage_help", help);
    Ok(())
}

/// `nanoload report` with a missing input exits 2 with one line naming it
/// and writes nothing; without its two paths clap says so (exit 2); a HOME
/// named `report` loads as `./report`.
#[test]
fn report_bad_arguments_exit_2_and_a_home_named_report_loads_as_dot_slash() -> TestResult {
    let dir = tempfile::tempdir()?;
    let missing = dir.path().join("none.parquet");
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("report")
        .arg(&missing)
        .arg(dir.path().join("r.html"))
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err,
        format!(
            "nanoload: error: {}: no such file (OUT.parquet of a run)\n",
            missing.display()
        )
    );
    assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);

    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .current_dir(dir.path())
        .args(["report", "out.parquet"])
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        err.contains("<report.html>") && err.contains("Usage: nanoload report"),
        "{err}"
    );

    crate::common::copy_tree(&fixture("nanoclaw/home-cc"), &dir.path().join("report"))?;
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .current_dir(dir.path())
        .args(["./report", "out.parquet"])
        .output()?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(dir.path().join("out.parquet").is_file());
    Ok(())
}

/// `load_id` names what made the output: besides the files, every option
/// given that changes it — `--utc-offset`, `--include-thinking`, each
/// `--secret-pattern` (in order), `--no-redact`, `--follow-links`, a
/// `--prices` table by its content — so two runs whose outputs may differ
/// never share one. Options that change no output byte (`--threads`,
/// `--memory-limit`, a `--prices` file equal to the built-in table) leave
/// it as the default run's, which is the files' alone.
#[test]
fn load_id_names_every_option_that_changes_the_output() -> TestResult {
    let home = tempfile::tempdir()?;
    let ns = home
        .path()
        .join(".nanobot/sessions/fedcba9876543210fedcba9876543210");
    std::fs::create_dir_all(&ns)?;
    std::fs::write(
        ns.join("Z29vZDox.jsonl"),
        concat!(
            r#"{"_type": "metadata", "key": "good:1", "created_at": "2026-10-05T09:00:00", "updated_at": "2026-10-05T09:00:05", "metadata": {}, "last_archived": 0}"#,
            "\n",
            r#"{"role": "user", "content": "meet in Oslo", "timestamp": "2026-10-05T09:00:01"}"#,
            "\n",
        ),
    )?;
    let dir = tempfile::tempdir()?;
    let builtin = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/prices.json");
    let same_prices = dir.path().join("same.json");
    std::fs::copy(&builtin, &same_prices)?;
    let mut table: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&builtin)?)?;
    table["models"]["gpt-4o"]["input"] = serde_json::json!(1e-6);
    let other_prices = dir.path().join("other.json");
    std::fs::write(&other_prices, table.to_string())?;
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let id = |args: &[String]| -> Result<String, Box<dyn std::error::Error>> {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_home(home.path(), &args)?;
        assert_eq!(run.code(), Some(0), "{args:?}: {}", run.stderr());
        let id = run.one("SELECT string_agg(DISTINCT load_id, ',') FROM events")?;
        assert!(
            run.stderr()
                .contains(&format!("nanoload: 2 events, load_id {id}\n")),
            "{}",
            run.stderr()
        );
        Ok(id)
    };
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let default = id(&[])?;
    let changing: Vec<Vec<String>> = vec![
        owned(&["--utc-offset", "+02:00"]),
        owned(&["--utc-offset", "+03:00"]),
        owned(&["--include-thinking"]),
        owned(&["--secret-pattern", "Oslo"]),
        owned(&["--secret-pattern", "Oslo", "--secret-pattern", "meet"]),
        owned(&["--secret-pattern", "meet", "--secret-pattern", "Oslo"]),
        owned(&["--no-redact"]),
        owned(&["--follow-links"]),
        vec!["--prices".into(), path(&other_prices)],
    ];
    let mut ids = vec![default.clone()];
    for args in &changing {
        ids.push(id(args)?);
    }
    let distinct: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{changing:?} → {ids:?}");
    for args in [
        owned(&["--threads", "1"]),
        owned(&["--memory-limit", "512MiB"]),
        vec!["--prices".into(), path(&same_prices)],
    ] {
        assert_eq!(id(&args)?, default, "{args:?}");
    }
    Ok(())
}

/// A HOME without agent state is refused: exit 4, one line naming HOME and
/// where nanoload looks, nothing written; given an agent's own directory
/// (`~/.nanobot`, a nanoclaw install's `data/`) the line names the
/// directory to give instead; a sync says the same.
#[test]
fn a_home_without_agent_state_exits_4_and_says_where_nanoload_looked() -> TestResult {
    let looked = "(nanoload reads nanobot instances, the .nanobot* directories directly under HOME, and nanoclaw install roots, directories under HOME holding data/v2.db)";
    let empty = tempfile::tempdir()?;
    let a = fixture("nanobot/home-a");
    let cc = fixture("nanoclaw/home-cc");
    let cases = [
        (empty.path().to_path_buf(), String::new()),
        (
            a.join(".nanobot"),
            format!(
                "; .nanobot is a nanobot instance itself: give the directory that holds it ({})",
                a.display()
            ),
        ),
        (
            cc.join("data"),
            format!(
                "; this is a nanoclaw install's data directory: give the install root ({}) or a directory above it",
                cc.display()
            ),
        ),
    ];
    for (home, instead) in cases {
        let out = tempfile::tempdir()?;
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .arg(&home)
            .arg(out.path().join("out.parquet"))
            .output()?;
        assert_eq!(o.status.code(), Some(4), "{}", home.display());
        assert_eq!(
            String::from_utf8_lossy(&o.stderr),
            format!(
                "nanoload: error: {}: no agent state found {looked}{instead}\n",
                home.display()
            )
        );
        assert_eq!(std::fs::read_dir(out.path())?.count(), 0, "written");
        // a sync says the same, and leaves no ledger behind
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .arg("sync")
            .arg(&home)
            .arg(out.path().join("history.duckdb"))
            .output()?;
        assert_eq!(
            (
                o.status.code(),
                String::from_utf8_lossy(&o.stderr).into_owned()
            ),
            (
                Some(4),
                format!(
                    "nanoload: error: {}: no agent state found {looked}{instead}\n",
                    home.display()
                )
            ),
            "sync {}",
            home.display()
        );
        assert_eq!(std::fs::read_dir(out.path())?.count(), 0, "written by sync");
    }
    Ok(())
}

/// OUT without `.parquet` loads as usual, with one warning line first.
#[test]
fn an_out_not_ending_in_parquet_is_written_with_a_warning() -> TestResult {
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("out.db");
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanoclaw/home-cc"))
        .arg(&out)
        .arg("--quiet")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "nanoload: warning: {} does not end in .parquet; it is written as a Parquet file all the same\n",
            out.display()
        )
    );
    assert!(std::fs::read(&out)?.starts_with(b"PAR1"));
    Ok(())
}

/// The commands' own refusals, each as it was before the commands had a
/// module each: one stderr line (or none, where the answer is on stdout or
/// nobody reads stderr) and the exit code, nothing else.
#[test]
fn each_command_refuses_with_its_own_line_and_code() -> TestResult {
    let dir = tempfile::tempdir()?;
    let tables = dir.path().join("tables");
    std::fs::create_dir(&tables)?;
    std::fs::write(tables.join("llm_calls.parquet"), b"")?;
    let cache = dir.path().join("cache");
    let missing = dir.path().join("missing.parquet");
    let traces = dir.path().join("traces.jsonl");
    let d = |p: &Path| p.display().to_string();
    let json = format!(
        "{{\"error\":{{\"kind\":\"input\",\"message\":\"{}: No such file or directory (os error 2)\"}}}}\n",
        d(&missing)
    );
    /// The arguments, stdin; then stdout, stderr and the exit code.
    type Case<'a> = (Vec<String>, &'a [u8], String, String, i32);
    let cases: Vec<Case> = vec![
        (
            vec!["usage".into(), d(&tables), "--tables".into(), d(&tables)],
            b"",
            String::new(),
            format!(
                "nanoload: error: {}: is a tables directory; --tables goes with OUT.parquet\n",
                d(&tables)
            ),
            2,
        ),
        (
            vec![
                "otlp".into(),
                d(&missing),
                d(&traces),
                "--header".into(),
                "X-Key: v".into(),
            ],
            b"",
            String::new(),
            "nanoload: --header: expected NAME=VALUE (a name without ':', no line breaks)\n".into(),
            2,
        ),
        (
            vec!["cache".into(), "clear".into(), "/nonexistent/home".into()],
            b"",
            String::new(),
            format!(
                "nanoload: nothing kept for /nonexistent/home in {}\n",
                d(&cache.join("nanoload"))
            ),
            0,
        ),
        (
            vec![
                "mcp-call".into(),
                d(&missing),
                "--spill".into(),
                d(&dir.path().join("spill")),
                "--max-rows".into(),
                "1".into(),
                "--timeout".into(),
                "1".into(),
                "--memory-limit".into(),
                "100000000".into(),
            ],
            b"not json",
            String::new(),
            String::new(),
            2,
        ),
        (
            vec![
                "sql".into(),
                d(&missing),
                "select 1".into(),
                "--json".into(),
            ],
            b"",
            json,
            String::new(),
            2,
        ),
    ];
    for (args, stdin, stdout, stderr, code) in cases {
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .args(&args)
            .env("XDG_CACHE_HOME", &cache)
            .write_stdin(stdin)
            .output()?;
        assert_eq!(String::from_utf8_lossy(&o.stderr), stderr, "{args:?}");
        assert_eq!(String::from_utf8_lossy(&o.stdout), stdout, "{args:?}");
        assert_eq!(o.status.code(), Some(code), "{args:?}");
    }
    assert!(!traces.exists());
    Ok(())
}
