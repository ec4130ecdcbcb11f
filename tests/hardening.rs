//! Robustness: every malformed line, record, store and symlink of the
//! bad-input matrix gives its diagnostic and exit code while the good rows
//! load; no command that reads a HOME changes any fixture home (bytes,
//! metadata, entries), also when read-only; a live writer never tears a
//! snapshot, and a crashed writer's hot journal is rolled back on the
//! private copy only (HOME unchanged, the committed rows loaded); a killed
//! run leaves no output and the next run cleans up; the same input gives the
//! same bytes whatever the threads and file creation order; no secret any
//! fixture's EXPECTED file lists reaches any output; a 200 MB home loads
//! within the promised peak RSS.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

const NS: &str = ".nanobot/sessions/0123456789abcdef0123456789abcdef";
const GOOD_NS: &str = ".nanobot/sessions/fedcba9876543210fedcba9876543210";

fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_nanoload"))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

/// A good session every case home holds: its rows must survive every bad input.
fn write_good(home: &Path) -> TestResult {
    let ns = home.join(GOOD_NS);
    std::fs::create_dir_all(&ns)?;
    std::fs::write(
        ns.join("Z29vZDox.jsonl"),
        concat!(
            r#"{"_type": "metadata", "key": "good:1", "created_at": "2026-10-05T09:00:00", "updated_at": "2026-10-05T09:00:05", "metadata": {}, "last_archived": 0}"#,
            "\n",
            r#"{"role": "user", "content": "still here", "timestamp": "2026-10-05T09:00:01"}"#,
            "\n",
            r#"{"role": "assistant", "content": "yes", "timestamp": "2026-10-05T09:00:05"}"#,
            "\n"
        ),
    )?;
    Ok(())
}

/// Run the binary: as uid/gid 65534 when `nobody` and euid is 0 (root
/// ignores file modes), with a world-writable TMPDIR and output directory.
struct Runner {
    base: tempfile::TempDir,
}

impl Runner {
    fn new() -> Result<Runner, Box<dyn std::error::Error>> {
        let base = tempfile::tempdir()?;
        std::fs::set_permissions(base.path(), std::fs::Permissions::from_mode(0o777))?;
        for d in ["out", "tmp", "bin"] {
            std::fs::create_dir(base.path().join(d))?;
            std::fs::set_permissions(base.path().join(d), std::fs::Permissions::from_mode(0o777))?;
        }
        // the binary may sit under a directory only root can enter: link
        // it (or copy it, across file systems) into one anybody can
        let exe = base.path().join("bin/nanoload");
        if std::fs::hard_link(bin(), &exe).is_err() {
            std::fs::copy(bin(), &exe)?;
            std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755))?;
        }
        Ok(Runner { base })
    }

    fn out(&self) -> PathBuf {
        self.base.path().join("out/out.parquet")
    }

    fn command(&self, home: &Path, args: &[&str], nobody: bool) -> Command {
        let mut c = Command::new(self.base.path().join("bin/nanoload"));
        c.arg(home)
            .arg(self.out())
            .arg("--tables")
            .arg(self.base.path().join("out/tables"))
            .args(args);
        c.env("TMPDIR", self.base.path().join("tmp"));
        if nobody && is_root() {
            c.uid(65534).gid(65534);
        }
        c
    }

    /// Run and wait, at most [`HANG_LIMIT`]: a run that hangs is killed and
    /// the error names it.
    fn run(
        &self,
        home: &Path,
        args: &[&str],
        nobody: bool,
    ) -> Result<Output, Box<dyn std::error::Error>> {
        self.run_with_env(home, args, nobody, &[])
    }

    /// [`Runner::run`] with the variables `env` set.
    fn run_with_env(
        &self,
        home: &Path,
        args: &[&str],
        nobody: bool,
        env: &[(&str, &str)],
    ) -> Result<Output, Box<dyn std::error::Error>> {
        let _ = std::fs::remove_dir_all(self.base.path().join("out/tables"));
        let _ = std::fs::remove_file(self.out());
        let case = format!("nanoload {} {args:?} {env:?}", home.display());
        output_within(
            self.command(home, args, nobody).envs(env.iter().copied()),
            HANG_LIMIT,
            &case,
        )
    }

    /// Spawn with `NANOLOAD_TEST_PAUSE=<stage>:<signal>` and return once the
    /// run has paused at `stage` (it waits until the signal file is removed).
    fn spawn_paused(
        &self,
        home: &Path,
        args: &[&str],
        nobody: bool,
        stage: &str,
        stderr: Stdio,
    ) -> Result<(std::process::Child, PathBuf), Box<dyn std::error::Error>> {
        let signal = self.base.path().join("paused");
        let mut child = self
            .command(home, args, nobody)
            .env(
                "NANOLOAD_TEST_PAUSE",
                format!("{stage}:{}", signal.display()),
            )
            .stderr(stderr)
            .spawn()?;
        if let Err(e) = wait_for(&signal) {
            // a run that never reaches its pause is not left running
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        Ok((child, signal))
    }

    fn query(&self, sql: &str) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
        let c = duckdb::Connection::open_in_memory()?;
        c.execute_batch(&format!(
            "CREATE VIEW events AS SELECT * FROM read_parquet('{}');",
            self.out().display()
        ))?;
        for t in ["diagnostics", "sources", "sessions"] {
            c.execute_batch(&format!(
                "CREATE VIEW {t} AS SELECT * FROM read_parquet('{}/out/tables/{t}.parquet');",
                self.base.path().display()
            ))?;
        }
        Ok(query(&c, sql)?)
    }
}

fn world_readable(dir: &Path) -> TestResult {
    let st = Command::new("chmod")
        .arg("-R")
        .arg("a+rX")
        .arg(dir)
        .status()?;
    if !st.success() {
        return Err("chmod failed".into());
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

// ---------------------------------------------------------------- generators

fn session_db(path: &Path, version: i64, record: &str, with_messages: bool) -> TestResult {
    std::fs::create_dir_all(path.parent().ok_or("no parent")?)?;
    let c = rusqlite::Connection::open(path)?;
    c.execute_batch(
        "CREATE TABLE sessions (key TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL, metadata TEXT NOT NULL,
         provider_state TEXT, last_archived INTEGER NOT NULL, revision INTEGER NOT NULL, generation TEXT NOT NULL, title TEXT NOT NULL,
         preview TEXT NOT NULL, visible_updated_at TEXT);
         INSERT INTO sessions VALUES ('db:1', '2026-10-05T11:00:00', '2026-10-05T11:00:09', '{}', NULL, 0, 1, 'g', '', '', NULL);",
    )?;
    if with_messages {
        c.execute_batch("CREATE TABLE messages (session_key TEXT NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL, PRIMARY KEY (session_key, position));")?;
        c.execute(
            "INSERT INTO messages VALUES ('db:1', 0, ?1)",
            [r#"{"role":"user","content":"from the database","timestamp":"2026-10-05T11:00:01"}"#],
        )?;
        c.execute("INSERT INTO messages VALUES ('db:1', 1, ?1)", [record])?;
    }
    c.pragma_update(None, "user_version", version)?;
    Ok(())
}

const GOOD_RECORD: &str =
    r#"{"role":"assistant","content":"db answer","timestamp":"2026-10-05T11:00:02"}"#;

fn gen_db_user_version_2(h: &Path) -> TestResult {
    session_db(&h.join(NS).join("sessions.sqlite3"), 2, GOOD_RECORD, true)
}
fn gen_db_missing_messages(h: &Path) -> TestResult {
    session_db(&h.join(NS).join("sessions.sqlite3"), 1, GOOD_RECORD, false)
}
fn gen_db_record_not_object(h: &Path) -> TestResult {
    session_db(&h.join(NS).join("sessions.sqlite3"), 1, "[1]", true)
}
fn gen_db_truncated(h: &Path) -> TestResult {
    let p = h.join(NS).join("sessions.sqlite3");
    session_db(&p, 1, GOOD_RECORD, true)?;
    let c = rusqlite::Connection::open(&p)?;
    for i in 2..400 {
        c.execute(
            "INSERT INTO messages VALUES ('db:1', ?1, ?2)",
            rusqlite::params![
                i,
                format!("{{\"role\":\"user\",\"content\":\"{}\"}}", "x".repeat(500))
            ],
        )?;
    }
    drop(c);
    let len = std::fs::metadata(&p)?.len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)?
        .set_len(len / 3)?;
    Ok(())
}
fn gen_big_line(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    let mut s = String::with_capacity(100_000_200);
    s.push_str(r#"{"_type": "metadata", "key": "big:1", "created_at": "2026-10-05T10:00:00", "updated_at": "2026-10-05T10:00:00", "metadata": {}}"#);
    s.push_str(
        "\n{\"role\": \"tool\", \"tool_call_id\": \"c\", \"name\": \"exec\", \"content\": \"",
    );
    s.push_str(&"y".repeat(100_000_000));
    s.push_str("\", \"timestamp\": \"2026-10-05T10:00:01\"}\n");
    std::fs::write(ns.join("YmlnOjE.jsonl"), s)?;
    Ok(())
}
fn gen_mode_000(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    let p = ns.join("c2VjcmV0OjE.jsonl");
    std::fs::write(&p, "{\"_type\": \"metadata\", \"key\": \"secret:1\"}\n")?;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000))?;
    Ok(())
}
fn gen_symlink_loop(h: &Path) -> TestResult {
    std::fs::create_dir_all(h.join(".nanobot/loopdir"))?;
    std::os::unix::fs::symlink("..", h.join(".nanobot/loopdir/up"))?;
    Ok(())
}
fn gen_symlink_outside(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    std::os::unix::fs::symlink("/etc/hostname", ns.join("ZXZpbDox.jsonl"))?;
    Ok(())
}
fn gen_symlink_dangling(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    std::os::unix::fs::symlink("gone/away.jsonl", ns.join("Z29uZToy.jsonl"))?;
    Ok(())
}
/// A session file kept elsewhere in HOME (not a store path): read through
/// the link, under the link's path.
fn gen_symlink_inside_home(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    std::fs::create_dir_all(h.join("backup"))?;
    std::fs::write(
        h.join("backup/linked.jsonl"),
        concat!(
            r#"{"_type": "metadata", "key": "linked:1", "created_at": "2026-10-05T09:00:00", "updated_at": "2026-10-05T09:00:05", "metadata": {}, "last_archived": 0}"#,
            "\n",
            r#"{"role": "user", "content": "through a link", "timestamp": "2026-10-05T09:00:01"}"#,
            "\n"
        ),
    )?;
    std::os::unix::fs::symlink("../../../backup/linked.jsonl", ns.join("bGlua2VkOjE.jsonl"))?;
    Ok(())
}
fn gen_outbound_missing(h: &Path) -> TestResult {
    std::fs::create_dir_all(h.join("nc"))?;
    copy_tree(&fixture("nanoclaw/home-a"), &h.join("nc"))
}
fn gen_v2_empty_main(h: &Path) -> TestResult {
    let d = h.join("nc/data");
    std::fs::create_dir_all(&d)?;
    std::fs::write(d.join("v2.db"), b"")?;
    std::fs::write(d.join("v2.db-wal"), vec![7u8; 4096])?;
    Ok(())
}

/// A database another process holds EXCLUSIVE mid-transaction (rollback
/// journal): the copy carries the hot journal and is rolled back privately.
struct Locked {
    _writer: rusqlite::Connection,
}
fn lock_db(h: &Path) -> Result<Locked, Box<dyn std::error::Error>> {
    let p = h.join(NS).join("sessions.sqlite3");
    session_db(&p, 1, GOOD_RECORD, true)?;
    let c = rusqlite::Connection::open(&p)?;
    c.execute_batch("PRAGMA cache_size = 1; BEGIN EXCLUSIVE;")?;
    for i in 10..300 {
        c.execute(
            "INSERT INTO messages VALUES ('db:1', ?1, ?2)",
            rusqlite::params![
                i,
                format!(
                    "{{\"role\":\"user\",\"content\":\"uncommitted {}\"}}",
                    "z".repeat(300)
                )
            ],
        )?;
    }
    Ok(Locked { _writer: c })
}

/// A writer holding an EXCLUSIVE transaction for the rest of the test
/// process (it outlives the nanoload run on purpose).
fn gen_db_locked(h: &Path) -> TestResult {
    std::mem::forget(lock_db(h)?);
    Ok(())
}
fn gen_vanishing(h: &Path) -> TestResult {
    let ns = h.join(NS);
    std::fs::create_dir_all(&ns)?;
    std::fs::write(
        ns.join("dmFuaXNoOjE.jsonl"),
        "{\"_type\": \"metadata\", \"key\": \"vanish:1\"}\n",
    )?;
    Ok(())
}
fn vanish(h: &Path) -> TestResult {
    std::fs::remove_file(h.join(NS).join("dmFuaXNoOjE.jsonl"))?;
    Ok(())
}

// ---------------------------------------------------------------- the matrix

