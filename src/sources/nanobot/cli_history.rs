//! `nanobot.cli_history`: prompt_toolkit input history (secondary, local time).
//!
//! ```text
//! .nanobot*/history/cli_history
//!   (blank line)
//!   # 2026-10-01 08:42:10            ← entry start, naive local time, µs omitted when 0
//!   +what's 17% of 2350?             ← one "+" line per input line
//!   +show the working
//! ```
//! One `user` row per entry (lines joined with "\n"), no session, at the
//! entry's time; `source_line` = the `#` line.

use std::fs::File;
use std::io::BufReader;

use crate::diag::DiagKind;
use crate::jsonl::{Line, Lines};
use crate::schema::{EventRow, Group, TurnType};
use crate::store::{StoreError, StoreOutput};
use crate::time::parse_naive;

/// One decoded entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub line: i64,
    /// The timestamp text as written after `# `.
    pub stamp: String,
    /// Parsed local time (µs); `None` when the stamp does not parse.
    pub ts_local: Option<i64>,
    pub text: String,
}

/// A line that is neither blank, `# …` nor `+…`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadLine {
    pub line: i64,
    pub raw: Vec<u8>,
    pub reason: String,
}

/// Incremental parser: feed lines, collect entries.
#[derive(Debug, Default)]
pub struct Parser {
    current: Option<(Entry, Vec<String>)>,
}

impl Parser {
    /// Feed one line (without its '\n'); returns a finished entry and/or a bad line.
    pub fn feed(&mut self, line: i64, bytes: &[u8]) -> (Option<Entry>, Option<BadLine>) {
        let text = String::from_utf8_lossy(bytes);
        let text = text.strip_suffix('\r').unwrap_or(&text);
        if let Some(stamp) = text.strip_prefix('#') {
            let stamp = stamp.trim().to_string();
            let done = self.finish();
            let ts = parse_naive(&stamp);
            self.current = Some((
                Entry {
                    line,
                    stamp,
                    ts_local: ts,
                    text: String::new(),
                },
                Vec::new(),
            ));
            return (done, None);
        }
        if let Some(input) = text.strip_prefix('+') {
            match &mut self.current {
                Some((_, lines)) => lines.push(input.to_string()),
                None => {
                    return (
                        None,
                        Some(BadLine {
                            line,
                            raw: bytes.to_vec(),
                            reason: "input line before any '# <time>' line".into(),
                        }),
                    );
                }
            }
            return (None, None);
        }
        if text.trim().is_empty() {
            return (None, None);
        }
        (
            None,
            Some(BadLine {
                line,
                raw: bytes.to_vec(),
                reason: "neither '# <time>' nor '+<input>'".into(),
            }),
        )
    }

    pub fn finish(&mut self) -> Option<Entry> {
        self.current.take().map(|(mut e, lines)| {
            e.text = lines.join("\n");
            e
        })
    }
}

/// Parse a whole history text (for tests and fuzzing).
pub fn parse(bytes: &[u8]) -> (Vec<Entry>, Vec<BadLine>) {
    let mut p = Parser::default();
    let (mut entries, mut bad) = (Vec::new(), Vec::new());
    for (i, l) in bytes.split(|b| *b == b'\n').enumerate() {
        let (e, b) = p.feed(i as i64 + 1, l);
        entries.extend(e);
        bad.extend(b);
    }
    entries.extend(p.finish());
    (entries, bad)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let file = File::open(&out.store.abs).map_err(|e| StoreError::io("cannot open", e))?;
    let mut lines = Lines::new(BufReader::new(file));
    let mut p = Parser::default();
    while let Some(Line {
        number: n, bytes, ..
    }) = lines
        .next_line()
        .map_err(|e| StoreError::io("read failed", e))?
    {
        let (entry, bad) = p.feed(n, bytes);
        if let Some(b) = bad {
            out.diag(DiagKind::BadLine, None, Some(b.line), b.reason.clone());
            out.push(EventRow {
                ..crate::sources::shared::bad_line_row(b.line, &b.reason, &b.raw)
            })?;
        }
        if let Some(e) = entry {
            push_entry(out, e)?;
        }
    }
    if let Some(e) = p.finish() {
        push_entry(out, e)?;
    }
    Ok(())
}

fn push_entry(out: &mut StoreOutput<'_>, e: Entry) -> Result<(), StoreError> {
    let mut native = None;
    if e.ts_local.is_none() {
        out.diag(
            DiagKind::BadLine,
            None,
            Some(e.line),
            format!(
                "timestamp {:?} does not parse; entry kept without a time",
                e.stamp
            ),
        );
        native = Some(crate::schema::object(
            serde_json::json!({ "timestamp_raw": e.stamp }),
        ));
    }
    out.push(EventRow {
        turn_type: TurnType::User,
        ts_local: e.ts_local,
        x_match_text: true,
        text: Some(e.text),
        source_line: Some(e.line),
        x_group: Group::Record,
        native,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_line_entry_is_one_row() {
        let (entries, bad) = parse(b"\n# 2026-10-01 08:41:00\n+/model fast\n\n# 2026-10-01 08:42:10\n+what's 17% of 2350?\n+show the working\n");
        assert!(bad.is_empty());
        let texts: Vec<(&str, i64)> = entries.iter().map(|e| (e.text.as_str(), e.line)).collect();
        assert_eq!(
            texts,
            vec![
                ("/model fast", 2),
                ("what's 17% of 2350?\nshow the working", 5)
            ]
        );
        assert_eq!(entries[1].ts_local, parse_naive("2026-10-01T08:42:10"));
    }

    #[test]
    fn a_bad_timestamp_keeps_the_entry_and_stray_lines_are_reported() {
        let (entries, bad) = parse(b"# yesterday\n+hello\nstray\n");
        assert_eq!(entries.len(), 1);
        assert_eq!(
            (entries[0].ts_local, entries[0].text.as_str()),
            (None, "hello")
        );
        assert_eq!(bad.len(), 1);
        assert_eq!(bad[0].line, 3);
    }
}
