//! `--progress` and `--summary-json`: progress is drawn in a terminal (a
//! pseudo-terminal here) with the numbers of the run — stores discovered,
//! stores, bytes and rows extracted, every SQL step, the files written —
//! and cleared, leaving stderr's summary and every output byte as without
//! it; without a terminal stderr holds nothing but the summary; the JSON
//! summary equals what the run's own `--tables` outputs hold.

use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};

use serde_json::Value;

use crate::common::{
    CALL_SUMS, Run, TestResult, copy_home, fixture, json_cells, run_home, timings_lines,
};

/// Run `nanoload HOME OUT --tables DIR [extra…]` with stderr on a
/// pseudo-terminal of 50 rows × 250 columns (stdin and stdout: /dev/null),
/// `TERM=xterm` and `NO_COLOR` as given; return the exit status, the
/// run's directory and every byte the terminal received, `\r\n` as `\n`.
fn run_in_pty(
    home: &Path,
    extra: &[&str],
    no_color: Option<&str>,
) -> Result<(ExitStatus, tempfile::TempDir, String), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let (mut master, mut slave) = (-1, -1);
    let size = libc::winsize {
        ws_row: 50,
        ws_col: 250,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    // SAFETY: openpty writes two descriptors it opened; the pointers are to
    // locals that outlive the call; name and termios may be NULL.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            &size,
        )
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: both descriptors were just opened by openpty and are owned here.
    let (master, slave) = unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) };
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("nanoload"));
    cmd.arg(home)
        .arg(dir.path().join("out.parquet"))
        .arg("--tables")
        .arg(dir.path().join("tables"))
        .args(extra)
        .env("TERM", "xterm")
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(slave));
    if let Some(v) = no_color {
        cmd.env("NO_COLOR", v);
    }
    let mut child = cmd.spawn()?;
    // the parent's copy of the terminal's end closes with the command, so
    // reading ends (EIO) once the child has exited
    drop(cmd);
    let reader = std::thread::spawn(move || {
        let mut file = std::fs::File::from(master);
        let mut all = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match file.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => all.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        all
    });
    let status = child.wait()?;
    let bytes = reader.join().map_err(|_| "pty reader panicked")?;
    let text = String::from_utf8_lossy(&bytes).replace("\r\n", "\n");
    Ok((status, dir, text))
}

/// stderr with the time taken masked (it is the only part that varies).
fn masked(stderr: &str) -> String {
    regex::Regex::new(r"took [0-9.]+s")
        .map(|re| re.replace_all(stderr, "took <t>").into_owned())
        .unwrap_or_default()
}

/// What a terminal shows after the last line clear: the progress line is
/// erased there, and what follows is what was printed after it.
fn after_progress(pty: &str) -> &str {
    pty.rsplit_once("\x1b[2K").map_or(pty, |(_, rest)| rest)
}

/// The last 3000 characters (of a long terminal stream), for a message.
fn tail(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    format!(
        "{:?}",
        chars[chars.len().saturating_sub(3000)..]
            .iter()
            .collect::<String>()
    )
}

/// `s` without its SGR (colour) escape sequences.
fn strip_colours(s: &str) -> String {
    regex::Regex::new(r"\x1b\[[0-9;]*m")
        .map(|re| re.replace_all(s, "").into_owned())
        .unwrap_or_default()
}

/// SGR (colour) escape sequences.
fn colours(s: &str) -> usize {
    regex::Regex::new(r"\x1b\[[0-9;]*m")
        .map(|re| re.find_iter(s).count())
        .unwrap_or(usize::MAX)
}

fn file_bytes(dir: &Path) -> Result<BTreeMap<String, Vec<u8>>, std::io::Error> {
    let mut m = BTreeMap::new();
    for e in walkdir::WalkDir::new(dir).sort_by_file_name() {
        let e = e?;
        if e.file_type().is_file() {
            let rel = e.path().strip_prefix(dir).unwrap_or(e.path());
            m.insert(rel.display().to_string(), std::fs::read(e.path())?);
        }
    }
    Ok(m)
}

