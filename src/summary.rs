//! The summary: what a run did, its exit code, and the end-of-run report on
//! stderr.
//!
//! ```text
//! nanoload: 123 events, load_id 0123456789abcdef
//!   source kind                  stores rows read  rows out duplicates
//!   nanobot.session_jsonl             4       120       118          2
//!   dropped as duplicates: 2; bad lines: 0; …; links skipped: 0
//!          2 same record in the primary store
//!   took 0.42s; exit code 0
//! ```

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use crate::cache::CacheCounts;
use crate::diag::{DiagCode, DiagKind, Diagnostic};
use crate::discover::Discovery;
use crate::engine::{Counts, Totals};
use crate::extract::Extraction;
use crate::timings::Timings;

/// The process exit code (docs/design.md "Exit codes").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitCode {
    /// Every store read (declared losses and warnings allowed).
    Ok = 0,
    /// Output written, but some lines, records or stores could not be read,
    /// or a link to agent state out of HOME was not followed.
    Partial = 1,
    /// Nothing written.
    Failed = 2,
    /// Outputs partly replaced: a rename failed after the commit's checks
    /// passed and others had succeeded; stderr lists each output as `new`
    /// (this run's) or `old` (as before the run).
    PartlyReplaced = 3,
    /// Nothing written: HOME holds no store of either agent (the error says
    /// where nanoload looked).
    NoStores = 4,
    /// Nothing done: another `nanoload sync` is writing the ledger (its lock
    /// is held); a scheduler may try again later.
    Busy = 5,
}

impl ExitCode {
    /// The exit code of a run that wrote its output and found
    /// `diagnostics`: 1 when some line, record or store could not be read
    /// (or a link was not followed), else 0.
    pub fn of(diagnostics: &[crate::diag::Diagnostic]) -> ExitCode {
        if diagnostics.iter().any(|d| d.kind.is_read_failure()) {
            ExitCode::Partial
        } else {
            ExitCode::Ok
        }
    }
}

/// Counts per source kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KindCounts {
    pub stores: u64,
    pub rows_read: u64,
    pub rows_out: u64,
    pub duplicates: u64,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Summary {
    pub exit: ExitCode,
    pub load_id: String,
    pub kinds: BTreeMap<String, KindCounts>,
    pub events: u64,
    pub diagnostics: Vec<Diagnostic>,
    pub links_skipped: usize,
    pub elapsed: Duration,
    /// The wall and CPU time of each phase (`--timings`).
    pub timings: Timings,
    pub outputs: Vec<PathBuf>,
    /// Rows dropped as duplicates, per reason (docs/design.md "Dedup").
    pub drop_reasons: Vec<(String, u64)>,
    /// Secrets the scanner redacted, per rule (docs/design.md "Secrets").
    pub redactions: BTreeMap<String, u64>,
    /// How `--cache` was used.
    pub cache: Option<CacheCounts>,
    /// Sessions, calls, tokens, cost, first and last event.
    pub totals: Totals,
}

impl Summary {
    /// The stderr lines of the diagnostics: one per diagnostic, except the
    /// declared losses, one line per code with the number of sessions
    /// (`loss: usage_absent: 3 nanoclaw sessions (see diagnostics)`).
    /// `quiet` keeps only read failures.
    pub fn stderr_lines(&self, quiet: bool) -> Vec<String> {
        let mut declared: BTreeMap<&str, usize> = BTreeMap::new();
        let mut lines = Vec::new();
        for d in &self.diagnostics {
            if quiet && !d.kind.is_read_failure() {
                continue;
            }
            if d.is_declared_loss() {
                *declared
                    .entry(d.code.map_or("", DiagCode::as_str))
                    .or_default() += 1;
            } else {
                lines.push(format!("nanoload: {d}"));
            }
        }
        for (code, n) in declared {
            lines.push(format!(
                "nanoload: loss: {code}: {n} nanoclaw session{} (one diagnostics row each)",
                if n == 1 { "" } else { "s" }
            ));
        }
        lines
    }

