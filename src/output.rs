//! Atomic outputs: every file appears complete or not at all.
//!
//! ```text
//! <dir>/.<name>.nanoload-<pid>.tmp   written first (DuckDB COPY / ATTACH)
//! <dir>/<name>                        renamed into place once every output is written
//! ```
//! A run first removes stale `.<name>.nanoload-*.tmp` files a killed run left
//! for the same output names, and nothing else.

use std::path::{Path, PathBuf};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
