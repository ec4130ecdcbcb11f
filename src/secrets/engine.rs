//! The scanner's engine: the pre-pass over needles, the rules run with
//! their boundaries, checks and cut starts, and redaction of texts and
//! JSON values. The rules themselves are data (`rules.rs`).

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use aho_corasick::packed;
use aho_corasick::{AhoCorasick, Input, Span};
use regex::Regex;

use super::rules::{RULES, SECRET_NAME, assigned_value};

/// One named shape of secret.
pub struct Rule {
    /// The family: `[redacted:<name>]`, the key of `sources.redactions`.
    /// Several entries may share one.
    pub name: &'static str,
    pub pattern: &'static str,
    /// The capture group that is the secret (0: the whole match), e.g. the
    /// token after `Authorization: Bearer`.
    pub group: usize,
    /// A test the secret must pass besides the pattern.
    pub check: Option<fn(&str) -> bool>,
    /// What every match of the pattern (and of `cut`) contains: the pre-pass
    /// runs the rule only on a text where it finds this.
    pub needle: Needle,
    /// Bytes that may not stand right before the match (`None`: any may);
    /// a JSON escape (`\n`, `\"`, `\u00e9`) or a percent-escape (`%20`)
    /// that ends there is no such byte ([`left_ok`]).
    pub left: Option<fn(u8) -> bool>,
    /// Bytes that may not follow the secret.
    pub right: Option<fn(u8) -> bool>,
    /// Context the secret needs around it (text, start, end).
    pub near: Option<fn(&str, usize, usize) -> bool>,
    /// A recognisable start of the token: redacted where the text ends
    /// right after it or a preview's `…` follows it (nanobot's sidebar
    /// preview, a torn line, a 200-character bad-line preview). Its group 1,
    /// if it has one, is the secret.
    pub cut: Option<&'static str>,
    /// The test a cut start's secret must pass in place of `check` (a
    /// start is shorter than any whole token: `Basic` + the first bytes of
    /// its base64 holds no `:` yet).
    pub cut_check: Option<fn(&str) -> bool>,
}

/// What every match of a rule contains, verbatim. A literal holding a
/// character JSON escapes (a tab) is also searched escaped
/// ([`literals`]), so a needle shows in a value's serialized JSON wherever
/// one of its strings holds it.
pub enum Needle {
    /// One of these literals.
    Any(&'static [&'static str]),
    /// A dot, this many `[A-Za-z0-9_-]`, a dot.
    DotsApart(usize),
    /// A check of the whole text (a shape too short for a literal).
    Custom(fn(&[u8]) -> bool),
    /// A check at each `.` of the text (the text, the dot's index): the
    /// rules whose shape is anchored on a dot share one pass over the dots.
    AtDot(fn(&[u8], usize) -> bool),
    /// An `=` or `:` after a name ending in `key`, `token`, `secret`,
    /// `pass`, `pwd`, `passwd` or `password` in lower, upper or title case
    /// (a quote, an escaped quote and blanks may stand between): one of
    /// [`NAME_ENDS`] with the sign after it.
    Assign,
}

/// The rule name of `--secret-pattern` matches.
pub const USER_RULE: &str = "secret_pattern";

/// The rule name of a JSON value under a secret-named key.
pub const NAMED_RULE: &str = "secret_assignment";

/// The rule name of a nanoclaw credential field (`[redacted:field]`,
/// `src/sources/nanoclaw/content.rs`), counted with the scanner's.
pub const FIELD_RULE: &str = "field";

/// The marker of a nanoclaw credential field.
pub const FIELD_MARKER: &str = "[redacted:field]";

/// The `&'static` name of a rule (built-in, [`USER_RULE`], [`NAMED_RULE`],
/// [`FIELD_RULE`]) spelled `name`.
pub fn rule_name(name: &str) -> Option<&'static str> {
    RULES
        .iter()
        .map(|r| r.name)
        .chain([USER_RULE, NAMED_RULE, FIELD_RULE])
        .find(|r| *r == name)
}

/// The family names of the built-in rules, each once, in table order.
pub fn families() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for r in RULES {
        if !out.contains(&r.name) {
            out.push(r.name);
        }
    }
    out
}

/// What one scanner found, per rule.
pub type Counts = BTreeMap<&'static str, u64>;

/// A rule ready to run.
#[derive(Debug, Clone)]
struct Compiled {
    name: &'static str,
    re: Pattern,
    group: usize,
    check: Option<fn(&str) -> bool>,
    cut_check: Option<fn(&str) -> bool>,
    left: Option<fn(u8) -> bool>,
    right: Option<fn(u8) -> bool>,
    near: Option<fn(&str, usize, usize) -> bool>,
    /// Its bit in [`Prepass::rules_of_text`] (`None`: a user pattern, always run).
    bit: Option<usize>,
    /// An [`Needle::Assign`] rule: run only around each assignment's sign
    /// ([`assignment_window`]), not over the whole text.
    windowed: bool,
}

/// A rule's regex: a built-in rule's (with its cut start's), compiled where
/// the pre-pass first lets it run ([`builtin_regexes`]), or a user pattern.
#[derive(Debug, Clone)]
enum Pattern {
    Builtin(usize),
    User(Regex),
}

/// A rule's regex and its cut start's.
type RuleRegexes = (Regex, Option<Regex>);

/// Each built-in rule's regex and `(?:<cut>)(?:…|\z)`, compiled once per
/// process the first time the rule runs: most rules never run on a home,
/// and compiling all of them costs more than scanning a small home.
static BUILTIN_REGEXES: LazyLock<Vec<OnceLock<Option<RuleRegexes>>>> =
    LazyLock::new(|| RULES.iter().map(|_| OnceLock::new()).collect());

/// Built-in rule `i`'s regexes ([`BUILTIN_REGEXES`]); `None` for a pattern
/// that does not compile (`every_rule_compiles` keeps there being none).
pub(super) fn builtin_regexes(i: usize) -> Option<(&'static Regex, Option<&'static Regex>)> {
    let (re, cut) = BUILTIN_REGEXES
        .get(i)?
        .get_or_init(|| {
            let r = RULES.get(i)?;
            let re = Regex::new(r.pattern).ok()?;
            let cut = r
                .cut
                .and_then(|c| Regex::new(&format!("(?:{c})(?:…|\\z)")).ok());
            Some((re, cut))
        })
        .as_ref()?;
    Some((re, cut.as_ref()))
}

/// Texts shorter than this are searched by the automaton: each Teddy
/// searcher costs a setup per call (and falls back to Rabin-Karp on a
/// haystack shorter than its minimum).
const SHORT_TEXT: usize = 256;

/// The most literals one packed (Teddy) searcher takes.
const TEDDY_LITERALS: usize = 128;

/// The ends of a secret-named key, in the cases [`Needle::Assign`]'s
/// rule spells them (`token`/`Token` → `oken`, `password`/`Password` →
/// `word`, `pass`/`Pass` → `ass`): the pre-pass finds one and looks for
/// the sign after it ([`sign_after`]).
pub(super) const NAME_ENDS: &[&str] = &[
    "key", "Key", "KEY", "oken", "OKEN", "ecret", "ECRET", "word", "WORD", "swd", "SWD", "pwd",
    "Pwd", "PWD", "ass", "ASS",
];

// one bit per built-in rule in `Prepass::rules_of_text`
const _: () = assert!(RULES.len() <= 128);

