//! A HOME as SOURCE: `usage`, `report`, `sql`, `mcp` and `otlp` of a HOME
//! answer from the ledger nanoload keeps for it in the user's cache
//! directory (`$XDG_CACHE_HOME/nanoload`): the same answer as a fresh
//! load's, no store read again when nothing changed, the history the agent
//! deleted still counted; `--no-keep`, an unwritable cache, `cache list`
//! and `cache clear`. Every test sets XDG_CACHE_HOME to a temp dir.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

/// The session file the tests delete (nanobot's `/new` of a chat).
const CHAT: &str = ".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/discord_99001.jsonl";

/// The Claude Code transcript of `fixtures/nanoclaw/home-cc` the tests
/// append a turn to (as `nanoclaw/` of the mixed home).
const TRANSCRIPT: &str = "nanoclaw/data/v2-sessions/ag-1800000000010-ccc111/.claude-shared/projects/-workspace-agent/9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl";

/// A GitHub token pasted into the appended turn.
const PASTED: &str = "ghp_Kq8vZr3mN1xW7bT2yP5sL9dF4hJ6gC0aE3uR";

/// `nanoload ARGS` with its cache in `cache` (XDG_CACHE_HOME), no COLUMNS.
fn nanoload<S: AsRef<OsStr>>(
    cache: &Path,
    args: &[S],
) -> Result<Output, Box<dyn std::error::Error>> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.args(args)
        .env("XDG_CACHE_HOME", cache)
        .env_remove("COLUMNS");
    output_within(
        &mut cmd,
        HANG_LIMIT,
        &format!("nanoload (cache {})", cache.display()),
    )
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The one kept ledger in `cache/nanoload`.
fn kept_ledger(cache: &Path) -> Result<PathBuf, Box<dyn std::error::Error>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache.join("nanoload"))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "duckdb"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    Ok(found.remove(0))
}

/// Rows of `sql` over a ledger, opened read-only.
fn ledger_rows(ledger: &Path, sql: &str) -> Result<Vec<Vec<String>>, Box<dyn std::error::Error>> {
    let c = duckdb::Connection::open_in_memory()?;
    c.execute_batch(&format!(
        "ATTACH '{}' AS l (READ_ONLY); USE l;",
        ledger.display()
    ))?;
    Ok(query(&c, sql)?)
}

/// `usage` of a fresh load of `home`, with `args`.
fn usage_of_a_load(home: &Path, args: &[&str]) -> Result<Output, Box<dyn std::error::Error>> {
    let r = run_home(home, &[])?;
    let mut a: Vec<&OsStr> = vec![
        OsStr::new("usage"),
        r.out.as_os_str(),
        OsStr::new("--tables"),
        r.tables.as_os_str(),
    ];
    a.extend(args.iter().map(OsStr::new));
    let scratch = tempfile::tempdir()?;
    nanoload(scratch.path(), &a)
}

/// A new assistant turn with counted usage at the end of the transcript.
fn append_turn(home: &Path, text: &str) -> TestResult {
    use std::io::Write as _;
    let line = format!(
        "{{\"parentUuid\":\"00000000-0000-4000-8000-000000000031\",\"isSidechain\":false,\"userType\":\"external\",\"cwd\":\"/workspace/agent\",\"sessionId\":\"9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b\",\"version\":\"2.1.19\",\"gitBranch\":\"\",\"uuid\":\"00000000-0000-4000-8000-000000000032\",\"timestamp\":\"2026-03-06T09:00:05.000Z\",\"message\":{{\"model\":\"claude-sonnet-4-5-20250929\",\"id\":\"msg_G\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}],\"stop_reason\":\"end_turn\",\"stop_sequence\":null,\"usage\":{{\"input_tokens\":7,\"cache_creation_input_tokens\":0,\"cache_read_input_tokens\":3200,\"output_tokens\":40,\"service_tier\":\"standard\"}}}},\"type\":\"assistant\",\"requestId\":\"req_G\"}}\n"
    );
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(home.join(TRANSCRIPT))?;
    f.write_all(line.as_bytes())?;
    Ok(())
}

