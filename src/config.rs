//! Configuration: the options of a run, checked before anything is written.
//!
//! ```text
//! Options (CLI flags as a library value) ──Config::new──▶ Config
//!   home            canonical, a directory
//!   secret patterns compiled (a bad regex is a usage error)
//!   outputs         OUT, --tables DIR, --db FILE, --dataset DIR, --summary-json FILE,
//!                   --cache DIR: absolute, never inside HOME; the dataset host name checked
//!   prices          Pricing (the flags every command that shows a cost flattens):
//!                   data/prices.json, the --prices FILE laid over it (or alone), each
//!                   --price, the --free patterns; parsed and checked
//!   load_options    the options given that change the output (load_id folds them in)
//! ```

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::prices::PriceTable;
use crate::progress::Show;
use crate::secrets::Scanner;
use crate::store::{ExtractOptions, KeyDigest};

/// What a run does: the command line's flags, parsed by clap straight into
/// this value (`cli::Args` flattens it), or set by a library caller
/// ([`Options::new`] gives the defaults).
#[derive(Debug, Clone, clap::Args)]
pub struct Options {
    /// The home directory to read (e.g. a copy of /home/alice).
    #[arg(value_name = "HOME")]
    pub home: PathBuf,

    /// The events table to write (Parquet, zstd). Written to a temporary name
    /// beside it and renamed when complete; must be outside HOME. Optional
    /// with --dataset.
    #[arg(value_name = "OUT.parquet", required_unless_present = "dataset")]
    pub out: Option<PathBuf>,

    /// Also write the other tables as DIR/<table>.parquet (sessions,
    /// llm_calls, tz_offsets, diagnostics, sources). DIR is created if needed.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Also write every table into a DuckDB database file (storage version
    /// v1.0.0, readable by older DuckDB shells).
    #[arg(long, value_name = "FILE.duckdb")]
    pub db: Option<PathBuf>,

    /// Write every table (events, sessions, llm_calls, tz_offsets,
    /// diagnostics, sources) as this host's hive partition of a fleet dataset:
    /// DIR/<table>/host=NAME/part-0.parquet, replacing the host's previous
    /// partitions (other hosts' are kept). Files carry load_id. DIR is
    /// created if needed and must be outside HOME; this run's files live in
    /// DIR/.nanoload-tmp-<pid>-NAME until all are written.
    #[arg(long, value_name = "DIR")]
    pub dataset: Option<PathBuf>,

    /// The dataset's host name (default: HOME's directory name); it must
    /// match [A-Za-z0-9._-]+ and not be . or ..
    #[arg(long, value_name = "NAME", requires = "dataset")]
    pub host: Option<String>,

