//! Lenient JSON-lines decoding, shared by every JSONL store.
//!
//! ```text
//! file  = line*            line = bytes up to '\n' (a trailing '\r' is dropped)
//! blank line               → skipped (nanobot's own loader skips them)
//! JSON text                → Value (strict first; then with lone UTF-16
//!                            surrogate escapes such as "\ud83d" replaced by
//!                            "\ufffd", which strict decoders reject)
//! invalid UTF-8 bytes      → decoded lossily (U+FFFD), with a note
//! anything else            → LineError (the decoder's message, one line)
//! ```
//!
//! No DuckDB here: the fuzz targets call [`decode_line`] directly.

use std::io::{self, BufRead};

use serde_json::Value;

/// A decoded line and what had to be repaired to decode it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decoded {
    pub value: Value,
    /// Repairs applied (`"lone UTF-16 surrogate replaced"`, `"invalid UTF-8 replaced"`).
    pub repairs: Vec<&'static str>,
}

/// Why a line does not decode: the decoder's message, on one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError(pub String);

impl std::fmt::Display for LineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Decode one line. `Ok(None)` for a blank line.
pub fn decode_line(bytes: &[u8]) -> Result<Option<Decoded>, LineError> {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(None);
    }
    let mut repairs = Vec::new();
    // checked whole before parsing (serde_json's `from_str` then checks no
    // string again); simdutf8 for the long non-ASCII texts of real chats
    let text: std::borrow::Cow<'_, str> = match simdutf8::basic::from_utf8(bytes) {
        Ok(s) => s.into(),
        Err(_) => {
            repairs.push("invalid UTF-8 replaced");
            String::from_utf8_lossy(bytes)
        }
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(value) => Ok(Some(Decoded { value, repairs })),
        Err(first) => {
            if let Some(fixed) = replace_lone_surrogates(&text)
                && let Ok(value) = serde_json::from_str::<Value>(&fixed)
            {
                repairs.push("lone UTF-16 surrogate replaced");
                return Ok(Some(Decoded { value, repairs }));
            }
            Err(LineError(crate::diag::one_line(&first.to_string())))
        }
    }
}

/// Decode one JSON document (a whole file or a database column) with the
/// same leniency as [`decode_line`]; blank input is an error here.
pub fn decode_text(text: &str) -> Result<Decoded, LineError> {
    match decode_line(text.as_bytes())? {
        Some(d) => Ok(d),
        None => Err(LineError("empty document".into())),
    }
}

/// Rewrite `\uD800`–`\uDFFF` escapes that do not form a valid surrogate pair
/// as `\uFFFD`. Returns `None` when there is nothing to replace.
pub fn replace_lone_surrogates(s: &str) -> Option<String> {
    fn hex4(b: &[u8]) -> Option<u16> {
        let h = std::str::from_utf8(b.get(..4)?).ok()?;
        u16::from_str_radix(h, 16).ok()
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            i += 1;
            continue;
        }
        // An escape: `\` followed by one char, or `\uXXXX`.
        if b.get(i + 1) != Some(&b'u') {
            i += 2;
            continue;
        }
        let Some(unit) = hex4(&b[i + 2..]) else {
            i += 2;
            continue;
        };
        let is_high = (0xD800..0xDC00).contains(&unit);
        let is_low = (0xDC00..0xE000).contains(&unit);
        if is_high {
            let next_low = b.get(i + 6) == Some(&b'\\')
                && b.get(i + 7) == Some(&b'u')
                && hex4(&b[(i + 8).min(b.len())..]).is_some_and(|u| (0xDC00..0xE000).contains(&u));
            if next_low {
                i += 12;
                continue;
            }
        }
        if is_high || is_low {
            out.push_str(&s[copied..i]);
            out.push_str("\\ufffd");
            changed = true;
            i += 6;
            copied = i;
            continue;
        }
        i += 6;
    }
    if !changed {
        return None;
    }
    out.push_str(&s[copied..]);
    Some(out)
}

/// The read buffer of a large JSONL store's reader (session files, WebUI
/// transcripts): a line that fits in it is returned from the buffer itself,
/// not copied ([`Lines::next_line`]); their tool results run to 200 KB.
pub const READ_BUF: usize = 1 << 20;

