//! The staged (raw) schemas: one row struct beside one schema function each.
//!
//! Every event-producing extractor emits [`EventRow`]s; they are batched into
//! Arrow `RecordBatch`es of [`events_schema`] and staged as Parquet. The first
//! eighteen columns are the `events` contract of docs/design.md (minus the
//! columns the SQL steps compute: `timestamp_utc`, `utc_offset_minutes`,
//! `time_basis`, `load_id`, `ordinal`, `session_uid`); the `x_*` columns are
//! helpers the SQL steps use for identity, ordering and dedup and never reach
//! OUT.parquet.
//!
//! ```text
//! one EventRow = one row of events before dedup:
//!   agent instance session_id … text source_kind source_role source_path source_line native
//!   ts_utc   (true UTC, when the store writes UTC)     ─┐ exactly one is set for timed rows
//!   ts_local (naive host-local time, as written)       ─┘
//!   x_group x_sub x_record x_match x_id x_meta x_call_source
//!   x_namespace x_legacy x_msgkey x_turn x_rounds x_start      (helpers)
//! ```

use std::sync::Arc;

use arrow::array::{
    ArrayRef, BooleanBuilder, Int32Builder, Int64Builder, StringBuilder,
    TimestampMicrosecondBuilder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use serde_json::{Map, Value};

/// `events.agent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Agent {
    Nanobot,
    Nanoclaw,
}

impl Agent {
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Nanobot => "nanobot",
            Agent::Nanoclaw => "nanoclaw",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        [Agent::Nanobot, Agent::Nanoclaw]
            .into_iter()
            .find(|a| a.as_str() == s)
    }
}

/// `events.source_role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Role {
    #[default]
    Primary,
    Secondary,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Secondary => "secondary",
        }
    }
}

/// `events.turn_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum TurnType {
    User,
    Assistant,
    ToolUse,
    ToolResult,
    Thinking,
    #[default]
    System,
}

impl TurnType {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnType::User => "user",
            TurnType::Assistant => "assistant",
            TurnType::ToolUse => "tool_use",
            TurnType::ToolResult => "tool_result",
            TurnType::Thinking => "thinking",
            TurnType::System => "system",
        }
    }
}

/// `x_group`: the ordering group of a row inside its session, the first
/// key of `ordinal` (the SQL steps name them through the `x_group_*()` macros
/// the engine defines from [`Group::ALL`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Group {
    /// Session-level rows: start, model preset, relay, permission mode;
    /// nanoclaw's catalog `sessions` row.
    #[default]
    Session = 0,
    /// Records: messages, history entries, run records; nanoclaw inbound messages.
    Record = 1,
    /// nanoclaw outbound messages.
    Outbound = 2,
    /// nanoclaw catalog and state rows.
    State = 3,
    /// nanoclaw's Claude Code transcript rows.
    Transcript = 4,
}

impl Group {
    pub const ALL: [Group; 5] = [
        Group::Session,
        Group::Record,
        Group::Outbound,
        Group::State,
        Group::Transcript,
    ];

    /// Its name in SQL: `x_group_<name>()`.
    pub fn name(self) -> &'static str {
        match self {
            Group::Session => "session",
            Group::Record => "record",
            Group::Outbound => "outbound",
            Group::State => "state",
            Group::Transcript => "transcript",
        }
    }
}