/// The pre-pass: which built-in rules can match a text, from their
/// [`Needle`]s. SIMD (Teddy) searches find the literals of a long text —
/// the name ends of assignments, the 3-byte literals and the longer ones
/// apart, each searcher's buckets packed with look-alikes
/// ([`bucket_order`]); an Aho-Corasick automaton over every literal
/// searches the short texts; `memchr` loops the dot pairs and the custom
/// shapes. Most texts hold no needle, and then no rule runs.
#[derive(Debug, Clone)]
pub(super) struct Prepass {
    /// Each searcher with the rules of each of its literals, by pattern index.
    pub(super) teddy: Vec<(packed::Searcher, Vec<u128>)>,
    /// The rules of each searcher's literals, together.
    teddy_rules: Vec<u128>,
    /// The rules of every literal.
    all: u128,
    /// Every literal: for the texts shorter than [`SHORT_TEXT`], and all
    /// texts when `teddy` is empty.
    automaton: Option<AhoCorasick>,
    /// The rules of each literal, by its pattern index in `automaton`.
    rules_of: Vec<u128>,
    /// (rule, dots apart) of each [`Needle::DotsApart`].
    dots: Vec<(usize, usize)>,
    /// (rule, check) of each [`Needle::Custom`].
    custom: Vec<(usize, Check)>,
    /// (rule, check) of each [`Needle::AtDot`], and their rules together.
    at_dot: Vec<(usize, DotCheck)>,
    at_dot_rules: u128,
    /// The rules of [`Needle::Assign`].
    assign: u128,
}

/// A [`Needle::Custom`] check of a whole text.
type Check = fn(&[u8]) -> bool;

/// A [`Needle::AtDot`] check at one dot.
type DotCheck = fn(&[u8], usize) -> bool;

/// A literal's low nybbles in the fingerprinted bytes, and the (low, high)
/// nybble sets of its unit's literals per byte ([`bucket_order`]).
type Unit = (Vec<u8>, [(u16, u16); 4]);

/// How the pre-pass searches (the tests hold the three to the same spans;
/// a run only builds `Teddy`, which falls back to the automaton itself).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub(super) enum Search {
    Teddy,
    Automaton,
    /// No search: every rule runs on every text.
    Off,
}

/// The literals the pre-pass searches for, each with the rules it stands
/// for. A literal that starts with another is folded into it (the search
/// reports one literal per start, so the longer one could hide): wherever
/// the longer one is, the shorter one is too. So is a literal that holds
/// another anywhere (`sk_live_` holds `k_live_`), unless that one is a
/// name end: its sign is looked for after its own end, and its rules
/// would run on every text with a `key` in it.
pub(super) fn literals(rules: &[Rule]) -> Vec<(String, u128)> {
    let assign = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| matches!(r.needle, Needle::Assign))
        .fold(0u128, |a, (i, _)| a | 1 << i);
    let mut by: BTreeMap<String, u128> = BTreeMap::new();
    for (i, r) in rules.iter().enumerate() {
        let ls = match r.needle {
            Needle::Any(ls) => ls,
            Needle::Assign => NAME_ENDS,
            _ => continue,
        };
        for l in ls {
            *by.entry((*l).to_string()).or_default() |= 1 << i;
            // a character JSON escapes (a tab) shows escaped in a serialized
            // value: the literal up to its first escape stands for it there
            // (`-u` and a tab: `-u\`, one more 3-byte literal)
            if let Some(part) = serde_json::to_string(l)
                .ok()
                .filter(|q| q.len() != l.len() + 2)
                .and_then(|q| {
                    let inner = q.get(1..q.len().saturating_sub(1))?;
                    let cut = inner.find('\\').map_or(inner.len(), |k| (k + 1).max(3));
                    inner.get(..cut.min(inner.len())).map(str::to_string)
                })
            {
                *by.entry(part).or_default() |= 1 << i;
            }
        }
    }
    let mut all: Vec<(String, u128)> = by.into_iter().collect();
    all.sort_by(|a, b| a.0.len().cmp(&b.0.len()).then(a.0.cmp(&b.0)));
    let mut kept: Vec<(String, u128)> = Vec::new();
    for (lit, mask) in all {
        match kept.iter_mut().find(|(k, m)| {
            lit.starts_with(k.as_str()) || (*m & assign == 0 && lit.contains(k.as_str()))
        }) {
            Some((_, m)) => *m |= mask,
            None => kept.push((lit, mask)),
        }
    }
    kept
}

/// A dot, `n` token characters (`[A-Za-z0-9_-]`), a dot.
pub(super) fn dots_apart(hay: &[u8], n: usize) -> bool {
    let token = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-';
    memchr::memchr_iter(b'.', hay)
        .any(|i| hay.get(i + n + 1) == Some(&b'.') && hay[i + 1..i + n + 1].iter().all(token))
}

/// Whether an assignment's sign follows a name that ends at `end`: a
/// quote (escaped or not) and blanks may stand between ([`Needle::Assign`]).
/// In `json` (a `native` serialized), a `:` right after an unescaped `"`
/// separates a key of the object from its value: the object's keys are
/// checked on the value itself ([`Scanner::may_match_native`]), so only an
/// assignment inside a string counts.
pub(super) fn sign_after(hay: &[u8], end: usize, json: bool) -> bool {
    let mut i = end;
    match hay.get(i) {
        Some(b'"' | b'\'') => i += 1,
        Some(b'\\') if matches!(hay.get(i + 1), Some(b'"' | b'\'')) => i += 2,
        // in serialized JSON a string's own `\"` is `\\\"`, its `\'` is `\\'`
        Some(b'\\') if json && hay[i..].starts_with(b"\\\\\\\"") => i += 4,
        Some(b'\\') if json && hay[i..].starts_with(b"\\\\'") => i += 3,
        _ => {}
    }
    // a PHP or Ruby array key: `$config['secret_key'] => …`
    if hay.get(i) == Some(&b']') {
        i += 1;
    }
    // a tab shows as `\t` in serialized JSON
    loop {
        match (hay.get(i), hay.get(i + 1)) {
            (Some(b' ' | b'\t'), _) => i += 1,
            (Some(b'\\'), Some(b't')) => i += 2,
            _ => break,
        }
    }
    match hay.get(i) {
        Some(b'=') => true,
        Some(b':') => !(json && hay[i - 1] == b'"' && (i < 2 || hay[i - 2] != b'\\')),
        _ => false,
    }
}

/// The first place in `hay[from..]` where a sign may stand whose
/// [`assignment_window`] reaches the end of `hay`: the value after it
/// holds no whitespace, so the sign is in the last run of non-whitespace,
/// or right before the blanks before it (an `=>`'s `>` between).
fn last_value(hay: &[u8], from: usize) -> usize {
    let Some(tail) = hay.get(from..) else {
        return hay.len();
    };
    let Some(ws) = tail.iter().rposition(u8::is_ascii_whitespace) else {
        return from;
    };
    let mut q = from + ws + 1;
    while q > from && matches!(hay[q - 1], b' ' | b'\t') {
        q -= 1;
    }
    q.saturating_sub(2).max(from)
}

/// Where each assignment's `=` or `:` from `from` on stands
/// ([`Needle::Assign`]).
fn assignments(hay: &[u8], from: usize) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr2_iter(b'=', b':', hay.get(from..).unwrap_or_default())
        .map(move |i| i + from)
        .filter(move |&i| ends_secretish(&hay[..name_end(hay, i)]))
}

/// Where the name before the `=` or `:` at `i` ends: blanks and a quote
/// (escaped or not) may stand between.
#[inline]
fn name_end(hay: &[u8], i: usize) -> usize {
    let mut j = i;
    while j > 0 && matches!(hay[j - 1], b' ' | b'\t') {
        j -= 1;
    }
    if j > 0 && hay[j - 1] == b']' {
        j -= 1;
    }
    if j > 0 && matches!(hay[j - 1], b'"' | b'\'') {
        j -= 1;
        if j > 0 && hay[j - 1] == b'\\' {
            j -= 1;
        }
    }
    j
}

