//! `nanoload sync HOME LEDGER.duckdb`: every row ever seen kept, what the
//! agent deleted marked gone, one transaction per sync, one sync at a time.

use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Output, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;

use crate::common::*;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The session file the tests delete: nanobot's `/new` of a chat leaves its
/// JSONL gone (0.3.5 `SessionManager.delete`).
const CHAT: &str = ".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/discord_99001.jsonl";

fn sync_cmd(home: &Path, ledger: &Path) -> Result<Process, Box<dyn std::error::Error>> {
    let mut cmd = Process::cargo_bin("nanoload")?;
    cmd.arg("sync")
        .arg(home)
        .arg(ledger)
        .arg("--progress=never");
    Ok(cmd)
}

fn sync(home: &Path, ledger: &Path) -> Result<Output, Box<dyn std::error::Error>> {
    Ok(sync_cmd(home, ledger)?.output()?)
}

/// The rows of `sql` over the ledger, opened read-only.
fn ledger_rows(ledger: &Path, sql: &str) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "ATTACH '{}' AS l (READ_ONLY); USE l;",
        ledger.display()
    ))?;
    Ok(query(&c, sql)?)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The summary's line of the rows (after the diagnostics' lines).
fn rows_line(o: &Output) -> Option<String> {
    stderr(o)
        .lines()
        .find(|l| l.starts_with("nanoload: rows: "))
        .map(String::from)
}

/// home-a holds a torn JSONL line and a torn database record: a sync of it
/// exits 1, as its load does, naming both in a load's order.
const HOME_A_BAD: [&str; 2] = [
    "nanoload: bad_line: .nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/c2xhY2s6QzBXT1JLNw.jsonl:10: EOF while parsing a string at line 1 column 44",
    "nanoload: bad_record: .nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/sessions.sqlite3:41: session subagent:sa_5c1e9d7f position 2: EOF while parsing a string at line 1 column 83",
];

/// A sync paused at `point` (inside the merge's transaction: `merged`), and
/// the file it waits on.
fn paused(
    home: &Path,
    ledger: &Path,
    point: &str,
) -> Result<(Child, PathBuf), Box<dyn std::error::Error>> {
    let signal = ledger.with_extension("paused");
    let mut child = sync_cmd(home, ledger)?
        .env(
            "NANOLOAD_TEST_PAUSE",
            format!("{point}:{}", signal.display()),
        )
        .stderr(Stdio::piped())
        .spawn()?;
    let start = Instant::now();
    while !signal.exists() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the sync never paused".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok((child, signal))
}

#[test]
fn a_sync_keeps_every_row_and_marks_what_the_agent_deleted() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let first = sync(home.path(), &ledger)?;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    // every staged row: the sources' rows, each once
    let staged = ledger_rows(
        &ledger,
        "SELECT sum(rows) FILTER (WHERE source_kind <> 'nanobot.llm_usage'),
                sum(rows) FILTER (WHERE source_kind = 'nanobot.llm_usage')
         FROM ledger_sources",
    )?;
    let counts = "SELECT (SELECT count(*) FROM ledger_events), (SELECT count(DISTINCT row_key) FROM ledger_events),
                         (SELECT count(*) FILTER (WHERE present) FROM ledger_events),
                         (SELECT count(*) FROM ledger_llm_calls), (SELECT count(*) FILTER (WHERE present) FROM ledger_llm_calls)";
    let (events, calls) = (staged[0][0].clone(), staged[0][1].clone());
    assert_eq!(
        ledger_rows(&ledger, counts)?,
        vec![vec![
            events.clone(),
            events.clone(),
            events.clone(),
            calls.clone(),
            calls.clone()
        ]]
    );
    let lines: Vec<String> = stderr(&first).lines().map(String::from).collect();
    assert_eq!(lines.len(), 6, "{lines:?}");
    let stores = ledger_rows(&ledger, "SELECT count(*) FROM ledger_sources")?[0][0].clone();
    assert_eq!(
        lines[3],
        format!("nanoload: stores: {stores} read, 0 unchanged since the ledger read them")
    );
    assert_eq!(lines[..2], HOME_A_BAD);
    assert_eq!(
        lines[4],
        format!(
            "nanoload: rows: {events} added, 0 changed, 0 gone; {events} in the ledger, {events} on disk"
        )
    );
    assert_eq!(
        lines[5],
        format!(
            "nanoload: nanobot usage records (llm_usage.sqlite3): {calls} added, 0 changed, 0 gone; {calls} in the ledger, {calls} on disk"
        )
    );
    // the same home again: the same rows, nothing added, a second load
    let again = sync(home.path(), &ledger)?;
    assert_eq!(again.status.code(), Some(1), "{}", stderr(&again));
    assert_eq!(
        rows_line(&again),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {events} in the ledger, {events} on disk"
        ))
    );
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*), count(DISTINCT load_id), max(sync), sum(added), sum(gone) FROM loads"
        )?,
        strs(&[&[
            "2",
            "1",
            "2",
            &(events.parse::<u64>()? + calls.parse::<u64>()?).to_string(),
            "0"
        ]])
    );
    // the chat deleted: its rows stay, gone; every other row present
    let chat_rows = ledger_rows(
        &ledger,
        &format!("SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}'"),
    )?[0][0]
        .clone();
    assert_ne!(chat_rows, "0");
    let texts = |ledger: &Path| {
        ledger_rows(
            ledger,
            &format!(
                "SELECT row_key, text, present FROM ledger_events WHERE source_path = '{CHAT}' ORDER BY row_key"
            ),
        )
    };
    let before = texts(&ledger)?;
    std::fs::remove_file(home.path().join(CHAT))?;
    let third = sync(home.path(), &ledger)?;
    assert_eq!(third.status.code(), Some(1), "{}", stderr(&third));
    let present = events.parse::<u64>()? - chat_rows.parse::<u64>()?;
    assert_eq!(
        rows_line(&third),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, {chat_rows} gone; {events} in the ledger, {present} on disk"
        ))
    );
    let after = texts(&ledger)?;
    assert_eq!(after.len(), before.len());
    for (b, a) in before.iter().zip(&after) {
        assert_eq!((&a[0], &a[1], a[2].as_str()), (&b[0], &b[1], "false"));
    }
    assert_eq!(
        ledger_rows(
            &ledger,
            &format!(
                "SELECT present, first_seen_load, last_seen_load FROM ledger_sources WHERE source_path = '{CHAT}'"
            )
        )?,
        strs(&[&["false", "1", "2"]])
    );
    // back on disk: the same rows, present again (changed), none added
    copy_tree(&fixture("nanobot/home-a"), home.path())?;
    let fourth = sync(home.path(), &ledger)?;
    assert_eq!(
        rows_line(&fourth),
        Some(format!(
            "nanoload: rows: 0 added, {chat_rows} changed, 0 gone; {events} in the ledger, {events} on disk"
        ))
    );
    Ok(())
}

