//! Configuration: the options of a run, checked before anything is written.
//!
//! ```text
//! Options (CLI flags as a library value) ──Config::new──▶ Config
//!   home            canonical, a directory
//!   secret patterns compiled (a bad regex is a usage error)
//!   outputs         OUT, --tables DIR, --db FILE, --dataset DIR, --summary-json FILE,
//!                   --cache DIR: absolute, never inside HOME; the dataset host name checked
//!   prices          data/prices.json, or the --prices FILE that replaces it, parsed
//!   load_options    the options given that change the output (load_id folds them in)
//! ```

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::prices::PriceTable;
use crate::progress::Show;
use crate::secrets::Scanner;
use crate::store::ExtractOptions;

/// What a run does (the CLI flags, as a library value).
#[derive(Debug, Clone)]
pub struct Options {
    pub home: PathBuf,
    /// OUT.parquet; optional with `--dataset`.
    pub out: Option<PathBuf>,
    pub tables: Option<PathBuf>,
    pub db: Option<PathBuf>,
    /// `--utc-offset`, in minutes (`local = utc + offset`).
    pub utc_offset_minutes: Option<i32>,
    pub threads: Option<usize>,
    pub follow_links: bool,
    pub include_thinking: bool,
    pub secret_patterns: Vec<String>,
    /// `--no-redact`: no secret scanner (the config.json whitelist, pairing
    /// codes, credential columns and nanoclaw answer redaction stay).
    pub no_redact: bool,
    /// DuckDB `memory_limit` in bytes (raised when one row needs more).
    pub memory_limit: u64,
    /// `--cache DIR`: reuse the staged rows of unchanged stores.
    pub cache: Option<PathBuf>,
    /// `--dataset DIR`: write every table as this host's hive partition.
    pub dataset: Option<PathBuf>,
    /// `--host NAME` (default: HOME's directory name).
    pub host: Option<String>,
    /// `--summary-json FILE`: the end summary as JSON.
    pub summary_json: Option<PathBuf>,
    /// `--progress`, resolved: drawn on stderr or not.
    pub progress: Show,
    /// `--prices FILE`: the price table instead of `data/prices.json`.
    pub prices: Option<PathBuf>,
}

impl Options {
    pub fn new(home: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Options {
        Options {
            home: home.into(),
            out: Some(out.into()),
            tables: None,
            db: None,
            utc_offset_minutes: None,
            threads: None,
            follow_links: false,
            include_thinking: false,
            secret_patterns: Vec::new(),
            no_redact: false,
            memory_limit: 256 << 20,
            cache: None,
            dataset: None,
            host: None,
            summary_json: None,
            progress: Show::Off,
            prices: None,
        }
    }
}

/// Options a run cannot start with (exit code 2, nothing written).
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{0}")]
    Usage(String),
    #[error("HOME {0}: {1}")]
    Home(PathBuf, String),
    #[error("cannot write {0}: {1}")]
    Output(PathBuf, String),
}

/// Where the outputs go: absolute paths outside HOME.
#[derive(Debug, Clone)]
pub struct OutputPaths {
    pub out: Option<PathBuf>,
    pub tables: Option<PathBuf>,
    pub db: Option<PathBuf>,
    /// `--dataset DIR` and the host name of its partitions.
    pub dataset: Option<(PathBuf, String)>,
    /// `--summary-json`.
    pub summary_json: Option<PathBuf>,
}

/// Validated options.
#[derive(Debug, Clone)]
pub struct Config {
    /// HOME, canonical.
    pub home: PathBuf,
    pub outputs: OutputPaths,
    pub extract: ExtractOptions,
    pub utc_offset_minutes: Option<i32>,
    /// Worker threads (extraction and DuckDB), at least 1.
    pub threads: usize,
    pub follow_links: bool,
    /// Bytes; [`Config::memory_limit_for`] raises it for huge rows.
    pub memory_limit: u64,
    /// `--cache DIR`, absolute, outside HOME (created by the run).
    pub cache: Option<PathBuf>,
    /// The price table of `cost_usd` (docs/design.md "Cost").
    pub prices: PriceTable,
    /// Every option given that changes the output, as `name=value`, in a
    /// fixed order; options left at their defaults are not listed, so a
    /// default run's `load_id` is the files' alone ([`Config::output_options`]).
    pub load_options: Vec<String>,
}

