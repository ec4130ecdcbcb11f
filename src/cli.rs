//! Command-line arguments (`nanoload --help`).

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::config::{Options, Pricing};
use crate::usage::View;

const EXAMPLES: &str =
    "Examples (run in a directory outside HOME: nanoload never writes inside it):
  nanoload ~ out.parquet --tables tables
      every agent under ~: the events, and the side tables in tables/
  nanoload ~ out.parquet --cache cache
      again, reusing the stores that did not change since the last load
  nanoload report out.parquet --tables tables report.html
      one self-contained HTML page of that load
  nanoload usage ~ --by model
      what the agents' LLM calls cost, per provider and model
  nanoload sync ~ history.duckdb
      keep every row ever seen, including what the agents delete later
  nanoload export history.duckdb history.parquet --tables history
      the outputs of every row ever seen, deleted ones marked present = false";

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
/// new or old); 4 nothing written: no agent state under HOME (the error says
/// where nanoload looked).
///
/// The commands `report`, `usage`, `sql`, `mcp` and `otlp` read a load's
/// output, or a HOME (answered from a ledger kept for it in the user's
/// cache directory: `nanoload cache`); `sync` keeps every row ever seen in a ledger
/// that outlives the agents' own deletions, `export` writes a load's
/// outputs from it, `prune` removes what is gone from it; `nanoload help
/// COMMAND` explains each. A HOME named like a command (`report`, `usage`,
/// `sync`, `export`, `prune`, `prices`, `cache`, `help`) is given as
/// `./report`.
#[derive(Debug, Parser)]
#[command(
    name = "nanoload",
    version,
    about,
    long_about,
    after_long_help = EXAMPLES,
    args_conflicts_with_subcommands = true,
    subcommand_negates_reqs = true,
    subcommand_value_name = "COMMAND",
    subcommand_help_heading = "Commands"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Option<Command>,

    /// The load's arguments; none with a command.
    #[command(flatten)]
    pub options: Option<Options>,

    /// The load's pricing (`Options::pricing`): beside its other arguments,
    /// since clap tells whether a load's arguments were given only for a
    /// struct that flattens none.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// What `nanoload COMMAND …` does instead of a load.
#[derive(Debug, Subcommand)]
pub enum Command {
    // (`--help` shows the long text: the arguments' doc comment)
    #[command(about = "Write one self-contained HTML report of a load's output")]
    Report(ReportArgs),
    #[command(
        about = "Show what the agents' LLM calls cost per day, week, month, session or model"
    )]
    Usage(UsageArgs),
    #[command(
        about = "Keep every row ever seen in a ledger: add what is new, keep what the agents deleted"
    )]
    Sync(SyncArgs),
    #[command(about = "Write a load's outputs from a ledger: every row ever seen, or a snapshot")]
    Export(ExportCli),
    #[command(
        about = "Remove from a ledger what is gone from disk and was last seen before a date"
    )]
    Prune(PruneArgs),
    #[command(about = "Run one read-only SQL query over a load's outputs or a ledger")]
    Sql(SqlArgs),
    #[command(about = "Serve a load's outputs or a ledger to an agent: an MCP server over stdio")]
    Mcp(McpArgs),
    #[command(about = "Write a load's sessions as OpenTelemetry traces (OTLP), or send them")]
    Otlp(OtlpArgs),
    #[command(about = "Print the price table a load prices calls with, its source and age")]
    Prices(PricesArgs),
    #[command(about = "List or remove the ledgers kept for the HOMEs readers were given")]
    Cache(CacheArgs),
    /// One tool call of `nanoload mcp`, in a process of its own (the server
    /// starts it; not for people).
    #[command(name = "mcp-call", hide = true)]
    McpCall(McpCallArgs),
}