/// One raw event row. Times are microseconds since the Unix epoch of the
/// naive clock they were read in (`ts_utc`: UTC; `ts_local`: host-local wall
/// clock, written as if it were UTC).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventRow {
    pub agent: Option<Agent>,
    pub instance: String,
    pub session_id: Option<String>,
    pub parent_session_id: Option<String>,
    pub project_path: Option<String>,
    pub seq: Option<i64>,
    pub ts_utc: Option<i64>,
    pub ts_local: Option<i64>,
    pub turn_type: TurnType,
    pub model: Option<String>,
    pub tool_name: Option<String>,
    pub tool_use_id: Option<String>,
    pub text: Option<String>,
    pub source_kind: &'static str,
    /// `None` until [`crate::store::StoreOutput::push`] fills in the store's
    /// role; set by an extractor only for a row whose role differs from its
    /// store's (none does today).
    pub source_role: Option<Role>,
    pub source_path: String,
    pub source_line: Option<i64>,
    /// Everything of the source record without a column of its own: a
    /// JSON object, serialized (keys sorted) when the batch is built.
    pub native: Option<Map<String, Value>>,
    /// Ordering group inside a session (ordinal sorts by it first).
    pub x_group: Group,
    /// Index of the row inside its source record (thinking, tool_use…, assistant).
    pub x_sub: i32,
    /// Identity of the source record for exact dedup of frozen copies: a hash
    /// of its canonical JSON. Every row derived from one record shares it.
    pub x_record: Option<String>,
    /// Normalised text for windowed dedup (runtime-context suffix removed).
    pub x_match: Option<String>,
    /// The row's text as read is its `x_match` (set instead of a copy of
    /// the text: [`crate::store::StoreOutput::push`] takes the key from the
    /// text before redaction). Not staged.
    pub x_match_text: bool,
    /// Native id used as an ordering tie-breaker (nanoclaw message id).
    pub x_id: Option<String>,
    /// Session metadata row (model preset, relay, permission mode) that a
    /// secondary copy emits; dropped when a primary store has the session.
    pub x_meta: bool,
    /// For a session row that starts a turn: which `llm_calls.source` the
    /// turn's calls record (`user`, or `cron` for automation turns, on a
    /// `user` row; `system` on an assistant message nanobot injected, a
    /// subagent's result, which starts a hidden turn); `continue` on the
    /// hidden `system` row of a subagent's result injected into a running
    /// turn, which continues that turn.
    pub x_call_source: Option<String>,
    /// nanobot: the workspace-id namespace directory of the store. For a
    /// session store it is the session's namespace; for a workspace store
    /// (memory journal, run records) a hint the SQL steps use when that
    /// namespace holds the key; NULL: resolved by key in the steps
    /// (docs/design.md "Session identity").
    pub x_namespace: Option<String>,
    /// A session JSONL in a layout nanobot 0.3.x never loads as a session
    /// (`session_jsonl::is_legacy`): where a store of record holds the same
    /// session it is secondary (`sql/V002__store_roles.sql`).
    pub x_legacy: bool,
    /// Session message records: `<role>\t<timestamp as written>`; with `seq`
    /// it names one message across copies even when its content was
    /// rewritten (docs/design.md "Dedup").
    pub x_msgkey: Option<String>,
    /// WebUI transcript: the record's `turn_id`.
    pub x_turn: Option<String>,
    /// WebUI transcript, on the row that carries a turn's `turn_end`: its
    /// `round_usages` (one per provider response of the turn, in order) as
    /// `prompt_tokens:completion_tokens` pairs joined by `,` (a count the
    /// round lacks is empty); V017 matches them to `llm_calls` tokens
    /// (docs/design.md "LLM call attribution").
    pub x_rounds: Option<String>,
    /// The row that starts a session: a session's metadata line or record
    /// (nanobot), its `sessions` row (nanoclaw), whose text reads
    /// `session start: …`. V021 takes the session's facts from its native;
    /// its text and native are staged ([`steps_read_wide`]).
    pub x_start: bool,
    /// `nanoload sync` only: a digest of the row's text and native as read,
    /// before any redaction — the row's content in its ledger identity, so
    /// a change of rendering (a new `--secret-pattern`, a scanner fix) is
    /// the same row rendered again (docs/design.md "Ledger"). NULL in a
    /// load. Set by [`crate::store::StoreOutput::push`].
    pub x_content: Option<String>,
}

fn ts_type() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, None)
}

