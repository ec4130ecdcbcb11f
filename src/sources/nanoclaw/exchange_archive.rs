//! `nanoclaw.exchange_archive`: the per-thread markdown archive nanoclaw's
//! providers without an on-disk transcript (the Codex provider, `providers`
//! branch efc8eff4) write of each prompt/result exchange — a **secondary
//! copy** of the thread's rollout and of the session's messages.
//! docs/design.md "nanoclaw: exchange archives".
//!
//! ```text
//! <root>/groups/<folder>/                        the agent group's folder = the container's /workspace/agent
//!   conversations/<local date>-<provider>-<thread slug>.md     one file per thread, appended to
//!     # <Provider> Conversation                  header, written once      → system row
//!                                                                            `exchange archive: provider=<p> thread=<id>`
//!     Provider: <provider>
//!     Continuation/thread id: <thread id | (none)>
//!                                                per exchange (archiveProviderExchange):
//!     ---
//!
//!     Archived: <YYYY-MM-DD HH:MM, local time in the install's TIMEZONE> · Status: <completed|undelivered|error>
//!
//!     **User**: <prompt, cut to 2000 UTF-16 units + '...'>               → user row
//!
//!     **Assistant**: <trimmed result, cut the same way>                  → assistant row
//!   conversations/<date>-<summary slug>.md       Claude Code's PreCompact archive (`# <title>`,
//!                                                `Archived: <Mon D, h:mm AM>`): status `skipped`, no rows
//! ```
//! One row is one message of one exchange (or the thread's header), at the
//! exchange's `Archived:` stamp as a **local** time (minute precision; the
//! steps derive its UTC time). native: `provider`, `transcript_id` (the
//! thread id, the continuation a session's `continuation:<provider>` names),
//! `status`, `archived_local` (the stamp as written), `exchange` (1, 2, …),
//! `truncated` (the text was cut to 2000 characters and `...` appended),
//! `folder`; on a doubtful split `split_ambiguous`, on a cut file `torn`.
//! project_path is `groups/<folder>`; the session is joined by the steps
//! (V011): the session whose continuation names the thread, else the only
//! session of the folder's agent group.
//!
//! **Where a body is ambiguous.** Prompts and results may span lines, and a
//! body line may be `---` or start with `**User**:` or `**Assistant**:`. An
//! exchange starts only where the whole six-line opening stands — blank,
//! `---`, blank, `Archived: <YYYY-MM-DD HH:MM> · Status: <s>`, blank,
//! `**User**: ` — so a `---` or `**User**:` inside a body is body; only a
//! body quoting such an opening verbatim would be cut there. Inside an
//! exchange, the result starts at the first blank line followed by
//! `**Assistant**: `: a prompt that itself holds that (a pasted
//! conversation) is split too early, and a later candidate marks the rows
//! `split_ambiguous: true`.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::store::{StoreError, StoreOutput};

/// What nanoclaw cuts a prompt or result to (`truncate` in
/// exchange-archive.ts: `value.slice(0, 2000) + '...'`, UTF-16 units).
const CUT: usize = 2000;

/// The matched path is a dated archive name (`YYYY-MM-DD-<rest>.md`) in the
/// `groups/<folder>/conversations/` of a nanoclaw install (a directory
/// whose `data/` holds `v2.db` or `v2-sessions/`).
pub fn accept(rel: &str, home: &Path) -> bool {
    let Some((root, _, name)) = archive_parts(rel) else {
        return false;
    };
    let b = name.as_bytes();
    let dated = b.len() > 14
        && b[..10].iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
        && b[10] == b'-';
    let data = if root == "." {
        home.join("data")
    } else {
        home.join(&root).join("data")
    };
    dated && (data.join("v2.db").is_file() || data.join("v2-sessions").is_dir())
}

/// (install root, group folder, file name) of
/// `<root>/groups/<folder>/conversations/<name>` (relative to HOME).
pub fn archive_parts(rel: &str) -> Option<(String, &str, &str)> {
    let parts: Vec<&str> = rel.split('/').collect();
    let n = parts.len();
    if n < 4 || parts[n - 4] != "groups" || parts[n - 2] != "conversations" {
        return None;
    }
    let root = parts[..n - 4].join("/");
    let root = if root.is_empty() { ".".into() } else { root };
    Some((root, parts[n - 3], parts[n - 1]))
}

