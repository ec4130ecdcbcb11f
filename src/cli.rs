//! Command-line arguments (`nanoload --help`).

use std::path::PathBuf;

use std::io::IsTerminal;

use clap::{Parser, ValueEnum};

use crate::config::Options;
use crate::progress::Show;

/// Load everything the nanobot and nanoclaw agents left under HOME into one
/// Parquet table of events.
///
/// nanobot instances are the `.nanobot*` directories directly under HOME;
/// a nanoclaw install root is any directory under HOME holding `data/v2.db`.
/// Nothing is ever written inside HOME: SQLite stores are read from private
/// copies.
///
/// Exit codes: 0 every store read (declared losses and warnings allowed);
/// 1 output written, but some lines, records or stores could not be read, or
/// a link to agent state out of HOME was not followed (listed on stderr and
/// in the `diagnostics` table); 2 nothing written; 3 outputs partly replaced
/// (a rename failed after the others succeeded: stderr lists each output as
/// new or old).
///
/// `nanoload report OUT.parquet [--tables DIR] report.html` writes an HTML
/// report of a load's output (see `nanoload report --help`); a HOME named
/// `report` is given as `./report`.
#[derive(Debug, Parser)]
#[command(name = "nanoload", version, about, long_about)]
pub struct Args {
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
    #[arg(long, value_name = "±HH:MM", value_parser = parse_offset, allow_hyphen_values = true)]
    pub utc_offset: Option<i32>,

    /// Extraction threads (default: the number of CPUs). The output is
    /// byte-identical whatever the number.
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
    #[arg(long, value_name = "REGEX")]
    pub secret_pattern: Vec<String>,

    /// Turn off the secret scanner: chat text and native values are written
    /// verbatim (for evidence kept private; a warning says so). The
    /// config.json whitelist, pairing codes, credential columns and
    /// nanoclaw answer redaction stay on.
    #[arg(long)]
    pub no_redact: bool,

    /// DuckDB memory limit (e.g. 256MiB, 1GB); larger data spills to the
    /// private temp dir. Raised automatically when one row alone needs more.
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

    /// The price table of llm_calls.cost_usd and sessions.cost_usd: a JSON
    /// file in the format of the built-in data/prices.json (USD per token of
    /// each model, generated from LiteLLM's price list), used instead of it.
    /// A model it does not price gets cost NULL and one price_unknown
    /// warning.
    #[arg(long, value_name = "FILE")]
    pub prices: Option<PathBuf>,

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

    /// Print the wall time of each phase on stderr after the summary:
    /// discover, extract, stage, load, each SQL step (`sql V001__…`), write.
    #[arg(long)]
    pub timings: bool,
}

/// Write one self-contained HTML report of a load's output: activity per
/// local day and hour, sessions as a timeline, tokens and cost per day and
/// per model, the tool mix, duplicates dropped and rows recovered from
/// secondary copies, the UTC offset evidence per instance, diagnostics.
///
/// Every chart has a table of its numbers beside it. The page is one file:
/// inline CSS and SVG, no script, nothing fetched. Written to a temporary
/// name beside report.html and renamed when complete.
///
/// Exit codes: 0 written; 2 nothing written (OUT.parquet or a --tables file
/// missing or not nanoload's, report.html not writable).
#[derive(Debug, Parser)]
#[command(
    name = "nanoload report",
    bin_name = "nanoload report",
    version,
    about,
    long_about
)]
pub struct ReportArgs {
    /// The events table a load wrote (`nanoload HOME OUT.parquet`).
    #[arg(value_name = "OUT.parquet")]
    pub out: PathBuf,

    /// The side tables the same load wrote with `--tables DIR` (all five:
    /// sessions, llm_calls, tz_offsets, diagnostics, sources). Without it the
    /// sections that need them (tokens and cost, duplicates, offset ranges,
    /// diagnostics) say so in the page.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// The HTML file to write (replaced if it exists).
    #[arg(value_name = "report.html")]
    pub html: PathBuf,
}

/// When `--progress` is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
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

/// Parse `±HH:MM` (or `Z`) to minutes.
pub fn parse_offset(s: &str) -> Result<i32, String> {
    let bad = || format!("{s:?} is not an offset of the form +HH:MM or -HH:MM");
    if s == "Z" {
        return Ok(0);
    }
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return Err(bad()),
    };
    let (h, m) = rest.split_once(':').ok_or_else(bad)?;
    let (h, m): (i32, i32) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
    if h.to_string().len() > 2 || !(0..60).contains(&m) || h > 14 || (h == 14 && m > 0) {
        return Err(bad());
    }
    Ok(sign * (h * 60 + m))
}

/// Parse a byte size: `<n>[B|KB|MB|GB|KiB|MiB|GiB]` (case-insensitive).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size such as 256MiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "mb" => 1000 * 1000,
        "gb" => 1000 * 1000 * 1000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        _ => return Err(format!("{s:?} is not a size such as 256MiB")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

impl Args {
    pub fn options(&self) -> Options {
        Options {
            home: self.home.clone(),
            out: self.out.clone(),
            tables: self.tables.clone(),
            db: self.db.clone(),
            utc_offset_minutes: self.utc_offset,
            threads: self.threads,
            follow_links: self.follow_links,
            include_thinking: self.include_thinking,
            secret_patterns: self.secret_pattern.clone(),
            no_redact: self.no_redact,
            memory_limit: self.memory_limit,
            cache: self.cache.clone(),
            dataset: self.dataset.clone(),
            host: self.host.clone(),
            summary_json: self.summary_json.clone(),
            progress: self.progress.show(
                std::io::stderr().is_terminal(),
                std::env::var("TERM").ok().as_deref(),
                std::env::var("NO_COLOR").ok().as_deref(),
                self.quiet,
            ),
            prices: self.prices.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets() {
        assert_eq!(parse_offset("+02:00"), Ok(120));
        assert_eq!(parse_offset("-05:30"), Ok(-330));
        assert_eq!(parse_offset("+14:00"), Ok(840));
        assert!(parse_offset("+14:30").is_err());
        assert!(parse_offset("02:00").is_err());
        assert!(parse_offset("+2").is_err());
    }

    #[test]
    fn progress_auto_needs_a_terminal_and_no_quiet() {
        let tty = Some("xterm");
        assert_eq!(When::Auto.show(true, tty, None, false), Show::Color);
        assert_eq!(When::Auto.show(true, tty, Some(""), false), Show::Color);
        assert_eq!(When::Auto.show(true, tty, Some("1"), false), Show::Plain);
        assert_eq!(When::Auto.show(false, tty, None, false), Show::Off);
        assert_eq!(When::Auto.show(true, tty, None, true), Show::Off);
        assert_eq!(When::Auto.show(true, Some("dumb"), None, false), Show::Off);
        assert_eq!(When::Always.show(false, None, None, true), Show::Color);
        assert_eq!(
            When::Always.show(false, None, Some("1"), false),
            Show::Plain
        );
        assert_eq!(When::Never.show(true, tty, None, false), Show::Off);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("256MiB"), Ok(256 << 20));
        assert_eq!(parse_size("1GB"), Ok(1_000_000_000));
        assert_eq!(parse_size("512"), Ok(512));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5XB").is_err());
    }
}