/// The staged events schema (see module docs).
pub fn events_schema() -> SchemaRef {
    let s = |n: &str, null: bool| Field::new(n, DataType::Utf8, null);
    Arc::new(Schema::new(vec![
        s("agent", false),
        s("instance", false),
        s("session_id", true),
        s("parent_session_id", true),
        s("project_path", true),
        Field::new("seq", DataType::Int64, true),
        Field::new("ts_utc", ts_type(), true),
        Field::new("ts_local", ts_type(), true),
        s("turn_type", false),
        s("model", true),
        s("tool_name", true),
        s("tool_use_id", true),
        s("text", true),
        s("source_kind", false),
        s("source_role", false),
        s("source_path", false),
        Field::new("source_line", DataType::Int64, true),
        s("native", true),
        Field::new("x_group", DataType::Int32, false),
        Field::new("x_sub", DataType::Int32, false),
        s("x_record", true),
        s("x_match", true),
        s("x_id", true),
        Field::new("x_meta", DataType::Boolean, false),
        s("x_call_source", true),
        s("x_namespace", true),
        Field::new("x_legacy", DataType::Boolean, false),
        s("x_msgkey", true),
        s("x_turn", true),
        s("x_rounds", true),
        Field::new("x_start", DataType::Boolean, false),
        s("x_content", true),
        Field::new("x_wide", DataType::Boolean, true),
        Field::new("x_blob", DataType::Int32, true),
        Field::new("x_off", DataType::Int64, true),
        Field::new("x_text_len", DataType::Int64, true),
        Field::new("x_native_len", DataType::Int64, true),
        Field::new("x_row", DataType::Int64, false),
    ]))
}

/// Whether a SQL step reads this row's `text` and `native` (docs/design.md
/// "Staging"): nanoclaw rows (links, deliveries, transcripts, losses) and
/// the rows that start a session (`x_start`, read by `sessions`). Only these
/// rows carry their text and native in the staged columns; every other
/// row's are in a blob file, read once, by the sink.
pub fn steps_read_wide(row: &EventRow) -> bool {
    read_wide(row.agent, row.x_start)
}

/// [`steps_read_wide`] of a row's agent and `x_start`.
pub fn read_wide(agent: Option<Agent>, x_start: bool) -> bool {
    agent == Some(Agent::Nanoclaw) || x_start
}

/// Where one row's text and native went when staged.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct WideRef {
    /// In the staged `text` / `native` columns ([`steps_read_wide`]).
    pub staged: bool,
    /// The blob file (`stage/blob-<n>.bin`) and the offset of the row's
    /// text, its native right after it (unstaged rows).
    pub blob: Option<(i32, i64)>,
    pub text_len: Option<i64>,
    pub native_len: Option<i64>,
}

/// A `native` object as JSON text (serde_json's maps keep keys sorted, so
/// the text of one value is always the same).
pub fn native_json(m: &Map<String, Value>) -> String {
    // a map of JSON values always serializes
    serde_json::to_string(m).unwrap_or_default()
}

/// A JSON value as a `native` object (a non-object is kept under `value`).
pub fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => Map::from_iter([("value".to_string(), other)]),
    }
}