/// The step names progress shows, in order: `kinds`, then each file's.
fn step_names() -> Vec<String> {
    let mut v = vec!["kinds".to_string()];
    v.extend(
        nanoload::steps::STEPS
            .iter()
            .map(|(f, _)| f.trim_end_matches(".sql").to_string()),
    );
    v
}

/// `--progress always` in a terminal: the store count, the bytes and rows
/// extracted (equal to `sources`), every SQL step by name and number, and
/// the files written are drawn, in colour; then the line is cleared and
/// what follows is the summary, the same as without progress, and so are
/// the output files.
#[test]
fn progress_in_a_terminal_shows_stores_rows_steps_and_leaves_the_summary() -> TestResult {
    let home = fixture("nanobot/home-a");
    let (status, dir, raw) = run_in_pty(&home, &["--progress", "always"], None)?;
    assert!(colours(&raw) > 0, "no colour without NO_COLOR");
    let pty = strip_colours(&raw);
    let plain = run_home(&home, &["--progress", "never"])?;
    assert_eq!(status.code(), plain.code());
    assert_eq!(status.code(), Some(1), "{pty}");

    let stores = plain.one("SELECT count(*) FROM sources")?;
    let rows = plain.one("SELECT sum(rows) FROM sources")?;
    let bytes: u64 = plain.one("SELECT sum(bytes) FROM sources")?.parse()?;
    assert_eq!(
        (stores.as_str(), rows.as_str(), bytes),
        ("19", "195", 142_828)
    );
    let human = nanoload::progress::human_bytes(bytes);
    assert_eq!(human, "139.48 KiB");
    for want in [
        "extract  ".to_string(),
        format!("{stores} stores discovered; 0/{stores} read, 0 B/{human}, 0 rows"),
        format!("{stores} stores discovered; {stores}/{stores} read, {human}/{human}, {rows} rows"),
        "stage    ".to_string(),
        "load     ".to_string(),
        "write    ".to_string(),
        // OUT and the five --tables files
        "6 files".to_string(),
    ] {
        assert!(pty.contains(&want), "{want:?} not drawn: {}", tail(&pty));
    }
    let names = step_names();
    assert_eq!(names.len(), 24);
    for (i, name) in names.iter().enumerate() {
        let want = format!("] {}/24 {name} ", i + 1);
        assert!(pty.contains(&want), "{want:?} not drawn: {}", tail(&pty));
    }
    // the phases come in the run's order
    let at = |s: &str| pty.find(s).unwrap_or(usize::MAX);
    let order = [
        at("discover"),
        at("stores discovered"),
        at("stage    "),
        at("load     "),
        at("1/24 kinds"),
        at("24/24 V023__session_titles"),
        at("6 files"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");

    // cleared: what remains is stderr as without progress, byte for byte
    assert_eq!(masked(after_progress(&pty)), masked(&plain.stderr()));
    assert!(!plain.stderr().contains('\x1b'));
    // and the outputs are the same bytes
    assert_eq!(file_bytes(dir.path())?, file_bytes(plain.dir.path())?);
    Ok(())
}

/// In a terminal `auto` draws; `NO_COLOR` leaves the colours out (not the
/// progress); `--quiet` and `never` draw nothing: the terminal gets exactly
/// what stderr gets without one.
#[test]
fn auto_progress_honours_no_color_quiet_and_never() -> TestResult {
    let home = fixture("nanobot/home-a");
    let (_, _, pty) = run_in_pty(&home, &[], Some("1"))?;
    assert!(
        pty.contains("1/24 kinds"),
        "auto draws in a terminal: {pty:?}"
    );
    assert!(pty.contains("19 stores discovered"), "{pty:?}");
    assert_eq!(colours(&pty), 0, "NO_COLOR: {pty:?}");
    let (_, _, pty) = run_in_pty(&home, &[], Some(""))?;
    assert!(colours(&pty) > 0, "an empty NO_COLOR is not set: {pty:?}");

    let quiet = run_home(&home, &["--quiet"])?;
    let (status, _, pty) = run_in_pty(&home, &["--quiet"], None)?;
    assert_eq!(status.code(), Some(1));
    assert_eq!(pty, quiet.stderr());
    assert_eq!(pty.lines().count(), 2, "{pty}");

    let plain = run_home(&home, &[])?;
    let (_, _, pty) = run_in_pty(&home, &["--progress", "never"], None)?;
    assert!(!pty.contains('\x1b'), "{pty:?}");
    assert_eq!(masked(&pty), masked(&plain.stderr()));
    Ok(())
}

/// Without a terminal (`auto`, the default) stderr holds the diagnostics
/// and the summary and nothing else: the same bytes as with `never`, no
/// escape or carriage return, and the summary's lines are today's
/// (`cli::summary_counts_every_kind` pins them).
#[test]
fn without_a_terminal_stderr_is_only_the_summary() -> TestResult {
    let home = fixture("nanobot/home-a");
    let auto = run_home(&home, &[])?;
    let never = run_home(&home, &["--progress", "never"])?;
    let err = auto.stderr();
    assert!(!err.contains('\x1b') && !err.contains('\r'), "{err:?}");
    assert_eq!(masked(&err), masked(&never.stderr()));
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 21, "{err}");
    assert!(lines[0].starts_with("nanoload: bad_line: "), "{err}");
    assert!(lines[1].starts_with("nanoload: bad_record: "), "{err}");
    assert!(
        lines[2].starts_with("nanoload: 119 events, load_id "),
        "{err}"
    );
    assert!(lines[20].starts_with("  took "), "{err}");
    assert!(lines[20].ends_with("s; exit code 1"), "{err}");
    Ok(())
}

/// `(name → n)` rows of a two-column query.
fn pairs(run: &Run, sql: &str) -> Result<BTreeMap<String, u64>, Box<dyn std::error::Error>> {
    let mut m = BTreeMap::new();
    for r in run.rows(sql)? {
        m.insert(r[0].clone(), r[1].parse()?);
    }
    Ok(m)
}

fn obj_u64(v: &Value) -> BTreeMap<String, u64> {
    v.as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_u64().unwrap_or(u64::MAX)))
                .collect()
        })
        .unwrap_or_default()
}

