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
            "nanoload: error: {}: a ledger of another format (format 0, created by nanoload {}) than this nanoload {} reads (format 3, its columns); nothing done\n",
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
fn sync_export_and_prune_help_explain_every_flag() -> TestResult {
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
    let o = Process::cargo_bin("nanoload")?
        .args(["prune", "--help"])
        .env("COLUMNS", "100")
        .output()?;
    assert_eq!(o.status.code(), Some(0));
    insta::assert_snapshot!("prune_help", String::from_utf8_lossy(&o.stdout));
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
    // the column order: today's contract (its last column tool_error), then
    // the ledger's three
    let names = query(&c, "SELECT column_name FROM (DESCRIBE history)")?;
    let tail: Vec<&str> = names[names.len() - 5..]
        .iter()
        .map(|r| r[0].as_str())
        .collect();
    assert_eq!(
        tail,
        [
            "session_uid",
            "tool_error",
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

/// The session database of home-a (nanoclaw) that a test adds a message to.
const NC_INBOUND: &str =
    "data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io/inbound.db";

/// nanoclaw's stores read only their own files, so a sync passes over the
/// ones whose files are as the ledger read them, as it does nanobot's: an
/// unchanged install's second sync reads none of its stores and changes no
/// row; a session database that gained a message is the one store the
/// third reads; and the snapshot is still the load's bytes.
#[test]
fn a_sync_reads_no_nanoclaw_store_whose_files_are_unchanged() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let first = sync(home.path(), &ledger)?;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let count = |sql: &str| -> Result<usize, Box<dyn std::error::Error>> {
        Ok(ledger_rows(&ledger, sql)?[0][0].parse()?)
    };
    let stores = count("SELECT count(*) FROM ledger_sources")?;
    assert_eq!(stores, 9);
    assert_eq!(
        count("SELECT count(*) FROM ledger_sources WHERE state_key IS NOT NULL")?,
        stores
    );
    let line = |o: &Output| {
        stderr(o)
            .lines()
            .find(|l| l.starts_with("nanoload: stores: "))
            .map(String::from)
    };
    let rows = "SELECT row_key, present, first_seen_load, gone_load, text, native
                FROM ledger_events ORDER BY row_key";
    let before = ledger_rows(&ledger, rows)?;
    let total = before.len();
    let again = sync(home.path(), &ledger)?;
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        line(&again),
        Some(format!(
            "nanoload: stores: 0 read, {stores} unchanged since the ledger read them"
        ))
    );
    assert_eq!(
        rows_line(&again),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    assert_eq!(ledger_rows(&ledger, rows)?, before);
    assert_eq!(
        count("SELECT count(*) FROM ledger_events WHERE last_seen_load <> 2")?,
        0
    );
    // one session gains a message: its inbound.db alone is read
    let db = rusqlite::Connection::open(home.path().join(NC_INBOUND))?;
    db.execute_batch(
        "CREATE TEMP TABLE m AS SELECT * FROM messages_in ORDER BY seq DESC LIMIT 1;
         UPDATE m SET id = 'm-appended', seq = seq + 2,
                      content = json_object('text', 'one more question, appended');
         INSERT INTO messages_in SELECT * FROM m;",
    )?;
    drop(db);
    let third = sync(home.path(), &ledger)?;
    assert_eq!(
        line(&third),
        Some(format!(
            "nanoload: stores: 1 read, {} unchanged since the ledger read them",
            stores - 1
        ))
    );
    assert_eq!(
        rows_line(&third),
        Some(format!(
            "nanoload: rows: 1 added, 0 changed, 0 gone; {0} in the ledger, {0} on disk",
            total + 1
        ))
    );
    let (load, snapshot) =
        load_and_export(home.path(), &ledger, work.path(), "grown", &["--snapshot"])?;
    assert!(load == snapshot, "the snapshot differs from the load");
    Ok(())
}

/// The changes of `common::NANOCLAW_CHANGES` to a home of four nanoclaw
/// installs, in the order seed 7 draws, each followed by a sync: the sync
/// reads only the stores the change added or changed, and the ledger's
/// snapshot is the bytes of a load of the home as it is now — what the
/// stores tell of each other (a sibling database or a transcript that
/// appears, a store deleted, another version) derived again by the
/// export's steps from what the ledger holds.
#[test]
fn a_ledger_of_a_changing_nanoclaw_home_exports_a_loads_bytes_after_each_sync() -> TestResult {
    let home = four_installs()?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let first = sync(home.path(), &ledger)?;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let line = |o: &Output| {
        stderr(o)
            .lines()
            .find(|l| l.starts_with("nanoload: stores: "))
            .map(String::from)
    };
    for (i, c) in nanoclaw_changes_in_order(7).into_iter().enumerate() {
        (c.apply)(home.path())?;
        let o = sync(home.path(), &ledger)?;
        assert_eq!(o.status.code(), Some(0), "{}: {}", c.what, stderr(&o));
        let stores: u64 =
            ledger_rows(&ledger, "SELECT count(*) FROM ledger_sources WHERE present")?[0][0]
                .parse()?;
        assert_eq!(
            line(&o),
            Some(format!(
                "nanoload: stores: {} read, {} unchanged since the ledger read them",
                c.extracted,
                stores - c.extracted
            )),
            "{}",
            c.what
        );
        let (load, snapshot) = load_and_export(
            home.path(),
            &ledger,
            work.path(),
            &format!("change-{i}"),
            &["--snapshot"],
        )?;
        assert!(
            load == snapshot,
            "{}: the snapshot differs from the load",
            c.what
        );
    }
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

/// The fixture ledger's syncs read a copy of home-a at /tmp/lf/home: the
/// copy of it at `home` is that HOME (a ledger keeps the HOME its syncs
/// read, `loads.home`, where an earlier build recorded no other).
fn same_home(ledger: &Path, home: &Path) -> TestResult {
    let c = duckdb::Connection::open(ledger)?;
    c.execute(
        "UPDATE loads SET home = ?",
        [home.canonicalize()?.to_string_lossy()],
    )?;
    c.execute_batch("CHECKPOINT;")?;
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
    same_home(&ledger, home.path())?;
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
/// does (`pipeline::engine`): a warning per retry, the rows placed
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

/// A sync whose merge runs out of memory is rolled back and runs again at
/// twice the limit, then at four times it, as a load's steps do: one
/// warning per retry, and the ledger holds what a sync that did not run
/// out holds; out of memory at four times the limit, one error line, exit
/// 2, and no ledger left behind.
#[test]
fn a_sync_that_runs_out_of_memory_goes_on_at_twice_the_limit() -> TestResult {
    let work = tempfile::tempdir()?;
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let run = |ledger: &Path, limit: Option<u64>| -> Result<Output, Box<dyn std::error::Error>> {
        let mut cmd = assert_cmd::Command::cargo_bin("nanoload")?;
        cmd.arg("sync").arg(home.path()).arg(ledger);
        if let Some(l) = limit {
            cmd.env("NANOLOAD_TEST_MEMORY_LIMIT", l.to_string());
        }
        Ok(cmd.output()?)
    };
    let retry = |l: &str| {
        l.starts_with("nanoload: warning: merging into the ledger: Out of Memory Error: ")
            && l.contains("; the merge runs again with a memory limit of ")
    };
    let (plain, short) = (
        work.path().join("plain.duckdb"),
        work.path().join("short.duckdb"),
    );
    let as_is = run(&plain, None)?;
    let retried = run(&short, Some(8 << 20))?;
    assert_eq!(
        retried.status.code(),
        as_is.status.code(),
        "{}",
        stderr(&retried)
    );
    let warned: Vec<String> = stderr(&retried)
        .lines()
        .filter(|l| retry(l))
        .map(String::from)
        .collect();
    assert!((1..=2).contains(&warned.len()), "{}", stderr(&retried));
    assert!(warned[0].ends_with("(was 8.00 MiB)"), "{}", warned[0]);
    // besides the warnings, stderr is a plain sync's
    let rest: Vec<String> = stderr(&retried)
        .lines()
        .filter(|l| !retry(l))
        .map(|l| l.replace(&short.display().to_string(), &plain.display().to_string()))
        .collect();
    let plain_lines: Vec<String> = stderr(&as_is).lines().map(String::from).collect();
    assert_eq!(rest, plain_lines);
    let rows = "SELECT count(*), count(DISTINCT row_key), sum(length(text)) FROM ledger_events";
    assert_eq!(ledger_rows(&short, rows)?, ledger_rows(&plain, rows)?);
    let calls = "SELECT count(*) FROM ledger_llm_calls";
    assert_eq!(ledger_rows(&short, calls)?, ledger_rows(&plain, calls)?);
    // at 1 MiB, 2 and 4 MiB fail too
    let none = work.path().join("none.duckdb");
    let failed = run(&none, Some(1 << 20))?;
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    let lines: Vec<String> = stderr(&failed).lines().map(String::from).collect();
    assert_eq!(lines.iter().filter(|l| retry(l)).count(), 2, "{lines:?}");
    let last = lines.last().cloned().unwrap_or_default();
    assert!(
        last.starts_with(&format!(
            "nanoload: error: {}: merging into the ledger: Out of Memory Error: ",
            none.display()
        )) && last.ends_with(
            "(the merge ran out of memory at 4.00 MiB, four times the limit; give a larger --memory-limit)"
        ),
        "{last}"
    );
    assert!(!none.exists(), "a failed first sync left a ledger");
    Ok(())
}

// ---------------------------------------------------------------------------
// What cannot be seen is not what the agent deleted.

/// The session namespace of home-a's `.nanobot` (its database, four JSONL
/// copies, the WebUI's sidebar index).
const NAMESPACE: &str = ".nanobot/sessions/369bf68ff29871421ea330b74e10a9c2";

/// Whether this process runs as root (CI does): a permission a test takes
/// away does not stop root, whose DAC capabilities bypass it.
fn is_root() -> Result<bool, Box<dyn std::error::Error>> {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new()?;
    Ok(probe.as_file().metadata()?.uid() == 0)
}

/// `nanoload ARGS` as a user whom file permissions stop: as root, with the
/// capabilities that bypass them (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH)
/// dropped by `setpriv` (util-linux, on every Debian system); as anyone
/// else, as it is.
fn unprivileged(args: &[&std::ffi::OsStr]) -> Result<Output, Box<dyn std::error::Error>> {
    let bin = assert_cmd::cargo::cargo_bin("nanoload");
    let mut cmd = if is_root()? {
        let mut c = Process::new("setpriv");
        c.args([
            "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
        ])
        .arg(&bin);
        c
    } else {
        Process::new(&bin)
    };
    let o = cmd.args(args).arg("--progress=never").output()?;
    if String::from_utf8_lossy(&o.stderr).starts_with("setpriv:") {
        return Err(format!(
            "cannot drop root's DAC capabilities: {}",
            String::from_utf8_lossy(&o.stderr)
        )
        .into());
    }
    Ok(o)
}

/// A path whose permissions a test took away, given back when dropped (so
/// a later sync, and the temp dir's removal, can read it).
struct Unreadable(PathBuf, u32);

impl Unreadable {
    fn make(path: &Path) -> Result<Unreadable, Box<dyn std::error::Error>> {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o000))?;
        Ok(Unreadable(path.to_path_buf(), mode))
    }
}

impl Drop for Unreadable {
    fn drop(&mut self) {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(self.1));
    }
}

fn prune_cmd(ledger: &Path, extra: &[&str]) -> Result<Output, Box<dyn std::error::Error>> {
    Ok(Process::cargo_bin("nanoload")?
        .arg("prune")
        .arg(ledger)
        .args(["--before", "2999-01-01"])
        .args(extra)
        .output()?)
}

/// The ledger's rows and usage records whose file is `prefix` or below it,
/// and how many of them are present.
fn under(ledger: &Path, prefix: &str) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    // "" is HOME: everything
    let cond = if prefix.is_empty() {
        "true".to_string()
    } else {
        format!("(source_path = '{prefix}' OR source_path LIKE '{prefix}/%')")
    };
    ledger_rows(
        ledger,
        &format!(
            "SELECT (SELECT count(*) FROM ledger_events WHERE {cond}),
                    (SELECT count(*) FILTER (WHERE present) FROM ledger_events WHERE {cond}),
                    (SELECT count(*) FROM ledger_llm_calls WHERE {cond}),
                    (SELECT count(*) FILTER (WHERE present) FROM ledger_llm_calls WHERE {cond})"
        ),
    )
}