/// Build one batch of [`events_schema`] from rows, each with its serialized
/// native and where its wide values went ([`WideRef`]; rows without one are
/// staged whole, as the step tests do); `x_row` runs from `first_row`.
pub fn events_batch(
    rows: &[EventRow],
    natives: &[Option<String>],
    wide: &[WideRef],
    first_row: i64,
) -> Result<RecordBatch, ArrowError> {
    fn text<'a>(rows: &'a [EventRow], f: impl Fn(&'a EventRow) -> Option<&'a str>) -> ArrayRef {
        let mut b = StringBuilder::with_capacity(rows.len(), 0);
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    }
    fn int(rows: &[EventRow], f: impl Fn(&EventRow) -> Option<i64>) -> ArrayRef {
        let mut b = Int64Builder::with_capacity(rows.len());
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    }
    fn int32(rows: &[EventRow], f: impl Fn(&EventRow) -> i32) -> ArrayRef {
        let mut b = Int32Builder::with_capacity(rows.len());
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    }
    fn ts(rows: &[EventRow], f: impl Fn(&EventRow) -> Option<i64>) -> ArrayRef {
        let mut b = TimestampMicrosecondBuilder::with_capacity(rows.len());
        rows.iter().for_each(|r| b.append_option(f(r)));
        Arc::new(b.finish())
    }
    fn flag(rows: &[EventRow], f: impl Fn(&EventRow) -> bool) -> ArrayRef {
        let mut b = BooleanBuilder::with_capacity(rows.len());
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    }
    // the columns that depend on the row's place in the batch
    fn text_at<'a>(n: usize, f: impl Fn(usize) -> Option<&'a str>) -> ArrayRef {
        let mut b = StringBuilder::with_capacity(n, 0);
        (0..n).for_each(|i| b.append_option(f(i)));
        Arc::new(b.finish())
    }
    fn int_at(n: usize, f: impl Fn(usize) -> Option<i64>) -> ArrayRef {
        let mut b = Int64Builder::with_capacity(n);
        (0..n).for_each(|i| b.append_option(f(i)));
        Arc::new(b.finish())
    }
    let n = rows.len();
    let staged = |i: usize| wide.get(i).is_none_or(|w| w.staged);
    let columns: Vec<ArrayRef> = vec![
        text(rows, |r| Some(r.agent.unwrap_or(Agent::Nanobot).as_str())),
        text(rows, |r| Some(&r.instance)),
        text(rows, |r| r.session_id.as_deref()),
        text(rows, |r| r.parent_session_id.as_deref()),
        text(rows, |r| r.project_path.as_deref()),
        int(rows, |r| r.seq),
        ts(rows, |r| r.ts_utc),
        ts(rows, |r| r.ts_local),
        text(rows, |r| Some(r.turn_type.as_str())),
        text(rows, |r| r.model.as_deref()),
        text(rows, |r| r.tool_name.as_deref()),
        text(rows, |r| r.tool_use_id.as_deref()),
        // text and native: only where a step reads them (wide.staged)
        text_at(n, |i| rows[i].text.as_deref().filter(|_| staged(i))),
        text(rows, |r| Some(r.source_kind)),
        text(rows, |r| r.source_role.map(Role::as_str)),
        text(rows, |r| Some(&r.source_path)),
        int(rows, |r| r.source_line),
        text_at(n, |i| {
            natives
                .get(i)
                .and_then(Option::as_deref)
                .filter(|_| staged(i))
        }),
        int32(rows, |r| r.x_group as i32),
        int32(rows, |r| r.x_sub),
        text(rows, |r| r.x_record.as_deref()),
        text(rows, |r| r.x_match.as_deref()),
        text(rows, |r| r.x_id.as_deref()),
        flag(rows, |r| r.x_meta),
        text(rows, |r| r.x_call_source.as_deref()),
        text(rows, |r| r.x_namespace.as_deref()),
        flag(rows, |r| r.x_legacy),
        text(rows, |r| r.x_msgkey.as_deref()),
        text(rows, |r| r.x_turn.as_deref()),
        text(rows, |r| r.x_rounds.as_deref()),
        flag(rows, |r| r.x_start),
        text(rows, |r| r.x_content.as_deref()),
        {
            let mut b = BooleanBuilder::with_capacity(n);
            (0..n).for_each(|i| b.append_option(wide.get(i).map(|w| w.staged)));
            Arc::new(b.finish())
        },
        {
            let mut b = Int32Builder::with_capacity(n);
            (0..n).for_each(|i| b.append_option(wide.get(i).and_then(|w| w.blob).map(|b| b.0)));
            Arc::new(b.finish())
        },
        int_at(n, |i| wide.get(i).and_then(|w| w.blob).map(|b| b.1)),
        int_at(n, |i| wide.get(i).and_then(|w| w.text_len)),
        int_at(n, |i| wide.get(i).and_then(|w| w.native_len)),
        int_at(n, |i| Some(first_row + i as i64)),
    ];
    RecordBatch::try_new(events_schema(), columns)
}