/// The first and the second `usage HOME` answer the same as a fresh load's
/// OUT; the second reads no store again (its sync adds, changes and marks
/// gone nothing); after a turn is appended the answer changes, and equals a
/// fresh load's again.
#[test]
fn a_home_is_answered_from_its_kept_ledger_as_a_fresh_load_answers() -> TestResult {
    let home = mixed_home()?;
    let before = tree(home.path());
    let cache = tempfile::tempdir()?;
    let h = home.path().as_os_str();
    let args = |extra: &[&str]| -> Vec<std::ffi::OsString> {
        let mut a = vec!["usage".into(), h.to_os_string()];
        a.extend(extra.iter().map(std::ffi::OsString::from));
        a
    };
    let first = nanoload(cache.path(), &args(&["--json"]))?;
    assert_eq!(first.status.code(), Some(1), "{}", err(&first));
    let exported = tree(&cache.path().join("nanoload"));
    let second = nanoload(cache.path(), &args(&["--json"]))?;
    assert_eq!(second.status.code(), Some(1), "{}", err(&second));
    assert_eq!(out(&first), out(&second));
    assert_eq!(err(&first), err(&second));
    // the export of the first call is reused as it is
    let outputs = |t: &std::collections::BTreeMap<String, String>| -> Vec<(String, String)> {
        t.iter()
            .filter(|(k, _)| k.contains(".out-"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let reused = outputs(&tree(&cache.path().join("nanoload")));
    assert!(
        reused.iter().any(|(k, _)| k.ends_with("out.parquet")),
        "{reused:?}"
    );
    assert_eq!(reused, outputs(&exported));
    // home-a's torn line and bad record, as a load names them
    assert_eq!(err(&first).lines().count(), 2, "{}", err(&first));
    let load = usage_of_a_load(home.path(), &["--json"])?;
    assert_eq!(load.status.code(), Some(0), "{}", err(&load));
    assert_eq!(out(&first), out(&load));
    for v in ["daily", "session", "model"] {
        let kept = nanoload(cache.path(), &args(&["--by", v]))?;
        assert_eq!(
            out(&kept),
            out(&usage_of_a_load(home.path(), &["--by", v])?),
            "{v}"
        );
    }
    let ledger = kept_ledger(cache.path())?;
    let syncs = ledger_rows(
        &ledger,
        "SELECT sync, added, changed, gone FROM loads ORDER BY sync",
    )?;
    assert_eq!(syncs.len(), 5, "{syncs:?}");
    assert_ne!(syncs[0][1], "0");
    for s in &syncs[1..] {
        assert_eq!(s[1..], ["0", "0", "0"], "{syncs:?}");
    }
    assert_eq!(tree(home.path()), before, "HOME changed");

    append_turn(home.path(), "one more answer")?;
    let third = nanoload(cache.path(), &args(&["--json"]))?;
    assert_eq!(third.status.code(), Some(1), "{}", err(&third));
    assert_ne!(out(&third), out(&first));
    let load = usage_of_a_load(home.path(), &["--json"])?;
    assert_eq!(out(&third), out(&load));
    let doc: serde_json::Value = serde_json::from_slice(&third.stdout)?;
    let was: serde_json::Value = serde_json::from_slice(&first.stdout)?;
    assert_eq!(
        doc["totals"]["calls"].as_i64(),
        was["totals"]["calls"].as_i64().map(|c| c + 1)
    );
    let last = ledger_rows(
        &ledger,
        "SELECT added FROM loads ORDER BY sync DESC LIMIT 1",
    )?;
    assert_ne!(last[0][0], "0");
    Ok(())
}

/// `sql HOME` counts what a fresh load's OUT counts; a row the agent then
/// deleted is still counted from the kept ledger (its history), and with
/// `--no-keep` (a temp load, nothing kept) it is not.
#[test]
fn the_kept_ledger_still_counts_a_row_the_agent_deleted() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let cache = tempfile::tempdir()?;
    let h = home.path().as_os_str();
    let count = "select count(*) from events";
    let sql = |extra: &[&str]| -> Result<Output, Box<dyn std::error::Error>> {
        let mut a = vec![
            OsStr::new("sql"),
            h,
            OsStr::new(count),
            OsStr::new("--json"),
        ];
        a.extend(extra.iter().map(OsStr::new));
        nanoload(cache.path(), &a)
    };
    let n = |o: &Output| -> Result<i64, Box<dyn std::error::Error>> {
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        doc["rows"][0][0]
            .as_i64()
            .ok_or_else(|| format!("no count: {}{}", out(o), err(o)).into())
    };
    let kept = sql(&[])?;
    assert_eq!(kept.status.code(), Some(0), "{}", err(&kept));
    let r = run_home(home.path(), &[])?;
    let scratch = tempfile::tempdir()?;
    let of_load = nanoload(
        scratch.path(),
        &[
            OsStr::new("sql"),
            r.out.as_os_str(),
            OsStr::new(count),
            OsStr::new("--json"),
            OsStr::new("--tables"),
            r.tables.as_os_str(),
        ],
    )?;
    assert_eq!(out(&kept), out(&of_load));
    let all = n(&kept)?;

    std::fs::remove_file(home.path().join(CHAT))?;
    let after = run_home(home.path(), &[])?;
    let left: i64 = after.one("SELECT count(*) FROM events")?.parse()?;
    assert!(left < all, "{left} {all}");
    assert_eq!(n(&sql(&[])?)?, all, "the deleted rows are kept");
    // the kept answer tells them apart: the ledger's `present`
    let present = sql(&[])?;
    assert_eq!(present.status.code(), Some(0));
    let gone = nanoload(
        cache.path(),
        &[
            OsStr::new("sql"),
            h,
            OsStr::new("select count(*) from events where not present"),
            OsStr::new("--json"),
        ],
    )?;
    assert_eq!(n(&gone)?, all - left, "{}", err(&gone));
    let cached = tree(cache.path());
    let temp = sql(&["--no-keep"])?;
    assert_eq!(temp.status.code(), Some(0), "{}", err(&temp));
    assert_eq!(n(&temp)?, left);
    assert_eq!(tree(cache.path()), cached, "--no-keep wrote to the cache");
    Ok(())
}

/// `--no-keep` writes nothing at all: no cache directory is made.
#[test]
fn no_keep_writes_nothing_to_the_cache() -> TestResult {
    let cache = tempfile::tempdir()?;
    let home = fixture("nanoclaw/home-cc");
    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("usage"),
            home.as_os_str(),
            OsStr::new("--no-keep"),
        ],
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(err(&o), "");
    assert_eq!(std::fs::read_dir(cache.path())?.count(), 0);
    Ok(())
}

/// The cache directory is the user's alone (mode 0700), and holds no byte
/// of a secret pasted into the home.
#[test]
fn the_cache_is_private_and_holds_no_secret() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let home = mixed_home()?;
    append_turn(home.path(), &format!("here is my token {PASTED} ok"))?;
    let cache = tempfile::tempdir()?;
    for args in [
        vec![OsStr::new("usage"), home.path().as_os_str()],
        vec![
            OsStr::new("sql"),
            home.path().as_os_str(),
            OsStr::new("select count(*) from events"),
        ],
    ] {
        let o = nanoload(cache.path(), &args)?;
        assert_eq!(o.status.code().map(|c| c <= 1), Some(true), "{}", err(&o));
        assert!(!out(&o).contains(PASTED) && !err(&o).contains(PASTED));
    }
    let dir = cache.path().join("nanoload");
    assert_eq!(std::fs::metadata(&dir)?.permissions().mode() & 0o777, 0o700);
    let mut files = 0;
    for e in walkdir::WalkDir::new(&dir) {
        let e = e?;
        if e.file_type().is_file() {
            files += 1;
            let bytes = std::fs::read(e.path())?;
            assert!(
                !bytes.windows(PASTED.len()).any(|w| w == PASTED.as_bytes()),
                "{} holds the secret",
                e.path().display()
            );
        }
    }
    assert!(files >= 3, "{files}");
    // the turn itself was read, and kept with the token redacted
    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("sql"),
            home.path().as_os_str(),
            OsStr::new("select count(*) from events where text like 'here is my token % ok'"),
            OsStr::new("--json"),
        ],
    )?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["rows"][0][0], 1, "{}", err(&o));
    Ok(())
}