/// The events a load of home-a without the deleted chat writes, against
/// those of an export `--snapshot` of `ledger`: each side's rows the other
/// lacks (load_id aside), and each side's rows below `prefix`.
fn snapshot_against_a_load(
    ledger: &Path,
    work: &Path,
    prefix: &str,
) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    std::fs::remove_file(home.path().join(CHAT))?;
    let load = work.join("reference.parquet");
    let o = Process::cargo_bin("nanoload")?
        .arg(home.path())
        .arg(&load)
        .output()?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let snapshot = work.join("snapshot.parquet");
    let x = export(&[
        ledger.as_os_str(),
        snapshot.as_os_str(),
        "--snapshot".as_ref(),
    ])?;
    assert_eq!(x.status.code(), Some(0), "{}", stderr(&x));
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "CREATE VIEW l AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');
         CREATE VIEW s AS SELECT * EXCLUDE (load_id) FROM read_parquet('{}');",
        load.display(),
        snapshot.display()
    ))?;
    let below = format!("source_path = '{prefix}' OR source_path LIKE '{prefix}/%'");
    Ok(query(
        &c,
        &format!(
            "SELECT (SELECT count(*) FROM (SELECT * FROM l EXCEPT ALL SELECT * FROM s)),
                    (SELECT count(*) FROM (SELECT * FROM s EXCEPT ALL SELECT * FROM l)),
                    (SELECT count(*) FROM l WHERE {below}),
                    (SELECT count(*) FROM s WHERE {below})"
        ),
    )?)
}

