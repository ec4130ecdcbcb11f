//! The extractors' API: the one module every extractor depends on.
//!
//! ```text
//! sources::REGISTRY ── one [`Extractor`] per store kind: globs, role rule, SQL traits, fn
//!        │
//! discover ──▶ [`Store`] (files, instance, role) ──▶ extract (rayon): (extractor.extract)(&mut StoreOutput)
//!                                                       │ push(EventRow)   fills agent, instance, kind,
//!                                                       │                  path and role from the Store
//!                                                       │ push_llm(LlmCallRow), diag(…)
//!                                                       ▼
//!                                              [`RowWriter`] (the stage: Parquet per kind)
//! ```
//! The stage implements [`RowWriter`] (its errors as a [`WriteError`]'s
//! source); this module never names it.
//! An extractor returns `Err(StoreError)` only when the whole store (or the
//! rest of it) cannot be read; rows pushed before that are kept.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use regex::Regex;

use crate::diag::{DiagKind, Diagnostic};
use crate::schema::{Agent, EventRow, LlmCallRow, Role, TurnType, native_json};
use crate::secrets::{Counts, Scanner};
use crate::snapshot::{Snapshot, open_snapshot};

/// Whether a glob names a store, or a further file of a store (whose main
/// path the function computes).
#[derive(Clone, Copy)]
pub enum GlobPart {
    Store,
    PartOf(fn(&str) -> String),
}

pub struct Glob {
    pub pattern: &'static str,
    pub part: GlobPart,
    /// Extra test on a matched path (`rel`, HOME), e.g. "the directory is a workspace".
    pub accept: Option<fn(&str, &Path) -> bool>,
}

/// Decides a store's role from its path (relative to HOME), HOME, and every
/// discovered store path.
pub type RoleFn = fn(&str, &Path, &BTreeSet<String>) -> Role;

pub struct Extractor {
    /// `source_kind` of its rows.
    pub kind: &'static str,
    pub agent: Agent,
    pub globs: &'static [Glob],
    /// The role of its stores' rows.
    pub role: StoreRole,
    /// What the SQL steps need to know about the kind (the `kinds` table).
    pub traits: KindTraits,
    /// What its rows depend on besides the store's own files: the
    /// incremental cache (`--cache`, [`crate::cache`]) keys on it.
    pub reads: Reads,
    pub extract: fn(&mut StoreOutput<'_>) -> Result<(), StoreError>,
}

/// The files a store's rows depend on besides its own (main file, parts,
/// sidecars), declared once per kind. The role is always part of the cache
/// key, so the paths that decide it need not be listed. No kind's rows
/// depend on another store: what stores say of each other (a nanoclaw
/// session's sibling database, its transcript, its install's version) the
/// SQL steps derive from `sources` and the rows, so every store can be kept
/// by `--cache` and passed over by `sync` while its files are unchanged.
#[derive(Clone, Copy)]
pub enum Reads {
    /// Only its own files.
    Own,
    /// Also these files (paths relative to HOME, from the store's path and
    /// HOME); a listed file that does not exist counts as absent.
    Also(fn(&str, &Path) -> Vec<String>),
}

/// How a store kind's role is decided (`events.source_role`, docs/design.md
/// "Dedup"): declared once here; every row of the store takes it.
#[derive(Clone, Copy)]
pub enum StoreRole {
    /// Always this role.
    Fixed(Role),
    /// Decided per store from its path (relative to HOME), HOME, and every
    /// discovered store path.
    ByPath(RoleFn),
}

/// What the SQL steps know about a kind: one row of the `kinds` table the
/// engine creates from the registry before the first step, so no step
/// spells a kind's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindTraits {
    /// A nanobot session store (`db` or `jsonl` layout): a session's
    /// messages with their turn order; its primary copy is the store of record.
    pub session_store: Option<SessionLayout>,
    /// The agent's own store of a session's messages: a session with no
    /// primary row in such a store survives only in copies (`sessions.in_primary_store`).
    pub message_store: bool,
    /// A secondary copy of session turns, matched turn by turn: `webui` (a
    /// transcript, turns by `turn_id`) or `run` (one run record per turn).
    pub turn_copy: Option<TurnCopy>,
    /// A secondary copy of user prompts, matched by text and local time (CLI history).
    pub prompt_copy: bool,
    /// A nanoclaw store: `catalog`, `inbound`, `outbound`, `transcript`,
    /// `archive` (a secondary copy of a thread's exchanges) or `marker`.
    pub nanoclaw: Option<NanoclawPart>,
}