struct Case {
    name: &'static str,
    generate: Option<fn(&Path) -> TestResult>,
    /// Run between discovery and extraction (the test-only pause hook).
    paused: Option<fn(&Path) -> TestResult>,
    args: &'static [&'static str],
    nobody: bool,
    exit: i32,
    /// (kind, path suffix, line) of the diagnostic, also on stderr; None: none at all.
    diag: Option<(&'static str, &'static str, Option<i64>)>,
    /// A query proving what the store itself still yields, and its answer.
    check: (&'static str, &'static str),
}

/// The defaults a case overrides: no generator, no pause, no flags, run as
/// the current user, no diagnostic.
const PLAIN: Case = Case {
    name: "",
    generate: None,
    paused: None,
    args: &[],
    nobody: false,
    exit: 0,
    diag: None,
    check: ("", ""),
};

const CASES: &[Case] = &[
    Case {
        name: "torn_last_line",
        exit: 1,
        diag: Some(("bad_line", "dG9ybjox.jsonl", Some(3))),
        check: (
            "SELECT string_agg(turn_type, ',' ORDER BY ordinal) FROM events WHERE session_id = 'torn:1'",
            "system,user,system",
        ),
        ..PLAIN
    },
    Case {
        name: "line_not_object",
        exit: 1,
        diag: Some(("bad_line", "YXJyYXk6MQ.jsonl", Some(3))),
        check: (
            "SELECT string_agg(coalesce(text, ''), '|' ORDER BY ordinal) FROM events WHERE session_id = 'array:1' AND seq IS NOT NULL",
            "first|parser: unparseable line 3 (expected a JSON object, found an array): [1, 2, 3]|after",
        ),
        ..PLAIN
    },
    Case {
        name: "lone_surrogate",
        exit: 0,
        diag: Some(("warning", "ZW1vamk6MQ.jsonl", Some(2))),
        check: (
            "SELECT text FROM events WHERE session_id = 'emoji:1' AND turn_type = 'user'",
            "cut inside an emoji \u{fffd}",
        ),
        ..PLAIN
    },
    Case {
        name: "invalid_utf8",
        exit: 0,
        diag: Some(("warning", "Ynl0ZXM6MQ.jsonl", Some(2))),
        check: (
            "SELECT text FROM events WHERE session_id = 'bytes:1' AND turn_type = 'user'",
            "caf\u{fffd}",
        ),
        ..PLAIN
    },
    Case {
        name: "nul_bytes",
        exit: 1,
        diag: Some(("bad_line", "bnVsOjE.jsonl", Some(3))),
        check: (
            "SELECT string_agg(text, ',' ORDER BY ordinal) FROM events WHERE session_id = 'nul:1' AND turn_type = 'user'",
            "before,after",
        ),
        ..PLAIN
    },
    Case {
        name: "big_line",
        generate: Some(gen_big_line),
        exit: 0,
        check: (
            "SELECT length(text) FROM events WHERE session_id = 'big:1' AND turn_type = 'tool_result'",
            "100000000",
        ),
        ..PLAIN
    },
    Case {
        name: "empty_file",
        exit: 0,
        diag: Some(("warning", "ZW1wdHk6MQ.jsonl", None)),
        check: (
            "SELECT rows || ' ' || status FROM sources WHERE source_path LIKE '%ZW1wdHk6MQ.jsonl'",
            "0 ok",
        ),
        ..PLAIN
    },
    Case {
        name: "metadata_missing",
        exit: 1,
        diag: Some(("bad_record", "bm9tZXRhOjE.jsonl", Some(1))),
        check: (
            "SELECT session_id || ' ' || text FROM events WHERE source_path LIKE '%bm9tZXRhOjE.jsonl'",
            "nometa:1 orphan message",
        ),
        ..PLAIN
    },
    Case {
        name: "duplicate_metadata",
        exit: 1,
        diag: Some(("bad_line", "ZHVwOjE.jsonl", Some(3))),
        check: (
            "SELECT string_agg(text, ',' ORDER BY ordinal) FROM events WHERE session_id = 'dup:1' AND turn_type = 'user'",
            "one,two",
        ),
        ..PLAIN
    },
    Case {
        name: "key_differs_from_name",
        exit: 0,
        diag: Some(("warning", "Y2xpOmRpcmVjdA.jsonl", Some(1))),
        check: (
            "SELECT session_id FROM events WHERE turn_type = 'user' AND text = 'named wrong'",
            "telegram:9",
        ),
        ..PLAIN
    },
    Case {
        name: "db_not_a_database",
        exit: 1,
        diag: Some(("unreadable", "sessions.sqlite3", None)),
        check: (
            "SELECT status FROM sources WHERE source_kind = 'nanobot.session_db'",
            "failed",
        ),
        ..PLAIN
    },
    Case {
        name: "db_truncated",
        generate: Some(gen_db_truncated),
        exit: 1,
        diag: Some(("unreadable", "sessions.sqlite3", None)),
        check: (
            "SELECT count(*) FROM sources WHERE source_kind = 'nanobot.session_db' AND status IN ('failed', 'partial')",
            "1",
        ),
        ..PLAIN
    },
    Case {
        name: "db_user_version_2",
        generate: Some(gen_db_user_version_2),
        exit: 0,
        diag: Some(("warning", "sessions.sqlite3", None)),
        check: (
            "SELECT string_agg(turn_type, ',' ORDER BY ordinal) FROM events WHERE session_id = 'db:1'",
            "system,user,assistant",
        ),
        ..PLAIN
    },
    Case {
        name: "db_missing_messages_table",
        generate: Some(gen_db_missing_messages),
        exit: 1,
        diag: Some(("unreadable", "sessions.sqlite3", None)),
        check: (
            "SELECT left(text, 24) FROM events WHERE session_id = 'db:1'",
            "session start: key=db:1 ",
        ),
        ..PLAIN
    },
    Case {
        name: "db_record_not_object",
        generate: Some(gen_db_record_not_object),
        exit: 1,
        diag: Some(("bad_record", "sessions.sqlite3", Some(2))),
        check: (
            "SELECT string_agg(text, '|' ORDER BY ordinal) FROM events WHERE session_id = 'db:1' AND seq IS NOT NULL",
            "from the database|parser: unparseable record 1 (expected a JSON object, found an array): [1]",
        ),
        ..PLAIN
    },
    Case {
        name: "mode_000_file",
        generate: Some(gen_mode_000),
        nobody: true,
        exit: 1,
        diag: Some(("unreadable", "c2VjcmV0OjE.jsonl", None)),
        check: (
            "SELECT status FROM sources WHERE source_path LIKE '%c2VjcmV0OjE.jsonl'",
            "failed",
        ),
        ..PLAIN
    },
    Case {
        name: "symlink_loop",
        generate: Some(gen_symlink_loop),
        exit: 0,
        diag: Some(("warning", ".nanobot/loopdir/up", None)),
        check: ("SELECT count(*) FROM sources", "1"),
        ..PLAIN
    },
    Case {
        name: "symlink_loop_followed",
        generate: Some(gen_symlink_loop),
        args: &["--follow-links"],
        exit: 0,
        diag: Some(("warning", ".nanobot/loopdir/up", None)),
        check: ("SELECT count(*) FROM sources", "1"),
        ..PLAIN
    },
    Case {
        name: "symlink_dangling",
        generate: Some(gen_symlink_dangling),
        exit: 1,
        diag: Some(("skipped_link", "Z29uZToy.jsonl", None)),
        check: ("SELECT count(*) FROM sources", "1"),
        ..PLAIN
    },
    Case {
        name: "symlink_inside_home",
        generate: Some(gen_symlink_inside_home),
        exit: 0,
        check: (
            "SELECT string_agg(source_path || ':' || text, ',') FROM events WHERE session_id = 'linked:1' AND seq IS NOT NULL",
            ".nanobot/sessions/0123456789abcdef0123456789abcdef/bGlua2VkOjE.jsonl:through a link",
        ),
        ..PLAIN
    },
    Case {
        name: "symlink_out_of_home",
        generate: Some(gen_symlink_outside),
        exit: 1,
        diag: Some(("skipped_link", "ZXZpbDox.jsonl", None)),
        check: (
            "SELECT count(*) FROM events WHERE source_path LIKE '%ZXZpbDox%'",
            "0",
        ),
        ..PLAIN
    },
    Case {
        name: "nanoclaw_outbound_missing",
        generate: Some(gen_outbound_missing),
        exit: 0,
        diag: Some(("loss", "sess-1795989913797-oledfs/outbound.db", None)),
        check: (
            "SELECT text FROM events WHERE session_id = 'sess-1795989913797-oledfs' AND turn_type = 'user'",
            "Remind Dana to confirm the offsite venue with the team.",
        ),
        ..PLAIN
    },
    Case {
        name: "v2_db_empty_main_with_wal",
        generate: Some(gen_v2_empty_main),
        exit: 1,
        diag: Some(("unreadable", "nc/data/v2.db", None)),
        check: (
            "SELECT message FROM diagnostics WHERE source_path = 'nc/data/v2.db'",
            "main file empty; WAL not applied (4096 bytes of WAL ignored, as SQLite would)",
        ),
        ..PLAIN
    },
    Case {
        name: "cron_run_not_json",
        exit: 1,
        diag: Some(("bad_record", "j1_1_ab.json", None)),
        check: (
            "SELECT left(text, 26) FROM events WHERE source_kind = 'nanobot.cron_run'",
            "parser: unparseable line 1",
        ),
        ..PLAIN
    },
    Case {
        name: "cli_history_bad_timestamp",
        exit: 1,
        diag: Some(("bad_line", "cli_history", Some(5))),
        check: (
            "SELECT string_agg(text || '@' || coalesce(timestamp_local::VARCHAR, 'NULL'), ',' ORDER BY source_line) FROM events WHERE source_kind = 'nanobot.cli_history'",
            "good entry@2026-10-05 10:00:00,entry with a bad stamp@NULL",
        ),
        ..PLAIN
    },
    Case {
        name: "db_locked_by_another_process",
        generate: Some(gen_db_locked),
        exit: 0,
        check: (
            "SELECT count(*) FROM events WHERE session_id = 'db:1' AND seq IS NOT NULL",
            "2",
        ),
        ..PLAIN
    },
    Case {
        name: "file_vanishes_after_discovery",
        generate: Some(gen_vanishing),
        paused: Some(vanish),
        exit: 1,
        diag: Some(("unreadable", "dmFuaXNoOjE.jsonl", None)),
        check: (
            "SELECT status FROM sources WHERE source_path LIKE '%dmFuaXNoOjE.jsonl'",
            "failed",
        ),
        ..PLAIN
    },
];

