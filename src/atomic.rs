//! Atomic output files: each is written to a temp name beside its
//! destination and renamed onto it, so a file appears complete or not at
//! all (the outputs of a run, `crate::sink`; the report's page).
//!
//! ```text
//! <dir>/.<name>.nanoload-<pid>.tmp   Pending::tmp, written first
//! <dir>/<name>                        Pending::dest, replaced by Pending::commit (a rename)
//! ```
//! A temp named by a pid that is no longer a process is a killed run's
//! ([`Pending::clean_stale`]); [`Pending::probe`] and
//! [`Pending::check_dest`] say before any work whether the rename can
//! succeed, and whether what it would replace is nanoload's own file of that
//! kind ([`crate::dest`]: a ledger or a file nanoload did not write is never
//! replaced).

use std::path::{Path, PathBuf};

use crate::dest::Output;

/// One output file being written.
#[derive(Debug, Clone)]
pub struct Pending {
    pub tmp: PathBuf,
    pub dest: PathBuf,
    /// What it is: the only kind of file it may replace.
    pub output: Output,
}

fn tmp_prefix(dest: &Path) -> String {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.nanoload-")
}

impl Pending {
    pub fn new(dest: &Path, output: Output) -> Pending {
        let dir = dest.parent().map(Path::to_path_buf).unwrap_or_default();
        let tmp = dir.join(format!("{}{}.tmp", tmp_prefix(dest), std::process::id()));
        Pending {
            tmp,
            dest: dest.to_path_buf(),
            output,
        }
    }

    /// Remove temps a killed earlier run left for this destination: those
    /// named by a pid that is no longer a process.
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
            let pid = n
                .strip_prefix(&prefix)
                .and_then(|r| r.strip_suffix(".tmp"))
                .filter(|pid| pid.chars().all(|c| c.is_ascii_digit()))
                .and_then(|pid| pid.parse::<u32>().ok());
            let stale = pid.is_some_and(|pid| !crate::rundir::process_alive(pid));
            if stale && e.file_type().is_ok_and(|t| t.is_file()) {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }

    /// Check the destination directory accepts a file and the destination
    /// can be replaced by one (before any work).
    pub fn probe(&self) -> std::io::Result<()> {
        // what stands there first: a refused destination's directory is not
        // touched at all
        self.output
            .check(&self.dest)?
            .map_err(std::io::Error::other)?;
        std::fs::File::create(&self.tmp)?;
        let replaceable = self.check_dest();
        std::fs::remove_file(&self.tmp)?;
        replaceable
    }

    /// Whether renaming the temp file onto the destination would be
    /// refused: the destination is a directory (`rename` gives `EISDIR`), or
    /// another user's file in a sticky directory (`/tmp`) that is not ours
    /// either (`EPERM`; the temp file's owner is who we write as); or must
    /// not be: it is not nanoload's own file of this output's kind
    /// ([`Output::check`]; the error's source is the [`crate::dest::Refused`]).
    pub fn check_dest(&self) -> std::io::Result<()> {
        use std::os::unix::fs::MetadataExt;
        let Ok(dest) = std::fs::symlink_metadata(&self.dest) else {
            return Ok(());
        };
        if dest.is_dir() {
            return Err(std::io::Error::other("it is a directory"));
        }
        self.output
            .check(&self.dest)?
            .map_err(std::io::Error::other)?;
        let dir = self.tmp.parent().map(std::fs::metadata).transpose()?;
        let me = std::fs::metadata(&self.tmp).map(|m| m.uid());
        if let (Some(dir), Ok(me)) = (dir, me)
            && dir.mode() & 0o1000 != 0
            && me != 0
            && me != dest.uid()
            && me != dir.uid()
        {
            return Err(std::io::Error::other(format!(
                "it is owned by uid {} in a sticky directory: it cannot be replaced",
                dest.uid()
            )));
        }
        Ok(())
    }

    /// The temp file is there to be renamed.
    pub fn check_tmp(&self) -> std::io::Result<()> {
        match std::fs::symlink_metadata(&self.tmp) {
            Ok(m) if m.is_file() => Ok(()),
            Ok(_) => Err(std::io::Error::other(format!(
                "{} is not a file",
                self.tmp.display()
            ))),
            Err(e) => Err(std::io::Error::new(
                e.kind(),
                format!("{}: {e}", self.tmp.display()),
            )),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A dead process's temp of this output goes; a live process's (a load
    /// running beside this one), another output's and any other file stay.
    #[test]
    fn stale_temps_of_this_output_are_removed_and_nothing_else() -> std::io::Result<()> {
        let d = tempfile::tempdir()?;
        let dest = d.path().join("out.parquet");
        let mut dead = std::process::Command::new("true").spawn()?;
        dead.wait()?;
        let (dead, live) = (dead.id(), std::process::id());
        let names = [
            format!(".out.parquet.nanoload-{dead}.tmp"),
            format!(".out.parquet.nanoload-{live}.tmp"),
            ".out.parquet.nanoload-x.tmp".into(),
            format!(".other.parquet.nanoload-{dead}.tmp"),
            "keep.txt".into(),
        ];
        for n in &names {
            std::fs::write(d.path().join(n), b"x")?;
        }
        Pending::new(&dest, Output::Events).clean_stale();
        let mut left: Vec<String> = std::fs::read_dir(d.path())?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut want = names[1..].to_vec();
        want.sort();
        assert_eq!(left, want);
        Ok(())
    }
}
