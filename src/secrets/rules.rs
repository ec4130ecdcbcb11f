//! The built-in secret rules: one entry per token shape, grouped by family
//! (the rule name is the family: `[redacted:<name>]`, `sources.redactions`).
//!
//! ```text
//! Rule { name, pattern, group (the secret), needle (in every match),
//!        left (bytes that may not stand before the match), right (bytes that
//!        may not follow the secret), check, near (context the match needs),
//!        cut (a recognisable start, redacted where a preview or a torn line
//!        cut the token short: followed by the end of the text or `…`) }
//! ```
//! Boundaries follow the token, not the word: a token whose own prefix is
//! distinctive (`ghp_`, `sk-proj-`, `AIza`, `xoxb-1…`) matches wherever it
//! stands — after CJK, after any letter, inside a URL path or query. A
//! shape that could end a real word (`sk-` + letters and digits: `task-`,
//! `risk-`) keeps a left boundary, which a JSON escape (`\n`, `\u00e9`) or a
//! percent-escape (`%20`) before it still satisfies
//! ([`super::left_ok`]). Patterns hold no `(?i)`: each spelling they accept
//! is written out, so the needles cover them byte for byte.

use std::sync::LazyLock;

use super::{Needle, Rule};

fn digit_and_letter(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_digit()) && s.bytes().any(|b| b.is_ascii_alphabetic())
}

/// Digits and letters, or both cases (a cut token may be short).
fn mixed(s: &str) -> bool {
    digit_and_letter(s)
        || (s.bytes().any(|b| b.is_ascii_lowercase()) && s.bytes().any(|b| b.is_ascii_uppercase()))
}

/// Upper case, lower case and a digit or symbol: a random base64 value (an
/// AWS secret access key), not a hex hash or a word.
fn base64_random(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes()
            .any(|b| b.is_ascii_digit() || b == b'+' || b == b'/')
}

/// A value assigned to a secret-named key: 8+ characters, not only digits,
/// a digit and a letter or three kinds of character (or 16+ of two kinds),
/// not an interpolation, a reference or a placeholder (those are checked for
/// every rule: [`super::placeholder`]).
pub fn assigned_value(s: &str) -> bool {
    let classes = [
        s.bytes().any(|b| b.is_ascii_lowercase()),
        s.bytes().any(|b| b.is_ascii_uppercase()),
        s.bytes().any(|b| b.is_ascii_digit()),
        s.bytes().any(|b| !b.is_ascii_alphanumeric()),
    ];
    let lower = s.to_ascii_lowercase();
    let kinds = classes.iter().filter(|c| **c).count();
    let letter = classes[0] || classes[1];
    s.chars().count() >= 8
        && !s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        // a digit and a letter, three kinds of character, or 16+ of two kinds:
        // not a word or two (`token = keep-current` in a card's options)
        && ((classes[2] && letter) || kinds >= 3 || (kinds >= 2 && s.len() >= 16))
        && !s.starts_with(['$', '%', '<', '{', '[', '(', '@'])
        && !["process.env", "environ", "getenv", "secrets.", "vault:", "true", "false", "null", "none"]
            .iter()
            .any(|w| lower.starts_with(w) || lower.contains("process.env"))
        && !lower.contains('(')
}

/// The start of a value assigned to a secret-named key, cut short: 8 or
/// more characters of two kinds (a value cut at a preview's end has not
/// shown its digits yet), not a reference or a placeholder.
fn assigned_start(s: &str) -> bool {
    let lower = s.to_ascii_lowercase();
    s.chars().count() >= 8
        && mixed(s)
        && !s.starts_with(['$', '%', '<', '{', '[', '(', '@'])
        && !["process.env", "environ", "getenv", "secrets.", "vault:"]
            .iter()
            .any(|w| lower.starts_with(w))
        && !lower.contains('(')
}

/// A password that is a placeholder word (`password`, `test`, `guest`,
/// `token`, …) or a reference (`$PASS`, `<password>`, `[PASSWORD]`).
fn weak_password(s: &str) -> bool {
    matches!(
        s.to_ascii_lowercase().as_str(),
        "password"
            | "pass"
            | "passwd"
            | "pwd"
            | "pw"
            | "secret"
            | "changeme"
            | "test"
            | "guest"
            | "token"
            | "admin"
            | "root"
            | "user"
            | "username"
            | "x"
            | "xxx"
            | "foo"
            | "bar"
    ) || s.starts_with(['$', '<', '{', '*', '[', '('])
}

/// The password of a URL's userinfo.
fn url_password(s: &str) -> bool {
    !weak_password(s)
}

/// `-u user:password`: not a placeholder, not a uid:gid pair.
fn curl_password(s: &str) -> bool {
    !weak_password(s) && !s.bytes().all(|b| b.is_ascii_digit())
}

/// A Telegram bot token's secret part: upper and lower case and a digit.
fn telegram_secret(s: &str) -> bool {
    let secret = s.rsplit(':').next().unwrap_or(s);
    secret.bytes().any(|b| b.is_ascii_digit())
        && secret.bytes().any(|b| b.is_ascii_lowercase())
        && secret.bytes().any(|b| b.is_ascii_uppercase())
}

/// A PEM, PGP or SSH2 private key block with a body: some run of 8 base64
/// characters between its BEGIN and END lines (not `-----BEGIN … PRIVATE
/// KEY----- and must never be pasted`, not a `...` placeholder body).
fn pem_body(s: &str) -> bool {
    let Some(at) = s.find("PRIVATE KEY") else {
        return false;
    };
    let rest = &s[at..];
    let Some(open) = rest.find("----") else {
        return false;
    };
    let body = rest[open..].trim_start_matches('-');
    let body = body.find("----").map_or(body, |end| &body[..end]);
    let mut run = 0;
    body.bytes().any(|b| {
        run = if b.is_ascii_alphanumeric() || b == b'+' || b == b'/' {
            run + 1
        } else {
            0
        };
        run >= 8
    })
}

/// `Basic <base64>`: it decodes to `user:password`.
fn basic_credentials(s: &str) -> bool {
    let Some(text) = decode64(s, false).and_then(|d| String::from_utf8(d).ok()) else {
        return false;
    };
    text.find(':').is_some_and(|i| i > 0 && i + 1 < text.len())
        && text.chars().all(|c| !c.is_control())
}

/// The start of an AWS secret access key, cut short: a random base64 value
/// that is not an access key id (`tAKIA…` after a JSON `\t` escape).
fn aws_secret_start(s: &str) -> bool {
    base64_random(s)
        && !["AKIA", "ASIA", "ABIA", "ACCA", "A3T"]
            .iter()
            .any(|k| s.contains(k))
}

/// An AWS secret access key needs its context: an AWS or secret keyword, or
/// an access key id, within 160 bytes on either side.
fn aws_context(text: &str, start: usize, end: usize) -> bool {
    let lo = floor_boundary(text, start.saturating_sub(160));
    let hi = ceil_boundary(text, (end + 160).min(text.len()));
    let window = &text[lo..hi];
    [
        "aws", "AWS", "Aws", "secret", "Secret", "SECRET", "AKIA", "ASIA",
    ]
    .iter()
    .any(|w| window.contains(w))
}

/// A Discord bot token: digits and letters, and a first segment that is
/// the base64 of the bot's numeric id (what tells it from a dotted
/// identifier of the same segment lengths).
fn discord_token(s: &str) -> bool {
    digit_and_letter(s) && snowflake_segment(s)
}

/// The first segment of `s` (to its first dot) decodes from base64url to
/// ASCII digits: a Discord id.
fn snowflake_segment(s: &str) -> bool {
    let seg = s.split('.').next().unwrap_or(s);
    let whole = &seg[..seg.len() - seg.len() % 4];
    decode64(whole, true).is_some_and(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
}

/// `s` decoded from base64 (`url`: the URL-safe alphabet), padding optional;
/// `None` when it is not base64.
fn decode64(s: &str, url: bool) -> Option<Vec<u8>> {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const CONFIG: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    const STD: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::STANDARD, CONFIG);
    const URL: GeneralPurpose = GeneralPurpose::new(&base64::alphabet::URL_SAFE, CONFIG);
    if url { URL.decode(s) } else { STD.decode(s) }.ok()
}

