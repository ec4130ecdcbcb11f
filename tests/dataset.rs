//! `--dataset DIR --host NAME`: three homes loaded as three hosts of one
//! hive-partitioned dataset, read back by DuckDB and by PySpark 4 (local
//! mode), each compared with the home's own OUT and `--tables` run; a host's
//! second load replaces its partitions; a killed load leaves the old ones.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::{Run, TestResult, fixture, query, run_home};

/// The three homes and their host names.
fn homes() -> [(&'static str, PathBuf); 3] {
    [
        ("alice", fixture("nanobot/home-a")),
        ("claw", fixture("nanoclaw/home-a")),
        ("dbera", fixture("realwriter/dbera-import/home")),
    ]
}

/// Load `home` into the dataset as `host`, with OUT and `--tables` too.
fn load(
    home: &Path,
    dataset: &Path,
    host: &str,
) -> Result<std::sync::Arc<Run>, Box<dyn std::error::Error>> {
    let run = run_home(
        home,
        &["--dataset", dataset.to_str().ok_or("path")?, "--host", host],
    )?;
    assert!(matches!(run.code(), Some(0 | 1)), "{}", run.stderr());
    Ok(run)
}

/// DuckDB over the dataset: one view per table, with `host` from the path.
fn dataset_conn(dataset: &Path) -> Result<duckdb::Connection, duckdb::Error> {
    let c = duckdb::Connection::open_in_memory()?;
    for t in [
        "events",
        "sessions",
        "llm_calls",
        "tz_offsets",
        "diagnostics",
        "sources",
    ] {
        c.execute_batch(&format!(
            "CREATE VIEW {t} AS SELECT * FROM read_parquet('{}/{t}/*/*.parquet', hive_partitioning = true, hive_types = {{'host': VARCHAR}});",
            dataset.display()
        ))?;
    }
    Ok(c)
}

/// Per-model token sums and cost of one home's own `llm_calls`, as the
/// dataset queries give them (`[model, input, output, calls, cost]`).
const TOKENS: &str = "SELECT coalesce(model, 'NULL'), sum(input_tokens), sum(output_tokens), count(*), round(sum(cost_usd), 9) FROM llm_calls GROUP BY ALL ORDER BY ALL";

#[test]
#[ignore = "tools tier (Spark): scripts/check.sh runs it (cargo test -- --ignored)"]
fn three_homes_as_three_hosts_read_the_same_in_duckdb_and_spark() -> TestResult {
    let dir = tempfile::tempdir()?;
    let dataset = dir.path().join("fleet");
    let mut own = Vec::new();
    for (host, home) in homes() {
        let run = load(&home, &dataset, host)?;
        // the partition's events are OUT's bytes
        let part = dataset.join(format!("events/host={host}/part-0.parquet"));
        assert!(std::fs::read(&part)? == std::fs::read(&run.out)?, "{host}");
        own.push((host, run));
    }
    let ds = dataset_conn(&dataset)?;
    let spark = spark_read(&dataset)?;
    for (host, run) in &own {
        let c = run.conn()?;
        let events: i64 = run.one("SELECT count(*) FROM events")?.parse()?;
        let sessions: i64 = run.one("SELECT count(*) FROM sessions")?.parse()?;
        let load_id = run.one("SELECT any_value(load_id) FROM events")?;
        let q = |sql: &str| query(&ds, &sql.replace("$host", host));
        assert_eq!(
            q("SELECT count(*) FROM events WHERE host = '$host'")?,
            vec![vec![events.to_string()]]
        );
        assert_eq!(
            q("SELECT count(*) FROM sessions WHERE host = '$host'")?,
            vec![vec![sessions.to_string()]]
        );
        let mut tokens = query(&c, TOKENS)?;
        tokens.sort();
        let mut from_dataset =
            q(&TOKENS.replace("FROM llm_calls", "FROM llm_calls WHERE host = '$host'"))?;
        from_dataset.sort();
        assert_eq!(from_dataset, tokens);
        // every table of the host carries the load's id
        for t in [
            "events",
            "sessions",
            "llm_calls",
            "tz_offsets",
            "diagnostics",
            "sources",
        ] {
            let ids = q(&format!(
                "SELECT DISTINCT load_id FROM {t} WHERE host = '$host'"
            ))?;
            assert!(
                ids.is_empty() || ids == vec![vec![load_id.clone()]],
                "{t} of {host}: {ids:?}"
            );
        }
        // Spark reads the same numbers
        assert_eq!(spark["events"][host].as_i64(), Some(events), "{host}");
        assert_eq!(spark["sessions"][host].as_i64(), Some(sessions), "{host}");
        let mut spark_tokens: Vec<Vec<String>> = spark["tokens"]
            .as_array()
            .ok_or("tokens")?
            .iter()
            .filter(|r| r[0] == *host)
            .map(|r| {
                r.as_array()
                    .map(|v| {
                        v[1..]
                            .iter()
                            .map(|x| match x {
                                serde_json::Value::String(s) => s.clone(),
                                serde_json::Value::Null => "NULL".into(),
                                n => n.to_string(),
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        spark_tokens.sort();
        assert_eq!(spark_tokens, tokens, "{host}");
        assert_eq!(
            spark["load_ids"][host],
            serde_json::json!([load_id]),
            "{host}"
        );
    }
    // what the homes hold, so the comparisons above compare something
    let counts = query(
        &ds,
        "SELECT host, count(*) FROM events GROUP BY 1 ORDER BY 1",
    )?;
    assert_eq!(counts.len(), 3);
    assert!(counts.iter().all(|r| r[1] != "0"));
    assert!(!query(&ds, "SELECT * FROM llm_calls")?.is_empty());
    // timestamps every engine reads: UTC-adjusted and naive microseconds
    assert_eq!(
        spark["types"],
        serde_json::json!({"timestamp_local": "timestamp_ntz", "timestamp_utc": "timestamp"})
    );
    let unsigned = query(
        &ds,
        "SELECT count(*) FROM (DESCRIBE SELECT * FROM events UNION ALL BY NAME SELECT * FROM llm_calls) WHERE column_type LIKE 'U%INT%' OR column_type LIKE 'HUGEINT'",
    )?;
    assert_eq!(unsigned, vec![vec!["0".to_string()]]);
    Ok(())
}

/// A host loaded again is replaced as a whole; the other hosts stay as
/// they were; a load killed before its commit leaves the old partitions,
/// and the next load removes its temp directory.
#[test]
fn a_host_is_replaced_whole_and_a_killed_load_leaves_the_old_partitions() -> TestResult {
    let dir = tempfile::tempdir()?;
    let dataset = dir.path().join("fleet");
    let [(_, a), (_, claw), (_, dbera)] = homes();
    load(&a, &dataset, "alice")?;
    load(&claw, &dataset, "claw")?;
    let claw_files = crate::common::tree(&dataset.join("events/host=claw"));
    let second = load(&dbera, &dataset, "alice")?;
    let ds = dataset_conn(&dataset)?;
    assert_eq!(
        query(&ds, "SELECT count(*) FROM events WHERE host = 'alice'")?,
        vec![vec![second.one("SELECT count(*) FROM events")?]]
    );
    assert_eq!(
        crate::common::tree(&dataset.join("events/host=claw")),
        claw_files
    );
    let before = crate::common::tree(&dataset);

    // killed after writing, before the commit
    let pause = dir.path().join("pause");
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("nanoload"))
        .arg(&a)
        .arg("--dataset")
        .arg(&dataset)
        .args(["--host", "alice", "--quiet"])
        .env(
            "NANOLOAD_TEST_PAUSE",
            format!("written:{}", pause.display()),
        )
        .spawn()?;
    let start = std::time::Instant::now();
    while !pause.exists() && start.elapsed().as_secs() < 120 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(pause.exists(), "the run never reached the pause point");
    child.kill()?;
    child.wait()?;
    let after = crate::common::tree(&dataset);
    let visible = |t: &std::collections::BTreeMap<String, String>| {
        t.iter()
            .filter(|(k, _)| !k.is_empty() && !k.starts_with('.'))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(visible(&after), visible(&before));
    assert!(after.keys().any(|k| k.starts_with(".nanoload-tmp-")));
    // the next load cleans up what the killed one left
    load(&claw, &dataset, "claw")?;
    let names: Vec<String> = std::fs::read_dir(&dataset)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
    Ok(())
}

#[test]
fn dataset_arguments_are_checked_before_anything_is_written() -> TestResult {
    let home = crate::common::copy_home(&fixture("nanobot/home-a"))?;
    let inside = home.path().join("fleet");
    let run = run_home(home.path(), &["--dataset", inside.to_str().ok_or("path")?])?;
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("inside HOME"), "{}", run.stderr());
    assert!(!inside.exists());
    let dir = tempfile::tempdir()?;
    let fleet = dir.path().join("fleet");
    for bad in ["..", "a/b", "two words"] {
        let run = run_home(
            home.path(),
            &["--dataset", fleet.to_str().ok_or("path")?, "--host", bad],
        )?;
        assert_eq!(run.code(), Some(2), "{bad}");
        assert_eq!(
            run.stderr().trim(),
            format!(
                "nanoload: error: --host: host name {bad:?} must match [A-Za-z0-9._-]+ and not be . or .."
            ),
        );
    }
    assert!(!fleet.exists());
    Ok(())
}

/// Run tests/spark/read_dataset.py with the Spark venv's python
/// (`NANOLOAD_SPARK_PYTHON`, set by scripts/check.sh).
fn spark_read(dataset: &Path) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let python = crate::common::venv_python("NANOLOAD_SPARK_PYTHON", "spark/setup.sh")?;
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/spark/read_dataset.py"
        ))
        .arg(dataset)
        .output()?;
    if !out.status.success() {
        return Err(format!("spark: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(serde_json::from_slice(&out.stdout)?)
}
