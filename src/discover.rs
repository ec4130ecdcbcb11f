//! Discovery: one compiled `GlobSet` over HOME maps each file to exactly one
//! extractor of [`crate::sources::REGISTRY`].
//!
//! ```text
//! HOME/
//!   .nanobot*/…                      nanobot instances (directly under HOME only)
//!   <any dir>/data/v2.db             nanoclaw install root (HOME itself included)
//! every file ──rel path──▶ GlobSet::matches() ──▶ glob indices ──▶ (extractor, glob)
//!                                     0 kinds: not a store      2+ kinds: a bug (Conflict)
//! ```
//! Hidden directories are walked. Symlinks are not followed unless
//! `follow_links`; a skipped link that a store glob matches gets a
//! `skipped_link` diagnostic, other links are only counted.
//! Discovery only stats files: nothing inside HOME is opened for writing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use walkdir::WalkDir;

use crate::diag::{DiagKind, Diagnostic};
use crate::schema::{Agent, Role};
use crate::sources::{Extractor, GlobPart, REGISTRY};

/// One file of a store, with what `load_id` and `sources` need.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileInfo {
    /// Path relative to HOME, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub bytes: u64,
    pub mtime_ns: i128,
}

/// A store: the unit one extractor task reads.
#[derive(Debug, Clone)]
pub struct Store {
    /// Index into [`REGISTRY`].
    pub extractor: usize,
    pub kind: &'static str,
    pub agent: Agent,
    /// `.nanobot`, `.nanobot-work`, or the nanoclaw install root (`.` for HOME).
    pub instance: String,
    /// The store's main path relative to HOME (the `sources.source_path`).
    pub rel: String,
    pub abs: PathBuf,
    pub role: Role,
    /// Whether the main file itself exists (a WebUI transcript may survive
    /// only in its segments).
    pub present: bool,
    pub bytes: u64,
    pub mtime_ns: i128,
    /// Further files read with it, in read order (WebUI segments).
    pub parts: Vec<FileInfo>,
    /// Sidecars that change its content (`-wal`, `-journal`): they enter `load_id`.
    pub sidecars: Vec<FileInfo>,
}

impl Store {
    pub fn extractor(&self) -> &'static Extractor {
        &REGISTRY[self.extractor]
    }

    /// Every file of the store, for `load_id`.
    pub fn files(&self) -> impl Iterator<Item = (&str, u64, i128)> {
        let main = self
            .present
            .then_some((self.rel.as_str(), self.bytes, self.mtime_ns));
        main.into_iter()
            .chain(
                self.parts
                    .iter()
                    .map(|f| (f.rel.as_str(), f.bytes, f.mtime_ns)),
            )
            .chain(
                self.sidecars
                    .iter()
                    .map(|f| (f.rel.as_str(), f.bytes, f.mtime_ns)),
            )
    }
}

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Sorted by (kind, rel): the order is part of the output's determinism.
    pub stores: Vec<Store>,
    pub diagnostics: Vec<Diagnostic>,
    /// Symlinks skipped silently (they match no store glob).
    pub links_skipped: usize,
    pub files_seen: usize,
}

/// A path that two extractors claim: a bug in the registry's globs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path} is claimed by both {a} and {b}")]
pub struct Conflict {
    pub path: String,
    pub a: &'static str,
    pub b: &'static str,
}

/// The compiled glob set of the whole registry.
pub struct Matcher {
    set: GlobSet,
    /// glob index → (extractor index, glob entry index)
    owners: Vec<(usize, usize)>,
}

impl Matcher {
    pub fn new() -> Result<Matcher, globset::Error> {
        let mut b = GlobSetBuilder::new();
        let mut owners = Vec::new();
        for (ei, ex) in REGISTRY.iter().enumerate() {
            for (gi, g) in ex.globs.iter().enumerate() {
                b.add(
                    GlobBuilder::new(g.pattern)
                        .literal_separator(true)
                        .build()?,
                );
                owners.push((ei, gi));
            }
        }
        Ok(Matcher {
            set: b.build()?,
            owners,
        })
    }

    /// The single (extractor, glob) that claims `rel`, after each glob's own
    /// acceptance test against the file system.
    pub fn classify(&self, rel: &str, home: &Path) -> Result<Option<(usize, usize)>, Conflict> {
        let mut found: Option<(usize, usize)> = None;
        for i in self.set.matches(rel) {
            let (ei, gi) = self.owners[i];
            let g = &REGISTRY[ei].globs[gi];
            if let Some(accept) = g.accept
                && !accept(rel, home)
            {
                continue;
            }
            match found {
                Some((fe, _)) if fe != ei => {
                    return Err(Conflict {
                        path: rel.to_string(),
                        a: REGISTRY[fe].kind,
                        b: REGISTRY[ei].kind,
                    });
                }
                Some(_) => {}
                None => found = Some((ei, gi)),
            }
        }
        Ok(found)
    }

    pub fn matches_any(&self, rel: &str) -> bool {
        self.set.is_match(rel)
    }
}

fn rel_of(home: &Path, p: &Path) -> Option<String> {
    let r = p.strip_prefix(home).ok()?;
    let parts: Vec<String> = r
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

fn mtime_ns(md: &std::fs::Metadata) -> i128 {
    md.modified()
        .ok()
        .map(|t| match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_nanos() as i128,
            Err(e) => -(e.duration().as_nanos() as i128),
        })
        .unwrap_or(0)
}

fn file_info(home: &Path, abs: &Path) -> Option<FileInfo> {
    let md = std::fs::metadata(abs).ok()?;
    md.is_file().then(|| FileInfo {
        rel: rel_of(home, abs).unwrap_or_else(|| abs.to_string_lossy().into_owned()),
        abs: abs.to_path_buf(),
        bytes: md.len(),
        mtime_ns: mtime_ns(&md),
    })
}