/// The start of a base64 text, decoded as far as it goes (a cut one ends
/// mid-quantum).
fn decode64_start(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    decode64(&s[..s.len() - s.len() % 4], false)
}

/// A cut `Basic` credential: its start decodes to printable text (a word
/// such as `understanding` does not).
fn basic_start(s: &str) -> bool {
    decode64_start(s).is_some_and(|d| d.len() >= 4 && d.iter().all(|b| (0x20..0x7f).contains(b)))
}

/// A JWT, itself base64-encoded (`ZXlK…`: the base64 of `eyJ`).
fn base64_jwt(s: &str) -> bool {
    decode64_start(s).is_some_and(|d| {
        let t = String::from_utf8_lossy(&d);
        t.starts_with("eyJ") && t.contains(".eyJ")
    })
}

/// The start of a base64-encoded JWT.
fn base64_jwt_start(s: &str) -> bool {
    decode64_start(s).is_some_and(|d| d.starts_with(b"eyJ"))
}

/// Upper case, lower case and a digit (a random alphanumeric body, not a
/// word in capitals or a hex digest).
fn upper_lower_digit(s: &str) -> bool {
    s.bytes().any(|b| b.is_ascii_uppercase())
        && s.bytes().any(|b| b.is_ascii_lowercase())
        && s.bytes().any(|b| b.is_ascii_digit())
}

/// Bits of information per character of `s` (Shannon).
fn entropy(s: &[u8]) -> f64 {
    let mut freq = [0u32; 256];
    s.iter().for_each(|b| freq[usize::from(*b)] += 1);
    let n = s.len() as f64;
    freq.iter()
        .filter(|c| **c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A token's body after a vendor's prefix: some run of 16 or more letters
/// and digits in it holds two of each and is random (3.2 bits a character
/// or more) — an identifier's words (`hf_hub_download_to_local_cache`,
/// `xai-grok-2-vision-1212`) are short runs, or repeat their letters.
fn random_body(s: &str) -> bool {
    s.as_bytes()
        .split(|b| !b.is_ascii_alphanumeric())
        .any(|run| {
            run.len() >= 16
                && run.iter().filter(|b| b.is_ascii_digit()).count() >= 2
                && run.iter().filter(|b| b.is_ascii_alphabetic()).count() >= 2
                && entropy(run) >= 3.2
        })
}

/// The start of a token after a vendor's prefix, cut short: a run of six
/// or more letters and digits in it holds both digits and letters, or both
/// cases (an identifier's or a model name's words do not:
/// `xai-grok-2-vision-1212`).
fn random_start(s: &str) -> bool {
    s.as_bytes()
        .split(|b| !b.is_ascii_alphanumeric())
        .any(|run| {
            (run.len() >= 6 && std::str::from_utf8(run).is_ok_and(mixed))
                || (run.len() >= 10 && run.iter().all(u8::is_ascii_digit))
        })
}

/// Any text: a cut start whose prefix says enough (`sk-proj-` and four
/// characters).
fn anything(_: &str) -> bool {
    true
}

/// A password given by a tool's configuration or command line: not a
/// placeholder word or a reference, not a port or an id of digits only.
fn given_password(s: &str) -> bool {
    !weak_password(s) && !s.bytes().all(|b| b.is_ascii_digit()) && s != "-" && s != "stdin"
}

/// A secret after a command-line flag: a password as [`given_password`],
/// not a file's path (`--private-key ~/.ssh/id`, `--token-file …` is not
/// the flag) nor an option list (`--secret id=npm,src=…`).
fn flag_value(s: &str) -> bool {
    given_password(s)
        && s.len() >= 4
        && !s.starts_with(['/', '~', '.', '-'])
        && !s.trim_end_matches('=').contains('=')
        && ![".pem", ".key", ".json", ".txt", ".crt", ".p12", ".env"]
            .iter()
            .any(|x| s.to_ascii_lowercase().ends_with(x))
}

/// A URL's password at a cut (`postgres://app:q8Zt…`): not a port.
fn url_cut_password(s: &str) -> bool {
    let ascii = s.split(|c: char| !c.is_ascii()).next().unwrap_or("");
    !ascii.is_empty() && url_password(ascii) && !ascii.bytes().all(|b| b.is_ascii_digit())
}

/// Some byte of the `reach` bytes before `start` (or after `end`) opens
/// one of `words`.
fn near_words(text: &str, start: usize, end: usize, reach: usize, words: &[&str]) -> bool {
    let lo = floor_boundary(text, start.saturating_sub(reach));
    let hi = ceil_boundary(text, (end + reach).min(text.len()));
    let window = &text[lo..hi];
    words.iter().any(|w| window.contains(w))
}

/// A Facebook app access token (`<app id>|<secret>`) needs the word
/// Facebook near it: an id and a pipe are a table's cells otherwise.
fn facebook_context(text: &str, start: usize, end: usize) -> bool {
    near_words(text, start, end, 240, &["acebook", "ACEBOOK"])
}

/// A `.pypirc` password: a `username` before it, in a repository's section.
fn pypirc_context(text: &str, start: usize, _end: usize) -> bool {
    let lo = floor_boundary(text, start.saturating_sub(600));
    let before = &text[lo..start];
    before.contains("username")
        && [
            "repository",
            "[pypi",
            "[testpypi",
            "[distutils",
            "index-servers",
        ]
        .iter()
        .any(|w| before.contains(w))
}

/// A value of a Kubernetes `Secret`'s `data:` or `stringData:` map: the
/// first line above it that is indented less is one of those two keys, and
/// the manifest says `kind: Secret` above that.
fn kube_secret_context(text: &str, start: usize, _end: usize) -> bool {
    let lo = floor_boundary(text, start.saturating_sub(4000));
    let before = &text[lo..start];
    // lines as written or as a JSON string's `\n` escapes
    let lines: Vec<&str> = before.split('\n').flat_map(|l| l.split("\\n")).collect();
    let Some(entry) = lines.last() else {
        return false;
    };
    let indent = |l: &str| l.len() - l.trim_start_matches([' ', '\t']).len();
    let own = indent(entry);
    let Some(pos) = lines[..lines.len() - 1]
        .iter()
        .rposition(|l| !l.trim().is_empty() && indent(l) < own)
    else {
        return false;
    };
    let head = lines[pos].trim();
    (head == "data:" || head == "stringData:")
        && lines[..pos].iter().any(|l| {
            let l = l.trim().replace(['"', '\''], "");
            l == "kind: Secret" || l.starts_with("kind: Secret")
        })
}

/// The dot at `i` has the 24 token characters (`[A-Za-z0-9_-]`) before
/// it: where a Discord bot token's first segment ends.
fn discord_dot(hay: &[u8], i: usize) -> bool {
    i >= 24
        && hay[i - 24..i]
            .iter()
            .rev()
            .all(|&b| TOKEN_BYTE[usize::from(b)])
}

/// Whether each byte is a token's character, `[A-Za-z0-9_-]` (a table: the
/// dots of a long text are many).
static TOKEN_BYTE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'-';
        b += 1;
    }
    t
};

/// The dot at `i` has `pat` 17 bytes before it: where an Airtable token's
/// dot stands (a literal `pat` would find every `path`).
fn airtable_dot(hay: &[u8], i: usize) -> bool {
    i >= 17 && &hay[i - 17..i - 14] == b"pat"
}

