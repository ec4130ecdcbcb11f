//! `--cache DIR`: a second run reuses the staged rows of every store whose
//! files (and the files it reads, and the options) are unchanged, and its
//! outputs are byte-identical to a run without the cache. Each test counts
//! the stores the cached run extracted again (the summary's `cache:` line).

use std::path::Path;

use crate::common::{
    TestResult, append_message, copy_home, fixture, four_installs, nanoclaw_changes_in_order,
    run_home,
};

/// `(reused, extracted)` from the summary's `cache:` line.
fn cache_counts(stderr: &str) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    let line = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("cache: "))
        .ok_or_else(|| format!("no cache line in:\n{stderr}"))?;
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(str::parse)
        .collect::<Result<_, _>>()?;
    match n.as_slice() {
        [a, b] => Ok((*a, *b)),
        _ => Err(format!("cache line {line:?}").into()),
    }
}

/// OUT and every `--tables` file of a run, by name.
fn outputs(run: &crate::common::Run) -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let mut files = vec![("out.parquet".to_string(), std::fs::read(&run.out)?)];
    let mut names: Vec<_> = std::fs::read_dir(&run.tables)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    names.sort();
    for p in names {
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        files.push((name.unwrap_or_default(), std::fs::read(&p)?));
    }
    Ok(files)
}

/// Run HOME with `--cache cache` and `extra`, and without the cache: the
/// outputs are the same bytes. Returns the cached run's counts.
fn cached_run(
    home: &Path,
    cache: &Path,
    extra: &[&str],
) -> Result<(u64, u64), Box<dyn std::error::Error>> {
    Ok(cached_and_plain(home, cache, extra)?.0)
}

/// A cached run's `(reused, extracted)`, and the run without the cache.
type CachedAndPlain = ((u64, u64), std::sync::Arc<crate::common::Run>);

/// [`cached_run`], and the run without the cache.
fn cached_and_plain(
    home: &Path,
    cache: &Path,
    extra: &[&str],
) -> Result<CachedAndPlain, Box<dyn std::error::Error>> {
    let mut args = vec!["--cache", cache.to_str().ok_or("path")?];
    args.extend_from_slice(extra);
    let cached = run_home(home, &args)?;
    let plain = run_home(home, extra)?;
    assert_eq!(cached.code(), plain.code(), "{}", cached.stderr());
    let (a, b) = (outputs(&cached)?, outputs(&plain)?);
    assert_eq!(a.len(), b.len());
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs with --cache");
    }
    Ok((cache_counts(&cached.stderr())?, plain))
}

fn stores(home: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    Ok(run_home(home, &[])?
        .one("SELECT count(*) FROM sources")?
        .parse()?)
}

#[test]
fn an_unchanged_home_is_staged_from_the_cache_with_the_same_bytes() -> TestResult {
    let home = fixture("nanobot/home-a");
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let n = stores(&home)?;
    assert_eq!(n, 19);
    assert_eq!(cached_run(&home, &cache, &[])?, (0, n));
    assert_eq!(cached_run(&home, &cache, &[])?, (n, 0));
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&cache)?.permissions().mode() & 0o777;
    assert_eq!(mode, 0o700);
    Ok(())
}

/// The nanoclaw fixture homes, each an install root as nanoclaw (and the
/// provider CLIs behind it) wrote it.
const NANOCLAW_HOMES: [&str; 9] = [
    "home-2-0",
    "home-a",
    "home-b",
    "home-cc",
    "home-codex",
    "home-codex-archive",
    "home-links",
    "home-mcp",
    "home-opencode",
];

/// Each nanoclaw store reads only its own files (what one store says of
/// another — a sibling database, a transcript, the install's version — the
/// steps derive from `sources` and the rows), so a second run of an
/// unchanged install stages every one of its stores from the cache, and
/// the outputs are the bytes of a load without the cache.
#[test]
fn every_store_of_an_unchanged_nanoclaw_home_is_staged_from_the_cache() -> TestResult {
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    for name in NANOCLAW_HOMES {
        let home = fixture(&format!("nanoclaw/{name}"));
        let n = stores(&home)?;
        assert_eq!(cached_run(&home, &cache, &[])?, (0, n), "{name}, first run");
        assert_eq!(cached_run(&home, &cache, &[])?, (n, 0), "{name}, unchanged");
    }
    Ok(())
}

/// A nanoclaw home where one session database gained a message: that
/// store alone is read again, and the run equals a load without the cache.
#[test]
fn a_nanoclaw_session_database_that_gained_a_row_alone_is_extracted_again() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-a"))?;
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let n = stores(home.path())?;
    assert_eq!(n, 9);
    assert_eq!(cached_run(home.path(), &cache, &[])?, (0, n));
    append_message(
        &home
            .path()
            .join("data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io/inbound.db"),
        "m-appended",
        "one more question, appended",
    )?;
    assert_eq!(cached_run(home.path(), &cache, &[])?, (n - 1, 1));
    let run = run_home(home.path(), &["--cache", cache.to_str().ok_or("path")?])?;
    assert_eq!(
        run.one("SELECT count(*) FROM events WHERE text = 'one more question, appended'")?,
        "1"
    );
    Ok(())
}