/// What a sync that could not see `prefix` must leave: the first sync saw
/// home-a whole; the chat deleted since (a real deletion) is gone, and
/// every row below `prefix` stays present, as it was. `export --snapshot`
/// still has them (its events are a load's of home-a without the chat);
/// `prune` refuses to remove what that sync marked gone until `--force`,
/// which removes the chat's rows only.
fn a_sync_that_could_not_see(
    ledger: &Path,
    work: &Path,
    synced: &Output,
    prefix: &str,
    line: &str,
) -> TestResult {
    assert_eq!(synced.status.code(), Some(1), "{}", stderr(synced));
    let said = stderr(synced);
    assert!(
        said.lines().any(|l| l == line),
        "no line {line:?} in:\n{said}"
    );
    let chat = ledger_rows(
        ledger,
        &format!("SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}'"),
    )?[0][0]
        .parse::<u64>()?;
    let total = ledger_rows(ledger, "SELECT count(*) FROM ledger_events")?[0][0].parse::<u64>()?;
    assert_eq!(
        rows_line(synced),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, {chat} gone; {total} in the ledger, {} on disk",
            total - chat
        ))
    );
    // every row below the place not seen: present, as the first sync saw it
    let kept = under(ledger, prefix)?;
    assert_ne!(kept[0][0], "0", "nothing below {prefix}");
    assert_eq!((&kept[0][0], &kept[0][2]), (&kept[0][1], &kept[0][3]));
    let cond = format!("(source_path = '{prefix}' OR source_path LIKE '{prefix}/%')");
    assert_eq!(
        ledger_rows(
            ledger,
            &format!(
                "SELECT DISTINCT present, first_seen_load, last_seen_load FROM ledger_events WHERE {cond}"
            )
        )?,
        strs(&[&["true", "1", "1"]])
    );
    // the snapshot: a load's events of home-a without the chat, the rows
    // below the place not seen among them
    let snap = snapshot_against_a_load(ledger, work, prefix)?;
    assert_eq!((snap[0][0].as_str(), snap[0][1].as_str()), ("0", "0"));
    assert_ne!(snap[0][3], "0");
    assert_eq!(snap[0][2], snap[0][3]);
    // prune: refused, then forced
    let refused = prune_cmd(ledger, &[])?;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(
        stderr(&refused),
        format!(
            "nanoload: error: {}: not pruned: {chat} rows, 0 usage records and 1 stores it would remove were marked gone by a sync that could not read all of HOME (sync 2); give --force to remove them anyway; nothing done\n",
            ledger.display()
        )
    );
    assert_eq!(
        ledger_rows(ledger, "SELECT count(*) FROM ledger_events")?[0][0],
        total.to_string()
    );
    let forced = prune_cmd(ledger, &["--force"])?;
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(
        stderr(&forced),
        format!(
            "nanoload: pruned {}: {chat} rows, 0 usage records, 1 stores gone from disk and last seen before 2999-01-01\n",
            ledger.display()
        )
    );
    assert_eq!(under(ledger, prefix)?, kept);
    assert_eq!(
        ledger_rows(
            ledger,
            "SELECT count(*), count(*) FILTER (WHERE present) FROM ledger_events"
        )?,
        strs(&[&[&(total - chat).to_string(), &(total - chat).to_string()]])
    );
    Ok(())
}

