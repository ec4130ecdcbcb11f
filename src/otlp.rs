//! `nanoload otlp SOURCE [TRACES.jsonl] [--endpoint URL]`: the sessions of a
//! load as OpenTelemetry traces, for Langfuse, Arize Phoenix and any OTLP
//! backend.
//!
//! ```text
//! events (session_uid, ordinal, turn_type, timestamp_utc, tool_use_id…)  ─┐
//! llm_calls (session_uid, started_at_ms, duration_ms, tokens, cost_usd…) ─┴▶ traces
//!
//! trace       one per session_uid (and one per agent instance for the
//!             calls no session claims, its id from the instance's identity)
//! ├ {title}                one per turn: a user row and what follows it, named by
//! │                        the session's title (sessions.title; else invoke_agent {agent})
//! │ ├ chat {model}         one per LLM call whose start falls in the turn
//! │ └ execute_tool {tool}  one per tool_use row, ended by its tool_result
//!
//! TRACES.jsonl   the OpenTelemetry file exporter's format: one
//!                ExportTraceServiceRequest as OTLP/JSON per line, a line per trace
//! --endpoint     the same requests over OTLP/HTTP (protobuf, or JSON), a POST per trace
//! ```
//!
//! Every span carries both dialects: the OpenTelemetry GenAI semantic
//! conventions ([`SEMCONV`]) and OpenInference's. Instants are the data's
//! (UTC), as OTLP holds them: unsigned 64-bit nanoseconds since 1970, so an
//! instant before 1970 or after 2554-07-21 is left out and counted; how each
//! span's end is chosen where no duration was recorded is in
//! docs/design.md "Traces". Each POST has one deadline (`--timeout`) for
//! connecting, sending and reading the answer to its `Content-Length`. Ids are hashes of what a span stands for, so the
//! same load gives the same bytes, and the trace of an instance's calls of
//! no session hashes the instance's identity (its workspace or agent group
//! ids), so two homes' traces never share an id. Message text is sent only
//! with `--content`, as the outputs hold it (redacted); the session's title
//! (redacted as well) names its turns.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::source::{QueryError, Source, SourceKind};

/// The OpenTelemetry semantic conventions the attributes follow.
pub const SEMCONV: &str = "1.37.0";

/// A span attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Str(String),
    Int(i64),
    Double(f64),
    /// An array of strings (`gen_ai.response.finish_reasons`).
    Strs(Vec<String>),
}

/// OTLP span kinds used here.
pub const KIND_INTERNAL: u8 = 1;
pub const KIND_CLIENT: u8 = 3;

/// One span.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub span_id: [u8; 8],
    pub parent: Option<[u8; 8]>,
    pub name: String,
    pub kind: u8,
    /// Nanoseconds since 1970-01-01 (UTC).
    pub start_ns: u64,
    pub end_ns: u64,
    pub attrs: Vec<(&'static str, Attr)>,
    /// An error's type (status ERROR with it as message).
    pub error: Option<String>,
}

/// One trace: its resource and spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub trace_id: [u8; 16],
    pub resource: Vec<(&'static str, Attr)>,
    pub spans: Vec<Span>,
}

/// What went into the traces, for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts {
    pub traces: usize,
    pub turns: usize,
    pub chats: usize,
    pub tools: usize,
    /// Turns none of whose rows has a UTC time: no span (nothing to place it).
    pub untimed_turns: usize,
    /// Tool calls without a UTC time.
    pub untimed_tools: usize,
    /// LLM calls without a start time.
    pub untimed_calls: usize,
    /// LLM calls of no session (each instance's in one trace).
    pub sessionless_calls: usize,
    /// Event rows whose instant OTLP cannot hold (before 1970, after
    /// 2554-07-21): counted as untimed.
    pub out_of_range_rows: usize,
    /// LLM calls whose start OTLP cannot hold: no span.
    pub out_of_range_calls: usize,
}

/// Microseconds since 1970 as OTLP's nanoseconds: None before 1970 or past
/// what 64 unsigned bits of nanoseconds hold.
fn ns_of_us(us: i64) -> Option<u64> {
    u64::try_from(us).ok()?.checked_mul(1_000)
}

/// Milliseconds since 1970 as OTLP's nanoseconds (as [`ns_of_us`]).
fn ns_of_ms(ms: i64) -> Option<u64> {
    u64::try_from(ms).ok()?.checked_mul(1_000_000)
}

/// Options of the conversion.
#[derive(Debug, Clone)]
pub struct Options {
    /// Send message text (`input.value`, `output.value`, tool arguments and
    /// results).
    pub content: bool,
    /// `openinference.project.name` of the resource.
    pub project: String,
    /// How the calls were priced when not as their load priced them
    /// (`--prices`, `--price`, `--free`): each resource's
    /// `nanoload.cost.prices`.
    pub prices: Option<String>,
}

fn hash(parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    for p in parts {
        h.update(p.as_bytes());
        h.update([0u8]);
    }
    h.finalize().into()
}

fn id16(parts: &[&str]) -> [u8; 16] {
    let h = hash(parts);
    let mut id = [0u8; 16];
    id.copy_from_slice(&h[..16]);
    id
}

fn id8(parts: &[&str]) -> [u8; 8] {
    let h = hash(parts);
    let mut id = [0u8; 8];
    id.copy_from_slice(&h[..8]);
    id
}

/// One `events` row, as the traces need it.
#[derive(Debug, Clone)]
struct Row {
    session_uid: String,
    agent: String,
    instance: String,
    session_id: Option<String>,
    turn_type: String,
    tool_name: Option<String>,
    tool_use_id: Option<String>,
    t_ns: Option<u64>,
    /// It has a time, and OTLP cannot hold it (`t_ns` is then None).
    bad_time: bool,
    text: Option<String>,
}

/// One `llm_calls` row.
#[derive(Debug, Clone)]
struct Call {
    session_uid: Option<String>,
    agent: String,
    instance: String,
    provider: Option<String>,
    model: Option<String>,
    started_ms: Option<i64>,
    /// `started_ms` as OTLP holds it (None: no start, or one it cannot hold).
    start_ns: Option<u64>,
    duration_ms: Option<i64>,
    input: Option<i64>,
    output: Option<i64>,
    cache_read: Option<i64>,
    cache_write: Option<i64>,
    total: Option<i64>,
    cost: Option<f64>,
    error: Option<String>,
    key: String,
    finish_reason: Option<String>,
}

