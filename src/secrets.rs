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

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, Input, Span};
use regex::Regex;

/// One named shape of secret.
pub struct Rule {
    pub name: &'static str,
    pub pattern: &'static str,
    /// The capture group that is the secret (0: the whole match), e.g. the
    /// token after `Authorization: Bearer`.
    pub group: usize,
    /// A test the secret must pass besides the pattern.
    pub check: Option<fn(&str) -> bool>,
    /// What every match of the pattern contains: the pre-pass runs the rule
    /// only on a text where it finds this.
    pub needle: Needle,
}

/// What every match of a rule contains, verbatim. None of it is a JSON
/// escape (`"`, `\\`, control characters), so it also shows in a value's
/// serialized JSON wherever one of its strings holds it.
pub enum Needle {
    /// One of these literals.
    Any(&'static [&'static str]),
    /// This word in any ASCII case (the rule is `(?i)`, and none of the
    /// word's letters has a non-ASCII case fold: `caseless_needles_fold_only_in_ascii`).
    Caseless(&'static str),
    /// A dot, this many `[A-Za-z0-9_-]`, a dot.
    DotsApart(usize),
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
        needle: Needle::Any(&["sk-"]),
    },
    Rule {
        name: "github_token",
        pattern: r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})",
        group: 0,
        check: None,
        needle: Needle::Any(&["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"]),
    },
    Rule {
        name: "aws_access_key_id",
        pattern: r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
        group: 0,
        check: None,
        needle: Needle::Any(&["AKIA", "ASIA"]),
    },
    Rule {
        name: "slack_token",
        pattern: r"\bxox[abposr]-[A-Za-z0-9-]{10,}",
        group: 0,
        check: None,
        needle: Needle::Any(&["xox"]),
    },
    Rule {
        name: "telegram_bot_token",
        pattern: r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b",
        group: 0,
        check: None,
        needle: Needle::Any(&[":AA"]),
    },
    Rule {
        name: "discord_bot_token",
        pattern: r"\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}\b",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::DotsApart(6),
    },
    Rule {
        name: "google_api_key",
        pattern: r"\bAIza[0-9A-Za-z_-]{35}\b",
        group: 0,
        check: None,
        needle: Needle::Any(&["AIza"]),
    },
    Rule {
        name: "private_key",
        pattern: r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
        group: 0,
        check: None,
        needle: Needle::Any(&["-----BEGIN "]),
    },
    Rule {
        name: "jwt",
        pattern: r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
        group: 0,
        check: None,
        needle: Needle::Any(&["eyJ"]),
    },
    Rule {
        name: "bearer_token",
        pattern: r"(?i)\bbearer\s+([A-Za-z0-9._~+/-]{16,}=*)",
        group: 1,
        check: Some(digit_and_letter),
        needle: Needle::Caseless("earer"),
    },
];

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

/// A compiled rule: name, pattern, secret group, check, and its bit in
/// [`Prepass::rules`] (`None`: a user pattern, always run).
type Compiled = (
    &'static str,
    Regex,
    usize,
    Option<fn(&str) -> bool>,
    Option<usize>,
);

// one bit per built-in rule in `Prepass::rules`
const _: () = assert!(RULES.len() <= 64);

/// The pre-pass: which built-in rules can match a text, from their
/// [`Needle`]s. One SIMD (Teddy) search finds every literal at once, a
/// `memchr` loop the dot pairs; an Aho-Corasick automaton stands in where
/// Teddy cannot run. Most texts hold no needle, and then no rule runs.
#[derive(Debug, Clone)]
struct Prepass {
    teddy: Option<packed::Searcher>,
    /// Only when `teddy` is `None`.
    automaton: Option<AhoCorasick>,
    /// The rule of each literal, by its pattern index.
    rule_of: Vec<usize>,
    /// (rule, dots apart) of each [`Needle::DotsApart`].
    dots: Vec<(usize, usize)>,
}

/// How the pre-pass searches (the tests hold the three to the same spans;
/// a run only builds `Teddy`, which falls back to the automaton itself).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
enum Search {
    Teddy,
    Automaton,
    /// No search: every rule runs on every text.
    Off,
}

impl Needle {
    /// The literals the pre-pass searches for (none for `DotsApart`).
    fn literals(&self) -> Vec<String> {
        match *self {
            Needle::Any(ls) => ls.iter().map(|l| l.to_string()).collect(),
            Needle::Caseless(w) => ascii_cases(w),
            Needle::DotsApart(_) => Vec::new(),
        }
    }
}

/// Every ASCII-case spelling of `word`.
fn ascii_cases(word: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for c in word.chars() {
        let (lo, up) = (c.to_ascii_lowercase(), c.to_ascii_uppercase());
        out = out
            .into_iter()
            .flat_map(|s| {
                let mut v = vec![format!("{s}{lo}")];
                if up != lo {
                    v.push(format!("{s}{up}"));
                }
                v
            })
            .collect();
    }
    out
}