#[test]
fn bad_input_matrix() -> TestResult {
    let runner = Runner::new()?;
    let mut failures = Vec::new();
    for case in CASES {
        let home = tempfile::Builder::new()
            .prefix("home-")
            .tempdir_in(runner.base.path())?;
        write_good(home.path())?;
        let stat = fixture(&format!("bad/{}", case.name));
        if stat.exists() {
            copy_tree(&stat, home.path())?;
        }
        if let Some(g) = case.generate {
            g(home.path())?;
        }
        if case.nobody {
            world_readable(home.path())?;
            // keep the case's own unreadable file unreadable
            if case.name == "mode_000_file" {
                std::fs::set_permissions(
                    home.path().join(NS).join("c2VjcmV0OjE.jsonl"),
                    std::fs::Permissions::from_mode(0o000),
                )?;
            }
        }
        let before = tree(home.path());
        // no case may hang: the watchdog kills a run past HANG_LIMIT and
        // the case fails by its name
        let ran = match case.paused {
            None => runner.run(home.path(), case.args, case.nobody),
            Some(during) => {
                let (child, signal) = runner.spawn_paused(
                    home.path(),
                    case.args,
                    case.nobody,
                    "discovered",
                    Stdio::piped(),
                )?;
                during(home.path())?;
                std::fs::remove_file(&signal)?;
                wait_within(child, HANG_LIMIT, case.name)
            }
        };
        let o = match ran {
            Ok(o) => o,
            Err(e) => {
                failures.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
        let mut problems = Vec::new();
        if o.status.code() != Some(case.exit) {
            problems.push(format!("exit {:?}, want {}", o.status.code(), case.exit));
        }
        if stderr.contains("panicked") {
            problems.push("panic".into());
        }
        if case.paused.is_none() && tree(home.path()) != before {
            problems.push("HOME changed".into());
        }
        match runner.query("SELECT count(*) FROM events WHERE session_id = 'good:1'") {
            Ok(v) if v == vec![vec!["3".to_string()]] => {}
            other => problems.push(format!("good session rows: {other:?}")),
        }
        match runner.query(case.check.0) {
            Ok(v) if v == vec![vec![case.check.1.to_string()]] => {}
            other => problems.push(format!("check {:?} gave {other:?}", case.check.0)),
        }
        let diags = match runner.query("SELECT kind, source_path, coalesce(source_line, -1) FROM diagnostics WHERE kind <> 'loss' OR source_path LIKE 'nc/%'") {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{}: no output ({e}): {stderr}", case.name));
                continue;
            }
        };
        match case.diag {
            None if !diags.is_empty() => problems.push(format!("unexpected diagnostics {diags:?}")),
            None => {}
            Some((kind, suffix, line)) => {
                let found = diags.iter().any(|d| {
                    d[0] == kind
                        && d[1].ends_with(suffix)
                        && line.is_none_or(|l| d[2] == l.to_string())
                });
                if !found {
                    problems.push(format!(
                        "no {kind} diagnostic for {suffix}:{line:?} in {diags:?}"
                    ));
                }
                let prefix = format!("nanoload: {kind}: ");
                let on_stderr = stderr.lines().any(|l| {
                    l.starts_with(&prefix)
                        && l.contains(suffix)
                        && line.is_none_or(|n| l.contains(&format!("{suffix}:{n}: ")))
                });
                if !on_stderr {
                    problems.push(format!("no one-line stderr message for {suffix}: {stderr}"));
                }
            }
        }
        if !problems.is_empty() {
            failures.push(format!("{}: {}", case.name, problems.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// A run that hangs is killed by the tests' watchdog (`common::output_within`)
/// and fails with its case's name, rather than hanging the suite: a run held
/// at discovery (`NANOLOAD_TEST_PAUSE`, whose signal file nobody removes)
/// under a 5 s limit is killed, and its process is gone.
#[test]
fn the_watchdog_kills_a_hung_run_and_names_its_case() -> TestResult {
    let dir = tempfile::tempdir()?;
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp)?;
    let mut cmd = Command::new(bin());
    cmd.arg(fixture("nanobot/home-a"))
        .arg(dir.path().join("out.parquet"))
        .env("TMPDIR", &tmp)
        .env(
            "NANOLOAD_TEST_PAUSE",
            format!("discovered:{}", dir.path().join("paused").display()),
        );
    let err = match output_within(&mut cmd, Duration::from_secs(5), "the held run") {
        Ok(o) => return Err(format!("the held run was not killed: {o:?}").into()),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        err,
        "the held run: killed after 5 s without finishing (a hang)"
    );
    // the run made its private temp dir, named by its pid, before it was held
    let pids: Vec<u32> = std::fs::read_dir(&tmp)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("nanoload-")?
                .split('-')
                .next()?
                .parse()
                .ok()
        })
        .collect();
    assert_eq!(pids.len(), 1, "{pids:?}");
    assert!(
        !nanoload::rundir::process_alive(pids[0]),
        "{} still runs",
        pids[0]
    );
    assert!(!dir.path().join("out.parquet").exists());
    Ok(())
}

#[test]
fn a_hot_journal_beside_a_nanoclaw_session_db_stays_in_home() -> TestResult {
    let runner = Runner::new()?;
    let home = tempfile::tempdir()?;
    copy_tree(&fixture("nanoclaw/home-a"), home.path())?;
    let sdir = home
        .path()
        .join("data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io");
    // a crashed writer: copy the db and its journal while a transaction is open
    let scratch = tempfile::tempdir()?;
    let live = scratch.path().join("inbound.db");
    std::fs::copy(sdir.join("inbound.db"), &live)?;
    let c = rusqlite::Connection::open(&live)?;
    c.execute_batch("PRAGMA cache_size = 1; BEGIN EXCLUSIVE;")?;
    for i in 0..300 {
        c.execute(
            "INSERT INTO messages_in (id, seq, kind, timestamp, content) VALUES (?1, ?2, 'chat', '2026-11-29T23:00:00.000Z', ?3)",
            rusqlite::params![format!("crash-{i}"), 1000 + 2 * i, format!("{{\"text\":\"{}\"}}", "w".repeat(400))],
        )?;
    }
    std::fs::copy(&live, sdir.join("inbound.db"))?;
    std::fs::copy(
        scratch.path().join("inbound.db-journal"),
        sdir.join("inbound.db-journal"),
    )?;
    drop(c);
    let before = tree(home.path());
    let o = runner.run(home.path(), &[], false)?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(tree(home.path()), before);
    assert_eq!(
        runner.query("SELECT count(*), count(*) FILTER (text LIKE 'www%') FROM events WHERE session_id = 'sess-1795989906279-qf49io' AND source_kind = 'nanoclaw.inbound' AND seq IS NOT NULL")?,
        vec![vec!["6".to_string(), "0".into()]]
    );
    Ok(())
}

/// A read-only copy of a fixture home (every mode without write, the run
/// as uid 65534 when the tests run as root, so no power of root's hides a
/// write) loads with the exit code of the home's own load and stays as it
/// was. (Every command on every fixture home, writable:
/// [`no_command_changes_any_fixture_home`].)
#[test]
fn a_read_only_home_loads_as_another_user_and_stays_unchanged() -> TestResult {
    let runner = Runner::new()?;
    for (f, want) in [
        ("nanobot/home-a", 1),
        ("nanoclaw/home-a", 0),
        ("nanoclaw/home-b", 1),
    ] {
        let copy = tempfile::tempdir_in(runner.base.path())?;
        copy_tree(&fixture(f), copy.path())?;
        world_readable(copy.path())?;
        let st = Command::new("chmod")
            .arg("-R")
            .arg("a-w")
            .arg(copy.path())
            .status()?;
        assert!(st.success());
        let before = home_state(copy.path())?;
        let o = runner.run(copy.path(), &[], true)?;
        assert_eq!(
            o.status.code(),
            Some(want),
            "{f} read-only: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(runner.out().is_file(), "{f}: no OUT");
        if let Some((path, b, a)) = first_change(&before, &home_state(copy.path())?) {
            panic!("{f} read-only copy changed at {path:?}: {b:?} -> {a:?}");
        }
        let _ = Command::new("chmod")
            .arg("-R")
            .arg("u+w")
            .arg(copy.path())
            .status();
    }
    Ok(())
}

/// Every home under `fixtures/`, found by what it holds, not by a list: a
/// directory with `home.tar.gz` (a real-writer home, the tarball unpacked),
/// one with a `home/` directory (that directory), and a directory holding
/// agent state itself (a `.nanobot*` entry or `data/v2.db`); nothing below a
/// home is searched. Paths relative to `fixtures/`, sorted.
fn fixture_home_dirs() -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let root = fixture("");
    let mut homes = Vec::new();
    let mut it = walkdir::WalkDir::new(&root)
        .min_depth(1)
        .sort_by_file_name()
        .into_iter();
    while let Some(e) = it.next() {
        let e = e?;
        if !e.file_type().is_dir() {
            continue;
        }
        let d = e.path();
        let agent_state = std::fs::read_dir(d)?
            .filter_map(Result::ok)
            .any(|x| x.file_name().to_string_lossy().starts_with(".nanobot"))
            || d.join("data/v2.db").is_file();
        if d.join("home.tar.gz").is_file() || d.join("home").is_dir() || agent_state {
            homes.push(d.strip_prefix(&root)?.to_string_lossy().into_owned());
            it.skip_current_dir();
        }
    }
    Ok(homes)
}

/// Everything a run could change under `root`, per entry (the root itself
/// included, by relative path): its kind and content (a file's SHA-256, a
/// link's target), size, mode, owner, link count, and mtime and ctime to
/// the nanosecond (a file written and its mtime put back still moves its
/// ctime; an entry created and removed again moves its directory's times).
fn home_state(root: &Path) -> Result<BTreeMap<String, String>, Box<dyn std::error::Error>> {
    use sha2::{Digest, Sha256};
    use std::os::unix::fs::MetadataExt;
    let mut m = BTreeMap::new();
    for e in walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
    {
        let e = e?;
        let md = std::fs::symlink_metadata(e.path())?;
        let kind = if md.file_type().is_symlink() {
            format!("link -> {}", std::fs::read_link(e.path())?.display())
        } else if md.is_dir() {
            "dir".to_string()
        } else if md.is_file() {
            let digest = Sha256::digest(std::fs::read(e.path())?);
            format!(
                "file {}",
                digest
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>()
            )
        } else {
            format!("special {:o}", md.mode() & 0o170000)
        };
        let rel = e.path().strip_prefix(root)?.to_string_lossy().into_owned();
        m.insert(
            rel,
            format!(
                "{kind} size={} mode={:o} owner={}:{} links={} mtime={}.{:09} ctime={}.{:09}",
                md.size(),
                md.mode(),
                md.uid(),
                md.gid(),
                md.nlink(),
                md.mtime(),
                md.mtime_nsec(),
                md.ctime(),
                md.ctime_nsec()
            ),
        );
    }
    Ok(m)
}

/// The first path whose state differs between two [`home_state`]s, with both
/// states (`None`: absent).
fn first_change(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Option<(String, Option<String>, Option<String>)> {
    before
        .keys()
        .chain(after.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .find(|k| before.get(*k) != after.get(*k))
        .map(|k| (k.clone(), before.get(k).cloned(), after.get(k).cloned()))
}

/// Every command that reads a HOME, and those that read what a load of it
/// wrote, on a private copy of one fixture home: its state is taken by this
/// test alone before the first command and compared after each. Returns the
/// failures (the command and the first changed path) and the commands run.
fn commands_leave_home_unchanged(
    rel: &str,
) -> Result<(Vec<String>, usize), Box<dyn std::error::Error>> {
    let home = crate::fixture_homes::materialize(rel)?;
    let out = tempfile::tempdir()?;
    let o = |p: &str| out.path().join(p).to_string_lossy().into_owned();
    let h = home.path().to_string_lossy().into_owned();
    let (parquet, tables, db, summary) = (
        o("out.parquet"),
        o("tables"),
        o("all.duckdb"),
        o("summary.json"),
    );
    let (cache, dataset, ledger) = (o("cache"), o("dataset"), o("ledger.duckdb"));
    let (cold, warm) = (o("cold.parquet"), o("warm.parquet"));
    let (export, export_tables, report) = (o("export.parquet"), o("export"), o("report.html"));
    // (what, arguments, the exit codes that show it ran)
    let commands: Vec<(&str, Vec<&str>, &[i32])> = vec![
        (
            "load (--tables, --db, --summary-json, --dataset)",
            vec![
                &h,
                &parquet,
                "--tables",
                &tables,
                "--db",
                &db,
                "--summary-json",
                &summary,
                "--dataset",
                &dataset,
            ],
            &[0, 1],
        ),
        (
            "load --cache (a cold cache)",
            vec![&h, &cold, "--cache", &cache],
            &[0, 1],
        ),
        (
            "load --cache (from the cache)",
            vec![&h, &warm, "--cache", &cache],
            &[0, 1],
        ),
        ("sync", vec!["sync", &h, &ledger], &[0, 1]),
        (
            "sync (again, into the ledger)",
            vec!["sync", &h, &ledger],
            &[0, 1],
        ),
        (
            "export",
            vec!["export", &ledger, &export, "--tables", &export_tables],
            &[0],
        ),
        ("usage HOME (its ledger kept)", vec!["usage", &h], &[0, 1]),
        (
            "usage HOME (again, from the kept ledger)",
            vec!["usage", &h],
            &[0, 1],
        ),
        (
            "sql HOME (from the kept ledger)",
            vec!["sql", &h, "select count(*) from events"],
            &[0],
        ),
        (
            "usage HOME --no-keep",
            vec!["usage", &h, "--no-keep"],
            &[0, 1],
        ),
        (
            "report",
            vec!["report", &parquet, "--tables", &tables, &report],
            &[0],
        ),
    ];
    let mut failures = Vec::new();
    let mut state = home_state(home.path())?;
    let stderr = out.path().join("stderr");
    for (what, args, ok) in &commands {
        let child = Command::new(bin())
            .args(args)
            .env("XDG_CACHE_HOME", out.path().join("xdg"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr)?)
            .spawn()?;
        let run = wait_within(child, Duration::from_secs(300), &format!("{rel}: {what}"))?;
        let code = run.status.code();
        if !code.is_some_and(|c| ok.contains(&c)) {
            failures.push(format!(
                "{rel}: {what} exited {code:?}: {}",
                std::fs::read_to_string(&stderr)?.trim_end()
            ));
        }
        let after = home_state(home.path())?;
        if let Some((path, b, a)) = first_change(&state, &after) {
            failures.push(format!(
                "{rel}: {what} changed HOME: first changed path {path:?}\n  before: {}\n  after:  {}",
                b.as_deref().unwrap_or("(absent)"),
                a.as_deref().unwrap_or("(absent)")
            ));
            // the next command is judged on its own
            state = after;
        }
    }
    Ok((failures, commands.len()))
}

/// No command that reads a HOME changes it — not its bytes, sizes, modes,
/// owners, links, mtimes or ctimes, nor its set of entries: on every home
/// under `fixtures/` (35: a new one is covered when it lands), each copied
/// to a private temp dir that no other test touches and stated before the
/// first command, the load (with `--tables`, `--db`, `--summary-json`,
/// `--dataset`), the load with a cold and a warm `--cache`, two `sync`s,
/// `export` from that ledger, `usage HOME` twice and `sql HOME` (from the
/// ledger kept for it), `usage HOME --no-keep` and `report` of the load each
/// leave it as it was; each must run (exit 0, or 1 on a home with bad
/// input), so a refusal cannot pass for one that read nothing.
#[test]
fn no_command_changes_any_fixture_home() -> TestResult {
    let homes = fixture_home_dirs()?;
    assert_eq!(homes.len(), 35, "fixture homes: {homes:?}");
    for h in crate::fixture_homes::homes()? {
        assert!(
            homes.contains(&h),
            "{h} is loaded by the goldens but not found here"
        );
    }
    // two workers: the homes are independent, and most commands are short
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<(Vec<String>, usize), String>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(rel) = homes.get(i) else { break };
                        out.push(
                            commands_leave_home_unchanged(rel).map_err(|e| format!("{rel}: {e}")),
                        );
                    }
                    out
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|_| vec![Err("a worker panicked".into())])
            })
            .collect()
    });
    let mut failures = Vec::new();
    let mut runs = 0;
    for r in results {
        match r {
            Ok((f, n)) => {
                failures.extend(f);
                runs += n;
            }
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(runs, 35 * 11);
    Ok(())
}

fn wait_for(p: &Path) -> TestResult {
    let start = Instant::now();
    while !p.exists() {
        if start.elapsed() > Duration::from_secs(120) {
            return Err(format!("{} never appeared", p.display()).into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

#[test]
fn a_killed_run_leaves_no_output_and_the_next_run_cleans_up() -> TestResult {
    let runner = Runner::new()?;
    let home = fixture("nanobot/home-a");
    let unrelated = runner.base.path().join("out/.keep.nanoload-1.tmp");
    std::fs::write(&unrelated, b"not ours")?;
    let (mut child, signal) = runner.spawn_paused(&home, &[], false, "written", Stdio::null())?;
    let pid = child.id();
    child.kill()?; // SIGKILL
    child.wait()?;
    let _ = std::fs::remove_file(&signal);
    assert!(
        !runner.out().exists(),
        "OUT appeared before the run finished"
    );
    let temp_out = runner
        .base
        .path()
        .join(format!("out/.out.parquet.nanoload-{pid}.tmp"));
    assert!(
        temp_out.exists(),
        "the killed run's temp output is where the next run looks"
    );
    let stale_dirs = |prefix: &str| -> Result<usize, std::io::Error> {
        Ok(std::fs::read_dir(runner.base.path().join("tmp"))?
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
            .count())
    };
    assert_eq!(stale_dirs(&format!("nanoload-{pid}-"))?, 1);
    let o = runner.run(&home, &[], false)?;
    assert_eq!(o.status.code(), Some(1));
    assert!(runner.out().exists());
    assert!(!temp_out.exists(), "stale temp output not cleaned");
    assert_eq!(
        stale_dirs(&format!("nanoload-{pid}-"))?,
        0,
        "stale private dir not cleaned"
    );
    assert!(unrelated.exists(), "a file that is not ours was removed");
    Ok(())
}

/// A link out of HOME to a directory is searched as discovery would walk
/// it when followed: a nanoclaw install three directories below (`src`),
/// or behind a second link inside the target (`vendor`), makes it a
/// `skipped_link` (exit 1, one stderr line each) that `--follow-links`
/// reads; a link to a directory holding no store (`music`, with a `data/`
/// folder and a loop inside) is only counted.
#[test]
fn a_link_out_of_home_holding_an_install_below_is_reported_until_followed() -> TestResult {
    let base = tempfile::tempdir()?;
    let base_path = base.path().canonicalize()?;
    let (home, outside) = (base_path.join("home"), base_path.join("outside"));
    std::fs::create_dir_all(&home)?;
    let install = outside.join("elsewhere/deep/er/nanoclaw");
    copy_tree(&fixture("nanoclaw/home-a"), &install)?;
    copy_tree(&fixture("nanoclaw/home-links"), &outside.join("far/nc"))?;
    std::fs::create_dir_all(outside.join("hop"))?;
    std::os::unix::fs::symlink(outside.join("far"), outside.join("hop/inner"))?;
    std::fs::create_dir_all(outside.join("music/data/albums"))?;
    std::fs::write(outside.join("music/data/albums/v2.txt"), b"not a store")?;
    std::os::unix::fs::symlink(outside.join("music"), outside.join("music/data/again"))?;
    std::os::unix::fs::symlink(outside.join("elsewhere"), home.join("src"))?;
    std::os::unix::fs::symlink(outside.join("hop"), home.join("vendor"))?;
    std::os::unix::fs::symlink(outside.join("music"), home.join("music"))?;
    let before = tree(&home);

    let skipped = run_home(&home, &[])?;
    assert_eq!(skipped.code(), Some(1), "{}", skipped.stderr());
    let err = skipped.stderr();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("nanoload: skipped_link"))
        .collect();
    let line = |link: &str, to: &str| {
        format!(
            "nanoload: skipped_link: {link}: symlink → {} leaves HOME: not read (use --follow-links to read it)",
            outside.join(to).display()
        )
    };
    assert_eq!(lines, [line("src", "elsewhere"), line("vendor", "hop")]);
    assert!(err.contains("; links skipped: 3\n"), "{err}");
    assert_eq!(skipped.one("SELECT count(*) FROM events")?, "0");
    assert_eq!(
        skipped.rows("SELECT kind, source_path FROM diagnostics ORDER BY ALL")?,
        strs(&[&["skipped_link", "src"], &["skipped_link", "vendor"]])
    );

    let followed = run_home(&home, &["--follow-links"])?;
    assert_eq!(followed.code(), Some(0), "{}", followed.stderr());
    let direct = |rel: &str| -> Result<String, Box<dyn std::error::Error>> {
        run_home(&fixture(rel), &[])?.one("SELECT count(*) FROM events")
    };
    assert_eq!(
        followed.rows("SELECT instance, count(*) FROM events GROUP BY 1 ORDER BY 1")?,
        vec![
            vec![
                "src/deep/er/nanoclaw".to_string(),
                direct("nanoclaw/home-a")?
            ],
            vec![
                "vendor/inner/nc".to_string(),
                direct("nanoclaw/home-links")?
            ],
        ]
    );
    assert_eq!(tree(&home), before);
    Ok(())
}

/// A load running beside this one (same OUT directory, same `--tables`,
/// same dataset, same TMPDIR) keeps its temp files: only a dead process's
/// are removed. The live load is a sleeping child whose pid names the temps.
#[test]
fn a_running_loads_temps_are_left_to_it() -> TestResult {
    let runner = Runner::new()?;
    let home = tempfile::tempdir()?;
    write_good(home.path())?;
    let mut live = Command::new("sleep").arg("120").spawn()?;
    let mut dead = Command::new("true").spawn()?;
    dead.wait()?;
    let (live_pid, dead_pid) = (live.id(), dead.id());
    let out = runner.base.path().join("out");
    let dataset = out.join("ds");
    std::fs::create_dir_all(out.join("tables"))?;
    let temps = |pid: u32| {
        vec![
            out.join(format!(".out.parquet.nanoload-{pid}.tmp")),
            out.join(format!("tables/.sessions.parquet.nanoload-{pid}.tmp")),
            dataset.join(format!(
                ".nanoload-tmp-{pid}-h/events/host=h/part-0.parquet"
            )),
            runner
                .base
                .path()
                .join(format!("tmp/nanoload-{pid}-AbC123/stage/x")),
        ]
    };
    for f in temps(live_pid).iter().chain(&temps(dead_pid)) {
        std::fs::create_dir_all(f.parent().ok_or("parent")?)?;
        std::fs::write(f, b"in progress")?;
    }
    let o = output_within(
        &mut runner.command(
            home.path(),
            &["--dataset", dataset.to_str().ok_or("path")?, "--host", "h"],
            false,
        ),
        HANG_LIMIT,
        "a dataset load beside a live writer",
    )?;
    live.kill()?;
    live.wait()?;
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in temps(live_pid) {
        assert_eq!(std::fs::read(&f)?, b"in progress", "{}", f.display());
    }
    for f in temps(dead_pid) {
        assert!(!f.exists(), "{} of a dead run was kept", f.display());
    }
    Ok(())
}

/// An output that is a directory (`--tables T` with `T/sessions.parquet` a
/// directory) stops the run before any work: exit 2, one line, and OUT as
/// it was — never replaced while another output is not.
#[test]
fn an_output_that_cannot_be_replaced_stops_the_run_before_any_is() -> TestResult {
    let runner = Runner::new()?;
    let home = tempfile::tempdir()?;
    write_good(home.path())?;
    let out = runner.out();
    let tables = runner.base.path().join("out/tables");
    // an earlier load's OUT, which this run would replace
    let earlier = output_within(
        &mut runner.command(home.path(), &[], false),
        HANG_LIMIT,
        "the earlier load",
    )?;
    assert_eq!(earlier.status.code(), Some(0), "{earlier:?}");
    let earlier = std::fs::read(&out)?;
    std::fs::remove_dir_all(&tables)?;
    std::fs::create_dir_all(tables.join("sessions.parquet"))?;
    let o = output_within(
        &mut runner.command(home.path(), &[], false),
        HANG_LIMIT,
        "the load onto a directory",
    )?;
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "nanoload: error: cannot write {}: it is a directory, not the sessions table nanoload writes there; nothing was written (move it away or choose another path)\n",
            tables.join("sessions.parquet").display()
        )
    );
    assert_eq!(std::fs::read(&out)?, earlier);
    let names = |d: &Path| -> Result<Vec<String>, std::io::Error> {
        let mut v: Vec<String> = std::fs::read_dir(d)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        v.sort();
        Ok(v)
    };
    assert_eq!(names(&tables)?, ["sessions.parquet"]);
    assert_eq!(
        names(&runner.base.path().join("out"))?,
        ["out.parquet", "tables"]
    );
    Ok(())
}

/// No command replaces a file nanoload did not write, nor a ledger: a load
/// whose OUT is a ledger (`sync` forgotten), `--db` or `export`'s OUT naming
/// the ledger, `report` or `otlp` writing onto it, OUT a user's DuckDB
/// database, a text, a SQLite database, a `--tables` file or
/// `--summary-json` of another program, a foreign file in a dataset's
/// partition, and `sync` into a DuckDB database or a file that is not a
/// ledger. Each is refused with exit 2 and one line naming the path and
/// what it is; every file keeps its bytes and no temp file is left. The
/// same outputs written again onto nanoload's own earlier ones succeed.
#[test]
fn no_command_replaces_a_ledger_or_a_file_nanoload_did_not_write() -> TestResult {
    let d = tempfile::tempdir()?;
    let p = |n: &str| d.path().join(n);
    let home = fixture("nanoclaw/home-a");
    let run = |args: &[&std::ffi::OsStr]| {
        output_within(
            Command::new(bin()).args(args),
            HANG_LIMIT,
            &format!("nanoload {args:?}"),
        )
    };
    let os = |s: &Path| s.as_os_str().to_owned();
    // nanoload's own outputs (the load writes every kind), and a ledger
    let load_all = || {
        run(&[
            home.as_os_str(),
            &os(&p("out.parquet")),
            "--tables".as_ref(),
            &os(&p("tables")),
            "--db".as_ref(),
            &os(&p("out.duckdb")),
            "--summary-json".as_ref(),
            &os(&p("summary.json")),
        ])
    };
    let first = load_all()?;
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let synced = run(&["sync".as_ref(), home.as_os_str(), &os(&p("history.duckdb"))])?;
    assert_eq!(synced.status.code(), Some(0), "{synced:?}");
    // other programs' files
    let user = p("budget.duckdb");
    duckdb::Connection::open(&user)?
        .execute_batch("CREATE TABLE budget (month VARCHAR, usd DOUBLE); INSERT INTO budget VALUES ('2026-11', 12.5);")?;
    let foreign_parquet = p("measurements.parquet");
    duckdb::Connection::open_in_memory()?.execute_batch(&format!(
        "COPY (SELECT 1 AS sensor, 2.5 AS reading) TO '{}' (FORMAT parquet)",
        foreign_parquet.display()
    ))?;
    std::fs::write(p("notes.txt"), "my notes\n")?;
    let sqlite = p("app.sqlite");
    rusqlite::Connection::open(&sqlite)?
        .execute_batch("CREATE TABLE t (a); INSERT INTO t VALUES (1);")?;
    let theirs = p("theirs");
    std::fs::create_dir_all(theirs.join("tables"))?;
    std::fs::copy(&foreign_parquet, theirs.join("tables/sessions.parquet"))?;
    let dataset = p("fleet");
    std::fs::create_dir_all(dataset.join("events/host=box"))?;
    std::fs::write(dataset.join("events/host=box/README.txt"), "kept by hand\n")?;

    let ledger = p("history.duckdb");
    let ledger_is = "it is a nanoload ledger (the history `nanoload sync` keeps)";
    let cases: Vec<(Vec<std::ffi::OsString>, PathBuf, String)> = vec![
        // `nanoload ~ history.duckdb`: the word sync forgotten
        (
            vec![os(&home), os(&ledger)],
            ledger.clone(),
            format!("{ledger_is}, not an events table nanoload wrote (OUT.parquet)"),
        ),
        (
            vec![os(&home), os(&p("new.parquet")), "--db".into(), os(&ledger)],
            ledger.clone(),
            format!("{ledger_is}, not a --db file nanoload wrote"),
        ),
        (
            vec!["export".into(), os(&ledger), os(&ledger)],
            ledger.clone(),
            format!("{ledger_is}, not an events table nanoload wrote (OUT.parquet)"),
        ),
        (
            vec!["report".into(), os(&p("out.parquet")), "--tables".into(), os(&p("tables")), os(&ledger)],
            ledger.clone(),
            format!("{ledger_is}, not a page `nanoload report` wrote"),
        ),
        (
            vec!["otlp".into(), os(&p("out.parquet")), "--tables".into(), os(&p("tables")), os(&ledger)],
            ledger.clone(),
            format!("{ledger_is}, not traces `nanoload otlp` wrote"),
        ),
        (
            vec![os(&home), os(&user)],
            user.clone(),
            "it is a DuckDB database (tables: budget), not an events table nanoload wrote (OUT.parquet)".into(),
        ),
        (
            vec![os(&home), os(&p("notes.txt"))],
            p("notes.txt"),
            "it is a text file of 9 bytes, not an events table nanoload wrote (OUT.parquet)".into(),
        ),
        (
            vec![os(&home), os(&sqlite)],
            sqlite.clone(),
            "it is a SQLite database, not an events table nanoload wrote (OUT.parquet)".into(),
        ),
        (
            vec![os(&home), os(&foreign_parquet)],
            foreign_parquet.clone(),
            "it is a Parquet file (columns: sensor, reading), not an events table nanoload wrote (OUT.parquet)".into(),
        ),
        (
            vec![os(&home), os(&p("new.parquet")), "--tables".into(), os(&theirs.join("tables"))],
            theirs.join("tables/sessions.parquet"),
            "it is a Parquet file (columns: sensor, reading), not the sessions table nanoload writes there".into(),
        ),
        (
            vec![os(&home), os(&p("new.parquet")), "--summary-json".into(), os(&p("notes.txt"))],
            p("notes.txt"),
            "it is a text file of 9 bytes, not a --summary-json file nanoload wrote".into(),
        ),
        (
            vec![os(&home), "--dataset".into(), os(&dataset), "--host".into(), "box".into()],
            dataset.join("events/host=box/README.txt"),
            "it is a text file of 13 bytes, not an events table nanoload wrote (OUT.parquet)".into(),
        ),
        (
            vec!["sync".into(), os(&home), os(&user)],
            user.clone(),
            "it is a DuckDB database (tables: budget), not a nanoload ledger; nothing done (a ledger is a file `nanoload sync` created)".into(),
        ),
        (
            vec!["sync".into(), os(&home), os(&p("out.parquet"))],
            p("out.parquet"),
            "it is a Parquet file (columns: agent, instance, session_id, parent_session_id, project_path, … 20 more), not a nanoload ledger; nothing done (a ledger is a file `nanoload sync` created)".into(),
        ),
    ];
    // every file's bytes, mode and mtime, and every entry (a directory's
    // own mtime moves when a probe's temp file comes and goes)
    let files = || {
        tree(d.path())
            .into_iter()
            .map(|(k, v)| {
                if v.starts_with("dir ") {
                    (k, "dir".into())
                } else {
                    (k, v)
                }
            })
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    for (args, victim, what) in &cases {
        let before = files();
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        let o = run(&args)?;
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        let line = err
            .lines()
            .find(|l| {
                l.starts_with("nanoload: error: ") && l.contains(&victim.display().to_string())
            })
            .unwrap_or_default();
        assert!(
            line.contains(what.as_str()),
            "{args:?}: the line naming {} says what it is\n{err}",
            victim.display()
        );
        assert_eq!(files(), before, "{args:?} changed a file");
    }
    // the ledger still syncs and exports; its history is whole
    let again = run(&["sync".as_ref(), home.as_os_str(), ledger.as_os_str()])?;
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    // nanoload's own outputs are replaced by the same outputs again
    let second = load_all()?;
    assert_eq!(second.status.code(), Some(0), "{second:?}");
    for (args, what) in [
        (
            vec![
                "report".into(),
                os(&p("out.parquet")),
                "--tables".into(),
                os(&p("tables")),
                os(&p("r.html")),
            ],
            "report",
        ),
        (
            vec![
                "otlp".into(),
                os(&p("out.parquet")),
                "--tables".into(),
                os(&p("tables")),
                os(&p("t.jsonl")),
            ],
            "otlp",
        ),
        (
            vec![
                os(&home),
                "--dataset".into(),
                os(&p("fleet2")),
                "--host".into(),
                "box".into(),
            ],
            "dataset",
        ),
    ] {
        for round in 0..2 {
            let args: Vec<&std::ffi::OsStr> = args
                .iter()
                .map(|a: &std::ffi::OsString| a.as_os_str())
                .collect();
            let o = run(&args)?;
            assert_eq!(o.status.code(), Some(0), "{what} round {round}: {o:?}");
        }
    }
    let export = run(&[
        "export".as_ref(),
        ledger.as_os_str(),
        &os(&p("out.parquet")),
    ])?;
    assert_eq!(export.status.code(), Some(0), "{export:?}");
    Ok(())
}

/// A rename that fails after the commit's checks passed (here: a
/// directory appears at `--tables T/tz_offsets.parquet` between the checks
/// and the renames) stops the commit with exit code 3 and one line per
/// output saying whether it is this run's (`new`) or as it was (`old`);
/// no temp file is left.
#[test]
fn a_rename_that_fails_after_the_checks_names_each_output_new_or_old() -> TestResult {
    let runner = Runner::new()?;
    let home = tempfile::tempdir()?;
    write_good(home.path())?;
    let out = runner.out();
    let tables = runner.base.path().join("out/tables");
    let summary = runner.base.path().join("out/summary.json");
    // an earlier load's OUT (a file of another program would be refused
    // before any work), without its tables
    let earlier = output_within(
        &mut runner.command(home.path(), &[], false),
        HANG_LIMIT,
        "the earlier load",
    )?;
    assert_eq!(earlier.status.code(), Some(0), "{earlier:?}");
    std::fs::remove_dir_all(&tables)?;
    let args = ["--summary-json", summary.to_str().ok_or("path")?];
    let (child, signal) =
        runner.spawn_paused(home.path(), &args, false, "probed", Stdio::piped())?;
    std::fs::create_dir_all(tables.join("tz_offsets.parquet/inside"))?;
    std::fs::write(tables.join("diagnostics.parquet"), b"an earlier table")?;
    std::fs::remove_file(&signal)?;
    let o = child.wait_with_output()?;
    assert_eq!(o.status.code(), Some(3));
    let t = |name: &str| tables.join(name).display().to_string();
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        [
            format!(
                "nanoload: error: cannot write {}: Is a directory (os error 21); the outputs are partly replaced: 3 new, 4 old",
                t("tz_offsets.parquet")
            ),
            format!("nanoload: new: {}", out.display()),
            format!("nanoload: new: {}", t("sessions.parquet")),
            format!("nanoload: new: {}", t("llm_calls.parquet")),
            format!("nanoload: old: {}", t("tz_offsets.parquet")),
            format!("nanoload: old: {}", t("diagnostics.parquet")),
            format!("nanoload: old: {} (absent)", t("sources.parquet")),
            format!("nanoload: old: {} (absent)", summary.display()),
            String::new(),
        ]
        .join("\n")
    );
    let c = duckdb::Connection::open_in_memory()?;
    assert_eq!(
        query(
            &c,
            &format!(
                "SELECT count(*) FROM read_parquet('{}') WHERE session_id = 'good:1'",
                out.display()
            )
        )?,
        strs(&[&["3"]])
    );
    assert_eq!(
        std::fs::read(tables.join("diagnostics.parquet"))?,
        b"an earlier table"
    );
    assert!(!summary.exists());
    let temps: Vec<String> = walkdir::WalkDir::new(runner.base.path().join("out"))
        .into_iter()
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".nanoload-"))
        .collect();
    assert_eq!(temps, Vec::<String>::new());
    Ok(())
}