impl Config {
    pub fn new(opts: &Options) -> Result<Config, ConfigError> {
        let home = opts
            .home
            .canonicalize()
            .map_err(|e| ConfigError::Home(opts.home.clone(), e.to_string()))?;
        if !home.is_dir() {
            return Err(ConfigError::Home(
                opts.home.clone(),
                "not a directory".into(),
            ));
        }
        let secret_patterns = opts
            .secret_patterns
            .iter()
            .map(|p| {
                Regex::new(p).map_err(|e| {
                    ConfigError::Usage(format!(
                        "--secret-pattern {p:?}: {}",
                        crate::diag::one_line(&e.to_string())
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        if opts.out.is_none() && opts.dataset.is_none() {
            return Err(ConfigError::Usage(
                "nothing to write: give OUT.parquet, --dataset DIR, or both".into(),
            ));
        }
        if opts.host.is_some() && opts.dataset.is_none() {
            return Err(ConfigError::Usage(
                "--host names a --dataset partition: give --dataset DIR".into(),
            ));
        }
        let dataset = match &opts.dataset {
            Some(dir) => Some((resolve(dir)?, host_name(opts.host.as_deref(), &home)?)),
            None => None,
        };
        let outputs = OutputPaths {
            out: opts.out.as_deref().map(absolute_out).transpose()?,
            tables: opts.tables.as_deref().map(resolve).transpose()?,
            db: opts.db.as_deref().map(absolute_out).transpose()?,
            dataset,
            summary_json: opts.summary_json.as_deref().map(absolute_out).transpose()?,
        };
        let cache = opts.cache.as_deref().map(resolve).transpose()?;
        for dest in [
            outputs.out.as_ref(),
            outputs.tables.as_ref(),
            outputs.db.as_ref(),
            outputs.dataset.as_ref().map(|(d, _)| d),
            outputs.summary_json.as_ref(),
            cache.as_ref(),
        ]
        .into_iter()
        .flatten()
        {
            if dest.starts_with(&home) {
                return Err(ConfigError::Output(
                    dest.clone(),
                    format!(
                        "it is inside HOME ({}); nanoload never writes inside HOME",
                        home.display()
                    ),
                ));
            }
        }
        let prices = match &opts.prices {
            None => PriceTable::builtin(),
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| crate::prices::PriceError(e.to_string()))
                .and_then(|text| PriceTable::parse(&text))
                .map_err(|e| {
                    crate::prices::PriceError(format!("--prices {}: {e}", file.display()))
                }),
        }
        .map_err(|e| ConfigError::Usage(crate::diag::one_line(&e.0)))?;
        let threads = opts
            .threads
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map(|n| n.get())
                    .unwrap_or(1)
            })
            .max(1);
        let load_options = Config::output_options(opts, &prices)?;
        Ok(Config {
            load_options,
            home,
            outputs,
            extract: ExtractOptions {
                include_thinking: opts.include_thinking,
                scanner: (!opts.no_redact).then(|| Scanner::new(&secret_patterns)),
                secret_patterns,
            },
            utc_offset_minutes: opts.utc_offset_minutes,
            threads,
            follow_links: opts.follow_links,
            memory_limit: opts.memory_limit,
            cache,
            prices,
        })
    }

    /// What `load_id` folds in besides the version and the store files
    /// (`crate::discover::Discovery::load_id`): every option that changes
    /// the output and is not at its default — `--utc-offset`,
    /// `--include-thinking`, each `--secret-pattern` in order, `--no-redact`,
    /// `--follow-links`, and a `--prices` table that differs from the
    /// built-in one, by its content ([`PriceTable::digest`]). Threads, the
    /// memory limit, `--cache` and which outputs are written change no
    /// output byte and are left out.
    fn output_options(opts: &Options, prices: &PriceTable) -> Result<Vec<String>, ConfigError> {
        let mut v = Vec::new();
        if let Some(m) = opts.utc_offset_minutes {
            v.push(format!("utc_offset_minutes={m}"));
        }
        if opts.include_thinking {
            v.push("include_thinking".into());
        }
        for p in &opts.secret_patterns {
            v.push(format!("secret_pattern={p}"));
        }
        if opts.no_redact {
            v.push("no_redact".into());
        }
        if opts.follow_links {
            v.push("follow_links".into());
        }
        if opts.prices.is_some() {
            let builtin = PriceTable::builtin()
                .map_err(|e| ConfigError::Usage(crate::diag::one_line(&e.0)))?;
            if *prices != builtin {
                v.push(format!("prices={}", prices.digest()));
            }
        }
        Ok(v)
    }

    /// DuckDB's memory limit: the configured one, but at least 64 MiB, and
    /// enough for the largest row several times over (a 100 MB tool output).
    pub fn memory_limit_for(&self, max_row_bytes: u64) -> u64 {
        self.memory_limit
            .max(64 << 20)
            .max((64 << 20) + 4 * max_row_bytes)
    }
}

/// The dataset host: `--host`, else HOME's directory name; either must be
/// a valid host name ([`crate::dataset::check_host`]).
fn host_name(given: Option<&str>, home: &Path) -> Result<String, ConfigError> {
    let host = match given {
        Some(h) => h.to_string(),
        None => home
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    crate::dataset::check_host(&host).map_err(|e| {
        let hint = if given.is_none() {
            " (HOME's directory name; give --host NAME)"
        } else {
            ""
        };
        ConfigError::Usage(format!("--host: {e}{hint}"))
    })?;
    Ok(host)
}

/// The absolute, symlink-free form of a path that may not exist yet: its
/// nearest existing ancestor canonicalized, the rest appended.
fn resolve(p: &Path) -> Result<PathBuf, ConfigError> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| ConfigError::Output(p.to_path_buf(), e.to_string()))?
            .join(p)
    };
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => break,
        }
    }
    let mut out = existing
        .canonicalize()
        .map_err(|e| ConfigError::Output(p.to_path_buf(), e.to_string()))?;
    out.extend(rest.iter().rev());
    Ok(out)
}

/// The absolute form of a path that may not exist yet (its parent must).
fn absolute_out(p: &Path) -> Result<PathBuf, ConfigError> {
    let name = p
        .file_name()
        .ok_or_else(|| ConfigError::Output(p.to_path_buf(), "not a file name".into()))?;
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let parent = parent.canonicalize().map_err(|e| {
        ConfigError::Output(
            p.to_path_buf(),
            format!("directory {}: {e}", parent.display()),
        )
    })?;
    Ok(parent.join(name))
}
