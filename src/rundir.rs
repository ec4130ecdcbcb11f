//! The run dir: the run's private temp dir outside HOME, removed at the end
//! (named so as not to be confused with nanobot's workspaces)
//! (dropped), and the stale ones of killed runs removed at the start.
//!
//! ```text
//! $TMPDIR/nanoload-<pid>-XXXXXX/
//!   stage/      staged Parquet (one file per store kind, llm_calls, diagnostics, sources)
//!   scratch/    per-store private copies of SQLite stores (store-000123/)
//!   duckdb/     DuckDB's spill directory
//!   sorted-*.parquet   the writer's sorted ranges of OUT (removed as written)
//! ```
//! Every cleaner of what killed runs leave — these run dirs, the sink's
//! `.<name>.nanoload-<pid>.tmp` files, the dataset's `.nanoload-tmp-<pid>-*`
//! directories — removes only what a process that no longer exists left:
//! [`process_alive`] decides, for all three.

use std::path::{Path, PathBuf};

/// A run dir that could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("temporary directory: {0}")]
    Create(#[from] std::io::Error),
    #[error("the temporary directory {0} is inside HOME; set TMPDIR elsewhere")]
    InsideHome(PathBuf),
}

/// The run's private temp dir (stage/, scratch/, duckdb/).
pub struct RunDir {
    dir: tempfile::TempDir,
}

impl RunDir {
    /// Remove stale run dirs, then create this run's (never inside `home`).
    pub fn create(home: &Path) -> Result<RunDir, RunDirError> {
        clean_stale_tempdirs();
        let dir = tempfile::Builder::new()
            .prefix(&tempdir_prefix(std::process::id()))
            .tempdir()?;
        if dir.path().starts_with(home)
            || dir.path().canonicalize().is_ok_and(|t| t.starts_with(home))
        {
            return Err(RunDirError::InsideHome(dir.path().to_path_buf()));
        }
        Ok(RunDir { dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Staged Parquet files.
    pub fn stage_dir(&self) -> PathBuf {
        self.path().join("stage")
    }

    /// Private copies of SQLite stores, one directory per store.
    pub fn scratch_dir(&self) -> PathBuf {
        self.path().join("scratch")
    }

    /// DuckDB's spill directory.
    pub fn spill_dir(&self) -> PathBuf {
        self.path().join("duckdb")
    }
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
        if !process_alive(pid) && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Whether the process `pid` exists (this process included): what a
/// leftover named by its pid may be removed on. `kill(pid, 0)` sends nothing
/// and answers for processes of any user (`EPERM`: it exists), also where
/// `/proc` hides other users' processes; without libc, `/proc/<pid>`. A
/// pid that names no single process (0, or beyond `i32`) is not alive.
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(p) = i32::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return false;
    }
    alive(p)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn alive(pid: i32) -> bool {
    Path::new("/proc").join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live process (this one, a running child) is alive; a reaped child
    /// and pids that name no process are not.
    #[test]
    fn process_alive_tells_running_from_gone() -> std::io::Result<()> {
        assert!(process_alive(std::process::id()));
        let mut child = std::process::Command::new("sleep").arg("30").spawn()?;
        assert!(process_alive(child.id()));
        child.kill()?;
        child.wait()?;
        assert!(!process_alive(child.id()));
        assert!(!process_alive(0));
        assert!(!process_alive(u32::MAX));
        Ok(())
    }
}