/// What a run gave, for comparing runs: its exit code, its stderr with the
/// times taken out (`took 0.42s`, the `--timings` block), and the bytes of
/// OUT and of every `--tables` file, by name.
type Outcome = (Option<i32>, String, Vec<(String, Vec<u8>)>);

fn outcome(o: &Output, files: &[PathBuf]) -> Result<Outcome, Box<dyn std::error::Error>> {
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stderr = stderr.split("sql plan: ").next().unwrap_or_default();
    let took = regex::Regex::new(r"took \d+\.\d+s")?;
    let stderr = took.replace_all(stderr, "took _s").into_owned();
    let mut bytes = Vec::new();
    for f in files {
        if f.is_dir() {
            let mut names: Vec<PathBuf> = std::fs::read_dir(f)?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            names.sort();
            for n in names {
                bytes.push((n.display().to_string(), std::fs::read(&n)?));
            }
        } else {
            bytes.push((f.display().to_string(), std::fs::read(f)?));
        }
    }
    Ok((o.status.code(), stderr, bytes))
}

/// The first difference between two outcomes, named (`None` when equal).
fn outcome_difference(a: &Outcome, b: &Outcome) -> Option<String> {
    if a.0 != b.0 {
        return Some(format!("exit {:?} against {:?}", b.0, a.0));
    }
    if a.1 != b.1 {
        return Some(format!("stderr\n{}\nagainst\n{}", b.1, a.1));
    }
    let names = |o: &Outcome| o.2.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    if names(a) != names(b) {
        return Some(format!("files {:?} against {:?}", names(b), names(a)));
    }
    a.2.iter()
        .zip(&b.2)
        .find(|((_, x), (_, y))| x != y)
        .map(|((n, _), _)| format!("the bytes of {n}"))
}