/// Load `home` with `--summary-json` (and `extra`); check every field of
/// the JSON against the run's own outputs, exit code and stderr; return it.
fn checked_summary_json(home: &Path, extra: &[&str]) -> Result<Value, Box<dyn std::error::Error>> {
    let json_dir = tempfile::tempdir()?;
    let json_path = json_dir.path().join("summary.json");
    let mut args = vec![
        "--summary-json",
        json_path.to_str().ok_or("path")?,
        "--timings",
    ];
    args.extend_from_slice(extra);
    let run = run_home(home, &args)?;
    let code = run.code().ok_or("killed")?;
    assert!(code < 2, "{}", run.stderr());
    let text = std::fs::read_to_string(&json_path)?;
    assert!(text.ends_with("}\n"));
    let j: Value = serde_json::from_str(&text)?;
    let err = run.stderr();

    assert_eq!(j["exit_code"], code);
    assert_eq!(j["version"], nanoload::VERSION);
    assert_eq!(
        j["load_id"].as_str().ok_or("load_id")?,
        run.one("SELECT DISTINCT load_id FROM events")?
    );
    assert!(err.contains(&format!("load_id {}", j["load_id"].as_str().unwrap_or("?"))));
    assert_eq!(
        j["events"],
        run.one("SELECT count(*) FROM events")?.parse::<u64>()?
    );
    // totals: the tables' own sums (a token sum nothing reported is null, a
    // call's total input + output where it reports none, the cost null when
    // no call is priced); the first and last event of the rows that are
    // activity (not the permission settings dated by config.json's mtime)
    let mut fields = vec!["sessions", "llm_calls"];
    fields.extend(&CALL_SUMS[1..]);
    fields.extend(["first_event_utc", "last_event_utc"]);
    let got = json_cells(&j["totals"], &fields);
    let want = run.rows(
        "WITH a AS (SELECT * FROM events
                    WHERE source_kind NOT IN ('nanobot.permissions', 'nanoclaw.upgrade_state')
                      AND NOT (source_kind = 'nanoclaw.catalog' AND session_uid IS NULL))
         SELECT (SELECT count(*) FROM sessions), count(*), sum(input_tokens), sum(output_tokens),
                sum(cache_read_tokens), sum(cache_write_tokens),
                sum(CASE WHEN total_tokens > 0
                           OR coalesce(input_tokens, 0) + coalesce(output_tokens, 0) = 0
                         THEN total_tokens
                         ELSE coalesce(input_tokens, 0) + coalesce(output_tokens, 0) END),
                round(sum(cost_usd::DECIMAL(38, 12)), 6), count(*) - count(cost_usd),
                (SELECT strftime(CAST(min(timestamp_utc) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%fZ') FROM a),
                (SELECT strftime(CAST(max(timestamp_utc) AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%fZ') FROM a)
         FROM llm_calls",
    )?;
    assert_eq!(got, want[0], "totals");

    // per kind: stores and rows read from `sources`, rows out from events
    // (llm_calls for nanobot.llm_usage)
    let kinds = j["kinds"].as_object().ok_or("kinds")?;
    let stores = pairs(&run, "SELECT source_kind, count(*) FROM sources GROUP BY 1")?;
    let read = pairs(
        &run,
        "SELECT source_kind, sum(rows) FROM sources GROUP BY 1",
    )?;
    let mut out = pairs(&run, "SELECT source_kind, count(*) FROM events GROUP BY 1")?;
    let calls: u64 = run
        .one("SELECT count(*) FROM llm_calls WHERE agent = 'nanobot'")?
        .parse()?;
    if calls > 0 {
        out.insert("nanobot.llm_usage".into(), calls);
    }
    let field = |f: &str| -> BTreeMap<String, u64> {
        kinds
            .iter()
            .map(|(k, v)| (k.clone(), v[f].as_u64().unwrap_or(u64::MAX)))
            .filter(|(_, n)| *n > 0)
            .collect()
    };
    assert_eq!(field("stores"), stores);
    assert_eq!(
        field("rows_read"),
        read.into_iter().filter(|(_, n)| *n > 0).collect()
    );
    assert_eq!(field("rows_out"), out);
    // every kind's line of the summary on stderr
    for (k, v) in kinds {
        let line = format!(
            "  {:<28} {:>6} {:>9} {:>9} {:>10}\n",
            k,
            v["stores"].as_u64().unwrap_or(u64::MAX),
            v["rows_read"].as_u64().unwrap_or(u64::MAX),
            v["rows_out"].as_u64().unwrap_or(u64::MAX),
            v["duplicates"].as_u64().unwrap_or(u64::MAX)
        );
        assert!(err.contains(&line), "{line:?} not in {err}");
    }

    // duplicates: the kinds' sum, the reasons' sum, the stderr lines
    let dups: u64 = field("duplicates").values().sum();
    let reasons = obj_u64(&j["drop_reasons"]);
    assert_eq!(j["duplicates"], dups);
    assert_eq!(reasons.values().sum::<u64>(), dups);
    assert!(
        err.contains(&format!("dropped as duplicates: {dups};")),
        "{err}"
    );
    for (reason, n) in &reasons {
        assert!(
            err.contains(&format!("    {n:>6} {reason}\n")),
            "{reason}: {err}"
        );
    }
    // the same counts per stable code: each reason has one, none unlisted
    let codes = obj_u64(&j["drop_reason_codes"]);
    assert_eq!(codes.values().sum::<u64>(), dups);
    assert!(!codes.contains_key("unlisted"), "{codes:?}");
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for (reason, n) in &reasons {
        *want
            .entry(nanoload::summary::drop_reason_code(reason).to_string())
            .or_default() += n;
    }
    assert_eq!(codes, want);

    // diagnostics per kind: the `diagnostics` table (every kind, 0 too)
    let mut diags: BTreeMap<String, u64> = nanoload::diag::DiagKind::ALL
        .iter()
        .map(|k| (k.as_str().to_string(), 0))
        .collect();
    diags.extend(pairs(
        &run,
        "SELECT kind, count(*) FROM diagnostics GROUP BY 1",
    )?);
    assert_eq!(obj_u64(&j["diagnostics"]), diags);

    // redactions: the sum of `sources.redactions` per rule
    let redactions = pairs(
        &run,
        "SELECT key, sum(value::BIGINT) FROM (
           SELECT unnest(map_keys(m)) AS key, unnest(map_values(m)) AS value
           FROM (SELECT json_transform(redactions, '\"MAP(VARCHAR, BIGINT)\"') AS m FROM sources))
         GROUP BY 1",
    )?;
    assert_eq!(obj_u64(&j["redactions"]), redactions);

    // timings: the --timings phases, in order, within the total
    let phases = j["timings"]["phases"].as_array().ok_or("phases")?;
    let names: Vec<&str> = phases.iter().filter_map(|p| p["phase"].as_str()).collect();
    let printed = timings_lines(&err)?;
    let mut want: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    want.push("total".into());
    assert_eq!(
        printed.iter().map(|l| &l.0).collect::<Vec<_>>(),
        want.iter().collect::<Vec<_>>()
    );
    assert_eq!(names.len(), 29);
    // the block prints the JSON's seconds, wall and CPU, to the millisecond
    let times = |p: &Value, wall: &str, cpu: &str| Some((p[wall].as_f64()?, p[cpu].as_f64()?));
    let json_times = phases
        .iter()
        .map(|p| times(p, "seconds", "cpu_seconds"))
        .chain([times(&j["timings"], "total_seconds", "total_cpu_seconds")])
        .collect::<Option<Vec<(f64, f64)>>>()
        .ok_or("a phase without seconds or cpu_seconds")?;
    let shown: Vec<String> = json_times
        .iter()
        .map(|(w, c)| format!("{w:.3} {c:.3}"))
        .collect();
    let read: Vec<String> = printed.iter().map(|l| format!("{} {}", l.1, l.2)).collect();
    assert_eq!(read, shown);
    // the phases lie within the run: their sums within its totals
    let ((total_wall, total_cpu), phase_times) = json_times.split_last().ok_or("no total")?;
    let wall: f64 = phase_times.iter().map(|t| t.0).sum();
    let cpu: f64 = phase_times.iter().map(|t| t.1).sum();
    assert!(wall > 0.0 && wall <= *total_wall, "{wall} > {total_wall}");
    assert!(cpu > 0.0 && cpu <= *total_cpu, "{cpu} > {total_cpu}");

    // how the SQL steps ran: what a home this small gets, and the line
    // --timings prints before its phases
    assert_eq!(
        j["sql_plan"],
        serde_json::json!({"chain": "tables", "join": "hash", "step_threads": "one"})
    );
    assert!(
        err.contains("\nsql plan: chain=tables join=hash step_threads=one\ntimings (s):\n"),
        "{err}"
    );

    // outputs, the JSON file last; renamed into place, no temp left
    let mut outputs = vec![run.out.display().to_string()];
    outputs.extend(nanoload::sink::TABLES.iter().map(|t| {
        run.tables
            .join(format!("{t}.parquet"))
            .display()
            .to_string()
    }));
    outputs.push(json_path.display().to_string());
    assert_eq!(j["outputs"], serde_json::json!(outputs));
    let left: Vec<_> = std::fs::read_dir(json_dir.path())?.collect();
    assert_eq!(left.len(), 1);
    Ok(j)
}

/// `--summary-json`, field by field against the run's own tables, on a
/// nanobot home with duplicates and read failures and on nanoclaw homes
/// (losses, warnings; home-2-0 with redacted secrets).
#[test]
fn summary_json_equals_the_runs_own_tables() -> TestResult {
    let a = checked_summary_json(&fixture("nanobot/home-a"), &[])?;
    assert_eq!(a["exit_code"], 1);
    assert_eq!(a["events"], 119);
    assert_eq!(a["duplicates"], 44);
    assert_eq!(a["diagnostics"]["bad_line"], 1);
    assert_eq!(a["diagnostics"]["bad_record"], 1);
    assert_eq!(a["kinds"]["nanobot.session_jsonl"]["rows_read"], 48);
    assert_eq!(a["kinds"]["nanobot.session_jsonl"]["rows_out"], 26);
    assert_eq!(a["drop_reasons"]["same record in the primary store"], 19);
    assert_eq!(a["drop_reason_codes"]["record_in_primary"], 19);
    assert!(a.get("cache").is_none(), "no cache key without --cache");

    let s = checked_summary_json(&fixture("nanoclaw/home-2-0"), &[])?;
    let redacted: u64 = obj_u64(&s["redactions"]).values().sum();
    assert!(redacted > 0, "{s}");
    for home in ["nanoclaw/home-a", "nanoclaw/home-b"] {
        let c = checked_summary_json(&fixture(home), &[])?;
        assert!(c["events"].as_u64().unwrap_or(0) > 0, "{home}: {c}");
    }
    Ok(())
}

/// With `--cache`, `cache` holds the counts of the summary's cache line:
/// every store extracted on the first run, the nanobot ones reused on the
/// second.
#[test]
fn summary_json_has_the_cache_counts_with_cache() -> TestResult {
    let cache = tempfile::tempdir()?;
    let dir = cache.path().join("c");
    let arg = dir.to_str().ok_or("path")?;
    let home = fixture("nanobot/home-a");
    let first = checked_summary_json(&home, &["--cache", arg])?;
    assert_eq!(
        first["cache"],
        serde_json::json!({"reused": 0, "extracted": 19, "not_cacheable": 0})
    );
    let second = checked_summary_json(&home, &["--cache", arg])?;
    assert_eq!(
        second["cache"],
        serde_json::json!({"reused": 19, "extracted": 0, "not_cacheable": 0})
    );
    Ok(())
}

/// A `--summary-json` inside HOME is refused before anything is written
/// (exit 2, one line); so is one in a missing directory.
#[test]
fn summary_json_inside_home_exits_2_and_writes_nothing() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let before = crate::common::tree(home.path());
    let inside = home.path().join("summary.json");
    let r = run_home(
        home.path(),
        &["--summary-json", inside.to_str().ok_or("path")?],
    )?;
    assert_eq!(r.code(), Some(2));
    let err = r.stderr();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("nanoload: error: cannot write "), "{err}");
    assert!(err.contains("summary.json: it is inside HOME"), "{err}");
    assert!(!r.out.exists() && !r.tables.exists());
    assert_eq!(crate::common::tree(home.path()), before);

    let missing = r.dir.path().join("no/such/dir/s.json");
    let r = run_home(
        &fixture("nanobot/home-a"),
        &["--summary-json", missing.to_str().ok_or("path")?],
    )?;
    assert_eq!(r.code(), Some(2), "{}", r.stderr());
    assert!(!r.out.exists());
    Ok(())
}