text_enum! {
    /// A nanobot session store's layout (`kinds.session_store`). The trait
    /// values are spelled in SQL as their text; every value a step compares
    /// a trait with is listed
    /// (`steps::tests::every_trait_value_the_steps_compare_is_listed`).
    SessionLayout { Db = "db", Jsonl = "jsonl" }
}

text_enum! {
    /// A secondary copy of session turns (`kinds.turn_copy`).
    TurnCopy { Webui = "webui", Run = "run" }
}

text_enum! {
    /// Which of a nanoclaw install's stores (`kinds.nanoclaw`).
    NanoclawPart {
        Catalog = "catalog",
        Inbound = "inbound",
        Outbound = "outbound",
        Transcript = "transcript",
        Archive = "archive",
        Marker = "marker",
    }
}

/// The traits of a kind the SQL steps treat like any other row.
pub const PLAIN: KindTraits = KindTraits {
    session_store: None,
    message_store: false,
    turn_copy: None,
    prompt_copy: false,
    nanoclaw: None,
};

/// One file of a store, with what `load_id` and `sources` need.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct FileInfo {
    /// Path relative to HOME, `/`-separated.
    pub rel: String,
    pub abs: PathBuf,
    pub bytes: u64,
    pub mtime_ns: i128,
}

/// A store: the unit one extractor task reads.
#[derive(Debug, Clone)]
pub struct Store {
    /// Index into [`crate::sources::REGISTRY`].
    pub extractor: usize,
    pub kind: &'static str,
    pub agent: Agent,
    /// `.nanobot`, `.nanobot-work`, or the nanoclaw install root (`.` for HOME).
    pub instance: String,
    /// The store's main path relative to HOME (the `sources.source_path`).
    pub rel: String,
    pub abs: PathBuf,
    pub role: Role,
    /// Whether the main file itself exists (a WebUI transcript may survive
    /// only in its segments).
    pub present: bool,
    pub bytes: u64,
    pub mtime_ns: i128,
    /// Further files read with it, in read order (WebUI segments).
    pub parts: Vec<FileInfo>,
    /// Sidecars that change its content (`-wal`, `-journal`): they enter `load_id`.
    pub sidecars: Vec<FileInfo>,
}

impl Store {
    /// Every file of the store, for `load_id`.
    pub fn files(&self) -> impl Iterator<Item = (&str, u64, i128)> {
        let main = self
            .present
            .then_some((self.rel.as_str(), self.bytes, self.mtime_ns));
        main.into_iter()
            .chain(
                self.parts
                    .iter()
                    .map(|f| (f.rel.as_str(), f.bytes, f.mtime_ns)),
            )
            .chain(
                self.sidecars
                    .iter()
                    .map(|f| (f.rel.as_str(), f.bytes, f.mtime_ns)),
            )
    }
}

/// Where a [`StoreOutput`] sends full batches: the stage in a run, a plain
/// collector in a test.
pub trait RowWriter: Sync {
    /// Rows of one kind, each with its `native` serialized ([`native_json`]).
    fn write_events(
        &self,
        kind: &'static str,
        rows: &[EventRow],
        natives: &[Option<String>],
    ) -> Result<(), WriteError>;
    fn write_llm_calls(&self, rows: &[LlmCallRow]) -> Result<(), WriteError>;
    /// `bytes` more of the store were read (`--progress`); nothing by
    /// default.
    fn read_bytes(&self, _bytes: u64) {}
}

/// Why a [`RowWriter`] could not take rows: the writer's own error (the
/// stage's, in a run), kept as the source. It ends the whole load, so no
/// caller looks inside.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct WriteError(#[source] Box<dyn std::error::Error + Send + Sync>);