/// The stretch of `text` an assignment whose sign stands at `i` can span:
/// the name's characters before it, the blanks, quotes and the value after
/// it (a value holds no blank).
fn assignment_window(text: &str, i: usize) -> (usize, usize) {
    let b = text.as_bytes();
    let mut start = name_end(b, i);
    while start > 0
        && (b[start - 1].is_ascii_alphanumeric() || matches!(b[start - 1], b'_' | b'.' | b'-'))
    {
        start -= 1;
    }
    let mut end = i + 1;
    if b.get(end) == Some(&b'>') {
        end += 1;
    }
    while end < b.len() && matches!(b[end], b' ' | b'\t') {
        end += 1;
    }
    while end < b.len() && !b[end].is_ascii_whitespace() {
        end += 1;
    }
    while !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// `name` ends in `key`, `token`, `secret`, `pass`, `pwd`, `passwd` or
/// `password`, in any ASCII case.
#[inline]
pub(super) fn ends_secretish(name: &[u8]) -> bool {
    let ends =
        |w: &[u8]| name.len() >= w.len() && name[name.len() - w.len()..].eq_ignore_ascii_case(w);
    // most names are rejected on their last byte, the rest on one or three
    // comparisons
    match name.last().map(u8::to_ascii_lowercase) {
        Some(b'y') => ends(b"key"),
        Some(b'n') => ends(b"token"),
        Some(b't') => ends(b"secret"),
        Some(b's') => ends(b"pass"),
        Some(b'd') => ends(b"pwd") || ends(b"passwd") || ends(b"password"),
        _ => false,
    }
}

/// How often a byte stands in ordinary text, roughly (a space in six, a
/// lower-case letter by its English frequency, upper case, digits and
/// punctuation far less): the model [`bucket_order`] packs buckets by.
fn byte_weight(b: u8) -> f64 {
    // a..z, per mille
    const LOWER: [f64; 26] = [
        82.0, 15.0, 28.0, 43.0, 127.0, 22.0, 20.0, 61.0, 70.0, 1.5, 7.7, 40.0, 24.0, 67.0, 75.0,
        19.0, 1.0, 60.0, 63.0, 91.0, 28.0, 9.8, 24.0, 1.5, 20.0, 0.7,
    ];
    match b {
        b' ' => 200.0,
        b'a'..=b'z' => LOWER[usize::from(b - b'a')] * 0.6,
        b'A'..=b'Z' => LOWER[usize::from(b - b'A')] * 0.05,
        b'0'..=b'9' => 3.0,
        b'\n' | b'.' | b',' | b'"' | b'/' | b'_' | b'-' | b':' | b'=' | b'(' | b')' | b'\'' => 6.0,
        0x21..=0x7e => 1.0,
        _ => 0.5,
    }
}

/// The order to add `lits` to a Teddy searcher in so that each bucket holds
/// look-alikes. Teddy puts the literal added `i`-th into bucket `i mod n`
/// (reversed; n = 8 up to 32 literals, else 16), unless an earlier one has
/// the same low nybbles in the fingerprinted bytes (`key`, `Key`, `KEY`),
/// whose bucket it joins; it flags a text position when each of its first
/// bytes matches some literal of a bucket in both nybbles, taken apart:
/// `sk-` and `ghp_` in one bucket also flag `gk`, `sh`, `wo`… Greedy, then
/// pairwise swaps, minimise the flagged share of ordinary text
/// ([`byte_weight`]) summed over buckets.
pub(super) fn bucket_order(lits: &[(String, u128)]) -> Vec<usize> {
    let n = lits.len();
    let buckets = if n > 32 { 16 } else { 8 };
    let mask = lits.iter().map(|(l, _)| l.len()).min().unwrap_or(1).min(4);
    // the weight of the bytes with each (high, low) nybble pair
    let mut w = [[0f64; 16]; 16];
    let total: f64 = (0..=255u8).map(byte_weight).sum();
    for b in 0..=255u8 {
        w[usize::from(b >> 4)][usize::from(b & 15)] = byte_weight(b) / total;
    }
    // units: literals with the same low nybbles, which share a bucket; each
    // with its (low, high) nybble sets per fingerprinted byte
    let mut units: Vec<Unit> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, (l, _)) in lits.iter().enumerate() {
        let bytes = &l.as_bytes()[..mask];
        let lo: Vec<u8> = bytes.iter().map(|b| b & 15).collect();
        let k = match units.iter().position(|u| u.0 == lo) {
            Some(k) => k,
            None => {
                units.push((lo, [(0, 0); 4]));
                members.push(Vec::new());
                units.len() - 1
            }
        };
        for (j, b) in bytes.iter().enumerate() {
            units[k].1[j].0 |= 1 << (b & 15);
            units[k].1[j].1 |= 1 << (b >> 4);
        }
        members[k].push(i);
    }
    // the share of text a bucket of these units flags
    let cost = |group: &[usize]| -> f64 {
        if group.is_empty() {
            return 0.0;
        }
        (0..mask)
            .map(|j| {
                let (lo, hi) = group.iter().fold((0u16, 0u16), |(lo, hi), &u| {
                    (lo | units[u].1[j].0, hi | units[u].1[j].1)
                });
                let bits = |mut set: u16| {
                    std::iter::from_fn(move || {
                        (set != 0).then(|| {
                            let b = set.trailing_zeros() as usize;
                            set &= set - 1;
                            b
                        })
                    })
                };
                bits(hi)
                    .flat_map(|h| bits(lo).map(move |l| (h, l)))
                    .map(|(h, l)| w[h][l])
                    .sum::<f64>()
            })
            .product()
    };
    // the unit leaders take the first ids, the rest follow their leaders
    let bucket_of = |id: usize| buckets - 1 - id % buckets;
    let cap: Vec<usize> = (0..buckets)
        .map(|b| (0..units.len()).filter(|&id| bucket_of(id) == b).count())
        .collect();
    let mut groups: Vec<Vec<usize>> = vec![Vec::new(); buckets];
    // the units that flag most text first, each where it adds least
    let mut order: Vec<usize> = (0..units.len()).collect();
    order.sort_by(|&a, &b| cost(&[b]).total_cmp(&cost(&[a])).then(a.cmp(&b)));
    for u in order {
        let added = |g: &Vec<usize>| {
            let mut with = g.clone();
            with.push(u);
            cost(&with) - cost(g)
        };
        if let Some(best) = (0..buckets)
            .filter(|&b| groups[b].len() < cap[b])
            .min_by(|&a, &b| added(&groups[a]).total_cmp(&added(&groups[b])))
        {
            groups[best].push(u);
        }
    }
    // pairwise swaps while one lowers the sum
    let mut costs: Vec<f64> = groups.iter().map(|g| cost(g)).collect();
    for _ in 0..2 {
        let mut improved = false;
        for a in 0..buckets {
            for b in a + 1..buckets {
                for x in 0..groups[a].len() {
                    for y in 0..groups[b].len() {
                        let (ua, ub) = (groups[a][x], groups[b][y]);
                        groups[a][x] = ub;
                        groups[b][y] = ua;
                        let (ca, cb) = (cost(&groups[a]), cost(&groups[b]));
                        if ca + cb < (costs[a] + costs[b]) * 0.999 {
                            (costs[a], costs[b]) = (ca, cb);
                            improved = true;
                        } else {
                            groups[a][x] = ua;
                            groups[b][y] = ub;
                        }
                    }
                }
            }
        }
        if !improved {
            break;
        }
    }
    let mut next = vec![0usize; buckets];
    let leaders: Vec<usize> = (0..units.len())
        .map(|id| {
            let b = bucket_of(id);
            next[b] += 1;
            groups[b][next[b] - 1]
        })
        .collect();
    leaders
        .iter()
        .map(|&u| members[u][0])
        .chain(
            leaders
                .iter()
                .flat_map(|&u| members[u][1..].iter().copied()),
        )
        .collect()
}