/// The first sync of a copy of home-a (`extra`: its flags), then the chat
/// deleted: a real deletion beside what a test then makes unreadable.
fn synced_home_a(
    extra: &[&str],
    setup: impl FnOnce(&Path) -> TestResult,
) -> Result<(tempfile::TempDir, tempfile::TempDir, PathBuf), Box<dyn std::error::Error>> {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    setup(home.path())?;
    let ledger = work.path().join("history.duckdb");
    let first = sync_cmd(home.path(), &ledger)?.args(extra).output()?;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    std::fs::remove_file(home.path().join(CHAT))?;
    Ok((home, work, ledger))
}

/// `nanoload sync HOME LEDGER [extra]` as a user whom permissions stop.
fn sync_unprivileged(
    home: &Path,
    ledger: &Path,
    extra: &[&str],
) -> Result<Output, Box<dyn std::error::Error>> {
    let mut args = vec!["sync".as_ref(), home.as_os_str(), ledger.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    unprivileged(&args)
}

#[test]
fn an_unreadable_sessions_directory_keeps_its_rows() -> TestResult {
    let (home, work, ledger) = synced_home_a(&[], |_| Ok(()))?;
    let dir = home.path().join(NAMESPACE);
    let locked = Unreadable::make(&dir)?;
    let o = sync_unprivileged(home.path(), &ledger, &[])?;
    drop(locked);
    let (rows, _) = kept_counts(&ledger, NAMESPACE)?;
    let stores = stderr(&o)
        .lines()
        .find(|l| l.starts_with("nanoload: stores: "))
        .map(String::from);
    assert_eq!(
        stores.as_deref(),
        Some(
            "nanoload: stores: 1 read, 8 unchanged since the ledger read them, 3 held back (they read a file that could not be read)"
        )
    );
    a_sync_that_could_not_see(
        &ledger,
        work.path(),
        &o,
        NAMESPACE,
        // the workspace's memory journal, cron run and trigger run take
        // their project from the namespace's `.workspace`: not read
        &format!(
            "nanoload: unreadable: {NAMESPACE}: Permission denied (os error 13); the ledger keeps its {rows} rows there as they were, none marked gone; 3 stores that read a file there are not read this time (their rows stay as they were)"
        ),
    )
}

#[test]
fn an_unreadable_instance_keeps_its_rows() -> TestResult {
    let (home, work, ledger) = synced_home_a(&[], |_| Ok(()))?;
    let locked = Unreadable::make(&home.path().join(".nanobot"))?;
    let o = sync_unprivileged(home.path(), &ledger, &[])?;
    drop(locked);
    let (rows, calls) = kept_counts(&ledger, ".nanobot")?;
    a_sync_that_could_not_see(
        &ledger,
        work.path(),
        &o,
        ".nanobot",
        &format!(
            "nanoload: unreadable: .nanobot: Permission denied (os error 13); the ledger keeps its {rows} rows and {calls} usage records there as they were, none marked gone"
        ),
    )
}

#[test]
fn an_unreadable_store_file_keeps_its_rows() -> TestResult {
    let (home, work, ledger) = synced_home_a(&[], |_| Ok(()))?;
    let db = format!("{NAMESPACE}/sessions.sqlite3");
    let locked = Unreadable::make(&home.path().join(&db))?;
    let o = sync_unprivileged(home.path(), &ledger, &[])?;
    drop(locked);
    let line = stderr(&o)
        .lines()
        .find(|l| l.starts_with(&format!("nanoload: unreadable: {db}: ")))
        .map(String::from)
        .ok_or_else(|| format!("no unreadable line: {}", stderr(&o)))?;
    assert!(line.contains("Permission denied"), "{line}");
    a_sync_that_could_not_see(&ledger, work.path(), &o, &db, &line)
}

/// `.nanobot` a link to a disk (outside HOME, read with `--follow-links`)
/// that is not mounted: first its target missing (a dangling link), then
/// an empty directory where it was (a mount point with nothing mounted).
#[test]
fn a_follow_links_instance_on_a_disk_not_mounted_keeps_its_rows() -> TestResult {
    let disk = tempfile::tempdir()?;
    let target = disk.path().join("nanobot");
    let (home, work, ledger) = synced_home_a(&["--follow-links"], |home| {
        std::fs::rename(home.join(".nanobot"), &target)?;
        std::os::unix::fs::symlink(&target, home.join(".nanobot"))?;
        Ok(())
    })?;
    let (rows, calls) = kept_counts(&ledger, ".nanobot")?;
    let keeps = format!(
        "the ledger keeps its {rows} rows and {calls} usage records there as they were, none marked gone"
    );
    // unmounted: the link dangles
    let away = disk.path().join("away");
    std::fs::rename(&target, &away)?;
    let o = sync_cmd(home.path(), &ledger)?
        .arg("--follow-links")
        .output()?;
    a_sync_that_could_not_see(
        &ledger,
        work.path(),
        &o,
        ".nanobot",
        &format!(
            "nanoload: skipped_link: .nanobot: symlink → {}: dangling (No such file or directory (os error 2)); {keeps}",
            target.display()
        ),
    )?;
    // an empty mount point where it was: nothing more gone, the same rows kept
    std::fs::create_dir(&target)?;
    let before = under(&ledger, ".nanobot")?;
    let total = ledger_rows(&ledger, "SELECT count(*) FROM ledger_events")?[0][0].clone();
    let o = sync_cmd(home.path(), &ledger)?
        .arg("--follow-links")
        .output()?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let line = format!(
        "nanoload: unreadable: .nanobot: an empty directory where the ledger's stores were (a disk not mounted?); {keeps}"
    );
    assert!(
        stderr(&o).lines().any(|l| l == line),
        "no line {line:?} in:\n{}",
        stderr(&o)
    );
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    assert_eq!(under(&ledger, ".nanobot")?, before);
    let snap = snapshot_against_a_load(&ledger, work.path(), ".nanobot")?;
    assert_eq!((snap[0][0].as_str(), snap[0][1].as_str()), ("0", "0"));
    assert_eq!(snap[0][2], snap[0][3]);
    Ok(())
}

/// The rows and usage records the ledger holds below `prefix`.
fn kept_counts(
    ledger: &Path,
    prefix: &str,
) -> Result<(String, String), Box<dyn std::error::Error>> {
    let r = under(ledger, prefix)?;
    Ok((r[0][1].clone(), r[0][3].clone()))
}

// ---------------------------------------------------------------------------
// A row's identity is the agent's record, not nanoload's rendering of it.

/// A sync that redacts more (`--secret-pattern` added) sees every row
/// again: none added, none gone; the rows whose text, native or dedup key
/// held the pattern are updated in place (counted as changed), and the
/// ledger keeps none of the earlier, less redacted text.
#[test]
fn a_new_secret_pattern_renders_rows_again_in_place() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    assert_eq!(sync(home.path(), &ledger)?.status.code(), Some(1));
    let holding = "SELECT count(*) FROM ledger_events
                   WHERE text LIKE '%4242%' OR native LIKE '%4242%' OR x_match LIKE '%4242%'";
    let n = ledger_rows(&ledger, holding)?[0][0].clone();
    assert_ne!(n, "0");
    let keys = "SELECT row_key, first_seen_load FROM ledger_events ORDER BY ALL";
    let before = ledger_rows(&ledger, keys)?;
    let total = before.len();
    let o = sync_cmd(home.path(), &ledger)?
        .args(["--secret-pattern", "4242"])
        .output()?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, {n} changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    assert_eq!(ledger_rows(&ledger, keys)?, before);
    assert_eq!(ledger_rows(&ledger, holding)?, strs(&[&["0"]]));
    // each of them now says what was redacted (its dedup key, when it was
    // the text itself, a digest)
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*) FROM ledger_events
             WHERE text LIKE '%[redacted:secret_pattern]%' OR native LIKE '%[redacted:secret_pattern]%'"
        )?,
        strs(&[&[&n]])
    );
    // the same sync again: nothing changes
    let again = sync_cmd(home.path(), &ledger)?
        .args(["--secret-pattern", "4242"])
        .output()?;
    assert_eq!(
        rows_line(&again),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    Ok(())
}

