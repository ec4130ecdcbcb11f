//! Private, consistent copies of SQLite stores.
//!
//! ```text
//! HOME/…/x.db  [x.db-wal] [x.db-shm] [x.db-journal]      never opened by SQLite in place
//!     │ 1. stat + read headers of all four   (db: size, mtime, first 100 bytes;
//!     │                                        wal: size, mtime, 32-byte header with salts)
//!     │ 2. copy -shm, -journal, -wal, then the db into <scratch>/snapshot.db*
//!     │ 3. stat + read headers again: any change → retry (a live writer committed)
//!     ▼
//! <scratch>/snapshot.db  opened read-write: SQLite replays the WAL copy and rolls
//!                        back a hot journal copy here, never in HOME
//! ```
//! Even a read-only open creates `-wal`/`-shm` beside a WAL database, and rows
//! may exist only in the WAL: hence the copy.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

const SIDECARS: [&str; 3] = ["-shm", "-journal", "-wal"];
const ATTEMPTS: u32 = 10;

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("main file empty; WAL not applied ({0} bytes of WAL ignored, as SQLite would)")]
    EmptyMainWithWal(u64),
    #[error("not a SQLite database (bad header)")]
    NotADatabase,
    #[error("kept changing while being copied ({0} attempts): a live writer; try again")]
    Unstable(u32),
    #[error("cannot open the private copy: {0}")]
    Open(rusqlite::Error),
    #[error("the private copy does not verify: {0}")]
    Verify(rusqlite::Error),
}

/// An open private copy; the files live as long as this value's directory.
pub struct Snapshot {
    pub conn: Connection,
    pub dir: PathBuf,
}

#[derive(Debug, PartialEq, Eq)]
struct FileState {
    len: u64,
    mtime: Option<std::time::SystemTime>,
    head: Vec<u8>,
}

fn state(path: &Path, head_len: usize) -> Result<Option<FileState>, std::io::Error> {
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let md = f.metadata()?;
    let mut head = vec![0u8; head_len];
    let mut n = 0;
    while n < head_len {
        let k = f.read(&mut head[n..])?;
        if k == 0 {
            break;
        }
        n += k;
    }
    head.truncate(n);
    Ok(Some(FileState {
        len: md.len(),
        mtime: md.modified().ok(),
        head,
    }))
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(suffix);
    PathBuf::from(s)
}

type States = Vec<Option<FileState>>;

fn all_states(src: &Path) -> Result<States, std::io::Error> {
    let mut v = vec![state(src, 100)?];
    for s in SIDECARS {
        v.push(state(&sidecar(src, s), 32)?);
    }
    Ok(v)
}

/// Copy `from` to `to` in 1 MiB pieces, telling `read` each piece's bytes
/// as it is read (`--progress` counts a database as it is copied).
fn copy_counted(from: &Path, to: &Path, read: &dyn Fn(u64)) -> std::io::Result<()> {
    use std::io::{Read as _, Write as _};
    let mut src = File::open(from)?;
    let mut dst = File::create(to)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = match src.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        dst.write_all(&buf[..n])?;
        read(n as u64);
    }
    dst.flush()
}