/// The same input gives the same exit code, stderr (but the times) and
/// bytes of OUT and every `--tables` file with `--threads 1`, `2` and `8`,
/// with the SQL steps forced onto all threads, and from a copy of the home
/// whose files were created in the reverse order (mtimes kept).
#[test]
fn same_bytes_across_threads_and_file_creation_order() -> TestResult {
    let runner = Runner::new()?;
    let home = fixture("nanobot/home-a");
    let files = [runner.out(), runner.base.path().join("out/tables")];
    let mut outs = Vec::new();
    for t in ["1", "2", "8"] {
        let o = runner.run(&home, &["--threads", t], false)?;
        outs.push((format!("--threads {t}"), outcome(&o, &files)?));
    }
    // a home this small runs its SQL steps on one thread (`steps::StepThreads`):
    // once more with them on all eight
    let all = runner.run_with_env(
        &home,
        &["--threads", "8", "--timings"],
        false,
        &[("NANOLOAD_TEST_STEP_THREADS", "all")],
    )?;
    let all_stderr = String::from_utf8_lossy(&all.stderr);
    assert!(
        all_stderr.contains("\nsql plan: chain=tables join=hash step_threads=all\n"),
        "{all_stderr}"
    );
    outs.push(("the steps on all threads".into(), outcome(&all, &files)?));
    // a copy whose files were created in the reverse order, mtimes kept
    let copy = tempfile::tempdir()?;
    let mut home_files: Vec<PathBuf> = walkdir::WalkDir::new(&home)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect();
    home_files.sort();
    home_files.reverse();
    for f in &home_files {
        let rel = f.strip_prefix(&home)?;
        let dst = copy.path().join(rel);
        std::fs::create_dir_all(dst.parent().ok_or("parent")?)?;
        std::fs::copy(f, &dst)?;
        let md = std::fs::metadata(f)?;
        filetime::set_file_mtime(&dst, filetime::FileTime::from_last_modification_time(&md))?;
    }
    // OUT and stderr hold no path of HOME itself, so the copy gives the same
    let o = runner.run(copy.path(), &[], false)?;
    outs.push((
        "the copy made in reverse order".into(),
        outcome(&o, &files)?,
    ));
    assert_eq!(outs[0].1.0, Some(1), "{}", outs[0].1.1);
    for (what, o) in &outs[1..] {
        if let Some(d) = outcome_difference(&outs[0].1, o) {
            return Err(format!("{what} changed {d}").into());
        }
    }
    Ok(())
}

/// `--tables` and `--db` are the same bytes whatever `--threads` (1, 2, 4,
/// and 2 again), as are OUT, the exit code and stderr (but the times), on a
/// nanobot and a nanoclaw home.
#[test]
fn tables_and_db_are_the_same_bytes_across_thread_counts() -> TestResult {
    for rel in ["nanobot/home-a", "nanoclaw/home-a"] {
        let home = crate::fixture_homes::materialize(rel)?;
        let mut outs: Vec<(String, Outcome)> = Vec::new();
        for t in ["1", "2", "4", "2"] {
            let dir = tempfile::tempdir()?;
            let (out, tables, db) = (
                dir.path().join("out.parquet"),
                dir.path().join("tables"),
                dir.path().join("all.duckdb"),
            );
            let o = output_within(
                Command::new(bin())
                    .arg(home.path())
                    .arg(&out)
                    .arg("--tables")
                    .arg(&tables)
                    .arg("--db")
                    .arg(&db)
                    .args(["--threads", t, "--progress", "never"]),
                HANG_LIMIT,
                &format!("{rel} --threads {t}"),
            )?;
            // the files by their names in the run's own directory
            let mut got = outcome(&o, &[out, tables, db])?;
            for (name, _) in got.2.iter_mut() {
                *name = name.replace(&dir.path().display().to_string(), "DIR");
            }
            outs.push((format!("--threads {t}"), got));
        }
        assert_eq!(outs[0].1.2.len(), 7, "{rel}: {:?}", outs[0].1.1);
        for (what, o) in &outs[1..] {
            if let Some(d) = outcome_difference(&outs[0].1, o) {
                return Err(format!("{rel}: {what} changed {d}").into());
            }
        }
    }
    Ok(())
}