#[test]
fn a_second_sync_is_refused_and_a_killed_one_changes_nothing() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let first = sync(home.path(), &ledger)?;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let state = "SELECT (SELECT count(*) FROM loads), (SELECT count(*) FILTER (WHERE present) FROM ledger_events),
                        (SELECT count(*) FROM ledger_events)";
    let before = ledger_rows(&ledger, state)?;
    std::fs::remove_file(home.path().join(CHAT))?;
    // a sync inside its transaction (every row merged, not committed) …
    let (mut child, signal) = paused(home.path(), &ledger, "merged")?;
    // … refuses a second one, which changes nothing
    let second = sync(home.path(), &ledger)?;
    assert_eq!(second.status.code(), Some(5), "{}", stderr(&second));
    assert_eq!(
        stderr(&second),
        format!(
            "nanoload: error: {}: another nanoload sync is writing this ledger (lock {}.lock is held); nothing done, try again when it has finished\n",
            ledger.display(),
            ledger.display()
        )
    );
    // … and killed there, leaves the ledger as it was
    child.kill()?;
    child.wait()?;
    std::fs::remove_file(&signal)?;
    assert_eq!(ledger_rows(&ledger, state)?, before);
    // the next sync does what the killed one would have
    let next = sync(home.path(), &ledger)?;
    assert_eq!(next.status.code(), Some(1), "{}", stderr(&next));
    let after = ledger_rows(&ledger, state)?;
    assert_eq!(after[0][0], "2");
    assert_eq!(after[0][2], before[0][2]);
    assert_ne!(after[0][1], before[0][1]);
    Ok(())
}

#[test]
fn a_ledger_of_another_format_is_refused_never_misread() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    assert_eq!(sync(home.path(), &ledger)?.status.code(), Some(1));
    {
        let c = duckdb::Connection::open(&ledger)?;
        c.execute_batch("UPDATE ledger_meta SET value = '0' WHERE key = 'format'; CHECKPOINT;")?;
    }
    let refused = sync(home.path(), &ledger)?;
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        stderr(&refused),
        format!(
            "nanoload: error: {}: a ledger of another format (format 0, created by nanoload {}) than this nanoload {} reads (format 2, its columns); nothing done\n",
            ledger.display(),
            env!("CARGO_PKG_VERSION"),
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_eq!(
        ledger_rows(&ledger, "SELECT count(*) FROM loads")?,
        strs(&[&["1"]])
    );
    // a ledger inside HOME is refused before anything is read
    let inside = sync(home.path(), &home.path().join("history.duckdb"))?;
    assert_eq!(inside.status.code(), Some(2));
    assert!(!home.path().join("history.duckdb").exists());
    assert!(!home.path().join("history.duckdb.lock").exists());
    Ok(())
}