/// WebUI reasoning kept by one sync (`--include-thinking`) and not asked
/// for by the next is not what the agent erased: those rows stay present.
#[test]
fn a_sync_without_include_thinking_keeps_the_thinking_rows() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let first = sync_cmd(home.path(), &ledger)?
        .arg("--include-thinking")
        .output()?;
    assert_eq!(first.status.code(), Some(1), "{}", stderr(&first));
    let thinking = "SELECT count(*), count(*) FILTER (WHERE present) FROM ledger_events
                    WHERE turn_type = 'thinking' AND source_kind = 'nanobot.webui_transcript'";
    let n = ledger_rows(&ledger, thinking)?[0][0].clone();
    assert_ne!(n, "0");
    let total = ledger_rows(&ledger, "SELECT count(*) FROM ledger_events")?[0][0].clone();
    let o = sync(home.path(), &ledger)?;
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {total} in the ledger, {total} on disk"
        ))
    );
    assert_eq!(ledger_rows(&ledger, thinking)?, strs(&[&[&n, &n]]));
    // the transcript deleted: its rows are gone, thinking included
    std::fs::remove_file(
        home.path()
            .join(".nanobot/webui/websocket_b8e1c3f2-5d7a-4e61-9f0b-2a4c6d8e0f13.jsonl"),
    )?;
    std::fs::remove_dir_all(
        home.path()
            .join(".nanobot/webui/websocket_b8e1c3f2-5d7a-4e61-9f0b-2a4c6d8e0f13.segments"),
    )?;
    sync(home.path(), &ledger)?;
    assert_eq!(ledger_rows(&ledger, thinking)?, strs(&[&[&n, "0"]]));
    Ok(())
}