/// Why no traces were made.
#[derive(Debug, thiserror::Error)]
pub enum OtlpError {
    #[error(transparent)]
    Source(#[from] QueryError),
    #[error("{}: {message}", path.display())]
    Input { path: PathBuf, message: String },
}

impl From<duckdb::Error> for OtlpError {
    fn from(e: duckdb::Error) -> OtlpError {
        OtlpError::Source(e.into())
    }
}

/// The traces of SOURCE: an events file with its `--tables`, or a `--db`
/// file (a ledger is read through its export: `crate::source::outputs`).
/// With `prices`, the calls are priced again at read with it.
pub fn traces_of(
    source: &Path,
    tables: Option<&Path>,
    opts: &Options,
    prices: Option<&crate::prices::PriceTable>,
) -> Result<(Vec<Trace>, Counts), OtlpError> {
    let reader = crate::source::Reader {
        prices: prices.cloned(),
        ..Default::default()
    };
    traces(&Source::open_with(source, tables, &reader)?, opts)
}

/// The traces of an opened SOURCE (an events file with its `--tables`, or
/// a `--db` file), sorted by trace id.
pub fn traces(src: &Source, opts: &Options) -> Result<(Vec<Trace>, Counts), OtlpError> {
    if src.kind == SourceKind::Ledger || src.kind == SourceKind::Tables {
        return Err(OtlpError::Input {
            path: src.path.clone(),
            message: match src.kind {
                SourceKind::Ledger => {
                    "a ledger is read through its export (source::outputs)".into()
                }
                _ => "a tables directory has no events: give OUT.parquet with --tables DIR".into(),
            },
        });
    }
    if !src.table_names()?.iter().any(|n| n == "llm_calls") {
        return Err(OtlpError::Input {
            path: src.path.clone(),
            message: "no llm_calls table: give the load's side tables with --tables DIR".into(),
        });
    }
    let conn = src.conn();
    let text = if opts.content {
        "text"
    } else {
        "CAST(NULL AS VARCHAR)"
    };
    // microseconds hold every finite TIMESTAMP (nanoseconds overflow before
    // 1677); an infinite one is -1, before 1970 like any other left out
    let rows: Vec<Row> = {
        let mut s = conn.prepare(&format!(
            "SELECT session_uid, agent, instance, session_id, turn_type, tool_name, tool_use_id,
                    CASE WHEN timestamp_utc IS NULL THEN NULL
                         WHEN isfinite(timestamp_utc) THEN epoch_us(timestamp_utc)
                         ELSE -1 END,
                    {text}
             FROM events WHERE session_uid IS NOT NULL
             ORDER BY session_uid, ordinal"
        ))?;
        s.query_map([], |r| {
            let us: Option<i64> = r.get(7)?;
            let t_ns = us.and_then(ns_of_us);
            Ok(Row {
                session_uid: r.get(0)?,
                agent: r.get(1)?,
                instance: r.get(2)?,
                session_id: r.get(3)?,
                turn_type: r.get(4)?,
                tool_name: r.get(5)?,
                tool_use_id: r.get(6)?,
                t_ns,
                bad_time: us.is_some() && t_ns.is_none(),
                text: r.get(8)?,
            })
        })?
        .collect::<duckdb::Result<_>>()?
    };
    let calls: Vec<Call> = {
        let mut s = conn.prepare(
            "SELECT session_uid, agent, instance, provider, model, started_at_ms, duration_ms,
                    input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
                    total_tokens, cost_usd,
                    coalesce(error_kind, CAST(error_status_code AS VARCHAR)),
                    concat_ws(chr(0), instance, source_path, CAST(id AS VARCHAR),
                              coalesce(call_id, ''), CAST(started_at_ms AS VARCHAR)),
                    finish_reason
             FROM llm_calls
             ORDER BY session_uid NULLS LAST, started_at_ms NULLS LAST, 15",
        )?;
        s.query_map([], |r| {
            let started_ms: Option<i64> = r.get(5)?;
            Ok(Call {
                session_uid: r.get(0)?,
                agent: r.get(1)?,
                instance: r.get(2)?,
                provider: r.get(3)?,
                model: r.get(4)?,
                started_ms,
                start_ns: started_ms.and_then(ns_of_ms),
                duration_ms: r.get(6)?,
                input: r.get(7)?,
                output: r.get(8)?,
                cache_read: r.get(9)?,
                cache_write: r.get(10)?,
                total: r.get(11)?,
                cost: r.get(12)?,
                error: r.get(13)?,
                key: r.get(14)?,
                finish_reason: r.get(15)?,
            })
        })?
        .collect::<duckdb::Result<_>>()?
    };
    let names = Names::of(src)?;
    Ok(build(&rows, &calls, &names, opts))
}

/// What the `sessions` table tells the traces besides the rows: each
/// session's title (the name of its turns) and each instance's identity
/// (its trace of calls of no session). Empty without the table or its
/// columns (the tables of an earlier load).
#[derive(Debug, Clone, Default)]
struct Names {
    /// `sessions.title` by session_uid.
    titles: BTreeMap<String, String>,
    /// By (agent, instance): the identities the instance gave itself, as
    /// its sessions hold them — nanobot's workspace ids (`namespace`, a
    /// random id nanobot keeps per workspace), nanoclaw's agent group ids
    /// (`ag-<ms>-<random>`) — sorted and joined: two homes' instances of
    /// one name have others.
    identities: BTreeMap<(String, String), String>,
}

impl Names {
    fn of(src: &Source) -> Result<Names, OtlpError> {
        if !src.table_names()?.iter().any(|n| n == "sessions") {
            return Ok(Names::default());
        }
        let conn = src.conn();
        let columns: Vec<String> = {
            let mut s = conn.prepare("SELECT column_name FROM (DESCRIBE sessions)")?;
            s.query_map([], |r| r.get(0))?
                .collect::<duckdb::Result<_>>()?
        };
        let has = |c: &str| columns.iter().any(|n| n == c);
        let mut names = Names::default();
        if has("title") {
            let mut s = conn.prepare(
                "SELECT session_uid, title FROM sessions
                 WHERE session_uid IS NOT NULL AND title IS NOT NULL ORDER BY session_uid",
            )?;
            names.titles = s
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<duckdb::Result<_>>()?;
        }
        let ids: Vec<&str> = ["namespace", "agent_group_id"]
            .into_iter()
            .filter(|c| has(c))
            .collect();
        if !ids.is_empty() {
            let of = ids
                .iter()
                .map(|c| format!("SELECT agent, instance, {c} AS id FROM sessions"))
                .collect::<Vec<_>>()
                .join(" UNION ALL ");
            let mut s = conn.prepare(&format!(
                "SELECT agent, instance, string_agg(DISTINCT id, ',' ORDER BY id)
                 FROM ({of}) WHERE id IS NOT NULL AND id <> ''
                 GROUP BY agent, instance ORDER BY agent, instance"
            ))?;
            names.identities = s
                .query_map([], |r| Ok(((r.get(0)?, r.get(1)?), r.get(2)?)))?
                .collect::<duckdb::Result<_>>()?;
        }
        Ok(names)
    }
}

/// One turn while it is built.
struct Turn {
    span_id: [u8; 8],
    start: Option<u64>,
    end: Option<u64>,
    input: Option<String>,
    output: Option<String>,
    tools: Vec<Span>,
    chats: Vec<Span>,
}

fn widen(t: &mut Turn, at: u64) {
    t.start = Some(t.start.map_or(at, |s| s.min(at)));
    t.end = Some(t.end.map_or(at, |e| e.max(at)));
}

/// The pure mapping: rows in (session_uid, ordinal) order and calls →
/// traces sorted by trace id.
fn build(rows: &[Row], calls: &[Call], names: &Names, opts: &Options) -> (Vec<Trace>, Counts) {
    let mut counts = Counts {
        out_of_range_rows: rows.iter().filter(|r| r.bad_time).count(),
        out_of_range_calls: calls
            .iter()
            .filter(|c| c.started_ms.is_some() && c.start_ns.is_none())
            .count(),
        ..Counts::default()
    };
    let mut by_session: BTreeMap<&str, Vec<&Call>> = BTreeMap::new();
    let mut sessionless: BTreeMap<(&str, &str), Vec<&Call>> = BTreeMap::new();
    for c in calls {
        match &c.session_uid {
            Some(s) => by_session.entry(s.as_str()).or_default().push(c),
            None => {
                counts.sessionless_calls += 1;
                sessionless
                    .entry((c.agent.as_str(), c.instance.as_str()))
                    .or_default()
                    .push(c)
            }
        }
    }
    let mut traces = Vec::new();
    for session in rows.chunk_by(|a, b| a.session_uid == b.session_uid) {
        let calls = by_session
            .remove(session[0].session_uid.as_str())
            .unwrap_or_default();
        let title = names.titles.get(session[0].session_uid.as_str());
        traces.push(session_trace(session, &calls, title, opts, &mut counts));
    }
    // calls of sessions with no event rows, then those of no session
    for (uid, calls) in by_session {
        let first = calls[0];
        let resource = resource(&first.agent, &first.instance, opts);
        let spans = calls
            .iter()
            .filter_map(|c| chat_span(c, None, Some(uid), &mut counts))
            .collect();
        traces.push(Trace {
            trace_id: id16(&["session", uid]),
            resource,
            spans,
        });
    }
    for ((agent, instance), calls) in sessionless {
        let spans = calls
            .iter()
            .filter_map(|c| chat_span(c, None, None, &mut counts))
            .collect();
        // the instance's identity, not its name alone: every home has a
        // `.nanobot`, and a backend given two homes' traces merges those of
        // one id
        let identity = names
            .identities
            .get(&(agent.to_string(), instance.to_string()))
            .map_or("", String::as_str);
        traces.push(Trace {
            trace_id: id16(&["sessionless", agent, instance, identity]),
            resource: resource(agent, instance, opts),
            spans,
        });
    }
    traces.retain(|t| !t.spans.is_empty());
    traces.sort_by_key(|t| t.trace_id);
    counts.traces = traces.len();
    (traces, counts)
}

fn resource(agent: &str, instance: &str, opts: &Options) -> Vec<(&'static str, Attr)> {
    let mut r = vec![
        ("service.name", Attr::Str(agent.to_string())),
        (
            "openinference.project.name",
            Attr::Str(opts.project.clone()),
        ),
        ("nanoload.agent", Attr::Str(agent.to_string())),
        ("nanoload.instance", Attr::Str(instance.to_string())),
        ("telemetry.sdk.name", Attr::Str("nanoload".into())),
        (
            "telemetry.sdk.version",
            Attr::Str(env!("CARGO_PKG_VERSION").into()),
        ),
    ];
    if let Some(p) = &opts.prices {
        r.push(("nanoload.cost.prices", Attr::Str(p.clone())));
    }
    r
}

/// The trace of one session: its rows in order, its calls.
fn session_trace(
    rows: &[Row],
    calls: &[&Call],
    title: Option<&String>,
    opts: &Options,
    counts: &mut Counts,
) -> Trace {
    let first = &rows[0];
    let uid = first.session_uid.as_str();
    let mut turns: Vec<Turn> = Vec::new();
    // tool_use rows waiting for their result: (turn, index in tools)
    let mut open: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (k, r) in rows.iter().enumerate() {
        if r.turn_type == "user" || turns.is_empty() {
            let n = turns.len().to_string();
            turns.push(Turn {
                span_id: id8(&["turn", uid, &n]),
                start: None,
                end: None,
                input: None,
                output: None,
                tools: Vec::new(),
                chats: Vec::new(),
            });
        }
        let ti = turns.len() - 1;
        let turn = &mut turns[ti];
        if let Some(t) = r.t_ns {
            widen(turn, t);
        }
        match r.turn_type.as_str() {
            "user" if turn.input.is_none() => turn.input = r.text.clone(),
            "assistant" => turn.output = r.text.clone().or(turn.output.take()),
            "tool_use" => {
                let Some(t) = r.t_ns else {
                    counts.untimed_tools += 1;
                    continue;
                };
                turn.tools.push(tool_span(r, uid, k, turn.span_id, t));
                if let Some(id) = r.tool_use_id.as_deref() {
                    open.insert(id, (ti, turn.tools.len() - 1));
                }
            }
            "tool_result" => {
                if let Some((ti, si)) = r.tool_use_id.as_deref().and_then(|id| open.remove(id)) {
                    let span = &mut turns[ti].tools[si];
                    if let Some(t) = r.t_ns.filter(|t| *t >= span.start_ns) {
                        span.end_ns = t;
                    }
                    if let Some(text) = &r.text {
                        span.attrs
                            .push(("gen_ai.tool.call.result", Attr::Str(text.clone())));
                        span.attrs.push(("output.value", Attr::Str(text.clone())));
                    }
                    let end = span.end_ns;
                    widen(&mut turns[ti], end);
                }
            }
            _ => {}
        }
    }
    let loose = place_calls(calls, &mut turns, uid, counts);
    let mut spans = Vec::new();
    for (n, mut t) in turns.into_iter().enumerate() {
        let (Some(start), Some(end)) = (t.start, t.end) else {
            counts.untimed_turns += 1;
            continue;
        };
        counts.turns += 1;
        counts.tools += t.tools.len();
        spans.push(turn_span(&mut t, n, (start, end), first, title));
        spans.extend(t.chats);
        spans.extend(t.tools);
    }
    spans.extend(loose);
    Trace {
        trace_id: id16(&["session", uid]),
        resource: resource(&first.agent, &first.instance, opts),
        spans,
    }
}

/// The span of one `tool_use` row at `t`, in the turn `parent`; its end is
/// its result's time, when one comes.
fn tool_span(r: &Row, uid: &str, k: usize, parent: [u8; 8], t: u64) -> Span {
    let tool = r.tool_name.clone().unwrap_or_default();
    let call_id = r.tool_use_id.clone().unwrap_or_default();
    let mut attrs = vec![
        ("gen_ai.operation.name", Attr::Str("execute_tool".into())),
        ("gen_ai.agent.name", Attr::Str(r.agent.clone())),
        ("gen_ai.tool.name", Attr::Str(tool.clone())),
        ("openinference.span.kind", Attr::Str("TOOL".into())),
        ("tool.name", Attr::Str(tool.clone())),
        ("session.id", Attr::Str(uid.to_string())),
        ("gen_ai.conversation.id", Attr::Str(uid.to_string())),
    ];
    if !call_id.is_empty() {
        attrs.push(("gen_ai.tool.call.id", Attr::Str(call_id.clone())));
        attrs.push(("tool_call.id", Attr::Str(call_id.clone())));
    }
    if let Some(text) = &r.text {
        attrs.push(("gen_ai.tool.call.arguments", Attr::Str(text.clone())));
        attrs.push(("input.value", Attr::Str(text.clone())));
    }
    let k = k.to_string();
    Span {
        span_id: id8(&["tool", uid, &call_id, &k]),
        parent: Some(parent),
        name: format!("execute_tool {tool}"),
        kind: KIND_INTERNAL,
        start_ns: t,
        end_ns: t,
        attrs,
        error: None,
    }
}

/// Each call in the last turn that started at or before it (else the
/// first), widening it; the calls no turn can hold (no turn has a time)
/// stand alone in the trace.
fn place_calls(calls: &[&Call], turns: &mut [Turn], uid: &str, counts: &mut Counts) -> Vec<Span> {
    let mut loose = Vec::new();
    for c in calls {
        let Some(start) = c.start_ns else {
            // a start OTLP cannot hold is counted as such (build)
            if c.started_ms.is_none() {
                counts.untimed_calls += 1;
            }
            continue;
        };
        let ti = turns
            .iter()
            .rposition(|t| t.start.is_some_and(|s| s <= start))
            .or_else(|| turns.iter().position(|t| t.start.is_some()));
        match ti {
            Some(ti) => {
                let parent = turns[ti].span_id;
                if let Some(span) = chat_span(c, Some(parent), Some(uid), counts) {
                    let end = span.end_ns;
                    widen(&mut turns[ti], span.start_ns);
                    widen(&mut turns[ti], end);
                    turns[ti].chats.push(span);
                }
            }
            // no turn has a time: the call stands alone in the trace
            None => loose.extend(chat_span(c, None, Some(uid), counts)),
        }
    }
    loose
}

/// The root span of turn `n` of a session: named by the session's title.
fn turn_span(
    t: &mut Turn,
    n: usize,
    (start, end): (u64, u64),
    first: &Row,
    title: Option<&String>,
) -> Span {
    let uid = first.session_uid.as_str();
    let mut attrs = vec![
        ("gen_ai.operation.name", Attr::Str("invoke_agent".into())),
        ("gen_ai.agent.name", Attr::Str(first.agent.clone())),
        ("gen_ai.conversation.id", Attr::Str(uid.to_string())),
        ("openinference.span.kind", Attr::Str("AGENT".into())),
        ("session.id", Attr::Str(uid.to_string())),
        ("nanoload.instance", Attr::Str(first.instance.clone())),
        ("nanoload.turn", Attr::Int(n as i64)),
    ];
    if let Some(id) = &first.session_id {
        attrs.push(("nanoload.session_id", Attr::Str(id.clone())));
    }
    if let Some(i) = t.input.take() {
        attrs.push(("input.value", Attr::Str(i)));
    }
    if let Some(o) = t.output.take() {
        attrs.push(("output.value", Attr::Str(o)));
    }
    Span {
        span_id: t.span_id,
        parent: None,
        // the session's title names each turn (Phoenix names a trace by
        // its root span): `invoke_agent {agent}` where it has none
        name: title.map_or_else(|| format!("invoke_agent {}", first.agent), String::clone),
        kind: KIND_INTERNAL,
        start_ns: start,
        end_ns: end,
        attrs,
        error: None,
    }
}

/// The span of one LLM call (None without a start time).
fn chat_span(
    c: &Call,
    parent: Option<[u8; 8]>,
    session: Option<&str>,
    counts: &mut Counts,
) -> Option<Span> {
    let start = c.start_ns?;
    counts.chats += 1;
    // a duration past what the end can hold: the span ends where it starts
    let end = c
        .duration_ms
        .and_then(ns_of_ms)
        .and_then(|d| start.checked_add(d))
        .unwrap_or(start);
    let model = c.model.clone().unwrap_or_default();
    let mut attrs = vec![
        ("gen_ai.operation.name", Attr::Str("chat".into())),
        ("gen_ai.agent.name", Attr::Str(c.agent.clone())),
        ("openinference.span.kind", Attr::Str("LLM".into())),
    ];
    let mut push_str = |k: &'static str, v: &Option<String>| {
        if let Some(v) = v {
            attrs.push((k, Attr::Str(v.clone())));
        }
    };
    push_str("gen_ai.provider.name", &c.provider);
    push_str("llm.provider", &c.provider);
    push_str("gen_ai.request.model", &c.model);
    push_str("gen_ai.response.model", &c.model);
    push_str("llm.model_name", &c.model);
    if let Some(f) = &c.finish_reason {
        attrs.push((
            "gen_ai.response.finish_reasons",
            Attr::Strs(vec![f.clone()]),
        ));
    }
    if let Some(s) = session {
        attrs.push(("session.id", Attr::Str(s.to_string())));
        attrs.push(("gen_ai.conversation.id", Attr::Str(s.to_string())));
    }
    for (keys, v) in [
        (
            &["gen_ai.usage.input_tokens", "llm.token_count.prompt"][..],
            c.input,
        ),
        (
            &["gen_ai.usage.output_tokens", "llm.token_count.completion"][..],
            c.output,
        ),
        (
            &[
                "gen_ai.usage.cache_read.input_tokens",
                "llm.token_count.prompt_details.cache_read",
            ][..],
            c.cache_read,
        ),
        (
            &[
                "gen_ai.usage.cache_creation.input_tokens",
                "llm.token_count.prompt_details.cache_write",
            ][..],
            c.cache_write,
        ),
        (&["llm.token_count.total"][..], c.total),
    ] {
        if let Some(v) = v {
            for k in keys {
                attrs.push((k, Attr::Int(v)));
            }
        }
    }
    if let Some(cost) = c.cost {
        attrs.push(("gen_ai.usage.cost", Attr::Double(cost)));
        attrs.push(("llm.cost.total", Attr::Double(cost)));
    }
    // a backend sums the costs it is given: an unpriced call must say it
    // is missing from that sum, not look free
    let status = if c.cost.is_some() {
        "priced"
    } else {
        "unpriced"
    };
    attrs.push(("nanoload.cost.status", Attr::Str(status.into())));
    if let Some(e) = &c.error {
        attrs.push(("error.type", Attr::Str(e.clone())));
    }
    Some(Span {
        span_id: id8(&["call", &c.key]),
        parent,
        name: if model.is_empty() {
            "chat".into()
        } else {
            format!("chat {model}")
        },
        kind: KIND_CLIENT,
        start_ns: start,
        end_ns: end,
        attrs,
        error: c.error.clone(),
    })
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn attr_json(k: &str, v: &Attr) -> serde_json::Value {
    let value = match v {
        Attr::Str(s) => serde_json::json!({"stringValue": s}),
        // OTLP/JSON spells 64-bit integers as strings
        Attr::Int(i) => serde_json::json!({"intValue": i.to_string()}),
        Attr::Double(d) => serde_json::json!({"doubleValue": d}),
        Attr::Strs(v) => serde_json::json!({"arrayValue": {"values": v.iter()
            .map(|s| serde_json::json!({"stringValue": s}))
            .collect::<Vec<_>>()}}),
    };
    serde_json::json!({"key": k, "value": value})
}

/// One trace as an `ExportTraceServiceRequest` in OTLP/JSON.
pub fn to_json(t: &Trace) -> serde_json::Value {
    let spans: Vec<serde_json::Value> = t
        .spans
        .iter()
        .map(|s| {
            let mut o = serde_json::json!({
                "traceId": hex(&t.trace_id),
                "spanId": hex(&s.span_id),
                "name": s.name,
                "kind": s.kind,
                "startTimeUnixNano": s.start_ns.to_string(),
                "endTimeUnixNano": s.end_ns.to_string(),
                "attributes": s.attrs.iter().map(|(k, v)| attr_json(k, v)).collect::<Vec<_>>(),
            });
            if let Some(p) = s.parent {
                o["parentSpanId"] = serde_json::Value::String(hex(&p));
            }
            if let Some(e) = &s.error {
                o["status"] = serde_json::json!({"code": 2, "message": e});
            }
            o
        })
        .collect();
    serde_json::json!({"resourceSpans": [{
        "resource": {"attributes": t.resource.iter().map(|(k, v)| attr_json(k, v)).collect::<Vec<_>>()},
        "scopeSpans": [{
            "scope": {"name": "nanoload", "version": env!("CARGO_PKG_VERSION")},
            "spans": spans,
            "schemaUrl": format!("https://opentelemetry.io/schemas/{SEMCONV}"),
        }],
    }]})
}

/// Protocol Buffers, the few wire types OTLP needs.
mod pb {
    pub fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn key(out: &mut Vec<u8>, field: u32, wire: u8) {
        varint(out, (u64::from(field) << 3) | u64::from(wire));
    }
    pub fn bytes(out: &mut Vec<u8>, field: u32, b: &[u8]) {
        key(out, field, 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
    pub fn uint(out: &mut Vec<u8>, field: u32, v: u64) {
        key(out, field, 0);
        varint(out, v);
    }
    pub fn fixed64(out: &mut Vec<u8>, field: u32, v: u64) {
        key(out, field, 1);
        out.extend_from_slice(&v.to_le_bytes());
    }
    pub fn double(out: &mut Vec<u8>, field: u32, v: f64) {
        key(out, field, 1);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn attr_pb(k: &str, v: &Attr) -> Vec<u8> {
    let mut value = Vec::new();
    match v {
        Attr::Str(s) => pb::bytes(&mut value, 1, s.as_bytes()),
        Attr::Int(i) => pb::uint(&mut value, 3, *i as u64),
        Attr::Double(d) => pb::double(&mut value, 4, *d),
        // AnyValue.array_value: ArrayValue { repeated AnyValue values = 1 }
        Attr::Strs(v) => {
            let mut array = Vec::new();
            for s in v {
                let mut any = Vec::new();
                pb::bytes(&mut any, 1, s.as_bytes());
                pb::bytes(&mut array, 1, &any);
            }
            pb::bytes(&mut value, 5, &array);
        }
    }
    let mut kv = Vec::new();
    pb::bytes(&mut kv, 1, k.as_bytes());
    pb::bytes(&mut kv, 2, &value);
    kv
}

/// One trace as an `ExportTraceServiceRequest` in protobuf.
pub fn to_protobuf(t: &Trace) -> Vec<u8> {
    let mut scope_spans = Vec::new();
    let mut scope = Vec::new();
    pb::bytes(&mut scope, 1, b"nanoload");
    pb::bytes(&mut scope, 2, env!("CARGO_PKG_VERSION").as_bytes());
    pb::bytes(&mut scope_spans, 1, &scope);
    for s in &t.spans {
        let mut span = Vec::new();
        pb::bytes(&mut span, 1, &t.trace_id);
        pb::bytes(&mut span, 2, &s.span_id);
        if let Some(p) = s.parent {
            pb::bytes(&mut span, 4, &p);
        }
        pb::bytes(&mut span, 5, s.name.as_bytes());
        pb::uint(&mut span, 6, u64::from(s.kind));
        pb::fixed64(&mut span, 7, s.start_ns);
        pb::fixed64(&mut span, 8, s.end_ns);
        for (k, v) in &s.attrs {
            pb::bytes(&mut span, 9, &attr_pb(k, v));
        }
        if let Some(e) = &s.error {
            let mut status = Vec::new();
            pb::bytes(&mut status, 2, e.as_bytes());
            pb::uint(&mut status, 3, 2);
            pb::bytes(&mut span, 15, &status);
        }
        pb::bytes(&mut scope_spans, 2, &span);
    }
    pb::bytes(
        &mut scope_spans,
        3,
        format!("https://opentelemetry.io/schemas/{SEMCONV}").as_bytes(),
    );
    let mut resource = Vec::new();
    for (k, v) in &t.resource {
        pb::bytes(&mut resource, 1, &attr_pb(k, v));
    }
    let mut rs = Vec::new();
    pb::bytes(&mut rs, 1, &resource);
    pb::bytes(&mut rs, 2, &scope_spans);
    let mut req = Vec::new();
    pb::bytes(&mut req, 1, &rs);
    req
}

/// Write the traces to `path` (one request per line), atomically.
pub fn write_jsonl(traces: &[Trace], path: &Path) -> std::io::Result<()> {
    let pending = crate::atomic::Pending::new(path, crate::dest::Output::Traces);
    // traces replace only earlier traces: never OUT, a ledger or a file
    // nanoload did not write
    pending.check_dest()?;
    pending.clean_stale();
    let result = (|| {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&pending.tmp)?);
        for t in traces {
            serde_json::to_writer(&mut f, &to_json(t))?;
            f.write_all(b"\n")?;
        }
        f.into_inner().map_err(|e| e.into_error())?.sync_all()
    })();
    match result
        .and_then(|_| pending.check_dest())
        .and_then(|_| pending.commit())
    {
        Ok(()) => Ok(()),
        Err(e) => {
            pending.discard();
            Err(e)
        }
    }
}

/// How requests go over HTTP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Protocol {
    /// `application/x-protobuf` (what every OTLP receiver takes).
    #[value(name = "http/protobuf")]
    Protobuf,
    /// `application/json`.
    #[value(name = "http/json")]
    Json,
}

/// An OTLP/HTTP endpoint: `http://host:port/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: String,
    pub port: u16,
    pub path: String,
    pub url: String,
}

/// Why `--endpoint` is not a URL `otlp` sends to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EndpointError {
    #[error(
        "https is not supported: send to a collector on this machine over http (e.g. http://127.0.0.1:4318/v1/traces) and let it forward over TLS"
    )]
    Https,
    #[error("an endpoint is a URL: http://HOST:PORT/PATH")]
    NotHttp,
    #[error("{0} is not a port number")]
    Port(String),
    #[error("the endpoint names no host")]
    NoHost,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, EndpointError> {
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(EndpointError::Https);
        } else {
            return Err(EndpointError::NotHttp);
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/v1/traces"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| EndpointError::Port(p.to_string()))?,
            ),
            None => (authority, 80),
        };
        if host.is_empty() {
            return Err(EndpointError::NoHost);
        }
        Ok(Endpoint {
            host: host.trim_matches(['[', ']']).to_string(),
            port,
            path: path.to_string(),
            url: url.to_string(),
        })
    }

    /// POST one body before `deadline`; the status code and the start of
    /// the answer's body. Every wait (connect, each write, each read) is
    /// bounded by the time left, and the answer is read to its
    /// `Content-Length` (or its last chunk), not to the peer's close.
    fn post_once(
        &self,
        body: &[u8],
        content_type: &str,
        headers: &[(String, String)],
        deadline: std::time::Instant,
    ) -> Result<(u16, String), SendError> {
        use std::net::ToSocketAddrs;
        let left = || {
            deadline
                .checked_duration_since(std::time::Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or(SendError::Deadline)
        };
        // the name is looked up on a thread of its own so that a resolver
        // that does not answer is given up on at the deadline too (the
        // thread ends with the lookup, or with the process)
        let (tx, rx) = std::sync::mpsc::channel();
        let (host, port) = (self.host.clone(), self.port);
        std::thread::Builder::new()
            .name("nanoload-resolve".into())
            .spawn(move || {
                let _ = tx.send(
                    (host.as_str(), port)
                        .to_socket_addrs()
                        .map(|mut a| a.next()),
                );
            })
            .map_err(SendError::Io)?;
        let addr = match rx.recv_timeout(left()?) {
            Ok(found) => found
                .map_err(SendError::Io)?
                .ok_or_else(|| SendError::Io(std::io::Error::other("the host has no address")))?,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Err(SendError::Deadline),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Err(SendError::Io(std::io::Error::other(
                    "the host name lookup ended without an answer",
                )));
            }
        };
        let mut s = std::net::TcpStream::connect_timeout(&addr, left()?).map_err(io_or_deadline)?;
        let mut head = format!(
            "POST {} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nUser-Agent: nanoload/{}\r\nConnection: close\r\n",
            self.path,
            self.host,
            self.port,
            body.len(),
            env!("CARGO_PKG_VERSION")
        );
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        for part in [head.as_bytes(), body] {
            for chunk in part.chunks(64 << 10) {
                s.set_write_timeout(Some(left()?)).map_err(SendError::Io)?;
                s.write_all(chunk).map_err(io_or_deadline)?;
            }
        }
        let mut answer = Answer::default();
        let mut buf = [0u8; 8192];
        loop {
            s.set_read_timeout(Some(left()?)).map_err(SendError::Io)?;
            let n = match std::io::Read::read(&mut s, &mut buf) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(io_or_deadline(e)),
            };
            if let Some(done) = answer.take(&buf[..n])? {
                return Ok(done);
            }
        }
    }

    /// POST with retries within one deadline of `timeout_secs`: a refused
    /// connection, a broken answer, 429 and 5xx are tried again (three
    /// tries, 0.5 s then 1 s apart, while time is left); any other non-2xx
    /// fails at once.
    pub fn post(
        &self,
        body: &[u8],
        protocol: Protocol,
        headers: &[(String, String)],
        timeout_secs: u64,
    ) -> Result<(), SendError> {
        let content_type = match protocol {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(timeout_secs);
        let mut last = None;
        let mut tries = 0;
        for attempt in 0..3u32 {
            if attempt > 0 {
                let pause = std::time::Duration::from_millis(500 << (attempt - 1));
                if std::time::Instant::now() + pause >= deadline {
                    break;
                }
                std::thread::sleep(pause);
            }
            tries += 1;
            match self.post_once(body, content_type, headers, deadline) {
                Ok((200..=299, _)) => return Ok(()),
                Ok((code @ (429 | 500..=599), b)) => {
                    last = Some(SendError::Status { code, body: b })
                }
                Ok((code, b)) => return Err(SendError::Status { code, body: b }),
                Err(SendError::Deadline) => return Err(SendError::Timeout(timeout_secs)),
                Err(e) => last = Some(e),
            }
        }
        Err(match last {
            Some(e) => SendError::Tries {
                last: Box::new(e),
                tries,
            },
            None => SendError::Timeout(timeout_secs),
        })
    }
}

