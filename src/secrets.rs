//! The secret scanner: finds credential-shaped tokens in a text and replaces
//! only the matched span by `[redacted:<rule>]`. No I/O, no DuckDB (a fuzz
//! target drives it).
//!
//! ```text
//! "my key is sk-proj-4fT9…Qz, thanks"  ──redact──▶  "my key is [redacted:sk_key], thanks"
//!                                                   counts {"sk_key": 1}
//! ```
//! Rules are tried at every position; where matches overlap the earliest
//! wins (then the longest, then the first rule). A rule may check the token
//! it matched (an `sk-` word without a digit is a hyphenated word, not a
//! key). The marker never matches a rule, so redacting twice changes
//! nothing. User patterns (`--secret-pattern`) are the rule `secret_pattern`.

use std::collections::BTreeMap;

use regex::{Regex, RegexSet};

/// One named shape of secret.
pub struct Rule {
    pub name: &'static str,
    pub pattern: &'static str,
    /// The capture group that is the secret (0: the whole match), e.g. the
    /// token after `Authorization: Bearer`.
    pub group: usize,
    /// A test the secret must pass besides the pattern.
    pub check: Option<fn(&str) -> bool>,
}

fn digit_and_letter(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// The built-in rules, in precedence order for equal spans.
pub const RULES: &[Rule] = &[
    Rule {
        // OpenAI (`sk-`, `sk-proj-`), Anthropic (`sk-ant-api03-`), DeepSeek and most
        // OpenAI-compatible providers
        name: "sk_key",
        pattern: r"\bsk-[A-Za-z0-9_-]{20,}",
        group: 0,
        check: Some(digit_and_letter),
    },
    Rule {
        name: "github_token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        group: 0,
        check: None,
    },
    Rule {
        name: "aws_access_key_id",
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        group: 0,
        check: None,
    },
    Rule {
        name: "slack_token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        group: 0,
        check: None,
    },
    Rule {
        name: "telegram_bot_token",
        pattern: r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b",
        group: 0,
        check: None,
    },
    Rule {
        name: "discord_bot_token",
        pattern: r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        group: 0,
        check: Some(digit_and_letter),
    },
    Rule {
        name: "google_api_key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        group: 0,
        check: None,
    },
    Rule {
        name: "private_key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        group: 0,
        check: None,
    },
    Rule {
        name: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        group: 0,
        check: None,
    },
    Rule {
        name: "bearer_token",
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        group: 1,
        check: Some(digit_and_letter),
    },
];

/// A built-in rule's pattern for the pre-pass: without its word boundaries.
/// Unicode `\b` keeps the regex crate's DFAs off any non-ASCII text (its
/// Pike VM then took 70 % of a run); without them the pattern matches
/// wherever the rule does and more, and the rule itself, boundaries and
/// all, decides.
fn prefilter(pattern: &str) -> String {
    pattern.replace(r"\b", "")
}

/// The rule name of `--secret-pattern` matches.
pub const USER_RULE: &str = "secret_pattern";

/// The `&'static` name of a rule (built-in or [`USER_RULE`]) spelled `name`.
pub fn rule_name(name: &str) -> Option<&'static str> {
    RULES
        .iter()
        .map(|r| r.name)
        .chain([USER_RULE])
        .find(|r| *r == name)
}

/// What one scanner found, per rule.
pub type Counts = BTreeMap<&'static str, u64>;