/// The thread header: the title line's provider name, `Provider:` and
/// `Continuation/thread id:` (None for `(none)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub title: String,
    pub provider: String,
    pub thread: Option<String>,
}

/// One exchange as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// Line of its `Archived:` line (1-based).
    pub line: i64,
    pub stamp: String,
    pub status: String,
    pub user: String,
    pub user_line: i64,
    /// None: the exchange is torn before its `**Assistant**:` part.
    pub assistant: Option<(String, i64)>,
    /// Another blank + `**Assistant**: ` follows the one taken.
    pub split_ambiguous: bool,
}

/// A place in a file that does not read as nanoclaw writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bad {
    pub line: i64,
    pub reason: String,
    /// The text no row holds (outside every exchange), to keep as the
    /// `parser: unparseable record` row; None when the rows hold it (a torn
    /// exchange's rows are marked `torn`).
    pub unread: Option<String>,
}

/// What a file is.
#[derive(Debug, PartialEq)]
pub enum Parsed {
    /// Claude Code's PreCompact archive (`# <title>`, blank, `Archived: …`).
    ClaudeArchive,
    Archive {
        header: Option<Header>,
        exchanges: Vec<Exchange>,
        /// What does not read: no header, text outside an exchange, an
        /// exchange cut short.
        bad: Vec<Bad>,
    },
}

/// `Archived: <YYYY-MM-DD HH:MM> · Status: <status>` → (stamp, status).
fn archived_line(l: &str) -> Option<(&str, &str)> {
    let rest = l.strip_prefix("Archived: ")?;
    let (stamp, status) = rest.split_once(" · Status: ")?;
    crate::time::parse_naive(stamp)?;
    (stamp.len() == 16 && !status.is_empty()).then_some((stamp, status))
}

/// Whether an exchange opens at line index `i`: blank, `---`, blank,
/// `Archived: …` (the rest of the opening is checked as the exchange is read).
fn opens_at(lines: &[&str], i: usize) -> bool {
    lines.get(i..i + 4).is_some_and(|w| {
        w[0].is_empty() && w[1] == "---" && w[2].is_empty() && archived_line(w[3]).is_some()
    }) && match lines.get(i + 4..i + 6) {
        // a full opening, or a file that ends inside one (torn)
        Some(w) => w[0].is_empty() && w[1].starts_with("**User**: "),
        None => lines[i + 4..].iter().all(|l| l.is_empty()),
    }
}