/// A cache that cannot be written — XDG_CACHE_HOME a file, or a read-only
/// directory — still answers, from a temp load, with exactly one note line
/// naming the path and why.
#[test]
fn an_unwritable_cache_still_answers_with_one_note() -> TestResult {
    use std::os::unix::fs::PermissionsExt;
    let home = fixture("nanoclaw/home-cc");
    let scratch = tempfile::tempdir()?;
    let plain = nanoload(
        scratch.path(),
        &[
            OsStr::new("usage"),
            home.as_os_str(),
            OsStr::new("--no-keep"),
        ],
    )?;
    assert_eq!(plain.status.code(), Some(0), "{}", err(&plain));
    let file = scratch.path().join("a-file");
    std::fs::write(&file, "not a directory")?;
    let o = nanoload(&file, &[OsStr::new("usage"), home.as_os_str()])?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), out(&plain));
    let note = err(&o);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.starts_with(&format!(
            "nanoload: note: cannot keep a ledger in {}: ",
            file.join("nanoload").display()
        )) && note.contains("a temp load of HOME answers instead"),
        "{note}"
    );
    assert_eq!(std::fs::read(&file)?, b"not a directory");

    // a read-only cache dir (as root, with the capabilities that bypass
    // permissions dropped)
    let ro = scratch.path().join("ro");
    std::fs::create_dir(&ro)?;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o500))?;
    let bin = env!("CARGO_BIN_EXE_nanoload");
    let mut cmd = if is_root()? {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search",
            "--",
            bin,
        ]);
        c
    } else {
        std::process::Command::new(bin)
    };
    cmd.arg("usage")
        .arg(&home)
        .env("XDG_CACHE_HOME", &ro)
        .env_remove("COLUMNS");
    let o = output_within(&mut cmd, HANG_LIMIT, "usage, read-only cache")?;
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o700))?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(out(&o), out(&plain));
    let note = err(&o);
    assert_eq!(note.lines().count(), 1, "{note}");
    assert!(
        note.starts_with(&format!(
            "nanoload: note: cannot keep a ledger in {}: ",
            ro.join("nanoload").display()
        )),
        "{note}"
    );
    assert_eq!(std::fs::read_dir(&ro)?.count(), 0);
    Ok(())
}