    /// The host's UTC offset as ±HH:MM (local = UTC + offset). Overrides the
    /// offset derived from evidence; rows get time_basis `local_given`.
    #[arg(
        long = "utc-offset",
        value_name = "±HH:MM",
        value_parser = parse_offset,
        allow_hyphen_values = true
    )]
    pub utc_offset_minutes: Option<i32>,

    /// Worker threads of the extraction, the SQL steps and the write
    /// (default: the number of CPUs). The SQL steps of a home of at most
    /// 50 000 event rows run on one of them, which is faster there. The
    /// output is byte-identical whatever the number.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// Also follow symbolic links that leave HOME. Links whose target stays
    /// inside HOME are always followed (a file reached twice is read once,
    /// under its own path). Without this flag a link out of HOME to agent
    /// state (a .nanobot* instance or anything inside one, a nanobot or
    /// nanoclaw install root, a nanoclaw data/ directory, a store file, or a
    /// directory holding a store file at any depth: its target is searched)
    /// is reported as skipped_link and the exit code is 1.
    #[arg(long)]
    pub follow_links: bool,

    /// Emit WebUI reasoning records as `thinking` rows.
    #[arg(long)]
    pub include_thinking: bool,

    /// Also treat text matching REGEX as a secret: replaced by
    /// [redacted:secret_pattern] in every text and native string, and a
    /// nanoclaw answer or option value holding it is redacted whole;
    /// repeatable.
    #[arg(long = "secret-pattern", value_name = "REGEX")]
    pub secret_patterns: Vec<String>,

    /// Turn off the secret scanner: chat text and native values are written
    /// verbatim (for evidence kept private; a warning says so). The
    /// config.json whitelist, pairing codes, credential columns and
    /// nanoclaw answer redaction stay on.
    #[arg(long)]
    pub no_redact: bool,

    /// DuckDB memory limit (e.g. 256MiB, 1GB); larger data spills to the
    /// private temp dir. Raised automatically when one row alone needs more;
    /// when the SQL steps still run out of memory they run again at twice,
    /// then four times the limit (a warning names the step each time).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_size)]
    pub memory_limit: u64,

    /// Keep each store's extracted rows in DIR (created mode 0700; must be
    /// outside HOME) and reuse them on the next run while the store is
    /// unchanged: same kind, role, instance and path, same size, mtime and
    /// hash of all its bytes, the same for every file it reads
    /// (-wal, .workspace, ...), same nanoload build and extraction options
    /// (--secret-pattern, --no-redact, --include-thinking, --follow-links).
    /// Output bytes are the same as without it. nanoclaw stores are always
    /// read again. Entries no longer used are removed; one run at a time
    /// per DIR and HOME.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,

    /// How the LLM calls are priced (`--prices`, `--price`, `--free`): on
    /// the command line `cli::Args` parses them beside these options (clap
    /// tells whether an optional flattened struct was given only when it
    /// flattens none), and the load's are set here.
    #[arg(skip)]
    pub pricing: Pricing,

    /// Print only diagnostics that make the exit code non-zero; no summary.
    #[arg(long, short)]
    pub quiet: bool,

    /// Show progress on stderr while the run goes on — stores discovered,
    /// stores, bytes and rows extracted, each SQL step, the write — cleared
    /// before the summary. `auto`: only when stderr is a terminal (not
    /// TERM=dumb) and without --quiet; `always` draws even into a file.
    /// Without colours when NO_COLOR is set. Output files are the same.
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = When::Auto)]
    pub progress: When,

    /// Also write the end summary as JSON to FILE (written to a temporary
    /// name and renamed; must be outside HOME): load_id, exit code, counts
    /// per source kind, duplicates and their reasons, diagnostics per kind,
    /// secrets redacted per rule, phase timings, outputs, and the cache
    /// counts with --cache. Not written when nothing else is (exit 2).
    #[arg(long, value_name = "FILE")]
    pub summary_json: Option<PathBuf>,

    /// Print the time of each phase on stderr after the summary: discover,
    /// extract, stage, load, each SQL step (`sql V001__…`), write. Each line
    /// gives the wall seconds, their share of the run, and the CPU seconds
    /// (user and system, every thread) the process spent meanwhile: the
    /// figure that holds when other work shares the machine.
    #[arg(long)]
    pub timings: bool,

    /// OUT is the ledger nanoload keeps for HOME in the user's cache
    /// directory (`src/keep.rs`), which lies inside HOME when HOME holds
    /// that directory (`nanoload usage ~`, ~/.cache/nanoload): the one
    /// place inside HOME written to, never an agent's.
    #[arg(skip)]
    pub kept: bool,
}

impl Options {
    /// HOME and OUT with every other option at its default (as the command
    /// line without flags; progress never drawn).
    pub fn new(home: impl Into<PathBuf>, out: impl Into<PathBuf>) -> Options {
        Options {
            home: home.into(),
            out: Some(out.into()),
            tables: None,
            db: None,
            dataset: None,
            host: None,
            utc_offset_minutes: None,
            threads: None,
            follow_links: false,
            include_thinking: false,
            secret_patterns: Vec::new(),
            no_redact: false,
            memory_limit: 256 << 20,
            cache: None,
            pricing: Pricing::default(),
            quiet: false,
            progress: When::Never,
            summary_json: None,
            timings: false,
            kept: false,
        }
    }

