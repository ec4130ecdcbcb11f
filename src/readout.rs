//! What every reader of nanoload's outputs shares, and the load's summary
//! with them: the SQL fragments over the outputs' tables, the quoting of
//! literals, and how numbers are written. A leaf: it imports no other
//! module of the crate, so the load's engine, the SOURCE opener
//! (`crate::source`) and every reader (`usage`, `report`, `sql`, `mcp`,
//! `otlp`) can all use it.
//!
//! ```text
//! SQL over llm_calls   CallSums::SQL (a group's sums), CALL_TOTAL_TOKENS, LOCAL_TIME
//! SQL over events      EVENT_TIME, ACTIVITY (what counts as activity), TOOL_ERROR
//!                      (and tool_error: the same rule in Rust, as a load writes it)
//! literals             sql_text ('…'), sql_str (a path), ident ("…")
//! numbers              thousands (1,234,567), dollars ($0.0042), share (19 %)
//! dates given           parse_date (YYYY-MM-DD or YYYYMMDD)
//! ```

use std::path::Path;

/// A string as an SQL literal (`'` doubled): the one quoting every
/// module uses ([`sql_str`] for paths).
pub fn sql_text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// A path as a SQL string literal.
pub fn sql_str(p: &Path) -> String {
    sql_text(&p.to_string_lossy())
}

/// A SQL identifier, quoted.
pub fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// A text that is no date a reader takes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is no date: give YYYY-MM-DD (or YYYYMMDD)")]
pub struct DateError(pub String);

/// A date a reader is given (`--since`, `--until`, the MCP tools'
/// `since`, `until`): `YYYY-MM-DD` or `YYYYMMDD`.
pub fn parse_date(s: &str) -> Result<chrono::NaiveDate, DateError> {
    use chrono::NaiveDate;
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .or_else(|_| NaiveDate::parse_from_str(s, "%Y%m%d"))
        .map_err(|_| DateError(s.to_string()))
}

/// Thousands separated: 1,234,567.
pub fn thousands(n: i64) -> String {
    let s = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// USD to cents; below a cent to two significant digits ($0.0042).
pub fn dollars(cost: &str) -> String {
    let Ok(v) = cost.parse::<f64>() else {
        return cost.to_string();
    };
    if v == 0.0 || v.abs() >= 0.01 {
        let cents = format!("{:.2}", v.abs());
        let (whole, frac) = cents.split_once('.').unwrap_or((&cents, "00"));
        let whole = thousands(whole.parse::<i64>().unwrap_or(0));
        return format!("{}${whole}.{frac}", if v < 0.0 { "-" } else { "" });
    }
    let mut d = 3;
    while d < 8 && v.abs() * 10f64.powi(d) < 10.0 {
        d += 1;
    }
    format!("${:.*}", d as usize, v)
}

/// A call's local time, by the offsets the load derived; its UTC time
/// where its instance has none (the report's days place calls alike).
pub const LOCAL_TIME: &str = "coalesce(started_at_local, make_timestamp(started_at_ms * 1000))";

/// An event's time: local, the UTC time where no offset is known (nanoclaw
/// stores UTC only; a call's day is placed the same way, the report's `call_day`).
pub const EVENT_TIME: &str = "coalesce(timestamp_local, CAST(timestamp_utc AS TIMESTAMP))";

/// The hint nanobot 0.3.5 appends to every failed tool call's result
/// (`agent/tools/execution.py` `_RETRY_HINT`).
macro_rules! retry_hint {
    () => {
        "[Analyze the error above and try a different approach.]"
    };
}

/// A tool result that reports a failure: nanoclaw's Claude Code
/// `tool_result.is_error`; nanobot's WebUI `error` phase, and nanobot's
/// retry hint, which nanobot 0.3.5 appends to every failed call's result
/// (`agent/tools/execution.py` `_RETRY_HINT`). The rule over a row's text
/// and native: a load writes it once per `tool_result` row as
/// `events.tool_error` ([`tool_error`], the same rule in Rust), and a
/// reader takes that column ([`tool_error_sql`]); this expression is for an
/// OUT written before the column.
pub const TOOL_ERROR: &str = concat!(
    "CASE WHEN agent = 'nanoclaw'
        THEN coalesce(TRY_CAST(json_extract(native, '$.is_error') AS BOOLEAN), false)
        ELSE coalesce(json_extract_string(native, '$.phase') = 'error', false)
             OR coalesce(ends_with(text, '",
    retry_hint!(),
    "'), false)
    END"
);

/// Whether a tool result's row says it failed, as [`TOOL_ERROR`] says it
/// over the same text and native (`nanoclaw`: the row's agent). A native
/// that is not a JSON object holds no field that says so.
pub fn tool_error(nanoclaw: bool, text: Option<&str>, native: Option<&str>) -> bool {
    /// The two fields the rule reads; the rest of a native is skipped
    /// unparsed.
    #[derive(serde::Deserialize)]
    struct Fields {
        is_error: Option<serde_json::Value>,
        phase: Option<serde_json::Value>,
    }
    // most natives name neither field: no parse for them
    let fields = |key: &str| {
        native
            .filter(|n| n.contains(key))
            .and_then(|n| serde_json::from_str::<Fields>(n).ok())
    };
    if nanoclaw {
        // TRY_CAST of a JSON value to BOOLEAN, as DuckDB casts it
        return match fields("\"is_error\"").and_then(|f| f.is_error) {
            Some(serde_json::Value::Bool(b)) => b,
            Some(serde_json::Value::Number(n)) => n.as_f64().is_some_and(|v| v != 0.0),
            Some(serde_json::Value::String(s)) => matches!(
                s.to_ascii_lowercase().as_str(),
                "true" | "t" | "1" | "y" | "yes"
            ),
            _ => false,
        };
    }
    let phase = fields("\"phase\"")
        .and_then(|f| f.phase)
        .is_some_and(|p| p.as_str() == Some("error"));
    phase || text.is_some_and(|t| t.ends_with(retry_hint!()))
}

/// The SQL of whether an `events` row's tool result failed: its
/// `tool_error` column where the OUT has it (`has_column`), else the rule
/// over text and native ([`TOOL_ERROR`]), which decodes every tool
/// result's text.
pub fn tool_error_sql(has_column: bool) -> &'static str {
    if has_column {
        "coalesce(tool_error, false)"
    } else {
        TOOL_ERROR
    }
}

/// Events that are something the agent or a user did: every row but
/// standing state — nanobot's permission settings (`config.json` and
/// `pairing.json`, dated by the file's mtime or a code's creation), and a
/// nanoclaw install's catalog rows of no session (agent groups, users,
/// destinations, schema versions: when the install was set up) and its
/// install marker. Activity, the first and the last event are counted over
/// these (docs/design.md "Totals and activity").
pub const ACTIVITY: &str = "(source_kind NOT IN ('nanobot.permissions', 'nanoclaw.upgrade_state')
        AND NOT (source_kind = 'nanoclaw.catalog' AND session_uid IS NULL))";

/// Sums over LLM calls (`llm_calls` rows): the TOTAL of `nanoload usage`
/// and of `--summary-json`. A token sum no call reported is `None`; the cost
/// is the priced calls' exact sum (6 places), `None` when no call is priced.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallSums {
    pub calls: i64,
    pub input_tokens: Option<i64>,
    pub output_tokens: Option<i64>,
    pub cache_read_tokens: Option<i64>,
    pub cache_write_tokens: Option<i64>,
    pub total_tokens: Option<i64>,
    pub cost_usd: Option<String>,
    pub unpriced_calls: i64,
}

