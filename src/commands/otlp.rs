//! `nanoload otlp SOURCE [TRACES.jsonl] [--endpoint URL]`: the file, then
//! the POSTs; a summary on stderr.

use std::path::PathBuf;

use super::{CommandError, Keeping};
use crate::config::Pricing;
use crate::otlp::{self, Counts, Endpoint, Protocol, Trace};
use crate::source::LedgerAs;
use crate::summary::ExitCode;

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

pub fn run(a: OtlpArgs) -> Result<ExitCode, CommandError> {
    let endpoint =
        (a.endpoint.as_deref().map(Endpoint::parse).transpose()).map_err(CommandError::Endpoint)?;
    let headers = headers(&a.headers)?;
    let priced = a.pricing.at_read()?;
    let opts = otlp::Options {
        content: a.content,
        project: a.project.clone(),
        prices: priced.as_ref().map(|p| p.said.clone()),
    };
    let read = super::outputs(&a.source, a.tables.as_deref(), &a.keeping, LedgerAs::Export)?;
    let prices = priced.as_ref().map(|p| &p.table);
    let (traces, counts) = otlp::traces_of(&read.path, read.tables.as_deref(), &opts, prices)?;
    let spans = counts.turns + counts.chats + counts.tools;
    let what = format!(
        "{} traces, {spans} spans: {} turns, {} LLM calls, {} tool calls",
        counts.traces, counts.turns, counts.chats, counts.tools
    );
    if let Some(path) = &a.traces {
        otlp::write_jsonl(&traces, path).map_err(|e| CommandError::Traces(path.clone(), e))?;
        eprintln!("nanoload: traces written: {} ({what})", path.display());
    }
    left_out(&counts);
    if let Some(ep) = endpoint {
        send(&ep, &traces, &a, &headers)?;
        eprintln!("nanoload: traces sent: {} ({what})", ep.url);
    }
    Ok(ExitCode::Ok)
}

/// `--header NAME=VALUE`s as pairs.
fn headers(given: &[String]) -> Result<Vec<(String, String)>, CommandError> {
    let mut headers = Vec::new();
    for h in given {
        match h.split_once('=') {
            Some((k, v))
                if !k.trim().is_empty()
                    && !k.contains([':', '\r', '\n'])
                    && !v.contains(['\r', '\n']) =>
            {
                headers.push((k.trim().to_string(), v.to_string()))
            }
            _ => return Err(CommandError::Header),
        }
    }
    Ok(headers)
}

/// The lines that say what no span shows.
fn left_out(counts: &Counts) {
    let left_out = [
        (counts.untimed_turns, "turns without a UTC time"),
        (counts.untimed_tools, "tool calls without a UTC time"),
        (counts.untimed_calls, "LLM calls without a start time"),
    ];
    for (n, why) in left_out {
        if n > 0 {
            eprintln!("nanoload: left out: {n} {why} (a span needs an instant)");
        }
    }
    if counts.out_of_range_rows + counts.out_of_range_calls > 0 {
        eprintln!(
            "nanoload: left out: the instants of {} rows and {} LLM calls before 1970-01-01 or after 2554-07-21 (OTLP counts unsigned 64-bit nanoseconds from 1970): the rows count as untimed, the calls make no span",
            counts.out_of_range_rows, counts.out_of_range_calls
        );
    }
    if counts.sessionless_calls > 0 {
        eprintln!(
            "nanoload: {} LLM calls of no session: one trace per agent instance, without a turn",
            counts.sessionless_calls
        );
    }
}

/// Each trace POSTed to `ep`; the first failure ends the sending.
fn send(
    ep: &Endpoint,
    traces: &[Trace],
    a: &OtlpArgs,
    headers: &[(String, String)],
) -> Result<(), CommandError> {
    for t in traces {
        let body = match a.protocol {
            Protocol::Protobuf => otlp::to_protobuf(t),
            Protocol::Json => otlp::to_json(t).to_string().into_bytes(),
        };
        ep.post(&body, a.protocol, headers, a.timeout)
            .map_err(|source| CommandError::Send {
                url: ep.url.clone(),
                source,
                written: a.traces.is_some(),
            })?;
    }
    Ok(())
}
