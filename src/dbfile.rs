//! Why DuckDB could not open a database file (a ledger, a `--db` file):
//! decided from what the file is and from DuckDB's error type, never from
//! the words of its message.
//!
//! ```text
//! the file cannot be opened for reading     → Io (the OS error)
//! no DuckDB header ("DUCK" at byte 8)       → Corrupt: not a DuckDB database file
//! another process holds its lock (fcntl)    → Busy, with that process's pid
//! DuckDB's error type DATA_CORRUPTION       → Corrupt: DuckDB cannot read it (its message)
//! anything else                             → Other (DuckDB's message)
//! ```
//! DuckDB locks a database file with a POSIX record lock (`fcntl`,
//! `F_SETLK`: a write lock for a writer, a read lock for a read-only open)
//! and reports a held one as an I/O error, as it reports a file that is not
//! a database; the duckdb crate keeps no error type of a failed query, so
//! the type is asked of DuckDB's C API again ([`error_type_of_attach`]).

use std::path::Path;

/// What a database file DuckDB could not open is.
#[derive(Debug)]
pub enum Unopened {
    /// The file cannot be read at all.
    Io(std::io::Error),
    /// Not a DuckDB database, or one whose contents are damaged: why.
    Corrupt(String),
    /// Another process has it open (its pid, when the lock says).
    Busy(Option<u32>),
    /// DuckDB's own message, for what none of the above explains.
    Other(String),
}

/// Whether a file's first bytes are DuckDB's file header: "DUCK" at byte 8.
pub fn is_duckdb_head(head: &[u8]) -> bool {
    head.get(8..12) == Some(b"DUCK")
}

/// DuckDB's `DUCKDB_ERROR_DATA_CORRUPTION` (`duckdb_error_type`).
const DATA_CORRUPTION: u32 = 43;

/// Why DuckDB could not open `path` (`error`: its error; `writing`: whether
/// it was opened to be written, which a reader's lock also stops).
pub fn why_unopened(path: &Path, error: &duckdb::Error, writing: bool) -> Unopened {
    use std::io::Read;
    let mut head = [0u8; 12];
    let n = match std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) {
        Ok(n) => n,
        Err(e) => return Unopened::Io(e),
    };
    if !is_duckdb_head(&head[..n]) {
        return Unopened::Corrupt("not a DuckDB database file".into());
    }
    if let Some(pid) = lock_holder(path, writing) {
        return Unopened::Busy((pid > 0).then_some(pid));
    }
    let message = crate::diag::one_line(&error.to_string());
    if error_type_of_attach(path) == Some(DATA_CORRUPTION) {
        return Unopened::Corrupt(format!("DuckDB cannot read this database ({message})"));
    }
    Unopened::Other(message)
}

/// The pid of another process holding a lock on `path` that stops an open
/// for writing (any lock) or for reading (a write lock); `Some(0)` when the
/// lock does not say. Asked with `F_GETLK`, which takes no lock. Only after
/// DuckDB failed to open the file: this process then holds no lock of its
/// own on it, which closing the probe's descriptor would release.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn lock_holder(path: &Path, writing: bool) -> Option<u32> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: an all-zero flock is a valid value of the plain C struct.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = if writing {
        libc::F_WRLCK
    } else {
        libc::F_RDLCK
    } as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: F_GETLK reads and writes the flock this pointer names, which
    // lives for the call; the descriptor is open.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut fl) };
    if rc != 0 || fl.l_type == libc::F_UNLCK as libc::c_short {
        return None;
    }
    Some(u32::try_from(fl.l_pid).unwrap_or(0))
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn lock_holder(_path: &Path, _writing: bool) -> Option<u32> {
    None
}

/// The `duckdb_error_type` of attaching `path` read-only in a fresh
/// in-memory database, through DuckDB's C API (the duckdb crate's errors
/// carry no type); `None` when it attaches, or the question cannot be put.
fn error_type_of_attach(path: &Path) -> Option<u32> {
    use duckdb::ffi;
    let sql = std::ffi::CString::new(format!(
        "ATTACH {} AS probe (READ_ONLY)",
        crate::engine::sql_str(path)
    ))
    .ok()?;
    let mut db: ffi::duckdb_database = std::ptr::null_mut();
    // SAFETY: a NULL path opens an in-memory database into `db`; on failure
    // nothing is allocated that needs closing.
    if unsafe { ffi::duckdb_open(std::ptr::null(), &mut db) } != ffi::DuckDBSuccess {
        return None;
    }
    let mut con: ffi::duckdb_connection = std::ptr::null_mut();
    let mut found = None;
    // SAFETY: `db` is open; `con`, once connected, and the result are
    // released below before `db` is closed; `sql` outlives the query.
    unsafe {
        if ffi::duckdb_connect(db, &mut con) == ffi::DuckDBSuccess {
            let mut result: ffi::duckdb_result = std::mem::zeroed();
            if ffi::duckdb_query(con, sql.as_ptr(), &mut result) != ffi::DuckDBSuccess {
                found = Some(ffi::duckdb_result_error_type(&mut result) as u32);
            }
            ffi::duckdb_destroy_result(&mut result);
            ffi::duckdb_disconnect(&mut con);
        }
        ffi::duckdb_close(&mut db);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A damaged database is corrupt by DuckDB's error type, a file that is
    /// not one by its header, a missing one an I/O error.
    #[test]
    fn damage_is_told_from_another_file_and_no_file() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let db = dir.path().join("a.duckdb");
        {
            let c = duckdb::Connection::open(&db)?;
            c.execute_batch("CREATE TABLE t AS SELECT range AS x FROM range(1000); CHECKPOINT;")?;
        }
        let mut bytes = std::fs::read(&db)?;
        bytes[4096..12288].fill(0x5a);
        std::fs::write(&db, &bytes)?;
        let e = match duckdb::Connection::open(&db) {
            Err(e) => e,
            Ok(_) => return Err("a damaged database opened".into()),
        };
        match why_unopened(&db, &e, true) {
            Unopened::Corrupt(why) => {
                assert!(
                    why.starts_with("DuckDB cannot read this database ("),
                    "{why}"
                )
            }
            other => return Err(format!("{other:?}").into()),
        }
        let text = dir.path().join("notes.duckdb");
        std::fs::write(&text, "my notes, not a database\n")?;
        assert!(matches!(
            why_unopened(&text, &e, true),
            Unopened::Corrupt(w) if w == "not a DuckDB database file"
        ));
        assert!(matches!(
            why_unopened(&dir.path().join("none.duckdb"), &e, true),
            Unopened::Io(io) if io.kind() == std::io::ErrorKind::NotFound
        ));
        Ok(())
    }
}
