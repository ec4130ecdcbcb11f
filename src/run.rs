//! The library entry point: one [`run`] from HOME to OUT.parquet.
//!
//! ```text
//! check arguments ─▶ discover ─▶ extract (rayon) ─▶ stage ─▶ DuckDB: params, stage_* views,
//!   sql/V###… ─▶ COPY events / tables / db to temp names ─▶ rename all ─▶ Summary
//! ```
//! Nothing is written inside HOME; scratch files live in a private temp dir
//! that is removed at the end.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use duckdb::Connection;
use regex::Regex;
use sha2::{Digest, Sha256};

use crate::diag::{DiagKind, Diagnostic, diagnostics_batch};
use crate::discover::{Discovery, discover};
use crate::extract::extract_all;
use crate::output::Pending;
use crate::schema::{SourceRow, sources_batch};
use crate::stage::{Stage, Staged, write_file};
use crate::store::Store;
use crate::store::{ExtractOptions, StoreReport};

/// What a run does (the CLI flags, as a library value).
#[derive(Debug, Clone)]
pub struct Options {
    pub home: PathBuf,
    pub out: PathBuf,
    pub tables: Option<PathBuf>,
    pub db: Option<PathBuf>,
    /// `--utc-offset`, in minutes (`local = utc + offset`).
    pub utc_offset_minutes: Option<i32>,
    pub threads: Option<usize>,
    pub follow_links: bool,
    pub include_thinking: bool,
    pub secret_patterns: Vec<String>,
    /// DuckDB `memory_limit` in bytes (raised when one row needs more).
    pub memory_limit: u64,
}

impl Options {
    pub fn new(home: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Options {
        Options {
            home: home.into(),
            out: out.into(),
            tables: None,
            db: None,
            utc_offset_minutes: None,
            threads: None,
            follow_links: false,
            include_thinking: false,
            secret_patterns: Vec::new(),
            memory_limit: 256 << 20,
        }
    }
}

/// The process exit code (docs/design.md "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Every store read (declared losses and warnings allowed).
    Ok = 0,
    /// Output written, but some lines, records or stores could not be read,
    /// or a link to agent state out of HOME was not followed.
    Partial = 1,
    /// Nothing written.
    Failed = 2,
}

/// A run that wrote nothing (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0}")]
    Usage(String),
    #[error("HOME {0}: {1}")]
    Home(PathBuf, String),
    #[error("cannot write {0}: {1}")]
    Output(PathBuf, String),
    #[error("temporary directory: {0}")]
    Temp(std::io::Error),
    #[error("{0}")]
    Stage(String),
    #[error("{0}")]
    Sql(String),
    #[error("internal: {0}")]
    Internal(String),
}

/// Counts per source kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindCounts {
    pub stores: u64,
    pub rows_read: u64,
    pub rows_out: u64,
    pub duplicates: u64,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Summary {
    pub exit: ExitCode,
    pub load_id: String,
    pub kinds: BTreeMap<String, KindCounts>,
    pub events: u64,
    pub diagnostics: Vec<Diagnostic>,
    pub links_skipped: usize,
    pub elapsed: Duration,
    pub outputs: Vec<PathBuf>,
    /// Rows dropped as duplicates, per reason (docs/design.md "Dedup").
    pub drop_reasons: Vec<(String, u64)>,
}

impl Summary {
    pub fn count(&self, kind: DiagKind) -> usize {
        self.diagnostics.iter().filter(|d| d.kind == kind).count()
    }

    /// The end-of-run summary for stderr.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "nanoload: {} events, load_id {}",
            self.events, self.load_id
        );
        let _ = writeln!(
            s,
            "  {:<28} {:>6} {:>9} {:>9} {:>10}",
            "source kind", "stores", "rows read", "rows out", "duplicates"
        );
        for (k, c) in &self.kinds {
            let _ = writeln!(
                s,
                "  {:<28} {:>6} {:>9} {:>9} {:>10}",
                k, c.stores, c.rows_read, c.rows_out, c.duplicates
            );
        }
        let dups: u64 = self.kinds.values().map(|c| c.duplicates).sum();
        let _ = writeln!(
            s,
            "  dropped as duplicates: {dups}; bad lines: {}; bad records: {}; unreadable: {}; losses: {}; warnings: {}; links skipped: {}",
            self.count(DiagKind::BadLine),
            self.count(DiagKind::BadRecord),
            self.count(DiagKind::Unreadable),
            self.count(DiagKind::Loss),
            self.count(DiagKind::Warning),
            self.links_skipped + self.count(DiagKind::SkippedLink),
        );
        for (reason, n) in &self.drop_reasons {
            let _ = writeln!(s, "    {n:>6} {reason}");
        }
        let _ = write!(
            s,
            "  took {:.2}s; exit code {}",
            self.elapsed.as_secs_f64(),
            self.exit as i32
        );
        s
    }
}

