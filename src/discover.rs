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
//! Hidden directories are walked. A symlink whose target stays inside HOME
//! is followed, its files named by the path through the link; a file that is
//! also reached under its own path is read once, there (the link gets a
//! `warning`). A link out of HOME is followed only with `--follow-links`;
//! without it a link to agent state gets a `skipped_link` diagnostic (exit
//! code 1): judged from its name and the names one level inside, and else by
//! searching its target as the walk would walk it (every depth, links inside
//! followed, loops not) for a file that would be read as a store. Only a
//! link that holds none is merely counted (docs/design.md "Discovery"). A
//! link to a directory the walk is inside of (itself, or a directory a
//! followed link led to) is a loop: a `warning`, not walked again.
//! Discovery only stats files and lists directories: nothing inside HOME is
//! opened for writing. What it could not see into — a directory it could
//! not list, a dangling link, a link it did not follow, a loop — it keeps
//! as [`Unseen`]: nothing below such a place was read, so nothing below it
//! can be taken for absent (`nanoload sync`, docs/design.md "Ledger").

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use sha2::{Digest, Sha256};
use walkdir::WalkDir;

use crate::diag::{DiagKind, Diagnostic};
use crate::schema::{Agent, Role};
use crate::sources::REGISTRY;
use crate::store::{FileInfo, GlobPart, Store, StoreRole};

/// What discovery found.
#[derive(Debug, Default)]
pub struct Discovery {
    /// Sorted by (kind, rel): the order is part of the output's determinism.
    pub stores: Vec<Store>,
    pub diagnostics: Vec<Diagnostic>,
    /// Symlinks skipped silently: out of HOME (not followed) or dangling,
    /// and holding nothing that would be read as a store.
    pub links_skipped: usize,
    pub files_seen: usize,
    /// The places the walk could not see into, in the order it met them.
    pub unseen: Vec<Unseen>,
}

/// A place under HOME that discovery could not see into: a directory it
/// could not list (or HOME itself), a dangling symlink, a symlink it did not
/// follow (out of HOME without `--follow-links`), a symlink loop. Nothing
/// below it was read, so no store below it is known to be absent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unseen {
    /// Relative to HOME; "" is HOME itself.
    pub rel: String,
    /// Why, as one line (the I/O error, what the link is).
    pub why: String,
    /// A symlink (dangling, not followed, a loop), not a directory that
    /// could not be listed.
    pub link: bool,
}

impl Unseen {
    /// Whether `path` (relative to HOME) is this place or below it.
    pub fn holds(&self, path: &str) -> bool {
        self.rel.is_empty()
            || path == self.rel
            || path
                .strip_prefix(self.rel.as_str())
                .is_some_and(|rest| rest.starts_with('/'))
    }
}