/// The message lines of generation `g` of the live JSONL session.
fn jsonl_lines(g: u64) -> u64 {
    3 + g % 5
}

/// The rows of generation `g` of the live database session.
fn db_rows(g: u64) -> u64 {
    20 + g % 17
}

/// Write generation `g` of both live stores: the JSONL session rewritten
/// whole (a temp file renamed over it, as nanobot's save does) and the
/// database session's rows replaced in one transaction. Every line and row
/// names its generation, and their number changes with it, so a read that
/// mixes two generations or takes part of one shows.
fn write_generation(w: &rusqlite::Connection, jsonl: &Path, g: u64) -> Result<(), String> {
    let mut body = String::from(
        "{\"_type\": \"metadata\", \"key\": \"live:1\", \"created_at\": \"2026-10-05T09:00:00\", \"updated_at\": \"2026-10-05T09:00:59\", \"metadata\": {}, \"last_archived\": 0}\n",
    );
    let n = jsonl_lines(g);
    for i in 0..n {
        let role = if i % 2 == 0 { "user" } else { "assistant" };
        body.push_str(&format!(
            "{{\"role\": \"{role}\", \"content\": \"g{g} {i}/{n}\", \"timestamp\": \"2026-10-05T09:00:{i:02}\"}}\n"
        ));
    }
    let tmp = jsonl.with_extension("tmp");
    std::fs::write(&tmp, body).map_err(|e| e.to_string())?;
    std::fs::rename(&tmp, jsonl).map_err(|e| e.to_string())?;
    let sql = |e: rusqlite::Error| e.to_string();
    w.execute("BEGIN IMMEDIATE", []).map_err(sql)?;
    w.execute("DELETE FROM messages WHERE session_key = 'db:1'", [])
        .map_err(sql)?;
    let n = db_rows(g);
    for pos in 0..n {
        let role = if pos % 2 == 0 { "user" } else { "assistant" };
        w.execute(
            "INSERT INTO messages VALUES ('db:1', ?1, ?2)",
            rusqlite::params![
                i64::try_from(pos).map_err(|e| e.to_string())?,
                format!(
                    "{{\"role\":\"{role}\",\"content\":\"g{g} {pos}/{n}\",\"timestamp\":\"2026-10-05T11:00:{pos:02}\"}}"
                )
            ],
        )
        .map_err(sql)?;
    }
    w.execute("COMMIT", []).map_err(sql)?;
    // checkpoints: the WAL copied back into the database now and then,
    // and sometimes truncated; between them the newest rows are in the WAL
    // only
    if g.is_multiple_of(50) {
        let mode = if g.is_multiple_of(200) {
            "TRUNCATE"
        } else {
            "PASSIVE"
        };
        w.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |_| Ok(()))
            .map_err(sql)?;
    }
    Ok(())
}

/// The generation a run read of one session: its rows' texts (`g<gen>
/// <i>/<n>`, in order) must be exactly the `n` lines of one generation,
/// whole; returns that generation.
fn one_whole_generation(
    what: &str,
    texts: &[Vec<String>],
    lines: fn(u64) -> u64,
) -> Result<u64, String> {
    let parsed: Vec<(u64, u64, u64)> = texts
        .iter()
        .map(|r| {
            let t = r.first().map(String::as_str).unwrap_or_default();
            let (g, rest) = t
                .strip_prefix('g')
                .and_then(|t| t.split_once(' '))
                .ok_or_else(|| format!("{what}: not a generation's line: {t:?}"))?;
            let (i, n) = rest
                .split_once('/')
                .ok_or_else(|| format!("{what}: not a generation's line: {t:?}"))?;
            let num = |s: &str| s.parse::<u64>().map_err(|e| format!("{what}: {t:?}: {e}"));
            Ok((num(g)?, num(i)?, num(n)?))
        })
        .collect::<Result<_, String>>()?;
    let g = parsed
        .first()
        .map(|p| p.0)
        .ok_or_else(|| format!("{what}: no rows"))?;
    let want: Vec<(u64, u64, u64)> = (0..lines(g)).map(|i| (g, i, lines(g))).collect();
    if parsed != want {
        return Err(format!(
            "{what}: a torn read, not the {} lines of generation {g}: {parsed:?}",
            lines(g)
        ));
    }
    Ok(g)
}