/// One row of nanobot's `llm_usage.sqlite3` `llm_calls`, plus where it came from.
/// Every column of the source table is kept; NULL stays NULL (not reported ≠ 0).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LlmCallRow {
    pub instance: String,
    pub source_path: String,
    pub id: i64,
    pub started_at_ms: i64,
    pub duration_ms: Option<i64>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub source: Option<String>,
    pub stream: Option<i64>,
    pub finish_reason: Option<String>,
    /// input, output, total, cache_read, cache_write, reported, estimated,
    /// generation_ms, measured_output, ttft_ms, timed_requests, error_status_code
    pub ints: [Option<i64>; 12],
    pub error_kind: Option<String>,
    /// nanobot's stable per-call key (`llm_usage.sqlite3` user_version 2:
    /// 32 lowercase hex, one per call attempt); NULL before it.
    pub call_id: Option<String>,
}

/// Integer columns of `llm_calls` after `finish_reason`, in table order.
pub const LLM_INT_COLUMNS: [&str; 12] = [
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reported_tokens",
    "estimated_tokens",
    "generation_ms",
    "measured_output_tokens",
    "ttft_ms",
    "timed_requests",
    "error_status_code",
];

pub fn llm_calls_schema() -> SchemaRef {
    let mut f = vec![
        Field::new("instance", DataType::Utf8, false),
        Field::new("source_path", DataType::Utf8, false),
        Field::new("id", DataType::Int64, false),
        Field::new("started_at_ms", DataType::Int64, false),
        Field::new("duration_ms", DataType::Int64, true),
        Field::new("provider", DataType::Utf8, true),
        Field::new("model", DataType::Utf8, true),
        Field::new("source", DataType::Utf8, true),
        Field::new("stream", DataType::Int64, true),
        Field::new("finish_reason", DataType::Utf8, true),
    ];
    f.extend(
        LLM_INT_COLUMNS
            .iter()
            .map(|c| Field::new(*c, DataType::Int64, true)),
    );
    f.push(Field::new("error_kind", DataType::Utf8, true));
    f.push(Field::new("call_id", DataType::Utf8, true));
    Arc::new(Schema::new(f))
}

pub fn llm_calls_batch(rows: &[LlmCallRow]) -> Result<RecordBatch, ArrowError> {
    let mut instance = StringBuilder::new();
    let mut path = StringBuilder::new();
    let mut id = Int64Builder::new();
    let mut started = Int64Builder::new();
    let mut duration = Int64Builder::new();
    let mut provider = StringBuilder::new();
    let mut model = StringBuilder::new();
    let mut source = StringBuilder::new();
    let mut stream = Int64Builder::new();
    let mut finish = StringBuilder::new();
    let mut ints: Vec<Int64Builder> = (0..LLM_INT_COLUMNS.len())
        .map(|_| Int64Builder::new())
        .collect();
    let mut kind = StringBuilder::new();
    let mut call_id = StringBuilder::new();
    for r in rows {
        instance.append_value(&r.instance);
        path.append_value(&r.source_path);
        id.append_value(r.id);
        started.append_value(r.started_at_ms);
        duration.append_option(r.duration_ms);
        provider.append_option(r.provider.as_deref());
        model.append_option(r.model.as_deref());
        source.append_option(r.source.as_deref());
        stream.append_option(r.stream);
        finish.append_option(r.finish_reason.as_deref());
        for (b, v) in ints.iter_mut().zip(r.ints) {
            b.append_option(v);
        }
        kind.append_option(r.error_kind.as_deref());
        call_id.append_option(r.call_id.as_deref());
    }
    let mut cols: Vec<ArrayRef> = vec![
        Arc::new(instance.finish()),
        Arc::new(path.finish()),
        Arc::new(id.finish()),
        Arc::new(started.finish()),
        Arc::new(duration.finish()),
        Arc::new(provider.finish()),
        Arc::new(model.finish()),
        Arc::new(source.finish()),
        Arc::new(stream.finish()),
        Arc::new(finish.finish()),
    ];
    cols.extend(ints.iter_mut().map(|b| Arc::new(b.finish()) as ArrayRef));
    cols.push(Arc::new(kind.finish()));
    cols.push(Arc::new(call_id.finish()));
    RecordBatch::try_new(llm_calls_schema(), cols)
}

