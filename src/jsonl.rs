//! Lenient JSON-lines decoding, shared by every JSONL store.
//!
//! ```text
//! file  = line*            line = bytes up to '\n' (a trailing '\r' is dropped)
//! blank line               → skipped (nanobot's own loader skips them)
//! JSON text                → Value (strict first; then with lone UTF-16
//!                            surrogate escapes such as "\ud83d" replaced by
//!                            "\ufffd", which strict decoders reject)
//! invalid UTF-8 bytes      → decoded lossily (U+FFFD), with a note
//! nested up to MAX_DEPTH   → Value (serde_json stops at 128 levels; a text
//!                            it refused for that is parsed again with the
//!                            open arrays and objects on a heap stack, each
//!                            string and number still serde_json's parse)
//! nested deeper            → LineError naming MAX_DEPTH (never parsed: no
//!                            stack is spent on it)
//! anything else            → LineError (the decoder's message, one line)
//! ```
//!
//! [`parse`] is that parse for every JSON text a reader decodes (lines,
//! database records, whole files). No DuckDB here: the fuzz targets call
//! [`decode_line`] directly.

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
    match parse(&text) {
        Ok(value) => Ok(Some(Decoded { value, repairs })),
        Err(first) => {
            if let Some(fixed) = replace_lone_surrogates(&text)
                && let Ok(value) = parse(&fixed)
            {
                repairs.push("lone UTF-16 surrogate replaced");
                return Ok(Some(Decoded { value, repairs }));
            }
            Err(LineError(crate::diag::one_line(&first.to_string())))
        }
    }
}

/// The deepest nesting of arrays and objects a JSON text may have. The
/// agents' own writers stop near here (Python's `json` at its recursion
/// limit, 1000 frames), and every reader that walks a value recursively
/// (its drop, its serialization into `native`) stays within a worker
/// thread's stack at this depth (`deep_lines_keep_their_message`).
pub const MAX_DEPTH: usize = 1000;

/// The stack of a thread that walks a value [`MAX_DEPTH`] levels deep
/// after it is parsed (the secret scanner, the record hash, its
/// serialization into `native` and its drop recurse at each level). An
/// unoptimised build needs between 1 and 2 MiB for that, so the 2 MiB a
/// thread gets by default leaves no margin. Only the pages a thread
/// touches are ever mapped.
pub const WALK_STACK: usize = 16 << 20;

