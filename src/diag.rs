//! Diagnostics: everything a run could not read, or declares lost.
//!
//! One [`Diagnostic`] = one row of the `diagnostics` table and one line on
//! stderr (`nanoload: <kind>: <path>[:<line>]: <message>`). Read failures
//! (`bad_line`, `bad_record`, `unreadable`) and links to agent state that
//! were not followed (`skipped_link`) make the exit code 1; declared losses
//! and warnings do not (docs/design.md "Exit codes").

use std::fmt;
use std::sync::Arc;

use arrow::array::{ArrayRef, Int64Builder, StringBuilder};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::schema::Agent;

text_enum! {
    /// `diagnostics.kind`.
    DiagKind {
        /// Data known to be missing (a store deleted, evidence the agent never keeps).
        Loss = "loss",
        /// A line of a text store that does not decode.
        BadLine = "bad_line",
        /// A record or row of a database or JSON store that does not decode.
        BadRecord = "bad_record",
        /// A whole store (or file) that could not be read.
        Unreadable = "unreadable",
        /// A symlink to agent state that was not followed (out of HOME without
        /// `--follow-links`, or dangling).
        SkippedLink = "skipped_link",
        /// Read, but something is odd (a key that disagrees with its file name…).
        Warning = "warning",
    }
}

impl DiagKind {
    /// Whether this kind makes the run's exit code 1.
    pub fn is_read_failure(self) -> bool {
        matches!(
            self,
            DiagKind::BadLine | DiagKind::BadRecord | DiagKind::Unreadable | DiagKind::SkippedLink
        )
    }
}

text_enum! {
    /// `diagnostics.code`: what a loss or warning is, machine-readable — one
    /// list. Extractors name a code by this enum; the SQL steps spell it through
    /// the `diag_code('…')` macro, created from this list, which fails a step
    /// that names a code not on it (`steps::tests::every_diagnostic_code_of_the_steps_is_listed`).
    /// Declared in alphabetical order, so the derived order is the text's.
    DiagCode {
        /// A nanoclaw session folder with no row in the central catalog.
        CatalogRowMissing = "catalog_row_missing",
        /// A nanoclaw install with session folders and no `data/v2.db`
        /// (its central database elsewhere: `NANOCLAW_DB_URL`).
        CentralDbAbsent = "central_db_absent",
        /// A nanoclaw session's inbound.db missing beside its outbound.db.
        InboundMissing = "inbound_missing",
        /// nanoclaw records no relation between sessions.
        LineageUnknown = "lineage_unknown",
        /// A nanoclaw edit or reaction whose target matches more than one message.
        LinkTargetAmbiguous = "link_target_ambiguous",
        /// An llm_calls row whose local time no offset gives.
        LocalTimeUnknown = "local_time_unknown",
        /// What the model saw is not stored (nanoclaw).
        ModelRenderingAbsent = "model_rendering_absent",
        /// A nanobot JSONL namespace no workspace names.
        NamespaceUnresolved = "namespace_unresolved",
        /// A nanoclaw session's outbound.db missing beside its inbound.db.
        OutboundMissing = "outbound_missing",
        /// A model the price table does not price.
        PriceUnknown = "price_unknown",
        /// A nanoclaw answer that fits more than one question.
        QuestionLinkAmbiguous = "question_link_ambiguous",
        /// nanoclaw deletes answered questions.
        QuestionsDeleted = "questions_deleted",
        /// A nanoclaw route that differs from its session's.
        RouteMismatch = "route_mismatch",
        /// A nanobot session database with no session.
        SessionDbEmpty = "session_db_empty",
        /// A nanoclaw catalog row with no session folder.
        SessionFolderMissing = "session_folder_missing",
        /// nanoclaw state overwritten in place.
        StateWithoutHistory = "state_without_history",
        /// A nanoclaw session's Claude Code transcript missing.
        TranscriptMissing = "transcript_missing",
        /// A nanoclaw session whose transcripts hold no usage.
        UsageAbsent = "usage_absent",
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    pub source_path: String,
    pub source_line: Option<i64>,
    pub kind: DiagKind,
    pub agent: Option<Agent>,
    pub instance: Option<String>,
    pub message: String,
    /// The session the diagnostic concerns, when one does.
    pub session_id: Option<String>,
    /// What a loss or warning is ([`DiagCode`]).
    pub code: Option<DiagCode>,
}

impl Diagnostic {
    pub fn new(kind: DiagKind, source_path: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            kind,
            source_path: source_path.into(),
            source_line: None,
            agent: None,
            instance: None,
            message: one_line(&message.into()),
            session_id: None,
            code: None,
        }
    }

    pub fn line(mut self, line: i64) -> Self {
        self.source_line = Some(line);
        self
    }

    pub fn session(mut self, session_id: &str) -> Self {
        self.session_id = Some(session_id.to_string());
        self
    }

    pub fn code(mut self, code: DiagCode) -> Self {
        self.code = Some(code);
        self
    }

    pub fn of(mut self, agent: Agent, instance: &str) -> Self {
        self.agent = Some(agent);
        self.instance = Some(instance.to_string());
        self
    }

    /// The diagnostic as a JSON object (the incremental cache keeps a
    /// store's diagnostics this way); [`Diagnostic::from_json`] reads it back.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "source_path": self.source_path,
            "source_line": self.source_line,
            "kind": self.kind.as_str(),
            "agent": self.agent.map(Agent::as_str),
            "instance": self.instance,
            "message": self.message,
            "session_id": self.session_id,
            "code": self.code.map(DiagCode::as_str),
        })
    }

    /// A diagnostic written by [`Diagnostic::to_json`]; `None` if `v` is not one.
    pub fn from_json(v: &serde_json::Value) -> Option<Diagnostic> {
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(String::from);
        let agent = match v.get("agent")? {
            serde_json::Value::Null => None,
            a => Some(Agent::parse(a.as_str()?)?),
        };
        let source_line = match v.get("source_line")? {
            serde_json::Value::Null => None,
            n => Some(n.as_i64()?),
        };
        Some(Diagnostic {
            source_path: text("source_path")?,
            source_line,
            kind: DiagKind::parse(v.get("kind")?.as_str()?)?,
            agent,
            instance: text("instance"),
            message: text("message")?,
            session_id: text("session_id"),
            code: match v.get("code")? {
                serde_json::Value::Null => None,
                c => Some(DiagCode::parse(c.as_str()?)?),
            },
        })
    }
}