/// A dot, `n` token characters (`[A-Za-z0-9_-]`), a dot.
fn dots_apart(hay: &[u8], n: usize) -> bool {
    let token = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    memchr::memchr_iter(b'.', hay)
        .any(|i| hay.get(i + n + 1) == Some(&b'.') && hay[i + 1..i + n + 1].iter().all(token))
}

impl Prepass {
    fn new(rules: &[Rule], search: Search) -> Prepass {
        let (mut lits, mut rule_of, mut dots) = (Vec::new(), Vec::new(), Vec::new());
        for (i, r) in rules.iter().enumerate() {
            if let Needle::DotsApart(n) = r.needle {
                dots.push((i, n));
            }
            let spelled = r.needle.literals();
            rule_of.extend(spelled.iter().map(|_| i));
            lits.extend(spelled);
        }
        let teddy = matches!(search, Search::Teddy)
            .then(|| {
                let mut b = packed::Config::new()
                    .match_kind(packed::MatchKind::LeftmostFirst)
                    .builder();
                lits.iter().for_each(|l| {
                    b.add(l);
                });
                b.build()
            })
            .flatten();
        let automaton = match (search, &teddy) {
            (Search::Off, _) | (_, Some(_)) => None,
            _ => AhoCorasick::new(&lits).ok(),
        };
        Prepass {
            teddy,
            automaton,
            rule_of,
            dots,
        }
    }

    /// Bit `i` set: built-in rule `i` can match `text`. Every needle
    /// occurrence counts, overlapping ones too (the search restarts one byte
    /// after each start; at one start only one literal can match, as none is
    /// a prefix of another: `no_literal_is_a_prefix_of_another`).
    fn rules(&self, text: &str) -> u64 {
        let hay = text.as_bytes();
        let mut hit = 0u64;
        let mut at = 0;
        while at < hay.len() {
            let m = if let Some(t) = &self.teddy {
                t.find_in(hay, Span::from(at..hay.len()))
            } else if let Some(a) = &self.automaton {
                a.find(Input::new(hay).span(at..hay.len()))
            } else {
                return u64::MAX; // no searcher: every rule runs
            };
            let Some(m) = m else { break };
            hit |= 1 << self.rule_of[m.pattern().as_usize()];
            at = m.start() + 1;
        }
        for &(rule, n) in &self.dots {
            if dots_apart(hay, n) {
                hit |= 1 << rule;
            }
        }
        hit
    }
}

/// The compiled rules (built-in and `--secret-pattern`).
#[derive(Debug, Clone)]
pub struct Scanner {
    rules: Vec<Compiled>,
    /// Which built-in rules can match a text (most texts: none); only those
    /// run on their own. User patterns always run.
    prepass: Prepass,
    /// Some rule is a user pattern.
    user: bool,
}

impl Scanner {
    /// The built-in rules plus user patterns (already compiled).
    pub fn new(user: &[Regex]) -> Scanner {
        Scanner::with_search(user, Search::Teddy)
    }

