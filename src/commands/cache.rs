//! `nanoload cache list|clear [HOME]`: the list on stdout, what was removed
//! on stderr.

use std::path::PathBuf;

use clap::Subcommand;

use super::CommandError;
use crate::keep;
use crate::summary::ExitCode;

/// List or remove what nanoload keeps in the user's cache directory.
///
/// `usage`, `report`, `sql`, `mcp` and `otlp` given a HOME answer from a
/// ledger nanoload keeps for that HOME (one per HOME, by its canonical
/// path) in $XDG_CACHE_HOME/nanoload, else ~/.cache/nanoload
/// (~/Library/Caches/nanoload on macOS), a directory of mode 0700: the
/// first call reads all of HOME into it, every later one only the stores
/// whose files changed, and a row the agents delete stays in it (as in
/// `nanoload sync`; secrets redacted, as in every ledger). Beside each
/// ledger: a record naming its HOME, and the outputs exported from it for
/// the readers. `--no-keep` on those commands keeps nothing.
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

/// What `nanoload cache` does.
#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Each kept HOME: its last sync (UTC), its ledger's size, its path.
    ///
    /// Exit codes: 0 listed; 2 the cache directory cannot be read.
    #[command(long_about)]
    List,
    /// Remove the ledger kept for HOME, or for every HOME.
    ///
    /// Only the files nanoload writes there are removed; anything else in
    /// the directory is left alone and named. A HOME whose ledger another
    /// nanoload is syncing now is left as it is.
    ///
    /// Exit codes: 0 removed (perhaps nothing); 1 removed, but the
    /// directory holds files nanoload did not write (left alone); 2 the
    /// cache directory cannot be read or written; 5 a HOME is being synced
    /// now (not removed).
    #[command(long_about)]
    Clear(CacheClearArgs),
}

/// `nanoload cache clear [HOME]`.
#[derive(Debug, clap::Args)]
pub struct CacheClearArgs {
    /// The HOME whose kept ledger to remove (default: every kept HOME's).
    #[arg(value_name = "HOME")]
    pub home: Option<PathBuf>,
}

pub fn run(a: CacheArgs) -> Result<ExitCode, CommandError> {
    let dir = keep::cache_dir().ok_or(CommandError::NoCacheDir)?;
    match a.action {
        CacheAction::List => {
            let kept = keep::list(&dir).map_err(|e| CommandError::CacheList(dir.clone(), e))?;
            // a closed pipe (`| head`) is not an error
            let _ = super::print(&keep::listing(&dir, &kept));
            Ok(ExitCode::Ok)
        }
        CacheAction::Clear(c) => {
            let done = keep::clear(&dir, c.home.as_deref())?;
            for (home, bytes) in &done.removed {
                eprintln!(
                    "nanoload: removed the kept ledger of {home} ({} bytes)",
                    crate::readout::thousands(i64::try_from(*bytes).unwrap_or(i64::MAX))
                );
            }
            if let (Some(h), true) = (&c.home, done.removed.is_empty() && done.busy.is_empty()) {
                eprintln!(
                    "nanoload: nothing kept for {} in {}",
                    h.display(),
                    dir.display()
                );
            }
            for home in &done.busy {
                eprintln!(
                    "nanoload: not removed: {home}: another nanoload is syncing it now; try again when it has finished"
                );
            }
            for p in &done.foreign {
                eprintln!(
                    "nanoload: left alone: {} (not a file nanoload keeps)",
                    p.display()
                );
            }
            Ok(if !done.busy.is_empty() {
                ExitCode::Busy
            } else if !done.foreign.is_empty() {
                ExitCode::Partial
            } else {
                ExitCode::Ok
            })
        }
    }
}
