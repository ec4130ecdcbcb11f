//! `nanoload mcp SOURCE`: a Model Context Protocol server over stdio, so an
//! agent can ask its own history questions.
//!
//! ```text
//! stdin   one JSON-RPC 2.0 message per line   initialize, notifications/*, ping,
//!         (at most MAX_LINE bytes, UTF-8)     tools/list, tools/call
//! stdout  one JSON-RPC response per request, one line each, flushed
//! stderr  nothing unless SOURCE cannot be opened (before any message is read)
//!
//! tools/call ─▶ `nanoload mcp-call SOURCE …` (a child process: the call
//!               as JSON on its stdin, the result on its stdout) ─▶ result
//!               killed at --timeout (and a grace second), its spill
//!               directory removed: a query DuckDB cannot interrupt takes
//!               no CPU or memory past its deadline
//! ```
//!
//! A line that is not UTF-8 or not JSON is answered `-32700`, a message
//! that is not a request `-32600`, a line longer than [`MAX_LINE`] `-32600`
//! (read through, never kept whole); the server then goes on with the next
//! line.
//!
//! The tools (each result is one JSON document, as the text content and as
//! `structuredContent`; a refused or failed query is a result with
//! `isError: true` and the guard's message, never a protocol error):
//!
//! | tool | arguments | answer |
//! |---|---|---|
//! | `list_tables` | — | `{"tables": [{name, rows, description}]}` |
//! | `describe_table` | `table` | `{table, description, columns: [{name, type, meaning}]}` |
//! | `query` | `sql`, `limit`? | `{columns, rows, row_count, truncated}` ([`crate::source::Answer`]) |
//! | `usage_by_day` | `since`?, `until`? | as `query`: calls, tokens and cost per local day |
//! | `top_sessions_by_cost` | `limit`? | as `query`: the costliest sessions, with their titles |
//!
//! With `--prices`, `--price` or `--free` every call reads llm_calls and
//! sessions priced again at read (each tool call's process is given the
//! same flags), and the ready answers say so (`prices`).
//!
//! Every query runs through [`crate::source::Source::query`]: the read-only
//! guard of `nanoload sql`, the row limit and the time limit. Table
//! descriptions and column meanings are the catalog's
//! ([`crate::catalog`]).