/// The most literals a slim Teddy searcher takes (it scans twice the
/// bytes a step of a fat one, which takes up to [`TEDDY_LITERALS`]).
const SLIM_LITERALS: usize = 32;

/// Keep the long literals to one searcher: past [`TEDDY_LITERALS`], those
/// whose first three bytes are rarest in text ([`byte_weight`]) join the
/// 3-byte searchers `into`, each while it stays slim, or, already fat,
/// while it holds no more than a searcher takes. A second pass over each
/// long text costs more than the few candidates they add there; and the
/// name ends' searcher, the last, stops at a text's first assignment only
/// while it holds no literal of another rule.
fn spill(long: &mut Vec<(String, u128)>, into: [&mut Vec<(String, u128)>; 2]) {
    if long.len() <= TEDDY_LITERALS {
        return;
    }
    let weight = |l: &str| l.bytes().take(3).map(byte_weight).product::<f64>();
    // the most common first, so the rarest are popped off the end
    long.sort_by(|a, b| weight(&b.0).total_cmp(&weight(&a.0)).then(a.0.cmp(&b.0)));
    for class in into {
        let room = if class.len() > SLIM_LITERALS {
            TEDDY_LITERALS
        } else {
            SLIM_LITERALS
        };
        while long.len() > TEDDY_LITERALS && class.len() < room {
            if let Some(l) = long.pop() {
                class.push(l);
            }
        }
    }
}

impl Prepass {
    fn new(rules: &[Rule], search: Search) -> Prepass {
        let lits = literals(rules);
        let mut dots = Vec::new();
        let mut custom = Vec::new();
        let mut at_dot: Vec<(usize, DotCheck)> = Vec::new();
        let mut assign = 0u128;
        for (i, r) in rules.iter().enumerate() {
            match r.needle {
                Needle::DotsApart(n) => dots.push((i, n)),
                Needle::Custom(f) => custom.push((i, f)),
                Needle::AtDot(f) => at_dot.push((i, f)),
                Needle::Assign => assign |= 1 << i,
                Needle::Any(_) => {}
            }
        }
        // one searcher per literal length class (a Teddy searcher
        // fingerprints as many leading bytes as its shortest literal has, up
        // to four), its literals ordered into buckets of look-alikes
        // ([`bucket_order`]): a bucket of unlike literals fingerprints half
        // of all text, and its verification drowns in candidates
        // the name ends, common words, search apart (their searcher stops
        // at the first assignment)
        let (mut ends, rest): (Vec<_>, Vec<_>) =
            lits.iter().cloned().partition(|(_, m)| m & assign != 0);
        let (mut short, mut long): (Vec<_>, Vec<_>) =
            rest.into_iter().partition(|(l, _)| l.len() < 4);
        spill(&mut long, [&mut short, &mut ends]);
        let teddy: Vec<(packed::Searcher, Vec<u128>)> = if matches!(search, Search::Teddy) {
            ends.chunks(TEDDY_LITERALS)
                .chain(short.chunks(TEDDY_LITERALS))
                .chain(long.chunks(TEDDY_LITERALS))
                .map(|chunk| {
                    let order = bucket_order(chunk);
                    let mut b = packed::Config::new()
                        .match_kind(packed::MatchKind::LeftmostFirst)
                        .heuristic_pattern_limits(false)
                        .builder();
                    order.iter().for_each(|&i| {
                        b.add(&chunk[i].0);
                    });
                    b.build()
                        .map(|t| (t, order.iter().map(|&i| chunk[i].1).collect()))
                })
                .collect::<Option<Vec<_>>>()
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        // the automaton also searches texts too short for Teddy, whose
        // setup (and Rabin-Karp below its minimum) would cost more
        let automaton = match search {
            Search::Off => None,
            // leftmost-first, as Teddy: the search restarts one byte after
            // each start, so a match must be the leftmost one, not the one
            // that ends first
            _ => AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::LeftmostFirst)
                .kind(Some(aho_corasick::AhoCorasickKind::DFA))
                .build(lits.iter().map(|(l, _)| l))
                .ok(),
        };
        Prepass {
            teddy_rules: teddy
                .iter()
                .map(|(_, r)| r.iter().fold(0, |a, m| a | m))
                .collect(),
            teddy,
            automaton,
            all: lits.iter().fold(0, |a, (_, m)| a | m),
            rules_of: lits.iter().map(|(_, m)| *m).collect(),
            dots,
            custom,
            at_dot_rules: at_dot.iter().fold(0, |a, (i, _)| a | 1 << i),
            at_dot,
            assign,
        }
    }

    /// [`Prepass::rules_of_text`] of a text.
    #[cfg(test)]
    pub(super) fn rules(&self, text: &str) -> u128 {
        self.rules_of_text(text, false)
    }

    /// [`Prepass::rules_and_assignment`] of the rules in `want` only: the
    /// searchers and checks that hold none of them are not run, and no
    /// other rule's bit is set.
    pub(super) fn rules_within(&self, text: &str, want: u128) -> (u128, usize) {
        self.search(text, false, want)
    }

    /// [`Prepass::rules_of_text`] and where the first assignment's name ends
    /// ([`Needle::Assign`]; 0 when its rules were not found): no sign before
    /// it has a name end of [`NAME_ENDS`] before it, as the search looked for
    /// the sign after each one up to there ([`Compiled::scan`]).
    pub(super) fn rules_and_assignment(&self, text: &str) -> (u128, usize) {
        self.search(text, false, u128::MAX)
    }

    /// Bit `i` set: built-in rule `i` can match `text`. Every needle
    /// occurrence counts, overlapping ones too (the search restarts one byte
    /// after each start; at one start only one literal can match, as none is
    /// a prefix of another: [`literals`]). `json`: `text` is a serialized
    /// value ([`sign_after`]).
    pub(super) fn rules_of_text(&self, text: &str, json: bool) -> u128 {
        self.search(text, json, u128::MAX).0
    }

    /// [`Prepass::rules_and_assignment`] of `text`, serialized when `json`,
    /// for the rules in `want`.
    fn search(&self, text: &str, json: bool, want: u128) -> (u128, usize) {
        let hay = text.as_bytes();
        let mut hit = 0u128;
        let mut assigned = 0usize;
        let teddy: &[(packed::Searcher, Vec<u128>)] = if hay.len() < SHORT_TEXT {
            &[]
        } else {
            &self.teddy
        };
        // a name end counts only with its sign after it
        let add = |hit: &mut u128, assigned: &mut usize, mask: u128, end: usize| {
            *hit |= mask & !self.assign;
            if mask & self.assign & !*hit != 0 && sign_after(hay, end, json) {
                *hit |= mask & self.assign;
                *assigned = end;
            }
        };
        for ((t, rules_of), all) in teddy.iter().zip(&self.teddy_rules) {
            let mut at = 0;
            // past the point where every rule of its literals is in, a
            // searcher has nothing left to add
            while *all & want & !hit != 0
                && let Some(m) = t.find_in(hay, Span::from(at..hay.len()))
            {
                add(
                    &mut hit,
                    &mut assigned,
                    rules_of[m.pattern().as_usize()],
                    m.end(),
                );
                at = m.start() + 1;
            }
        }
        if teddy.is_empty() {
            let Some(a) = &self.automaton else {
                return (u128::MAX, 0); // no searcher: every rule runs
            };
            let mut at = 0;
            while self.all & want & !hit != 0
                && let Some(m) = a.find(Input::new(hay).span(at..hay.len()))
            {
                add(
                    &mut hit,
                    &mut assigned,
                    self.rules_of[m.pattern().as_usize()],
                    m.end(),
                );
                at = m.start() + 1;
            }
        }
        // the rules not wanted count as found: their checks are not run
        hit |= !want;
        for &(rule, n) in &self.dots {
            if hit & (1 << rule) == 0 && dots_apart(hay, n) {
                hit |= 1 << rule;
            }
        }
        for &(rule, f) in &self.custom {
            if hit & (1 << rule) == 0 && f(hay) {
                hit |= 1 << rule;
            }
        }
        if self.at_dot_rules & !hit != 0 {
            for i in memchr::memchr_iter(b'.', hay) {
                for &(rule, f) in &self.at_dot {
                    if hit & (1 << rule) == 0 && f(hay, i) {
                        hit |= 1 << rule;
                    }
                }
                if self.at_dot_rules & !hit == 0 {
                    break;
                }
            }
        }
        (hit & want, assigned)
    }
}

