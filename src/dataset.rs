//! The fleet dataset (`--dataset DIR --host NAME`): every table of one home
//! as one hive partition of a dataset many homes share.
//!
//! ```text
//! DIR/events/host=<NAME>/part-0.parquet       OUT.parquet's rows (load_id included)
//! DIR/sessions/host=<NAME>/part-0.parquet     each --tables table, plus load_id
//! DIR/llm_calls/host=<NAME>/part-0.parquet
//! DIR/tz_offsets/host=<NAME>/part-0.parquet
//! DIR/diagnostics/host=<NAME>/part-0.parquet
//! DIR/sources/host=<NAME>/part-0.parquet
//! DIR/.nanoload-tmp-<pid>-<NAME>/<table>/host=<NAME>/part-0.parquet
//!                                             this run's files until commit (outside every
//!                                             DIR/<table>/: readers never see them)
//! ```
//! Commit swaps each table's new partition directory with the old one
//! (`renameat2(RENAME_EXCHANGE)`: a reader sees the old partition or the
//! new, never none) and then removes the old. A run killed before the commit
//! leaves every old partition as it was; one killed during the commit can
//! leave some tables at the new load and some at the old: every file carries
//! `load_id`, so a reader keeps the rows whose `load_id` is the host's
//! `events` load_id (docs/design.md "Fleet dataset"). The next run removes
//! temp directories of dead processes.

use std::path::{Path, PathBuf};

use duckdb::Connection;

use crate::engine::{TABLES, sql_str};

/// A `--host` that cannot name a partition.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("host name {0:?} must match [A-Za-z0-9._-]+ and not be . or ..")]
pub struct HostError(pub String);

/// An invalid `--host` (exit code 2).
pub fn check_host(host: &str) -> Result<(), HostError> {
    let ok = !host.is_empty()
        && host != "."
        && host != ".."
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(HostError(host.to_string()))
    }
}

/// One host's partitions being written.
#[derive(Debug)]
pub struct Dataset {
    pub dir: PathBuf,
    pub host: String,
    /// `DIR/.nanoload-tmp-<pid>-<host>`.
    tmp: PathBuf,
}

/// Every table of the dataset: `events`, then the `--tables` ones.
fn tables() -> impl Iterator<Item = &'static str> {
    std::iter::once("events").chain(TABLES)
}

impl Dataset {
    /// Create DIR if missing, remove what dead runs left in it, and check
    /// that it accepts this run's temp directory.
    pub fn prepare(dir: &Path, host: &str) -> std::io::Result<Dataset> {
        std::fs::create_dir_all(dir)?;
        clean_stale(dir);
        let tmp = dir.join(format!(".nanoload-tmp-{}-{host}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let ds = Dataset {
            dir: dir.to_path_buf(),
            host: host.to_string(),
            tmp,
        };
        for t in tables() {
            std::fs::create_dir_all(ds.tmp_part(t))?;
        }
        Ok(ds)
    }

    fn partition(&self, table: &str) -> String {
        format!("{table}/host={}", self.host)
    }

    /// The temp directory of `table`'s partition.
    fn tmp_part(&self, table: &str) -> PathBuf {
        self.tmp.join(self.partition(table))
    }

    /// Where `events` goes before the commit.
    pub fn events_file(&self) -> PathBuf {
        self.tmp_part("events").join("part-0.parquet")
    }

    /// The partition directories, once committed.
    pub fn dests(&self) -> Vec<PathBuf> {
        tables().map(|t| self.dir.join(self.partition(t))).collect()
    }

    /// Write every table but `events` (the sink writes that one to
    /// [`Dataset::events_file`]) with a `load_id` column.
    pub fn write_tables(&self, conn: &Connection, load_id: &str) -> Result<(), duckdb::Error> {
        for t in TABLES {
            let file = self.tmp_part(t).join("part-0.parquet");
            conn.execute_batch(&format!(
                "COPY ({}) TO {} (FORMAT parquet, COMPRESSION zstd)",
                crate::engine::side_table_rows(t, load_id),
                sql_str(&file)
            ))?;
        }
        Ok(())
    }

    /// Every table with the directory its partition is committed to
    /// (`DIR/<table>/host=NAME`), in commit order.
    pub fn partitions(&self) -> Vec<(&'static str, PathBuf)> {
        tables()
            .map(|t| (t, self.dir.join(self.partition(t))))
            .collect()
    }

    /// Check that every partition can be put in place, without changing
    /// any: each `DIR/<table>` is a directory or absent, each
    /// `DIR/<table>/host=NAME` a directory or absent, and this run's
    /// partition is there to move.
    pub fn probe(&self) -> Result<(), (PathBuf, std::io::Error)> {
        let not_dir = |p: &Path| -> Result<(), (PathBuf, std::io::Error)> {
            match std::fs::symlink_metadata(p) {
                Ok(m) if !m.is_dir() => Err((
                    p.to_path_buf(),
                    std::io::Error::other("it exists and is not a directory"),
                )),
                _ => Ok(()),
            }
        };
        for (t, dest) in self.partitions() {
            not_dir(&self.dir.join(t))?;
            not_dir(&dest)?;
            only_ours(t, &dest)?;
            let tmp = self.tmp_part(t);
            if !tmp.is_dir() {
                return Err((
                    dest,
                    std::io::Error::other(format!("{} is gone", tmp.display())),
                ));
            }
        }
        Ok(())
    }

    /// Put `table`'s new partition in place of the old one (swapped, so a
    /// reader sees one or the other); the old one is removed with the temp
    /// directory.
    pub fn commit_table(&self, table: &str) -> std::io::Result<()> {
        let new = self.tmp_part(table);
        let dest = self.dir.join(self.partition(table));
        std::fs::create_dir_all(self.dir.join(table))?;
        if dest.exists() {
            exchange(&new, &dest)?;
            // `new` now names the old partition: gone with the temp dir
            let _ = std::fs::remove_dir_all(&new);
            Ok(())
        } else {
            std::fs::rename(&new, &dest)
        }
    }

    /// Put every table's new partition in place of the old one.
    pub fn commit(&self) -> std::io::Result<()> {
        for t in tables() {
            self.commit_table(t)?;
        }
        std::fs::remove_dir_all(&self.tmp)
    }
}

/// A run that ends before its commit leaves nothing in DIR.
impl Drop for Dataset {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.tmp);
    }
}

