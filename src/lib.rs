//! nanoload: everything the nanobot and nanoclaw agents leave on disk, as one
//! analyst-ready Parquet table.
//!
//! ```text
//! HOME ──discover (globset)──▶ stores ──extract (rayon, one store per task)──▶ Arrow batches
//!      ──▶ staging: narrow Parquet (one file per store kind) + blob files of the texts
//!      ──▶ embedded DuckDB runs the steps sql/V###__*.sql over the narrow rows
//!      ──▶ OUT.parquet: the ordered plan streamed, texts read from the blobs (src/events_writer.rs)
//!          (+ --tables DIR, --db FILE.duckdb, --dataset DIR)
//! ```
//!
//! The decoders (`jsonl`, `sources::*::*` mappers) need no DuckDB: with
//! `default-features = false` the crate builds without the `engine` feature,
//! which is how the fuzz targets link it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

/// An enum whose values are spelled as text in the tables and the SQL steps:
/// the variants with their text, in declaration order (which is also their
/// order), `ALL` (every value, that order), `as_str` and `parse`. One list
/// per enum: `diag::DiagKind`, `diag::DiagCode`, the kind traits' values
/// (`store::SessionLayout`, `TurnCopy`, `NanoclawPart`).
macro_rules! text_enum {
    (
        $(#[$doc:meta])*
        $name:ident {
            $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)?
        }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value spelled `s`.
            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.iter().copied().find(|v| v.as_str() == s)
            }
        }
    };
}

pub mod cache;
pub mod catalog;
pub mod diag;
pub mod discover;
pub mod extract;
pub mod jsonl;
pub mod prices;
pub mod progress;
pub mod readout;
pub mod rundir;
pub mod schema;
pub mod secrets;
pub mod snapshot;
pub mod sources;
pub mod stage;
pub mod store;
pub mod time;
pub mod timings;

#[cfg(test)]
mod testutil;

#[cfg(feature = "engine")]
pub mod atomic;
#[cfg(feature = "engine")]
pub mod cli;
#[cfg(feature = "engine")]
pub mod commands;
#[cfg(feature = "engine")]
pub mod config;
#[cfg(feature = "engine")]
pub mod dataset;
#[cfg(feature = "engine")]
pub mod dbfile;
#[cfg(feature = "engine")]
pub mod dest;
#[cfg(feature = "engine")]
pub mod engine;
#[cfg(feature = "engine")]
pub mod events_writer;
#[cfg(feature = "engine")]
pub mod keep;
#[cfg(feature = "engine")]
pub mod ledger;
#[cfg(feature = "engine")]
pub mod mcp;
#[cfg(feature = "engine")]
pub mod otlp;
#[cfg(feature = "engine")]
pub mod pipeline;
#[cfg(feature = "engine")]
pub mod report;
#[cfg(feature = "engine")]
pub mod run;
#[cfg(feature = "engine")]
pub mod sink;
#[cfg(feature = "engine")]
pub mod source;
#[cfg(feature = "engine")]
pub mod steps;
#[cfg(feature = "engine")]
pub mod summary;
#[cfg(feature = "engine")]
pub mod usage;

#[cfg(feature = "engine")]
pub use config::Options;
#[cfg(feature = "engine")]
pub use run::{RunError, run};
#[cfg(feature = "engine")]
pub use summary::{ExitCode, Summary};

/// The version string that enters `load_id`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// This build's identity: 16 hex of SHA-256 over its sources (`build.rs`).
/// Cache entries are keyed on it, so a scanner or format change never
/// reuses an entry another build wrote.
pub const BUILD_ID: &str = env!("NANOLOAD_BUILD_ID");