/// Wait for `child` for at most `limit`; past it, kill it and fail naming
/// `what` (a hung run fails its test instead of hanging the suite).
fn wait_within(
    mut child: std::process::Child,
    limit: Duration,
    what: &str,
) -> Result<Output, Box<dyn std::error::Error>> {
    let start = Instant::now();
    while child.try_wait()?.is_none() {
        if start.elapsed() > limit {
            child.kill()?;
            child.wait()?;
            return Err(format!("{what}: still running after {limit:?}, killed").into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(child.wait_with_output()?)
}

/// What one run of [`a_live_writer_never_tears_a_snapshot`] read: the
/// last generation written whole before its extraction began, the
/// generations it read of each session, and the generation being written
/// when it ended.
#[derive(Debug)]
struct Read {
    before: u64,
    db_gen: u64,
    jsonl_gen: u64,
    end: u64,
}

/// A live writer never tears a snapshot. A writer thread rewrites a JSONL
/// session (a temp file renamed over it) and commits to a WAL database
/// session (checkpointed now and then), one generation after another
/// (2 ms apart), each generation different in every line and in its
/// number of lines. Five loads run while it writes; each pauses after
/// discovery (`NANOLOAD_TEST_PAUSE=discovered`) until the writer has
/// written one more generation whole, so every run reads while writes go
/// on. Every run must exit 0 and read both sessions, each exactly one whole
/// generation (every line of one counter, as many lines as that generation
/// has), no older than the one written before its extraction began
/// (nothing committed before the snapshot is lost). No sleep decides
/// anything: a copy that keeps changing is retried by nanoload itself.
#[test]
fn a_live_writer_never_tears_a_snapshot() -> TestResult {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    let runner = Runner::new()?;
    let home = tempfile::tempdir()?;
    let db = home.path().join(NS).join("sessions.sqlite3");
    session_db(&db, 1, GOOD_RECORD, true)?;
    let w = rusqlite::Connection::open(&db)?;
    w.pragma_update(None, "journal_mode", "WAL")?;
    let jsonl = home.path().join(GOOD_NS).join("bGl2ZTox.jsonl");
    std::fs::create_dir_all(home.path().join(GOOD_NS))?;
    write_generation(&w, &jsonl, 1)?;
    // the generation being written, and the last one written whole
    let begun = std::sync::Arc::new(AtomicU64::new(1));
    let done = std::sync::Arc::new(AtomicU64::new(1));
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let writer = {
        let (begun, done, stop, jsonl) = (begun.clone(), done.clone(), stop.clone(), jsonl.clone());
        std::thread::spawn(move || -> Result<(), String> {
            let mut g = 1;
            while !stop.load(Ordering::SeqCst) {
                g += 1;
                begun.store(g, Ordering::SeqCst);
                write_generation(&w, &jsonl, g)?;
                done.store(g, Ordering::SeqCst);
                // an agent commits a turn at a time, not back to back: a
                // writer that never pauses leaves the copy no window in its
                // ten tries (nanoload then says so and exits 1). The pause
                // decides no outcome: every read is still checked whole.
                std::thread::sleep(Duration::from_millis(2));
            }
            Ok(())
        })
    };
    let mut reads = Vec::new();
    let mut failure = None;
    for run in 0..5 {
        let outcome = (|| -> Result<Read, Box<dyn std::error::Error>> {
            // the run waits after discovery until the writer has written
            // one more generation whole: written while the run goes on, and
            // before its extraction, which must not lose it
            let (child, signal) =
                runner.spawn_paused(home.path(), &[], false, "discovered", Stdio::piped())?;
            let paused = done.load(Ordering::SeqCst);
            while done.load(Ordering::SeqCst) == paused {
                if writer.is_finished() {
                    return Err("the writer stopped".into());
                }
                std::thread::yield_now();
            }
            let before = done.load(Ordering::SeqCst);
            std::fs::remove_file(&signal)?;
            let o = wait_within(child, Duration::from_secs(300), &format!("run {run}"))?;
            let end = begun.load(Ordering::SeqCst);
            let err = String::from_utf8_lossy(&o.stderr);
            if o.status.code() != Some(0) {
                return Err(format!("run {run} exited {:?}: {err}", o.status.code()).into());
            }
            let db_gen = one_whole_generation(
                "the database session",
                &runner.query("SELECT text FROM events WHERE session_id = 'db:1' AND seq IS NOT NULL ORDER BY seq")?,
                db_rows,
            )?;
            let jsonl_gen = one_whole_generation(
                "the JSONL session",
                &runner.query("SELECT text FROM events WHERE session_id = 'live:1' AND text LIKE 'g%' ORDER BY seq")?,
                jsonl_lines,
            )?;
            Ok(Read {
                before,
                db_gen,
                jsonl_gen,
                end,
            })
        })();
        match outcome {
            Ok(r) => reads.push(r),
            Err(e) => {
                failure = Some(e.to_string());
                break;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    writer.join().map_err(|_| "writer panicked")??;
    if let Some(e) = failure {
        return Err(e.into());
    }
    assert_eq!(reads.len(), 5);
    for (run, r) in reads.iter().enumerate() {
        for (what, g) in [("database", r.db_gen), ("JSONL", r.jsonl_gen)] {
            assert!(
                (r.before..=r.end).contains(&g),
                "run {run}: the {what} session read generation {g}, not one of {}..={} (written before its extraction, to its end)",
                r.before,
                r.end
            );
        }
    }
    Ok(())
}

#[test]
fn every_output_of_every_fixture_is_free_of_secrets() -> TestResult {
    let secrets = fixture_secrets()?;
    // the lists the EXPECTED files give: 9 nanobot strings + its pairing code, and the nanoclaw ones
    assert!(secrets.len() >= 12, "{secrets:?}");
    assert!(secrets.iter().any(|s| s == "I7NE-KJ8F"));
    assert!(
        secrets
            .iter()
            .any(|s| s == "ghp_Q7xT2mVb9LkR4sWz8NcY1pHd6FjA3eUo5iGt")
    );
    // keys users pasted into chats, both agents, written by each agent's code
    for pasted in [
        "sk-proj-kZY7n8O0HktJbhZE6fSAy9oLZZMKzNG9ImkXZVNI",
        "ghp_fEeM6ZSAzZOSFmiPkxMjIEMUIAGy3uFx46yR",
    ] {
        assert!(secrets.iter().any(|s| s == pasted), "{pasted}");
    }
    assert!(
        secrets.iter().any(|s| s.starts_with("sk-ant-")),
        "{secrets:?}"
    );
    for f in [
        "nanobot/home-a",
        "nanoclaw/home-a",
        "nanoclaw/home-b",
        "nanoclaw/home-2-0",
        "nanoclaw/home-mcp",
        "realwriter/pasted-secrets",
    ] {
        let home = crate::fixture_homes::materialize(f)?;
        for extra in [&[][..], &["--include-thinking"][..]] {
            let (code, all) = all_outputs(home.path(), extra)?;
            assert!(matches!(code, Some(0) | Some(1)));
            assert!(all.len() > 1000);
            for s in &secrets {
                assert!(!all.contains(s.as_str()), "{f}: secret {s} in an output");
            }
        }
    }
    Ok(())
}

/// Keys a user pasted into a nanobot chat (`fixtures/realwriter/pasted-secrets`,
/// written by nanobot's own code): present verbatim in the home, absent from
/// every output, each replaced by `[redacted:<rule>]` with the rest of its
/// text kept, counted per store in `sources.redactions` and in the summary;
/// `--no-redact` keeps them and says so.
#[test]
fn secrets_pasted_into_a_nanobot_chat_are_redacted_token_by_token() -> TestResult {
    let home = crate::fixture_homes::materialize("realwriter/pasted-secrets")?;
    let facts: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(fixture(
        "realwriter/pasted-secrets/facts.json",
    ))?)?;
    let planted: Vec<String> = facts["secrets"]
        .as_array()
        .ok_or("secrets")?
        .iter()
        .filter_map(|v| v.as_str().map(String::from))
        .collect();
    let sessions = home.path().join(".nanobot/sessions");
    let mut session_text = String::new();
    for e in walkdir::WalkDir::new(&sessions) {
        let e = e?;
        if e.file_type().is_file() {
            session_text.push_str(&String::from_utf8_lossy(&std::fs::read(e.path())?));
        }
    }
    let pasted: Vec<&String> = planted
        .iter()
        .filter(|s| session_text.contains(s.as_str()))
        .collect();
    assert_eq!(
        pasted.len(),
        3,
        "the three pasted canaries are in the session file: {planted:?}"
    );

    let (run, all) = run_with_all_outputs(home.path(), &[])?;
    assert_eq!(run.code(), Some(0), "{}", run.stderr());
    for s in &planted {
        assert!(!all.contains(s.as_str()), "secret {s} in an output");
    }
    assert_eq!(
        run.rows(
            "SELECT turn_type, text FROM events
             WHERE text LIKE '%[redacted:%' AND source_kind = 'nanobot.session_jsonl' ORDER BY ordinal"
        )?,
        strs(&[
            &["user", "here is my OpenAI key [redacted:sk_key] - put it in .env please"],
            &["user", "and the GitHub token is [redacted:github_token]; show me the auth header for it"],
            &["tool_use", "echo Authorization: Bearer [redacted:bearer_token]"],
            &["assistant", "Use the header Authorization: Bearer [redacted:bearer_token] (the token stays in .env)."],
        ])
    );
    // the tool call's arguments in native: only the token goes
    assert_eq!(
        run.one(
            "SELECT native::JSON->>'arguments' FROM events
             WHERE tool_name = 'write_file' AND source_kind = 'nanobot.session_jsonl'"
        )?,
        r#"{"content": "OPENAI_API_KEY=[redacted:sk_key]\n", "path": ".env"}"#
    );
    assert_eq!(
        run.rows(
            "SELECT source_kind, redactions FROM sources WHERE redactions <> '{}' ORDER BY 1"
        )?,
        strs(&[
            &["nanobot.cli_history", r#"{"github_token":1,"sk_key":1}"#],
            &[
                "nanobot.session_jsonl",
                r#"{"bearer_token":3,"github_token":1,"sk_key":2}"#
            ],
        ])
    );
    assert!(
        run.stderr()
            .contains("secrets redacted: 8 (bearer_token 3, github_token 2, sk_key 3)"),
        "{}",
        run.stderr()
    );

    // --no-redact: verbatim, with a warning; the config key still never leaves config.json
    let verbatim = run_home(home.path(), &["--no-redact"])?;
    assert_eq!(verbatim.code(), Some(0));
    assert!(verbatim.stderr().starts_with(
        "nanoload: warning: --no-redact: secrets in chat text and native values are written verbatim; keep the output private\n"
    ));
    let texts = verbatim.rows(
        "SELECT string_agg(coalesce(text, '') || ' ' || coalesce(native, ''), ' ') FROM events",
    )?;
    for s in &pasted {
        assert!(
            texts[0][0].contains(s.as_str()),
            "{s} not kept with --no-redact"
        );
    }
    assert_eq!(
        verbatim.one("SELECT count(*) FROM sources WHERE redactions <> '{}'")?,
        "0"
    );
    Ok(())
}

/// The credential files an install keeps beside what nanoload reads are
/// never opened, let alone read: Codex's and OpenCode's `auth.json` inside
/// nanoclaw's session tree, Claude Code's `.credentials.json`, the install's
/// and a group's `.env` (where `NANOCLAW_DB_URL` and the API keys live), and
/// a PostgreSQL password file beside the data. Each holds a canary; the run
/// is traced (`strace -f`, every `open*` call of every thread) and no call
/// names one of them, and no canary reaches any output byte.
#[test]
#[ignore = "tools tier (strace): scripts/check.sh runs it (cargo test -- --ignored)"]
fn credential_files_are_never_opened() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-a"))?;
    let ag = "data/v2-sessions/ag-1795989906209-zr4eix";
    let planted = [
        (
            ".env".to_string(),
            "ANTHROPIC_API_KEY=canary-dotenv-1f2e3d4c\nNANOCLAW_DB_URL=postgres://nc@db/nanoclaw\n",
        ),
        (
            format!("{ag}/.codex-shared/auth.json"),
            r#"{"OPENAI_API_KEY":"canary-codex-5a6b7c8d"}"#,
        ),
        (
            format!("{ag}/sess-1795989916153-fr1dtf/opencode-xdg/opencode/auth.json"),
            r#"{"openai":{"type":"api","key":"canary-opencode-9e8f7a6b"}}"#,
        ),
        (
            format!("{ag}/.claude-shared/.credentials.json"),
            r#"{"claudeAiOauth":{"accessToken":"canary-claude-3c2b1a0f"}}"#,
        ),
        (
            "groups/main/.env".to_string(),
            "GITHUB_TOKEN=canary-group-env-7d6e5f4a\n",
        ),
        (
            "data/db-password".to_string(),
            "canary-pg-password-2b3c4d5e\n",
        ),
    ];
    for (path, content) in &planted {
        let p = home.path().join(path);
        std::fs::create_dir_all(p.parent().ok_or("parent")?)?;
        std::fs::write(&p, content)?;
    }
    let out = tempfile::tempdir()?;
    let trace = out.path().join("trace");
    let mut status = Command::new("strace");
    status
        .args(["-f", "-qq", "-e", "trace=open,openat,openat2,creat", "-o"])
        .arg(&trace)
        .arg(bin())
        .arg(home.path())
        .arg(out.path().join("out.parquet"))
        .arg("--tables")
        .arg(out.path().join("tables"))
        .arg("--cache")
        .arg(out.path().join("cache"));
    let status = output_within(&mut status, HANG_LIMIT, "the run under strace")
        .map_err(|e| format!("strace (Debian package strace) must be installed: {e}"))?;
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let trace = std::fs::read_to_string(&trace)?;
    // the trace saw the run: the catalog's snapshot copy was opened
    assert!(trace.contains("data/v2.db\""), "{trace}");
    for (path, _) in &planted {
        let name = home.path().join(path);
        let hits: Vec<&str> = trace
            .lines()
            .filter(|l| l.contains(&*name.to_string_lossy()))
            .collect();
        assert!(hits.is_empty(), "{path} opened: {hits:?}");
    }
    let mut all = String::from_utf8_lossy(&status.stderr).into_owned();
    all.push_str(&String::from_utf8_lossy(&status.stdout));
    for entry in walk(out.path())? {
        all.push_str(&String::from_utf8_lossy(&std::fs::read(entry)?));
    }
    for (_, content) in &planted {
        for canary in content.split(|c: char| !c.is_alphanumeric() && c != '-') {
            if canary.starts_with("canary-") {
                assert!(!all.contains(canary), "{canary} reached an output");
            }
        }
    }
    Ok(())
}

/// Every file under `dir`, recursively.
fn walk(dir: &Path) -> Result<Vec<PathBuf>, Box<dyn std::error::Error>> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            files.extend(walk(&p)?);
        } else {
            files.push(p);
        }
    }
    Ok(files)
}

/// The SQL steps keep the events chain (raw_events … events_linked) as views
/// on a large home and as tables on a small one (`steps::Chain`): every
/// fixture home — all small, so their shared loads (golden, audits) took
/// the tables — gives the same OUT.parquet and `--tables` bytes, and the
/// same exit code, with the chain forced to views.
#[test]
fn the_chain_as_views_or_tables_gives_the_same_outputs() -> TestResult {
    every_home_loads_as_shared(("NANOLOAD_TEST_SQL_CHAIN", "views"), "with views")
}

/// The SQL steps on all the threads (what a home of more than
/// `steps::StepThreads::MAX_ONE_THREAD_ROWS` event rows gets) give every
/// fixture home — all small, so their shared loads ran the steps on one
/// thread — the same outputs and exit code.
#[test]
fn the_steps_on_one_thread_or_all_give_the_same_outputs() -> TestResult {
    every_home_loads_as_shared(
        ("NANOLOAD_TEST_STEP_THREADS", "all"),
        "with the steps on all threads",
    )
}

/// V016's plan joined by sort (the join a home of millions of rows gets,
/// `steps::PlanJoin`) gives every fixture home the outputs of the join by
/// hash their size gets.
#[test]
fn the_plan_by_hash_or_by_sort_gives_the_same_outputs() -> TestResult {
    every_home_loads_as_shared(("NANOLOAD_TEST_PLAN_JOIN", "sort"), "joined by sort")
}

/// Every fixture home loaded again with the variable `env` set gives its
/// shared load's outputs ([`load_again_as_shared`]): OUT and every table of
/// every home that loads, more than 100 files in all.
fn every_home_loads_as_shared(env: (&str, &str), what: &str) -> TestResult {
    let mut checked = 0;
    for rel in crate::fixture_homes::homes()? {
        let (_, compared) = load_again_as_shared(&rel, env, what)?;
        checked += compared;
    }
    assert!(checked > 100, "only {checked} files compared {what}");
    Ok(())
}

/// Load the fixture home `rel` again with the variable `env` set, and
/// check it against the shared load of it (`fixture_homes::load`): the same
/// exit code and, unless that is 2, the same bytes of OUT and of every
/// `--tables` file (`what` says how this load differs, for the messages).
/// When `env` forces a mode of the SQL steps ([`forced_mode`]), the load's
/// `--summary-json` says that mode ran and the shared load's says the other
/// one did, so a hook that is lost fails here. Its stderr and how many files
/// were compared.
fn load_again_as_shared(
    rel: &str,
    (key, value): (&str, &str),
    what: &str,
) -> Result<(String, usize), Box<dyn std::error::Error>> {
    let shared = crate::fixture_homes::load(rel)?;
    let home = crate::fixture_homes::materialize(rel)?;
    let dir = tempfile::tempdir()?;
    let (out, tables) = (dir.path().join("out.parquet"), dir.path().join("tables"));
    let summary = dir.path().join("summary.json");
    let o = output_within(
        Command::new(bin())
            .arg(home.path())
            .arg(&out)
            .arg("--tables")
            .arg(&tables)
            .args(["--threads", "2", "--progress", "never"])
            .arg("--summary-json")
            .arg(&summary)
            .env(key, value),
        HANG_LIMIT,
        &format!("{rel} {what}"),
    )?;
    let code = o.status.code().unwrap_or(-1);
    assert!(
        shared.rendering.starts_with(&format!("exit {code}\n")),
        "{rel}: exit {code} {what}, {:?} in the shared load",
        shared.rendering.lines().next()
    );
    let mut compared = 0;
    if let (Some(mode), true) = (forced_mode(key), code != 2) {
        let plan = |json: &[u8]| -> Result<String, Box<dyn std::error::Error>> {
            let v: serde_json::Value = serde_json::from_slice(json)?;
            Ok(v["sql_plan"][mode].as_str().unwrap_or("(none)").to_string())
        };
        assert_eq!(
            plan(&std::fs::read(&summary)?)?,
            value,
            "{rel}: {mode} {what}"
        );
        let shared_summary = shared
            .files
            .get("summary.json")
            .ok_or("no shared summary")?;
        assert_ne!(
            plan(shared_summary)?,
            value,
            "{rel}: {mode} of the shared load"
        );
    }
    if code != 2 {
        for (name, bytes) in shared.files.iter() {
            if name == "summary.json" {
                continue; // its phase timings differ from run to run
            }
            let ours = std::fs::read(dir.path().join(name))?;
            assert!(ours == *bytes, "{rel}: {name} differs {what}");
            compared += 1;
        }
    }
    Ok((String::from_utf8(o.stderr)?, compared))
}

/// The mode of the SQL steps a test variable forces, by its key in
/// `--summary-json`'s `sql_plan` (docs/design.md "Progress and summary").
fn forced_mode(var: &str) -> Option<&'static str> {
    match var {
        "NANOLOAD_TEST_SQL_CHAIN" => Some("chain"),
        "NANOLOAD_TEST_PLAN_JOIN" => Some("join"),
        "NANOLOAD_TEST_STEP_THREADS" => Some("step_threads"),
        _ => None,
    }
}

/// A value of a test variable the engine does not know is an error (exit 2,
/// one line naming the variable and the values it takes, nothing written),
/// never a silent fall back to the mode the stage would get.
#[test]
fn an_unknown_value_of_a_mode_variable_is_an_error() -> TestResult {
    for (var, value, known) in [
        ("NANOLOAD_TEST_SQL_CHAIN", "view", "one of views, tables"),
        ("NANOLOAD_TEST_PLAN_JOIN", "", "one of hash, sort"),
        ("NANOLOAD_TEST_STEP_THREADS", "ALL", "one of one, all"),
        (
            "NANOLOAD_TEST_PAUSE",
            "discover:/tmp/never",
            "<point>:<file> with <point> one of discovered, staged, written, probed, merged",
        ),
        ("NANOLOAD_TEST_MEMORY_LIMIT", "16MiB", "a number of bytes"),
    ] {
        let dir = tempfile::tempdir()?;
        let out = dir.path().join("out.parquet");
        let o = output_within(
            Command::new(bin())
                .arg(fixture("nanobot/home-a"))
                .arg(&out)
                .args(["--progress", "never"])
                .env(var, value),
            HANG_LIMIT,
            &format!("{var}={value}"),
        )?;
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{var}={value:?}: {stderr}");
        assert_eq!(
            stderr,
            format!("nanoload: error: {var}={value:?} is not {known} (a variable of the tests)\n")
        );
        assert_eq!(
            std::fs::read_dir(dir.path())?.count(),
            0,
            "{var}: a file was written"
        );
    }
    Ok(())
}

/// A load that runs out of DuckDB memory goes on at twice and then four
/// times the limit (`run::memory_limits`). `NANOLOAD_TEST_MEMORY_LIMIT`
/// makes the first limit 16 MiB, too small for home-a: each failed attempt
/// is one stderr line naming the step and the next limit, OUT and every
/// table are the bytes of the load that never ran short, the exit code is
/// the same. From 1 MiB, four times the limit is still too small: the run
/// stops with one error line that says so and writes no output.
#[test]
fn a_load_that_runs_out_of_memory_goes_on_at_twice_the_limit() -> TestResult {
    let limit = (16u64 << 20).to_string();
    let (stderr, compared) = load_again_as_shared(
        "nanobot/home-a",
        ("NANOLOAD_TEST_MEMORY_LIMIT", &limit),
        "out of memory at 16 MiB first",
    )?;
    let retry = regex::Regex::new(
        r"^nanoload: warning: (sql/V\d{3}__\w+\.sql|loading the staged rows): Out of Memory Error: [^\n]*; the SQL steps run again with a memory limit of (\d+)\.00 MiB \(was (\d+)\.00 MiB\)$",
    )?;
    let retries: Vec<(u64, u64)> = stderr
        .lines()
        .filter_map(|l| retry.captures(l))
        .map(|c| Ok((c[3].parse()?, c[2].parse()?)))
        .collect::<Result<_, std::num::ParseIntError>>()?;
    assert!(
        retries == [(16, 32)] || retries == [(16, 32), (32, 64)],
        "retries {retries:?} in:\n{stderr}"
    );
    assert!(
        !stderr.contains("Possible solutions"),
        "DuckDB's advice shown:\n{stderr}"
    );
    assert!(compared >= 5, "only {compared} files compared");

    let home = crate::fixture_homes::materialize("nanobot/home-a")?;
    let dir = tempfile::tempdir()?;
    let out = dir.path().join("out.parquet");
    let o = output_within(
        Command::new(bin())
            .arg(home.path())
            .arg(&out)
            .args(["--threads", "2", "--progress", "never"])
            .env("NANOLOAD_TEST_MEMORY_LIMIT", (1u64 << 20).to_string()),
        HANG_LIMIT,
        "home-a from a 1 MiB memory limit",
    )?;
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8(o.stderr)?;
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 3, "{stderr}");
    assert!(
        lines[0]
            .ends_with("; the SQL steps run again with a memory limit of 2.00 MiB (was 1.00 MiB)"),
        "{stderr}"
    );
    assert!(
        lines[1]
            .ends_with("; the SQL steps run again with a memory limit of 4.00 MiB (was 2.00 MiB)"),
        "{stderr}"
    );
    assert!(
        lines[2].starts_with("nanoload: error: ")
            && lines[2].contains("Out of Memory Error")
            && lines[2].ends_with(
                " (the SQL steps ran out of memory at 4.00 MiB, four times the limit; give a larger --memory-limit)"
            ),
        "{stderr}"
    );
    assert!(!out.exists(), "an output was written");
    Ok(())
}

