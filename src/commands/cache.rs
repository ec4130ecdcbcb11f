//! `nanoload cache list|clear [HOME]`: the list on stdout, what was removed
//! on stderr.

use super::CommandError;
use crate::cli::{CacheAction, CacheArgs};
use crate::keep;
use crate::summary::ExitCode;

pub fn run(a: CacheArgs) -> Result<ExitCode, CommandError> {
    let dir = keep::cache_dir().ok_or(CommandError::NoCacheDir)?;
    match a.action {
        CacheAction::List => {
            let kept = keep::list(&dir).map_err(|source| CommandError::CacheList {
                dir: dir.clone(),
                source,
            })?;
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