impl WriteError {
    pub fn new(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> WriteError {
        WriteError(e.into())
    }
}

/// Rows per staged batch, and the text bytes that flush a batch early: the
/// most any store holds in memory at once (one huge line is one row).
pub const BATCH: usize = 4096;
pub const BATCH_BYTES: usize = 16 << 20;

/// The dedup key of a text: the text itself when short and free of
/// secrets, else its digest (equal texts give equal keys; the steps never
/// hold a text twice, and a staged or cached key never holds a secret the
/// scanner finds: docs/design.md "Secrets").
pub fn match_key(text: String, scanner: Option<&Scanner>, keys: KeyDigest) -> String {
    if text.len() <= 72 && scanner.is_none_or(|s| s.find(&text).is_empty()) {
        return text;
    }
    keys.text(&text)
}

/// How the dedup keys that are digests (`x_record`, the `x_match` of a long
/// text or one holding a secret) are taken. Both are one-way: a key stands
/// for a record or text that may hold a secret (docs/design.md "Secrets").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeyDigest {
    /// The first 16 bytes of the SHA-256 of the bytes' XXH3-128: XXH3
    /// reads a byte in a few tenths of a cycle, SHA-256 takes about two
    /// even on the CPU's SHA instructions (a twentieth of extraction), and
    /// the SHA-256 of its 16 bytes keeps the key one-way (XXH3 alone is not
    /// built to be). A text's key is `h:` and 32 hex digits.
    #[default]
    Fast,
    /// SHA-256 of the bytes themselves, as every build before the fast keys
    /// staged: `nanoload sync` takes these, as a ledger keeps the keys in
    /// each row's identity (`row_key`, docs/design.md "Ledger") and a
    /// ledger written by an earlier build must see its rows again, not new
    /// ones. A text's key is `sha256:` and 64 hex digits.
    Sha256,
}

impl KeyDigest {
    /// A record's key (`x_record`): 32 hex digits.
    pub fn record(self, bytes: &[u8]) -> String {
        use sha2::Digest;
        match self {
            KeyDigest::Fast => {
                let fast = twox_hash::XxHash3_128::oneshot(bytes).to_le_bytes();
                hex(&sha2::Sha256::digest(fast)[..16])
            }
            KeyDigest::Sha256 => hex(&sha2::Sha256::digest(bytes)[..16]),
        }
    }

    /// The key of a text that is not its own key ([`match_key`]).
    pub fn text(self, text: &str) -> String {
        use sha2::Digest;
        match self {
            KeyDigest::Fast => format!("h:{}", self.record(text.as_bytes())),
            KeyDigest::Sha256 => format!("sha256:{}", hex(&sha2::Sha256::digest(text.as_bytes()))),
        }
    }
}

/// A row's content as read — its text and serialized native before any
/// redaction — as 32 hex digits (the first 16 bytes of a BLAKE3 of both,
/// each present or absent and length-prefixed): `x_content`, the content in
/// a ledger row's identity. One-way, as the dedup keys are: it stands for a
/// text that may hold a secret (docs/design.md "Secrets").
pub fn content_digest(text: Option<&str>, native: Option<&str>) -> String {
    let mut h = blake3::Hasher::new();
    for part in [text, native] {
        match part {
            None => {
                h.update(&[0]);
            }
            Some(p) => {
                h.update(&[1]);
                h.update(&(p.len() as u64).to_le_bytes());
                h.update(p.as_bytes());
            }
        }
    }
    hex(&h.finalize().as_bytes()[..16])
}

/// Lower-case hex of `bytes` (digests: dedup keys, load ids, cache keys).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 15)] as char);
    }
    out
}