fn is_root() -> Result<bool, Box<dyn std::error::Error>> {
    use std::os::unix::fs::MetadataExt;
    let probe = tempfile::NamedTempFile::new()?;
    Ok(probe.as_file().metadata()?.uid() == 0)
}

/// `cache list` names each kept HOME with its ledger's size and last sync;
/// `cache clear HOME` removes that one, `cache clear` the rest, and leaves
/// alone (and names) a file nanoload did not write.
#[test]
fn cache_list_and_clear_say_exactly_what_is_kept() -> TestResult {
    let cache = tempfile::tempdir()?;
    let dir = cache.path().join("nanoload");
    let list = |c: &Path| nanoload(c, &["cache", "list"]);
    let empty = list(cache.path())?;
    assert_eq!(empty.status.code(), Some(0), "{}", err(&empty));
    assert_eq!(out(&empty), format!("nothing kept in {}\n", dir.display()));

    let a = copy_home(&fixture("nanobot/home-a"))?;
    let b = copy_home(&fixture("nanoclaw/home-cc"))?;
    for h in [&a, &b] {
        let o = nanoload(cache.path(), &[OsStr::new("usage"), h.path().as_os_str()])?;
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", err(&o));
    }
    let mut want: Vec<(String, String)> = Vec::new();
    for e in std::fs::read_dir(&dir)? {
        let p = e?.path();
        if p.extension().is_some_and(|x| x == "duckdb") {
            let home = ledger_rows(&p, "SELECT home FROM loads LIMIT 1")?[0][0].clone();
            let last = ledger_rows(
                &p,
                "SELECT strftime(max(finished_at), '%Y-%m-%d %H:%M:%S') FROM loads",
            )?[0][0]
                .clone();
            let size = std::fs::metadata(&p)?.len();
            want.push((
                home.clone(),
                format!("{last}  {:>13}  {home}\n", thousands(size)),
            ));
        }
    }
    want.sort();
    assert_eq!(want.len(), 2);
    let header = format!("{:<19}  {:>13}  HOME\n", "LAST SYNC (UTC)", "LEDGER BYTES");
    let listed = list(cache.path())?;
    assert_eq!(
        out(&listed),
        format!(
            "{header}{}{}kept in {}; `nanoload cache clear [HOME]` removes them\n",
            want[0].1,
            want[1].1,
            dir.display()
        )
    );

    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("cache"),
            OsStr::new("clear"),
            a.path().as_os_str(),
        ],
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let home_a = a.path().canonicalize()?;
    assert!(
        err(&o).starts_with(&format!(
            "nanoload: removed the kept ledger of {} (",
            home_a.display()
        )),
        "{}",
        err(&o)
    );
    assert_eq!(err(&o).lines().count(), 1);
    let b_line = want
        .iter()
        .find(|w| w.0 != home_a.to_string_lossy())
        .map(|w| w.1.clone());
    assert_eq!(
        out(&list(cache.path())?),
        format!(
            "{header}{}kept in {}; `nanoload cache clear [HOME]` removes them\n",
            b_line.unwrap_or_default(),
            dir.display()
        )
    );

    std::fs::write(dir.join("notes.txt"), "mine")?;
    let o = nanoload(cache.path(), &["cache", "clear"])?;
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    let home_b = b.path().canonicalize()?;
    let lines: Vec<String> = err(&o).lines().map(String::from).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with(&format!(
            "nanoload: removed the kept ledger of {} (",
            home_b.display()
        )),
        "{lines:?}"
    );
    assert_eq!(
        lines[1],
        format!(
            "nanoload: left alone: {} (not a file nanoload keeps)",
            dir.join("notes.txt").display()
        )
    );
    assert_eq!(std::fs::read(dir.join("notes.txt"))?, b"mine");
    let names: Vec<_> = std::fs::read_dir(&dir)?
        .filter_map(Result::ok)
        .map(|e| e.file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("notes.txt")]);
    assert_eq!(
        out(&list(cache.path())?),
        format!("nothing kept in {}\n", dir.display())
    );
    Ok(())
}

fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, c) in s.chars().enumerate() {
        if k > 0 && (s.len() - k).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Every reader takes a HOME: `report`, `otlp` and `mcp` of a HOME give what
/// they give of a fresh load's OUT; a directory that is neither a tables
/// directory nor a HOME is refused, naming what was expected.
#[test]
fn every_reader_takes_a_home() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-cc"))?;
    let cache = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    let r = run_home(home.path(), &[])?;
    let h = home.path().as_os_str();
    // otlp: the same traces, byte for byte
    let kept = work.path().join("kept.jsonl");
    let loaded = work.path().join("loaded.jsonl");
    let o = nanoload(cache.path(), &[OsStr::new("otlp"), h, kept.as_os_str()])?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("otlp"),
            r.out.as_os_str(),
            loaded.as_os_str(),
            OsStr::new("--tables"),
            r.tables.as_os_str(),
        ],
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert_eq!(std::fs::read(&kept)?, std::fs::read(&loaded)?);
    // report: a page written
    let page = work.path().join("r.html");
    let o = nanoload(cache.path(), &[OsStr::new("report"), h, page.as_os_str()])?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    assert!(
        err(&o).starts_with(&format!("nanoload: report written: {}", page.display())),
        "{}",
        err(&o)
    );
    // sql of a tables dir is as it was
    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("sql"),
            r.tables.as_os_str(),
            OsStr::new("select count(*) from llm_calls"),
        ],
    )?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    // usage of a tables dir reads it as the --tables of OUT
    let o = nanoload(cache.path(), &[OsStr::new("usage"), r.tables.as_os_str()])?;
    assert_eq!(o.status.code(), Some(0), "{}", err(&o));
    let l = nanoload(
        cache.path(),
        &[
            OsStr::new("usage"),
            r.out.as_os_str(),
            OsStr::new("--tables"),
            r.tables.as_os_str(),
        ],
    )?;
    assert_eq!(out(&o), out(&l));
    // neither
    let empty = tempfile::tempdir()?;
    for cmd in ["sql", "usage"] {
        let mut a = vec![OsStr::new(cmd), empty.path().as_os_str()];
        if cmd == "sql" {
            a.push(OsStr::new("select 1"));
        }
        let o = nanoload(cache.path(), &a)?;
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", err(&o));
        // as each command says an input error
        let said = if cmd == "sql" { "" } else { "error: " };
        assert_eq!(
            err(&o),
            format!(
                "nanoload: {said}{}: neither a HOME nor a tables directory: no agent state under it (a .nanobot* directory, a nanoclaw root with data/v2.db) and no <table>.parquet file in it\n",
                empty.path().display()
            ),
            "{cmd}"
        );
    }
    Ok(())
}

/// `nanoload cache --help` (and each subcommand's) explains every flag.
#[test]
fn cache_help_explains_every_flag() -> TestResult {
    let scratch = tempfile::tempdir()?;
    let mut all = String::new();
    for args in [
        &["cache", "--help"][..],
        &["cache", "list", "--help"],
        &["cache", "clear", "--help"],
    ] {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
        cmd.args(args)
            .env("COLUMNS", "100")
            .env("XDG_CACHE_HOME", scratch.path());
        let o = output_within(&mut cmd, HANG_LIMIT, "cache --help")?;
        assert_eq!(o.status.code(), Some(0), "{}", err(&o));
        all.push_str(&format!("$ nanoload {}\n{}\n", args.join(" "), out(&o)));
    }
    insta::assert_snapshot!("cache_help", all);
    Ok(())
}