// ---------------------------------------------------------------------------
// No option that may hold a secret is written or printed as given.

/// Every file below `dir`, with its bytes.
fn files_below(dir: &Path) -> Result<Files, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir) {
        let e = e?;
        if e.file_type().is_file() {
            out.push((e.path().display().to_string(), std::fs::read(e.path())?));
        }
    }
    Ok(out)
}

/// `--secret-pattern` is a secret too: neither the pattern nor what it
/// matches is in any byte a sync or a load writes or prints — the ledger
/// (`loads.options` included: the pattern counted, not given), what `sql`
/// answers from it, OUT, `--tables`, `--db`, `--summary-json`, `--cache`,
/// `--timings` and stderr.
#[test]
fn a_secret_pattern_is_in_no_byte_written_or_printed() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let path = home.path().join(TELEGRAM);
    let mut text = std::fs::read_to_string(&path)?;
    text.push_str(
        r#"{"role": "user", "content": "the door code is QX-90417-ZZ", "timestamp": "2026-09-29T21:15:00.000000"}"#,
    );
    text.push('\n');
    std::fs::write(&path, text)?;
    let pattern = "QX-[0-9]{5}-ZZ";
    let secrets: [&[u8]; 3] = [pattern.as_bytes(), b"QX-90417-ZZ", b"QX-[0-9]"];
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let o = sync_cmd(home.path(), &ledger)?
        .args(["--secret-pattern", pattern])
        .output()?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        ledger_rows(&ledger, "SELECT options FROM loads")?,
        strs(&[&["secret_patterns=1"]])
    );
    let answer = Process::cargo_bin("nanoload")?
        .arg("sql")
        .arg(&ledger)
        .arg("FROM loads")
        .output()?;
    assert_eq!(answer.status.code(), Some(0), "{}", stderr(&answer));
    let load = Process::cargo_bin("nanoload")?
        .arg(home.path())
        .arg(work.path().join("out.parquet"))
        .arg("--tables")
        .arg(work.path().join("tables"))
        .arg("--db")
        .arg(work.path().join("out.duckdb"))
        .arg("--summary-json")
        .arg(work.path().join("summary.json"))
        .arg("--cache")
        .arg(work.path().join("cache"))
        .args(["--timings", "--secret-pattern", pattern])
        .output()?;
    assert_eq!(load.status.code(), Some(1), "{}", stderr(&load));
    let mut seen = files_below(work.path())?;
    for (name, o) in [("sync", &o), ("sql", &answer), ("load", &load)] {
        seen.push((format!("{name} stdout"), o.stdout.clone()));
        seen.push((format!("{name} stderr"), o.stderr.clone()));
    }
    assert!(seen.len() > 10, "{}", seen.len());
    for (file, bytes) in &seen {
        for s in secrets {
            assert!(
                !bytes.windows(s.len()).any(|w| w == s),
                "{file} holds {}",
                String::from_utf8_lossy(s)
            );
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// A ledger DuckDB cannot open is said to be what it is.

/// A ledger whose database headers are damaged is corrupt — for `sync`,
/// `export`, `prune` and `sql` alike, never "another process writes it";
/// a ledger another process holds open is busy (exit 5), never corrupt.
#[test]
fn a_corrupt_ledger_is_corrupt_and_a_held_one_is_busy() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    assert_eq!(sync(home.path(), &ledger)?.status.code(), Some(1));
    // held: this process has it open for writing
    {
        let _held = duckdb::Connection::open(&ledger)?;
        let s = sync(home.path(), &ledger)?;
        assert_eq!(s.status.code(), Some(5), "{}", stderr(&s));
        assert_eq!(
            stderr(&s),
            format!(
                "nanoload: error: {}: another process (pid {}) has this ledger open; nothing done, try again when it has finished\n",
                ledger.display(),
                std::process::id()
            )
        );
        let p = prune_cmd(&ledger, &[])?;
        assert_eq!(p.status.code(), Some(5), "{}", stderr(&p));
    }
    // damaged: both database headers overwritten
    let damaged = work.path().join("damaged.duckdb");
    let mut bytes = std::fs::read(&ledger)?;
    for b in &mut bytes[4096..12288] {
        *b = 0x5a;
    }
    std::fs::write(&damaged, &bytes)?;
    let corrupt = format!("{}: corrupt: ", damaged.display());
    let s = sync(home.path(), &damaged)?;
    assert_eq!(s.status.code(), Some(2), "{}", stderr(&s));
    assert!(
        stderr(&s).starts_with(&format!(
            "nanoload: error: {corrupt}DuckDB cannot read this database ("
        )),
        "{}",
        stderr(&s)
    );
    assert!(stderr(&s).ends_with("); nothing done\n"), "{}", stderr(&s));
    for o in [
        export(&[
            damaged.as_os_str(),
            work.path().join("x.parquet").as_os_str(),
        ])?,
        prune_cmd(&damaged, &[])?,
        Process::cargo_bin("nanoload")?
            .arg("sql")
            .arg(&damaged)
            .arg("FROM loads")
            .output()?,
    ] {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(&corrupt), "{}", stderr(&o));
        assert!(!stderr(&o).contains("another"), "{}", stderr(&o));
    }
    assert_eq!(std::fs::read(&damaged)?, bytes);
    // not a DuckDB database at all: sync names what it is
    let text = work.path().join("notes.duckdb");
    std::fs::write(&text, "my notes\n")?;
    let s = sync(home.path(), &text)?;
    assert_eq!(s.status.code(), Some(2), "{}", stderr(&s));
    assert_eq!(
        stderr(&s),
        format!(
            "nanoload: error: {}: it is a text file of 9 bytes, not a nanoload ledger; nothing done (a ledger is a file `nanoload sync` created)\n",
            text.display()
        )
    );
    assert_eq!(std::fs::read(&text)?, b"my notes\n");
    Ok(())
}