const OTLP_EXAMPLES: &str = "Examples:
  nanoload otlp out.parquet --tables tables traces.jsonl
      one ExportTraceServiceRequest (OTLP/JSON) per session, per line
  nanoload otlp out.parquet --tables tables --endpoint http://127.0.0.1:6006/v1/traces
      into a local Arize Phoenix
  nanoload otlp out.parquet --tables tables --endpoint http://127.0.0.1:4318/v1/traces \\
      --header \"Authorization=Basic $(printf %s \"$LANGFUSE_PK:$LANGFUSE_SK\" | base64)\"
      through a local OpenTelemetry Collector (or Langfuse's OTLP endpoint behind one)";

/// Write a load's sessions as OpenTelemetry traces: one trace per session,
/// a span per turn named by the session's title, a `chat {model}` span per
/// LLM call and an `execute_tool {tool}` span per tool call, at the
/// instants the data holds (UTC).
///
/// Every span carries the OpenTelemetry GenAI semantic conventions
/// (gen_ai.*, 1.37.0) and OpenInference's attributes (openinference.span.kind,
/// session.id, llm.*, tool.*), so Langfuse, Arize Phoenix and other OTLP
/// backends read tokens, cost and sessions as their own. A session's title
/// (`sessions.title`: its WebUI title, else its first message cut to 60
/// characters, redacted) names its turns. Message text is off by default
/// (a backend shows no input or output); give --content to send each
/// turn's first user text and last answer and each tool call's arguments
/// and result, as the outputs hold them (redacted). A trace's id is its
/// session's (session_uid), or for an instance's calls of no session the
/// instance's identity, not its name, so two homes sent to one backend do
/// not merge; the same load always gives the same ids and bytes.
///
/// A span's cost is the load's (llm_calls.cost_usd); with --prices,
/// --price or --free each call is priced again from its tokens by the
/// load's rules, and each trace's resource says so
/// (nanoload.cost.prices). A ledger is exported first, priced with them.
///
/// Exit codes: 0 written (and sent); 1 the file is written but sending
/// failed (after three tries); 2 nothing written (SOURCE not a load with
/// its tables, TRACES not writable, a bad --endpoint).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = OTLP_EXAMPLES)]
pub struct OtlpArgs {
    /// A HOME (answered from the ledger kept for it: every row ever seen),
    /// OUT.parquet of a load (with --tables DIR), its --db FILE.duckdb, or
    /// a LEDGER.duckdb (every row ever seen, as `nanoload export` writes it).
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The file to write: one ExportTraceServiceRequest as OTLP/JSON per
    /// line (the OpenTelemetry file exporter's format). Optional with
    /// --endpoint.
    #[arg(value_name = "TRACES.jsonl", required_unless_present = "endpoint")]
    pub traces: Option<PathBuf>,

    /// The side tables of the load that wrote OUT.parquet (llm_calls is read).
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Also send the traces to this OTLP/HTTP endpoint, one POST per trace
    /// (http only: https goes through a local collector).
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,

    /// How --endpoint receives them.
    #[arg(
        long,
        value_enum,
        value_name = "PROTOCOL",
        default_value = "http/protobuf"
    )]
    pub protocol: crate::otlp::Protocol,

    /// An HTTP header for --endpoint, NAME=VALUE (repeatable); never printed.
    #[arg(long = "header", value_name = "NAME=VALUE")]
    pub headers: Vec<String>,

    /// Send message text (off by default): each turn's first user text and
    /// last answer (input.value, output.value: what Phoenix shows as a
    /// session's first input and last output) and each tool call's
    /// arguments and result, as the outputs hold them (redacted).
    #[arg(long, alias = "otlp-content")]
    pub content: bool,

    /// The project the spans belong to (`openinference.project.name`: the
    /// Phoenix project).
    #[arg(long, value_name = "NAME", default_value = "nanoload")]
    pub project: String,

    /// Give up on a request to --endpoint after SECS seconds: connecting,
    /// sending and reading the whole answer, its retries included.
    #[arg(long, value_name = "SECS", default_value_t = 30,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout: u64,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, the calls are priced again at read (a ledger's export
    /// prices with them).
    #[command(flatten)]
    pub pricing: Pricing,
}

/// `--host NAME`, checked as a dataset partition's name.
fn host_name(s: &str) -> Result<String, crate::dataset::HostError> {
    crate::dataset::check_host(s).map(|()| s.to_string())
}