impl Discovery {
    /// `load_id`: first 16 hex of SHA-256 over the version, the sorted
    /// (source_path, bytes, mtime_ns) of every store file, and `options`:
    /// the options given that change the output (`Config::load_options`;
    /// none at the defaults, so a default run's id is the files' alone),
    /// each after a NUL, which no file's line holds.
    pub fn load_id(&self, options: &[String]) -> String {
        let mut files: Vec<(String, u64, i128)> = self
            .stores
            .iter()
            .flat_map(|s| s.files().map(|(p, b, m)| (p.to_string(), b, m)))
            .collect();
        files.sort();
        let mut h = Sha256::new();
        h.update(b"nanoload ");
        h.update(crate::VERSION.as_bytes());
        for (p, b, m) in files {
            h.update(b"\n");
            h.update(p.as_bytes());
            h.update(format!("\t{b}\t{m}").as_bytes());
        }
        for o in options {
            h.update(b"\0");
            h.update((o.len() as u64).to_le_bytes());
            h.update(o.as_bytes());
        }
        crate::store::hex(&h.finalize()[..8])
    }
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

fn file_info(rel: String, abs: &Path) -> Option<FileInfo> {
    let md = std::fs::metadata(abs).ok()?;
    md.is_file().then(|| FileInfo {
        rel,
        abs: abs.to_path_buf(),
        bytes: md.len(),
        mtime_ns: mtime_ns(&md),
    })
}

/// The instance a store belongs to, from its path relative to HOME.
pub fn instance_of(agent: Agent, rel: &str) -> String {
    match agent {
        Agent::Nanobot => rel.split('/').next().unwrap_or(rel).to_string(),
        Agent::Nanoclaw => crate::sources::nanoclaw::install_root(rel)
            .map(|(root, _)| root)
            .or_else(|| {
                crate::sources::nanoclaw::exchange_archive::archive_parts(rel)
                    .map(|(root, _, _)| root)
            })
            .unwrap_or_else(|| ".".to_string()),
    }
}

/// Walk HOME and group the matched files into stores.
pub fn discover(home: &Path, follow_links: bool) -> Result<Discovery, globset::Error> {
    let mut w = Walk {
        home,
        matcher: Matcher::new()?,
        follow_links,
        out: Discovery::default(),
        stores: BTreeMap::new(),
        duplicate_links: BTreeMap::new(),
        via_links: BTreeMap::new(),
        walking: Vec::new(),
    };
    w.walk(home, "");
    let Walk {
        mut out,
        mut stores,
        duplicate_links,
        ..
    } = w;
    for (link, (target, n)) in duplicate_links {
        out.diagnostics.push(Diagnostic::new(
            DiagKind::Warning,
            link,
            format!("symlink to {target}: its {n} store file(s) are read once, under {target}"),
        ));
    }
    for store in stores.values_mut() {
        store.parts.sort();
        for suffix in ["-wal", "-journal"] {
            let mut p = store.abs.clone().into_os_string();
            p.push(suffix);
            if let Some(f) = file_info(format!("{}{suffix}", store.rel), Path::new(&p)) {
                store.sidecars.push(f);
            }
        }
    }
    // a nanoclaw upgrade marker is one only beside an install's data
    // (`v2.db` or `v2-sessions/`): elsewhere a `data/upgrade-state.json` is
    // some other program's file
    stores.retain(|_, s| {
        s.kind != "nanoclaw.upgrade_state"
            || s.abs
                .parent()
                .is_some_and(|d| d.join("v2.db").exists() || d.join("v2-sessions").is_dir())
    });
    let all: std::collections::BTreeSet<String> = stores.values().map(|s| s.rel.clone()).collect();
    for store in stores.values_mut() {
        store.role = match REGISTRY[store.extractor].role {
            StoreRole::ByPath(role) => role(&store.rel, home, &all),
            StoreRole::Fixed(role) => role,
        };
    }
    out.stores = stores.into_values().collect();
    out.stores
        .sort_by(|a, b| (a.kind, &a.rel).cmp(&(b.kind, &b.rel)));
    out.diagnostics.sort();
    Ok(out)
}

/// The registry index of `nanobot.unknown_store` (a kind no glob claims:
/// discovery gives it the files `unread::is_unknown_store` picks).
fn unknown_store() -> usize {
    REGISTRY
        .iter()
        .position(|e| e.kind == "nanobot.unknown_store")
        .unwrap_or(0)
}

/// One discovery walk: HOME, and every directory a followed link leads to,
/// each file named by its path through the links (relative to HOME).
struct Walk<'a> {
    home: &'a Path,
    matcher: Matcher,
    follow_links: bool,
    out: Discovery,
    /// store key (extractor, main rel) → store
    stores: BTreeMap<(usize, String), Store>,
    /// link rel → (the rel its files are read under, how many)
    duplicate_links: BTreeMap<String, (String, usize)>,
    /// real path → the link path a file reached only through links is read under
    via_links: BTreeMap<PathBuf, String>,
    /// The directories being walked (HOME, then each followed link's target
    /// inside it): a link to one of them, or to a directory holding one, is
    /// a loop.
    walking: Vec<PathBuf>,
}

