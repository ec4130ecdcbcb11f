//! `nanoload otlp SOURCE [TRACES.jsonl] [--endpoint URL]`: the sessions of a
//! load as OpenTelemetry traces, for Langfuse, Arize Phoenix and any OTLP
//! backend.
//!
//! ```text
//! events (session_uid, ordinal, turn_type, timestamp_utc, tool_use_id…)  ─┐
//! llm_calls (session_uid, started_at_ms, duration_ms, tokens, cost_usd…) ─┴▶ traces
//!
//! trace       one per session_uid (and one per agent instance for the
//!             calls no session claims)
//! ├ invoke_agent {agent}   one per turn: a user row and what follows it
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
//! (UTC); how each span's end is chosen where no duration was recorded is in
//! docs/design.md "Traces". Ids are hashes of what a span stands for, so the
//! same load gives the same bytes. Message text is sent only with
//! `--content`, as the outputs hold it (redacted).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::query::{QueryError, Source, SourceKind};

/// The OpenTelemetry semantic conventions the attributes follow.
pub const SEMCONV: &str = "1.37.0";

/// A span attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    Str(String),
    Int(i64),
    Double(f64),
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
    pub start_ns: i64,
    pub end_ns: i64,
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
}

/// Options of the conversion.
#[derive(Debug, Clone)]
pub struct Options {
    /// Send message text (`input.value`, `output.value`, tool arguments and
    /// results).
    pub content: bool,
    /// `openinference.project.name` of the resource.
    pub project: String,
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
    t_ns: Option<i64>,
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

/// The traces of SOURCE: an events file with its `--tables`, a `--db`
/// file, or a ledger (exported first, every row ever seen, into a private
/// temp dir removed after: the same rows `nanoload export` writes).
pub fn traces_of(
    source: &Path,
    tables: Option<&Path>,
    opts: &Options,
) -> Result<(Vec<Trace>, Counts), OtlpError> {
    let src = Source::open(source, tables)?;
    if src.kind != SourceKind::Ledger {
        return traces(&src, opts);
    }
    drop(src);
    let dir = tempfile::Builder::new()
        .prefix("nanoload-otlp-")
        .tempdir()
        .map_err(|e| OtlpError::Input {
            path: std::env::temp_dir(),
            message: e.to_string(),
        })?;
    let out = dir.path().join("events.parquet");
    let tables = dir.path().join("tables");
    crate::ledger::export(&crate::ledger::ExportArgs {
        ledger: source.to_path_buf(),
        out: out.clone(),
        tables: Some(tables.clone()),
        snapshot: false,
        dataset: None,
        threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        memory_limit: 256 << 20,
    })
    .map_err(|e| OtlpError::Input {
        path: source.to_path_buf(),
        message: e.to_string(),
    })?;
    traces(&Source::open(&out, Some(&tables))?, opts)
}

/// The traces of an opened SOURCE (an events file with its `--tables`, or
/// a `--db` file), sorted by trace id.
pub fn traces(src: &Source, opts: &Options) -> Result<(Vec<Trace>, Counts), OtlpError> {
    if src.kind == SourceKind::Ledger || src.kind == SourceKind::Tables {
        return Err(OtlpError::Input {
            path: src.path.clone(),
            message: match src.kind {
                SourceKind::Ledger => "a ledger is read through its export (traces_of)".into(),
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
    let rows: Vec<Row> = {
        let mut s = conn.prepare(&format!(
            "SELECT session_uid, agent, instance, session_id, turn_type, tool_name, tool_use_id,
                    epoch_ns(timestamp_utc), {text}
             FROM events WHERE session_uid IS NOT NULL
             ORDER BY session_uid, ordinal"
        ))?;
        s.query_map([], |r| {
            Ok(Row {
                session_uid: r.get(0)?,
                agent: r.get(1)?,
                instance: r.get(2)?,
                session_id: r.get(3)?,
                turn_type: r.get(4)?,
                tool_name: r.get(5)?,
                tool_use_id: r.get(6)?,
                t_ns: r.get(7)?,
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
            Ok(Call {
                session_uid: r.get(0)?,
                agent: r.get(1)?,
                instance: r.get(2)?,
                provider: r.get(3)?,
                model: r.get(4)?,
                started_ms: r.get(5)?,
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
    Ok(build(&rows, &calls, opts))
}

/// One turn while it is built.
struct Turn {
    span_id: [u8; 8],
    start: Option<i64>,
    end: Option<i64>,
    input: Option<String>,
    output: Option<String>,
    tools: Vec<Span>,
    chats: Vec<Span>,
}

fn widen(t: &mut Turn, at: i64) {
    t.start = Some(t.start.map_or(at, |s| s.min(at)));
    t.end = Some(t.end.map_or(at, |e| e.max(at)));
}

/// The pure mapping: rows in (session_uid, ordinal) order and calls →
/// traces sorted by trace id.
fn build(rows: &[Row], calls: &[Call], opts: &Options) -> (Vec<Trace>, Counts) {
    let mut counts = Counts::default();
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
        traces.push(session_trace(session, &calls, opts, &mut counts));
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
        traces.push(Trace {
            trace_id: id16(&["sessionless", agent, instance]),
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
    vec![
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
    ]
}

/// The trace of one session: its rows in order, its calls.
fn session_trace(rows: &[Row], calls: &[&Call], opts: &Options, counts: &mut Counts) -> Trace {
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
                turn.tools.push(Span {
                    span_id: id8(&["tool", uid, &call_id, &k]),
                    parent: Some(turn.span_id),
                    name: format!("execute_tool {tool}"),
                    kind: KIND_INTERNAL,
                    start_ns: t,
                    end_ns: t,
                    attrs,
                    error: None,
                });
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
    // each call in the last turn that started at or before it (else the first)
    let mut loose = Vec::new();
    for c in calls {
        let Some(start) = c.started_ms.map(|m| m * 1_000_000) else {
            counts.untimed_calls += 1;
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
    let mut spans = Vec::new();
    for (n, t) in turns.into_iter().enumerate() {
        let (Some(start), Some(end)) = (t.start, t.end) else {
            counts.untimed_turns += 1;
            continue;
        };
        counts.turns += 1;
        counts.tools += t.tools.len();
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
        if let Some(i) = t.input {
            attrs.push(("input.value", Attr::Str(i)));
        }
        if let Some(o) = t.output {
            attrs.push(("output.value", Attr::Str(o)));
        }
        spans.push(Span {
            span_id: t.span_id,
            parent: None,
            name: format!("invoke_agent {}", first.agent),
            kind: KIND_INTERNAL,
            start_ns: start,
            end_ns: end,
            attrs,
            error: None,
        });
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

/// The span of one LLM call (None without a start time).
fn chat_span(
    c: &Call,
    parent: Option<[u8; 8]>,
    session: Option<&str>,
    counts: &mut Counts,
) -> Option<Span> {
    let start = c.started_ms? * 1_000_000;
    counts.chats += 1;
    let end = start + c.duration_ms.filter(|d| *d >= 0).unwrap_or(0) * 1_000_000;
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
        attrs.push(("gen_ai.response.finish_reasons", Attr::Str(f.clone())));
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
        pb::fixed64(&mut span, 7, s.start_ns as u64);
        pb::fixed64(&mut span, 8, s.end_ns as u64);
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

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let rest = if let Some(r) = url.strip_prefix("http://") {
            r
        } else if url.starts_with("https://") {
            return Err(
                "https is not supported: send to a collector on this machine over http (e.g. http://127.0.0.1:4318/v1/traces) and let it forward over TLS".into(),
            );
        } else {
            return Err("an endpoint is a URL: http://HOST:PORT/PATH".into());
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/v1/traces"),
        };
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) => (
                h,
                p.parse::<u16>()
                    .map_err(|_| format!("{p} is not a port number"))?,
            ),
            None => (authority, 80),
        };
        if host.is_empty() {
            return Err("the endpoint names no host".into());
        }
        Ok(Endpoint {
            host: host.trim_matches(['[', ']']).to_string(),
            port,
            path: path.to_string(),
            url: url.to_string(),
        })
    }

    /// POST one body; the status code and the start of the answer's body.
    fn post_once(
        &self,
        body: &[u8],
        content_type: &str,
        headers: &[(String, String)],
    ) -> std::io::Result<(u16, String)> {
        use std::io::Read;
        use std::net::ToSocketAddrs;
        let timeout = std::time::Duration::from_secs(30);
        let addr = (self.host.as_str(), self.port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| std::io::Error::other("the host has no address"))?;
        let mut s = std::net::TcpStream::connect_timeout(&addr, timeout)?;
        s.set_read_timeout(Some(timeout))?;
        s.set_write_timeout(Some(timeout))?;
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
        s.write_all(head.as_bytes())?;
        s.write_all(body)?;
        s.flush()?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer)?;
        let text = String::from_utf8_lossy(&answer);
        let status = text
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse::<u16>().ok())
            .ok_or_else(|| std::io::Error::other("the answer is not HTTP"))?;
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b)
            .unwrap_or("")
            .chars()
            .take(200)
            .collect::<String>();
        Ok((status, crate::diag::one_line(&body)))
    }

    /// POST with retries: a refused connection, 429 and 5xx are tried
    /// again (three tries, 0.5 s then 1 s apart); any other non-2xx fails
    /// at once.
    pub fn post(
        &self,
        body: &[u8],
        protocol: Protocol,
        headers: &[(String, String)],
    ) -> Result<(), String> {
        let content_type = match protocol {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        };
        let mut last = String::new();
        for attempt in 0..3u32 {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(500 << (attempt - 1)));
            }
            match self.post_once(body, content_type, headers) {
                Ok((200..=299, _)) => return Ok(()),
                Ok((code @ (429 | 500..=599), b)) => last = format!("HTTP {code}: {b}"),
                Ok((code, b)) => return Err(format!("HTTP {code}: {b}")),
                Err(e) => last = e.to_string(),
            }
        }
        Err(format!("{last} (3 tries)"))
    }
}