/// The losses nanoclaw's registry entry declares for every session they apply
/// to (`sql/V013__nanoclaw_losses.sql`): one `diagnostics` row per session
/// and code, but one stderr line per code (they are expected, not faults).
pub const DECLARED_LOSSES: [DiagCode; 5] = [
    DiagCode::ModelRenderingAbsent,
    DiagCode::LineageUnknown,
    DiagCode::StateWithoutHistory,
    DiagCode::QuestionsDeleted,
    DiagCode::UsageAbsent,
];

impl Diagnostic {
    /// Whether this is one of the [`DECLARED_LOSSES`].
    pub fn is_declared_loss(&self) -> bool {
        self.kind == DiagKind::Loss && self.code.is_some_and(|c| DECLARED_LOSSES.contains(&c))
    }
}

impl fmt::Display for Diagnostic {
    /// The stderr line: `<kind>: <path>[:<line>]: <message>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.source_path)?;
        if let Some(l) = self.source_line {
            write!(f, ":{l}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Collapse a message to one line (decoder errors may span several).
pub fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, part) in s.split(['\n', '\r']).filter(|p| !p.is_empty()).enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(part.trim());
    }
    out
}

pub fn diagnostics_schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("kind", DataType::Utf8, false),
        Field::new("agent", DataType::Utf8, true),
        Field::new("instance", DataType::Utf8, true),
        Field::new("source_path", DataType::Utf8, false),
        Field::new("source_line", DataType::Int64, true),
        Field::new("message", DataType::Utf8, false),
        Field::new("session_id", DataType::Utf8, true),
        Field::new("code", DataType::Utf8, true),
    ]))
}

pub fn diagnostics_batch(rows: &[Diagnostic]) -> Result<RecordBatch, ArrowError> {
    let mut kind = StringBuilder::new();
    let mut agent = StringBuilder::new();
    let mut instance = StringBuilder::new();
    let mut path = StringBuilder::new();
    let mut line = Int64Builder::new();
    let mut msg = StringBuilder::new();
    let mut session = StringBuilder::new();
    let mut code = StringBuilder::new();
    for d in rows {
        kind.append_value(d.kind.as_str());
        agent.append_option(d.agent.map(Agent::as_str));
        instance.append_option(d.instance.as_deref());
        path.append_value(&d.source_path);
        line.append_option(d.source_line);
        msg.append_value(&d.message);
        session.append_option(d.session_id.as_deref());
        code.append_option(d.code.map(DiagCode::as_str));
    }
    let cols: Vec<ArrayRef> = vec![
        Arc::new(kind.finish()),
        Arc::new(agent.finish()),
        Arc::new(instance.finish()),
        Arc::new(path.finish()),
        Arc::new(line.finish()),
        Arc::new(msg.finish()),
        Arc::new(session.finish()),
        Arc::new(code.finish()),
    ];
    RecordBatch::try_new(diagnostics_schema(), cols)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_kind_path_and_line_on_one_line() {
        let d = Diagnostic::new(
            DiagKind::BadLine,
            ".nanobot/a.jsonl",
            "EOF while parsing\n at col 3",
        )
        .line(10);
        assert_eq!(
            d.to_string(),
            "bad_line: .nanobot/a.jsonl:10: EOF while parsing at col 3"
        );
    }

    #[test]
    fn read_failures_and_skipped_links_change_the_exit_code() {
        assert!(DiagKind::BadLine.is_read_failure());
        assert!(DiagKind::Unreadable.is_read_failure());
        assert!(!DiagKind::Loss.is_read_failure());
        assert!(DiagKind::SkippedLink.is_read_failure());
        assert!(!DiagKind::Warning.is_read_failure());
    }
}