impl Walk<'_> {
    /// Walk the directory `dir` whose path relative to HOME is `prefix`
    /// ("" for HOME itself). Links are never followed by walkdir itself:
    /// [`Walk::link`] decides each one.
    fn walk(&mut self, dir: &Path, prefix: &str) {
        self.walking.push(dir.to_path_buf());
        self.walk_entries(dir, prefix);
        self.walking.pop();
    }

    fn walk_entries(&mut self, dir: &Path, prefix: &str) {
        for entry in WalkDir::new(dir).follow_links(false).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    // a path walkdir does not name is taken for the walked
                    // directory itself: nothing below it is known to be absent
                    let path = e.path().and_then(|p| rel_under(dir, prefix, p));
                    // HOME itself is where agent state is
                    let kind = if path
                        .as_deref()
                        .is_some_and(|p| p.is_empty() || looks_like_agent_path(p))
                    {
                        DiagKind::Unreadable
                    } else {
                        DiagKind::Warning
                    };
                    let msg = e
                        .io_error()
                        .map(|io| io.to_string())
                        .unwrap_or_else(|| e.to_string());
                    let path = path.unwrap_or_else(|| prefix.to_string());
                    self.unseen(&path, &msg, false);
                    let shown = if path.is_empty() { ".".into() } else { path };
                    self.out.diagnostics.push(Diagnostic::new(kind, shown, msg));
                    continue;
                }
            };
            let Some(rel) = rel_under(dir, prefix, entry.path()) else {
                continue;
            };
            let ft = entry.file_type();
            if ft.is_symlink() {
                self.link(entry.path(), &rel);
            } else if ft.is_file() {
                let md = entry.metadata().ok();
                self.file(entry.path(), rel, md.as_ref(), !prefix.is_empty());
            }
        }
    }

    /// A place the walk could not see into ([`Unseen`]; `link`: a symlink).
    fn unseen(&mut self, rel: &str, why: &str, link: bool) {
        self.out.unseen.push(Unseen {
            rel: rel.to_string(),
            why: crate::diag::one_line(why),
            link,
        });
    }

    /// A symlink at `rel`: followed when its target stays inside HOME (or
    /// with `--follow-links`); a link out of HOME that holds agent state —
    /// by its names ([`holds_agent_state`]) or a store file anywhere below
    /// ([`Walk::store_below`]) — is reported as `skipped_link` (exit code
    /// 1), any other only counted. A dangling link named as a store or as
    /// an instance (`.nanobot*` directly under HOME: its disk not mounted)
    /// is a `skipped_link` too.
    fn link(&mut self, abs: &Path, rel: &str) {
        let target = match std::fs::canonicalize(abs) {
            Ok(t) => t,
            Err(e) => {
                let to = std::fs::read_link(abs)
                    .map(|t| t.display().to_string())
                    .unwrap_or_default();
                let why = format!("symlink → {to}: dangling ({e})");
                self.unseen(rel, &why, true);
                if self.matcher.matches_any(rel) || is_instance_root(rel) {
                    self.out
                        .diagnostics
                        .push(Diagnostic::new(DiagKind::SkippedLink, rel, why));
                } else {
                    self.out.links_skipped += 1;
                }
                return;
            }
        };
        let inside = target.starts_with(self.home);
        let looped = target.is_dir() && self.is_loop(abs, &target);
        if !inside && !self.follow_links {
            self.unseen(
                rel,
                &format!(
                    "symlink → {} leaves HOME: not read (use --follow-links to read it)",
                    target.display()
                ),
                true,
            );
            let holds = holds_agent_state(&self.matcher, rel, &target)
                || (!looped
                    && target.is_dir()
                    && self
                        .store_below(&target, rel, &mut Vec::new(), &mut Vec::new())
                        .is_some());
            if holds {
                self.out.diagnostics.push(Diagnostic::new(
                    DiagKind::SkippedLink,
                    rel,
                    format!(
                        "symlink → {} leaves HOME: not read (use --follow-links to read it)",
                        target.display()
                    ),
                ));
            } else {
                self.out.links_skipped += 1;
            }
            return;
        }
        if target.is_dir() {
            // a link to a directory that holds it, or holds one being
            // walked, would walk forever
            if looped {
                let why = format!(
                    "symlink loop: → {} holds the link or a directory being walked; not walked again",
                    target.display()
                );
                self.unseen(rel, &why, true);
                self.out
                    .diagnostics
                    .push(Diagnostic::new(DiagKind::Warning, rel, why));
                return;
            }
            self.walk(&target, rel);
        } else if target.is_file() {
            let md = std::fs::metadata(&target).ok();
            self.file(&target, rel.to_string(), md.as_ref(), true);
        }
    }

    /// Whether following the link `abs` to the directory `target` would
    /// walk a directory again: `target` holds the link, or a directory being
    /// walked.
    fn is_loop(&self, abs: &Path, target: &Path) -> bool {
        let here = abs
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .unwrap_or_default();
        here.starts_with(target) || self.walking.iter().any(|d| d.starts_with(target))
    }

    /// The first file below the directory `target` (reached as `rel`
    /// through a link that is not followed) that the walk would read as a
    /// store if the link were followed — a file a glob claims, not read
    /// under its own path inside HOME; a dangling link named like a store;
    /// an unreadable directory where agent state could be — searched as
    /// [`Walk::walk`] walks: every depth, links inside followed (`chain`:
    /// the directories being searched, so a loop is not; `searched`: the
    /// ones searched to their end), in name order.
    fn store_below(
        &self,
        target: &Path,
        rel: &str,
        chain: &mut Vec<PathBuf>,
        searched: &mut Vec<PathBuf>,
    ) -> Option<String> {
        chain.push(target.to_path_buf());
        let found = self.store_below_entries(target, rel, chain, searched);
        chain.pop();
        if found.is_none() {
            searched.push(target.to_path_buf());
        }
        found
    }

    fn store_below_entries(
        &self,
        target: &Path,
        rel: &str,
        chain: &mut Vec<PathBuf>,
        searched: &mut Vec<PathBuf>,
    ) -> Option<String> {
        for entry in WalkDir::new(target).follow_links(false).sort_by_file_name() {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    let path = e.path().and_then(|p| rel_under(target, rel, p));
                    match path {
                        Some(p) if looks_like_agent_path(&p) => return Some(p),
                        _ => continue,
                    }
                }
            };
            let Some(r) = rel_under(target, rel, entry.path()) else {
                continue;
            };
            let ft = entry.file_type();
            if ft.is_file() {
                if self.reads_as_store(entry.path(), &r) {
                    return Some(r);
                }
                continue;
            }
            if !ft.is_symlink() {
                continue;
            }
            let Ok(to) = std::fs::canonicalize(entry.path()) else {
                if self.matcher.matches_any(&r) {
                    return Some(r);
                }
                continue;
            };
            if to.is_file() && self.reads_as_store(&to, &r) {
                return Some(r);
            }
            let here = entry
                .path()
                .parent()
                .and_then(|p| std::fs::canonicalize(p).ok())
                .unwrap_or_default();
            let looped = here.starts_with(&to)
                || chain
                    .iter()
                    .chain(&self.walking)
                    .any(|d| d.starts_with(&to))
                || searched.contains(&to);
            if to.is_dir() && !looped {
                let found = self.store_below(&to, &r, chain, searched);
                if found.is_some() {
                    return found;
                }
            }
        }
        None
    }

    /// Whether the file `abs`, reached as `rel` through a link, would be read
    /// as a store there: a glob claims `rel`, and the file is not a store
    /// under its own path inside HOME (where the walk reads it anyway).
    fn reads_as_store(&self, abs: &Path, rel: &str) -> bool {
        if !matches!(self.matcher.classify(rel, self.home), Ok(Some(_))) {
            return false;
        }
        let own = std::fs::canonicalize(abs)
            .ok()
            .and_then(|real| rel_of(self.home, &real));
        !own.is_some_and(|own| matches!(self.matcher.classify(&own, self.home), Ok(Some(_))))
    }

    /// A regular file at `rel` (`via_link`: reached through a symlink).
    fn file(&mut self, abs: &Path, rel: String, md: Option<&std::fs::Metadata>, via_link: bool) {
        let (ei, gi) = match self.matcher.classify(&rel, self.home) {
            Ok(Some((ei, gi))) => (ei, Some(gi)),
            // where nanobot keeps state, a file with a store's shape that no
            // store claims: named once (`nanobot.unknown_store`), not ignored
            Ok(None) if crate::sources::nanobot::unread::is_unknown_store(&rel, self.home) => {
                (unknown_store(), None)
            }
            Ok(None) => {
                self.out.files_seen += 1;
                return;
            }
            Err(c) => {
                self.out.files_seen += 1;
                self.out.diagnostics.push(Diagnostic::new(
                    DiagKind::Warning,
                    rel,
                    format!("internal: {c}; file not read"),
                ));
                return;
            }
        };
        if via_link && let Some(real) = self.read_elsewhere(abs, &rel) {
            let link = self.link_of(&rel, &real);
            let e = self
                .duplicate_links
                .entry(link.0)
                .or_insert_with(|| (link.1, 0));
            e.1 += 1;
            return;
        }
        self.out.files_seen += 1;
        let ex = &REGISTRY[ei];
        let info = FileInfo {
            rel: rel.clone(),
            abs: abs.to_path_buf(),
            bytes: md.map(|m| m.len()).unwrap_or(0),
            mtime_ns: md.map(mtime_ns).unwrap_or(0),
        };
        let part = gi.map_or(GlobPart::Store, |gi| ex.globs[gi].part);
        let main_rel = match part {
            GlobPart::Store => rel.clone(),
            GlobPart::PartOf(owner) => owner(&rel),
        };
        let home = self.home;
        let store = self
            .stores
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
        match part {
            GlobPart::Store => {
                store.present = true;
                store.bytes = info.bytes;
                store.mtime_ns = info.mtime_ns;
                store.abs = info.abs;
            }
            GlobPart::PartOf(_) => store.parts.push(info),
        }
    }

    /// For a file reached through a link: the path it is read under
    /// instead — its own path inside HOME when that names a store too (the
    /// walk reads it there), else the first link path that reached it.
    fn read_elsewhere(&mut self, abs: &Path, rel: &str) -> Option<String> {
        let real = std::fs::canonicalize(abs).ok()?;
        if let Some(real_rel) = rel_of(self.home, &real)
            && real_rel != rel
            && matches!(self.matcher.classify(&real_rel, self.home), Ok(Some(_)))
        {
            return Some(real_rel);
        }
        match self.via_links.get(&real) {
            Some(first) => Some(first.clone()),
            None => {
                self.via_links.insert(real, rel.to_string());
                None
            }
        }
    }

    /// The link (relative to HOME) through which `rel` was reached, and the
    /// directory its target is read under: the longest common tail of the
    /// two paths is the part below the link.
    fn link_of(&self, rel: &str, real_rel: &str) -> (String, String) {
        let a: Vec<&str> = rel.split('/').collect();
        let b: Vec<&str> = real_rel.split('/').collect();
        let tail = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take_while(|(x, y)| x == y)
            .count();
        let head = |v: &[&str]| {
            let s = v[..v.len() - tail].join("/");
            if s.is_empty() { ".".to_string() } else { s }
        };
        (head(&a), head(&b))
    }
}