/// A `.pgpass` line's shape: a host's character, a `:`, one to five digits
/// or `*`, then three fields each ended by a `:` and a fourth begun. Most
/// `:` in text and JSON (a clock's `12:30:45`, a key's `"a":1`) are not
/// that, and then the rule's regex does not run. A field's byte is
/// anything but `:`, `[`, `]` and an ASCII blank: what the rule's fields
/// take, and the `\` of a JSON escape (`\"`, `\u0001`), so a line inside a
/// serialized value shows the shape too.
fn pgpass_port(hay: &[u8]) -> bool {
    let field = |from: usize| -> usize {
        hay[from..]
            .iter()
            .take_while(|b| !matches!(b, b':' | b'[' | b']') && !b.is_ascii_whitespace())
            .count()
    };
    memchr::memchr_iter(b':', hay).any(|i| {
        if i == 0 || !pgpass_host_char(hay[i - 1]) {
            return false;
        }
        let rest = &hay[i + 1..];
        let port = match rest.first() {
            Some(b'*') => 1,
            Some(_) => rest
                .iter()
                .take(6)
                .take_while(|b| b.is_ascii_digit())
                .count(),
            None => 0,
        };
        if !(1..=5).contains(&port) || rest.get(port) != Some(&b':') {
            return false;
        }
        // the database and the user, each ended by a `:`, then a password
        let mut at = i + 1 + port + 1;
        for _ in 0..2 {
            let n = field(at);
            if n == 0 || hay.get(at + n) != Some(&b':') {
                return false;
            }
            at += n + 1;
        }
        field(at) > 0
    })
}

/// A `.pgpass` host's characters (`db.internal`, `*`).
fn pgpass_host_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'*' | b'-')
}

/// What may not follow a `.pgpass` password: another field.
fn pgpass_field_char(b: u8) -> bool {
    b == b':'
}

/// A `.pgpass` line's host names a host (a letter, a dot or `*`), not the
/// hour of a clock (`12:30:45:…`): the first of the line's five fields.
fn pgpass_host(text: &str, start: usize, _end: usize) -> bool {
    let fields = text[..start]
        .rsplit(|c: char| !(c.is_ascii() && (pgpass_host_char(c as u8) || c == ':')))
        .next()
        .unwrap_or("");
    fields.split(':').next().is_some_and(|h| {
        h.bytes()
            .any(|b| b.is_ascii_alphabetic() || b == b'*' || b == b'.')
    })
}

/// `[A-Za-z0-9_~.-]`: an Azure AD client secret's characters.
fn azure_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'~' | b'.' | b'-')
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

fn alnum(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}
/// `[A-Za-z0-9_-]`: base64url and most token bodies.
fn token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}
/// `[A-Za-z0-9+/=]`: base64.
fn base64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='
}
/// `[A-Z2-7]`: base32 (AWS key ids).
fn base32(b: u8) -> bool {
    b.is_ascii_uppercase() || (b'2'..=b'7').contains(&b)
}

/// `SK` and 10 hex digits somewhere: the Twilio rule's needle (two letters
/// are too short a literal for the SIMD search), its cut start's too.
fn twilio_sid(hay: &[u8]) -> bool {
    // the `K` (the rarer letter, one `memchr` pass), then the `S` before it
    memchr::memchr_iter(b'K', hay).any(|i| {
        i > 0
            && hay[i - 1] == b'S'
            && hay
                .get(i + 1..i + 11)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    })
}

/// The custom needles' substring searchers, built once.
type Finder = LazyLock<memchr::memmem::Finder<'static>>;
static SCHEME: Finder = LazyLock::new(|| memchr::memmem::Finder::new(b"://"));

fn finder(f: &'static Finder) -> &'static memchr::memmem::Finder<'static> {
    f
}

/// `://` and an `@` before the URL's path or a blank: a URL with userinfo.
fn url_userinfo(hay: &[u8]) -> bool {
    // most texts hold no `@`: one fast pass rules them out before the
    // search for `://`
    if memchr::memchr(b'@', hay).is_none() {
        return false;
    }
    finder(&SCHEME).find_iter(hay).any(|i| {
        hay[i + 3..]
            .iter()
            .take_while(|b| !matches!(b, b'/' | b'?' | b'#' | b' ' | b'\t' | b'\n'))
            .any(|b| *b == b'@')
    })
}

/// Upper case or a digit: before `SK…` (Twilio), `TASK` + hex is a word.
fn upper_digit(b: u8) -> bool {
    b.is_ascii_uppercase() || b.is_ascii_digit()
}
fn digit(b: u8) -> bool {
    b.is_ascii_digit()
}
/// An identifier's characters (a secret-named key starts a name).
fn ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'-'
}

/// A distinctive-prefix token: matches wherever it stands (its body is
/// greedy, so nothing of it is left after the match), and a cut start is
/// redacted.
const fn prefixed(
    name: &'static str,
    pattern: &'static str,
    needle: &'static [&'static str],
    cut: &'static str,
) -> Rule {
    Rule {
        name,
        pattern,
        group: 0,
        check: None,
        needle: Needle::Any(needle),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: Some(cut),
    }
}

const SK_DISTINCT: &[&str] = &[
    "sk-proj-",
    "sk-svcacct-",
    "sk-admin-",
    "sk-None-",
    "sk-ant-",
    "sk-or-v1-",
];

/// A secret-named key (`OPENAI_API_KEY`, `db_password`, `apiKey`,
/// `client-secret`, `GITHUB_TOKEN`): a `key` qualified as a credential
/// (`api`, `secret`, `access`, `private`, `auth`, …: never `session_key`,
/// `cache_key`, `primary_key`), or a name ending in `token`, `secret`,
/// `password`, `passwd`, `pwd`, or `pass` after a separator (never
/// `compass`, `bypass`).
macro_rules! secret_name {
    () => {
        r"_?(?:[A-Za-z0-9]+[_.-])*(?:[A-Za-z0-9]*(?:api|API|Api|secret|SECRET|Secret|access|ACCESS|Access|private|PRIVATE|Private|auth|AUTH|Auth|client|CLIENT|Client|master|MASTER|Master|signing|SIGNING|Signing|encryption|ENCRYPTION|Encryption|account|ACCOUNT|Account|service|SERVICE|Service|license|LICENSE|License)[_.-]?(?:key|KEY|Key)|[A-Za-z0-9]*(?:token|TOKEN|Token|secret|SECRET|Secret|password|PASSWORD|Password|passwd|PASSWD|Passwd|pwd|PWD|Pwd|Pass)|pass|PASS)"
    };
}

/// A whole string that is a secret-named key (a JSON object's key).
pub const SECRET_NAME: &str = concat!("^", secret_name!(), "$");

/// `<secret-named key> = <value>` (`.env`, INI, YAML, JSON text, shell).
const ASSIGN: &str = concat!(
    secret_name!(),
    r#"(?:\\?["'])?\]?[ \t]*(?:=>|[=:])[ \t]*(?:\\?["'])?([!#-&(-+\--:<-\[\]-_a-~]{8,})"#
);

/// The prefixes of the vendors whose tokens the table knows: the generic
/// rule `vendor_token` takes any random body after one of them.
macro_rules! vendor_prefixes {
    () => {
        r"ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|gldt-|glrt-|glptt-|glft-|glsoat-|glcbt-|glimt-|glagent-|gloas-|glffct-|xoxb-|xoxp-|xoxa-|xoxr-|xoxs-|xoxe-|xapp-|pypi-|api_org_|pplx-|tgp_v1_|tvly-|lsv2_|shpat_|shpss_|shpca_|shppa_|dop_v1_|doo_v1_|dor_v1_|lin_api_|lin_oauth_|PMAK-|glsa_|NRAK-|NRII-|NRJS-|dp\.pt\.|sntrys_|sntryu_|sq0atp-|sq0csp-|figd_|tskey-|HRKU-|rubygems_|pscale_tkn_|pscale_pw_|pscale_oauth_|duffel_live_|duffel_test_|shippo_live_|shippo_test_|xkeysib-|tk-us-|rdme_|fio-u-|sm_pat_|sm_aat_|sm_sat_|dnkey-|GOCSPX-"
    };
}