/// `text` with every `%XX` escape of an ASCII character decoded, and where
/// each byte of it (and its end) starts in `text`; `None` when `text` holds
/// no such escape. Other bytes are copied as they are, so the view is UTF-8.
pub(super) fn percent_view(text: &str) -> Option<(String, Vec<usize>)> {
    let b = text.as_bytes();
    let hex = |c: u8| (c as char).to_digit(16);
    let escape = |i: usize| match (
        b.get(i + 1).copied().and_then(hex),
        b.get(i + 2).copied().and_then(hex),
    ) {
        (Some(h), Some(l)) if h < 8 => Some((h * 16 + l) as u8),
        _ => None,
    };
    let first = memchr::memchr_iter(b'%', b).find(|&i| escape(i).is_some())?;
    let mut out = Vec::with_capacity(b.len());
    let mut at = Vec::with_capacity(b.len() + 1);
    out.extend_from_slice(&b[..first]);
    at.extend(0..first);
    let mut i = first;
    while i < b.len() {
        match (b[i], escape(i)) {
            (b'%', Some(v)) => {
                out.push(v);
                at.push(i);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                at.push(i);
                i += 1;
            }
        }
    }
    at.push(b.len());
    String::from_utf8(out).ok().map(|s| (s, at))
}

/// Whether the byte before `start` may stand before a match: no class,
/// start of text, a byte outside the class, or the end of an escape — a
/// JSON escape (`\n`, `\t`, `\"`, `\/`, `\uXXXX`: a key pasted on a new line
/// of a tool call's raw JSON arguments) or a percent-escape (`%20`, `%0A`).
pub(super) fn left_ok(text: &str, start: usize, class: Option<fn(u8) -> bool>) -> bool {
    let Some(class) = class else { return true };
    let b = text.as_bytes();
    if start == 0 || !class(b[start - 1]) {
        return true;
    }
    let hex = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_hexdigit);
    (start >= 2 && b[start - 2] == b'\\')
        || (start >= 6 && b[start - 6] == b'\\' && b[start - 5] == b'u' && hex(start - 4..start))
        || (start >= 3 && b[start - 3] == b'%' && hex(start - 2..start))
}

/// Whether the byte at `end` may follow a secret.
fn right_ok(text: &str, end: usize, class: Option<fn(u8) -> bool>) -> bool {
    match (class, text.as_bytes().get(end)) {
        (Some(c), Some(&b)) => !c(b),
        _ => true,
    }
}

/// How far before its end a cut start may begin: longer than any token's
/// recognisable start.
const CUT_REACH: usize = 1024;

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// How many base64 characters beside a match make it a stretch of an
/// encoded blob rather than a token.
const BLOB_BESIDE: usize = 64;

/// Whether `text[s..e]` is a stretch inside an encoded blob (a base64 image,
/// a file's bytes): at least [`BLOB_BESIDE`] more characters of standard
/// base64 run on around it, one of them a `+` or `/` (or their
/// percent-escapes `%2B`, `%2F`, as a URL carries a blob). Random base64
/// holds a vendor's prefix and a run of token characters now and then
/// (`EAAA…` in a PNG's header), and what it encodes is not that token; a
/// token pasted in text stands beside words, blanks or punctuation. A data
/// URI's payload is a blob whatever its length.
pub(super) fn in_base64_blob(text: &str, s: usize, e: usize) -> bool {
    let b = text.as_bytes();
    // the length of the base64 character (or escape) ending before `i`
    // (`back`) or starting at `i`, and whether it is a `+` or `/`
    let escape = |i: usize| -> Option<bool> {
        let x = b.get(i..i + 3)?;
        (x[0] == b'%').then_some(())?;
        match (x[1], x[2].to_ascii_uppercase()) {
            (b'2', b'B' | b'F') => Some(true),
            (b'3', b'D') => Some(false),
            _ => None,
        }
    };
    let mut slash = false;
    let mut before = 0;
    let mut i = s;
    while i > 0 {
        let c = b[i - 1];
        // an escape's hex digits are letters and digits too: it first
        if let Some(sl) = i.checked_sub(3).and_then(&escape) {
            slash |= sl;
            i -= 3;
        } else if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' {
            slash |= c == b'+' || c == b'/';
            i -= 1;
        } else {
            break;
        }
        before += 1;
        if before >= BLOB_BESIDE && slash {
            return true;
        }
    }
    // a data URI's payload (`data:image/png;base64,…`), however short
    if text[..i].ends_with("base64,") || text[..i].ends_with("base64%2C") {
        return true;
    }
    let mut after = 0;
    let mut i = e;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_alphanumeric() || c == b'+' || c == b'/' || c == b'=' {
            slash |= c == b'+' || c == b'/';
            i += 1;
        } else if let Some(sl) = escape(i) {
            slash |= sl;
            i += 3;
        } else {
            break;
        }
        after += 1;
        if before + after >= BLOB_BESIDE && slash {
            return true;
        }
    }
    false
}

/// A documented placeholder or example, which the public rule sets
/// allow-list: `ghp_xxxx…`, `AKIAIOSFODNN7EXAMPLE`, `<your-api-key>`,
/// `${TOKEN}`, `changeme`, a value that is mostly one character, and a
/// marker of ours.
pub fn placeholder(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "example",
        "xxxxx",
        "*****",
        ".....",
        "your_",
        "your-",
        "yourkey",
        "yourtoken",
        "<",
        ">",
        "${",
        "{{",
        "placeholder",
        "changeme",
        "redacted",
        "dummy",
        "0000000",
        "1234567890",
        "abcdefgh",
    ];
    let lower = s.to_ascii_lowercase();
    if WORDS.iter().any(|w| lower.contains(w)) || KNOWN_EXAMPLES.contains(&s) {
        return true;
    }
    let mut freq = [0usize; 256];
    s.bytes().for_each(|b| freq[usize::from(b)] += 1);
    s.len() >= 8 && freq.iter().max().is_some_and(|&m| m * 10 > s.len() * 6)
}

/// Keys vendors publish in their documentation (and emulators ship): public,
/// valid nowhere that matters, allow-listed by the public rule sets.
const KNOWN_EXAMPLES: &[&str] = &[
    // Stripe's documentation
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
    "sk_test_BQokikJOvBiI2HlWgH4olfQ2",
    // Azurite's (Azure Storage emulator) well-known account key
    "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
];

/// [`Scanner::redact_map`] of an object none of whose keys and strings
/// holds a needle: only a value under a secret-named key can go.
fn redact_named(m: &mut serde_json::Map<String, serde_json::Value>, counts: &mut Counts) {
    use serde_json::Value;
    fn walk(v: &mut Value, counts: &mut Counts) {
        match v {
            Value::Object(m) => redact_named(m, counts),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, counts)),
            _ => {}
        }
    }
    for (k, v) in m.iter_mut() {
        match v {
            Value::String(s) => {
                if secret_name(k) && assigned_value(s) && !placeholder(s) {
                    *s = format!("[redacted:{NAMED_RULE}]");
                    *counts.entry(NAMED_RULE).or_default() += 1;
                }
            }
            other => walk(other, counts),
        }
    }
}

