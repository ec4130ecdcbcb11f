//! The sink: every output written to a temp name beside its destination,
//! then all renamed into place, so each file appears complete or not at all.
//!
//! ```text
//! <dir>/.<name>.nanoload-<pid>.tmp   written first (DuckDB COPY / ATTACH)
//! <dir>/<name>                        renamed into place once every output is written
//!
//! Outputs { out: OUT.parquet, tables: --tables DIR/<table>.parquet ×5, db: --db FILE }
//! ```
//! A run first removes stale `.<name>.nanoload-*.tmp` files a killed run left
//! for the same output names, and nothing else. OUT.parquet is written in
//! sorted byte ranges ([`write_events`]) so the wide rows are never sorted at once.

use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::config::OutputPaths;
use crate::engine::{Engine, sql_list, sql_str};

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

/// An output that could not be written (exit code 2, nothing left behind).
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {message}", path.display())]
pub struct OutputError {
    pub path: PathBuf,
    pub message: String,
}

impl OutputError {
    fn new(path: &Path, message: impl std::fmt::Display) -> OutputError {
        OutputError {
            path: path.to_path_buf(),
            message: crate::diag::one_line(&message.to_string()),
        }
    }
}

/// Every output of the run, each by name.
pub struct Outputs {
    pub out: Pending,
    /// `--tables`: one file per [`TABLES`] entry, in that order.
    pub tables: Vec<(&'static str, Pending)>,
    pub db: Option<Pending>,
    /// A `--tables` directory this run created: removed again if still empty.
    _created_dir: Option<EmptyDirGuard>,
}

impl Outputs {
    /// Create a missing `--tables` directory, remove stale temps of these
    /// outputs, and check each directory accepts a file (before any work).
    pub fn prepare(paths: &OutputPaths) -> Result<Outputs, OutputError> {
        let created_dir = match &paths.tables {
            Some(d) if !d.exists() => {
                std::fs::create_dir_all(d).map_err(|e| OutputError::new(d, e))?;
                Some(EmptyDirGuard(d.clone()))
            }
            _ => None,
        };
        let tables = match &paths.tables {
            Some(d) => TABLES
                .iter()
                .map(|t| (*t, Pending::new(&d.join(format!("{t}.parquet")))))
                .collect(),
            None => Vec::new(),
        };
        let outputs = Outputs {
            out: Pending::new(&paths.out),
            tables,
            db: paths.db.as_deref().map(Pending::new),
            _created_dir: created_dir,
        };
        for p in outputs.all() {
            p.clean_stale();
            p.probe().map_err(|e| OutputError::new(&p.dest, e))?;
        }
        Ok(outputs)
    }

    /// OUT, then the `--tables` files, then the `--db` file.
    pub fn all(&self) -> impl Iterator<Item = &Pending> {
        std::iter::once(&self.out)
            .chain(self.tables.iter().map(|(_, p)| p))
            .chain(self.db.iter())
    }

    /// Destination paths, in [`Outputs::all`] order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.all().map(|p| p.dest.clone()).collect()
    }

    /// Write every output under its temp name; on failure none is left.
    pub fn write(&self, engine: &Engine, scratch: &Path) -> Result<(), OutputError> {
        let written = self.write_all(engine.conn(), scratch);
        if written.is_err() {
            self.all().for_each(Pending::discard);
        }
        written
    }

    fn write_all(&self, conn: &Connection, scratch: &Path) -> Result<(), OutputError> {
        let out = &self.out;
        write_events(conn, scratch, &out.tmp, SORT_BUCKET_BYTES)
            .map_err(|e| OutputError::new(&out.dest, e))?;
        for (t, p) in &self.tables {
            conn.execute_batch(&format!(
                "COPY (SELECT * FROM {t} ORDER BY ALL) TO {} (FORMAT parquet, COMPRESSION zstd)",
                sql_str(&p.tmp)
            ))
            .map_err(|e| OutputError::new(&p.dest, e))?;
        }
        if let Some(p) = &self.db {
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
            conn.execute_batch(&script)
                .map_err(|e| OutputError::new(&p.dest, e))?;
        }
        Ok(())
    }

    /// Rename every output into place; on failure the rest are discarded.
    pub fn commit(&self) -> Result<(), OutputError> {
        for p in self.all() {
            if let Err(e) = p.commit() {
                self.all().for_each(Pending::discard);
                return Err(OutputError::new(&p.dest, e));
            }
        }
        Ok(())
    }
}

/// Removes a directory the run created when the run ends with it still empty.
struct EmptyDirGuard(PathBuf);

impl Drop for EmptyDirGuard {
    fn drop(&mut self) {
        // remove_dir only removes an empty directory: a finished run's stays.
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// One output file being written.
#[derive(Debug, Clone)]
pub struct Pending {
    pub tmp: PathBuf,
    pub dest: PathBuf,
}

fn tmp_prefix(dest: &Path) -> String {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.nanoload-")
}

impl Pending {
    pub fn new(dest: &Path) -> Pending {
        let dir = dest.parent().map(Path::to_path_buf).unwrap_or_default();
        let tmp = dir.join(format!("{}{}.tmp", tmp_prefix(dest), std::process::id()));
        Pending {
            tmp,
            dest: dest.to_path_buf(),
        }
    }

    /// Remove temps a killed earlier run left for this destination.
    pub fn clean_stale(&self) {
        let dir = self
            .dest
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let prefix = tmp_prefix(&self.dest);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for e in entries.filter_map(Result::ok) {
            let n = e.file_name().to_string_lossy().into_owned();
            let is_ours = n
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".tmp"))
                .is_some_and(|pid| pid.chars().all(|c| c.is_ascii_digit()));
            if is_ours && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Check the destination directory accepts a file (before any work).
    pub fn probe(&self) -> std::io::Result<()> {
        std::fs::File::create(&self.tmp)?;
        std::fs::remove_file(&self.tmp)
    }

    pub fn discard(&self) {
        let _ = std::fs::remove_file(&self.tmp);
        let mut wal = self.tmp.clone().into_os_string();
        wal.push(".wal");
        let _ = std::fs::remove_file(PathBuf::from(wal));
    }

    pub fn commit(&self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.dest)
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
/// texts within a small memory limit). V016 gives each row its place
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

#[cfg(test)]
mod tests {
    use super::*;
    use duckdb::Connection;

    use crate::engine::sql_str;

    #[test]
    fn stale_temps_of_this_output_are_removed_and_nothing_else() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let dest = d.path().join("out.parquet");
        for n in [
            ".out.parquet.nanoload-123.tmp",
            ".out.parquet.nanoload-x.tmp",
            ".other.parquet.nanoload-1.tmp",
            "keep.txt",
        ] {
            std::fs::write(d.path().join(n), b"x")?;
        }
        Pending::new(&dest).clean_stale();
        let mut left: Vec<String> = std::fs::read_dir(d.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            vec![
                ".other.parquet.nanoload-1.tmp",
                ".out.parquet.nanoload-x.tmp",
                "keep.txt"
            ]
        );
        Ok(())
    }

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