/// Why a request to `--endpoint` failed, on one line.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The endpoint answered with a status that is not 2xx.
    #[error("HTTP {code}: {body}")]
    Status { code: u16, body: String },
    /// Connecting, sending or reading failed.
    #[error("{}", crate::diag::one_line(&.0.to_string()))]
    Io(#[source] std::io::Error),
    /// The answer is not an HTTP/1.x answer.
    #[error("the answer is not HTTP: {0}")]
    NotHttp(String),
    /// The peer closed before the body its Content-Length announced.
    #[error(
        "the answer ended after {got} of the {announced} body bytes its Content-Length announced"
    )]
    Short { got: usize, announced: usize },
    /// The request's deadline passed (inside one try).
    #[error("the request's deadline passed")]
    Deadline,
    /// The request's deadline passed: `--timeout` seconds.
    #[error("no complete answer within {0} s (--timeout)")]
    Timeout(u64),
    /// Every try failed; the last one's error.
    #[error("{last} ({tries} {})", if *tries == 1 { "try" } else { "tries" })]
    Tries { last: Box<SendError>, tries: u32 },
}

/// A socket error: the deadline when a timed wait ran out.
fn io_or_deadline(e: std::io::Error) -> SendError {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => SendError::Deadline,
        _ => SendError::Io(e),
    }
}