/// A call's total tokens: the source's `total_tokens`, or input + output
/// where it has none (NULL, or 0 beside counted tokens: a store that never
/// filled the column in), so a sum of totals never shows 0 beside millions
/// of input tokens.
macro_rules! call_total_tokens {
    () => {
        "CASE WHEN total_tokens > 0
            OR coalesce(input_tokens, 0) + coalesce(output_tokens, 0) = 0 THEN total_tokens
            ELSE coalesce(input_tokens, 0) + coalesce(output_tokens, 0) END"
    };
}

/// [`call_total_tokens`] as SQL over an `llm_calls` row.
pub const CALL_TOTAL_TOKENS: &str = call_total_tokens!();

impl CallSums {
    /// The aggregates, in field order, over a group of `llm_calls` rows.
    pub const SQL: &str = concat!(
        "count(*), CAST(sum(input_tokens) AS BIGINT),
        CAST(sum(output_tokens) AS BIGINT), CAST(sum(cache_read_tokens) AS BIGINT),
        CAST(sum(cache_write_tokens) AS BIGINT), CAST(sum(",
        call_total_tokens!(),
        ") AS BIGINT),
        CAST(CAST(round(sum(cost_usd::DECIMAL(38, 12)), 6) AS DECIMAL(38, 6)) AS VARCHAR),
        count(*) FILTER (WHERE cost_usd IS NULL)"
    );

    /// The calls with a price.
    pub fn priced_calls(&self) -> i64 {
        self.calls - self.unpriced_calls
    }

    /// What the cost is of, after its amount: `of 26 priced calls; 6
    /// unpriced (19 %)`, `all 32 calls priced`, `none of 13 calls priced`;
    /// empty without calls.
    pub fn priced_part(&self) -> String {
        let (calls, unpriced) = (self.calls, self.unpriced_calls);
        let n = thousands;
        if calls == 0 {
            String::new()
        } else if unpriced == 0 {
            format!("all {} {} priced", n(calls), plural(calls, "call", "calls"))
        } else if unpriced == calls {
            format!(
                "none of {} {} priced",
                n(calls),
                plural(calls, "call", "calls")
            )
        } else {
            format!(
                "of {} priced {}; {} unpriced ({})",
                n(self.priced_calls()),
                plural(self.priced_calls(), "call", "calls"),
                n(unpriced),
                share(unpriced, calls)
            )
        }
    }

    /// The cost and what it is of: `$0.29 of 26 priced calls; 6 unpriced
    /// (19 %)`, `$0.31, all 32 calls priced`, `unknown: none of 13 calls
    /// priced`; `none` (`no LLM calls`, `no calls in range`) without calls.
    pub fn cost_basis(&self, none: &str) -> String {
        let part = self.priced_part();
        match self.cost_usd.as_deref() {
            _ if self.calls == 0 => none.to_string(),
            None => format!("unknown: {part}"),
            Some(c) if self.unpriced_calls == 0 => format!("{}, {part}", dollars(c)),
            Some(c) => format!("{} {part}", dollars(c)),
        }
    }

    /// The sums as fields of `m`, the number of calls under `calls` (usage
    /// rows: `calls`; `--summary-json`: `llm_calls`), the cost as a number,
    /// a sum nothing reported as null.
    pub fn insert_json(&self, m: &mut serde_json::Map<String, serde_json::Value>, calls: &str) {
        use serde_json::json;
        m.insert(calls.into(), json!(self.calls));
        m.insert("input_tokens".into(), json!(self.input_tokens));
        m.insert("output_tokens".into(), json!(self.output_tokens));
        m.insert("cache_read_tokens".into(), json!(self.cache_read_tokens));
        m.insert("cache_write_tokens".into(), json!(self.cache_write_tokens));
        m.insert("total_tokens".into(), json!(self.total_tokens));
        let cost = (self.cost_usd.as_deref()).and_then(|c| c.parse::<f64>().ok());
        m.insert("cost_usd".into(), json!(cost));
        m.insert("unpriced_calls".into(), json!(self.unpriced_calls));
        m.insert("priced_calls".into(), json!(self.priced_calls()));
    }

    /// The sums of [`CallSums::SQL`] from column `at` of `r` on.
    #[cfg(feature = "engine")]
    pub fn read(r: &duckdb::Row, at: usize) -> duckdb::Result<CallSums> {
        Ok(CallSums {
            calls: r.get(at)?,
            input_tokens: r.get(at + 1)?,
            output_tokens: r.get(at + 2)?,
            cache_read_tokens: r.get(at + 3)?,
            cache_write_tokens: r.get(at + 4)?,
            total_tokens: r.get(at + 5)?,
            cost_usd: r.get(at + 6)?,
            unpriced_calls: r.get(at + 7)?,
        })
    }
}

fn plural<'a>(n: i64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// `part` of `all` as a whole percentage (`19 %`), never `0 %` for a part
/// there is nor `100 %` for one short of all (`<1 %`, `>99 %`).
pub fn share(part: i64, all: i64) -> String {
    if all <= 0 {
        return "-".into();
    }
    let p = (100.0 * part as f64 / all as f64).round() as i64;
    match p {
        0 if part > 0 => "<1 %".into(),
        100 if part < all => ">99 %".into(),
        p => format!("{p} %"),
    }
}

#[cfg(all(test, feature = "engine"))]
mod tests {
    /// [`super::tool_error`] says what [`super::TOOL_ERROR`] says in DuckDB
    /// over the same agent, text and native, for each shape of the fields
    /// the rule reads.
    #[test]
    fn the_rust_rule_says_what_the_sql_rule_says() -> Result<(), duckdb::Error> {
        let hint = "[Analyze the error above and try a different approach.]";
        let failed = format!("Error: no such file\n\n{hint}");
        let cases: Vec<(&str, Option<&str>, Option<&str>)> = vec![
            ("nanoclaw", None, Some(r#"{"is_error":true}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":false}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":"true"}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":"no"}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":1}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":0}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":null}"#)),
            ("nanoclaw", None, Some(r#"{"is_error":[true]}"#)),
            ("nanoclaw", None, Some(r#"{"other":{"is_error":true}}"#)),
            ("nanoclaw", Some(failed.as_str()), None),
            ("nanoclaw", None, Some(r#"{"phase":"error"}"#)),
            ("nanobot", None, Some(r#"{"phase":"error"}"#)),
            ("nanobot", None, Some(r#"{"phase":"done"}"#)),
            ("nanobot", None, Some(r#"{"phase":1}"#)),
            ("nanobot", None, Some(r#"{"is_error":true}"#)),
            ("nanobot", Some(failed.as_str()), None),
            (
                "nanobot",
                Some(failed.as_str()),
                Some(r#"{"phase":"done"}"#),
            ),
            ("nanobot", Some(&failed[..failed.len() - 1]), None),
            (
                "nanobot",
                Some("fine"),
                Some(r#"{"text":"\"phase\": \"error\""}"#),
            ),
            ("nanobot", None, None),
        ];
        let conn = duckdb::Connection::open_in_memory()?;
        for (agent, text, native) in cases {
            let sql = format!(
                "SELECT {} FROM (SELECT ?::VARCHAR AS agent, ?::VARCHAR AS text, ?::VARCHAR AS native)",
                super::TOOL_ERROR
            );
            let want: bool =
                conn.query_row(&sql, duckdb::params![agent, text, native], |r| r.get(0))?;
            let got = super::tool_error(agent == "nanoclaw", text, native);
            assert_eq!(got, want, "{agent} {text:?} {native:?}");
        }
        Ok(())
    }
}