const SQL_EXAMPLES: &str = "Examples:
  nanoload sql out.parquet --tables tables \"SELECT model, sum(cost_usd) FROM llm_calls GROUP BY ALL\"
  nanoload sql out.parquet \"SELECT turn_type, count(*) FROM events GROUP BY ALL ORDER BY 2 DESC\"
  nanoload sql history.duckdb \"FROM loads\" --json
  nanoload sql tables \"SHOW TABLES\"";

/// Run one read-only SQL query (DuckDB's dialect) over a load's outputs or
/// a ledger, and print the rows.
///
/// SOURCE is a HOME (answered from the ledger nanoload keeps for it: the
/// views of a load's outputs, every row ever seen), the events file of a
/// load (OUT.parquet: the view `events`; with --tables DIR, each
/// DIR/<table>.parquet as a view of that name), a --tables directory, a
/// --db file, or a ledger (`nanoload sync`); the database files are
/// opened read-only.
///
/// Only reading runs: one SELECT statement (FROM-first, WITH, VALUES,
/// DESCRIBE, SHOW and SUMMARIZE too). Anything else — INSERT, CREATE, COPY,
/// ATTACH, INSTALL, LOAD, SET, PRAGMA, several statements — is refused
/// before it runs; no file outside SOURCE can be read, and no extension
/// installed or loaded.
///
/// With --prices, --price or --free, llm_calls.cost_usd and
/// sessions.cost_usd are priced again from each call's tokens by the
/// load's rules (a line on stderr says so); a ledger holds no costs, and
/// refuses them.
///
/// Exit codes: 0 rows shown (perhaps none); 2 nothing shown (SOURCE not
/// readable, the statement refused, failed or stopped at --timeout).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = SQL_EXAMPLES)]
pub struct SqlArgs {
    /// A HOME, OUT.parquet, a --tables DIR, a --db FILE.duckdb or a
    /// LEDGER.duckdb.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The query.
    #[arg(value_name = "QUERY")]
    pub query: String,

    /// The side tables of the load that wrote OUT.parquet, one view each.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Print one JSON document: columns (name, type), rows (arrays of
    /// values), row_count, truncated; an error as {"error": {kind, message}}.
    #[arg(long, conflicts_with = "jsonl")]
    pub json: bool,

    /// Print one JSON object per row (column name → value); an error as
    /// one {"error": …} line.
    #[arg(long)]
    pub jsonl: bool,

    /// Show at most N rows (0: all); when there are more, a line says so.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_rows: usize,

    /// Stop the query after SECS seconds (0: never): the error comes at
    /// the deadline, even while DuckDB is inside one long expression.
    #[arg(long, value_name = "SECS", default_value_t = 60)]
    pub timeout: u64,

    /// DuckDB memory limit for the query (e.g. 256MiB, 1GB); what does not
    /// fit spills to a private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, llm_calls and sessions are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// Serve a load's outputs or a ledger to an agent: a Model Context Protocol
/// server over stdio (JSON-RPC, one message per line).
///
/// Its tools: list_tables, describe_table (columns, types and their meaning
/// from nanoload's design notes), query (one read-only SELECT, with the
/// guard of `nanoload sql`), usage_by_day and top_sessions_by_cost (ready
/// answers from llm_calls and sessions). Configure it in an agent as a
/// stdio server whose command is `nanoload` with arguments
/// `mcp SOURCE [--tables DIR]`. A HOME as SOURCE is synced into the ledger
/// kept for it once, when the server starts.
///
/// Each message is one line of at most 1 MiB (1048576 bytes) of UTF-8
/// JSON; a longer line is answered with an error (-32600) and skipped, a
/// line that is not UTF-8 or not JSON with -32700. Each tool call runs in a
/// process of its own, stopped at --timeout: its answer is then an error,
/// and the server goes on.
///
/// With --prices, --price or --free every tool call reads llm_calls and
/// sessions priced again from each call's tokens by the load's rules, and
/// the ready answers say so (`prices`); a ledger holds no costs, and
/// refuses them.
///
/// Exit codes: 0 the client closed stdin; 2 SOURCE not readable (one line
/// on stderr before any message is read).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct McpArgs {
    /// A HOME, OUT.parquet, a --tables DIR, a --db FILE.duckdb or a
    /// LEDGER.duckdb.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The side tables of the load that wrote OUT.parquet, one view each.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// The most rows a query returns (a tool call may ask for fewer).
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub max_rows: usize,