/// The most of an answer's head kept (a longer head is not HTTP to us).
const MAX_HEAD: usize = 64 << 10;

/// An HTTP answer as it arrives: its head, then its body to the
/// `Content-Length` (or the last chunk, or the close); only the first
/// bytes of the body are kept (the message shows 200 characters).
#[derive(Default)]
struct Answer {
    head: Vec<u8>,
    /// Status and how the body ends, once the head is whole.
    framing: Option<(u16, Framing)>,
    body: Vec<u8>,
    /// Body bytes received (kept or not).
    got: usize,
    /// Chunked: the chunk-size line read so far.
    chunked: Vec<u8>,
    /// Chunked: the bytes of the current chunk still to come, its
    /// closing CRLF included (0: a chunk-size line is next). A chunk's
    /// data is not gathered: only what [`Answer::keep`] keeps.
    chunk_left: usize,
}

/// How an answer's body ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    Length(usize),
    Chunked,
    Close,
}

/// The most of a body kept.
const KEPT_BODY: usize = 4096;

impl Answer {
    /// Take the next bytes read (none: the peer closed); the status and
    /// body once the answer is whole.
    fn take(&mut self, bytes: &[u8]) -> Result<Option<(u16, String)>, SendError> {
        let closed = bytes.is_empty();
        if self.framing.is_none() {
            // the head's end is looked for only where the new bytes can make it
            let mut from = self.head.len().saturating_sub(3);
            self.head.extend_from_slice(bytes);
            loop {
                let found = self.head[from..].windows(4).position(|w| w == b"\r\n\r\n");
                let Some(end) = found.map(|i| from + i) else {
                    if self.head.len() > MAX_HEAD {
                        return Err(SendError::NotHttp(format!(
                            "a head longer than {MAX_HEAD} bytes"
                        )));
                    }
                    if closed {
                        return Err(SendError::NotHttp(if self.head.is_empty() {
                            "the peer closed without answering".into()
                        } else {
                            "the peer closed inside the head".into()
                        }));
                    }
                    return Ok(None);
                };
                let head = String::from_utf8_lossy(&self.head[..end]).into_owned();
                let after = self.head.split_off(end + 4);
                self.head.clear();
                let status = head
                    .split_whitespace()
                    .nth(1)
                    .filter(|_| head.starts_with("HTTP/1."))
                    .and_then(|c| c.parse::<u16>().ok())
                    .ok_or_else(|| {
                        SendError::NotHttp(crate::diag::one_line(
                            &head.chars().take(80).collect::<String>(),
                        ))
                    })?;
                // an interim answer (100 Continue): the real one follows
                if (100..200).contains(&status) {
                    self.head = after;
                    from = 0;
                    continue;
                }
                let field = |name: &str| {
                    head.lines().skip(1).find_map(|l| {
                        let (k, v) = l.split_once(':')?;
                        k.trim()
                            .eq_ignore_ascii_case(name)
                            .then(|| v.trim().to_string())
                    })
                };
                let framing = if status == 204 || status == 304 {
                    Framing::Length(0)
                } else if field("transfer-encoding")
                    .is_some_and(|t| t.to_ascii_lowercase().contains("chunked"))
                {
                    Framing::Chunked
                } else if let Some(n) = field("content-length") {
                    Framing::Length(
                        n.parse()
                            .map_err(|_| SendError::NotHttp(format!("Content-Length {n:?}")))?,
                    )
                } else {
                    Framing::Close
                };
                self.framing = Some((status, framing));
                return self.body_bytes(&after, closed);
            }
        }
        self.body_bytes(bytes, closed)
    }