/// Run HOME with `--cache`, and without it: the same output bytes. Returns
/// the cached run's `(reused, extracted)` and the stores of the load.
fn cached_and_fresh(
    home: &Path,
    cache: &Path,
) -> Result<(u64, u64, u64), Box<dyn std::error::Error>> {
    let ((reused, extracted), plain) = cached_and_plain(home, cache, &[])?;
    let n = plain.one("SELECT count(*) FROM sources")?;
    Ok((reused, extracted, n.parse()?))
}

/// The changes of `common::NANOCLAW_CHANGES` applied one after another in an order each
/// seed draws: after each, the cached run's outputs are the bytes of a
/// fresh load (a deleted store, a sibling database or transcript that
/// appears later, a version that changes: what the steps derive across
/// stores is derived again from what is read now), and it extracted only
/// the stores the change added or changed.
#[test]
fn a_cached_nanoclaw_home_equals_a_fresh_load_whatever_changes_between_runs() -> TestResult {
    for seed in [7u64, 1009] {
        let home = four_installs()?;
        let dir = tempfile::tempdir()?;
        let cache = dir.path().join("cache");
        let (reused, extracted, n) = cached_and_fresh(home.path(), &cache)?;
        assert_eq!((reused, extracted), (0, n), "seed {seed}, first run");
        for c in nanoclaw_changes_in_order(seed) {
            (c.apply)(home.path())?;
            let (reused, extracted, n) = cached_and_fresh(home.path(), &cache)?;
            assert_eq!(
                (reused, extracted),
                (n - c.extracted, c.extracted),
                "seed {seed}: {}",
                c.what
            );
        }
    }
    Ok(())
}

#[test]
fn an_appended_session_file_alone_is_extracted_again() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    assert_eq!(cached_run(home.path(), &cache, &[])?, (0, 19));
    let file = home
        .path()
        .join(".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/c2xhY2s6QzBXT1JLNw.jsonl");
    let text = std::fs::read_to_string(&file)?;
    let line = r#"{"role": "user", "content": "one more question, appended", "timestamp": "2026-05-02T10:00:00.000000"}"#;
    std::fs::write(&file, format!("{text}{line}\n"))?;
    assert_eq!(cached_run(home.path(), &cache, &[])?, (18, 1));
    let run = run_home(home.path(), &["--cache", cache.to_str().ok_or("path")?])?;
    assert_eq!(
        run.one("SELECT count(*) FROM events WHERE text = 'one more question, appended'")?,
        "1"
    );
    Ok(())
}

/// A session file rewritten in place with its size and mtime put back
/// (`cp -p`, `rsync -a`), the change far from both ends of a 300 KB file, is
/// extracted again: the key holds every byte, not only the file's ends.
#[test]
fn a_file_rewritten_with_its_size_and_mtime_put_back_is_extracted_again() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let file = home
        .path()
        .join(".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/c2xhY2s6QzBXT1JLNw.jsonl");
    let mut text = std::fs::read_to_string(&file)?;
    for i in 0..1500 {
        text.push_str(&format!(
            r#"{{"role": "user", "content": "filler message {i:04} {}", "timestamp": "2026-05-02T10:00:00.000000"}}"#,
            "x".repeat(120)
        ));
        text.push('\n');
    }
    std::fs::write(&file, &text)?;
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    assert_eq!(cached_run(home.path(), &cache, &[])?, (0, 19));
    let mtime = std::fs::metadata(&file)?.modified()?;
    let at = text.find("filler message 0750").ok_or("no line 750")?;
    assert!(
        at > 128 << 10 && text.len() - at > 128 << 10,
        "{at} of {}",
        text.len()
    );
    let rewritten = text.replacen("filler message 0750", "FILLER MESSAGE 0750", 1);
    std::fs::write(&file, &rewritten)?;
    std::fs::File::options()
        .write(true)
        .open(&file)?
        .set_modified(mtime)?;
    assert_eq!(std::fs::metadata(&file)?.modified()?, mtime);
    assert_eq!(std::fs::metadata(&file)?.len(), text.len() as u64);
    assert_eq!(cached_run(home.path(), &cache, &[])?, (18, 1));
    let run = run_home(home.path(), &["--cache", cache.to_str().ok_or("path")?])?;
    assert_eq!(
        run.one("SELECT count(*) FROM events WHERE text LIKE 'FILLER MESSAGE 0750 %'")?,
        "1"
    );
    Ok(())
}