/// Parse a file's text (no I/O).
pub fn parse(text: &str) -> Parsed {
    let ends_cut = !text.is_empty() && !text.ends_with('\n');
    let mut lines: Vec<&str> = text.split('\n').collect();
    if !ends_cut {
        lines.pop(); // the empty piece after the final newline
    }
    let title = lines
        .first()
        .and_then(|l| l.strip_prefix("# "))
        .map(str::to_string);
    let mut bad = Vec::new();
    let header = match (title.as_deref(), lines.get(1), lines.get(2), lines.get(3)) {
        (Some(t), Some(&""), Some(p), Some(c))
            if t.ends_with(" Conversation")
                && p.starts_with("Provider: ")
                && c.starts_with("Continuation/thread id: ") =>
        {
            let thread = &c["Continuation/thread id: ".len()..];
            Some(Header {
                title: t.to_string(),
                provider: p["Provider: ".len()..].to_string(),
                thread: (thread != "(none)" && !thread.is_empty()).then(|| thread.to_string()),
            })
        }
        (Some(_), Some(&""), Some(a), _) if a.starts_with("Archived: ") => {
            return Parsed::ClaudeArchive;
        }
        _ => None,
    };
    let body_from = if header.is_some() { 4 } else { 0 };
    let starts: Vec<usize> = (body_from..lines.len())
        .filter(|&i| opens_at(&lines, i))
        .collect();
    let first = starts.first().copied().unwrap_or(lines.len());
    let outside = &lines[body_from..first];
    if header.is_none() {
        bad.push(Bad {
            line: 1,
            reason: "no exchange-archive header (`# <Provider> Conversation`, blank, `Provider: …`, `Continuation/thread id: …`)".to_string(),
            unread: outside.iter().any(|l| !l.is_empty()).then(|| outside.join("\n")),
        });
    } else if outside.iter().any(|l| !l.is_empty()) {
        bad.push(Bad {
            line: body_from as i64 + 1,
            reason: "text outside any exchange (no `---` / `Archived: … · Status: …` opening)"
                .to_string(),
            unread: Some(outside.join("\n")),
        });
    }
    let torn = |line: i64, reason: &str| Bad {
        line,
        reason: reason.to_string(),
        unread: None,
    };
    let mut exchanges = Vec::new();
    for (j, &s) in starts.iter().enumerate() {
        let end = starts.get(j + 1).copied().unwrap_or(lines.len());
        let Some((stamp, status)) = archived_line(lines[s + 3]) else {
            continue;
        };
        let line = s as i64 + 4;
        let Some(user_first) = lines.get(s + 5).filter(|_| s + 5 < end) else {
            bad.push(torn(line, "exchange torn before its **User**: line"));
            continue;
        };
        // blank + `**Assistant**: ` candidates after the user line
        let splits: Vec<usize> = (s + 6..end)
            .filter(|&k| lines[k - 1].is_empty() && lines[k].starts_with("**Assistant**: "))
            .collect();
        // torn before its result: the prompt without the blank lines after it
        let user_to = splits.first().map_or_else(
            || {
                (s + 6..end)
                    .rev()
                    .find(|&k| !lines[k].is_empty())
                    .map_or(s + 6, |k| k + 1)
            },
            |k| k - 1,
        );
        let mut user_lines = vec![&user_first["**User**: ".len()..]];
        user_lines.extend(&lines[s + 6..user_to]);
        let assistant = splits.first().map(|&k| {
            let mut a = vec![&lines[k]["**Assistant**: ".len()..]];
            a.extend(&lines[k + 1..end]);
            (a.join("\n"), k as i64 + 1)
        });
        if assistant.is_none() {
            bad.push(torn(line, "exchange torn: no **Assistant**: part"));
        } else if ends_cut && end == lines.len() {
            bad.push(torn(
                line,
                "exchange torn: the file ends without its final newline",
            ));
        }
        exchanges.push(Exchange {
            line,
            stamp: stamp.to_string(),
            status: status.to_string(),
            user: user_lines.join("\n"),
            user_line: s as i64 + 6,
            assistant,
            split_ambiguous: splits.len() > 1,
        });
    }
    Parsed::Archive {
        header,
        exchanges,
        bad,
    }
}

/// Whether a text is one nanoclaw cut: 2000 UTF-16 units and `...`.
pub fn is_cut(text: &str) -> bool {
    text.strip_suffix("...")
        .is_some_and(|t| t.encode_utf16().count() == CUT)
}