/// Some key at any depth of `m` is a secret-named key ([`secret_name`]).
fn has_secret_name(m: &serde_json::Map<String, serde_json::Value>) -> bool {
    use serde_json::Value;
    fn any(v: &Value) -> bool {
        match v {
            Value::Object(m) => has_secret_name(m),
            Value::Array(a) => a.iter().any(any),
            _ => false,
        }
    }
    m.iter().any(|(k, v)| secret_name(k) || any(v))
}

/// The built-in rules' pre-pass, built once (its bucket packing is the
/// costly part).
static BUILTIN: LazyLock<Prepass> = LazyLock::new(|| Prepass::new(RULES, Search::Teddy));

static NAME: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(SECRET_NAME).ok());

/// Whether a JSON key names a secret (`API_KEY`, `password`, `apiKey`,
/// `GITHUB_TOKEN`; not `session_key`, `max_tokens`).
pub fn secret_name(key: &str) -> bool {
    // every such name ends in one of [`ends_secretish`]'s words: the byte
    // compare rules out most keys before the regex runs
    if !ends_secretish(key.as_bytes()) {
        return false;
    }
    // the few keys that pass (`session_key` on every line of a session)
    // repeat: each thread remembers its answers for short ones
    if key.len() > NAME_MEMO_KEY {
        return NAME.as_ref().is_some_and(|re| re.is_match(key));
    }
    NAME_MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some(&yes) = memo.get(key) {
            return yes;
        }
        let yes = NAME.as_ref().is_some_and(|re| re.is_match(key));
        if memo.len() >= NAME_MEMO_LEN {
            memo.clear();
        }
        memo.insert(key.to_owned(), yes);
        yes
    })
}

/// The longest key [`secret_name`] remembers, and how many it holds per
/// thread before it starts over.
const NAME_MEMO_KEY: usize = 64;
const NAME_MEMO_LEN: usize = 1024;

thread_local! {
    static NAME_MEMO: std::cell::RefCell<std::collections::HashMap<String, bool>> =
        std::cell::RefCell::default();
}

/// The texts and serialized natives a scanner (and its clones) found
/// nothing in, by their XXH3-128: a store's copies (a session file and its
/// WebUI transcript, backups, the frozen copies of a workspace) repeat the
/// same texts, and a text found clean once is not searched again — half the
/// text of a home of realistic shape, a sixth of a synthetic one
/// (BENCHMARKS.md "The scanner's memo"). Only what the scanner leaves as it
/// is goes in, so a hit changes no output and no count; a collision of two
/// 128-bit digests is the only way a text could be passed unsearched.
#[derive(Default)]
struct Clean {
    shards: [Mutex<HashSet<u128, BuildHasherDefault<Prehashed>>>; CLEAN_SHARDS],
}

/// Shards of [`Clean`] (a lock each; the key's top bits pick one).
const CLEAN_SHARDS: usize = 16;

/// The most digests one shard of [`Clean`] holds; a full shard starts over.
/// 7/8 of 2^17: the most a table of 2^17 slots (16 bytes and a control
/// byte each) holds before it doubles, so all shards stay within 36 MiB.
const CLEAN_PER_SHARD: usize = 7 << 14;

/// The shortest text [`Clean`] remembers: a shorter one costs about as much
/// to search as to look up.
const CLEAN_MIN: usize = 64;

/// A [`Clean`] domain: texts (`redact`) and serialized natives
/// (`may_match_native`, `redact_native`: their keys count apart) never share a digest.
#[derive(Clone, Copy)]
enum Domain {
    Text = 1,
    Native = 2,
}

/// The hasher of an already uniform key (a digest's low 64 bits).
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }
    fn write_u128(&mut self, i: u128) {
        self.0 = i as u64;
    }
}

impl std::fmt::Debug for Clean {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held: usize = self
            .shards
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.len()))
            .sum();
        f.debug_struct("Clean").field("held", &held).finish()
    }
}

impl Clean {
    /// The key of `text` in `domain` (`None`: too short to remember).
    fn key(text: &str, domain: Domain) -> Option<u128> {
        (text.len() >= CLEAN_MIN)
            .then(|| twox_hash::XxHash3_128::oneshot_with_seed(domain as u64, text.as_bytes()))
    }

    fn shard(&self, key: u128) -> &Mutex<HashSet<u128, BuildHasherDefault<Prehashed>>> {
        &self.shards[(key >> 124) as usize % CLEAN_SHARDS]
    }

    fn contains(&self, key: u128) -> bool {
        self.shard(key).lock().is_ok_and(|s| s.contains(&key))
    }

    fn insert(&self, key: u128) {
        if let Ok(mut s) = self.shard(key).lock() {
            if s.len() >= CLEAN_PER_SHARD {
                s.clear();
            }
            s.insert(key);
        }
    }
}

/// The compiled rules (built-in and `--secret-pattern`).
#[derive(Debug, Clone)]
pub struct Scanner {
    rules: Vec<Compiled>,
    /// Which built-in rules can match a text (most texts: none); only those
    /// run on their own. User patterns always run.
    pub(super) prepass: Prepass,
    /// Some rule is a user pattern.
    user: bool,
    /// What this scanner found clean (shared by its clones: one per run).
    clean: Arc<Clean>,
}

impl Scanner {
    /// The built-in rules plus user patterns (already compiled).
    pub fn new(user: &[Regex]) -> Scanner {
        Scanner::with_search(user, Search::Teddy)
    }

    /// [`Scanner::new`] with its pre-pass searching as `search` says.
    pub(super) fn with_search(user: &[Regex], search: Search) -> Scanner {
        let mut rules: Vec<Compiled> = RULES
            .iter()
            .enumerate()
            .map(|(i, r)| Compiled {
                name: r.name,
                re: Pattern::Builtin(i),
                group: r.group,
                check: r.check,
                cut_check: r.cut_check,
                left: r.left,
                right: r.right,
                near: r.near,
                bit: Some(i),
                windowed: matches!(r.needle, Needle::Assign),
            })
            .collect();
        rules.extend(user.iter().map(|re| Compiled {
            name: USER_RULE,
            re: Pattern::User(re.clone()),
            group: 0,
            check: None,
            cut_check: None,
            left: None,
            right: None,
            near: None,
            bit: None,
            windowed: false,
        }));
        Scanner {
            rules,
            prepass: match search {
                Search::Teddy => BUILTIN.clone(),
                _ => Prepass::new(RULES, search),
            },
            user: !user.is_empty(),
            clean: Arc::default(),
        }
    }

    /// How many texts and natives this scanner (with its clones) remembers
    /// as clean.
    #[cfg(test)]
    pub(super) fn remembered(&self) -> usize {
        self.clean
            .shards
            .iter()
            .map(|s| s.lock().map_or(0, |s| s.len()))
            .sum()
    }

    /// Whether some rule can match a string of the JSON value serialized as
    /// `json` (`false`: redacting the value changes nothing). Needles show
    /// in JSON text as they are; a user pattern may not (it could match an
    /// escaped character), so with one this is always `true`.
    pub fn may_match_json(&self, json: &str) -> bool {
        self.user || self.needle_in_serialized(json, false)
    }

    /// Whether some built-in rule's needle is in `json` or its
    /// percent-decoded view ([`Prepass::rules_of_text`]).
    fn needle_in_serialized(&self, json: &str, native: bool) -> bool {
        let any = |t: &str| self.prepass.rules_of_text(t, native) != 0;
        any(json) || percent_view(json).is_some_and(|(v, _)| any(&v))
    }