    /// The summary of a finished run: stores and rows read per kind from
    /// extraction, rows out and dropped from the engine.
    pub fn new(
        load_id: String,
        discovery: &Discovery,
        extraction: &Extraction,
        counts: Counts,
        diagnostics: Vec<Diagnostic>,
        timings: Timings,
        outputs: Vec<PathBuf>,
    ) -> Summary {
        let mut kinds: BTreeMap<String, KindCounts> = BTreeMap::new();
        for (s, r) in discovery.stores.iter().zip(&extraction.reports) {
            let k = kinds.entry(s.kind.to_string()).or_default();
            k.stores += 1;
            k.rows_read += r.rows;
        }
        for (k, n) in counts.rows_out {
            kinds.entry(k).or_default().rows_out = n;
        }
        for (k, n) in counts.duplicates {
            kinds.entry(k).or_default().duplicates = n;
        }
        let mut redactions: BTreeMap<String, u64> = BTreeMap::new();
        for (rule, n) in extraction.reports.iter().flat_map(|r| &r.redactions) {
            *redactions.entry(rule.to_string()).or_default() += n;
        }
        let exit = ExitCode::of(&diagnostics);
        Summary {
            exit,
            load_id,
            kinds,
            events: counts.events,
            diagnostics,
            links_skipped: discovery.links_skipped,
            elapsed: timings.total,
            timings,
            outputs,
            drop_reasons: counts.drop_reasons,
            totals: counts.totals,
            redactions,
            cache: extraction.cache,
        }
    }

    /// The end summary as JSON (`--summary-json`; docs/design.md
    /// "Progress and summary"): the numbers of [`Summary::render`] and the
    /// `--timings` phases, one object, ending in a newline.
    pub fn json(&self) -> String {
        use serde_json::{Map, Value, json};
        let kinds: Map<String, Value> = (self.kinds.iter())
            .map(|(k, c)| {
                let v = json!({"stores": c.stores, "rows_read": c.rows_read,
                    "rows_out": c.rows_out, "duplicates": c.duplicates});
                (k.clone(), v)
            })
            .collect();
        let diagnostics: Map<String, Value> = DiagKind::ALL
            .iter()
            .map(|k| (k.as_str().to_string(), json!(self.count(*k))))
            .collect();
        let phases: Vec<Value> = (self.timings.phases.iter())
            .map(|p| {
                json!({"phase": p.name, "seconds": p.wall.as_secs_f64(),
                    "cpu_seconds": p.cpu.as_secs_f64()})
            })
            .collect();
        let mut totals = Map::new();
        totals.insert("sessions".into(), json!(self.totals.sessions));
        self.totals.calls.insert_json(&mut totals, "llm_calls");
        totals.insert(
            "cost_basis".into(),
            json!(self.totals.calls.cost_basis("no LLM calls")),
        );
        totals.insert("first_event_utc".into(), json!(self.totals.first_event_utc));
        totals.insert("last_event_utc".into(), json!(self.totals.last_event_utc));
        let mut v = json!({
            "version": crate::VERSION,
            "load_id": self.load_id,
            "exit_code": self.exit as i32,
            "events": self.events,
            "kinds": kinds,
            "duplicates": self.kinds.values().map(|c| c.duplicates).sum::<u64>(),
            "drop_reasons": self.drop_reasons.iter().cloned().collect::<BTreeMap<_, _>>(),
            "drop_reason_codes": self.drop_reason_codes(),
            "diagnostics": diagnostics,
            "links_skipped": self.links_skipped + self.count(DiagKind::SkippedLink),
            "redactions": self.redactions,
            "timings": {"phases": phases, "total_seconds": self.timings.total.as_secs_f64(),
                "total_cpu_seconds": self.timings.total_cpu.as_secs_f64()},
            "outputs": self.outputs.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
            "totals": totals,
        });
        if let (Some(p), Some(o)) = (self.timings.sql_plan, v.as_object_mut()) {
            let plan = json!({"chain": p.chain, "join": p.join, "step_threads": p.step_threads});
            o.insert("sql_plan".into(), plan);
        }
        if let (Some(c), Some(o)) = (self.cache, v.as_object_mut()) {
            // every store is cacheable: `not_cacheable` stays, 0, for the
            // programs that read the field from earlier summaries
            let cache = json!({"reused": c.reused, "extracted": c.extracted,
                "not_cacheable": 0});
            o.insert("cache".into(), cache);
        }
        let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
        s.push('\n');
        s
    }

