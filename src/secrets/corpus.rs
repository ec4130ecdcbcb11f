//! The secrets corpus's contexts as texts (`tests/secrets/corpus.json`,
//! made by `tests/secrets/make_corpus.py`): what the scanner sees when a
//! value is pasted in each, and which of the corpus's shapes the scanner
//! does not claim. Used by the scanner's corpus test
//! (`tests/secrets/REPORT.md`) and by the output test
//! (`tests/secrets.rs`), which plants it with nanobot's own code.

use serde_json::Value;

/// Python's `urllib.parse.quote(text, safe='')`.
fn percent_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A JSON string literal's inside, as `json.dumps` writes it
/// (`ensure_ascii`: every non-ASCII character as `\uXXXX`).
fn json_inside(text: &str, ensure_ascii: bool) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c if ensure_ascii && !c.is_ascii() => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// What the scanner does not claim, each with the false positive it avoids
/// (docs/design.md "Secrets", known misses): (family, shape, context).
pub const KNOWN_MISSES: &[(&str, &str, &str)] = &[
    // `sk-` + hex glued to a word is `task-38f1…`, `disk-eab7…`
    ("sk_generic", "sk-hex32", "letter_glued"),
    ("sk_generic", "sk-alnum48", "letter_glued"),
    // a test-mode Stripe key glued to a word is `task_test_MeHW…`
    ("stripe", "sk_test", "letter_glued"),
    // 32 hex glued to a word is an id (`tokenfeceb96…`)
    ("mailchimp", "hex-us", "letter_glued"),
    // a body after a prefix that could end a word, glued to one, is an
    // identifier (`kHMSymbolhf_generatedByHome…`)
    ("vendor_prefix", "hf", "letter_glued"),
];

/// `text` pasted in context `ctx` (a `contexts` entry), or `None` where the
/// context does not apply to it.
pub fn in_context(ctx: &Value, text: &str) -> Option<String> {
    let template = ctx["template"].as_str()?;
    let applies = match ctx["applies"].as_str().unwrap_or("all") {
        "url_safe" => text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._~:-".contains(&b)),
        "single_line" => !text.contains('\n'),
        _ => true,
    };
    if !applies {
        return None;
    }
    let filled = if ctx["transform"].as_str() == Some("percent_encode") {
        template.replace("{}", &percent_encode(text))
    } else {
        template.replace("{}", text)
    };
    let tool_args = ctx["placements"]
        .as_array()
        .is_some_and(|p| p.iter().any(|x| x == "tool_args"));
    Some(if tool_args {
        let ascii = ctx["id"].as_str() == Some("json_after_unicode");
        format!("{{\"content\": \"{}\"}}", json_inside(&filled, ascii))
    } else {
        filled
    })
}

/// The first 12-character window of `value` (all of it when shorter) that
/// `out` still holds.
pub fn leaked_window<'a>(value: &'a str, out: &str) -> Option<&'a str> {
    let chars: Vec<(usize, char)> = value.char_indices().collect();
    if chars.len() <= 12 {
        return out.contains(value).then_some(value);
    }
    (0..=chars.len() - 12).find_map(|i| {
        let start = chars[i].0;
        let end = chars.get(i + 12).map_or(value.len(), |c| c.0);
        let w = &value[start..end];
        out.contains(w).then_some(w)
    })
}