/// Copy `src` and its sidecars into `dir` until two stats around the copy
/// agree, then open and verify the copy; `read` is told the bytes copied as
/// they are.
pub fn open_snapshot(
    src: &Path,
    dir: &Path,
    read: &dyn Fn(u64),
) -> Result<Snapshot, SnapshotError> {
    std::fs::create_dir_all(dir)?;
    let dst = dir.join("snapshot.db");
    let mut attempt = 0;
    loop {
        attempt += 1;
        let before = all_states(src)?;
        let Some(main) = &before[0] else {
            return Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "file vanished before it could be copied",
            )
            .into());
        };
        for (i, s) in SIDECARS.iter().enumerate() {
            let d = sidecar(&dst, s);
            let _ = std::fs::remove_file(&d);
            if before[i + 1].is_some() {
                match copy_counted(&sidecar(src, s), &d, read) {
                    Ok(()) => {}
                    // A sidecar removed meanwhile (checkpoint, commit): the
                    // state comparison below catches it.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        copy_counted(src, &dst, read)?;
        let after = all_states(src)?;
        if before == after {
            let wal = before[3].as_ref().map(|w| w.len).unwrap_or(0);
            if main.len == 0 && wal > 0 {
                return Err(SnapshotError::EmptyMainWithWal(wal));
            }
            if main.len > 0 && !main.head.starts_with(b"SQLite format 3\0") {
                return Err(SnapshotError::NotADatabase);
            }
            break;
        }
        if attempt >= ATTEMPTS {
            return Err(SnapshotError::Unstable(attempt));
        }
        std::thread::sleep(Duration::from_millis(20 * u64::from(attempt)));
    }
    let conn = Connection::open_with_flags(
        &dst,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI,
    )
    .map_err(SnapshotError::Open)?;
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(SnapshotError::Verify)?;
    Ok(Snapshot {
        conn,
        dir: dir.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--progress` is told a database's bytes as they are copied: in
    /// pieces of at most 1 MiB, the database and its WAL in all.
    #[test]
    fn the_copy_counts_its_bytes_as_it_reads() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let db = home.path().join("big.sqlite3");
        let writer = Connection::open(&db)?;
        writer.pragma_update(None, "journal_mode", "WAL")?;
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer.execute_batch(
            "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) INSERT INTO t SELECT randomblob(1000) FROM n;",
        )?;
        let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let wal = home.path().join("big.sqlite3-wal");
        let shm = home.path().join("big.sqlite3-shm");
        let want = size(&db) + size(&wal) + size(&shm);
        assert!(size(&wal) > 2 << 20, "the rows are in the WAL");
        let pieces = std::sync::Mutex::new(Vec::new());
        let scratch = tempfile::tempdir()?;
        open_snapshot(&db, scratch.path(), &|n| {
            pieces.lock().map(|mut p| p.push(n)).unwrap_or(())
        })?;
        let pieces = pieces.into_inner().unwrap_or_default();
        assert_eq!(pieces.iter().sum::<u64>(), want);
        assert!(pieces.len() >= 3, "{pieces:?}");
        assert!(pieces.iter().all(|n| *n <= 1 << 20), "{pieces:?}");
        Ok(())
    }

    #[test]
    fn rows_only_in_the_wal_are_read_and_the_source_is_untouched()
    -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let db = home.path().join("s.sqlite3");
        let writer = Connection::open(&db)?;
        writer.pragma_update(None, "journal_mode", "WAL")?;
        writer.pragma_update(None, "wal_autocheckpoint", 0)?;
        writer.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1),(2),(3);")?;
        // The writer stays open: the rows exist only in s.sqlite3-wal.
        let before: Vec<_> = std::fs::read_dir(home.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        let scratch = tempfile::tempdir()?;
        let snap = open_snapshot(&db, scratch.path(), &|_| {})?;
        let n: i64 = snap
            .conn
            .query_row("SELECT count(*) FROM t", [], |r| r.get(0))?;
        assert_eq!(n, 3);
        let after: Vec<_> = std::fs::read_dir(home.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name())
            .collect();
        assert_eq!(before, after);
        drop(writer);
        Ok(())
    }

    #[test]
    fn a_non_database_and_an_empty_main_with_wal_are_refused()
    -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let db = home.path().join("x.db");
        std::fs::write(&db, b"this is not sqlite at all, just text padding it out")?;
        let err = open_snapshot(&db, &home.path().join("s1"), &|_| {})
            .err()
            .map(|e| e.to_string());
        assert_eq!(err.as_deref(), Some("not a SQLite database (bad header)"));
        std::fs::write(&db, b"")?;
        std::fs::write(sidecar(&db, "-wal"), vec![1u8; 64])?;
        let err = open_snapshot(&db, &home.path().join("s2"), &|_| {})
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("main file empty; WAL not applied (64 bytes of WAL ignored, as SQLite would)")
        );
        Ok(())
    }
}