    /// The rows dropped per stable code ([`DROP_REASONS`]): what a program
    /// reads instead of the prose of `drop_reasons`.
    pub fn drop_reason_codes(&self) -> BTreeMap<&'static str, u64> {
        let mut m = BTreeMap::new();
        for (reason, n) in &self.drop_reasons {
            *m.entry(drop_reason_code(reason)).or_insert(0) += n;
        }
        m
    }

    pub fn count(&self, kind: DiagKind) -> usize {
        self.diagnostics.iter().filter(|d| d.kind == kind).count()
    }

    /// The end-of-run summary for stderr.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "nanoload: {} events, load_id {}",
            self.events, self.load_id
        );
        let _ = writeln!(
            s,
            "  {:<28} {:>6} {:>9} {:>9} {:>10}",
            "source kind", "stores", "rows read", "rows out", "duplicates"
        );
        for (k, c) in &self.kinds {
            let _ = writeln!(
                s,
                "  {:<28} {:>6} {:>9} {:>9} {:>10}",
                k, c.stores, c.rows_read, c.rows_out, c.duplicates
            );
        }
        let dups: u64 = self.kinds.values().map(|c| c.duplicates).sum();
        let _ = writeln!(
            s,
            "  dropped as duplicates: {dups}; bad lines: {}; bad records: {}; unreadable: {}; losses: {}; warnings: {}; links skipped: {}",
            self.count(DiagKind::BadLine),
            self.count(DiagKind::BadRecord),
            self.count(DiagKind::Unreadable),
            self.count(DiagKind::Loss),
            self.count(DiagKind::Warning),
            self.links_skipped + self.count(DiagKind::SkippedLink),
        );
        for (reason, n) in &self.drop_reasons {
            let _ = writeln!(s, "    {n:>6} {reason}");
        }
        let redacted: u64 = self.redactions.values().sum();
        if redacted > 0 {
            let rules: Vec<String> = self
                .redactions
                .iter()
                .map(|(rule, n)| format!("{rule} {n}"))
                .collect();
            let _ = writeln!(s, "  secrets redacted: {redacted} ({})", rules.join(", "));
        }
        if let Some(c) = self.cache {
            let _ = writeln!(
                s,
                "  cache: {} stores reused, {} extracted",
                c.reused, c.extracted
            );
        }
        let _ = write!(
            s,
            "  took {:.2}s; exit code {}",
            self.elapsed.as_secs_f64(),
            self.exit as i32
        );
        s
    }
}

/// Every reason a step drops a row for (`dropped_rows.reason`, the prose of
/// `drop_reasons`) with its stable, machine-readable code (`--summary-json`
/// `drop_reason_codes`; docs/design.md "Dedup"). A reason no entry names
/// has the code `unlisted` (a test keeps this list complete).
pub const DROP_REASONS: [(&str, &str); 12] = [
    ("same record in the primary store", "record_in_primary"),
    (
        "same message in the primary store, rewritten there (same position, role and timestamp)",
        "message_rewritten_in_primary",
    ),
    (
        "session metadata of a copy; the primary store has the session",
        "session_metadata_in_primary",
    ),
    (
        "same record in an earlier secondary copy",
        "record_in_earlier_copy",
    ),
    (
        "same text in a session within 2 s (local time)",
        "text_in_session_within_2s",
    ),
    ("same text in the session turn", "text_in_session_turn"),
    (
        "same text in the session within 15 h (offset unknown)",
        "text_in_session_within_15h",
    ),
    (
        "same tool call in the session turn",
        "tool_call_in_session_turn",
    ),
    (
        "same tool call in the session within 15 h (offset unknown)",
        "tool_call_in_session_within_15h",
    ),
    (
        "copy of a Claude Code line another transcript file of the session holds",
        "claude_code_line_in_another_file",
    ),
    (
        "exchange archive copy of a message the transcript of its thread or the messages of its session hold",
        "archive_message_in_primary",
    ),
    (
        "exchange archive header of a thread whose transcript is read",
        "archive_header_in_primary",
    ),
];

/// The code of a drop reason ([`DROP_REASONS`]).
pub fn drop_reason_code(reason: &str) -> &'static str {
    DROP_REASONS
        .iter()
        .find(|(r, _)| *r == reason)
        .map_or("unlisted", |(_, c)| c)
}

#[cfg(test)]
mod drop_reason_tests {
    use super::DROP_REASONS;

    /// Every reason text the SQL steps give a dropped row has a code, and
    /// no two reasons share one. (A step names each reason `AS reason`;
    /// `progress::summary_json_equals_the_runs_own_tables` finds none
    /// `unlisted` on the fixtures.)
    #[test]
    fn every_drop_reason_of_the_steps_has_one_code() {
        let mut said = std::collections::BTreeSet::new();
        for (_, sql) in crate::steps::STEPS {
            // a reason: the quoted texts on a line ending in `AS reason`
            // and on the line before it (a CASE's THEN)
            let lines: Vec<&str> = sql.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                if !l.trim_end().ends_with("AS reason") {
                    continue;
                }
                for m in lines[i.saturating_sub(1)..=i]
                    .iter()
                    .flat_map(|l| l.split('\'').skip(1).step_by(2))
                {
                    said.insert(m.to_string());
                }
            }
        }
        let listed: std::collections::BTreeSet<String> =
            DROP_REASONS.iter().map(|(r, _)| r.to_string()).collect();
        assert_eq!(said, listed);
        let mut codes: Vec<&str> = DROP_REASONS.iter().map(|(_, c)| *c).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), DROP_REASONS.len());
    }
}