    /// The rules whose needle a key or string of the native serialized as
    /// `json` can hold, itself or percent-decoded; 0 when
    /// [`Scanner::needle_in_serialized`] finds none. A string's literal
    /// shows in its JSON text (a character JSON escapes is searched escaped
    /// too, [`literals`]), and so do the other shapes, so every such rule
    /// the pre-pass finds in it is found in `json`. Its decoded view holds
    /// the decoded string's needles, but a `"` decoded from `%22` is no
    /// key's quote there, so that view is searched as plain text too. An
    /// assignment's sign is not always seen through escaping (a string's
    /// own `\"` or `\t` before it is `\\\"`, `\\t` in JSON): the
    /// assignment rules are always among those wanted.
    fn rules_of_native(&self, json: &str) -> u128 {
        let hit = self.prepass.rules_of_text(json, true);
        let Some((view, _)) = percent_view(json) else {
            return if hit == 0 {
                0
            } else {
                hit | self.prepass.assign
            };
        };
        if hit == 0 && self.prepass.rules_of_text(&view, true) == 0 {
            return 0;
        }
        hit | self.prepass.rules_of_text(&view, false) | self.prepass.assign
    }

    /// [`Scanner::may_match_json`] for a `native` object and its serialized
    /// `json`: the object's keys are looked at themselves (a secret-named key
    /// redacts its value, [`Scanner::redact_map`]), so the search of the
    /// text skips the `:` after each key — one per key of every native.
    pub fn may_match_native(
        &self,
        native: &serde_json::Map<String, serde_json::Value>,
        json: &str,
    ) -> bool {
        if self.user {
            return true;
        }
        let key = Clean::key(json, Domain::Native);
        if key.is_some_and(|k| self.clean.contains(k)) {
            return false;
        }
        let may = self.needle_in_serialized(json, true) || has_secret_name(native);
        if let (false, Some(k)) = (may, key) {
            self.clean.insert(k);
        }
        may
    }

    /// Redact a `native` object in place, `json` its serialized text
    /// (`may_match_native`'s pair); whether anything changed, so `json`
    /// must be made again. An object whose text holds no needle has no
    /// string a rule changes: only its values under secret-named keys are
    /// looked at, not each of its strings searched again. In one whose text
    /// holds needles, a key or string can hold only needles its text holds
    /// ([`Scanner::rules_of_native`]): each is searched for those alone.
    pub fn redact_native(
        &self,
        native: &mut serde_json::Map<String, serde_json::Value>,
        json: &str,
        counts: &mut Counts,
    ) -> bool {
        let before: u64 = counts.values().sum();
        if self.user {
            self.redact_map(native, counts);
        } else {
            let key = Clean::key(json, Domain::Native);
            if key.is_some_and(|k| self.clean.contains(k)) {
                return false;
            }
            let want = self.rules_of_native(json);
            if want != 0 {
                self.redact_map_within(native, counts, want);
            } else if has_secret_name(native) {
                redact_named(native, counts);
            } else {
                if let Some(k) = key {
                    self.clean.insert(k);
                }
                return false;
            }
        }
        counts.values().sum::<u64>() != before
    }

    /// The secret spans of `text`: (start, end, rule), sorted, disjoint.
    /// A percent-encoded text (`?auth=Bearer%20…`, `postgres%3A%2F%2F…`) is
    /// also searched decoded, and what is found there is mapped back onto
    /// the escapes it came from.
    pub fn find(&self, text: &str) -> Vec<(usize, usize, &'static str)> {
        self.find_within(text, u128::MAX)
    }