/// One discovered store: a row of the `sources` table.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceRow {
    pub source_kind: String,
    pub source_role: String,
    pub source_path: String,
    pub bytes: i64,
    /// Rows the store yielded before dedup (events, or llm_calls rows).
    pub rows: i64,
    /// `ok`, `partial` (some lines or records unreadable), `failed`.
    pub status: String,
    pub agent: String,
    pub instance: String,
    /// Further files read with the store (WebUI segments).
    pub parts: i64,
    /// Secrets the scanner redacted in the store's rows, as JSON `{rule: count}`.
    pub redactions: String,
}

pub fn sources_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("source_kind", DataType::Utf8, false),
        Field::new("source_role", DataType::Utf8, false),
        Field::new("source_path", DataType::Utf8, false),
        Field::new("bytes", DataType::Int64, false),
        Field::new("rows", DataType::Int64, false),
        Field::new("status", DataType::Utf8, false),
        Field::new("agent", DataType::Utf8, false),
        Field::new("instance", DataType::Utf8, false),
        Field::new("parts", DataType::Int64, false),
        Field::new("redactions", DataType::Utf8, false),
    ]))
}

pub fn sources_batch(rows: &[SourceRow]) -> Result<RecordBatch, ArrowError> {
    let text = |f: &dyn Fn(&SourceRow) -> &str| -> ArrayRef {
        let mut b = StringBuilder::new();
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let int = |f: &dyn Fn(&SourceRow) -> i64| -> ArrayRef {
        let mut b = Int64Builder::new();
        rows.iter().for_each(|r| b.append_value(f(r)));
        Arc::new(b.finish())
    };
    let cols = vec![
        text(&|r| &r.source_kind),
        text(&|r| &r.source_role),
        text(&|r| &r.source_path),
        int(&|r| r.bytes),
        int(&|r| r.rows),
        text(&|r| &r.status),
        text(&|r| &r.agent),
        text(&|r| &r.instance),
        int(&|r| r.parts),
        text(&|r| &r.redactions),
    ];
    RecordBatch::try_new(sources_schema(), cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every staged `x_*` helper column has its line in docs/design.md's
    /// glossary ("The `x_*` helper columns").
    #[test]
    fn every_helper_column_is_in_the_design_glossary() {
        let glossary = crate::testutil::design_section("### The `x_*` helper columns");
        for f in events_schema().fields() {
            if f.name().starts_with("x_") {
                assert!(
                    glossary.contains(&format!("`{}`", f.name())),
                    "{} is not in the glossary",
                    f.name()
                );
            }
        }
    }

    #[test]
    fn events_batch_keeps_every_column_in_schema_order() -> Result<(), ArrowError> {
        let row = EventRow {
            agent: Some(Agent::Nanoclaw),
            instance: ".".into(),
            session_id: Some("s".into()),
            seq: Some(7),
            ts_utc: Some(1_000_000),
            turn_type: TurnType::ToolUse,
            text: Some("ls".into()),
            source_kind: "nanoclaw.outbound",
            source_role: Some(Role::Secondary),
            source_path: "data/x.db".into(),
            source_line: Some(3),
            x_group: Group::Outbound,
            x_sub: 1,
            x_id: Some("msg-1".into()),
            x_meta: true,
            x_call_source: Some("cron".into()),
            ..Default::default()
        };
        let b = events_batch(&[row], &[None], &[], 1)?;
        assert_eq!(b.num_columns(), events_schema().fields().len());
        let col = |n: &str| -> String {
            let a = b.column(b.schema().index_of(n).unwrap_or(0)).clone();
            arrow::util::display::array_value_to_string(&a, 0).unwrap_or_default()
        };
        assert_eq!(col("agent"), "nanoclaw");
        assert_eq!(col("turn_type"), "tool_use");
        assert_eq!(col("source_role"), "secondary");
        assert_eq!(col("text"), "ls");
        assert_eq!(col("x_id"), "msg-1");
        assert_eq!(col("x_call_source"), "cron");
        assert_eq!(col("x_meta"), "true");
        assert_eq!(col("source_line"), "3");
        assert_eq!(col("seq"), "7");
        Ok(())
    }
}