/// Options that change what extractors emit.
#[derive(Debug, Clone, Default)]
pub struct ExtractOptions {
    /// Emit WebUI `reasoning_end` records as `thinking` rows.
    pub include_thinking: bool,
    /// Extra secret shapes (`--secret-pattern`), searched anywhere in a value.
    pub secret_patterns: Vec<Regex>,
    /// The secret scanner every row's text and `native` strings pass
    /// through before staging; `None` with `--no-redact`.
    pub scanner: Option<Scanner>,
    /// Stage every row's text and native in the staged columns, none in a
    /// blob file (`nanoload sync`: the ledger keeps them; src/ledger/).
    pub stage_all_wide: bool,
    /// How the dedup keys are digested (`nanoload sync`: as earlier builds did).
    pub keys: KeyDigest,
    /// Stage each row's [`content_digest`] as `x_content` (`nanoload sync`:
    /// the row's content in its ledger identity).
    pub content_digests: bool,
}

/// A store that could not be read (or not read to its end).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{0}")]
    Unreadable(String),
    #[error("staging failed: {0}")]
    Stage(#[from] WriteError),
}

impl StoreError {
    pub fn io(what: &str, e: std::io::Error) -> StoreError {
        StoreError::Unreadable(format!("{what}: {e}"))
    }
}

/// Per-store result for the `sources` table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreReport {
    pub rows: u64,
    pub status: &'static str,
    pub diagnostics: Vec<Diagnostic>,
    /// The largest row (text + native bytes) the store yielded.
    pub max_row_bytes: usize,
    /// Set when staging itself failed: the run must stop (exit 2).
    pub fatal: Option<String>,
    /// Secrets redacted per rule.
    pub redactions: Counts,
}

/// What an extractor writes to.
pub struct StoreOutput<'a> {
    pub store: &'a Store,
    pub home: &'a Path,
    pub options: &'a ExtractOptions,
    /// A private directory for this store's scratch files (SQLite snapshots).
    pub scratch: PathBuf,
    rows_to: &'a dyn RowWriter,
    buf: Vec<EventRow>,
    /// `native` of each row of `buf`, serialized once.
    natives: Vec<Option<String>>,
    buf_bytes: usize,
    max_row_bytes: usize,
    llm: Vec<LlmCallRow>,
    rows: u64,
    diagnostics: Vec<Diagnostic>,
    redactions: Counts,
    /// The bytes [`StoreOutput::read_to`] has told `--progress` of.
    read_reported: u64,
    /// Found and deliberately not read ([`StoreOutput::skip`]).
    skipped: bool,
}

impl<'a> StoreOutput<'a> {
    pub fn new(
        store: &'a Store,
        home: &'a Path,
        options: &'a ExtractOptions,
        rows_to: &'a dyn RowWriter,
        scratch: PathBuf,
    ) -> Self {
        StoreOutput {
            store,
            home,
            options,
            scratch,
            rows_to,
            buf: Vec::new(),
            natives: Vec::new(),
            buf_bytes: 0,
            max_row_bytes: 0,
            llm: Vec::new(),
            rows: 0,
            diagnostics: Vec::new(),
            redactions: Counts::new(),
            read_reported: 0,
            skipped: false,
        }
    }

    /// The store is listed in `sources` but deliberately not read: its status
    /// is `skipped` (unless reading what it is failed).
    pub fn skip(&mut self) {
        self.skipped = true;
    }

    /// The store's private SQLite copy (the database with its `-wal`,
    /// `-shm`, `-journal`), opened read-only in this store's scratch dir.
    pub fn snapshot(&self) -> Result<Snapshot, StoreError> {
        // created on first use: most stores never need one
        std::fs::create_dir_all(&self.scratch)
            .map_err(|e| StoreError::Unreadable(format!("cannot create scratch directory: {e}")))?;
        open_snapshot(&self.store.abs, &self.scratch, &|n| {
            self.rows_to.read_bytes(n)
        })
        .map_err(|e| StoreError::Unreadable(e.to_string()))
    }

    /// The store has been read up to byte `offset` of its file (a line
    /// reader's position): `--progress` counts it, in steps of 1 MiB or
    /// more.
    pub fn read_to(&mut self, offset: u64) {
        if offset >= self.read_reported + (1 << 20) {
            self.rows_to.read_bytes(offset - self.read_reported);
            self.read_reported = offset;
        }
    }