/// A ledger of format 2 (`fixtures/ledger/sha256-keys`) is upgraded by the
/// first sync of this build, in its transaction: every row kept and seen
/// again under its new identity (a later change of rendering updates it in
/// place), and a row an earlier build marked gone stays gone — but prune
/// removes it only with `--force`, as that build did not record whether
/// it could read all of HOME.
#[test]
fn an_earlier_ledger_is_upgraded_and_loses_no_row() -> TestResult {
    let home = crate::fixture_homes::materialize("nanobot/home-a")?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("ledger.duckdb");
    std::fs::copy(fixture("ledger/sha256-keys/ledger.duckdb"), &ledger)?;
    same_home(&ledger, home.path())?;
    // as the earlier build's second sync after the chat's deletion left it
    {
        let c = duckdb::Connection::open(&ledger)?;
        c.execute_batch(&format!(
            "INSERT INTO loads SELECT 2, load_id, started_at, finished_at, home, options, 0, 0,
                 (SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}'), rows,
                 present - (SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}')
             FROM loads WHERE sync = 1;
             UPDATE ledger_events SET present = false WHERE source_path = '{CHAT}';
             UPDATE ledger_sources SET present = false WHERE source_path = '{CHAT}';
             CHECKPOINT;"
        ))?;
    }
    std::fs::remove_file(home.path().join(CHAT))?;
    let chat = ledger_rows(
        &ledger,
        &format!("SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}'"),
    )?[0][0]
        .clone();
    let present = 163 - chat.parse::<u64>()?;
    let o = sync(home.path(), &ledger)?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; 163 in the ledger, {present} on disk"
        ))
    );
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT (SELECT value FROM ledger_meta WHERE key = 'format'),
                    (SELECT count(*) FROM ledger_events WHERE x_content IS NOT NULL),
                    (SELECT count(*) FROM ledger_events WHERE present AND last_seen_load = 3)"
        )?,
        strs(&[&["3", &present.to_string(), &present.to_string()]])
    );
    // a new rendering: the upgraded rows are updated in place
    let o = sync_cmd(home.path(), &ledger)?
        .args(["--secret-pattern", "4242"])
        .output()?;
    let line = rows_line(&o).ok_or("no rows line")?;
    assert!(
        line.starts_with("nanoload: rows: 0 added, ")
            && line.ends_with(&format!(
                " changed, 0 gone; 163 in the ledger, {present} on disk"
            )),
        "{line}"
    );
    // the chat's rows, marked gone by the earlier build: pruned only with --force
    let refused = prune_cmd(&ledger, &[])?;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(
        stderr(&refused),
        format!(
            "nanoload: error: {}: not pruned: {chat} rows, 0 usage records and 1 stores it would remove were marked gone by a sync that could not read all of HOME (syncs of an earlier nanoload, which did not record what they could read); give --force to remove them anyway; nothing done\n",
            ledger.display()
        )
    );
    let forced = prune_cmd(&ledger, &["--force"])?;
    assert_eq!(forced.status.code(), Some(0), "{}", stderr(&forced));
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*), count(*) FILTER (WHERE present) FROM ledger_events"
        )?,
        strs(&[&[&present.to_string(), &present.to_string()]])
    );
    Ok(())
}

/// HOME itself unreadable: nothing is marked gone, and the one line says
/// so (a load of it exits 1 too: HOME is where agent state is).
#[test]
fn an_unreadable_home_marks_nothing_gone() -> TestResult {
    let (home, work, ledger) = synced_home_a(&[], |_| Ok(()))?;
    let (rows, calls) = kept_counts(&ledger, "")?;
    let before = ledger_rows(
        &ledger,
        "SELECT count(*) FILTER (WHERE present) FROM ledger_events",
    )?;
    let locked = Unreadable::make(home.path())?;
    let o = sync_unprivileged(home.path(), &ledger, &[])?;
    let load = unprivileged(&[
        home.path().as_os_str(),
        work.path().join("out.parquet").as_os_str(),
    ])?;
    drop(locked);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stderr(&o).lines().next(),
        Some(
            format!(
                "nanoload: unreadable: .: Permission denied (os error 13); the ledger keeps its {rows} rows and {calls} usage records there as they were, none marked gone"
            )
            .as_str()
        )
    );
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, 0 gone; {rows} in the ledger, {rows} on disk"
        ))
    );
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT count(*) FILTER (WHERE present) FROM ledger_events"
        )?,
        before
    );
    assert_eq!(load.status.code(), Some(1), "{}", stderr(&load));
    Ok(())
}