    /// Stop a tool call after SECS seconds (0: never); its answer is then
    /// an error.
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    pub timeout: u64,

    /// DuckDB memory limit of each tool call (e.g. 256MiB, 1GB); what does
    /// not fit spills to a private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "1GiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, llm_calls and sessions are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// Print the price table a load prices LLM calls with: where it comes
/// from, how old the built-in prices are, the rows (USD per million
/// tokens), and how to change it (`--prices FILE`'s format, `--price`,
/// `--free`).
///
/// With the flags (--prices, --prices-replace, --price, --free) it prints
/// the table they make. Every command that shows a cost takes the same
/// flags: a load and a ledger's export price their calls with them;
/// `report`, `usage`, `sql`, `mcp` and `otlp` of a load's output price its
/// calls again from their tokens with them, by the load's rules (the
/// load's own flags are not kept: give them again), and say so.
///
/// Exit codes: 0 printed; 2 a bad --prices file, --price or --free.
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct PricesArgs {
    /// Only the models whose name contains TEXT (case-insensitive).
    #[arg(value_name = "TEXT")]
    pub pattern: Option<String>,

    /// The table's flags, as every command that shows a cost takes them.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// Whether a reader given a HOME keeps its ledger (`nanoload cache`).
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct Keeping {
    /// With a HOME: answer from a private temp load, removed after, and
    /// keep nothing. Without it a HOME is answered from the ledger nanoload
    /// keeps for it in the user's cache directory ($XDG_CACHE_HOME/nanoload,
    /// else ~/.cache/nanoload; `nanoload cache --help`).
    #[arg(long)]
    pub no_keep: bool,
}

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

/// `nanoload mcp-call SOURCE …`: one tool call, read as JSON from stdin
/// (`{"name", "arguments"}`), its result as JSON on stdout.
#[derive(Debug, clap::Args)]
pub struct McpCallArgs {
    /// The server's SOURCE.
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,
    /// The server's --tables.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,
    /// The server's --max-rows.
    #[arg(long, value_name = "N")]
    pub max_rows: usize,
    /// The server's --timeout: the call answers the timeout at it.
    #[arg(long, value_name = "SECS")]
    pub timeout: u64,
    /// The server's --memory-limit, in bytes.
    #[arg(long, value_name = "BYTES")]
    pub memory_limit: u64,
    /// The directory DuckDB spills to (the server removes it).
    #[arg(long, value_name = "DIR")]
    pub spill: PathBuf,
    /// The server's pricing flags.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// Remove from a ledger what is gone from disk and was last seen before a date.
///
/// The only way anything leaves a ledger: the rows, calls and stores that
/// are not present (the agent deleted them) and whose last sync
/// (last_seen_load) finished before DATE (UTC) are deleted; present rows
/// and the loads table stay. Under the ledger's lock, in one transaction.
///
/// A sync that could not read all of HOME (an unreadable directory or
/// store, a dangling or unfollowed link: loads.unreadable) marks nothing
/// gone there, but what it did mark gone elsewhere is removed only with
/// --force: without it, prune names those syncs and does nothing.
///
/// Exit codes: 0 pruned (perhaps nothing); 2 nothing done (no ledger, a
/// ledger of another format or corrupt, DATE not a date, rows marked gone
/// by a sync that could not read all of HOME and no --force); 5 a sync or
/// another process holds the ledger.
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct PruneArgs {
    /// The ledger `nanoload sync` keeps.
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// Prune what was last seen by syncs that finished before this day
    /// (YYYY-MM-DD, UTC) or instant (e.g. 2026-12-01T08:00:00Z).
    #[arg(long, value_name = "DATE")]
    pub before: String,

    /// Also remove what a sync that could not read all of HOME marked gone
    /// (and what a ledger of an earlier format holds as gone, which did
    /// not record it).
    #[arg(long)]
    pub force: bool,
}

/// Write a load's outputs from a ledger: every row ever seen, or a snapshot.
///
/// The ledger's rows (`nanoload sync`) are staged again and run through the
/// same steps as a load, so duplicates, UTC offsets and call attribution
/// are decided over the whole history; OUT.parquet and the --tables files
/// are today's contract. By default every row the ledger holds is written,
/// rows no longer on disk included, with three columns appended to events:
/// first_seen_load and last_seen_load (sync numbers, see the ledger's loads
/// table) and present (on disk at the latest sync). With --snapshot only
/// the rows on disk at the latest sync, without those columns: the bytes a
/// load of HOME then writes.
///
/// The calls are priced with the built-in table, or as --prices, --price
/// and --free say (a load_id of its own then: the same rows priced
/// otherwise are another output).
///
/// Exit codes: 0 written; 2 nothing written (no ledger, a ledger of another
/// format, an output not writable).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct ExportCli {
    /// The ledger `nanoload sync` keeps (opened read-only).
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// The events table to write (Parquet, zstd; a temporary name, then renamed).
    #[arg(value_name = "OUT.parquet")]
    pub out: PathBuf,

    /// Also write the other tables as DIR/<table>.parquet (sessions,
    /// llm_calls, tz_offsets, diagnostics, sources).
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// Only the rows on disk at the latest sync, without the ledger's columns.
    #[arg(long)]
    pub snapshot: bool,

    /// Also write every table as host NAME's partition of a fleet dataset
    /// (DIR/<table>/host=NAME/part-0.parquet, as a load's --dataset).
    #[arg(long, value_name = "DIR", requires = "host")]
    pub dataset: Option<PathBuf>,

    /// The dataset's host name (letters, digits, `.`, `_`, `-`).
    #[arg(long, value_name = "NAME", requires = "dataset", value_parser = host_name)]
    pub host: Option<String>,

    /// Worker threads for DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB).
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    /// The export's calls are priced with these.
    #[command(flatten)]
    pub pricing: Pricing,
}

/// Keep every row ever seen in a ledger: add what is new, keep what the
/// agents deleted.
///
/// Extracts HOME as a load does and merges its rows (as staged, before
/// dedup, text and native included, secrets redacted) into LEDGER.duckdb,
/// a DuckDB database file nanoload keeps, in one transaction: a row seen
/// before is the same row (identity: the agent's record and which
/// occurrence of it its store holds, not where it stands nor how it is
/// redacted: a row redacted otherwise now is updated in place), a new row
/// is added, and a row its store no longer holds stays, with present =
/// false. Nothing is ever deleted from the ledger. Tables: loads (one row
/// per sync, numbered), ledger_events, ledger_llm_calls, ledger_sources (on
/// every row first_seen_load and last_seen_load, sync numbers, and
/// present), ledger_meta (the format). Secrets are always redacted: a
/// ledger is kept.
///
/// A row is marked gone only when the directory that held its store was
/// read and the store is absent: what cannot be read (a directory, a
/// store, a dangling link, a disk not mounted, a link not followed) keeps
/// its rows as they were, is said in one line, and makes the exit code 1;
/// prune then removes what that sync marked gone only with --force.
///
/// A ledger keeps the HOME of its first sync: a sync of another HOME is
/// refused, naming both, unless --add-home.
///
/// A killed sync leaves the ledger as it was; a second sync while one
/// writes is refused (LEDGER.duckdb.lock). A ledger of another format is
/// refused, never misread; one of the previous format is upgraded.
///
/// Exit codes: 0 synced; 1 synced, but some lines, records, stores or
/// directories could not be read (their rows keep their state); 2 nothing
/// done (a corrupt ledger, a ledger of another HOME among the reasons); 4
/// no agent state under HOME; 5 another sync or process holds the ledger
/// (try again later).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct SyncArgs {
    /// The home directory to read (e.g. a copy of /home/alice).
    #[arg(value_name = "HOME")]
    pub home: PathBuf,

    /// The ledger (created on the first sync; must be outside HOME).
    #[arg(value_name = "LEDGER.duckdb")]
    pub ledger: PathBuf,

    /// Worker threads for extraction and DuckDB (default: the CPUs).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,

    /// DuckDB memory limit (e.g. 256MiB, 1GB); larger merges spill to the
    /// private temp dir.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = crate::config::parse_size)]
    pub memory_limit: u64,

    /// Follow symbolic links to agent state outside HOME.
    #[arg(long)]
    pub follow_links: bool,

    /// Keep WebUI reasoning records as `thinking` rows.
    #[arg(long)]
    pub include_thinking: bool,

    /// Also treat text matching REGEX as a secret (as for a load); repeatable.
    #[arg(long = "secret-pattern", value_name = "REGEX")]
    pub secret_patterns: Vec<String>,

    /// Keep a second HOME in this ledger. A ledger keeps the HOME of its
    /// first sync: a sync of another is refused (exit 2), since that HOME's
    /// stores have the same paths and the first HOME's rows would be taken
    /// for deleted. With it, each HOME's sync settles only the rows its own
    /// syncs first saw.
    #[arg(long)]
    pub add_home: bool,

    /// Print only what makes the exit code non-zero.
    #[arg(long, short)]
    pub quiet: bool,

    /// Show progress on stderr (`auto`: only on a terminal; never when a
    /// timer runs it).
    #[arg(long, value_name = "WHEN", value_enum, default_value_t = crate::config::When::Auto)]
    pub progress: crate::config::When,
}

impl SyncArgs {
    /// The load options of this sync: the ledger stands where OUT does (the
    /// same checks: absolute, outside HOME).
    pub fn options(&self) -> Options {
        Options {
            threads: self.threads,
            memory_limit: self.memory_limit,
            follow_links: self.follow_links,
            include_thinking: self.include_thinking,
            secret_patterns: self.secret_patterns.clone(),
            quiet: self.quiet,
            progress: self.progress,
            ..Options::new(&self.home, &self.ledger)
        }
    }
}

/// Write one self-contained HTML report of a load's output, of a HOME (the
/// ledger kept for it), of a --db file or of a ledger.
///
/// It leads with the answers: cards (total cost and tokens, sessions,
/// active days, cost per active day, the peak day, cache-hit rate, unpriced
/// calls), cost per local day stacked by model with a TOTAL, the costliest
/// sessions, tools with their error rate, activity per local day and hour
/// and the sessions as a timeline; then, collapsed, the data's quality:
/// duplicates dropped and rows recovered from secondary copies, the UTC
/// offset evidence per instance, diagnostics.
///
/// Every chart has a table of its numbers beside it. The page is one file:
/// inline CSS and SVG, no script, nothing fetched. Written to a temporary
/// name beside report.html and renamed when complete.
///
/// Costs are the load's (llm_calls.cost_usd); with --prices, --price or
/// --free every call is priced again from its tokens by the load's rules
/// (the side tables are needed), and the page says so.
///
/// Exit codes: 0 written; 2 nothing written (SOURCE or a --tables file
/// missing or not nanoload's, tables of another load, report.html not
/// writable).
#[derive(Debug, clap::Args)]
#[command(long_about)]
pub struct ReportArgs {
    /// A HOME (answered from the ledger kept for it: every row ever seen),
    /// the events table a load wrote (`nanoload HOME OUT.parquet`, with
    /// --tables DIR), its --db FILE.duckdb, or a LEDGER.duckdb of `nanoload
    /// sync` (every row ever seen, as `nanoload export` writes it).
    #[arg(value_name = "SOURCE")]
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