/// `sessions.sqlite3` appearing in a namespace makes its JSONL files
/// secondary: the database and those files are extracted, nothing else.
#[test]
fn a_database_beside_namespace_jsonl_changes_their_role_and_they_are_extracted_again() -> TestResult
{
    let home = copy_home(&fixture("realwriter/dbera-import/home"))?;
    let ns = home
        .path()
        .join(".nanobot/sessions/0a73341c0fcc01adcff029f084dbbce5");
    let aside = tempfile::tempdir()?;
    let db = [
        "sessions.sqlite3",
        "sessions.sqlite3-wal",
        "sessions.sqlite3-shm",
    ];
    for f in db {
        std::fs::rename(ns.join(f), aside.path().join(f))?;
    }
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    let before = cached_run(home.path(), &cache, &[])?;
    let (_, n) = before;
    assert_eq!(before, (0, n));
    let primary = run_home(home.path(), &[])?.one(
        "SELECT count(*) FROM sources WHERE source_role = 'primary' AND source_kind = 'nanobot.session_jsonl'",
    )?;
    assert_eq!(primary, "3");
    for f in db {
        std::fs::rename(aside.path().join(f), ns.join(f))?;
    }
    // the database (one store more) and the three JSONL files
    assert_eq!(cached_run(home.path(), &cache, &[])?, (n - 3, 4));
    Ok(())
}

#[test]
fn a_changed_secret_option_extracts_every_store_again() -> TestResult {
    let home = fixture("nanobot/home-a");
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    assert_eq!(cached_run(&home, &cache, &[])?, (0, 19));
    let pattern = ["--secret-pattern", "Oslo"];
    assert_eq!(cached_run(&home, &cache, &pattern)?, (0, 19));
    assert_eq!(cached_run(&home, &cache, &pattern)?, (19, 0));
    assert_eq!(cached_run(&home, &cache, &["--no-redact"])?, (0, 19));
    assert_eq!(cached_run(&home, &cache, &["--include-thinking"])?, (0, 19));
    // entries of options no longer used are removed
    let entries = std::fs::read_dir(cache.join("v1"))?
        .map(|e| e.map(|e| std::fs::read_dir(e.path()).map(Iterator::count)))
        .collect::<Result<Result<Vec<_>, _>, _>>()??;
    assert_eq!(entries, vec![19]);
    Ok(())
}

/// A namespace's `.workspace` (the project path) shapes the rows of the
/// stores it governs: the namespace's two JSONL files and the memory
/// journal of the workspace bound to it (`.nanobot/workspace-id`), not the
/// other instance's sixteen stores.
#[test]
fn a_changed_workspace_file_extracts_the_stores_it_governs_again() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    assert_eq!(cached_run(home.path(), &cache, &[])?, (0, 19));
    let ws = home
        .path()
        .join(".nanobot-work/sessions/0902071dfd2e4c386d1fd229159f67f3/.workspace");
    std::fs::write(&ws, "/home/alice/elsewhere\n")?;
    assert_eq!(cached_run(home.path(), &cache, &[])?, (16, 3));
    let run = run_home(home.path(), &["--cache", cache.to_str().ok_or("path")?])?;
    assert_eq!(
        run.rows("SELECT project_path, string_agg(session_id, ' ' ORDER BY session_id) FROM sessions GROUP BY 1 ORDER BY 1")?,
        crate::common::strs(&[
            &["/home/alice/.nanobot/workspace", "cli:direct discord:77120044 slack:C0FAKE42 subagent:sa_5c1e9d7f telegram:48213377 websocket:b8e1c3f2-5d7a-4e61-9f0b-2a4c6d8e0f13"],
            &["/home/alice/elsewhere", "discord:99001 slack:C0WORK7"],
        ])
    );
    Ok(())
}

#[test]
fn a_cache_inside_home_is_refused() -> TestResult {
    let home = copy_home(&fixture("nanobot/home-a"))?;
    let inside = home.path().join("cache");
    let run = run_home(home.path(), &["--cache", inside.to_str().ok_or("path")?])?;
    assert_eq!(run.code(), Some(2));
    assert!(run.stderr().contains("inside HOME"), "{}", run.stderr());
    assert!(!inside.exists());
    Ok(())
}

/// An entry whose blob file is not the length its report recorded (a disk
/// filled up, a file truncated) is not used: that store is extracted again.
#[test]
fn a_damaged_entry_is_extracted_again() -> TestResult {
    let home = fixture("nanobot/home-a");
    let dir = tempfile::tempdir()?;
    let cache = dir.path().join("cache");
    assert_eq!(cached_run(&home, &cache, &[])?, (0, 19));
    let mut damaged = 0;
    for e in walkdir::WalkDir::new(&cache) {
        let e = e?;
        if e.file_name() == "blob-0.bin" && e.metadata()?.len() > 0 {
            let f = std::fs::OpenOptions::new().write(true).open(e.path())?;
            f.set_len(e.metadata()?.len() - 1)?;
            damaged += 1;
        }
    }
    assert!(damaged > 0);
    assert_eq!(cached_run(&home, &cache, &[])?, (19 - damaged, damaged));
    Ok(())
}