#[test]
fn sync_and_export_help_explain_every_flag() -> TestResult {
    let o = Process::cargo_bin("nanoload")?
        .args(["sync", "--help"])
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("sync_help", String::from_utf8_lossy(&o.stdout));
    let o = Process::cargo_bin("nanoload")?
        .args(["export", "--help"])
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("export_help", String::from_utf8_lossy(&o.stdout));
    Ok(())
}

/// Output files by name, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// Every output file of `dir` (OUT and the `--tables` files), by name.
fn output_bytes(out: &Path, tables: &Path) -> Result<Files, Box<dyn std::error::Error>> {
    let mut files = vec![("OUT".to_string(), std::fs::read(out)?)];
    let mut names: Vec<_> = std::fs::read_dir(tables)?.collect::<Result<Vec<_>, _>>()?;
    names.sort_by_key(|e| e.file_name());
    for e in names {
        files.push((
            e.file_name().to_string_lossy().into_owned(),
            std::fs::read(e.path())?,
        ));
    }
    Ok(files)
}

fn export(args: &[&std::ffi::OsStr]) -> Result<Output, Box<dyn std::error::Error>> {
    export_with(args, &[])
}

/// `nanoload export args` with the variables `env` set.
fn export_with(
    args: &[&std::ffi::OsStr],
    env: &[(&str, String)],
) -> Result<Output, Box<dyn std::error::Error>> {
    Ok(Process::cargo_bin("nanoload")?
        .arg("export")
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()?)
}

/// A load of `home` and an export of the ledger (`extra`: `--snapshot`),
/// each with `--tables`: their output files.
fn load_and_export(
    home: &Path,
    ledger: &Path,
    work: &Path,
    name: &str,
    extra: &[&str],
) -> Result<(Files, Files), Box<dyn std::error::Error>> {
    let (out, tables) = (
        work.join(format!("{name}-load.parquet")),
        work.join(format!("{name}-load")),
    );
    let o = Process::cargo_bin("nanoload")?
        .arg(home)
        .arg(&out)
        .arg("--tables")
        .arg(&tables)
        .output()?;
    assert!(o.status.code().is_some_and(|c| c <= 1), "{}", stderr(&o));
    let (xout, xtables) = (
        work.join(format!("{name}-export.parquet")),
        work.join(format!("{name}-export")),
    );
    let mut args = vec![
        ledger.as_os_str(),
        xout.as_os_str(),
        "--tables".as_ref(),
        xtables.as_os_str(),
    ];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    let x = export(&args)?;
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    Ok((output_bytes(&out, &tables)?, output_bytes(&xout, &xtables)?))
}

#[test]
fn an_export_snapshot_is_a_loads_bytes_and_the_history_keeps_deleted_rows() -> TestResult {
    let work = tempfile::tempdir()?;
    // a mixed home (nanobot and nanoclaw): the snapshot is the load, byte for byte
    let mixed = mixed_home()?;
    let mixed_ledger = work.path().join("mixed.duckdb");
    assert!(
        sync(mixed.path(), &mixed_ledger)?
            .status
            .code()
            .is_some_and(|c| c <= 1)
    );
    let (load, snapshot) = load_and_export(
        mixed.path(),
        &mixed_ledger,
        work.path(),
        "mixed",
        &["--snapshot"],
    )?;
    assert_eq!(load.len(), 6);
    for ((a, x), (b, y)) in load.iter().zip(&snapshot) {
        assert_eq!(a, b);
        assert!(x == y, "{a}: the snapshot's bytes differ from the load's");
    }
    // home-a, then its chat deleted
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let ledger = work.path().join("history.duckdb");
    sync(home.path(), &ledger)?;
    let (before, _) =
        load_and_export(home.path(), &ledger, work.path(), "before", &["--snapshot"])?;
    std::fs::remove_file(home.path().join(CHAT))?;
    sync(home.path(), &ledger)?;
    // the snapshot is the load of what is left
    let (load, snapshot) =
        load_and_export(home.path(), &ledger, work.path(), "after", &["--snapshot"])?;
    assert!(
        load == snapshot,
        "the snapshot after the deletion differs from the load"
    );
    // the history holds every row the first load wrote, the chat's not present
    let (_, history) = load_and_export(home.path(), &ledger, work.path(), "history", &[])?;
    assert_eq!(history.len(), before.len());
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "CREATE VIEW first AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW history AS SELECT * FROM read_parquet('{}');",
        work.path().join("before-load.parquet").display(),
        work.path().join("history-export.parquet").display()
    ))?;
    assert_eq!(
        query(
            &c,
            "SELECT (SELECT count(*) FROM (SELECT * FROM first EXCEPT ALL
                     SELECT * EXCLUDE (load_id, first_seen_load, last_seen_load, present) FROM history)),
                    (SELECT count(*) FROM (SELECT * EXCLUDE (load_id, first_seen_load, last_seen_load, present) FROM history
                     EXCEPT ALL SELECT * FROM first))"
        )?,
        strs(&[&["0", "0"]])
    );
    let chat = query(
        &c,
        &format!("SELECT count(*) FROM first WHERE source_path = '{CHAT}'"),
    )?[0][0]
        .clone();
    let rest = query(
        &c,
        &format!("SELECT count(*) FROM first WHERE source_path <> '{CHAT}'"),
    )?[0][0]
        .clone();
    assert_eq!(
        query(
            &c,
            "SELECT source_path = '.nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/discord_99001.jsonl',
                    present, first_seen_load, last_seen_load, count(*)
             FROM history GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[&["false", "true", "1", "2", &rest], &["true", "false", "1", "1", &chat]])
    );
    // the column order: today's contract, then the ledger's three
    let names = query(&c, "SELECT column_name FROM (DESCRIBE history)")?;
    let tail: Vec<&str> = names[names.len() - 4..]
        .iter()
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(
        tail,
        [
            "session_uid",
            "first_seen_load",
            "last_seen_load",
            "present"
        ]
    );
    // no ledger: one line, exit 2
    let none = export(&[
        work.path().join("none.duckdb").as_os_str(),
        work.path().join("x.parquet").as_os_str(),
    ])?;
    assert_eq!(none.status.code(), Some(2));
    assert_eq!(
        stderr(&none),
        format!(
            "nanoload: error: {}: no such ledger (nanoload sync HOME LEDGER.duckdb makes one)\n",
            work.path().join("none.duckdb").display()
        )
    );
    Ok(())
}