/// `p` (under the walked directory `dir`) as a path relative to HOME, given
/// that `dir` is `prefix` relative to HOME.
fn rel_under(dir: &Path, prefix: &str, p: &Path) -> Option<String> {
    let r = rel_of(dir, p)?;
    Some(match (prefix.is_empty(), r.is_empty()) {
        (true, _) => r,
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}/{r}"),
    })
}

/// Whether a link out of HOME leads to agent state, judged from names only
/// (the link's own path and the names one level inside its target): a link
/// inside an instance (`.nanobot*/…`) or that is one, a nanobot instance
/// root (`sessions/` beside `config.json`, `webui/` or `llm_usage.sqlite3`),
/// a nanoclaw install root (`data/v2.db`) or its `data/` (`v2.db`,
/// `v2-sessions/`), or a store file.
fn holds_agent_state(matcher: &Matcher, rel: &str, target: &Path) -> bool {
    if matcher.matches_any(rel)
        || rel
            .split('/')
            .next()
            .is_some_and(|c| c.starts_with(".nanobot"))
    {
        return true;
    }
    let Ok(entries) = std::fs::read_dir(target) else {
        return false;
    };
    let names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let has = |n: &str| names.iter().any(|x| x == n);
    (has("sessions") && (has("config.json") || has("webui") || has("llm_usage.sqlite3")))
        || has("v2.db")
        || has("v2-sessions")
        || (has("data") && target.join("data/v2.db").exists())
}

/// Whether `rel` names a nanobot instance: a `.nanobot*` entry directly
/// under HOME.
fn is_instance_root(rel: &str) -> bool {
    rel.starts_with(".nanobot") && !rel.contains('/')
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
mod tests;