/// The rows of a parsed archive (no I/O): the header's system row, then
/// each exchange's user and assistant rows.
pub fn rows(header: Option<&Header>, exchanges: &[Exchange], ends_cut: bool) -> Vec<EventRow> {
    let provider = header.map(|h| h.provider.clone());
    let thread = header.and_then(|h| h.thread.clone());
    let mut base = Map::new();
    if let Some(p) = &provider {
        base.insert("provider".into(), json!(p));
    }
    if let Some(t) = &thread {
        base.insert("transcript_id".into(), json!(t));
    }
    let row =
        |turn_type, text: String, line: i64, seq: i64, stamp: &str, extra: Map<String, Value>| {
            let mut native = base.clone();
            native.extend(extra);
            EventRow {
                turn_type,
                text: Some(text),
                ts_local: crate::time::parse_naive(stamp),
                seq: Some(seq),
                source_line: Some(line),
                x_group: Group::Transcript,
                native: Some(native),
                ..Default::default()
            }
        };
    let mut out = Vec::new();
    if let Some(h) = header {
        out.push(row(
            TurnType::System,
            format!(
                "exchange archive: provider={} thread={}",
                h.provider,
                h.thread.as_deref().unwrap_or("(none)")
            ),
            1,
            0,
            exchanges.first().map_or("", |e| e.stamp.as_str()),
            [("title".to_string(), json!(h.title))]
                .into_iter()
                .collect(),
        ));
    }
    let last = exchanges.len();
    for (n, e) in (1..).zip(exchanges) {
        let facts = |text: &str, torn: bool| {
            let mut m = Map::new();
            m.insert("status".into(), json!(e.status));
            m.insert("archived_local".into(), json!(e.stamp));
            m.insert("exchange".into(), json!(n));
            m.insert("truncated".into(), json!(is_cut(text)));
            if e.split_ambiguous {
                m.insert("split_ambiguous".into(), json!(true));
            }
            if torn {
                m.insert("torn".into(), json!(true));
            }
            m
        };
        let torn_user = e.assistant.is_none();
        out.push(row(
            TurnType::User,
            e.user.clone(),
            e.user_line,
            n,
            &e.stamp,
            facts(&e.user, torn_user),
        ));
        if let Some((a, line)) = &e.assistant {
            let torn = ends_cut && n as usize == last;
            out.push(row(
                TurnType::Assistant,
                a.clone(),
                *line,
                n,
                &e.stamp,
                facts(a, torn),
            ));
        }
    }
    out
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let folder = archive_parts(&store.rel)
        .map(|(_, f, _)| f.to_string())
        .unwrap_or_default();
    let mut bytes = Vec::new();
    File::open(&store.abs)
        .and_then(|mut f| f.read_to_end(&mut bytes))
        .map_err(|e| StoreError::io("cannot read", e))?;
    let text = String::from_utf8_lossy(&bytes);
    let (header, exchanges, bad) = match parse(&text) {
        // a copy of the Claude Code transcript, which is read itself
        Parsed::ClaudeArchive => {
            out.skip();
            return Ok(());
        }
        Parsed::Archive {
            header,
            exchanges,
            bad,
        } => (header, exchanges, bad),
    };
    for b in &bad {
        out.diag(DiagKind::BadRecord, None, Some(b.line), b.reason.clone());
        let Some(raw) = &b.unread else { continue };
        out.push(EventRow {
            turn_type: TurnType::System,
            text: Some(format!(
                "parser: unparseable record line {} ({}): {}",
                b.line,
                b.reason,
                crate::jsonl::preview(raw.as_bytes(), 200)
            )),
            source_line: Some(b.line),
            x_group: Group::Transcript,
            project_path: Some(format!("groups/{folder}")),
            native: Some({
                let mut n = crate::sources::shared::raw_native(raw.as_bytes());
                n.insert("folder".into(), json!(folder));
                n
            }),
            ..Default::default()
        })?;
    }
    let ends_cut = !text.is_empty() && !text.ends_with('\n');
    for r in rows(header.as_ref(), &exchanges, ends_cut) {
        let mut native = r.native.clone().unwrap_or_default();
        native.insert("folder".into(), json!(folder));
        out.push(EventRow {
            project_path: Some(format!("groups/{folder}")),
            native: Some(native),
            ..r
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What nanoclaw's archiveProviderExchange wrote for two exchanges
    /// (fixtures/nanoclaw/home-codex-archive), one body holding `---`,
    /// `**User**:` and `**Assistant**:` lines of its own.
    const TWO: &str = "# Codex Conversation\n\nProvider: codex\nContinuation/thread id: t-1\n\n---\n\nArchived: 2026-12-03 07:40 · Status: completed\n\n**User**: Summarise:\n\n---\n\n**User**: a quoted line\nend\n\n**Assistant**: Summary:\n\n---\n\n**Assistant**: was quoted.\n\n---\n\nArchived: 2026-12-03 07:53 · Status: error\n\n**User**: Are you there?\n\n**Assistant**: Error: Turn timed out after 600000ms\n";

    fn archive(text: &str) -> (Option<Header>, Vec<Exchange>, Vec<(i64, String)>) {
        let pairs = |bad: Vec<Bad>| bad.into_iter().map(|b| (b.line, b.reason)).collect();
        match parse(text) {
            Parsed::Archive {
                header,
                exchanges,
                bad,
            } => (header, exchanges, pairs(bad)),
            Parsed::ClaudeArchive => (None, Vec::new(), vec![(0, "claude".into())]),
        }
    }

    #[test]
    fn a_body_holding_dashes_and_markers_stays_one_exchange() {
        let (header, ex, bad) = archive(TWO);
        assert_eq!(bad, Vec::<(i64, String)>::new());
        assert_eq!(
            header,
            Some(Header {
                title: "Codex Conversation".into(),
                provider: "codex".into(),
                thread: Some("t-1".into())
            })
        );
        assert_eq!(ex.len(), 2);
        assert_eq!(
            ex[0].user,
            "Summarise:\n\n---\n\n**User**: a quoted line\nend"
        );
        assert_eq!(
            ex[0].assistant,
            Some(("Summary:\n\n---\n\n**Assistant**: was quoted.".into(), 17))
        );
        assert!(ex[0].split_ambiguous);
        assert_eq!((ex[0].line, ex[0].user_line), (8, 10));
        assert_eq!(
            (ex[0].stamp.as_str(), ex[0].status.as_str()),
            ("2026-12-03 07:40", "completed")
        );
        assert_eq!(ex[1].user, "Are you there?");
        assert!(!ex[1].split_ambiguous);
        let rows = rows(header.as_ref(), &ex, false);
        let texts: Vec<(TurnType, &str)> = rows
            .iter()
            .map(|r| (r.turn_type, r.text.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            texts,
            vec![
                (
                    TurnType::System,
                    "exchange archive: provider=codex thread=t-1"
                ),
                (
                    TurnType::User,
                    "Summarise:\n\n---\n\n**User**: a quoted line\nend"
                ),
                (
                    TurnType::Assistant,
                    "Summary:\n\n---\n\n**Assistant**: was quoted."
                ),
                (TurnType::User, "Are you there?"),
                (TurnType::Assistant, "Error: Turn timed out after 600000ms"),
            ]
        );
        assert_eq!(
            rows[1].ts_local,
            crate::time::parse_naive("2026-12-03 07:40")
        );
        assert_eq!(
            rows[4].native.as_ref().and_then(|n| n.get("status")),
            Some(&json!("error"))
        );
    }

    #[test]
    fn a_cut_text_torn_file_and_missing_header_are_named() {
        let long = format!("{}...", "é".repeat(CUT));
        assert!(is_cut(&long));
        assert!(!is_cut("short..."));
        // a surrogate pair counts two units, as in JavaScript
        assert!(is_cut(&format!("{}...", "😀".repeat(CUT / 2))));
        // torn inside the second exchange's result: the first stays whole
        let cut = &TWO[..TWO.len() - 10];
        let (_, ex, bad) = archive(cut);
        assert_eq!(ex.len(), 2);
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].0, 25);
        let r = rows(None, &ex, true);
        assert_eq!(
            r.last()
                .and_then(|r| r.native.as_ref())
                .and_then(|n| n.get("torn")),
            Some(&json!(true))
        );
        // torn before **Assistant**
        let (_, ex, bad) = archive(&TWO[..TWO.find("**Assistant**: Error").unwrap_or(0)]);
        assert_eq!(ex[1].assistant, None);
        assert_eq!(ex[1].user, "Are you there?");
        assert!(
            bad.iter()
                .any(|(l, m)| *l == 25 && m.contains("no **Assistant**"))
        );
        // no header: named at line 1, the exchanges still read
        let headless = &TWO[TWO.find("\n---").unwrap_or(0)..];
        let (header, ex, bad) = archive(headless);
        assert_eq!(header, None);
        assert_eq!(ex.len(), 2);
        assert_eq!(bad[0].0, 1);
        // Claude Code's PreCompact archive is told apart
        assert_eq!(
            parse(
                "# Conversation\n\nArchived: Dec 3, 8:57 AM\n\n---\n\n**User**: hi\n\n**Andy**: hello\n"
            ),
            Parsed::ClaudeArchive
        );
        assert_eq!(
            archive_parts("nc/groups/coder/conversations/2026-12-03-codex-t.md"),
            Some(("nc".to_string(), "coder", "2026-12-03-codex-t.md"))
        );
    }
}