/// The WebUI chat's namespace JSONL: beside the session database it is a
/// secondary copy (8 staged rows, one of them in the output; the WebUI
/// recorder's transcript holds the chat's turns too).
const WEBUI_SESSION: &str = ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/d2Vic29ja2V0OmI4ZTFjM2YyLTVkN2EtNGU2MS05ZjBiLTJhNGM2ZDhlMGYxMw.jsonl";

#[test]
fn an_erased_copy_keeps_its_rows_in_the_history_and_duplicates_nothing() -> TestResult {
    let work = tempfile::tempdir()?;
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let ledger = work.path().join("history.duckdb");
    sync(home.path(), &ledger)?;
    let (first, _) = load_and_export(home.path(), &ledger, work.path(), "first", &["--snapshot"])?;
    std::fs::remove_file(home.path().join(WEBUI_SESSION))?;
    sync(home.path(), &ledger)?;
    let (_, history) = load_and_export(home.path(), &ledger, work.path(), "erased", &[])?;
    assert_eq!(history.len(), first.len());
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "CREATE VIEW first AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW erased AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW history AS SELECT * EXCLUDE (load_id, first_seen_load, last_seen_load, present) FROM read_parquet('{}');",
        work.path().join("first-load.parquet").display(),
        work.path().join("erased-load.parquet").display(),
        work.path().join("erased-export.parquet").display()
    ))?;
    // a load now loses the row only that file held; the history keeps it,
    // and the dedup over the whole history drops the other copies as the
    // first load did: the same rows, none twice
    assert_eq!(
        query(
            &c,
            "SELECT (SELECT count(*) FROM first), (SELECT count(*) FROM erased),
                    (SELECT count(*) FROM erased WHERE source_role = 'secondary'),
                    (SELECT count(*) FROM first WHERE source_role = 'secondary'),
                    (SELECT count(*) FROM history),
                    (SELECT count(*) FROM (SELECT * FROM first EXCEPT ALL SELECT * FROM history)),
                    (SELECT count(*) FROM (SELECT * FROM history EXCEPT ALL SELECT * FROM first))"
        )?,
        strs(&[&["119", "118", "19", "20", "119", "0", "0"]])
    );
    Ok(())
}

/// A session file of home-a nanobot reads as a secondary copy (6 rows).
const TELEGRAM: &str =
    ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/dGVsZWdyYW06NDgyMTMzNzc.jsonl";