/// A file a store reads besides its own that cannot be opened — the
/// namespace's `.workspace`, whence its five session files and the
/// workspace's memory journal, cron and trigger runs take their project —
/// holds those stores back: their rows are not rendered without it (the
/// same records as new rows, the old ones gone), they stay as they were,
/// and one line says so.
#[test]
fn an_unreadable_file_a_store_reads_holds_the_store_back() -> TestResult {
    let (home, _work, ledger) = synced_home_a(&[], |_| Ok(()))?;
    let file = format!("{NAMESPACE}/.workspace");
    let locked = Unreadable::make(&home.path().join(&file))?;
    let o = sync_unprivileged(home.path(), &ledger, &[])?;
    drop(locked);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let said: Vec<String> = stderr(&o)
        .lines()
        .filter(|l| l.contains(".workspace") || l.starts_with("nanoload: stores: "))
        .map(String::from)
        .collect();
    assert_eq!(
        said,
        [
            format!(
                "nanoload: unreadable: {file}: Permission denied (os error 13); 8 stores that read a file there are not read this time (their rows stay as they were)"
            ),
            "nanoload: stores: 1 read, 9 unchanged since the ledger read them, 8 held back (they read a file that could not be read)".to_string(),
        ]
    );
    let chat = ledger_rows(
        &ledger,
        &format!("SELECT count(*) FROM ledger_events WHERE source_path = '{CHAT}'"),
    )?[0][0]
        .clone();
    let total = ledger_rows(&ledger, "SELECT count(*) FROM ledger_events")?[0][0].parse::<u64>()?;
    assert_eq!(
        rows_line(&o),
        Some(format!(
            "nanoload: rows: 0 added, 0 changed, {chat} gone; {total} in the ledger, {} on disk",
            total - chat.parse::<u64>()?
        ))
    );
    Ok(())
}

/// A ledger belongs to the HOME of its first sync: a sync of another HOME
/// is refused (exit 2, one line naming both, the ledger untouched) unless
/// it says `--add-home`; then the first HOME's rows stay as they are, even
/// where both HOMEs hold a store at the same path and the added HOME's
/// copy lacks a file the first still has, and a sync of the first HOME
/// still marks what its agent deleted.
#[test]
fn a_ledger_belongs_to_one_home_and_another_is_added_only_when_asked() -> TestResult {
    let first = copy_home(&fixture("nanobot/home-a"))?;
    let other = copy_home(&fixture("nanobot/home-a"))?;
    std::fs::remove_file(other.path().join(CHAT))?;
    let work = tempfile::tempdir()?;
    let ledger = work.path().join("history.duckdb");
    let o = sync(first.path(), &ledger)?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let (a, b) = (first.path().canonicalize()?, other.path().canonicalize()?);
    let state = "SELECT (SELECT count(*) FROM loads), (SELECT count(*) FROM ledger_events),
                        (SELECT count(*) FILTER (WHERE NOT present) FROM ledger_events),
                        (SELECT count(*) FILTER (WHERE NOT present) FROM ledger_llm_calls),
                        (SELECT count(*) FILTER (WHERE NOT present) FROM ledger_sources)";
    let before = ledger_rows(&ledger, state)?;
    assert_eq!(before[0][0], "1");
    assert_eq!(before[0][2..], ["0", "0", "0"]);
    let bytes = std::fs::read(&ledger)?;

    let refused = sync(other.path(), &ledger)?;
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(
        stderr(&refused),
        format!(
            "nanoload: error: {}: this ledger keeps the history of HOME {}, not of {}; nothing done \
             (a sync of another HOME would take the first HOME's rows for deleted: give --add-home \
             to keep both HOMEs in this ledger)\n",
            ledger.display(),
            a.display(),
            b.display()
        )
    );
    assert_eq!(
        std::fs::read(&ledger)?,
        bytes,
        "a refused sync changed the ledger"
    );

    let added = sync_cmd(other.path(), &ledger)?
        .arg("--add-home")
        .output()?;
    assert_eq!(added.status.code(), Some(1), "{}", stderr(&added));
    let after = ledger_rows(&ledger, state)?;
    assert_eq!(after[0][0], "2");
    // the first HOME's rows, its deleted chat's among them, are not gone
    assert_eq!(after[0][1], before[0][1]);
    assert_eq!(after[0][2..], ["0", "0", "0"]);
    assert_eq!(
        ledger_rows(
            &ledger,
            "SELECT value FROM ledger_meta WHERE key = 'home' ORDER BY value"
        )?,
        {
            let mut homes = vec![vec![a.display().to_string()], vec![b.display().to_string()]];
            homes.sort();
            homes
        }
    );
    // both HOMEs are the ledger's now: neither asks again
    for home in [&other, &first] {
        let o = sync(home.path(), &ledger)?;
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
    assert_eq!(ledger_rows(&ledger, state)?[0][2..], ["0", "0", "0"]);
    // the first HOME's agent deletes the chat: its rows are gone
    std::fs::remove_file(first.path().join(CHAT))?;
    let o = sync(first.path(), &ledger)?;
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let gone = ledger_rows(
        &ledger,
        &format!(
            "SELECT count(*) FILTER (WHERE NOT present), count(*) FROM ledger_events
             WHERE store_path = '{CHAT}'"
        ),
    )?;
    assert_ne!(gone[0][1], "0");
    assert_eq!(gone[0][0], gone[0][1]);
    Ok(())
}
