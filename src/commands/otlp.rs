//! `nanoload otlp SOURCE [TRACES.jsonl] [--endpoint URL]`: the file, then
//! the POSTs; a summary on stderr.

use super::CommandError;
use crate::cli::OtlpArgs;
use crate::otlp::{self, Counts, Endpoint, Protocol, Trace};
use crate::source::LedgerAs;
use crate::summary::ExitCode;

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
    let read = super::outputs(
        &a.source,
        a.tables.as_deref(),
        a.keeping.no_keep,
        LedgerAs::Export,
    )?;
    let prices = priced.as_ref().map(|p| &p.table);
    let (traces, counts) = otlp::traces_of(&read.path, read.tables.as_deref(), &opts, prices)?;
    let spans = counts.turns + counts.chats + counts.tools;
    let what = format!(
        "{} traces, {spans} spans: {} turns, {} LLM calls, {} tool calls",
        counts.traces, counts.turns, counts.chats, counts.tools
    );
    if let Some(path) = &a.traces {
        otlp::write_jsonl(&traces, path).map_err(|source| CommandError::Traces {
            path: path.clone(),
            source,
        })?;
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