/// Why [`parse`] refused a text.
#[derive(Debug, thiserror::Error)]
pub enum ParseError {
    /// serde_json's own error.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// Nested deeper than [`MAX_DEPTH`]: refused before parsing.
    #[error("nested more than {MAX_DEPTH} levels deep (arrays and objects): not read")]
    TooDeep,
    /// A text nested past serde_json's limit that is not JSON: the byte
    /// where it stops being JSON.
    #[error("not JSON at byte {0} (a text nested past 128 levels)")]
    Invalid(usize),
    /// Bytes that are not UTF-8 ([`parse_slice`]).
    #[error("not UTF-8: {0}")]
    NotUtf8(#[from] std::str::Utf8Error),
}

/// [`parse`] of bytes that must be UTF-8 (a whole file).
pub fn parse_slice(bytes: &[u8]) -> Result<Value, ParseError> {
    parse(std::str::from_utf8(bytes)?)
}

/// Parse one JSON text into a [`Value`], nested up to [`MAX_DEPTH`] levels.
/// serde_json's own parse runs first; a text it refused that nests
/// [`SERDE_JSON_DEPTH`] levels or more (its limit), and within the bound,
/// is parsed again by [`parse_deep`], which does not recurse. A text it
/// refused that nests less is refused with serde_json's error.
pub fn parse(text: &str) -> Result<Value, ParseError> {
    let first = match serde_json::from_str::<Value>(text) {
        Ok(v) => return Ok(v),
        Err(e) => e,
    };
    match depth(text.as_bytes()) {
        d if d < SERDE_JSON_DEPTH => Err(first.into()),
        d if d > MAX_DEPTH => Err(ParseError::TooDeep),
        _ => parse_deep(text),
    }
}

/// serde_json's recursion limit: its parse refuses a text nested this
/// deep (127 levels are read).
const SERDE_JSON_DEPTH: usize = 128;

/// An array or object being read by [`parse_deep`].
enum Open {
    Array(Vec<Value>),
    /// The members so far and the key of the value being read.
    Object(serde_json::Map<String, Value>, String),
}

/// Parse a JSON text with the arrays and objects open kept on a stack of
/// our own, not the thread's: no recursion, whatever the depth. Each
/// string and each other scalar is serde_json's own parse of its token,
/// and members go into a map as serde_json puts them (a repeated key: the
/// last value), so a value is the one serde_json gives without its limit
/// (`parse_deep_agrees_with_serde_json`).
fn parse_deep(text: &str) -> Result<Value, ParseError> {
    let b = text.as_bytes();
    let ws = |mut i: usize| {
        while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
        }
        i
    };
    // the end of the string token that starts at `i` (its closing quote + 1)
    let string_end = |i: usize| -> Result<usize, ParseError> {
        let mut k = i + 1;
        while k < b.len() {
            match b[k] {
                b'\\' => k += 2,
                b'"' => return Ok(k + 1),
                _ => k += 1,
            }
        }
        Err(ParseError::Invalid(i))
    };
    // a member's key at `i`, and where its value starts
    let key_at = |i: usize| -> Result<(String, usize), ParseError> {
        if b.get(i) != Some(&b'"') {
            return Err(ParseError::Invalid(i));
        }
        let end = string_end(i)?;
        let key: String = serde_json::from_str(&text[i..end])?;
        let colon = ws(end);
        if b.get(colon) != Some(&b':') {
            return Err(ParseError::Invalid(colon));
        }
        Ok((key, ws(colon + 1)))
    };
    let mut stack: Vec<Open> = Vec::new();
    let mut i = ws(0);
    loop {
        // a value starts at i
        let mut value = match b.get(i) {
            Some(b'[') => {
                if stack.len() >= MAX_DEPTH {
                    return Err(ParseError::TooDeep);
                }
                i = ws(i + 1);
                if b.get(i) == Some(&b']') {
                    i += 1;
                    Value::Array(Vec::new())
                } else {
                    stack.push(Open::Array(Vec::new()));
                    continue;
                }
            }
            Some(b'{') => {
                if stack.len() >= MAX_DEPTH {
                    return Err(ParseError::TooDeep);
                }
                i = ws(i + 1);
                if b.get(i) == Some(&b'}') {
                    i += 1;
                    Value::Object(serde_json::Map::new())
                } else {
                    let (key, next) = key_at(i)?;
                    stack.push(Open::Object(serde_json::Map::new(), key));
                    i = next;
                    continue;
                }
            }
            Some(b'"') => {
                let end = string_end(i)?;
                let v = serde_json::from_str(&text[i..end])?;
                i = end;
                v
            }
            // a number or a literal: the token runs to the next byte that
            // can end it; serde_json judges the token
            Some(c) if c.is_ascii_alphanumeric() || *c == b'-' => {
                let end = b[i..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || matches!(c, b'-' | b'+' | b'.')))
                    .map_or(b.len(), |n| i + n);
                let v = serde_json::from_str(&text[i..end])?;
                i = end;
                v
            }
            _ => return Err(ParseError::Invalid(i)),
        };
        // the value is whole: into the array or object it belongs to,
        // closing each that ends after it
        loop {
            i = ws(i);
            match stack.last_mut() {
                None if i == b.len() => return Ok(value),
                None => return Err(ParseError::Invalid(i)),
                Some(Open::Array(items)) => {
                    items.push(value);
                    match b.get(i) {
                        Some(b',') => {
                            i = ws(i + 1);
                            break;
                        }
                        Some(b']') => {
                            i += 1;
                            value = match stack.pop() {
                                Some(Open::Array(items)) => Value::Array(items),
                                _ => return Err(ParseError::Invalid(i)),
                            };
                        }
                        _ => return Err(ParseError::Invalid(i)),
                    }
                }
                Some(Open::Object(members, key)) => {
                    members.insert(std::mem::take(key), value);
                    match b.get(i) {
                        Some(b',') => {
                            let (next_key, next) = key_at(ws(i + 1))?;
                            *key = next_key;
                            i = next;
                            break;
                        }
                        Some(b'}') => {
                            i += 1;
                            value = match stack.pop() {
                                Some(Open::Object(members, _)) => Value::Object(members),
                                _ => return Err(ParseError::Invalid(i)),
                            };
                        }
                        _ => return Err(ParseError::Invalid(i)),
                    }
                }
            }
        }
    }
}