    /// [`Scanner::new`] with its pre-pass searching as `search` says.
    fn with_search(user: &[Regex], search: Search) -> Scanner {
        let mut rules: Vec<Compiled> = RULES
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                Regex::new(r.pattern)
                    .ok()
                    .map(|re| (r.name, re, r.group, r.check, Some(i)))
            })
            .collect();
        rules.extend(user.iter().map(|re| (USER_RULE, re.clone(), 0, None, None)));
        Scanner {
            rules,
            prepass: Prepass::new(RULES, search),
            user: !user.is_empty(),
        }
    }

    /// Whether some rule can match a string of the JSON value serialized as
    /// `json` (`false`: redacting the value changes nothing). Needles show
    /// in JSON text as they are; a user pattern may not (it could match an
    /// escaped character), so with one this is always `true`.
    pub fn may_match_json(&self, json: &str) -> bool {
        self.user || self.prepass.rules(json) != 0
    }

    /// The secret spans of `text`: (start, end, rule), sorted, disjoint.
    pub fn find(&self, text: &str) -> Vec<(usize, usize, &'static str)> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        let hit = self.prepass.rules(text);
        if hit == 0 && !self.user {
            return Vec::new();
        }
        for (i, (_, re, group, check, bit)) in self.rules.iter().enumerate() {
            if bit.is_some_and(|b| hit & (1 << b) == 0) {
                continue;
            }
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
        let prepass = Prepass::new(RULES, Search::Teddy);
        for (input, want, rule) in cases {
            let i = RULES.iter().position(|r| r.name == *rule).unwrap_or(99);
            assert_ne!(
                prepass.rules(input) & (1 << i),
                0,
                "{rule}: needle not found"
            );
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

    /// A word character before a token: no boundary, so no secret, though
    /// the needle is there.
    #[test]
    fn the_rules_keep_their_word_boundaries() {
        let key = "sk-proj-4fT9xQ2mLp8vR3nK7wZ1";
        assert_eq!(redact(&format!("é{key}")).0, format!("é{key}"));
        assert_eq!(redact(&format!("x{key}")).0, format!("x{key}"));
        assert_eq!(redact(&format!("é {key}")).0, "é [redacted:sk_key]");
    }

    /// `(?i)` folds none of a caseless needle's letters to a non-ASCII
    /// character (as it does `k` to the Kelvin sign), so the ASCII spellings
    /// cover every text the rule matches.
    #[test]
    fn caseless_needles_fold_only_in_ascii() -> Result<(), Box<regex_syntax::Error>> {
        use regex_syntax::hir::{Class, HirKind};
        // the ranges `(?i)[letters]` matches, all ASCII or not
        let folds_in_ascii = |letters: &str| -> Result<Option<bool>, Box<regex_syntax::Error>> {
            let hir = regex_syntax::parse(&format!("(?i)[{letters}]"))?;
            Ok(match hir.kind() {
                HirKind::Class(Class::Unicode(class)) => {
                    Some(class.ranges().iter().all(|c| c.end().is_ascii()))
                }
                _ => None,
            })
        };
        let mut seen = 0;
        for r in RULES {
            let Needle::Caseless(word) = r.needle else {
                continue;
            };
            assert!(r.pattern.starts_with("(?i)"), "{}", r.name);
            assert_eq!(folds_in_ascii(word)?, Some(true), "{}", r.name);
            assert_eq!(ascii_cases(word).len(), 1 << word.len(), "{}", r.name);
            seen += 1;
        }
        assert_eq!(seen, 1);
        // the fold that would break it, for contrast: `k` and the Kelvin sign
        assert_eq!(folds_in_ascii("k")?, Some(false));
        Ok(())
    }

    /// Two literals where one is a prefix of the other would match at the
    /// same start, and the search, which reports one match per start, would
    /// hide the second rule.
    #[test]
    fn no_literal_is_a_prefix_of_another() {
        let lits: Vec<String> = RULES.iter().flat_map(|r| r.needle.literals()).collect();
        assert_eq!(lits.len(), 1 + 6 + 2 + 1 + 1 + 1 + 1 + 1 + 32);
        for (i, a) in lits.iter().enumerate() {
            for (j, b) in lits.iter().enumerate() {
                assert!(
                    i == j || !b.starts_with(a.as_str()),
                    "{a} is a prefix of {b}"
                );
            }
        }
    }

    /// The dot pair: exactly `n` token characters between the dots.
    #[test]
    fn dots_apart_counts_token_characters() {
        assert!(dots_apart(b"x.GhIjKl.y", 6));
        assert!(!dots_apart(b"x.GhIjK.y", 6));
        assert!(!dots_apart(b"x.GhI Kl.y", 6));
        assert!(!dots_apart(b"end.GhIjKl", 6));
        assert!(dots_apart(b"a.b.GhI-_l.", 6));
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
        /// The pre-pass only skips work: Teddy, the automaton and no pre-pass
        /// at all find the same spans, and a native's JSON text flags every
        /// value that redaction would change.
        #[test]
        fn the_prepass_never_hides_a_secret(
            words in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9_.:-]{1,12}",
                    Just("sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH".to_string()),
                    Just("ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R".to_string()),
                    Just("AKIAIOSFODNN7EXAMPLE".to_string()),
                    Just("xoxb-123456789012-1234".to_string()),
                    Just("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0".to_string()),
                    Just("MTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789".to_string()),
                    Just("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q".to_string()),
                    Just("-----BEGIN EC PRIVATE KEY-----\nMIIE".to_string()),
                    Just("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmN".to_string()),
                    "[bB][eE][aA][rR][eE][rR]\\s{1,2}[A-Za-z0-9]{14,20}",
                    "\\PC{0,8}",
                ],
                0..10,
            ),
            sep in prop_oneof![Just(" "), Just(""), Just("\n"), Just("\"")],
        ) {
            let text = words.join(sep);
            let off = Scanner::with_search(&[], Search::Off).find(&text);
            prop_assert_eq!(&Scanner::with_search(&[], Search::Teddy).find(&text), &off);
            prop_assert_eq!(&Scanner::with_search(&[], Search::Automaton).find(&text), &off);
            let value = serde_json::json!({ "k": [text.clone()], text.clone(): 1 });
            let json = value.to_string();
            if !off.is_empty() {
                prop_assert!(Scanner::new(&[]).may_match_json(&json), "{}", json);
            }
        }

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