    /// Add a row; the store's identity fills what the row leaves empty.
    pub fn push(&mut self, mut row: EventRow) -> Result<(), StoreError> {
        row.agent.get_or_insert(self.store.agent);
        if row.instance.is_empty() {
            row.instance.clone_from(&self.store.instance);
        }
        if row.source_kind.is_empty() {
            row.source_kind = self.store.kind;
        }
        // the role is the store's (registry `role`, decided at discovery);
        // an extractor sets it only for a row that differs from its store
        row.source_role.get_or_insert(self.store.role);
        if row.source_path.is_empty() {
            row.source_path.clone_from(&self.store.rel);
        }
        // secrets leave before staging; the dedup keys (x_match, below, and
        // x_record) are taken from the original, so copies of one text still
        // pair: x_record is a hash, x_match a hash wherever it holds a secret
        let mut native = row.native.as_ref().map(native_json);
        // the ledger's identity of the row: its content as read, whatever
        // the scanner makes of it
        if self.options.content_digests {
            row.x_content = Some(content_digest(row.text.as_deref(), native.as_deref()));
        }
        // whether the scanner left the text as it was (an x_match equal to
        // it then holds no secret either: no second scan, below)
        let mut text_kept = true;
        // the key of a row whose x_match is its text (`x_match_text`), when
        // that text held a secret: the digest of the text as read
        let mut secret_key = None;
        if let Some(scanner) = &self.options.scanner {
            if let Some(text) = row.text.as_mut()
                && let Some(redacted) = scanner.redact(text, &mut self.redactions)
            {
                if row.x_match_text {
                    secret_key = Some(self.options.keys.text(text));
                }
                *text = redacted;
                text_kept = false;
            }
            // one pass over the serialized value rules out most natives;
            // only the rest are walked, and made again where they changed
            if let (Some(m), Some(json)) = (row.native.as_mut(), native.as_mut())
                && scanner.redact_native(m, json, &mut self.redactions)
            {
                *json = native_json(m);
            }
        }
        // nanoclaw's credential fields, redacted by allow-list in its content
        // mapper, are counted with the scanner's redactions
        if row.agent == Some(Agent::Nanoclaw) {
            let marker = crate::secrets::FIELD_MARKER;
            let n = [row.text.as_deref(), native.as_deref()]
                .into_iter()
                .flatten()
                .map(|t| t.matches(marker).count() as u64)
                .sum::<u64>();
            if n > 0 {
                *self
                    .redactions
                    .entry(crate::secrets::FIELD_RULE)
                    .or_default() += n;
            }
        }
        row.x_match = match row.turn_type {
            // tool rows pair on tool_use_id; their text is not a key
            TurnType::ToolUse | TurnType::ToolResult => None,
            // the text as read: a secret's digest, else the text kept as it
            // was (no second scan), as match_key gives for a copy of it
            _ if row.x_match_text && row.x_match.is_none() => secret_key.or_else(|| {
                row.text.as_deref().map(|t| {
                    if t.len() <= 72 {
                        t.to_string()
                    } else {
                        self.options.keys.text(t)
                    }
                })
            }),
            _ => row.x_match.take().map(|t| {
                let scanned = text_kept && row.text.as_ref() == Some(&t);
                match_key(
                    t,
                    self.options.scanner.as_ref().filter(|_| !scanned),
                    self.options.keys,
                )
            }),
        };
        let bytes =
            row.text.as_ref().map_or(0, String::len) + native.as_ref().map_or(0, String::len);
        self.max_row_bytes = self.max_row_bytes.max(bytes);
        self.buf_bytes += bytes;
        self.buf.push(row);
        self.natives.push(native);
        self.rows += 1;
        if self.buf.len() >= BATCH || self.buf_bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Add an `llm_calls` row.
    pub fn push_llm(&mut self, row: LlmCallRow) -> Result<(), StoreError> {
        self.llm.push(row);
        self.rows += 1;
        if self.llm.len() >= BATCH {
            self.flush()?;
        }
        Ok(())
    }

    /// Record a diagnostic about this store (`line` = 1-based line or rowid).
    pub fn diag(
        &mut self,
        kind: DiagKind,
        path: Option<&str>,
        line: Option<i64>,
        message: impl Into<String>,
    ) {
        let mut d = Diagnostic::new(kind, path.unwrap_or(&self.store.rel), message)
            .of(self.store.agent, &self.store.instance);
        d.source_line = line;
        self.diagnostics.push(d);
    }

    /// Record a fully built diagnostic (losses with codes and sessions).
    pub fn push_diag(&mut self, d: Diagnostic) {
        self.diagnostics.push(d);
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        if !self.buf.is_empty() {
            self.rows_to
                .write_events(self.store.kind, &self.buf, &self.natives)?;
            self.buf.clear();
            self.natives.clear();
            self.buf_bytes = 0;
        }
        if !self.llm.is_empty() {
            self.rows_to.write_llm_calls(&self.llm)?;
            self.llm.clear();
        }
        Ok(())
    }

    /// Flush what is left and report how the store was read.
    pub fn finish(mut self, result: Result<(), StoreError>) -> StoreReport {
        let mut fatal = None;
        match result.and_then(|()| self.flush()) {
            Ok(()) => {}
            Err(StoreError::Unreadable(msg)) => {
                self.diag(DiagKind::Unreadable, None, None, msg);
                // What was read before the failure is still staged.
                if let Err(e) = self.flush() {
                    fatal = Some(e.to_string());
                }
            }
            Err(StoreError::Stage(e)) => fatal = Some(e.to_string()),
        }
        let failed = self
            .diagnostics
            .iter()
            .any(|d| d.kind == DiagKind::Unreadable);
        let partial = self.diagnostics.iter().any(|d| d.kind.is_read_failure());
        let status = match (failed, partial) {
            (true, _) if self.rows == 0 => "failed",
            (true, _) | (false, true) => "partial",
            _ if self.skipped => "skipped",
            _ => "ok",
        };
        // a message may quote what it could not read (a reason, a path)
        if let Some(scanner) = &self.options.scanner {
            for d in &mut self.diagnostics {
                scanner.redact_in_place(&mut d.message, &mut self.redactions);
            }
        }
        self.diagnostics.sort();
        StoreReport {
            max_row_bytes: self.max_row_bytes,
            rows: self.rows,
            status,
            diagnostics: self.diagnostics,
            fatal,
            redactions: self.redactions,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// The rows a store pushed, as staged.
    #[derive(Default)]
    struct Rows(Mutex<Vec<EventRow>>);

    impl RowWriter for Rows {
        fn write_events(
            &self,
            _kind: &'static str,
            rows: &[EventRow],
            _natives: &[Option<String>],
        ) -> Result<(), WriteError> {
            self.0
                .lock()
                .map_err(|_| WriteError::new("a test writer was poisoned by a panic"))?
                .extend_from_slice(rows);
            Ok(())
        }
        fn write_llm_calls(&self, _rows: &[LlmCallRow]) -> Result<(), WriteError> {
            Ok(())
        }
    }

    /// The staged `x_match` of one row per text, pushed as `row` makes it.
    fn keys(
        scanner: Option<Scanner>,
        digest: KeyDigest,
        texts: &[String],
        row: impl Fn(&str) -> EventRow,
    ) -> Vec<Option<String>> {
        let store = Store {
            extractor: 0,
            kind: "session_jsonl",
            agent: Agent::Nanobot,
            instance: ".nanobot".into(),
            rel: ".nanobot/sessions/a.jsonl".into(),
            abs: PathBuf::from("/nonexistent/a.jsonl"),
            role: Role::Primary,
            present: true,
            bytes: 0,
            mtime_ns: 0,
            parts: Vec::new(),
            sidecars: Vec::new(),
        };
        let options = ExtractOptions {
            include_thinking: true,
            secret_patterns: Vec::new(),
            scanner,
            stage_all_wide: false,
            content_digests: false,
            keys: digest,
        };
        let rows = Rows::default();
        let mut out = StoreOutput::new(
            &store,
            Path::new("/nonexistent"),
            &options,
            &rows,
            PathBuf::from("/nonexistent/scratch"),
        );
        for t in texts {
            assert!(out.push(row(t)).is_ok());
        }
        assert_eq!(out.finish(Ok(())).status, "ok");
        let staged = rows.0.into_inner().unwrap_or_default();
        staged.into_iter().map(|r| r.x_match).collect()
    }

    /// A row whose key is its text as read (`x_match_text`) is keyed as a
    /// row carrying a copy of its text in `x_match`, with the scanner on
    /// and off and either digest: a short clean text is its own key, a long
    /// one or one holding a secret its digest (taken before redaction, so
    /// the copies of a text with a secret still pair), and no key holds the
    /// secret.
    #[test]
    fn a_text_that_is_its_own_key_is_keyed_as_a_copy_of_it() {
        let secret = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";
        let texts: Vec<String> = vec![
            "short and clean".into(),
            "a longer text, clean as well, that is past the seventy-two characters a key keeps"
                .into(),
            format!("token {secret}"),
            format!(
                "a longer text that pastes {secret} into a message, past seventy-two characters"
            ),
            String::new(),
        ];
        let assistant = |t: &str| EventRow {
            turn_type: TurnType::Assistant,
            text: Some(t.to_string()),
            ..Default::default()
        };
        for digest in [KeyDigest::Fast, KeyDigest::Sha256] {
            for scanner in [Some(Scanner::new(&[])), None] {
                let on = scanner.is_some();
                let copied = keys(scanner.clone(), digest, &texts, |t| EventRow {
                    x_match: Some(t.to_string()),
                    ..assistant(t)
                });
                let own = keys(scanner, digest, &texts, |t| EventRow {
                    x_match_text: true,
                    ..assistant(t)
                });
                assert_eq!(own, copied, "scanner {on}, {digest:?}");
                assert_eq!(own[0].as_deref(), Some("short and clean"));
                assert_eq!(own[4].as_deref(), Some(""));
                let hashed = digest.text(&texts[2]);
                match on {
                    true => assert_eq!(own[2].as_deref(), Some(hashed.as_str())),
                    false => assert_eq!(own[2].as_deref(), Some(texts[2].as_str())),
                }
                let (prefix, len) = match digest {
                    KeyDigest::Fast => ("h:", 34),
                    KeyDigest::Sha256 => ("sha256:", 71),
                };
                for k in [&own[1], &own[3]] {
                    assert!(
                        k.as_deref()
                            .is_some_and(|k| k.starts_with(prefix) && k.len() == len),
                        "{k:?}"
                    );
                }
                assert!(
                    own.iter()
                        .flatten()
                        .all(|k| !on || !k.contains(&secret[..12]))
                );
            }
        }
        // a tool row's text is no key either way
        let tool = keys(Some(Scanner::new(&[])), KeyDigest::Fast, &texts, |t| {
            EventRow {
                turn_type: TurnType::ToolResult,
                text: Some(t.to_string()),
                x_match_text: true,
                ..Default::default()
            }
        });
        assert!(tool.iter().all(Option::is_none));
    }

    /// The ledger's digest is the SHA-256 of the bytes, as every build
    /// before the fast keys staged it (a ledger they wrote keeps those keys
    /// in its rows' identity); the fast one differs from it, and equal bytes
    /// give equal keys either way.
    #[test]
    fn the_ledger_keys_are_the_sha256_earlier_builds_staged() {
        use sha2::Digest;
        let text = "a text past seventy-two characters, whose key is a digest of its bytes";
        let sha = hex(&sha2::Sha256::digest(text.as_bytes()));
        assert_eq!(KeyDigest::Sha256.text(text), format!("sha256:{sha}"));
        assert_eq!(KeyDigest::Sha256.record(text.as_bytes()), sha[..32]);
        let fast = KeyDigest::Fast.record(text.as_bytes());
        assert_eq!(fast.len(), 32);
        assert_ne!(fast, sha[..32]);
        assert_eq!(KeyDigest::Fast.text(text), format!("h:{fast}"));
        assert_ne!(
            KeyDigest::Fast.record(b"one record"),
            KeyDigest::Fast.record(b"another record")
        );
    }
}