    #[command(flatten)]
    pub keeping: Keeping,

    /// Given any, the output's calls are priced again at read.
    #[command(flatten)]
    pub pricing: Pricing,
}

const USAGE_EXAMPLES: &str = "Examples:
  nanoload usage ~
      calls, tokens and cost per local day, from the ledger kept for ~
      (the first call reads all of ~, later ones only what changed)
  nanoload usage ~ --by model --since 2026-11-01
  nanoload usage out.parquet --tables tables --by session --json
  nanoload usage ~ --by monthly --timezone Europe/Berlin";

/// Show what both agents' LLM calls used and cost — tokens and USD per
/// local day (default), week, month, session or model, with a TOTAL row —
/// straight from a HOME, or from a load's output, its --db file or a
/// ledger.
///
/// The calls are `llm_calls`: nanobot's llm_usage rows and nanoclaw's
/// Claude Code responses with counted usage. Days are the host's local days
/// from the UTC offsets the load derived (a call whose instance has none is
/// placed by its UTC time, and a note says how many); `--timezone` places
/// every call in one zone instead. A call without a price is counted as
/// unpriced, never as $0. With --prices, --price or --free a HOME's load
/// prices with them, and an output's calls are priced again from their
/// tokens by the load's rules (a note says so).
///
/// A HOME is answered from the ledger nanoload keeps for it in the user's
/// cache directory (`nanoload cache --help`): every call syncs it, reading
/// only the stores that changed, so the calls the agents delete later are
/// still counted. A cache that cannot be written: a temp load answers, and
/// one line says so.
///
/// Exit codes: 0 shown; 1 shown, but reading HOME could not read some input
/// (listed on stderr); 2 nothing shown (bad arguments, an output that is
/// not nanoload's, a HOME that did not load).
#[derive(Debug, clap::Args)]
#[command(long_about, after_long_help = USAGE_EXAMPLES)]
pub struct UsageArgs {
    /// A HOME (answered from the ledger nanoload keeps for it, synced now;
    /// with --no-keep loaded into a private temp dir, removed after), the
    /// events table of a load (OUT.parquet, with --tables DIR), a --tables
    /// DIR, its --db FILE.duckdb, or a LEDGER.duckdb of `nanoload sync`
    /// (every row ever seen).
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,