    /// How progress is shown on this run's stderr (`--progress`, `--quiet`,
    /// whether stderr is a terminal, `TERM`, `NO_COLOR`).
    pub fn progress_shown(&self) -> Show {
        use std::io::IsTerminal;
        self.progress.show(
            std::io::stderr().is_terminal(),
            std::env::var("TERM").ok().as_deref(),
            std::env::var("NO_COLOR").ok().as_deref(),
            self.quiet,
        )
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

/// How LLM calls are priced: the flags of every command that shows a cost
/// (each flattens this one set, so the help says the same everywhere), and
/// the price table they make ([`Pricing::table`]). A load prices its calls
/// with it; a command that reads a load's output prices them again at read
/// when one is given ([`Pricing::at_read`]); a ledger's export prices with it.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
#[command(next_help_heading = "Pricing")]
pub struct Pricing {
    /// Price llm_calls.cost_usd and sessions.cost_usd with this file laid
    /// over the built-in table: JSON in the format of the built-in
    /// data/prices.json (USD per token of each model, generated from
    /// LiteLLM's price list; `nanoload prices` prints the table and the
    /// format); a model the file names takes its prices, every other model
    /// keeps the built-in ones. A model no table prices has no cost (NULL:
    /// unknown, never 0).
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

    /// Price with the --prices FILE alone, not laid over the built-in table.
    #[arg(long, requires = "prices")]
    pub prices_replace: bool,

    /// Price MODEL at IN USD per million input tokens and OUT per million
    /// output tokens (cached tokens at IN), laid over the price table:
    /// MODEL as the calls name it (`nanoload prices` shows how a call finds
    /// its price); repeatable.
    #[arg(long = "price", value_name = "MODEL=IN/OUT")]
    pub price: Vec<String>,

    /// Calls of a model matching PATTERN cost 0 (a self-hosted model): a
    /// model name or a glob (`*` any characters, `?` one), case-insensitive,
    /// matched against the call's model and its provider/model, e.g.
    /// 'vllm/*' or '*qwen*'; repeatable.
    #[arg(long = "free", value_name = "PATTERN")]
    pub free: Vec<String>,
}

impl Pricing {
    /// Whether any flag was given (none: the built-in table).
    pub fn given(&self) -> bool {
        self.prices.is_some() || !self.price.is_empty() || !self.free.is_empty()
    }

    /// The price table: the built-in one, or with `--prices FILE` laid over
    /// it (or alone with `--prices-replace`), then each `--price`, and the
    /// `--free` patterns; a bad one is a usage error.
    pub fn table(&self) -> Result<PriceTable, ConfigError> {
        let usage = |e: crate::prices::PriceError| ConfigError::Usage(crate::diag::one_line(&e.0));
        let mut table = match &self.prices {
            None => PriceTable::builtin(),
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| crate::prices::PriceError(e.to_string()))
                .and_then(|text| PriceTable::parse(&text))
                .and_then(|file| {
                    if self.prices_replace {
                        return Ok(file);
                    }
                    let mut table = PriceTable::builtin()?;
                    table.models.extend(file.models);
                    Ok(table)
                })
                .map_err(|e| {
                    crate::prices::PriceError(format!("--prices {}: {e}", file.display()))
                }),
        }
        .map_err(usage)?;
        for p in &self.price {
            let (model, price) = crate::prices::parse_price_flag(p).map_err(usage)?;
            table.models.insert(model, price);
        }
        for f in &self.free {
            table
                .free
                .push(crate::prices::check_free(f).map_err(usage)?);
        }
        Ok(table)
    }

    /// The table as the flags give it, in one line: `the built-in table
    /// (LiteLLM 1.110.2, released 2026-11-20), --price m=1/2, --free qwen*`.
    pub fn describe(&self) -> String {
        let release = crate::prices::builtin_release();
        let mut parts = vec![match (&self.prices, self.prices_replace) {
            (None, _) => format!("the built-in table ({release})"),
            (Some(f), true) => format!("{} alone", f.display()),
            (Some(f), false) => {
                format!("{} laid over the built-in table ({release})", f.display())
            }
        }];
        parts.extend(self.price.iter().map(|p| format!("--price {p}")));
        parts.extend(self.free.iter().map(|p| format!("--free {p}")));
        parts.join(", ")
    }

    /// For a command that reads a load's output: the table to price its
    /// calls again with, and how that is said, when a flag was given (None:
    /// the costs as the load wrote them).
    pub fn at_read(&self) -> Result<Option<Repricing>, ConfigError> {
        if !self.given() {
            return Ok(None);
        }
        Ok(Some(Repricing {
            table: self.table()?,
            said: format!(
                "priced at read from each call's tokens, not as loaded: {}",
                self.describe()
            ),
        }))
    }
}

/// The calls of a load's output priced again at read
/// (`crate::engine::reprice`): the table, and the sentence every reader
/// shows beside the costs.
#[derive(Debug, Clone, PartialEq)]
pub struct Repricing {
    pub table: PriceTable,
    pub said: String,
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
            .enumerate()
            .map(|(k, p)| {
                Regex::new(p).map_err(|e| {
                    ConfigError::Usage(format!(
                        "--secret-pattern #{}: not a valid regular expression: {}",
                        k + 1,
                        pattern_error(p, &e)
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
            let kept = opts.kept && Some(dest) == outputs.out.as_ref();
            if dest.starts_with(&home) && !kept {
                return Err(ConfigError::Output(
                    dest.clone(),
                    format!(
                        "it is inside HOME ({}); nanoload never writes inside HOME",
                        home.display()
                    ),
                ));
            }
        }
        let prices = opts.pricing.table()?;
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
                stage_all_wide: false,
                keys: KeyDigest::Fast,
                content_digests: false,
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
        if opts.pricing.given() {
            let builtin = PriceTable::builtin()
                .map_err(|e| ConfigError::Usage(crate::diag::one_line(&e.0)))?;
            if *prices != builtin {
                v.push(format!("prices={}", prices.digest()));
            }
        }
        Ok(v)
    }

    /// The options as a ledger records them (`loads.options`): those that
    /// change the output ([`Config::output_options`]), each
    /// `--secret-pattern` counted, never given — a pattern may be the
    /// secret itself (`secret_patterns=2`).
    pub fn shown_options(&self) -> String {
        shown(self.load_options.iter().map(String::as_str))
    }

    /// DuckDB's memory limit: the configured one, but at least 64 MiB, and
    /// enough for the largest row several times over (a 100 MB tool output).
    pub fn memory_limit_for(&self, max_row_bytes: u64) -> u64 {
        self.memory_limit
            .max(64 << 20)
            .max((64 << 20) + 4 * max_row_bytes)
    }
}

/// What is wrong with a `--secret-pattern`, without a word of the pattern
/// (it may be the secret itself: the regex crate's own message repeats it).
fn pattern_error(pattern: &str, e: &regex::Error) -> String {
    match regex_syntax::Parser::new().parse(pattern) {
        Err(regex_syntax::Error::Parse(a)) => a.kind().to_string(),
        Err(regex_syntax::Error::Translate(h)) => h.kind().to_string(),
        Err(_) => "it does not parse".into(),
        Ok(_) => match e {
            regex::Error::CompiledTooBig(limit) => {
                format!("compiled, it exceeds the size limit of {limit} bytes")
            }
            _ => "it does not compile".into(),
        },
    }
}

/// Options (`Config::output_options`' spelling) with the
/// `secret_pattern=…` ones replaced by their count, where the first was.
fn shown<'a>(options: impl Iterator<Item = &'a str>) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut patterns = 0usize;
    let mut at = None;
    for o in options {
        if o.starts_with("secret_pattern=") {
            patterns += 1;
            at.get_or_insert(out.len());
        } else {
            out.push(o.to_string());
        }
    }
    if let Some(at) = at {
        out.insert(at, format!("secret_patterns={patterns}"));
    }
    out.join(" ")
}

/// `loads.options` as a sync before this build recorded it (the options
/// joined by spaces, each `--secret-pattern` given as `secret_pattern=…`)
/// without any pattern: the same as [`Config::shown_options`] gives now. A
/// pattern may hold spaces: what follows `secret_pattern=` up to the next
/// option this build spells is the pattern.
pub fn without_secret_patterns(recorded: &str) -> String {
    let option = |t: &str| {
        ["include_thinking", "no_redact", "follow_links"].contains(&t)
            || ["utc_offset_minutes=", "prices=", "secret_pattern="]
                .iter()
                .any(|p| t.starts_with(p))
    };
    let mut tokens: Vec<&str> = Vec::new();
    let mut in_pattern = false;
    for t in recorded.split(' ') {
        if t.starts_with("secret_pattern=") {
            tokens.push("secret_pattern=");
            in_pattern = true;
        } else if in_pattern && !option(t) {
            continue;
        } else {
            in_pattern = false;
            tokens.push(t);
        }
    }
    shown(tokens.into_iter())
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

/// When `--progress` is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum When {
    Auto,
    Always,
    Never,
}

impl When {
    /// How progress is shown, given whether stderr is a terminal, `TERM`,
    /// `NO_COLOR` (set and not empty: no colours) and `--quiet`.
    pub fn show(
        self,
        stderr_is_terminal: bool,
        term: Option<&str>,
        no_color: Option<&str>,
        quiet: bool,
    ) -> Show {
        let drawn = match self {
            When::Always => true,
            When::Never => false,
            When::Auto => stderr_is_terminal && term != Some("dumb") && !quiet,
        };
        match (drawn, no_color.is_some_and(|v| !v.is_empty())) {
            (false, _) => Show::Off,
            (true, true) => Show::Plain,
            (true, false) => Show::Color,
        }
    }
}

/// Why a UTC offset (`--utc-offset`, a reader's `--timezone`) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OffsetError {
    #[error("{0:?} is not an offset of the form +HH:MM or -HH:MM")]
    Form(String),
    #[error("{0:?} is out of range: an offset runs from -14:00 to +14:00, minutes below 60")]
    Range(String),
}

/// Parse `±HH:MM` (or `Z`) to minutes.
pub fn parse_offset(s: &str) -> Result<i32, OffsetError> {
    let bad = || OffsetError::Form(s.to_string());
    if s == "Z" {
        return Ok(0);
    }
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    let (h, m) = rest.split_once(':').ok_or_else(bad)?;
    let digits = |x: &str, n| (1..=n).contains(&x.len()) && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(h, 2) || !digits(m, 2) {
        return Err(bad());
    }
    let (h, m): (i32, i32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if m >= 60 || h > 14 || (h == 14 && m > 0) {
        return Err(OffsetError::Range(s.to_string()));
    }
    Ok(sign * (h * 60 + m))
}

/// Why a byte size (`--memory-limit`) is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    #[error("{0:?} is not a size such as 256MiB")]
    Form(String),
    #[error("{0:?} is too large")]
    TooLarge(String),
}

/// Parse a byte size: `<n>[B|KB|MB|GB|KiB|MiB|GiB]` (case-insensitive).
pub fn parse_size(s: &str) -> Result<u64, SizeError> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| SizeError::Form(s.to_string()))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000 * 1000,
        "gb" => 1000 * 1000 * 1000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(SizeError::Form(s.to_string())),
    };
    n.checked_mul(mult)
        .ok_or_else(|| SizeError::TooLarge(s.to_string()))
}

#[cfg(test)]
mod tests;