use std::io::{BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::source::{Answer, Limits, QueryError, Reader, Source, SourceKind};

/// The longest message line the server reads, bytes; a longer one is
/// refused (`mcp --help`, design.md "MCP").
pub const MAX_LINE: usize = 1 << 20;

/// How long past `--timeout` the server waits for a tool call's process
/// before it kills it (the process answers at the deadline itself; this
/// covers its start and a process that cannot).
const GRACE: Duration = Duration::from_secs(1);

/// The protocol versions this server speaks, newest first; a client asking
/// for another gets the newest.
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

/// The tools, as `tools/list` gives them.
pub fn tools() -> Value {
    let no_args = json!({"type": "object", "properties": {}, "additionalProperties": false});
    json!([
        {
            "name": "list_tables",
            "title": "List tables",
            "description": "The tables of the nanoload history this server reads (the events of nanobot and nanoclaw agents, their sessions, LLM calls, diagnostics…), with row counts and what each holds.",
            "inputSchema": no_args,
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "describe_table",
            "title": "Describe a table",
            "description": "The columns of one table: name, DuckDB type and meaning.",
            "inputSchema": {
                "type": "object",
                "properties": {"table": {"type": "string", "description": "a name from list_tables"}},
                "required": ["table"],
                "additionalProperties": false,
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "query",
            "title": "Run a read-only SQL query",
            "description": "Run one read-only SQL query (DuckDB dialect: SELECT, FROM-first, WITH, DESCRIBE, SUMMARIZE) over the tables. Writes, COPY, ATTACH, INSTALL, SET and file reads are refused; long queries are stopped; at most `limit` rows come back (truncated says there were more). Timestamps: timestamp_utc (UTC) and timestamp_local (the host's local time); date math works in UTC (now() - INTERVAL 7 DAY, ::DATE, date_trunc('week', …), AT TIME ZONE 'Europe/Berlin').",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "sql": {"type": "string", "description": "one SELECT statement"},
                    "limit": {"type": "integer", "minimum": 1, "description": "rows returned at most (default 100)"},
                },
                "required": ["sql"],
                "additionalProperties": false,
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "usage_by_day",
            "title": "LLM usage per day",
            "description": "LLM calls, tokens and cost in USD per local day (the host's time zone as derived by nanoload; a call of an instance with no derived offset counts on its UTC day). A call without a price counts in unpriced_calls, never as $0; cost_usd is the priced calls' (priced_calls), and cost_basis says what part of the calls that is; prices, when present, says how the calls were priced (the server's --price or --free, not the load's). total_tokens: input + output where a call reports no total.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "since": {"type": "string", "description": "first day, YYYY-MM-DD"},
                    "until": {"type": "string", "description": "last day, YYYY-MM-DD, inclusive"},
                },
                "additionalProperties": false,
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
        {
            "name": "top_sessions_by_cost",
            "title": "Costliest sessions",
            "description": "The sessions that cost the most (USD), each with its title (its WebUI title, else its first user message cut to 60 characters), agent, instance, session id, first and last event and tokens. Only sessions whose every call is priced (a session with an unpriced call has no known cost); cost_basis says how many are left out; prices, when present, says how the calls were priced.",
            "inputSchema": {
                "type": "object",
                "properties": {"limit": {"type": "integer", "minimum": 1, "description": "how many (default 10)"}},
                "additionalProperties": false,
            },
            "annotations": {"readOnlyHint": true, "openWorldHint": false},
        },
    ])
}

/// A tool call's outcome: a JSON answer, or an error whose text the agent
/// reads (`isError`).
pub type ToolResult = Result<Value, ToolError>;

/// Why a tool call has no answer; its text is what the agent reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// SOURCE could not be opened.
    #[error("error: {0}")]
    Open(#[source] QueryError),
    /// A query (the agent's, or one of a ready answer's) failed.
    #[error("{0}")]
    Query(#[from] QueryError),
    /// A ready answer asked of a ledger, which keeps rows as staged.
    #[error(
        "error: a ledger keeps rows as staged, before dedup and pricing; export it (`nanoload export LEDGER OUT.parquet --tables DIR`) and serve the export for {0}, or query the ledger_* tables"
    )]
    Ledger(&'static str),
    /// A ready answer's table is not in SOURCE.
    #[error(
        "error: this source has no {0} table (serve OUT.parquet with --tables DIR, a tables directory or a --db file)"
    )]
    NoTable(&'static str),
    #[error("error: describe_table needs a table name (`table`)")]
    NoTableName,
    #[error("error: no table {0} here (list_tables names them)")]
    UnknownTable(String),
    #[error("error: query needs the SQL text (`sql`)")]
    NoSql,
    /// `since` or `until` is not a string.
    #[error("error: {0} is a date, YYYY-MM-DD")]
    DateType(&'static str),
    /// `since` or `until` is no date.
    #[error("error: {0}: {1}")]
    Date(&'static str, #[source] crate::readout::DateError),
    /// The directory the call's process spills to could not be made.
    #[error("error: {}: {source}", .dir.display())]
    Spill {
        dir: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The call's process could not be started.
    #[error("error: cannot start {}: {source}", .program.display())]
    Start {
        program: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The call's process answered this error (its text is all that
    /// crosses the pipe).
    #[error("{0}")]
    Answered(String),
    /// The call's process ended without an answer (its exit status).
    #[error("error: the tool call's process ended without an answer ({0})")]
    NoAnswer(String),
}

/// The limits of every tool call (`nanoload mcp` flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// The most rows a query returns (0: no cap).
    pub max_rows: usize,
    /// Seconds before a tool call is stopped (0: never).
    pub timeout_secs: u64,
    /// DuckDB's memory limit for each call, bytes.
    pub memory_limit: u64,
}

/// The server: where SOURCE is, what it is, and the limits. SOURCE is
/// opened afresh for each tool call and closed after it, so a database
/// file (a ledger a scheduled `nanoload sync` writes) is never held open
/// between calls, and a rewritten OUT is read as it now is.
pub struct Server {
    source: PathBuf,
    tables: Option<PathBuf>,
    kind: SourceKind,
    path: PathBuf,
    settings: Settings,
    /// The pricing flags (passed on to each tool call's process) and the
    /// calls priced again at read they make (None: the load's costs).
    pricing: crate::config::Pricing,
    at_read: Option<crate::config::Repricing>,
    /// The program each tool call runs in (`PROGRAM mcp-call …`: this
    /// executable); None: in this process, without a deadline that holds
    /// for one long expression.
    worker: Option<PathBuf>,
}

impl Server {
    /// Checks that SOURCE opens (and its calls price again with
    /// `at_read`, the table `pricing` makes): the server then starts.
    pub fn new(
        source: &Path,
        tables: Option<&Path>,
        settings: Settings,
        (pricing, at_read): (crate::config::Pricing, Option<crate::config::Repricing>),
    ) -> Result<Server, QueryError> {
        let mut server = Server::for_call(source, tables, settings, (pricing, at_read));
        let opened = Source::open_with(source, tables, &server.reader(None))?;
        server.kind = opened.kind;
        server.path = opened.path.clone();
        Ok(server)
    }

    /// The server inside a tool call's process (`mcp-call`): SOURCE as the
    /// parent opened it, not checked again.
    pub fn for_call(
        source: &Path,
        tables: Option<&Path>,
        settings: Settings,
        (pricing, at_read): (crate::config::Pricing, Option<crate::config::Repricing>),
    ) -> Server {
        Server {
            source: source.to_path_buf(),
            tables: tables.map(Path::to_path_buf),
            kind: SourceKind::Out,
            path: source.to_path_buf(),
            settings,
            pricing,
            at_read,
            worker: None,
        }
    }

    /// Run every tool call in a child process of `program` (`program
    /// mcp-call …`), killed at the deadline.
    pub fn isolated(mut self, program: PathBuf) -> Server {
        self.worker = Some(program);
        self
    }

    fn reader(&self, spill: Option<&Path>) -> Reader {
        Reader {
            memory_limit: self.settings.memory_limit,
            spill: spill.map(Path::to_path_buf),
            prices: self.at_read.as_ref().map(|r| r.table.clone()),
        }
    }

    /// `prices` beside a ready answer's cost, when the calls were priced
    /// again at read.
    fn say_prices(&self, v: &mut Value) {
        if let (Some(r), Some(o)) = (&self.at_read, v.as_object_mut()) {
            o.insert("prices".into(), json!(r.said));
        }
    }

    fn open(&self, spill: Option<&Path>) -> Result<Source, ToolError> {
        Source::open_with(&self.source, self.tables.as_deref(), &self.reader(spill))
            .map_err(ToolError::Open)
    }

    fn limits(&self, asked: Option<u64>, default: usize) -> Limits {
        let cap = if self.settings.max_rows == 0 {
            usize::MAX
        } else {
            self.settings.max_rows
        };
        let rows = asked.map_or(default, |n| usize::try_from(n).unwrap_or(cap));
        Limits {
            max_rows: rows.clamp(1, cap),
            timeout_secs: self.settings.timeout_secs,
        }
    }

    fn answer(r: Result<Answer, QueryError>) -> ToolResult {
        Ok(r?.to_json())
    }

    fn has_table(src: &Source, t: &str) -> Result<bool, QueryError> {
        Ok(src.table_names()?.iter().any(|n| n == t))
    }

    /// The table a ready answer reads, or why this SOURCE has none.
    fn need(src: &Source, table: &'static str) -> Result<(), ToolError> {
        if src.kind == SourceKind::Ledger {
            return Err(ToolError::Ledger(table));
        }
        if !Self::has_table(src, table)? {
            return Err(ToolError::NoTable(table));
        }
        Ok(())
    }

    fn list_tables(src: &Source) -> ToolResult {
        let tables = src.tables()?;
        Ok(json!({"tables": tables.iter().map(|(n, rows)| json!({
            "name": n,
            "rows": rows,
            "description": crate::catalog::table(n).map(|t| t.description),
        })).collect::<Vec<_>>()}))
    }

    fn describe_table(src: &Source, args: &Value) -> ToolResult {
        let Some(table) = args["table"].as_str() else {
            return Err(ToolError::NoTableName);
        };
        let Some(cols) = src.columns(table)? else {
            return Err(ToolError::UnknownTable(table.to_string()));
        };
        let catalogued = crate::catalog::table(table);
        Ok(json!({
            "table": table,
            "description": catalogued.map(|t| t.description),
            "columns": cols.iter().map(|(n, t)| json!({
                "name": n,
                "type": t,
                "meaning": catalogued.and_then(|c| c.meaning(n)),
            })).collect::<Vec<_>>(),
        }))
    }

    fn query(&self, src: &Source, args: &Value) -> ToolResult {
        let Some(sql) = args["sql"].as_str() else {
            return Err(ToolError::NoSql);
        };
        Self::answer(src.query(sql, self.limits(args["limit"].as_u64(), 100)))
    }

    fn usage_by_day(&self, src: &Source, args: &Value) -> ToolResult {
        Self::need(src, "llm_calls")?;
        let mut filter = vec!["started_at_ms IS NOT NULL".to_string()];
        for (key, op) in [("since", ">="), ("until", "<=")] {
            if let Some(d) = args.get(key).filter(|v| !v.is_null()) {
                let d = d.as_str().ok_or(ToolError::DateType(key)).and_then(|s| {
                    crate::readout::parse_date(s).map_err(|e| ToolError::Date(key, e))
                })?;
                filter.push(format!("day {op} DATE '{d}'"));
            }
        }
        let sql = format!(
            "SELECT CAST(day AS VARCHAR) AS day, count(*) AS calls,
                    CAST(sum(input_tokens) AS BIGINT) AS input_tokens,
                    CAST(sum(output_tokens) AS BIGINT) AS output_tokens,
                    CAST(sum(cache_read_tokens) AS BIGINT) AS cache_read_tokens,
                    CAST(sum(cache_write_tokens) AS BIGINT) AS cache_write_tokens,
                    CAST(sum({total}) AS BIGINT) AS total_tokens,
                    round(sum(cost_usd), 6) AS cost_usd,
                    count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced_calls,
                    count(cost_usd) AS priced_calls
             FROM (SELECT *, CAST({local} AS DATE) AS day FROM llm_calls)
             WHERE {filter}
             GROUP BY day ORDER BY day",
            local = crate::readout::LOCAL_TIME,
            total = crate::readout::CALL_TOTAL_TOKENS,
            filter = filter.join(" AND "),
        );
        let answer = src.query(&sql, self.limits(None, usize::MAX))?;
        // what the cost of these days is of: their calls, priced or not
        let mut sums = crate::readout::CallSums::default();
        let mut cost = 0.0;
        let mut priced = false;
        for r in &answer.rows {
            sums.calls += r[1].as_i64().unwrap_or(0);
            sums.unpriced_calls += r[8].as_i64().unwrap_or(0);
            if let Some(c) = r[7].as_f64() {
                cost += c;
                priced = true;
            }
        }
        sums.cost_usd = priced.then(|| format!("{cost:.6}"));
        let mut v = answer.to_json();
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "cost_basis".into(),
                json!(sums.cost_basis("no calls in range")),
            );
        }
        self.say_prices(&mut v);
        Ok(v)
    }

    fn top_sessions_by_cost(&self, src: &Source, args: &Value) -> ToolResult {
        Self::need(src, "sessions")?;
        // a session's title beside its id (sessions of a load before titles
        // have none)
        let titled = src
            .columns("sessions")?
            .is_some_and(|c| c.iter().any(|(n, _)| n == "title"));
        let sql = format!(
            "SELECT session_uid, {title} AS title, agent, instance, session_id,
                    CAST(first_event_utc AS VARCHAR) AS first_event_utc,
                    CAST(last_event_utc AS VARCHAR) AS last_event_utc,
                    llm_calls, input_tokens, output_tokens, round(cost_usd, 6) AS cost_usd
             FROM sessions WHERE cost_usd IS NOT NULL
             ORDER BY cost_usd DESC, session_uid",
            title = if titled {
                "title"
            } else {
                "CAST(NULL AS VARCHAR)"
            }
        );
        let answer = src.query(&sql, self.limits(args["limit"].as_u64(), 10))?;
        // a session's cost is unknown when one of its calls has no price:
        // say how many are left out
        let counts = src.query(
            "SELECT count(*) FILTER (WHERE llm_calls > 0),
                        count(*) FILTER (WHERE llm_calls > 0 AND cost_usd IS NOT NULL)
                 FROM sessions",
            self.limits(None, 1),
        )?;
        let n = |i: usize| {
            counts
                .rows
                .first()
                .and_then(|r| r.get(i))
                .and_then(Value::as_i64)
                .unwrap_or(0)
        };
        let (with_calls, priced) = (n(0), n(1));
        let basis = format!(
            "sessions whose every call is priced: {priced} of {with_calls} sessions with calls; {} with an unpriced call are left out",
            with_calls - priced
        );
        let mut v = answer.to_json();
        if let Some(o) = v.as_object_mut() {
            o.insert("cost_basis".into(), json!(basis));
        }
        self.say_prices(&mut v);
        Ok(v)
    }

    /// Run tool `name` with `args`: in a child process when the server is
    /// [`Server::isolated`], else here. None: no such tool.
    pub fn call(&self, name: &str, args: &Value) -> Option<ToolResult> {
        const NAMES: [&str; 5] = [
            "list_tables",
            "describe_table",
            "query",
            "usage_by_day",
            "top_sessions_by_cost",
        ];
        if !NAMES.contains(&name) {
            return None;
        }
        Some(match &self.worker {
            Some(program) => self.call_in_child(program, name, args),
            None => self.call_here(name, args, None),
        })
    }

    /// Run tool `name` (one [`Server::call`] knows) in this process,
    /// DuckDB spilling to `spill` (None: a private temp dir).
    pub fn call_here(&self, name: &str, args: &Value, spill: Option<&Path>) -> ToolResult {
        let src = self.open(spill)?;
        match name {
            "list_tables" => Self::list_tables(&src),
            "describe_table" => Self::describe_table(&src, args),
            "query" => self.query(&src, args),
            "usage_by_day" => self.usage_by_day(&src, args),
            _ => self.top_sessions_by_cost(&src, args),
        }
    }

    /// The arguments of `program mcp-call` for this server and `spill`.
    fn call_args(&self, spill: &Path) -> Vec<std::ffi::OsString> {
        let mut a: Vec<std::ffi::OsString> = vec!["mcp-call".into(), self.source.clone().into()];
        if let Some(t) = &self.tables {
            a.extend(["--tables".into(), t.clone().into()]);
        }
        a.extend([
            "--max-rows".into(),
            self.settings.max_rows.to_string().into(),
            "--timeout".into(),
            self.settings.timeout_secs.to_string().into(),
            "--memory-limit".into(),
            self.settings.memory_limit.to_string().into(),
            "--spill".into(),
            spill.into(),
        ]);
        // `--flag=VALUE`: a value that starts with `-` stays a value
        let p = &self.pricing;
        if let Some(f) = &p.prices {
            let mut flag = std::ffi::OsString::from("--prices=");
            flag.push(f);
            a.push(flag);
        }
        if p.prices_replace {
            a.push("--prices-replace".into());
        }
        a.extend(p.price.iter().map(|v| format!("--price={v}").into()));
        a.extend(p.free.iter().map(|v| format!("--free={v}").into()));
        a
    }

    /// Run tool `name` in a child process (`program mcp-call`, the call as
    /// JSON on its stdin, [`call_result_json`] on its stdout), waiting for
    /// it at most `--timeout` and [`GRACE`]; then it is killed, so nothing
    /// of the call runs on, and its spill directory is removed either way.
    fn call_in_child(&self, program: &Path, name: &str, args: &Value) -> ToolResult {
        use std::process::{Command, Stdio};
        let spill = tempfile::Builder::new()
            .prefix("nanoload-mcp-")
            .tempdir()
            .map_err(|source| ToolError::Spill {
                dir: std::env::temp_dir(),
                source,
            })?;
        let mut child = Command::new(program)
            .args(self.call_args(spill.path()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|source| ToolError::Start {
                program: program.to_path_buf(),
                source,
            })?;
        let request = json!({"name": name, "arguments": args}).to_string();
        let (tx, rx) = std::sync::mpsc::channel();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        // the call is written and its answer read on a thread of their own,
        // so the wait below holds whatever the child does with its pipes
        std::thread::spawn(move || {
            if let Some(mut i) = stdin {
                let _ = i.write_all(request.as_bytes());
            }
            let mut out = Vec::new();
            if let Some(mut o) = stdout {
                let _ = o.read_to_end(&mut out);
            }
            let _ = tx.send(out);
        });
        let secs = self.settings.timeout_secs;
        let out = if secs == 0 {
            rx.recv().ok()
        } else {
            rx.recv_timeout(Duration::from_secs(secs) + GRACE).ok()
        };
        // ended, or killed now: either way nothing of the call runs on
        let _ = child.kill();
        let status = child.wait();
        drop(spill);
        let Some(out) = out else {
            return Err(QueryError::Timeout(secs).into());
        };
        match serde_json::from_slice::<Value>(&out) {
            Ok(Value::Object(mut o)) if o.contains_key("result") => {
                Ok(o.remove("result").unwrap_or(Value::Null))
            }
            Ok(Value::Object(o)) if o.get("error").is_some_and(Value::is_string) => Err(
                ToolError::Answered(o["error"].as_str().unwrap_or_default().to_string()),
            ),
            _ => Err(ToolError::NoAnswer(
                status.map_or_else(|e| e.to_string(), |s| s.to_string()),
            )),
        }
    }

    /// The response to one message (None for a notification or a response).
    pub fn handle(&self, msg: &Value) -> Option<Value> {
        let Some(obj) = msg.as_object() else {
            return Some(error(
                Value::Null,
                -32600,
                "a message is one JSON object (batches are not supported)",
            ));
        };
        // an id that is not a string, a number or null is not echoed
        let id_of = || match obj.get("id") {
            Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
            _ => Value::Null,
        };
        let method = match obj.get("method") {
            Some(Value::String(m)) => m.as_str(),
            Some(_) => return Some(error(id_of(), -32600, "the method is not a string")),
            // a response from the client: nothing asked of us
            None if obj.contains_key("result") || obj.contains_key("error") => return None,
            None => {
                return Some(error(
                    id_of(),
                    -32600,
                    "a request names its method (a response has result or error)",
                ));
            }
        };
        let id = obj.get("id")?.clone(); // a notification: no answer
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        Some(match method {
            "initialize" => {
                let asked = params["protocolVersion"].as_str().unwrap_or("");
                let version = PROTOCOL_VERSIONS
                    .iter()
                    .find(|v| **v == asked)
                    .unwrap_or(&PROTOCOL_VERSIONS[0]);
                ok(
                    id,
                    json!({
                        "protocolVersion": version,
                        "capabilities": {"tools": {"listChanged": false}},
                        "serverInfo": {"name": "nanoload", "title": "nanoload history", "version": env!("CARGO_PKG_VERSION")},
                        "instructions": format!(
                            "The history of nanobot and nanoclaw agents as nanoload loaded it ({}: {}). Start with list_tables and describe_table; query runs one read-only DuckDB SELECT.",
                            self.kind.as_str(),
                            self.path.display()
                        ),
                    }),
                )
            }
            "ping" => ok(id, json!({})),
            "tools/list" => ok(id, json!({"tools": tools()})),
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or("");
                let args = match params.get("arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(a @ Value::Object(_)) => a.clone(),
                    Some(_) => return Some(error(id, -32602, "arguments is an object")),
                };
                match self.call(name, &args) {
                    None => error(id, -32602, &format!("unknown tool: {name}")),
                    Some(Ok(v)) => ok(
                        id,
                        json!({
                            "content": [{"type": "text", "text": v.to_string()}],
                            "structuredContent": v,
                            "isError": false,
                        }),
                    ),
                    Some(Err(e)) => ok(
                        id,
                        json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true}),
                    ),
                }
            }
            _ => error(id, -32601, &format!("method not found: {method}")),
        })
    }

    /// Serve until `input` ends: one response line per request, a
    /// JSON-RPC error for a line that cannot be one ([`read_line`]).
    pub fn serve(&self, mut input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
        let mut buf = Vec::new();
        while let Some(line) = read_line(&mut input, &mut buf)? {
            let response = match line {
                Line::TooLong => Some(error(
                    Value::Null,
                    -32600,
                    &format!(
                        "a message is one line of at most {MAX_LINE} bytes; this line was longer and was not read"
                    ),
                )),
                Line::Text(bytes) => {
                    if bytes.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match std::str::from_utf8(bytes) {
                        Err(e) => Some(error(
                            Value::Null,
                            -32700,
                            &format!("parse error: the line is not UTF-8 ({e})"),
                        )),
                        Ok(text) => match crate::jsonl::parse(text) {
                            Ok(msg) => self.handle(&msg),
                            Err(e) => Some(error(
                                Value::Null,
                                -32700,
                                &format!("parse error: {}", crate::diag::one_line(&e.to_string())),
                            )),
                        },
                    }
                }
            };
            if let Some(r) = response {
                writeln!(output, "{r}")?;
                output.flush()?;
            }
        }
        Ok(())
    }
}

/// One line of the client's, as [`read_line`] gives it.
#[derive(Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Its bytes, without the `\n` (and a `\r` before it).
    Text(&'a [u8]),
    /// Longer than [`MAX_LINE`]: read through to its end, not kept.
    TooLong,
}

/// The next line of `input` in `buf` (None at the end): at most
/// [`MAX_LINE`] bytes are kept, the rest of a longer line is read and
/// dropped as it comes.
pub fn read_line<'a>(
    input: &mut impl BufRead,
    buf: &'a mut Vec<u8>,
) -> std::io::Result<Option<Line<'a>>> {
    buf.clear();
    let mut too_long = false;
    let mut any = false;
    loop {
        let available = match input.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (part, used, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if !too_long {
            if buf.len() + part.len() > MAX_LINE {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(part);
            }
        }
        input.consume(used);
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(Line::Text(buf)))
}

/// What a tool call's process prints: `{"result": …}` or `{"error": "…"}`.
pub fn call_result_json(r: &ToolResult) -> Value {
    match r {
        Ok(v) => json!({"result": v}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

fn ok(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}