/// The peak RSS the user guide promises a load stays under (docs/guide.md "Guarantees").
const RSS_BOUND_KIB: i64 = 512 * 1024;

/// Wait for the child `pid` (at most `limit`: past it, kill it and fail)
/// and return its exit code (`None`: killed by a signal) and its peak RSS
/// in KiB, as the kernel counted it for that one process (`wait4`'s
/// `ru_maxrss`; `getrusage(RUSAGE_CHILDREN)` would give the largest of every
/// child this test binary has reaped, other tests' included).
#[cfg(target_os = "linux")]
fn wait_peak_rss(
    pid: u32,
    limit: Duration,
) -> Result<(Option<i32>, i64), Box<dyn std::error::Error>> {
    let pid = libc::pid_t::try_from(pid)?;
    let mut status: libc::c_int = 0;
    // SAFETY: wait4 writes one status and one `rusage` into memory we own;
    // both are read only once it has reaped the child.
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    let start = Instant::now();
    loop {
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, usage.as_mut_ptr()) };
        if r == pid {
            break;
        }
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(format!("wait4({pid}): {e}").into());
            }
        } else if start.elapsed() > limit {
            // SAFETY: the child is ours and not reaped yet: the pid is still its
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(format!("the load still ran after {limit:?}, killed").into());
        } else {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    let usage = unsafe { usage.assume_init() };
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    Ok((code, usage.ru_maxrss))
}

/// Bounded memory, measured in CI: a home of about 200 MB
/// (`benches/gen_home.py --size-mb 200 --layout jsonl --seed 1`: 1 200
/// session files, 240 WebUI transcripts, two llm_usage databases) loads
/// with `--threads 2` (CI's two cores) and `--tables`, exit 0, every event
/// the generator wrote in OUT, and the process's peak RSS, taken by `wait4`
/// from the kernel, within 512 MiB. A size, not a time: the test passes or
/// fails the same on a loaded machine. It runs the dev build (the profile CI
/// builds); docs/design.md "Testing" says what that does and does not prove.
#[test]
#[cfg(target_os = "linux")]
#[ignore = "tools tier (python3 writes a 200 MB home): scripts/check.sh runs it (cargo test -- --include-ignored)"]
fn a_200_mb_home_loads_within_512_mib_of_peak_rss() -> TestResult {
    let dir = tempfile::tempdir()?;
    let home = dir.path().join("home");
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/gen_home.py");
    let g = Command::new("python3")
        .arg(&generator)
        .arg(&home)
        .args(["--size-mb", "200", "--layout", "jsonl", "--seed", "1"])
        .output()?;
    let said = String::from_utf8_lossy(&g.stderr);
    assert!(g.status.success(), "{}: {said}", generator.display());
    // `…, ≈130005 nanoload events expected, 197775871 bytes in files`
    let number_before = |what: &str| -> Result<u64, String> {
        said.split(what)
            .next()
            .and_then(|s| s.rsplit([' ', '≈']).next())
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| format!("no \"{what}\" in the generator's report: {said}"))
    };
    let events = number_before(" nanoload events expected")?;
    let bytes = number_before(" bytes in files")?;
    assert!(
        (190_000_000..=210_000_000).contains(&bytes),
        "the home is {bytes} bytes"
    );
    let out = dir.path().join("out.parquet");
    let tables = dir.path().join("tables");
    let stderr = std::fs::File::create(dir.path().join("stderr"))?;
    let child = Command::new(bin())
        .arg(&home)
        .arg(&out)
        .arg("--tables")
        .arg(&tables)
        .args(["--threads", "2", "--quiet"])
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()?;
    let (code, peak_kib) = wait_peak_rss(child.id(), Duration::from_secs(1200))?;
    let err = std::fs::read_to_string(dir.path().join("stderr"))?;
    assert_eq!(code, Some(0), "{err}");
    let c = duckdb::Connection::open_in_memory()?;
    let rows = query(
        &c,
        &format!("SELECT count(*) FROM read_parquet('{}')", out.display()),
    )?;
    assert_eq!(rows, vec![vec![events.to_string()]]);
    eprintln!(
        "peak RSS of the load of {bytes} bytes: {} MiB",
        peak_kib / 1024
    );
    assert!(
        peak_kib <= RSS_BOUND_KIB,
        "peak RSS {} MiB, over the bound of {} MiB",
        peak_kib / 1024,
        RSS_BOUND_KIB / 1024
    );
    // the same home as a reader's SOURCE: its kept ledger synced, then
    // exported (the first call: no step runs out of memory, nothing falls
    // back to a temp load), then read again (the second, within the same
    // bound), each answering as the load's outputs do. The first call's
    // peak is the sync's, which stages every row wide: printed, not bound
    let by_load = Command::new(bin())
        .arg("usage")
        .arg(&out)
        .arg("--tables")
        .arg(&tables)
        .output()?;
    assert_eq!(
        by_load.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&by_load.stderr)
    );
    for call in ["first", "second"] {
        let (said, heard) = (
            dir.path().join(format!("usage-{call}.out")),
            dir.path().join(format!("usage-{call}.err")),
        );
        let child = Command::new(bin())
            .arg("usage")
            .arg(&home)
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .stdout(std::fs::File::create(&said)?)
            .stderr(std::fs::File::create(&heard)?)
            .spawn()?;
        let (code, peak_kib) = wait_peak_rss(child.id(), Duration::from_secs(1200))?;
        let err = std::fs::read_to_string(&heard)?;
        assert_eq!(
            (code, err.as_str()),
            (Some(0), ""),
            "usage HOME, {call} call"
        );
        eprintln!(
            "peak RSS of usage HOME, {call} call: {} MiB",
            peak_kib / 1024
        );
        assert!(
            call == "first" || peak_kib <= RSS_BOUND_KIB,
            "usage HOME, {call} call: peak RSS {} MiB, over the bound of {} MiB",
            peak_kib / 1024,
            RSS_BOUND_KIB / 1024
        );
        assert_eq!(
            std::fs::read_to_string(&said)?,
            String::from_utf8_lossy(&by_load.stdout),
            "usage HOME, {call} call, against usage OUT --tables"
        );
    }
    Ok(())
}

/// `{"a":` nested `n` objects deep around `1`.
fn nested(n: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(n), "}".repeat(n))
}

/// A message line nested deeper than serde_json's 128 levels (up to 1000,
/// where the agents' own writers stop) is read whole: its message is a row,
/// its native value holds the whole nesting. One nested deeper than that
/// is a bad line whose diagnostic says why, and every other row still
/// loads (the extraction's own threads, no stack overflow).
#[test]
fn deep_lines_keep_their_message() -> TestResult {
    let home = tempfile::tempdir()?;
    let ns = home.path().join(GOOD_NS);
    std::fs::create_dir_all(&ns)?;
    let line = |content: &str, depth: usize| {
        format!(
            r#"{{"role": "assistant", "content": "{content}", "timestamp": "2026-10-05T09:00:05", "extra": {}}}"#,
            nested(depth)
        )
    };
    std::fs::write(
        ns.join("ZGVlcDox.jsonl"),
        [
            r#"{"_type": "metadata", "key": "deep:1", "created_at": "2026-10-05T09:00:00", "updated_at": "2026-10-05T09:00:05", "metadata": {}, "last_archived": 0}"#.to_string(),
            r#"{"role": "user", "content": "how deep?", "timestamp": "2026-10-05T09:00:01"}"#.into(),
            line("two hundred levels", 200),
            line("a thousand levels", 999),
            line("too deep", 1000),
            line("far too deep", 100_000),
            r#"{"role": "assistant", "content": "still here", "timestamp": "2026-10-05T09:00:06"}"#.into(),
        ]
        .join("\n")
            + "\n",
    )?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    assert_eq!(
        r.rows("SELECT turn_type, text, length(native) FROM events WHERE turn_type IN ('user', 'assistant') ORDER BY ordinal")?,
        strs(&[
            &["user", "how deep?", &r.one("SELECT length(native) FROM events WHERE text = 'how deep?'")?],
            &["assistant", "two hundred levels", &r.one("SELECT length(native) FROM events WHERE text = 'two hundred levels'")?],
            &["assistant", "a thousand levels", &r.one("SELECT length(native) FROM events WHERE text = 'a thousand levels'")?],
            &["assistant", "still here", &r.one("SELECT length(native) FROM events WHERE text = 'still here'")?],
        ])
    );
    // the native value holds the whole nesting
    let native: serde_json::Value = serde_json::from_str(&r.one(
        "SELECT json_extract(native, '$.extra.a.a.a.a.a.a.a.a.a.a') IS NOT NULL FROM events WHERE text = 'two hundred levels'",
    )?)?;
    assert_eq!(native, serde_json::json!(true));
    let deep = r.one("SELECT native FROM events WHERE text = 'a thousand levels'")?;
    assert_eq!(
        deep.matches("{\"a\":").count(),
        999,
        "{}",
        &deep[..200.min(deep.len())]
    );
    assert_eq!(
        r.rows("SELECT kind, source_line, message FROM diagnostics WHERE kind = 'bad_line' ORDER BY source_line")?,
        strs(&[
            &["bad_line", "5", "nested more than 1000 levels deep (arrays and objects): not read"],
            &["bad_line", "6", "nested more than 1000 levels deep (arrays and objects): not read"],
        ])
    );
    Ok(())
}

/// The decoder refuses a line nested 100 000 levels deep on a thread
/// with a small stack (the bound is checked before any recursion), and
/// reads one nested a thousand levels deep on an extraction thread's.
#[test]
fn a_line_nested_100000_levels_is_refused_on_a_small_stack() -> TestResult {
    let run = |depth: usize| -> Result<Result<bool, String>, Box<dyn std::error::Error>> {
        let line = format!(r#"{{"role": "user", "x": {}}}"#, nested(depth));
        std::thread::Builder::new()
            .stack_size(if depth > 1000 {
                512 << 10
            } else {
                nanoload::extract::WORKER_STACK
            })
            .spawn(move || {
                nanoload::jsonl::decode_line(line.as_bytes())
                    .map(|d| d.is_some())
                    .map_err(|e| e.0)
            })?
            .join()
            .map_err(|_| "the decoder panicked".into())
    };
    assert_eq!(
        run(100_000)?,
        Err("nested more than 1000 levels deep (arrays and objects): not read".to_string())
    );
    assert_eq!(run(999)?, Ok(true));
    Ok(())
}