/// The shape of the crate, checked: a newcomer reads `run()` top to bottom
/// and finds each stage in its own module, and no two modules need each other.
#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// `crate::<module>` references of each top-level module of `src/`
    /// (`x.rs`, or every file under `x/`), comments left out.
    fn imports() -> std::io::Result<BTreeMap<String, BTreeSet<String>>> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
            let e = e?;
            let rel = e.path().strip_prefix(&src).unwrap_or(e.path());
            let Some(first) = rel.iter().next().and_then(|c| c.to_str()) else {
                continue;
            };
            if !e.file_type().is_file() || rel.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let module = first.trim_end_matches(".rs").to_string();
            if module == "lib" || module == "main" {
                continue;
            }
            let text = std::fs::read_to_string(e.path())?;
            let deps = graph.entry(module.clone()).or_default();
            let code: String = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            // `crate::{a, b::c}` names a and b
            for name in names_after(&code, "crate::") {
                let is_module = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
                if is_module && name != module {
                    deps.insert(name);
                }
            }
        }
        Ok(graph)
    }

    #[test]
    fn top_level_modules_import_each_other_without_cycles() -> std::io::Result<()> {
        let graph = imports()?;
        // the extractors' API is a leaf of the pipeline, not a hub
        assert!(graph.contains_key("store") && graph.contains_key("sources"));
        // depth-first search; a module met again on the current path is a cycle
        fn visit(
            m: &str,
            graph: &BTreeMap<String, BTreeSet<String>>,
            path: &mut Vec<String>,
            done: &mut BTreeSet<String>,
        ) -> Result<(), String> {
            if let Some(i) = path.iter().position(|p| p == m) {
                return Err(format!("{} → {m}", path[i..].join(" → ")));
            }
            if done.contains(m) {
                return Ok(());
            }
            path.push(m.to_string());
            for d in graph.get(m).into_iter().flatten() {
                visit(d, graph, path, done)?;
            }
            path.pop();
            done.insert(m.to_string());
            Ok(())
        }
        let mut done = BTreeSet::new();
        for m in graph.keys() {
            let found = visit(m, &graph, &mut Vec::new(), &mut done);
            assert_eq!(found, Ok(()), "import cycle");
        }
        Ok(())
    }

    /// A cycle is found: the check above cannot pass vacuously.
    #[test]
    fn the_cycle_check_sees_the_real_edges() -> std::io::Result<()> {
        let graph = imports()?;
        let deps = |m: &str| graph.get(m).cloned().unwrap_or_default();
        assert!(deps("discover").contains("sources"));
        assert!(deps("sources").contains("store"));
        assert!(!deps("store").contains("sources"));
        assert!(!deps("store").contains("discover"));
        Ok(())
    }

    /// The readers read a load's outputs through `source` (which opens every
    /// SOURCE) and `readout` (the SQL and number formats they share): none
    /// imports the load's engine, its stages, or another reader.
    #[test]
    fn readers_import_neither_the_engine_nor_each_other() -> std::io::Result<()> {
        let graph = imports()?;
        const READERS: [&str; 4] = ["report", "usage", "mcp", "otlp"];
        const LOAD: [&str; 6] = ["engine", "run", "steps", "stage", "extract", "sink"];
        let mut wrong = Vec::new();
        for reader in READERS {
            let deps = graph.get(reader).cloned().unwrap_or_default();
            assert!(
                deps.contains("source") || deps.contains("readout"),
                "{reader} reads neither through source nor readout"
            );
            for d in &deps {
                if LOAD.contains(&d.as_str()) || (READERS.contains(&d.as_str()) && d != reader) {
                    wrong.push(format!("{reader} imports {d}"));
                }
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
        Ok(())
    }

    /// Each production file of `src/` (`lib.rs`, `main.rs` and the test
    /// modules left out) as its path under `src/` and its code up to its
    /// test module, comment lines left out.
    fn production_code() -> std::io::Result<Vec<(String, String)>> {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        for e in walkdir::WalkDir::new(&src).sort_by_file_name() {
            let e = e?;
            let rel = e.path().strip_prefix(&src).unwrap_or(e.path());
            let name = rel.to_string_lossy().into_owned();
            let test = rel.iter().any(|c| c == "tests" || c == "tests.rs");
            if !e.file_type().is_file() || !name.ends_with(".rs") || test {
                continue;
            }
            if name == "lib.rs" || name == "main.rs" {
                continue;
            }
            let code = std::fs::read_to_string(e.path())?
                .lines()
                // a test module's `#[cfg(test)]`, or `#[cfg(all(test, …))]`
                .take_while(|l| !(l.starts_with("#[cfg(") && l.contains("test")))
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            files.push((name, code));
        }
        Ok(files)
    }

    /// The names `code` takes after `path`: `<path>f` and each name of
    /// `<path>{f, g::h}` (f, g), each its first word.
    fn names_after(code: &str, path: &str) -> BTreeSet<String> {
        let word = |s: &str| -> String {
            s.trim_start()
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect()
        };
        let mut names = BTreeSet::new();
        for (i, _) in code.match_indices(path) {
            let rest = &code[i + path.len()..];
            match rest.strip_prefix('{') {
                Some(list) => names.extend(
                    list.split('}')
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .map(word),
                ),
                None => {
                    names.insert(word(rest));
                }
            }
        }
        names
    }

    /// The pipeline's halves are driven, not copied: a load, a sync and an
    /// export reach discovery, extraction and the engine's retried run
    /// through `crate::pipeline` only; and every DuckDB nanoload opens, in
    /// memory or a database file, is opened by `crate::engine`
    /// (`open_in_memory`, `open_file`: one settings block).
    #[cfg(feature = "engine")]
    #[test]
    fn the_pipeline_and_duckdb_are_each_opened_in_one_place() -> std::io::Result<()> {
        let mut wrong = Vec::new();
        for (file, code) in production_code()? {
            let own = |m: &str| file == format!("{m}.rs") || file.starts_with(&format!("{m}/"));
            if own("pipeline") {
                continue;
            }
            for (module, f) in [("discover", "discover"), ("extract", "extract")] {
                if !own(module) && names_after(&code, &format!("crate::{module}::")).contains(f) {
                    wrong.push(format!("{file} calls {module}::{f}"));
                }
            }
            for call in ["Engine::open(", "with_memory_retries(", "RunDir::create("] {
                if code.contains(call) && !own("rundir") {
                    wrong.push(format!("{file} calls {call}…)"));
                }
            }
            // rusqlite's connections are SQLite's (the stores' snapshots)
            let duckdb = !code.contains("rusqlite");
            if duckdb && !own("engine") && code.contains("Connection::open") {
                wrong.push(format!("{file} opens a DuckDB itself"));
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
        Ok(())
    }

    /// The directions the layers keep, as "A must not import B": the
    /// extractors' API is implemented by the stage, not built on it; the
    /// readers read outputs, never the load's engine; `report` and `mcp`
    /// answer from the outputs, not through `usage`'s tables.
    const MUST_NOT_IMPORT: [(&str, &str); 7] = [
        ("store", "stage"),
        ("report", "engine"),
        ("usage", "engine"),
        ("mcp", "engine"),
        ("otlp", "engine"),
        ("report", "usage"),
        ("mcp", "usage"),
    ];

    #[test]
    fn no_module_imports_what_its_direction_forbids() -> std::io::Result<()> {
        let graph = imports()?;
        let mut wrong = Vec::new();
        for (a, b) in MUST_NOT_IMPORT {
            assert!(graph.contains_key(a), "no module {a}");
            if graph[a].contains(b) {
                wrong.push(format!("{a} imports {b}"));
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
        Ok(())
    }

    /// A provider's sources (`src/sources/<provider>/`) reach another
    /// provider's only through `sources::shared`: none names another
    /// provider's module, by `crate::sources::` or by `super::super::`.
    #[test]
    fn sources_never_import_another_providers_modules() -> std::io::Result<()> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sources");
        let providers: Vec<String> = std::fs::read_dir(&root)?
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(providers.len() >= 2, "{providers:?}");
        let mut wrong = Vec::new();
        for e in walkdir::WalkDir::new(&root).sort_by_file_name() {
            let e = e?;
            let rel = e.path().strip_prefix(&root).unwrap_or(e.path());
            let Some(own) = rel.iter().next().and_then(|c| c.to_str()) else {
                continue;
            };
            if !e.file_type().is_file() || rel.components().count() < 2 {
                continue;
            }
            let text = std::fs::read_to_string(e.path())?;
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for other in providers.iter().filter(|p| *p != own) {
                    let named = [
                        format!("sources::{other}"),
                        format!("super::super::{other}"),
                    ];
                    if named.iter().any(|n| line.contains(n.as_str())) {
                        wrong.push(format!("{}: {}", rel.display(), line.trim()));
                    }
                }
            }
        }
        assert_eq!(wrong, Vec::<String>::new());
        Ok(())
    }

    /// `run()` stays a short script over the stages.
    #[cfg(feature = "engine")]
    #[test]
    fn run_is_a_short_script() -> std::io::Result<()> {
        let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/run.rs"))?;
        let body: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("pub fn run("))
            .take_while(|l| *l != "}")
            .collect();
        assert!(!body.is_empty(), "no `pub fn run(` in src/run.rs");
        assert!(body.len() < 60, "run() has {} lines", body.len() + 1);
        Ok(())
    }
}