/// One raw line of a reader, as [`Lines::next_line`] returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    /// Its 1-based line number.
    pub number: i64,
    /// Its bytes, without the `\n` (a `\r` before it is kept).
    pub bytes: &'a [u8],
    /// Whether it ended with `\n` (only the last line may not).
    pub terminated: bool,
    /// The bytes read through its end (every line so far, with its `\n`):
    /// what a store reports to `--progress`.
    pub read: u64,
}

/// Iterate the raw lines of a reader.
pub struct Lines<R> {
    reader: R,
    line: i64,
    buf: Vec<u8>,
    /// The bytes of every line returned so far, with its `\n` ([`Line::read`]).
    read: u64,
    /// Bytes of the reader's buffer the last line took, consumed at the
    /// next call (the line was returned from that buffer).
    pending: usize,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R) -> Self {
        Lines {
            reader,
            line: 0,
            buf: Vec::new(),
            read: 0,
            pending: 0,
        }
    }

    /// The next line, or `None` at end of input. A line whole in the
    /// reader's buffer is returned from it (no copy; the SIMD `memchr`
    /// finds its end); one that runs past it is gathered into a buffer of
    /// our own. Copying every line with std's `read_until` was 2.9 % of a
    /// 1 GB home's run (BENCHMARKS.md "Lines read from the reader's buffer").
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        self.reader.consume(std::mem::take(&mut self.pending));
        let end = memchr::memchr(b'\n', self.reader.fill_buf()?);
        if let Some(end) = end {
            self.pending = end + 1;
            self.read += end as u64 + 1;
            self.line += 1;
            // the buffer is still filled: this returns it without reading
            let available = self.reader.fill_buf()?;
            return Ok(Some(Line {
                number: self.line,
                bytes: &available[..end],
                terminated: true,
                read: self.read,
            }));
        }
        self.buf.clear();
        let n = self.reader.read_until(b'\n', &mut self.buf)?;
        if n == 0 {
            return Ok(None);
        }
        self.read += n as u64;
        self.line += 1;
        let terminated = self.buf.last() == Some(&b'\n');
        if terminated {
            self.buf.pop();
        }
        Ok(Some(Line {
            number: self.line,
            bytes: &self.buf,
            terminated,
            read: self.read,
        }))
    }
}