#[test]
fn a_sync_reads_only_the_stores_whose_files_changed() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    sync(home.path(), &ledger)?;
    let stores: usize =
        ledger_rows(&ledger, "SELECT count(*) FROM ledger_sources")?[0][0].parse()?;
    let keyed: usize = ledger_rows(
        &ledger,
        "SELECT count(*) FROM ledger_sources WHERE state_key IS NOT NULL",
    )?[0][0]
        .parse()?;
    // every store of home-a is nanobot's and read to its end but the two
    // with a torn line or record, which are read again every time
    assert_eq!(keyed, stores - 2);
    let line = |o: &Output| {
        stderr(o)
            .lines()
            .find(|l| l.starts_with("nanoload: stores: "))
            .map(String::from)
    };
    // nothing changed: only the stores with unread input are read again;
    // their diagnostics are said again, as a load says them
    let again = sync(home.path(), &ledger)?;
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        line(&again),
        Some(format!(
            "nanoload: stores: 2 read, {keyed} unchanged since the ledger read them"
        ))
    );
    assert_eq!(
        stderr(&again).lines().take(2).collect::<Vec<_>>(),
        HOME_A_BAD
    );
    // one session gains a turn: that store alone is read, one row added
    let path = home.path().join(TELEGRAM);
    let mut text = std::fs::read_to_string(&path)?;
    text.push_str(
        r#"{"role": "user", "content": "and on 8081?", "timestamp": "2026-09-29T21:15:00.000000"}"#,
    );
    text.push('\n');
    std::fs::write(&path, text)?;
    let third = sync(home.path(), &ledger)?;
    assert_eq!(
        line(&third),
        Some(format!(
            "nanoload: stores: 3 read, {} unchanged since the ledger read them",
            keyed - 1
        ))
    );
    let total = ledger_rows(&ledger, "SELECT count(*) FROM ledger_events")?[0][0].clone();
    assert_eq!(
        rows_line(&third),
        Some(format!(
            "nanoload: rows: 1 added, 0 changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    assert_eq!(
        ledger_rows(
            &ledger,
            &format!(
                "SELECT text, first_seen_load, last_seen_load FROM ledger_events
                 WHERE source_path = '{TELEGRAM}' AND first_seen_load = 3"
            )
        )?,
        strs(&[&["and on 8081?", "3", "3"]])
    );
    // every row still on disk was seen by this sync, read or not
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*) FROM ledger_events WHERE last_seen_load <> 3"
        )?,
        strs(&[&["0"]])
    );
    // and the export of the history is the load's bytes
    let (load, snapshot) =
        load_and_export(home.path(), &ledger, work.path(), "grown", &["--snapshot"])?;
    assert!(load == snapshot, "the snapshot differs from the load");
    Ok(())
}