fn inside(path: &Path, dir: &Path) -> bool {
    path.starts_with(dir)
}

/// The absolute, symlink-free form of a path that may not exist yet: its
/// nearest existing ancestor canonicalized, the rest appended.
fn resolve(p: &Path) -> Result<PathBuf, RunError> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| RunError::Output(p.to_path_buf(), e.to_string()))?
            .join(p)
    };
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = existing
        .canonicalize()
        .map_err(|e| RunError::Output(p.to_path_buf(), e.to_string()))?;
    out.extend(rest.iter().rev());
    Ok(out)
}

/// Removes a directory the run created when the run ends with it still empty.
struct EmptyDirGuard(PathBuf);

impl Drop for EmptyDirGuard {
    fn drop(&mut self) {
        // remove_dir only removes an empty directory: a finished run's stays.
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The absolute form of a path that may not exist yet (its parent must).
fn absolute_out(p: &Path) -> Result<PathBuf, RunError> {
    let name = p
        .file_name()
        .ok_or_else(|| RunError::Output(p.to_path_buf(), "not a file name".into()))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent.canonicalize().map_err(|e| {
        RunError::Output(
            p.to_path_buf(),
            format!("directory {}: {e}", parent.display()),
        )
    })?;
    Ok(parent.join(name))
}

/// `load_id`: first 16 hex of SHA-256 over the version and the sorted
/// (source_path, bytes, mtime_ns) of every store file.
pub fn load_id(stores: &[Store]) -> String {
    let mut files: Vec<(String, u64, i128)> = stores
        .iter()
        .flat_map(|s| s.files().map(|(p, b, m)| (p.to_string(), b, m)))
        .collect();
    files.sort();
    let mut h = Sha256::new();
    h.update(b"nanoload ");
    h.update(crate::VERSION.as_bytes());
    for (p, b, m) in files {
        h.update(b"\n");
        h.update(p.as_bytes());
        h.update(format!("\t{b}\t{m}").as_bytes());
    }
    h.finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn sql_str(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', "''"))
}

fn sql_list(paths: &[PathBuf]) -> String {
    format!(
        "[{}]",
        paths
            .iter()
            .map(|p| sql_str(p))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// Output tables besides `events`, in `--tables` / `--db` order.
pub const TABLES: [&str; 5] = [
    "sessions",
    "llm_calls",
    "tz_offsets",
    "diagnostics",
    "sources",
];

/// The total order of OUT.parquet (docs/design.md "Output order").
pub const EVENTS_ORDER: &str = "agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST, ordinal, source_kind, source_path, source_line";

/// Run nanoload.
pub fn run(opts: &Options) -> Result<Summary, RunError> {
    let started = Instant::now();
    let home = opts
        .home
        .canonicalize()
        .map_err(|e| RunError::Home(opts.home.clone(), e.to_string()))?;
    if !home.is_dir() {
        return Err(RunError::Home(opts.home.clone(), "not a directory".into()));
    }
    let secret_patterns = opts
        .secret_patterns
        .iter()
        .map(|p| {
            Regex::new(p).map_err(|e| {
                RunError::Usage(format!(
                    "--secret-pattern {p:?}: {}",
                    crate::diag::one_line(&e.to_string())
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;

    // Every output: absolute, outside HOME, in a writable directory.
    let out = absolute_out(&opts.out)?;
    let mut pending = vec![Pending::new(&out)];
    let tables_dir = opts.tables.as_deref().map(resolve).transpose()?;
    let db = opts.db.as_deref().map(absolute_out).transpose()?;
    for dest in [Some(&out), tables_dir.as_ref(), db.as_ref()]
        .into_iter()
        .flatten()
    {
        if inside(dest, &home) {
            return Err(RunError::Output(
                dest.clone(),
                format!(
                    "it is inside HOME ({}); nanoload never writes inside HOME",
                    home.display()
                ),
            ));
        }
    }
    // A --tables directory this run creates is removed again if the run fails.
    let _tables_guard = match &tables_dir {
        Some(d) if !d.exists() => {
            std::fs::create_dir_all(d).map_err(|e| RunError::Output(d.clone(), e.to_string()))?;
            Some(EmptyDirGuard(d.clone()))
        }
        _ => None,
    };
    if let Some(d) = &tables_dir {
        pending.extend(
            TABLES
                .iter()
                .map(|t| Pending::new(&d.join(format!("{t}.parquet")))),
        );
    }
    if let Some(d) = &db {
        pending.push(Pending::new(d));
    }
    for p in &pending {
        p.clean_stale();
        p.probe()
            .map_err(|e| RunError::Output(p.dest.clone(), e.to_string()))?;
    }

    clean_stale_tempdirs();
    let tmp = tempfile::Builder::new()
        .prefix(&tempdir_prefix(std::process::id()))
        .tempdir()
        .map_err(RunError::Temp)?;
    if inside(tmp.path(), &home) || tmp.path().canonicalize().is_ok_and(|t| inside(&t, &home)) {
        return Err(RunError::Usage(format!(
            "the temporary directory {} is inside HOME; set TMPDIR elsewhere",
            tmp.path().display()
        )));
    }

    let discovery: Discovery =
        discover(&home, opts.follow_links).map_err(|e| RunError::Internal(e.to_string()))?;
    let load_id = load_id(&discovery.stores);
    test_pause("discovered");
    let extract_opts = ExtractOptions {
        include_thinking: opts.include_thinking,
        secret_patterns,
    };
    let stage =
        Stage::new(&tmp.path().join("stage")).map_err(|e| RunError::Stage(e.to_string()))?;
    let threads = opts
        .threads
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| RunError::Internal(e.to_string()))?;
    let scratch = tmp.path().join("scratch");
    let reports: Vec<StoreReport> =
        pool.install(|| extract_all(&discovery.stores, &home, &extract_opts, &stage, &scratch));
    if let Some(fatal) = reports.iter().find_map(|r| r.fatal.clone()) {
        return Err(RunError::Stage(fatal));
    }
    let staged = stage.finish().map_err(|e| RunError::Stage(e.to_string()))?;

    let mut extracted: Vec<Diagnostic> = discovery.diagnostics.clone();
    extracted.extend(reports.iter().flat_map(|r| r.diagnostics.iter().cloned()));
    extracted.sort();
    let sources: Vec<SourceRow> = discovery
        .stores
        .iter()
        .zip(&reports)
        .map(|(s, r)| SourceRow {
            source_kind: s.kind.to_string(),
            source_role: s.role.as_str().to_string(),
            source_path: s.rel.clone(),
            bytes: (s.bytes + s.parts.iter().map(|p| p.bytes).sum::<u64>()) as i64,
            rows: r.rows as i64,
            status: r.status.to_string(),
            agent: s.agent.as_str().to_string(),
            instance: s.instance.clone(),
            parts: s.parts.len() as i64,
        })
        .collect();
    let stage_dir = tmp.path().join("stage");
    let diag_file = stage_dir.join("diagnostics.parquet");
    let src_file = stage_dir.join("sources.parquet");
    let batch = diagnostics_batch(&extracted).map_err(|e| RunError::Stage(e.to_string()))?;
    write_file(&diag_file, &batch).map_err(|e| RunError::Stage(e.to_string()))?;
    let batch = sources_batch(&sources).map_err(|e| RunError::Stage(e.to_string()))?;
    write_file(&src_file, &batch).map_err(|e| RunError::Stage(e.to_string()))?;

    test_pause("staged");
    let engine = Engine {
        tmp: tmp.path(),
        threads,
        // a single huge row (a 100 MB tool output) must fit several times over
        memory_limit: opts.memory_limit.max(64 << 20).max(
            (64 << 20)
                + 4 * reports
                    .iter()
                    .map(|r| r.max_row_bytes as u64)
                    .max()
                    .unwrap_or(0),
        ),
    };
    let conn = engine.open().map_err(sql)?;
    engine
        .load(
            &conn,
            &staged,
            &diag_file,
            &src_file,
            opts.utc_offset_minutes,
            &load_id,
        )
        .map_err(sql)?;
    crate::steps::run_all(&conn).map_err(|e| RunError::Sql(e.to_string()))?;
    // The views may declare further losses: the table is the source of truth.
    let diagnostics = read_diagnostics(&conn).map_err(sql)?;

    let written = write_outputs(
        &conn,
        tmp.path(),
        &pending,
        tables_dir.is_some(),
        db.is_some(),
    );
    if let Err(e) = written {
        pending.iter().for_each(Pending::discard);
        return Err(e);
    }
    test_pause("written");
    for p in &pending {
        if let Err(e) = p.commit() {
            pending.iter().for_each(Pending::discard);
            return Err(RunError::Output(p.dest.clone(), e.to_string()));
        }
    }

    let mut kinds: BTreeMap<String, KindCounts> = BTreeMap::new();
    for (s, r) in discovery.stores.iter().zip(&reports) {
        let k = kinds.entry(s.kind.to_string()).or_default();
        k.stores += 1;
        k.rows_read += r.rows;
    }
    let counts = |q: &str| -> Result<Vec<(String, u64)>, RunError> {
        let mut stmt = conn.prepare(q).map_err(sql)?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })
            .map_err(sql)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(sql)
    };
    for (k, n) in counts(
        "SELECT source_kind, count(*) FROM events GROUP BY 1
         UNION ALL SELECT 'nanobot.llm_usage', count(*) FROM llm_calls HAVING count(*) > 0",
    )? {
        kinds.entry(k).or_default().rows_out = n;
    }
    for (k, n) in counts("SELECT source_kind, count(*) FROM dropped_rows GROUP BY 1")? {
        kinds.entry(k).or_default().duplicates = n;
    }
    let drop_reasons = counts("SELECT reason, count(*) FROM dropped_rows GROUP BY 1 ORDER BY 1")?;
    let events = counts("SELECT 'events', count(*) FROM events")?
        .first()
        .map(|(_, n)| *n)
        .unwrap_or(0);
    let exit = if diagnostics.iter().any(|d| d.kind.is_read_failure()) {
        ExitCode::Partial
    } else {
        ExitCode::Ok
    };
    Ok(Summary {
        exit,
        load_id,
        kinds,
        events,
        diagnostics,
        links_skipped: discovery.links_skipped,
        elapsed: started.elapsed(),
        outputs: pending.iter().map(|p| p.dest.clone()).collect(),
        drop_reasons,
    })
}

/// The private temp dir of process `pid`: `$TMPDIR/nanoload-<pid>-XXXXXX`.
fn tempdir_prefix(pid: u32) -> String {
    format!("nanoload-{pid}-")
}

/// Remove private temp dirs that killed runs left behind: only
/// `nanoload-<pid>-*` directories whose process no longer exists.
fn clean_stale_tempdirs() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("nanoload-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let alive = Path::new("/proc").join(pid.to_string()).exists();
        if !alive && pid != std::process::id() && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Test-only hook: with `NANOLOAD_TEST_PAUSE=<point>:<file>`, the run creates
/// `<file>` when it reaches `<point>` (`discovered`, `staged`, `written`) and
/// waits until a test removes it (at most two minutes). Lets tests delete a
/// store after discovery or kill the process with outputs half-written.
fn test_pause(point: &str) {
    let Ok(spec) = std::env::var("NANOLOAD_TEST_PAUSE") else {
        return;
    };
    let Some((p, file)) = spec.split_once(':') else {
        return;
    };
    if p != point || std::fs::write(file, b"").is_err() {
        return;
    }
    let start = Instant::now();
    while Path::new(file).exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn read_diagnostics(conn: &Connection) -> duckdb::Result<Vec<Diagnostic>> {
    let mut stmt = conn.prepare("SELECT kind, agent, instance, source_path, source_line, message, session_id, code FROM diagnostics")?;
    let rows = stmt.query_map([], |r| {
        let kind: String = r.get(0)?;
        let agent: Option<String> = r.get(1)?;
        Ok(Diagnostic {
            kind: DiagKind::parse(&kind).unwrap_or(DiagKind::Warning),
            agent: agent.as_deref().and_then(|a| match a {
                "nanobot" => Some(crate::schema::Agent::Nanobot),
                "nanoclaw" => Some(crate::schema::Agent::Nanoclaw),
                _ => None,
            }),
            instance: r.get(2)?,
            source_path: r.get(3)?,
            source_line: r.get(4)?,
            message: r.get(5)?,
            session_id: r.get(6)?,
            code: r.get(7)?,
        })
    })?;
    let mut v = rows.collect::<duckdb::Result<Vec<_>>>()?;
    v.sort();
    Ok(v)
}

fn sql(e: duckdb::Error) -> RunError {
    RunError::Sql(crate::diag::one_line(&e.to_string()))
}

struct Engine<'a> {
    tmp: &'a Path,
    threads: usize,
    /// bytes
    memory_limit: u64,
}

impl Engine<'_> {
    fn open(&self) -> duckdb::Result<Connection> {
        let conn = Connection::open_in_memory()?;
        let spill = self.tmp.join("duckdb");
        conn.execute_batch(&format!(
            "SET autoinstall_known_extensions = false;
             SET autoload_known_extensions = false;
             SET memory_limit = '{}MiB';
             SET temp_directory = {};
             SET threads = {};
             SET preserve_insertion_order = true;",
            self.memory_limit.div_ceil(1 << 20),
            sql_str(&spill),
            self.threads,
        ))?;
        Ok(conn)
    }

    fn load(
        &self,
        conn: &Connection,
        staged: &Staged,
        diag: &Path,
        src: &Path,
        offset: Option<i32>,
        load_id: &str,
    ) -> duckdb::Result<()> {
        let offset = offset
            .map(|o| o.to_string())
            .unwrap_or_else(|| "NULL".into());
        conn.execute_batch(&format!(
            "CREATE TABLE params AS SELECT CAST({offset} AS INTEGER) AS given_offset_minutes, '{load_id}' AS load_id;
             CREATE VIEW stage_events AS SELECT * FROM read_parquet({});
             CREATE VIEW stage_llm_calls AS SELECT * FROM read_parquet({});
             CREATE TABLE diagnostics AS SELECT * FROM read_parquet({});
             CREATE TABLE sources AS SELECT * FROM read_parquet({});",
            sql_list(&staged.events),
            sql_list(&staged.llm_calls),
            sql_str(diag),
            sql_str(src),
        ))
    }
}

/// Text bytes per row group of OUT.parquet and of the sort buckets: the
/// writer buffers a whole group per thread and the reader reads a column
/// chunk at once (DuckDB's default of 122 880 rows is kept when rows are
/// small; 2 048 rows is its minimum).
const ROW_GROUP_BYTES: i64 = 4 << 20;

/// Text bytes per sort bucket of [`write_events`].
pub const SORT_BUCKET_BYTES: i64 = 16 << 20;

/// Copy `events` to the Parquet file `dest` in [`EVENTS_ORDER`] without
/// sorting the wide rows at once (DuckDB's sort does not spill rows of long
/// texts within a small memory limit). V008 gives each row its place
/// (`out_pos`) and the bytes before it (`out_offset`), computed narrow:
///
/// ```text
/// for each range [k·bucket, (k+1)·bucket) of out_offset:
///     rows of the range, sorted by out_pos  → scratch/sorted-<k>.parquet
/// the sorted files, read in order (insertion order kept) → dest
/// ```
pub fn write_events(
    conn: &Connection,
    scratch: &Path,
    dest: &Path,
    bucket_bytes: i64,
) -> duckdb::Result<()> {
    let bucket = bucket_bytes.max(1);
    let (total, rows): (i64, i64) = conn.query_row(
        "SELECT CAST(coalesce(max(out_offset + x_bytes), 0) AS BIGINT), count(*) FROM events_wide",
        [],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    let group = (ROW_GROUP_BYTES * rows.max(1) / total.max(1)).clamp(2048, 122_880);
    let mut sorted = Vec::new();
    for k in 0..=total / bucket {
        let f = scratch.join(format!("sorted-{k:012}.parquet"));
        conn.execute_batch(&format!(
            "COPY (SELECT * EXCLUDE (x_row, out_pos, out_offset, x_bytes) FROM events_wide
                   WHERE out_offset >= {lo} AND out_offset < {hi} ORDER BY out_pos)
             TO {} (FORMAT parquet, COMPRESSION uncompressed, ROW_GROUP_SIZE {group});",
            sql_str(&f),
            lo = k * bucket,
            hi = (k + 1) * bucket,
        ))?;
        sorted.push(f);
    }
    conn.execute_batch(&format!(
        "COPY (SELECT * FROM read_parquet({})) TO {} (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {group});",
        sql_list(&sorted),
        sql_str(dest)
    ))?;
    for f in &sorted {
        let _ = std::fs::remove_file(f);
    }
    Ok(())
}

fn write_outputs(
    conn: &Connection,
    scratch: &Path,
    pending: &[Pending],
    tables: bool,
    db: bool,
) -> Result<(), RunError> {
    let mut it = pending.iter();
    let err = |p: &Pending, e: duckdb::Error| {
        RunError::Output(p.dest.clone(), crate::diag::one_line(&e.to_string()))
    };
    // OUT.parquet always comes first
    let Some(out) = it.next() else {
        return Ok(());
    };
    write_events(conn, scratch, &out.tmp, SORT_BUCKET_BYTES).map_err(|e| err(out, e))?;
    if tables {
        for t in TABLES {
            let Some(p) = it.next() else { break };
            conn.execute_batch(&format!(
                "COPY (SELECT * FROM {t} ORDER BY ALL) TO {} (FORMAT parquet, COMPRESSION zstd)",
                sql_str(&p.tmp)
            ))
            .map_err(|e| err(p, e))?;
        }
    }
    if db && let Some(p) = it.next() {
        let mut script = format!(
            "ATTACH {} AS outdb (STORAGE_VERSION 'v1.0.0');\n",
            sql_str(&p.tmp)
        );
        // OUT.parquet is already in order: copy it rather than sort again
        script.push_str(&format!(
            "CREATE TABLE outdb.events AS SELECT * FROM read_parquet({});\n",
            sql_str(&out.tmp)
        ));
        for t in TABLES {
            script.push_str(&format!(
                "CREATE TABLE outdb.{t} AS SELECT * FROM {t} ORDER BY ALL;\n"
            ));
        }
        script.push_str("DETACH outdb;");
        conn.execute_batch(&script).map_err(|e| err(p, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 3 000 rows whose place (`pos` = out_pos) is a permutation of their
    /// storage order, texts of 0–1 999 bytes, one of 50 000.
    fn events_wide(conn: &Connection) -> duckdb::Result<()> {
        conn.execute_batch(
            "CREATE TABLE rows AS
             SELECT i AS x_row, (i * 1237) % 3000 + 1 AS pos,
                 repeat('x', CASE WHEN i = 1500 THEN 50000 ELSE (i * 31) % 2000 END) AS text,
                 CAST(NULL AS VARCHAR) AS native
             FROM range(3000) t(i);
             CREATE TABLE events_wide AS
             SELECT pos, text, x_row, pos AS out_pos, strlen(text) AS x_bytes,
                 coalesce(sum(strlen(text)) OVER (ORDER BY pos ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS out_offset
             FROM rows;",
        )
    }

    #[test]
    fn bucketed_write_keeps_the_one_sorted_order() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let conn = Connection::open_in_memory()?;
        events_wide(&conn)?;
        let whole = dir.path().join("whole.parquet");
        let cut = dir.path().join("cut.parquet");
        write_events(&conn, dir.path(), &whole, i64::MAX)?;
        // buckets far smaller than the data (and than its largest row)
        write_events(&conn, dir.path(), &cut, 4096)?;
        // the same rows, each at its out_pos, in both files
        let (n, same): (i64, bool) = conn.query_row(
            &format!(
                "SELECT count(*), bool_and(w.pos = w.n AND c.pos = c.n AND w.text = c.text)
                 FROM (SELECT pos, text, row_number() OVER () AS n FROM read_parquet({})) w
                 JOIN (SELECT pos, text, row_number() OVER () AS n FROM read_parquet({})) c USING (n)",
                sql_str(&whole),
                sql_str(&cut)
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        assert_eq!((n, same), (3000, true));
        // only the two outputs are left in the scratch dir
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 2);
        Ok(())
    }
}