/// The first `n` characters of a line, lossily decoded, for bad-line rows.
pub fn preview(bytes: &[u8], n: usize) -> String {
    let s = String::from_utf8_lossy(bytes);
    s.chars().take(n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of(v: &Value) -> &str {
        v.get("t").and_then(Value::as_str).unwrap_or("<missing>")
    }

    #[test]
    fn lone_high_surrogate_becomes_replacement_char() -> Result<(), LineError> {
        let d = decode_line(br#"{"t": "cut \ud83d"}"#)?.ok_or(LineError("blank".into()))?;
        assert_eq!(text_of(&d.value), "cut \u{fffd}");
        assert_eq!(d.repairs, vec!["lone UTF-16 surrogate replaced"]);
        Ok(())
    }

    #[test]
    fn valid_pairs_and_escaped_backslashes_are_left_alone() -> Result<(), LineError> {
        let d =
            decode_line(br#"{"t": "\ud83d\ude00 \\ud83d"}"#)?.ok_or(LineError("blank".into()))?;
        assert_eq!(text_of(&d.value), "\u{1F600} \\ud83d");
        assert!(d.repairs.is_empty());
        assert_eq!(replace_lone_surrogates(r#"\\ud83d"#), None);
        Ok(())
    }

    #[test]
    fn lone_low_surrogate_and_high_before_non_low() {
        assert_eq!(
            replace_lone_surrogates(r#"a\udc00b"#).as_deref(),
            Some(r#"a\ufffdb"#)
        );
        assert_eq!(
            replace_lone_surrogates(r#"\ud800\u0041"#).as_deref(),
            Some(r#"\ufffd\u0041"#)
        );
        assert_eq!(
            replace_lone_surrogates(r#"\ud800"#).as_deref(),
            Some(r#"\ufffd"#)
        );
        assert_eq!(replace_lone_surrogates(r#"\ud8"#), None);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily() -> Result<(), LineError> {
        let d = decode_line(b"{\"t\": \"a\xffb\"}")?.ok_or(LineError("blank".into()))?;
        assert_eq!(text_of(&d.value), "a\u{fffd}b");
        assert_eq!(d.repairs, vec!["invalid UTF-8 replaced"]);
        Ok(())
    }

    proptest::proptest! {
        /// A line is repaired as invalid UTF-8 exactly when std rejects its
        /// bytes (the check is simdutf8's), and then decodes as its lossy
        /// text: a JSON string of CJK, emoji, and bytes that break them.
        #[test]
        fn the_utf8_check_agrees_with_std(
            parts in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Strategy::prop_map(
                        proptest::string::string_regex("[a-z 密钥是😀é]{0,40}")
                            .unwrap_or_else(|e| unreachable!("{e}")),
                        String::into_bytes,
                    ),
                    proptest::collection::vec(0x80u8..=0xff, 1..4),
                ],
                0..8,
            )
        ) {
            let text = parts.concat();
            let line = [&b"{\"t\": \""[..], &text, b"\"}"].concat();
            let Some(d) = decode_line(&line).ok().flatten() else {
                return Err(proptest::test_runner::TestCaseError::fail(format!(
                    "{line:?} did not decode"
                )));
            };
            let valid = std::str::from_utf8(&line).is_ok();
            proptest::prop_assert_eq!(d.repairs.is_empty(), valid);
            proptest::prop_assert_eq!(text_of(&d.value), String::from_utf8_lossy(&text));
        }
    }

    #[test]
    fn torn_line_reports_the_decoder_message() {
        let e = decode_line(br#"{"role": "user", "content": "and the npm cac"#).err();
        assert_eq!(
            e,
            Some(LineError(
                "EOF while parsing a string at line 1 column 44".into()
            ))
        );
    }

    #[test]
    fn blank_lines_are_skipped_and_crlf_is_accepted() -> Result<(), LineError> {
        assert_eq!(decode_line(b"  \r")?, None);
        assert!(decode_line(b"{}\r")?.is_some());
        Ok(())
    }

    proptest::proptest! {
        /// Whatever the reader's buffer size, and whether a line fits in
        /// it or not, the lines, their numbers, their termination and the
        /// bytes read through each line are those of splitting the input at each '\n'.
        #[test]
        fn lines_are_the_input_split_at_newlines(
            parts in proptest::collection::vec(("[a-z\r ]{0,40}", proptest::bool::ANY), 0..20),
            capacity in 1usize..64,
        ) {
            let mut input = Vec::new();
            for (text, newline) in &parts {
                input.extend_from_slice(text.as_bytes());
                if *newline {
                    input.push(b'\n');
                }
            }
            let mut expected = Vec::new();
            let mut rest = &input[..];
            while !rest.is_empty() {
                let (line, terminated) = match rest.iter().position(|&b| b == b'\n') {
                    Some(i) => (&rest[..i], true),
                    None => (rest, false),
                };
                expected.push((expected.len() as i64 + 1, line.to_vec(), terminated));
                rest = &rest[(line.len() + usize::from(terminated)).min(rest.len())..];
            }
            let mut l = Lines::new(std::io::BufReader::with_capacity(capacity, &input[..]));
            let mut seen = Vec::new();
            let mut read = 0;
            while let Some(line) = l.next_line().map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))? {
                seen.push((line.number, line.bytes.to_vec(), line.terminated));
                let through: usize = seen.iter().map(|(_, b, t)| b.len() + usize::from(*t)).sum();
                proptest::prop_assert_eq!(line.read, through as u64);
                read = line.read;
            }
            proptest::prop_assert_eq!(seen, expected);
            proptest::prop_assert_eq!(read, input.len() as u64);
        }
    }

    #[test]
    fn lines_reports_numbers_and_termination() -> io::Result<()> {
        let mut l = Lines::new(&b"a\n\nb"[..]);
        let mut seen = Vec::new();
        while let Some(line) = l.next_line()? {
            seen.push((line.number, line.bytes.to_vec(), line.terminated));
        }
        assert_eq!(
            seen,
            vec![
                (1, b"a".to_vec(), true),
                (2, vec![], true),
                (3, b"b".to_vec(), false)
            ]
        );
        Ok(())
    }
}