/// nanobot-ai 0.3.5 deletes from a home its own code wrote
/// (`tests/realwriter/forget.py`: `/new` of a chat, a WebUI chat deleted
/// as the WebUI deletes one, the usage store pruned by its own 400-day
/// retention with the clock moved): the ledger keeps every row and call
/// once, the deleted ones not present, and the history export is the
/// first load's rows, calls (with their attribution) and sessions.
#[test]
fn nanobots_own_deletions_leave_the_ledger_whole() -> TestResult {
    let (Ok(case), Ok(python)) = (
        std::env::var("NANOLOAD_REALWRITER_GENERATED"),
        std::env::var("NANOLOAD_REALWRITER_PYTHON"),
    ) else {
        assert_ne!(
            std::env::var("CI").as_deref(),
            Ok("true"),
            "CI=true but NANOLOAD_REALWRITER_GENERATED or NANOLOAD_REALWRITER_PYTHON is not set: scripts/check.sh sets both"
        );
        eprintln!("no generated home or harness python: nanobot's own deletions not tried");
        return Ok(());
    };
    let case = Path::new(&case);
    let facts: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(case.join("facts.json"))?)?;
    let archive = facts["archive"].as_str().ok_or("facts.json: no archive")?;
    let work = tempfile::tempdir()?;
    let home = work.path().join("home");
    std::fs::create_dir(&home)?;
    let st = Process::new("tar")
        .arg("-xzf")
        .arg(case.join(archive))
        .arg("-C")
        .arg(&home)
        .status()?;
    assert!(st.success());
    let ledger = work.path().join("history.duckdb");
    assert!(sync(&home, &ledger)?.status.code().is_some_and(|c| c <= 1));
    let first = Process::cargo_bin("nanoload")?
        .arg(&home)
        .arg(work.path().join("first.parquet"))
        .arg("--tables")
        .arg(work.path().join("first"))
        .output()?;
    assert!(
        first.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&first)
    );
    // nanobot's own code deletes
    let forget = Process::new(&python)
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/realwriter/forget.py"))
        .arg(&home)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("TZ", "UTC")
        .output()?;
    assert!(forget.status.success(), "{}", stderr(&forget));
    let did: serde_json::Value = serde_json::from_slice(&forget.stdout)?;
    for step in ["chat_deleted", "webui_deleted", "webui_transcript_deleted"] {
        assert_eq!(did[step], true, "{did}");
    }
    let chat = did["chat"].as_str().ok_or("no chat")?.to_string();
    let webui = did["webui"].as_str().ok_or("no webui")?.to_string();
    let (before, after) = (
        did["calls_before"].as_u64().ok_or("calls_before")?,
        did["calls_after"].as_u64().ok_or("calls_after")?,
    );
    assert!(0 < after && after < before, "{did}");
    let again = sync(&home, &ledger)?;
    assert!(
        again.status.code().is_some_and(|c| c <= 1),
        "{}",
        stderr(&again)
    );
    // the pruned calls stay, gone; the call recorded after the prune is added
    let calls_line = stderr(&again)
        .lines()
        .find(|l| l.starts_with("nanoload: nanobot usage records "))
        .map(String::from);
    assert_eq!(
        calls_line,
        Some(format!(
            "nanoload: nanobot usage records (llm_usage.sqlite3): 1 added, 0 changed, {} gone; {} in the ledger, {after} on disk",
            before + 1 - after,
            before + 1
        ))
    );
    // nothing twice
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT (SELECT count(*) - count(DISTINCT row_key) FROM ledger_events),
                    (SELECT count(*) - count(DISTINCT row_key) FROM ledger_llm_calls)"
        )?,
        strs(&[&["0", "0"]])
    );
    // the history is the first load's rows, calls and sessions
    let x = export(&[
        ledger.as_os_str(),
        work.path().join("history.parquet").as_os_str(),
        "--tables".as_ref(),
        work.path().join("history").as_os_str(),
    ])?;
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    let c = duckdb::Connection::open_in_memory()?;
    let p = |name: &str| work.path().join(name).display().to_string();
    c.execute_batch(&format!(
        "CREATE VIEW first AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW history AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW first_calls AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW history_calls AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW first_sessions AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW history_sessions AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');",
        p("first.parquet"),
        p("history.parquet"),
        p("first/llm_calls.parquet"),
        p("history/llm_calls.parquet"),
        p("first/sessions.parquet"),
        p("history/sessions.parquet"),
    ))?;
    let seen = "* EXCLUDE (first_seen_load, last_seen_load, present)";
    assert_eq!(
        query(
            &c,
            &format!(
                "SELECT (SELECT count(*) FROM (SELECT * FROM first EXCEPT ALL SELECT {seen} FROM history)),
                        (SELECT count(*) FROM (SELECT {seen} FROM history EXCEPT ALL SELECT * FROM first)),
                        (SELECT count(*) FROM (SELECT * FROM first_calls EXCEPT ALL SELECT * FROM history_calls)),
                        (SELECT count(*) FROM history_calls),
                        (SELECT count(*) FROM (SELECT * FROM first_sessions EXCEPT ALL SELECT * FROM history_sessions)),
                        (SELECT count(*) FROM (SELECT * FROM history_sessions EXCEPT ALL SELECT * FROM first_sessions))"
            )
        )?,
        strs(&[&["0", "0", "0", &(before + 1).to_string(), "0", "0"]])
    );
    // the deleted chats' own rows (their session file, the WebUI's
    // transcript): all there, none present (what other stores still hold of
    // them, the memory history and the WebUI's sidebar index, stays present)
    for key in [&chat, &webui] {
        let r = query(
            &c,
            &format!(
                "SELECT count(*), count(*) FILTER (WHERE present) FROM history WHERE session_id = '{key}'
                 AND source_kind IN ('nanobot.session_jsonl', 'nanobot.webui_transcript')"
            ),
        )?;
        assert_ne!(r[0][0], "0", "{key}");
        assert_eq!(r[0][1], "0", "{key}");
    }
    Ok(())
}

#[test]
fn prune_removes_only_what_is_gone_and_was_last_seen_before_the_date() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    sync(home.path(), &ledger)?;
    std::fs::remove_file(home.path().join(CHAT))?;
    sync(home.path(), &ledger)?;
    let counts = "SELECT count(*), count(*) FILTER (WHERE present) FROM ledger_events";
    let before = ledger_rows(&ledger, counts)?;
    let (rows, present): (u64, u64) = (before[0][0].parse()?, before[0][1].parse()?);
    let prune = |date: &str| -> Result<Output, Box<dyn std::error::Error>> {
        Ok(Process::cargo_bin("nanoload")?
            .arg("prune")
            .arg(&ledger)
            .args(["--before", date])
            .output()?)
    };
    let said = |o: &Output, rows: u64, stores: u64, date: &str| {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        assert_eq!(
            stderr(o),
            format!(
                "nanoload: pruned {}: {rows} rows, 0 usage records, {stores} stores gone from disk and last seen before {date}\n",
                ledger.display()
            )
        );
    };
    // before every sync: nothing goes
    said(&prune("2000-01-01")?, 0, 0, "2000-01-01");
    assert_eq!(ledger_rows(&ledger, counts)?, before);
    // after them: the deleted chat's rows and its store, nothing present
    said(&prune("2999-01-01")?, rows - present, 1, "2999-01-01");
    assert_eq!(
        ledger_rows(&ledger, counts)?,
        strs(&[&[&present.to_string(), &present.to_string()]])
    );
    assert_eq!(
        ledger_rows(&ledger, "SELECT count(*) FROM loads")?,
        strs(&[&["2"]])
    );
    // not a date: nothing done
    let bad = prune("last week")?;
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(
        stderr(&bad),
        format!(
            "nanoload: error: {}: --before \"last week\": not a date (YYYY-MM-DD) or an instant\n",
            ledger.display()
        )
    );
    Ok(())
}