/// [`vendor_prefixes`] as the pre-pass's literals.
const VENDOR_NEEDLES: &[&str] = &[
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
    "gldt-",
    "glrt-",
    "glptt-",
    "glft-",
    "glsoat-",
    "glcbt-",
    "glimt-",
    "glagent-",
    "gloas-",
    "glffct-",
    "xoxb-",
    "xoxp-",
    "xoxa-",
    "xoxr-",
    "xoxs-",
    "xoxe-",
    "xapp-",
    "pypi-",
    "api_org_",
    "pplx-",
    "tgp_v1_",
    "tvly-",
    "lsv2_",
    "shp",
    "dop_v1_",
    "doo_v1_",
    "dor_v1_",
    "lin_api_",
    "lin_oauth_",
    "PMAK-",
    "glsa_",
    "NRAK-",
    "NRII-",
    "NRJS-",
    "dp.pt.",
    "sntrys_",
    "sntryu_",
    "sq0",
    "figd_",
    "tskey-",
    "HRKU-",
    "rubygems_",
    "pscale_tkn_",
    "pscale_pw_",
    "pscale_oauth_",
    "duffel_live_",
    "duffel_test_",
    "shippo_live_",
    "shippo_test_",
    "xkeysib-",
    "tk-us-",
    "rdme_",
    "fio-u-",
    "sm_",
    "dnkey-",
    "GOCSPX-",
];

/// The vendor prefixes that could end a word (`hf_`, `sk_test_`): the
/// generic rule takes a body after them only where no letter or digit
/// stands before.
macro_rules! vendor_word_prefixes {
    () => {
        r"sk_live_|sk_test_|rk_live_|rk_test_|npm_|hf_|gsk_|xai-|r8_|fw_|ntn_|sbp_|pul-|pnu_|ico-|p8e-|fo1_|sgp_|squ_|sqp_|sqa_|tfp_|SG\."
    };
}

/// [`vendor_word_prefixes`] as the pre-pass's literals.
const VENDOR_WORD_NEEDLES: &[&str] = &[
    "npm_", "hf_", "gsk_", "xai-", "r8_", "fw_", "sk_live_", "sk_test_", "rk_live_", "rk_test_",
    "pul-", "pnu_", "ntn_", "sbp_", "ico-", "p8e-", "fo1_", "sgp_", "squ_", "sqp_", "sqa_", "tfp_",
    "SG.",
];

/// `curl -u user:password` needs `curl` before it on its line: `-u` and
/// `--user` name a user everywhere else (`ncl members add --user
/// telegram:jane`, `docker run -u 1000:1000`).
fn curl_command(text: &str, start: usize, _end: usize) -> bool {
    let line_start = text[..start].rfind(['\n', '\r']).map_or(0, |i| i + 1);
    let line = &text[line_start..start];
    // a JSON string's `\n` escape starts a line too
    let line = line.rsplit("\\n").next().unwrap_or(line);
    line.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_'))
        .any(|w| w.ends_with("curl"))
}