/// The instance a store belongs to, from its path relative to HOME.
pub fn instance_of(agent: Agent, rel: &str) -> String {
    match agent {
        Agent::Nanobot => rel.split('/').next().unwrap_or(rel).to_string(),
        Agent::Nanoclaw => {
            if rel.starts_with("data/") {
                ".".to_string()
            } else {
                rel.find("/data/")
                    .map(|i| rel[..i].to_string())
                    .unwrap_or_else(|| ".".to_string())
            }
        }
    }
}

/// Walk HOME and group the matched files into stores.
pub fn discover(home: &Path, follow_links: bool) -> Result<Discovery, globset::Error> {
    let matcher = Matcher::new()?;
    let mut out = Discovery::default();
    // store key (extractor, main rel) → store
    let mut stores: BTreeMap<(usize, String), Store> = BTreeMap::new();
    let walker = WalkDir::new(home)
        .follow_links(follow_links)
        .sort_by_file_name();
    for entry in walker {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e
                    .path()
                    .and_then(|p| rel_of(home, p))
                    .unwrap_or_else(|| ".".into());
                let kind = if e.loop_ancestor().is_some() || !looks_like_agent_path(&path) {
                    DiagKind::Warning
                } else {
                    DiagKind::Unreadable
                };
                let msg = match e.loop_ancestor() {
                    Some(_) => "symlink loop: directory not walked again".to_string(),
                    None => e
                        .io_error()
                        .map(|io| io.to_string())
                        .unwrap_or_else(|| e.to_string()),
                };
                out.diagnostics.push(Diagnostic::new(kind, path, msg));
                continue;
            }
        };
        let ft = entry.file_type();
        let Some(rel) = rel_of(home, entry.path()) else {
            continue;
        };
        if ft.is_symlink() {
            // Only reached when links are not followed (walkdir reports the
            // link itself), or for a dangling link when they are.
            if matcher.matches_any(&rel) {
                let why = if follow_links {
                    "dangling symlink"
                } else {
                    "symlink not followed (use --follow-links)"
                };
                out.diagnostics
                    .push(Diagnostic::new(DiagKind::SkippedLink, rel, why));
            } else {
                out.links_skipped += 1;
            }
            continue;
        }
        if !ft.is_file() {
            continue;
        }
        out.files_seen += 1;
        let (ei, gi) = match matcher.classify(&rel, home) {
            Ok(Some(x)) => x,
            Ok(None) => continue,
            Err(c) => {
                out.diagnostics.push(Diagnostic::new(
                    DiagKind::Warning,
                    rel,
                    format!("internal: {c}; file not read"),
                ));
                continue;
            }
        };
        let ex = &REGISTRY[ei];
        let md = entry.metadata().ok();
        let info = FileInfo {
            rel: rel.clone(),
            abs: entry.path().to_path_buf(),
            bytes: md.as_ref().map(|m| m.len()).unwrap_or(0),
            mtime_ns: md.as_ref().map(mtime_ns).unwrap_or(0),
        };
        let main_rel = match ex.globs[gi].part {
            GlobPart::Store => rel.clone(),
            GlobPart::PartOf(owner) => owner(&rel),
        };
        let store = stores
            .entry((ei, main_rel.clone()))
            .or_insert_with(|| Store {
                extractor: ei,
                kind: ex.kind,
                agent: ex.agent,
                instance: instance_of(ex.agent, &main_rel),
                abs: home.join(&main_rel),
                rel: main_rel,
                role: Role::Primary,
                present: false,
                bytes: 0,
                mtime_ns: 0,
                parts: Vec::new(),
                sidecars: Vec::new(),
            });
        match ex.globs[gi].part {
            GlobPart::Store => {
                store.present = true;
                store.bytes = info.bytes;
                store.mtime_ns = info.mtime_ns;
                store.abs = info.abs;
            }
            GlobPart::PartOf(_) => store.parts.push(info),
        }
    }
    for store in stores.values_mut() {
        store.parts.sort();
        for suffix in ["-wal", "-journal"] {
            let mut p = store.abs.clone().into_os_string();
            p.push(suffix);
            if let Some(f) = file_info(home, Path::new(&p)) {
                store.sidecars.push(f);
            }
        }
    }
    let all: std::collections::BTreeSet<String> = stores.values().map(|s| s.rel.clone()).collect();
    for store in stores.values_mut() {
        let ex = store.extractor();
        store.role = match ex.role {
            Some(role) => role(&store.rel, home, &all),
            None => ex.default_role,
        };
    }
    out.stores = stores.into_values().collect();
    out.stores
        .sort_by(|a, b| (a.kind, &a.rel).cmp(&(b.kind, &b.rel)));
    out.diagnostics.sort();
    Ok(out)
}

/// Whether an unreadable directory could hold agent state (then it is a read
/// failure; elsewhere in HOME only a warning).
fn looks_like_agent_path(rel: &str) -> bool {
    rel.starts_with(".nanobot")
        || rel
            .split('/')
            .any(|c| c == "data" || c.starts_with("v2-sessions"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoclaw_instance_is_the_install_root() {
        assert_eq!(instance_of(Agent::Nanoclaw, "data/v2.db"), ".");
        assert_eq!(
            instance_of(Agent::Nanoclaw, "nanoclaw/data/v2.db"),
            "nanoclaw"
        );
        assert_eq!(
            instance_of(Agent::Nanoclaw, "src/nc/data/v2-sessions/ag/s/inbound.db"),
            "src/nc"
        );
        assert_eq!(
            instance_of(Agent::Nanobot, ".nanobot-work/sessions/x/a.jsonl"),
            ".nanobot-work"
        );
    }
}