/// A compiled rule: name, pattern, secret group, check.
type Compiled = (&'static str, Regex, usize, Option<fn(&str) -> bool>);

/// The compiled rules (built-in and `--secret-pattern`).
#[derive(Debug, Clone)]
pub struct Scanner {
    rules: Vec<Compiled>,
    /// Every rule's pattern at once, the built-in ones without their `\b`
    /// ([`prefilter`]): one DFA pass tells which rules can match (most
    /// texts: none), and only those run on their own.
    set: RegexSet,
}

impl Scanner {
    /// The built-in rules plus user patterns (already compiled).
    pub fn new(user: &[Regex]) -> Scanner {
        let mut rules: Vec<_> = RULES
            .iter()
            .filter_map(|r| {
                Regex::new(r.pattern)
                    .ok()
                    .map(|re| (r.name, re, r.group, r.check))
            })
            .collect();
        rules.extend(user.iter().map(|re| (USER_RULE, re.clone(), 0, None)));
        let patterns = RULES
            .iter()
            .filter(|r| Regex::new(r.pattern).is_ok())
            .map(|r| prefilter(r.pattern))
            .chain(user.iter().map(|re| re.as_str().to_string()));
        let set = RegexSet::new(patterns).unwrap_or_else(|_| RegexSet::empty());
        Scanner { rules, set }
    }

    /// The secret spans of `text`: (start, end, rule), sorted, disjoint.
    pub fn find(&self, text: &str) -> Vec<(usize, usize, &'static str)> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        let candidates: Vec<usize> = if self.set.len() == self.rules.len() {
            if !self.set.is_match(text) {
                return Vec::new();
            }
            self.set.matches(text).into_iter().collect()
        } else {
            (0..self.rules.len()).collect()
        };
        for i in candidates {
            let (_, re, group, check) = &self.rules[i];
            for caps in re.captures_iter(text) {
                let Some(m) = caps.get(*group) else { continue };
                if m.is_empty() || check.is_some_and(|c| !c(m.as_str())) {
                    continue;
                }
                found.push((m.start(), m.end(), i));
            }
        }
        // earliest first, then longest, then the first rule
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
        for (start, end, i) in found {
            if spans.last().is_some_and(|&(_, e, _)| start < e) {
                continue;
            }
            spans.push((start, end, self.rules[i].0));
        }
        spans
    }

    /// `text` with each secret span replaced by `[redacted:<rule>]`, counted
    /// into `counts`; `None` when nothing matched.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> Option<String> {
        let spans = self.find(text);
        if spans.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for (start, end, rule) in spans {
            out.push_str(&text[at..start]);
            out.push_str("[redacted:");
            out.push_str(rule);
            out.push(']');
            *counts.entry(rule).or_default() += 1;
            at = end;
        }
        out.push_str(&text[at..]);
        Some(out)
    }

    /// Redact a string in place.
    pub fn redact_in_place(&self, s: &mut String, counts: &mut Counts) {
        if let Some(r) = self.redact(s, counts) {
            *s = r;
        }
    }

    /// Redact every string (keys too) of a JSON value in place.
    pub fn redact_json(&self, v: &mut serde_json::Value, counts: &mut Counts) {
        use serde_json::Value;
        match v {
            Value::String(s) => self.redact_in_place(s, counts),
            Value::Array(a) => a.iter_mut().for_each(|x| self.redact_json(x, counts)),
            Value::Object(o) => self.redact_map(o, counts),
            _ => {}
        }
    }

    /// Redact every key and string value of a JSON object in place.
    pub fn redact_map(
        &self,
        m: &mut serde_json::Map<String, serde_json::Value>,
        counts: &mut Counts,
    ) {
        let keys: Vec<String> = m
            .keys()
            .filter(|k| !self.find(k).is_empty())
            .cloned()
            .collect();
        for k in keys {
            if let (Some(v), Some(nk)) = (m.remove(&k), self.redact(&k, counts)) {
                m.insert(nk, v);
            }
        }
        m.values_mut().for_each(|x| self.redact_json(x, counts));
    }
}