    /// [`Scanner::find`] of the built-in rules in `want` (and the user
    /// patterns).
    fn find_within(&self, text: &str, want: u128) -> Vec<(usize, usize, &'static str)> {
        let mut found: Vec<(usize, usize, usize)> = Vec::new();
        self.find_in(text, &mut found, want);
        if let Some((view, at)) = percent_view(text) {
            let mut decoded = Vec::new();
            self.find_in(&view, &mut decoded, want);
            found.extend(decoded.into_iter().map(|(s, e, i)| (at[s], at[e], i)));
        }
        // earliest first, then longest, then the first rule; a match that
        // overlaps the span before it joins it (what it runs on past that
        // span is no match on its own: the rest of a JWT whose header an
        // AWS secret key's 40 characters took)
        found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let mut spans: Vec<(usize, usize, &'static str)> = Vec::new();
        for (start, end, i) in found {
            if let Some(last) = spans.last_mut().filter(|l| start < l.1) {
                last.1 = last.1.max(end);
                continue;
            }
            spans.push((start, end, self.rules[i].name));
        }
        spans
    }

    /// Every accepted match of the rules in `want` the pre-pass lets run on
    /// `text`.
    fn find_in(&self, text: &str, found: &mut Vec<(usize, usize, usize)>, want: u128) {
        let (hit, assigned) = if want == u128::MAX {
            self.prepass.rules_and_assignment(text)
        } else {
            self.prepass.rules_within(text, want)
        };
        if hit == 0 && !self.user {
            return;
        }
        // the built-in rules the pre-pass let through, each its bit, then
        // the user patterns (after them, without one)
        let mut bits = hit;
        while bits != 0 {
            let b = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            if let Some(r) = self.rules.get(b).filter(|r| r.bit == Some(b)) {
                r.scan(text, found, b, assigned);
            }
        }
        if self.user {
            for (i, r) in self.rules.iter().enumerate().skip(RULES.len()) {
                r.scan(text, found, i, assigned);
            }
        }
    }

    /// `text` with each secret span replaced by `[redacted:<rule>]`, counted
    /// into `counts`; `None` when nothing matched. Redaction repeats until
    /// nothing is left to find: a token refused for what stood beside it
    /// (`AKIA…` glued to a key, which a marker then replaces) goes in the
    /// next round, so a redacted text never redacts again.
    pub fn redact(&self, text: &str, counts: &mut Counts) -> Option<String> {
        self.redact_within(text, counts, u128::MAX)
    }

    /// [`Scanner::redact`] of a text that can hold only the needles of the
    /// rules in `want`: the others are not looked for. A text found clean
    /// of those alone is not remembered as clean.
    fn redact_within(&self, text: &str, counts: &mut Counts, want: u128) -> Option<String> {
        let key = (want == u128::MAX)
            .then(|| Clean::key(text, Domain::Text))
            .flatten();
        if key.is_some_and(|k| self.clean.contains(k)) {
            return None;
        }
        let out = self.redact_rounds(text, counts, want);
        if let (None, Some(k), u128::MAX) = (&out, key, want) {
            self.clean.insert(k);
        }
        out
    }

    /// [`Scanner::redact`] without the memo, its first round for the rules
    /// in `want`: a text a round changed is searched again for every rule.
    fn redact_rounds(&self, text: &str, counts: &mut Counts, want: u128) -> Option<String> {
        let mut out: Option<String> = None;
        // each round replaces at least one span of the text's own bytes by a
        // marker that matches no rule; the cap only bounds a pathological text
        for _ in 0..16 {
            let cur = out.as_deref().unwrap_or(text);
            let spans = match out {
                None => self.find_within(cur, want),
                Some(_) => self.find(cur),
            };
            if spans.is_empty() {
                break;
            }
            let mut next = String::with_capacity(cur.len());
            let mut at = 0;
            for (start, end, rule) in spans {
                next.push_str(&cur[at..start]);
                next.push_str("[redacted:");
                next.push_str(rule);
                next.push(']');
                *counts.entry(rule).or_default() += 1;
                at = end;
            }
            next.push_str(&cur[at..]);
            out = Some(next);
        }
        out
    }

    /// Redact a string in place.
    pub fn redact_in_place(&self, s: &mut String, counts: &mut Counts) {
        if let Some(r) = self.redact(s, counts) {
            *s = r;
        }
    }

    /// Redact every string (keys too) of a JSON value in place.
    pub fn redact_json(&self, v: &mut serde_json::Value, counts: &mut Counts) {
        self.redact_json_within(v, counts, u128::MAX);
    }

    /// [`Scanner::redact_json`] for the rules in `want` ([`Scanner::redact_within`]).
    fn redact_json_within(&self, v: &mut serde_json::Value, counts: &mut Counts, want: u128) {
        use serde_json::Value;
        match v {
            Value::String(s) => {
                if let Some(r) = self.redact_within(s, counts, want) {
                    *s = r;
                }
            }
            Value::Array(a) => a
                .iter_mut()
                .for_each(|x| self.redact_json_within(x, counts, want)),
            Value::Object(o) => self.redact_map_within(o, counts, want),
            _ => {}
        }
    }

    /// Redact every key and string value of a JSON object in place; a
    /// string under a secret-named key ([`secret_name`]) that no rule
    /// changed and that looks like a value ([`assigned_value`], not a
    /// [`placeholder`]) goes whole (`[redacted:secret_assignment]`): the
    /// value of `{"API_KEY": "…"}` has no shape of its own.
    pub fn redact_map(
        &self,
        m: &mut serde_json::Map<String, serde_json::Value>,
        counts: &mut Counts,
    ) {
        self.redact_map_within(m, counts, u128::MAX);
    }

    /// [`Scanner::redact_map`] for the rules in `want` ([`Scanner::redact_within`]).
    fn redact_map_within(
        &self,
        m: &mut serde_json::Map<String, serde_json::Value>,
        counts: &mut Counts,
        want: u128,
    ) {
        use serde_json::Value;
        let keys: Vec<String> = m
            .keys()
            .filter(|k| !self.find_within(k, want).is_empty())
            .cloned()
            .collect();
        for k in keys {
            if let (Some(v), Some(nk)) = (m.remove(&k), self.redact_within(&k, counts, want)) {
                m.insert(nk, v);
            }
        }
        for (k, v) in m.iter_mut() {
            match v {
                Value::String(s) => {
                    let changed = self.redact_within(s, counts, want);
                    match changed {
                        Some(r) => *s = r,
                        None if secret_name(k) && assigned_value(s) && !placeholder(s) => {
                            *s = format!("[redacted:{NAMED_RULE}]");
                            *counts.entry(NAMED_RULE).or_default() += 1;
                        }
                        None => {}
                    }
                }
                other => self.redact_json_within(other, counts, want),
            }
        }
    }
}

impl Compiled {
    /// Every accepted match of this rule (and of its cut start) in `text`,
    /// pushed as (start, end, rule index). A match the boundaries or checks
    /// refuse is retried one character later. An assignment rule looks at
    /// the signs from `assigned` on ([`Prepass::rules_and_assignment`]): a
    /// sign before it, its name in another case, can only find what a sign
    /// of a [`NAME_ENDS`] name finds in the rest of its window, which is
    /// that sign's own window.
    fn scan(&self, text: &str, found: &mut Vec<(usize, usize, usize)>, i: usize, assigned: usize) {
        let (re, cut) = match &self.re {
            Pattern::Builtin(b) => match builtin_regexes(*b) {
                Some(res) => res,
                None => return,
            },
            Pattern::User(re) => (re, None),
        };
        let builtin = self.bit.is_some();
        let accept_with =
            |check: Option<fn(&str) -> bool>, whole_start: usize, s: usize, e: usize| {
                let secret = &text[s..e];
                s < e
                    && left_ok(text, whole_start, self.left)
                    && right_ok(text, e, self.right)
                    && check.is_none_or(|c| c(secret))
                    && !(builtin && (placeholder(secret) || in_base64_blob(text, s, e)))
                    && self.near.is_none_or(|n| n(text, s, e))
            };
        // the end of an accepted match: a value glued to markup
        // (`<code>API_KEY=…</code>`) took the tag, which reads as a
        // placeholder's `<`: the value ends at the first `<` or `>` after
        // its start (one that starts with `<` is a placeholder still)
        let accept = |whole_start: usize, s: usize, e: usize| -> Option<usize> {
            if accept_with(self.check, whole_start, s, e) {
                return Some(e);
            }
            let cut = s + text[s..e].find(['<', '>']).filter(|&k| k > 0)?;
            accept_with(self.check, whole_start, s, cut).then_some(cut)
        };
        let next = |at: usize| at + text[at..].chars().next().map_or(1, char::len_utf8);
        if self.windowed {
            for sign in assignments(text.as_bytes(), assigned) {
                let (ws, we) = assignment_window(text, sign);
                let Some(c) = re.captures(&text[ws..we]) else {
                    continue;
                };
                let (Some(w), Some(g)) = (c.get(0), c.get(self.group)) else {
                    continue;
                };
                if let Some(e) = accept(ws + w.start(), ws + g.start(), ws + g.end()) {
                    found.push((ws + g.start(), e, i));
                }
            }
        } else {
            let mut at = 0;
            while at <= text.len() {
                let (ws, we, s, e) = if self.group == 0 {
                    let Some(m) = re.find_at(text, at) else {
                        break;
                    };
                    (m.start(), m.end(), m.start(), m.end())
                } else {
                    let Some(c) = re.captures_at(text, at) else {
                        break;
                    };
                    let (Some(w), Some(g)) = (c.get(0), c.get(self.group)) else {
                        break;
                    };
                    (w.start(), w.end(), g.start(), g.end())
                };
                if let Some(e) = accept(ws, s, e) {
                    found.push((s, e, i));
                    at = if we > ws { we } else { next(ws) };
                } else {
                    at = next(ws);
                }
                if at > text.len() {
                    break;
                }
            }
        }
        let Some(cut) = cut else { return };
        let cut_check = self.cut_check.or(self.check);
        // a cut start ends where the text does or a preview's `…` stands:
        // only the stretch before each such end is searched, as the text
        // that ends there (so `\z` stands for the `…`)
        let ends = memchr::memmem::find_iter(text.as_bytes(), "…".as_bytes())
            .chain(std::iter::once(text.len()));
        // the secret: the cut's group 1 if it has one, else the match
        // without the preview's `…`
        let mut take = |c: &regex::Captures| {
            let Some(w) = c.get(0) else { return };
            let (s, e) = match c.get(1) {
                Some(g) => (g.start(), g.end()),
                None => (
                    w.start(),
                    w.as_str()
                        .strip_suffix('…')
                        .map_or(w.end(), |t| w.start() + t.len()),
                ),
            };
            if accept_with(cut_check, w.start(), s, e) {
                found.push((s, e, i));
            }
        };
        for end in ends {
            let from = floor_char_boundary(text, end.saturating_sub(CUT_REACH));
            let upto = &text[..end];
            if self.windowed {
                // an assignment's cut start holds its sign, and its value
                // runs on to this end without a blank: only the windows of
                // such signs are searched, not the whole stretch
                let b = upto.as_bytes();
                let tail = last_value(b, from);
                for sign in memchr::memchr2_iter(b'=', b':', &b[tail..]).map(|k| k + tail) {
                    if !ends_secretish(&b[..name_end(b, sign)]) {
                        continue;
                    }
                    let (ws, we) = assignment_window(upto, sign);
                    if we == end
                        && ws >= from
                        && let Some(c) = cut.captures_at(upto, ws)
                    {
                        take(&c);
                    }
                }
                continue;
            }
            let mut at = from;
            while let Some(c) = cut.captures_at(upto, at) {
                let Some(w) = c.get(0) else { break };
                take(&c);
                at = w.start() + upto[w.start()..].chars().next().map_or(1, char::len_utf8);
                if at > upto.len() {
                    break;
                }
            }
        }
    }
}

/// Counts as the JSON text of `sources.redactions` (`{}` when none).
pub fn counts_json(counts: &Counts) -> String {
    serde_json::to_string(counts).unwrap_or_else(|_| "{}".into())
}