/// The deepest nesting of `[` and `{` in a JSON text, strings skipped
/// (a scan of the bytes, for a text serde_json refused).
fn depth(b: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &c in b {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
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
    /// our own. Copying every line, as std's `read_until` does, is a
    /// measurable part of a large home's run (BENCHMARKS.md "Lines read
    /// from the reader's buffer").
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

    /// `[` nested `n` deep around `0`.
    fn arrays(n: usize) -> String {
        format!("{}0{}", "[".repeat(n), "]".repeat(n))
    }

    /// serde_json's own parse reads 127 levels and refuses 128; from 128 to
    /// MAX_DEPTH levels [`parse`] reads what serde_json writes, past
    /// MAX_DEPTH it refuses before parsing, and a deep text that is not
    /// JSON stays an error. (On an extraction thread's stack: serializing
    /// and dropping a value this deep recurse.)
    #[test]
    fn parse_reads_what_serde_json_refuses_for_depth_alone() -> Result<(), String> {
        let check = || -> Result<(), ParseError> {
            assert!(serde_json::from_str::<Value>(&arrays(SERDE_JSON_DEPTH - 1)).is_ok());
            assert!(serde_json::from_str::<Value>(&arrays(SERDE_JSON_DEPTH)).is_err());
            for n in [SERDE_JSON_DEPTH - 1, SERDE_JSON_DEPTH, 500, MAX_DEPTH] {
                let text = arrays(n);
                assert_eq!(serde_json::to_string(&parse(&text)?)?, text, "{n} levels");
            }
            assert!(matches!(
                parse(&arrays(MAX_DEPTH + 1)),
                Err(ParseError::TooDeep)
            ));
            let torn = format!("{} x", arrays(300));
            assert_eq!(
                parse(&torn).map_err(|e| e.to_string()).err().as_deref(),
                Some("not JSON at byte 602 (a text nested past 128 levels)")
            );
            assert!(matches!(
                parse(&"[".repeat(300)),
                Err(ParseError::Invalid(300))
            ));
            // a repeated key: the last value, as serde_json
            let twice = format!(
                "{}{{\"a\": 1, \"b\": 2, \"a\": 3}}{}",
                "[".repeat(200),
                "]".repeat(200)
            );
            assert_eq!(
                serde_json::to_string(&parse(&twice)?)?,
                format!("{}{{\"a\":3,\"b\":2}}{}", "[".repeat(200), "]".repeat(200))
            );
            // a token inside is still judged by serde_json
            let bad_escape = format!("{}\"\\x\"{}", "[".repeat(200), "]".repeat(200));
            assert!(matches!(parse(&bad_escape), Err(ParseError::Json(_))));
            Ok(())
        };
        std::thread::Builder::new()
            .stack_size(WALK_STACK)
            .spawn(move || check().map_err(|e| e.to_string()))
            .map_err(|e| e.to_string())?
            .join()
            .map_err(|_| "panicked".to_string())?
    }

    /// Any JSON value of a few levels: strings with escapes and non-ASCII,
    /// integers and floats of every size, repeated keys possible.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            "[a-c\"\\\\/\\x00-\\x1fé密😀 ]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(6, 48, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[ab\"é]{0,2}", inner), 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2048))]

        /// The heap-stack parse gives serde_json's answer: the same value
        /// for every text serde_json reads (compact, pretty, with
        /// whitespace or a repeated key put in), and an error for every
        /// text it refuses (one byte of a valid text cut, doubled,
        /// replaced, or a byte that matters to JSON put in).
        #[test]
        fn parse_deep_agrees_with_serde_json(
            v in any_value(),
            pretty in proptest::bool::ANY,
            at in 0usize..10_000,
            edit in 0u8..5,
            byte in proptest::sample::select(b"[]{},:\" \n\t0-.e+\\tfnu1x".to_vec()),
        ) {
            let text = if pretty {
                serde_json::to_string_pretty(&v)
            } else {
                serde_json::to_string(&v)
            }
            .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let mut bytes = text.clone().into_bytes();
            // half the edits at a byte that shapes the text
            let marks: Vec<usize> = (0..bytes.len())
                .filter(|&k| b"[]{},:\"".contains(&bytes[k]))
                .collect();
            let at = match at % 2 {
                0 if !marks.is_empty() => marks[(at / 2) % marks.len()],
                _ => (at / 2) % (bytes.len() + 1),
            };
            match edit {
                0 => {}
                1 if at < bytes.len() => {
                    bytes.remove(at);
                }
                2 if at < bytes.len() => bytes.insert(at, bytes[at]),
                3 if at < bytes.len() => bytes[at] = byte,
                _ => bytes.insert(at, byte),
            }
            // an edit inside a multi-byte character is not a text
            let Ok(edited) = String::from_utf8(bytes) else {
                return Ok(());
            };
            for t in [text.as_str(), edited.as_str()] {
                let want = serde_json::from_str::<Value>(t).ok();
                let got = parse_deep(t).ok();
                proptest::prop_assert_eq!(got, want, "{}", t);
            }
        }
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