/// `nanoload export --dataset DIR --host NAME` writes the history as that
/// host's partition of a fleet dataset: the rows OUT holds, the ledger's
/// columns included, and every side table.
#[test]
fn an_export_writes_a_fleet_dataset_partition() -> TestResult {
    let home = fixture("nanobot/home-a");
    let dir = tempfile::tempdir()?;
    let ledger = dir.path().join("history.duckdb");
    let o = sync(&home, &ledger)?;
    assert!(matches!(o.status.code(), Some(0 | 1)));
    let out = dir.path().join("h.parquet");
    let fleet = dir.path().join("fleet");
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("export")
        .arg(&ledger)
        .arg(&out)
        .arg("--dataset")
        .arg(&fleet)
        .args(["--host", "alpha"])
        .output()?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let c = duckdb::Connection::open_in_memory()?;
    let part = |t: &str| fleet.join(t).join("host=alpha").join("part-0.parquet");
    for t in [
        "events",
        "sessions",
        "llm_calls",
        "tz_offsets",
        "diagnostics",
        "sources",
    ] {
        assert!(part(t).is_file(), "{}", part(t).display());
    }
    let q = |from: &Path| {
        format!(
            "SELECT count(*), count(*) FILTER (WHERE present), count(DISTINCT session_uid)
             FROM read_parquet('{}')",
            from.display()
        )
    };
    assert_eq!(
        crate::common::query(&c, &q(&part("events")))?,
        crate::common::query(&c, &q(&out))?
    );
    // a host name that is not one is refused before anything is done
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg("export")
        .arg(&ledger)
        .arg(dir.path().join("x.parquet"))
        .arg("--dataset")
        .arg(&fleet)
        .args(["--host", "../up"])
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("x.parquet").exists());
    Ok(())
}

/// A message the agent rewrote in place (same line, same role and
/// timestamp, new text) is two rows — the old one gone, the new present —
/// and `ledger_versions` links them; an unchanged sync links nothing.
#[test]
fn a_record_rewritten_in_place_is_linked_to_its_earlier_version() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let dir = tempfile::tempdir()?;
    let ledger = dir.path().join("history.duckdb");
    assert!(matches!(
        sync(home.path(), &ledger)?.status.code(),
        Some(0 | 1)
    ));
    let file = home
        .path()
        .join(".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2/Y2xpOmRpcmVjdA.jsonl");
    let text = std::fs::read_to_string(&file)?;
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let k = lines
        .iter()
        .position(|l| l.contains("\"role\": \"user\""))
        .ok_or("no user line")?;
    let old: serde_json::Value = serde_json::from_str(&lines[k])?;
    let old_text = old["content"].as_str().ok_or("content")?.to_string();
    lines[k] = lines[k].replacen("\"content\": \"", "\"content\": \"(edited) ", 1);
    std::fs::write(&file, lines.join("\n") + "\n")?;
    assert!(matches!(
        sync(home.path(), &ledger)?.status.code(),
        Some(0 | 1)
    ));
    assert!(matches!(
        sync(home.path(), &ledger)?.status.code(),
        Some(0 | 1)
    ));
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "ATTACH '{}' AS l (READ_ONLY); USE l;",
        ledger.display()
    ))?;
    let rows = query(
        &c,
        "SELECT v.turn_type, v.old_text, v.new_text, v.old_last_seen_load, v.new_first_seen_load,
                o.present, n.present
         FROM ledger_versions v
         JOIN ledger_events o ON o.row_key = v.old_row_key
         JOIN ledger_events n ON n.row_key = v.new_row_key",
    )?;
    assert_eq!(
        rows,
        strs(&[&[
            "user",
            old_text.as_str(),
            format!("(edited) {old_text}").as_str(),
            "1",
            "2",
            "false",
            "true"
        ]])
    );
    Ok(())
}

/// The compressions of the persisted string segments of `ledger_events`'
/// text and native, with how many segments each.
fn text_compressions(ledger: &Path) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    ledger_rows(
        ledger,
        "SELECT compression, count(*) FROM pragma_storage_info('ledger_events')
         WHERE column_name IN ('text', 'native') AND segment_type = 'VARCHAR'
         GROUP BY ALL ORDER BY ALL",
    )
}