/// `mcp HOME` serves the export of the ledger as it was when the server
/// started: another reader's call that exports a newer state leaves the
/// server's export in place (its readers lock it), and the first call after
/// the server ended removes it.
#[test]
fn an_mcp_server_of_a_home_keeps_reading_its_export() -> TestResult {
    use std::io::{BufRead, Write};
    use std::sync::mpsc;
    use std::time::Duration;
    let home = mixed_home()?;
    let cache = tempfile::tempdir()?;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"))
        .arg("mcp")
        .arg(home.path())
        .env("XDG_CACHE_HOME", cache.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let ask = |stdin: &mut std::process::ChildStdin,
               id: u32,
               body: &str|
     -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        writeln!(stdin, "{body}")?;
        stdin.flush()?;
        loop {
            let line = rx.recv_timeout(Duration::from_secs(300))??;
            let v: serde_json::Value = serde_json::from_str(&line)?;
            if v["id"] == id {
                return Ok(v);
            }
        }
    };
    let count = |id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"query","arguments":{{"sql":"select count(*) as n from events"}}}}}}"#
        )
    };
    ask(
        &mut stdin,
        1,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
    )?;
    let first = ask(&mut stdin, 2, &count(2))?;
    let n = first["result"]["structuredContent"]["rows"][0][0]
        .as_i64()
        .ok_or_else(|| format!("{first}"))?;
    append_turn(home.path(), "a newer state")?;
    let o = nanoload(
        cache.path(),
        &[
            OsStr::new("sql"),
            home.path().as_os_str(),
            OsStr::new("select count(*) from events"),
            OsStr::new("--json"),
        ],
    )?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["rows"][0][0].as_i64(), Some(n + 1), "{}", err(&o));
    let exports = || -> Result<usize, Box<dyn std::error::Error>> {
        Ok(std::fs::read_dir(cache.path().join("nanoload"))?
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".out-"))
            .count())
    };
    assert_eq!(exports()?, 2);
    let again = ask(&mut stdin, 3, &count(3))?;
    assert_eq!(
        again["result"]["structuredContent"]["rows"][0][0].as_i64(),
        Some(n),
        "{again}"
    );
    drop(stdin);
    let ended = wait_within(child, std::time::Duration::from_secs(120), "mcp HOME")?;
    assert_eq!(ended.status.code(), Some(0));
    let o = nanoload(
        cache.path(),
        &[OsStr::new("usage"), home.path().as_os_str()],
    )?;
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(exports()?, 1);
    Ok(())
}

/// An export that fails (here: too little memory, by the test hook
/// NANOLOAD_TEST_EXPORT_MEMORY) is remembered for that state of the ledger:
/// the next call still syncs, and answers from a temp load at once, without
/// trying the export again; its one note says why.
#[test]
fn a_failed_export_is_not_tried_again_for_the_same_ledger() -> TestResult {
    let home = fixture("nanobot/home-a");
    let cache = tempfile::tempdir()?;
    let run = || -> Result<Output, Box<dyn std::error::Error>> {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
        cmd.args([OsStr::new("usage"), home.as_os_str()])
            .env("XDG_CACHE_HOME", cache.path())
            .env("NANOLOAD_TEST_EXPORT_MEMORY", (1u64 << 20).to_string())
            .env_remove("COLUMNS");
        output_within(&mut cmd, HANG_LIMIT, "usage with a failing export")
    };
    let first = run()?;
    assert_eq!(first.status.code(), Some(1), "{}", err(&first));
    let e1 = err(&first);
    assert!(e1.contains("Out of Memory"), "{e1}");
    assert!(e1.contains("a temp load of HOME answers instead"), "{e1}");
    let second = run()?;
    assert_eq!(second.status.code(), Some(1), "{}", err(&second));
    assert_eq!(out(&second), out(&first));
    let e2 = err(&second);
    assert!(
        !e2.lines()
            .any(|l| l.starts_with("nanoload: warning:") && l.contains("Out of Memory")),
        "the export was tried again:\n{e2}"
    );
    let notes: Vec<&str> = e2
        .lines()
        .filter(|l| l.starts_with("nanoload: note:"))
        .collect();
    assert_eq!(notes.len(), 1, "{e2}");
    assert!(
        notes[0].contains("its export failed for this state of the ledger")
            && notes[0].contains("a temp load of HOME answers instead"),
        "{e2}"
    );
    Ok(())
}