    /// The side tables of the load that wrote OUT.parquet (`--tables DIR`):
    /// the calls are read from DIR/llm_calls.parquet.
    #[arg(long, value_name = "DIR")]
    pub tables: Option<PathBuf>,

    /// One row per local day, week (from Monday), month, session, or
    /// provider and model.
    #[arg(long, value_enum, default_value = "daily", value_name = "VIEW")]
    pub by: View,

    /// The first local date shown (YYYY-MM-DD or YYYYMMDD).
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub since: Option<chrono::NaiveDate>,

    /// The last local date shown, inclusive.
    #[arg(long, value_name = "DATE", value_parser = crate::usage::parse_date)]
    pub until: Option<chrono::NaiveDate>,

    /// Place every call in this zone instead of the derived local time:
    /// UTC, an offset (+05:30) or a tz database name (Europe/Berlin).
    #[arg(long, value_name = "ZONE", value_parser = crate::usage::Zone::parse)]
    pub timezone: Option<crate::usage::Zone>,

    /// Print the rows and totals as one JSON document instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Under each day, week, month or session, one row per provider and
    /// model of its calls.
    #[arg(long, short = 'b')]
    pub breakdown: bool,

    /// Only the calls of this agent.
    #[arg(long, value_name = "AGENT", value_parser = ["nanobot", "nanoclaw"])]
    pub agent: Option<String>,

    /// Only the calls of this instance, as the outputs name it (`.nanobot`,
    /// `.nanobot-work`, a nanoclaw install root relative to HOME).
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,

    /// The order of the rows: asc, oldest first (days, weeks, months; the
    /// default), or desc, newest first. Sessions and models: asc the
    /// cheapest first, desc the costliest first (the default).
    #[arg(long, value_enum, value_name = "ORDER")]
    pub order: Option<crate::usage::Order>,

    #[command(flatten)]
    pub keeping: Keeping,

    /// HOME's outputs and an output's calls are priced again with these.
    #[command(flatten)]
    pub pricing: Pricing,
}