    fn keep(&mut self, b: &[u8]) {
        let room = KEPT_BODY.saturating_sub(self.body.len());
        self.body.extend_from_slice(&b[..b.len().min(room)]);
    }

    fn done(&self) -> Option<(u16, String)> {
        let status = self.framing?.0;
        let text = String::from_utf8_lossy(&self.body)
            .chars()
            .take(200)
            .collect::<String>();
        Some((status, crate::diag::one_line(&text)))
    }

    fn body_bytes(&mut self, b: &[u8], closed: bool) -> Result<Option<(u16, String)>, SendError> {
        let Some((_, framing)) = self.framing else {
            return Ok(None);
        };
        match framing {
            Framing::Length(n) => {
                // bytes past the announced length are not the answer's
                let take = b.len().min(n - self.got);
                self.keep(&b[..take]);
                self.got += take;
                if self.got == n {
                    return Ok(self.done());
                }
                if closed {
                    return Err(SendError::Short {
                        got: self.got,
                        announced: n,
                    });
                }
                Ok(None)
            }
            Framing::Close => {
                self.keep(b);
                self.got += b.len();
                Ok(if closed { self.done() } else { None })
            }
            Framing::Chunked => {
                let mut b = b;
                loop {
                    // inside a chunk: its data, then the CRLF after it
                    if self.chunk_left > 0 {
                        let take = b.len().min(self.chunk_left);
                        let data = take.min(self.chunk_left.saturating_sub(2));
                        self.keep(&b[..data]);
                        self.got += data;
                        self.chunk_left -= take;
                        b = &b[take..];
                        if self.chunk_left > 0 {
                            break;
                        }
                        continue;
                    }
                    // a chunk-size line
                    let Some(eol) = memchr::memchr(b'\n', b) else {
                        self.chunked.extend_from_slice(b);
                        if self.chunked.len() > MAX_HEAD {
                            return Err(SendError::NotHttp("a chunk line too long".into()));
                        }
                        break;
                    };
                    self.chunked.extend_from_slice(&b[..eol]);
                    b = &b[eol + 1..];
                    let line = String::from_utf8_lossy(&self.chunked).into_owned();
                    self.chunked.clear();
                    let size_text = line.split(';').next().unwrap_or("").trim();
                    let size = usize::from_str_radix(size_text, 16)
                        .map_err(|_| SendError::NotHttp(format!("chunk size {size_text:?}")))?;
                    if size == 0 {
                        // the last chunk (trailers are not read)
                        return Ok(self.done());
                    }
                    self.chunk_left = size
                        .checked_add(2)
                        .ok_or_else(|| SendError::NotHttp(format!("chunk size {size_text:?}")))?;
                }
                if closed {
                    return Err(SendError::NotHttp(
                        "the peer closed inside a chunked body".into(),
                    ));
                }
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feed `bytes` to an [`Answer`] `step` bytes at a time, then the close.
    fn read(bytes: &[u8], step: usize) -> Result<Option<(u16, String)>, SendError> {
        let mut a = Answer::default();
        for part in bytes.chunks(step) {
            if let Some(done) = a.take(part)? {
                return Ok(Some(done));
            }
        }
        a.take(&[])
    }

    /// An answer is whole at its `Content-Length` or its last chunk,
    /// however its bytes arrive; bytes past the length are not its own
    /// (the body shown on one line).
    #[test]
    fn an_answer_ends_where_its_head_says() {
        for step in [1, 2, 7, 4096] {
            let got = read(
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}and more",
                step,
            );
            assert_eq!(got.ok().flatten(), Some((200, "{}".to_string())), "{step}");
            let got = read(
                b"HTTP/1.1 503 Busy\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nab\n\r\n2\r\ncd\r\n0\r\n\r\n",
                step,
            );
            assert_eq!(
                got.ok().flatten(),
                Some((503, "ab cd".to_string())),
                "{step}"
            );
        }
        assert!(matches!(
            read(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n{}", 4096),
            Err(SendError::Short {
                got: 2,
                announced: 5
            })
        ));
    }

    /// A chunk size no buffer can hold is refused, not added up; a large
    /// chunk is read through without being gathered.
    #[test]
    fn chunk_sizes_are_checked_and_chunks_not_gathered() {
        let huge = read(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab",
            4096,
        );
        assert!(matches!(huge, Err(SendError::NotHttp(_))), "{huge:?}");
        let mut a = Answer::default();
        let head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100000\r\n";
        assert!(matches!(a.take(head), Ok(None)));
        for _ in 0..16 {
            assert!(matches!(a.take(&[b'x'; 1 << 16]), Ok(None)));
        }
        assert_eq!(
            (a.body.len(), a.chunked.len(), a.got),
            (KEPT_BODY, 0, 1 << 20)
        );
        assert!(matches!(a.take(b"\r\n0\r\n\r\n"), Ok(Some((200, _)))));
    }
}