/// The built-in rules, in precedence order for equal spans.
pub const RULES: &[Rule] = &[
    Rule {
        // OpenAI project, service-account and admin keys, Anthropic (`sk-ant-api03-`,
        // `sk-ant-admin01-`), OpenRouter (`sk-or-v1-`): distinctive, anywhere
        name: "sk_key",
        pattern: r"sk-(?:proj|svcacct|admin|None|ant-[a-z]{3,5}[0-9]{2}|or-v1)-[A-Za-z0-9_-]{20,}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(SK_DISTINCT),
        left: None,
        right: None,
        near: None,
        cut_check: Some(anything),
        cut: Some(r"sk-(?:proj|svcacct|admin|None|ant|or)-[A-Za-z0-9_-]*"),
    },
    Rule {
        // OpenAI keys carry `T3BlbkFJ` (base64 of `OpenAI`) in their body:
        // distinctive, anywhere
        name: "sk_key",
        pattern: r"sk-[A-Za-z0-9_-]*T3BlbkFJ[A-Za-z0-9_-]*",
        group: 0,
        check: None,
        needle: Needle::Any(&["T3BlbkFJ"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // OpenAI legacy, DeepSeek, Moonshot, DashScope and most OpenAI-compatible
        // providers: `sk-` + 20+ letters and digits. Not after a letter, digit,
        // `_` or `-`: `task-`, `risk-`, `desk-` + a long suffix is a word.
        name: "sk_key",
        pattern: r"sk-[A-Za-z0-9]{20,}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["sk-"]),
        left: Some(token),
        right: Some(token),
        near: None,
        cut_check: None,
        cut: Some(r"sk-[A-Za-z0-9]{8,}"),
    },
    prefixed(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "b_pat_"],
        r"gh[pousr]_[A-Za-z0-9]{4,}|github_pat_[A-Za-z0-9_]{1,}",
    ),
    Rule {
        name: "gitlab_token",
        pattern: r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|wt|ffct)-[A-Za-z0-9_-]{20,}(?:\.[0-9a-z]{2}\.[0-9a-z]{9})?|GR1348941[A-Za-z0-9_-]{20}|_gitlab_session=[0-9a-z]{32}",
        group: 0,
        check: None,
        needle: Needle::Any(&[
            "glpat-",
            "gldt-",
            "glrt-",
            "glptt-",
            "glft-",
            "glsoat-",
            "glcbt-",
            "glimt-",
            "glagent-",
            "gloas-",
            "glwt-",
            "glffct-",
            "GR1348941",
            "b_session=",
        ]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: Some(
            r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|wt|ffct)-[A-Za-z0-9_-]{4,}|GR1348941[A-Za-z0-9_-]{3,19}|_gitlab_session=[0-9a-z]{4,31}",
        ),
    },
    Rule {
        // `AKIA`, `ASIA`, `ABIA`, `ACCA`, `A3T…` + 16 base32: not inside a longer
        // run of upper case and digits
        name: "aws_access_key_id",
        pattern: r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}",
        group: 0,
        check: None,
        needle: Needle::Any(&["A3T", "AKIA", "ASIA", "ABIA", "ACCA"]),
        left: Some(base32),
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{4,15}"),
    },
    Rule {
        // the 40-character secret after its name (`.env`, INI, JSON, STS output)
        name: "aws_secret_access_key",
        pattern: r#"(?:SECRET_ACCESS_KEY|secret_access_key|SecretAccessKey|secretAccessKey|AWS_SECRET_KEY|aws_secret_key)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([A-Za-z0-9/+]{40})"#,
        group: 1,
        check: None,
        needle: Needle::Any(&[
            "SECRET_ACCESS_KEY",
            "secret_access_key",
            "SecretAccessKey",
            "secretAccessKey",
            "AWS_SECRET_KEY",
            "aws_secret_key",
        ]),
        left: None,
        right: Some(base64),
        near: None,
        cut_check: None,
        cut: Some(
            r#"(?:SECRET_ACCESS_KEY|secret_access_key|SecretAccessKey|secretAccessKey|AWS_SECRET_KEY|aws_secret_key)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([A-Za-z0-9/+]{4,39})"#,
        ),
    },
    Rule {
        // a random 40-character base64 value beside an access key id or an
        // AWS / secret keyword (prose, CSV, a credentials table)
        name: "aws_secret_access_key",
        pattern: r"[A-Za-z0-9/+]{40}",
        group: 0,
        check: Some(base64_random),
        // an AWS word or key id; `secret` alone is too common a word to run
        // the rule on (the context check still counts it)
        needle: Needle::Any(&["aws", "AWS", "Aws", "AKIA", "ASIA"]),
        left: Some(base64),
        right: Some(base64),
        near: Some(aws_context),
        cut_check: Some(aws_secret_start),
        cut: Some(r"[A-Za-z0-9/+]{12,39}"),
    },
    Rule {
        // bot, user, legacy, workspace, configuration and app tokens; never a word
        // like `xoxo-indieweb`: a bot/user token's body starts with digits
        name: "slack_token",
        pattern: r"xox[bpeos]-[0-9]{1,14}-[A-Za-z0-9-]{8,}|xox[ar]-[A-Za-z0-9-]{8,}|xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{20,}|xoxe-[0-9]-[A-Za-z0-9]{20,}|xapp-[0-9]-[A-Za-z0-9]+-[0-9]+-[A-Za-z0-9]+",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["xox", "xapp-"]),
        left: None,
        right: Some(token),
        near: None,
        cut_check: None,
        cut: Some(
            r"xox[bpeos]-[0-9]{4,}[A-Za-z0-9-]*|xox[ar]-[A-Za-z0-9-]{4,}|xoxe\.xox[bp]-[0-9]-[A-Za-z0-9]{4,}|xoxe-[0-9]-[A-Za-z0-9]{4,}|xapp-[0-9]-[A-Za-z0-9-]{4,}",
        ),
    },
    prefixed(
        "slack_webhook",
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}",
        &["hooks.slack.com"],
        r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]*",
    ),
    Rule {
        // `<bot id>:AA…`, also inside `https://api.telegram.org/bot<token>/`
        name: "telegram_bot_token",
        pattern: r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}",
        group: 0,
        check: Some(telegram_secret),
        needle: Needle::Any(&[":AA"]),
        left: Some(digit),
        right: Some(token),
        near: None,
        cut_check: None,
        cut: Some(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{1,32}"),
    },
    Rule {
        name: "discord_bot_token",
        pattern: r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
        group: 0,
        check: Some(discord_token),
        needle: Needle::AtDot(discord_dot),
        left: None,
        right: Some(token),
        near: None,
        cut_check: Some(snowflake_segment),
        cut: Some(r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{0,6}(?:\.[A-Za-z0-9_-]{0,39})?"),
    },
    prefixed(
        "discord_webhook",
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{10,20}/[A-Za-z0-9_-]{30,}",
        &["i/webhooks/"],
        r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/[0-9]{10,20}/[A-Za-z0-9_-]*",
    ),
    Rule {
        // `AIza` + 35: not the middle of a longer random string
        name: "google_api_key",
        pattern: r"AIza[0-9A-Za-z_-]{35}",
        group: 0,
        check: None,
        needle: Needle::Any(&["AIza"]),
        left: None,
        right: Some(token),
        near: None,
        cut_check: None,
        cut: Some(r"AIza[0-9A-Za-z_-]{4,34}"),
    },
    prefixed(
        "google_oauth",
        r"ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{28}|1//0[0-9A-Za-z_-]{40,}",
        &["ya29.", "GOCSPX-", "1//0"],
        r"ya29\.[0-9A-Za-z_-]{4,}|GOCSPX-[0-9A-Za-z_-]{4,27}|1//0[0-9A-Za-z_-]{8,}",
    ),
    Rule {
        // PEM (RSA, EC, DSA, OPENSSH, PKCS#8, ENCRYPTED) and PGP private keys, to
        // their end line, or to the end of the text or a preview's `…`
        name: "private_key",
        pattern: r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|…|\z)",
        group: 0,
        check: Some(pem_body),
        needle: Needle::Any(&["-----BEGIN"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // signed, or unsigned (`alg: none`: an empty signature after the dot)
        name: "jwt",
        pattern: r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
        group: 0,
        check: None,
        needle: Needle::Any(&["eyJ"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: Some(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]*"),
    },
    Rule {
        // the token after `Bearer`: a space, `%20` (URL-encoded) or `+` between
        name: "bearer_token",
        pattern: r"(?:Bearer|bearer|BEARER)(?:[ \t]+|%20|\+)([A-Za-z0-9._~+/-]{16,}=*)",
        group: 1,
        check: Some(mixed),
        needle: Needle::Any(&["earer", "EARER"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: Some(r"(?:Bearer|bearer|BEARER)(?:[ \t]+|%20|\+)([A-Za-z0-9._~+/-]{8,})"),
    },
    Rule {
        // `Authorization: Basic <base64 of user:password>`
        name: "basic_auth",
        pattern: r"(?:Basic|basic|BASIC)(?:[ \t]+|%20)([A-Za-z0-9+/]{8,}={0,2})",
        group: 1,
        check: Some(basic_credentials),
        needle: Needle::Any(&["asic", "ASIC"]),
        left: None,
        right: Some(base64),
        near: None,
        cut_check: Some(basic_start),
        cut: Some(r"(?:Basic|basic|BASIC)(?:[ \t]+|%20)([A-Za-z0-9+/]{8,})"),
    },
    Rule {
        // `curl -u user:password`, `--user user:password`
        name: "basic_auth",
        pattern: r#"(?:-u|--user)(?:[ \t]+|=)\\?['"]?[^\s:'"\\]+:([^\s'"\\]+)"#,
        group: 1,
        check: Some(curl_password),
        needle: Needle::Any(&["-u ", "-u\t", "-u=", "--user"]),
        left: Some(token),
        right: None,
        near: Some(curl_command),
        cut_check: None,
        cut: None,
    },
    Rule {
        // `Authorization: Token <token>` (Django REST, Rails, …)
        name: "token_auth",
        pattern: r#"(?:Authorization|authorization|AUTHORIZATION)\\?["']?[ \t]*[:=][ \t]*\\?["']?(?:Token|token|Api-Token|Api-Key|ApiKey|Key|Bot|SSWS|GenieKey|Splunk|DSN)[ \t]+([A-Za-z0-9._~+/-]{8,}=*)"#,
        group: 1,
        check: Some(mixed),
        needle: Needle::Any(&["uthorization", "UTHORIZATION"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    prefixed(
        "stripe_key",
        r"(?:sk|rk)_(?:live|prod)_[A-Za-z0-9]{10,}",
        &["k_live_", "k_prod_"],
        r"(?:sk|rk)_(?:live|prod)_[A-Za-z0-9]{4,}",
    ),
    Rule {
        // test-mode keys: not glued to a word (`task_test_…` is an id)
        name: "stripe_key",
        pattern: r"(?:sk|rk)_test_[A-Za-z0-9]{10,}",
        group: 0,
        check: None,
        needle: Needle::Any(&["k_test_"]),
        left: Some(alnum),
        right: None,
        near: None,
        cut_check: None,
        cut: Some(r"(?:sk|rk)_test_[A-Za-z0-9]{4,}"),
    },
    Rule {
        // Twilio API key SID: `SK` + 32 hex
        name: "twilio_api_key",
        pattern: r"SK[0-9a-fA-F]{32}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Custom(twilio_sid),
        left: Some(upper_digit),
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"SK[0-9a-fA-F]{10,31}"),
    },
    Rule {
        // Twilio account SID: `AC` + 32 lower-case hex
        name: "twilio_api_key",
        pattern: r"AC[0-9a-f]{32}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&[
            "AC0", "AC1", "AC2", "AC3", "AC4", "AC5", "AC6", "AC7", "AC8", "AC9", "ACa", "ACb",
            "ACc", "ACd", "ACe", "ACf",
        ]),
        left: Some(upper_digit),
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"AC[0-9a-f]{10,31}"),
    },
    prefixed(
        "sendgrid_api_key",
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43,}",
        &["SG."],
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{0,42}|SG\.[A-Za-z0-9_-]{8,21}",
    ),
    prefixed(
        "npm_token",
        r"npm_[A-Za-z0-9]{36,}",
        &["pm_"],
        r"npm_[A-Za-z0-9]{6,35}",
    ),
    prefixed(
        "pypi_token",
        r"pypi-AgE[A-Za-z0-9_-]{50,}",
        &["pypi-AgE"],
        r"pypi-AgE[A-Za-z0-9_-]*",
    ),
    Rule {
        // user (`hf_`) and organisation (`api_org_`) tokens: 34 letters, both cases
        name: "huggingface_token",
        pattern: r"(?:hf_|api_org_)[A-Za-z]{34}",
        group: 0,
        check: Some(mixed),
        needle: Needle::Any(&["hf_", "i_org_"]),
        left: None,
        right: Some(token),
        near: None,
        cut_check: None,
        // a cut start only after a boundary: `…Symbolhf_generatedByHome` is
        // an identifier
        cut: Some(r"(?:^|[^A-Za-z0-9]|\\[nt])(hf_[A-Za-z]{8,33})|api_org_[A-Za-z]{4,33}"),
    },
    Rule {
        cut_check: Some(random_start),
        ..prefixed(
            "llm_provider_key",
            // Groq, xAI, Perplexity, Replicate, Fireworks, Together, Tavily, LangSmith
            r"gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|fw_[A-Za-z0-9]{20,}|tgp_v1_[A-Za-z0-9_-]{30,}|tvly-[A-Za-z0-9-]{20,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
            &[
                "gsk_", "xai-", "plx-", "r8_", "fw_", "tgp_v1_", "tvly-", "lsv2_",
            ],
            r"(?:gsk_|xai-|pplx-|r8_|fw_|tgp_v1_|tvly-|lsv2_)[A-Za-z0-9_-]{6,}",
        )
    },
    Rule {
        cut_check: Some(random_start),
        ..prefixed(
            "service_token",
            // Shopify, DigitalOcean, Linear, Postman, Grafana, New Relic, Doppler, age,
            // Sentry, Atlassian, Square, Notion, Supabase, HashiCorp Vault, Figma,
            // Tailscale, Heroku, Grafana API keys, Databricks, Pulumi, Prefect,
            // RubyGems, OpenShift, PlanetScale, Dynatrace, Duffel, Infracost,
            // Alibaba, Terraform Cloud, 1Password, Shippo, Brevo, Artifactory,
            // Scalingo, Cloudflare Origin CA, Adobe, Fly.io, ReadMe, EasyPost,
            // Frame.io, Harness, Clojars, Sourcegraph, Flutterwave, Octopus Deploy,
            // 1Password's Secret Key, Artifactory reference tokens, Authress,
            // Amazon Bedrock, Defined Networking, Facebook page tokens, 42 Intra,
            // MaxMind, New Relic browser and insert keys, Plaid, SettleMint,
            // SonarQube, Typeform, Yandex, Mapbox secret tokens
            r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|lin_(?:api|oauth)_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|NRAK-[A-Z0-9]{27}|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}|sntr(?:ys|yu|s)_[A-Za-z0-9+/=_-]{40,}|ATATT3[A-Za-z0-9_=-]{180,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{56,}|ntn_[0-9]{11}[A-Za-z0-9]{32,}|secret_[A-Za-z0-9]{43}|sbp_[a-f0-9]{40}|hv[sb]\.[A-Za-z0-9_-]{90,}|figd_[A-Za-z0-9_-]{40,}|tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]{20,}|HRKU-[A-Za-z0-9_-]{40,}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2}|dapi[a-f0-9]{32}(?:-[0-9])?|pul-[a-f0-9]{40}|pnu_[A-Za-z0-9]{36}|rubygems_[a-f0-9]{48}|sha256~[A-Za-z0-9_-]{43}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|duffel_(?:test|live)_[A-Za-z0-9_=-]{43}|ico-[A-Za-z0-9]{32}|LTAI[A-Za-z0-9]{20}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}|ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|shippo_(?:live|test)_[a-fA-F0-9]{40}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|AKCp[A-Za-z0-9]{69}|tk-us-[A-Za-z0-9_-]{48}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}|p8e-[A-Za-z0-9]{32}|fm1[ar]_[A-Za-z0-9+/]{100,}={0,3}|fm2_[A-Za-z0-9+/]{100,}={0,3}|fo1_[A-Za-z0-9_-]{43}|rdme_[a-z0-9]{70}|EZ[AT]K[A-Za-z0-9]{54}|fio-u-[A-Za-z0-9_=-]{64}|CLOJARS_[a-z0-9]{60}|sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|FLW(?:PUB|SEC)K_TEST-[a-hA-H0-9]{32}-X|FLWSECK_TEST-[a-hA-H0-9]{12}|API-[A-Z0-9]{26}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}|cmVmd[A-Za-z0-9]{59}|ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=_-]*|dnkey-[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}|EAA[MC][A-Za-z0-9]{100,}|s-s4t2(?:ud|af)-[a-f0-9]{64}|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9-]{32}|access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|sm_[aps]at_[A-Za-z0-9]{16}|sq[upa]_[a-f0-9]{40}|tfp_[A-Za-z0-9_.=-]{59}|AQVN[A-Za-z0-9_-]{35,38}|sk\.eyJ[A-Za-z0-9_-]{40,}\.[A-Za-z0-9_-]{20,}",
            &[
                "shp",
                "_v1_",
                "_api_",
                "_oauth_",
                "PMAK-",
                "glc_",
                "glsa_",
                "NRAK-",
                "dp.",
                "AGE-SECRET-KEY-1",
                "sntr",
                "ATATT3",
                "sq0",
                "EAA",
                "ntn_",
                "secret_",
                "sbp_",
                "hvs.",
                "hvb.",
                "igd_",
                "tskey-",
                "HRKU-",
                "eyJrIjoi",
                "dapi",
                "pul-",
                "pnu_",
                "rubygems_",
                "256~",
                "pscale_",
                "dt0c01.",
                "duffel_",
                "ico-",
                "LTAI",
                ".atlasv1.",
                "ops_eyJ",
                "shippo_",
                "xkeysib-",
                "AKCp",
                "tk-us-",
                "v1.0-",
                "p8e-",
                "fm1a_",
                "fm1r_",
                "fm2_",
                "fo1_",
                "rdme_",
                "EZAK",
                "EZTK",
                "fio-u-",
                "CLOJARS_",
                "sgp_",
                "FLW",
                "API-",
                "A3-",
                "cmVmd",
                "ABSK",
                "bedrock-api-key-",
                "dnkey-",
                "s-s4t2",
                "_mmk",
                "NRJS-",
                "NRII-",
                "access-",
                "sm_",
                "squ_",
                "sqp_",
                "sqa_",
                "tfp_",
                "AQVN",
                "sk.eyJ",
            ],
            r"(?:shp(?:at|ca|pa|ss)_|do[opr]_v1_|lin_(?:api|oauth)_|PMAK-|glc_|glsa_|NRAK-|dp\.(?:pt|st|sa|ct|scim|audit)\.|AGE-SECRET-KEY-1|sntr(?:ys|yu|s)_|ATATT3|sq0(?:atp|csp)-|ntn_|sbp_|hv[sb]\.|figd_|tskey-|HRKU-|eyJrIjoi|dapi|pul-|pnu_|rubygems_|sha256~|pscale_(?:tkn|pw|oauth)_|dt0c01\.|duffel_(?:test|live)_|ico-|ops_eyJ|shippo_(?:live|test)_|xkeysib-|tk-us-|v1\.0-|p8e-|fm1[ar]_|fm2_|fo1_|rdme_|fio-u-|CLOJARS_|sgp_|FLW(?:PUB|SEC)K_TEST-|API-|A3-|cmVmd|ABSK|bedrock-api-key-|dnkey-|EAA[AMC]|EZ[AT]K|AKCp|LTAI|s-s4t2(?:ud|af)-|NRJS-|NRII-|NRAK-|access-(?:sandbox|development|production)-|sm_[aps]at_|sq[upa]_|tfp_|AQVN|sk\.eyJ)[A-Za-z0-9_.+/=~-]{4,}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]*",
        )
    },
    Rule {
        // Harness: `pat.` / `sat.` + 22 `.` 24 `.` 20
        name: "service_token",
        pattern: r"[ps]at\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{20}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["pat.", "sat."]),
        left: None,
        right: Some(token),
        near: None,
        cut_check: None,
        cut: Some(
            r"[ps]at\.[A-Za-z0-9_-]{8,22}(?:\.[A-Za-z0-9_-]{0,24}(?:\.[A-Za-z0-9_-]{0,19})?)?",
        ),
    },
    Rule {
        // Azure storage connection strings: `AccountKey=<88 base64>`
        name: "azure_storage_key",
        pattern: r"AccountKey=([A-Za-z0-9+/]{86}==)",
        group: 1,
        check: None,
        needle: Needle::Any(&["AccountKey="]),
        left: None,
        right: Some(base64),
        near: None,
        cut_check: None,
        cut: Some(r"AccountKey=[A-Za-z0-9+/]{8,}"),
    },
    Rule {
        // Mailchimp: 32 hex + the data centre (`-us21`)
        name: "mailchimp_api_key",
        pattern: r"[0-9a-f]{32}-us[0-9]{1,2}",
        group: 0,
        check: None,
        needle: Needle::Any(&["-us"]),
        left: Some(alnum),
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"[0-9a-f]{32}-us[0-9]?"),
    },
    Rule {
        // Authress service-client keys: `sc_`/`ext_`/… + id `.` 4–6 `.acc_` …
        name: "service_token",
        pattern: r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
        group: 0,
        check: None,
        needle: Needle::Any(&[".acc"]),
        left: None,
        right: None,
        near: None,
        cut_check: Some(random_start),
        cut: Some(
            r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[A-Za-z0-9._+/=-]*",
        ),
    },
    Rule {
        // Dropbox short-lived tokens: `sl.` + 130 or more
        name: "service_token",
        pattern: r"sl\.[A-Za-z0-9_=-]{130,}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["sl."]),
        left: None,
        right: None,
        near: None,
        cut_check: Some(random_start),
        cut: Some(r"sl\.[A-Za-z0-9_=-]{8,}"),
    },
    Rule {
        // Airtable personal access tokens: `pat` + 14 `.` 64 hex
        name: "service_token",
        pattern: r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
        group: 0,
        check: None,
        needle: Needle::AtDot(airtable_dot),
        left: None,
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"pat[A-Za-z0-9]{14}\.[a-f0-9]{0,63}"),
    },
    Rule {
        // ClickHouse Cloud: `4b1d` + 38 of both cases and digits (a hex
        // digest holding `4b1d` is lower case)
        name: "service_token",
        pattern: r"4b1d[A-Za-z0-9]{38}",
        group: 0,
        check: Some(upper_lower_digit),
        needle: Needle::Any(&["4b1d"]),
        left: None,
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"4b1d[A-Za-z0-9]{8,37}"),
    },
    Rule {
        // Artifactory's encrypted password (`AP` + a hex digit + 30+)
        name: "service_token",
        pattern: r"AP[0-9A-F][A-Za-z0-9]{30,}",
        group: 0,
        check: Some(upper_lower_digit),
        needle: Needle::Any(&[
            "AP0", "AP1", "AP2", "AP3", "AP4", "AP5", "AP6", "AP7", "AP8", "AP9", "APA", "APB",
            "APC", "APD", "APE", "APF",
        ]),
        left: None,
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(r"AP[0-9A-F][A-Za-z0-9]{9,29}"),
    },
    Rule {
        // a Facebook app access token, `<app id>|<secret>`, beside the word
        name: "service_token",
        pattern: r"[0-9]{15,16}(?:\||%7C)[A-Za-z0-9_-]{27,40}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["acebook", "ACEBOOK"]),
        left: Some(digit),
        right: Some(token),
        near: Some(facebook_context),
        cut_check: Some(anything),
        cut: Some(r"[0-9]{15,16}(?:\||%7C)[A-Za-z0-9_-]{0,26}"),
    },
    Rule {
        // Sidekiq Enterprise's gem-server credentials (`user:password` in hex)
        name: "service_token",
        pattern: r#"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([a-f0-9]{8}:[a-f0-9]{8})"#,
        group: 1,
        check: None,
        needle: Needle::Any(&["__CONTRIBSYS__COM"]),
        left: None,
        right: Some(alnum),
        near: None,
        cut_check: None,
        cut: Some(
            r#"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([a-f0-9:]{4,16})"#,
        ),
    },
    Rule {
        // X (Twitter) app-only bearer token: 22 `A` (the same in every
        // token) and 80–100 more
        name: "bearer_token",
        pattern: r"A{22}([A-Za-z0-9%]{80,100})",
        group: 1,
        check: Some(upper_lower_digit),
        needle: Needle::Any(&["AAAAAAAAAAAAAAAAAAAAAA"]),
        left: None,
        right: Some(alnum),
        near: None,
        cut_check: Some(mixed),
        cut: Some(r"A{22}([A-Za-z0-9%]{4,79})"),
    },
    prefixed(
        "teams_webhook",
        r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]{20,}|https://outlook\.office(?:365)?\.com/webhook/[A-Za-z0-9@/_-]{20,}",
        &["webhook"],
        r"https://[A-Za-z0-9-]+\.webhook\.office\.com/webhookb2/[A-Za-z0-9@/_-]*|https://outlook\.office(?:365)?\.com/webhook/[A-Za-z0-9@/_-]*",
    ),
    Rule {
        // a JWT itself base64-encoded (`ZXlK`: the base64 of `eyJ`)
        name: "jwt",
        pattern: r"ZXlK[A-Za-z0-9+/]{40,}={0,2}",
        group: 0,
        check: Some(base64_jwt),
        needle: Needle::Any(&["ZXlK"]),
        left: None,
        right: Some(base64),
        near: None,
        cut_check: Some(base64_jwt_start),
        cut: Some(r"ZXlK[A-Za-z0-9+/]{8,}"),
    },
    Rule {
        // SSH2 (RFC 4716) encrypted private keys, to their end line, the end
        // of the text or a preview's `…`
        name: "private_key",
        pattern: r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----(?s:.*?)(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----|…|\z)",
        group: 0,
        check: Some(pem_body),
        needle: Needle::Any(&["BEGIN SSH2 ENCRYPTED"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // a PuTTY key file's private lines (`Private-Lines: N` and N lines of
        // base64, as written or as a JSON string's `\n` escapes)
        name: "private_key",
        pattern: r"Private-Lines:[ \t]*[0-9]+(?:\r?\n|(?:\\r)?\\n)((?:[A-Za-z0-9+/=]+(?:\r?\n|(?:\\r)?\\n))*[A-Za-z0-9+/=]+)",
        group: 1,
        check: None,
        needle: Needle::Any(&["Private-Lines:"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // Azure AD (Entra ID) client secrets: 3 + a digit + `Q~` + 31–34
        name: "azure_ad_client_secret",
        pattern: r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&[
            "0Q~", "1Q~", "2Q~", "3Q~", "4Q~", "5Q~", "6Q~", "7Q~", "8Q~", "9Q~",
        ]),
        left: None,
        right: Some(azure_char),
        near: None,
        cut_check: None,
        cut: Some(r"[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{6,30}"),
    },
    Rule {
        // a kubeconfig's client key and certificate (base64 of their PEM)
        name: "kube_credential",
        pattern: r#"(?:client-key-data|client-certificate-data)(?:\\?["'])?[ \t]*:[ \t]*(?:\\?["'])?([A-Za-z0-9+/]{8,}={0,2})"#,
        group: 1,
        check: None,
        // a needle's first bytes are what the pre-pass fingerprints: not
        // the `clie` of every `client`
        needle: Needle::Any(&["client-key-data", "t-certificate-data"]),
        left: None,
        right: Some(base64),
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // the values of a Kubernetes Secret's `data:` (base64) and
        // `stringData:` maps, one entry a line
        name: "kube_credential",
        pattern: r#"(?:\A|\n|\\n)[ \t]+[A-Za-z0-9._-]+:[ \t]*(?:\\?["'])?([^\s'"\\]{4,})"#,
        group: 1,
        check: Some(given_password),
        needle: Needle::Any(&["Secret"]),
        left: None,
        right: None,
        near: Some(kube_secret_context),
        cut_check: None,
        cut: None,
    },
    Rule {
        // a Docker `config.json` `"auth"` and an `.npmrc` `_auth`: the base64
        // of `user:password`
        name: "basic_auth",
        pattern: r#"(?:_auth|"auth|\\"auth)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([A-Za-z0-9+/]{8,}={0,2})"#,
        group: 1,
        check: Some(basic_credentials),
        needle: Needle::Any(&["auth"]),
        left: Some(ident),
        right: Some(base64),
        near: None,
        cut_check: Some(basic_start),
        cut: Some(
            r#"(?:_auth|"auth|\\"auth)(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([A-Za-z0-9+/]{8,})"#,
        ),
    },
    Rule {
        // `.netrc`: `machine <host> [login <user>] [account <a>] password <p>`,
        // on one line or several
        name: "password_file",
        pattern: r"machine(?:[ \t\r\n]|\\[nrt])+[^\s\\]+(?:[ \t\r\n]|\\[nrt])+(?:login(?:[ \t\r\n]|\\[nrt])+[^\s\\]+(?:[ \t\r\n]|\\[nrt])+)?(?:account(?:[ \t\r\n]|\\[nrt])+[^\s\\]+(?:[ \t\r\n]|\\[nrt])+)?password(?:[ \t]|\\t)+([^\s\\]+)",
        group: 1,
        check: Some(given_password),
        needle: Needle::Any(&["machine"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // a `~/.pgpass` line: `host:port:database:user:password`
        name: "password_file",
        pattern: r"[A-Za-z0-9._*-]+:(?:[0-9]{1,5}|\*):[^:\s\\\[\]]+:[^:\s\\\[\]]+:([^:\s\\\[\]]+)",
        group: 1,
        check: Some(given_password),
        needle: Needle::Custom(pgpass_port),
        left: Some(pgpass_host_char),
        right: Some(pgpass_field_char),
        near: Some(pgpass_host),
        cut_check: None,
        cut: None,
    },
    Rule {
        // a `.pypirc` repository's `password = …` (a password of words alone
        // too: the section says what it is)
        name: "password_file",
        pattern: r"(?:\A|\n|\\n)[ \t]*password[ \t]*[=:][ \t]*([^\s\\]+)",
        group: 1,
        check: Some(given_password),
        // not the `user` of every `user` (the pre-pass fingerprints a
        // needle's first bytes)
        needle: Needle::Any(&["sername"]),
        left: None,
        right: None,
        near: Some(pypirc_context),
        cut_check: None,
        cut: None,
    },
    Rule {
        // a NuGet.config's `<add key="ClearTextPassword" value="…" />`
        name: "password_file",
        pattern: r#"<add key=\\?"(?:ClearText)?Password\\?"[ \t]+value=\\?"([^"\\]+)"#,
        group: 1,
        check: Some(given_password),
        needle: Needle::Any(&["add key="]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // `mysql -p<password>` (glued: `-p` and a blank asks for it, `-P` is
        // the port) and the other MySQL and MariaDB clients
        name: "cli_secret",
        pattern: r"(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlcheck|mariadb|mariadb-dump)(?:[ \t][^\n|;&]*?)?[ \t]-p([^\s'\x22\\-][^\s'\x22\\]*)",
        group: 1,
        check: Some(given_password),
        needle: Needle::Any(&["mysql", "mariadb"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // `--password X`, `--token=X`, `--api-key X`, `--client-secret X`, …
        name: "cli_secret",
        pattern: r#"(?:\A|[\s'"(=]|\\[nt])--?(?:[A-Za-z0-9]+-)*(?:password|passwd|pass|token|secret|api-key|apikey|access-key|secret-key|private-key)(?:=|[ \t]+)(['"]?)([^\s'"\\]+)"#,
        group: 2,
        check: Some(flag_value),
        needle: Needle::Any(&["-pass", "-token", "-secret", "-key", "-apikey"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // `sshpass -p X`, `docker login -p X` and the other registry logins
        name: "cli_secret",
        pattern: r#"(?:sshpass|docker login|podman login|buildah login|skopeo login|helm registry login|oras login)(?:[ \t][^\n|;&]*?)?[ \t]-p[ \t]+(['"]?)([^\s'"\\]+)"#,
        group: 2,
        check: Some(given_password),
        needle: Needle::Any(&["sshpass", "login"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // a password in the environment of a command: `PGPASSWORD=…`,
        // `MYSQL_PWD=…` (a short one too: the name says what it is)
        name: "cli_secret",
        pattern: r#"(?:PGPASSWORD|MYSQL_PWD|REDISCLI_AUTH|SSHPASS)=(['"]?)([^\s'"\\]+)"#,
        group: 2,
        check: Some(given_password),
        needle: Needle::Any(&["PGPASSWORD", "MYSQL_PWD", "REDISCLI_AUTH", "SSHPASS"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // the password of a URL's userinfo cut short before its `@`
        // (`postgres://app:q8Zt…`): not a port (`https://host:8443…`)
        name: "url_password",
        pattern: r#"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#"'\\]*:([^\s@/?#"'\\]+)(?:…|\z)"#,
        group: 1,
        check: Some(url_cut_password),
        needle: Needle::Any(&["://"]),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // the password of a URL's userinfo: `postgres://app:<password>@db`, and
        // any scheme (`https://user:<password>@host`, `redis://:<password>@`)
        name: "url_password",
        pattern: r"[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s:/@?#]*:([^\s@/?#]+)@[A-Za-z0-9\[]",
        group: 1,
        check: Some(url_password),
        needle: Needle::Custom(url_userinfo),
        left: None,
        right: None,
        near: None,
        cut_check: None,
        cut: None,
    },
    Rule {
        // the value of a secret-named key (`*_KEY=`, `*_TOKEN=`, `*_SECRET=`,
        // `PASSWORD=`, `apiKey:`, `"db_password": "…"`) in `.env`, INI, YAML,
        // JSON and shell text
        name: "secret_assignment",
        pattern: ASSIGN,
        group: 1,
        check: Some(assigned_value),
        needle: Needle::Assign,
        left: Some(ident),
        right: None,
        near: None,
        cut_check: Some(assigned_start),
        cut: Some(ASSIGN),
    },
    Rule {
        // a known vendor's prefix and a random body of a length or alphabet
        // its own rule does not name (a format that changed)
        name: "vendor_token",
        pattern: concat!("(?:", vendor_prefixes!(), ")[A-Za-z0-9_-]{16,}"),
        group: 0,
        check: Some(random_body),
        needle: Needle::Any(VENDOR_NEEDLES),
        left: None,
        right: None,
        near: None,
        cut_check: Some(random_start),
        cut: Some(concat!("(?:", vendor_prefixes!(), ")[A-Za-z0-9_-]{6,}")),
    },
    Rule {
        // the same after a prefix that could end a word (`hf_` in
        // `kHMSymbolhf_…`, `sk_test_` in `task_test_…`): not glued to one
        name: "vendor_token",
        pattern: concat!("(?:", vendor_word_prefixes!(), ")[A-Za-z0-9_-]{16,}"),
        group: 0,
        check: Some(random_body),
        needle: Needle::Any(VENDOR_WORD_NEEDLES),
        left: Some(alnum),
        right: None,
        near: None,
        cut_check: Some(random_start),
        cut: Some(concat!(
            "(?:",
            vendor_word_prefixes!(),
            ")[A-Za-z0-9_-]{6,}"
        )),
    },
];