/// A new ledger is in storage version v1.2.0 with its texts zstd-compressed
/// (left to DuckDB they were stored uncompressed: the ledger was 3.6 × the
/// same rows as zstd Parquet); a ledger an earlier nanoload created in
/// v1.0.0, which has no zstd for strings, keeps its version and is synced
/// and pruned as before.
#[test]
fn a_new_ledger_compresses_its_texts_and_an_older_one_keeps_its_version() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let version = |ledger: &Path| {
        ledger_rows(
            ledger,
            "SELECT tags['storage_version'] FROM duckdb_databases() WHERE database_name = 'l'",
        )
    };

    let new = work.path().join("new.duckdb");
    sync(home.path(), &new)?;
    assert_eq!(version(&new)?, strs(&[&["v1.2.0+"]]));
    let compressions = text_compressions(&new)?;
    assert!(
        !compressions.is_empty() && compressions.iter().all(|r| r[0] == "ZSTD"),
        "{compressions:?}"
    );

    // an older nanoload's ledger: the same tables, in a v1.0.0 file
    let old = work.path().join("old.duckdb");
    {
        let c = duckdb::Connection::open_in_memory()?;
        c.execute_batch(&format!(
            "ATTACH '{}' AS o (STORAGE_VERSION 'v1.0.0');",
            old.display()
        ))?;
    }
    let o = sync(home.path(), &old)?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(version(&old)?, strs(&[&["v1.0.0+"]]));
    let compressions = text_compressions(&old)?;
    assert!(
        !compressions.is_empty() && compressions.iter().all(|r| r[0] != "ZSTD"),
        "{compressions:?}"
    );
    // the same rows in both
    let rows = "SELECT count(*), sum(length(text)), sum(length(native)) FROM ledger_events";
    assert_eq!(ledger_rows(&new, rows)?, ledger_rows(&old, rows)?);
    Ok(())
}

/// A ledger written by an earlier build (`fixtures/ledger/sha256-keys`,
/// PROVENANCE.md: nanoload 797fed2 synced a copy of home-a) synced again
/// by this one with the same home: every store is read again (another
/// build) and every row is the same row — none added, none changed, none
/// gone: a sync stages the dedup keys (part of each row's identity) as
/// earlier builds did, whatever digest a load takes.
#[test]
fn a_ledger_of_an_earlier_build_sees_its_rows_again() -> TestResult {
    // the mtimes the ledger's sync saw (config.json's rows take its mtime)
    let home = crate::fixture_homes::materialize("nanobot/home-a")?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("ledger.duckdb");
    std::fs::copy(fixture("ledger/sha256-keys/ledger.duckdb"), &ledger)?;
    let o = sync(home.path(), &ledger)?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let lines: Vec<String> = stderr(&o).lines().map(String::from).collect();
    assert_eq!(lines[..2], HOME_A_BAD);
    assert_eq!(
        lines[3..],
        [
            "nanoload: stores: 19 read, 0 unchanged since the ledger read them",
            "nanoload: rows: 0 added, 0 changed, 0 gone; 163 in the ledger, 163 on disk",
            "nanoload: nanobot usage records (llm_usage.sqlite3): 0 added, 0 changed, 0 gone; 32 in the ledger, 32 on disk",
        ]
    );
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*), count(*) FILTER (WHERE x_match LIKE 'sha256:%'), count(*) FILTER (WHERE x_match LIKE 'h:%')
             FROM ledger_events WHERE present AND last_seen_load = 2"
        )?,
        strs(&[&["163", "14", "0"]])
    );
    Ok(())
}

/// An export that runs out of memory goes on at twice the limit, as a load
/// does (`run::with_memory_retries`): a warning per retry, the rows placed
/// again, the same outputs as an export that did not run out.
#[test]
fn an_export_that_runs_out_of_memory_goes_on_at_twice_the_limit() -> TestResult {
    let work = tempfile::tempdir()?;
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let ledger = work.path().join("history.duckdb");
    sync(home.path(), &ledger)?;
    let mut outputs = Vec::new();
    for (name, limit) in [("as-is", None), ("at-16-mib", Some(16u64 << 20))] {
        let (out, tables) = (
            work.path().join(format!("{name}.parquet")),
            work.path().join(name),
        );
        let env: Vec<_> = limit
            .map(|l| ("NANOLOAD_TEST_MEMORY_LIMIT", l.to_string()))
            .into_iter()
            .collect();
        let args = [
            ledger.as_os_str(),
            out.as_os_str(),
            "--tables".as_ref(),
            tables.as_os_str(),
        ];
        let o = export_with(&args, &env)?;
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let retries = stderr(&o)
            .lines()
            .filter(|l| {
                l.starts_with("nanoload: warning: ")
                    && l.contains(": Out of Memory Error: ")
                    && l.contains("; the SQL steps run again with a memory limit of ")
            })
            .count();
        let expected = if limit.is_some() { 1..=2 } else { 0..=0 };
        assert!(expected.contains(&retries), "{name}: {}", stderr(&o));
        outputs.push(output_bytes(&out, &tables)?);
    }
    assert_eq!(outputs[0].len(), 6);
    assert!(
        outputs[0] == outputs[1],
        "the export that ran out of memory differs"
    );
    Ok(())
}