/// Swap two directories atomically.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| {
        std::ffi::CString::new(p.as_os_str().as_bytes())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))
    };
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: two valid NUL-terminated paths, relative to the cwd.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Swap two directories (not atomically where `renameat2` is missing).
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    let aside = a.with_extension("old");
    std::fs::rename(b, &aside)?;
    std::fs::rename(a, b)?;
    std::fs::rename(aside, a)
}

/// A partition being replaced holds only its own `part-0.parquet` (the
/// commit removes the old directory whole: a file nanoload did not write
/// there would go with it).
fn only_ours(table: &'static str, dest: &Path) -> Result<(), (PathBuf, std::io::Error)> {
    use crate::dest::Output;
    let Ok(entries) = std::fs::read_dir(dest) else {
        return Ok(());
    };
    let output = if table == "events" {
        Output::Events
    } else {
        Output::Table(table)
    };
    for e in entries {
        let e = e.map_err(|e| (dest.to_path_buf(), e))?;
        let path = e.path();
        let refused = if e.file_name() == "part-0.parquet" {
            output.check(&path).map_err(|e| (path.clone(), e))?.err()
        } else {
            crate::dest::identify(&path)
                .map_err(|e| (path.clone(), e))?
                .into_what()
                .map(|what| crate::dest::Refused {
                    path: path.clone(),
                    output,
                    what,
                })
        };
        if let Some(r) = refused {
            return Err((path, std::io::Error::other(r)));
        }
    }
    Ok(())
}

/// Remove `.nanoload-tmp-<pid>-*` directories of processes that are gone.
fn clean_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.filter_map(Result::ok) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix(".nanoload-tmp-")
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !crate::rundir::process_alive(pid) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names() {
        for ok in ["alice-laptop", "host.example.org", "a_b", "x", "..."] {
            assert_eq!(check_host(ok), Ok(()), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "a b", "ä", "host=x"] {
            assert!(check_host(bad).is_err(), "{bad}");
        }
    }

    /// Commit replaces a host's partition as a whole and leaves other hosts alone.
    #[test]
    fn commit_replaces_this_hosts_partitions_only() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let other = dir.path().join("events/host=other/part-0.parquet");
        std::fs::create_dir_all(other.parent().unwrap_or(dir.path()))?;
        std::fs::write(&other, "theirs")?;
        for round in ["first", "second"] {
            let ds = Dataset::prepare(dir.path(), "me")?;
            for t in tables() {
                std::fs::write(ds.tmp_part(t).join("part-0.parquet"), round)?;
            }
            ds.commit()?;
        }
        for t in tables() {
            let part = dir.path().join(t).join("host=me");
            let files: Vec<_> = std::fs::read_dir(&part)?.collect::<Result<_, _>>()?;
            assert_eq!(files.len(), 1);
            assert_eq!(
                std::fs::read_to_string(part.join("part-0.parquet"))?,
                "second"
            );
        }
        assert_eq!(std::fs::read_to_string(&other)?, "theirs");
        let left: Vec<String> = std::fs::read_dir(dir.path())?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        assert!(left.iter().all(|n| !n.starts_with('.')), "{left:?}");
        Ok(())
    }
}