/// Counts as the JSON text of `sources.redactions` (`{}` when none).
pub fn counts_json(counts: &Counts) -> String {
    serde_json::to_string(counts).unwrap_or_else(|_| "{}".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn redact(s: &str) -> (String, Counts) {
        let mut c = Counts::new();
        let out = Scanner::new(&[])
            .redact(s, &mut c)
            .unwrap_or_else(|| s.to_string());
        (out, c)
    }

    /// One positive per rule: only the token goes, the rest of the text stays.
    #[test]
    fn every_rule_redacts_only_its_token() {
        let cases: &[(&str, &str, &str)] = &[
            (
                "key: sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH6jD0sA9e please",
                "key: [redacted:sk_key] please",
                "sk_key",
            ),
            (
                "ANTHROPIC_API_KEY=sk-ant-api03-Zx8Qm3Lp9Vt2Rk7Ws4Nb6Yc1Hd5Jf0GgTtUu-AbCd",
                "ANTHROPIC_API_KEY=[redacted:sk_key]",
                "sk_key",
            ),
            (
                "token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R done",
                "token [redacted:github_token] done",
                "github_token",
            ),
            (
                "github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789",
                "[redacted:github_token]",
                "github_token",
            ),
            (
                "aws AKIAIOSFODNN7EXAMPLE x",
                "aws [redacted:aws_access_key_id] x",
                "aws_access_key_id",
            ),
            (
                "slack xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
                "slack [redacted:slack_token]",
                "slack_token",
            ),
            (
                "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 ok",
                "bot [redacted:telegram_bot_token] ok",
                "telegram_bot_token",
            ),
            (
                "MTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
                "[redacted:discord_bot_token]",
                "discord_bot_token",
            ),
            (
                "maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q end",
                "maps [redacted:google_api_key] end",
                "google_api_key",
            ),
            (
                "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter",
                "[redacted:private_key]\nafter",
                "private_key",
            ),
            (
                "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;",
                "t=[redacted:jwt];",
                "jwt",
            ),
            (
                "Authorization: Bearer 9f8e7d6c5b4a39281706abcdefAB ok",
                "Authorization: Bearer [redacted:bearer_token] ok",
                "bearer_token",
            ),
        ];
        for (input, want, rule) in cases {
            let (got, counts) = redact(input);
            assert_eq!(&got, want, "{rule}");
            assert_eq!(counts.get(rule), Some(&1), "{rule}: {counts:?}");
            assert_eq!(counts.values().sum::<u64>(), 1, "{rule}: {counts:?}");
        }
        let names: Vec<&str> = RULES.iter().map(|r| r.name).collect();
        for n in &names {
            assert!(
                cases.iter().any(|(_, _, r)| r == n),
                "no positive case for {n}"
            );
        }
    }

    /// Texts that look random or technical but hold no secret stay untouched.
    #[test]
    fn the_prepass_drops_only_word_boundaries_and_the_rules_keep_them() {
        for r in RULES {
            let p = prefilter(r.pattern);
            assert!(!p.contains(r"\b") && Regex::new(&p).is_ok(), "{}", r.name);
        }
        // a word character before the token: no boundary, so no secret, though
        // the pre-pass (no boundaries) flags the text
        let key = "sk-proj-4fT9xQ2mLp8vR3nK7wZ1";
        assert_eq!(redact(&format!("é{key}")).0, format!("é{key}"));
        assert_eq!(redact(&format!("x{key}")).0, format!("x{key}"));
        assert_eq!(redact(&format!("é {key}")).0, "é [redacted:sk_key]");
    }

    #[test]
    fn lookalikes_survive() {
        let negatives = [
            "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
            "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "session 5b0f3c1e-8a2d-4e6f-9b1c-7d3e2f1a0b9c",
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
            r#"{"type":"text","value":"the value of a paragraph in mdast"}"#,
            "a risk-free, well-known, state-of-the-art sk-learn-compatible-estimator-interface",
            "bearer of bad news: the bearer token is missing",
            "AKIA is a prefix; AKIAshort is not a key",
            "call_0 call_1 toolu_01ABCdefGHIjklMNOpqrSTUvw msg_01XyZ",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        ];
        for n in negatives {
            assert_eq!(redact(n), (n.to_string(), Counts::new()), "{n}");
        }
        let long = "line of tool output 0123456789 abcdef\n".repeat(5000);
        assert_eq!(redact(&long).0, long);
    }

    #[test]
    fn user_patterns_are_the_secret_pattern_rule() -> Result<(), regex::Error> {
        let s = Scanner::new(&[Regex::new(r"corp-[0-9]{6}")?]);
        let mut c = Counts::new();
        assert_eq!(
            s.redact(
                "id corp-123456 and sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH",
                &mut c
            )
            .as_deref(),
            Some("id [redacted:secret_pattern] and [redacted:sk_key]")
        );
        assert_eq!(counts_json(&c), r#"{"secret_pattern":1,"sk_key":1}"#);
        Ok(())
    }

    #[test]
    fn json_strings_and_keys_are_redacted_in_place() {
        let s = Scanner::new(&[]);
        let mut v = serde_json::json!({
            "arguments": {"env": ["OPENAI_API_KEY=sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH"]},
            "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R": 1,
            "n": 7
        });
        let mut c = Counts::new();
        s.redact_json(&mut v, &mut c);
        assert_eq!(
            v,
            serde_json::json!({
                "arguments": {"env": ["OPENAI_API_KEY=[redacted:sk_key]"]},
                "[redacted:github_token]": 1,
                "n": 7
            })
        );
        assert_eq!(c.values().sum::<u64>(), 2);
    }

    proptest! {
        /// Redacting a redacted text changes nothing, and a text without a
        /// match is returned as it is.
        #[test]
        fn redaction_is_idempotent(
            words in proptest::collection::vec(
                prop_oneof![
                    "[a-z]{1,12}",
                    "[0-9a-f]{40}",
                    Just("sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH".to_string()),
                    Just("AKIAIOSFODNN7EXAMPLE".to_string()),
                    Just("Bearer 9f8e7d6c5b4a39281706abcdefAB".to_string()),
                    "\\PC{0,20}",
                ],
                0..12,
            )
        ) {
            let text = words.join(" ");
            let s = Scanner::new(&[]);
            let mut c = Counts::new();
            match s.redact(&text, &mut c) {
                None => prop_assert!(s.find(&text).is_empty()),
                Some(once) => {
                    let mut c2 = Counts::new();
                    prop_assert_eq!(s.redact(&once, &mut c2), None);
                    prop_assert!(c2.is_empty());
                }
            }
        }
    }
}
