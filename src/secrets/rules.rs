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

/// A PEM or PGP block with a body: some run of 16 base64 characters after
/// its BEGIN line (not `-----BEGIN … PRIVATE KEY----- and must never be
/// pasted`, not a `...` placeholder body).
fn pem_body(s: &str) -> bool {
    let body = s.splitn(3, "-----").nth(2).unwrap_or("");
    let mut run = 0;
    body.bytes().any(|b| {
        run = if b.is_ascii_alphanumeric() || b == b'+' || b == b'/' {
            run + 1
        } else {
            0
        };
        run >= 16
    })
}

/// `Basic <base64>`: it decodes to `user:password`.
fn basic_credentials(s: &str) -> bool {
    use base64::Engine;
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const B64: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    let Ok(text) = B64.decode(s).map(String::from_utf8) else {
        return false;
    };
    text.is_ok_and(|t| {
        t.find(':').is_some_and(|i| i > 0 && i + 1 < t.len()) && t.chars().all(|c| !c.is_control())
    })
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

/// `SK` and 32 hex digits somewhere: the Twilio rule's needle (two letters
/// are too short a literal for the SIMD search).
fn twilio_sid(hay: &[u8]) -> bool {
    // the `K` (the rarer letter, one `memchr` pass), then the `S` before it
    memchr::memchr_iter(b'K', hay).any(|i| {
        i > 0
            && hay[i - 1] == b'S'
            && hay
                .get(i + 1..i + 33)
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
        r"(?:[A-Za-z0-9]+[_.-])*(?:[A-Za-z0-9]*(?:api|API|Api|secret|SECRET|Secret|access|ACCESS|Access|private|PRIVATE|Private|auth|AUTH|Auth|client|CLIENT|Client|master|MASTER|Master|signing|SIGNING|Signing|encryption|ENCRYPTION|Encryption|account|ACCOUNT|Account|service|SERVICE|Service|license|LICENSE|License)[_.-]?(?:key|KEY|Key)|[A-Za-z0-9]*(?:token|TOKEN|Token|secret|SECRET|Secret|password|PASSWORD|Password|passwd|PASSWD|Passwd|pwd|PWD|Pwd|Pass)|pass|PASS)"
    };
}

/// A whole string that is a secret-named key (a JSON object's key).
pub const SECRET_NAME: &str = concat!("^", secret_name!(), "$");

/// `<secret-named key> = <value>` (`.env`, INI, YAML, JSON text, shell).
const ASSIGN: &str = concat!(
    secret_name!(),
    r#"(?:\\?["'])?[ \t]*[=:][ \t]*(?:\\?["'])?([!#-&(-+\--:<-\[\]-_a-~]{8,})"#
);

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
        cut: Some(r"sk-[A-Za-z0-9]{8,}"),
    },
    prefixed(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}",
        &["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "b_pat_"],
        r"gh[pousr]_[A-Za-z0-9]{4,}|github_pat_[A-Za-z0-9_]{4,}",
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
        cut: Some(r"gl(?:pat|dt|rt|ptt|ft|soat|cbt|imt|agent|oas|wt|ffct)-[A-Za-z0-9_-]{4,}"),
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
        cut: Some(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{4,15}"),
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
        cut: None,
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
        cut: Some(r"xox[bpeos]-[0-9]{4,}[A-Za-z0-9-]*|xapp-[0-9]-[A-Za-z0-9-]{4,}"),
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
        cut: Some(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{4,32}"),
    },
    Rule {
        name: "discord_bot_token",
        pattern: r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::DotsApart(6),
        left: None,
        right: Some(token),
        near: None,
        cut: None,
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
        cut: Some(r"AIza[0-9A-Za-z_-]{4,34}"),
    },
    prefixed(
        "google_oauth",
        r"ya29\.[0-9A-Za-z_-]{20,}|GOCSPX-[0-9A-Za-z_-]{28}|1//0[0-9A-Za-z_-]{40,}",
        &["ya29.", "GOCSPX-", "1//0"],
        r"ya29\.[0-9A-Za-z_-]{4,}|GOCSPX-[0-9A-Za-z_-]{4,27}",
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
        cut: None,
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
        near: None,
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
        cut: None,
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
        // a cut start only after a boundary: `…Symbolhf_generatedByHome` is
        // an identifier
        cut: Some(r"(?:^|[^A-Za-z0-9]|\[nt])(hf_[A-Za-z]{8,33})"),
    },
    prefixed(
        "llm_provider_key",
        // Groq, xAI, Perplexity, Replicate, Fireworks, Together, Tavily, LangSmith
        r"gsk_[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{40,}|pplx-[A-Za-z0-9]{40,}|r8_[A-Za-z0-9]{30,}|fw_[A-Za-z0-9]{20,}|tgp_v1_[A-Za-z0-9_-]{30,}|tvly-[A-Za-z0-9-]{20,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
        &[
            "gsk_", "xai-", "plx-", "r8_", "fw_", "tgp_v1_", "tvly-", "lsv2_",
        ],
        r"(?:gsk_|xai-|pplx-|r8_|fw_|tgp_v1_|tvly-|lsv2_)[A-Za-z0-9_-]{6,}",
    ),
    prefixed(
        "service_token",
        // Shopify, DigitalOcean, Linear, Postman, Grafana, New Relic, Doppler, age,
        // Sentry, Atlassian, Square, Notion, Supabase, HashiCorp Vault, Figma,
        // Tailscale, Heroku, Grafana API keys, Databricks, Pulumi, Prefect,
        // RubyGems, OpenShift, PlanetScale, Dynatrace, Duffel, Infracost,
        // Alibaba, Terraform Cloud, 1Password, Shippo, Brevo, Artifactory,
        // Scalingo, Cloudflare Origin CA, Adobe, Fly.io, ReadMe, EasyPost,
        // Frame.io, Harness, Clojars, Sourcegraph, Flutterwave, Octopus Deploy
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|lin_(?:api|oauth)_[A-Za-z0-9]{40}|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glc_[A-Za-z0-9+/]{32,}={0,2}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|NRAK-[A-Z0-9]{27}|dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}|AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}|sntr(?:ys|yu|s)_[A-Za-z0-9+/=_-]{40,}|ATATT3[A-Za-z0-9_=-]{180,}|sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|EAAA[A-Za-z0-9_-]{56,}|ntn_[0-9]{11}[A-Za-z0-9]{32,}|secret_[A-Za-z0-9]{43}|sbp_[a-f0-9]{40}|hv[sb]\.[A-Za-z0-9_-]{90,}|figd_[A-Za-z0-9_-]{40,}|tskey-[a-z]+-[A-Za-z0-9]+-[A-Za-z0-9]{20,}|HRKU-[A-Za-z0-9_-]{40,}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2}|dapi[a-f0-9]{32}(?:-[0-9])?|pul-[a-f0-9]{40}|pnu_[A-Za-z0-9]{36}|rubygems_[a-f0-9]{48}|sha256~[A-Za-z0-9_-]{43}|pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.=-]{32,64}|dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}|duffel_(?:test|live)_[A-Za-z0-9_=-]{43}|ico-[A-Za-z0-9]{32}|LTAI[A-Za-z0-9]{20}|[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}|ops_eyJ[A-Za-z0-9+/]{250,}={0,3}|shippo_(?:live|test)_[a-fA-F0-9]{40}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}|AKCp[A-Za-z0-9]{69}|tk-us-[A-Za-z0-9_-]{48}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}|p8e-[A-Za-z0-9]{32}|fm[12]_[A-Za-z0-9+/]{100,}={0,3}|fo1_[A-Za-z0-9_-]{43}|rdme_[a-z0-9]{70}|EZAK[A-Za-z0-9]{54}|fio-u-[A-Za-z0-9_=-]{64}|CLOJARS_[a-z0-9]{60}|sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|FLW(?:PUB|SEC)K_TEST-[a-hA-H0-9]{32}-X|API-[A-Z0-9]{26}",
        &[
            "shpat_",
            "shpca_",
            "shppa_",
            "shpss_",
            "_v1_",
            "_api_",
            "_oauth_",
            "PMAK-",
            "glc_",
            "glsa_",
            "NRAK-",
            "dp.pt.",
            "dp.st.",
            "dp.sa.",
            "dp.ct.",
            "dp.scim.",
            "dp.audit.",
            "AGE-SECRET-KEY-1",
            "sntr",
            "ATATT3",
            "sq0atp-",
            "sq0csp-",
            "EAAA",
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
            "fm1_",
            "fm2_",
            "fo1_",
            "rdme_",
            "EZAK",
            "fio-u-",
            "CLOJARS_",
            "sgp_",
            "FLWPUBK_",
            "FLWSECK_",
            "API-",
        ],
        r"(?:shp(?:at|ca|pa|ss)_|do[opr]_v1_|lin_(?:api|oauth)_|PMAK-|glc_|glsa_|NRAK-|dp\.(?:pt|st|sa|ct|scim|audit)\.|AGE-SECRET-KEY-1|sntr(?:ys|yu|s)_|ATATT3|sq0(?:atp|csp)-|ntn_|sbp_|hv[sb]\.|figd_|tskey-|HRKU-|eyJrIjoi|dapi|pul-|pnu_|rubygems_|sha256~|pscale_(?:tkn|pw|oauth)_|dt0c01\.|duffel_(?:test|live)_|ico-|ops_eyJ|shippo_(?:live|test)_|xkeysib-|tk-us-|v1\.0-|p8e-|fm[12]_|fo1_|rdme_|fio-u-|CLOJARS_|sgp_|FLW(?:PUB|SEC)K_TEST-)[A-Za-z0-9_.+/=~-]{4,}",
    ),
    Rule {
        // Harness: `pat.` + 22 `.` 24 `.` 20
        name: "service_token",
        pattern: r"pat\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{24}\.[A-Za-z0-9_-]{20}",
        group: 0,
        check: Some(digit_and_letter),
        needle: Needle::Any(&["pat."]),
        left: None,
        right: Some(token),
        near: None,
        cut: None,
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
        cut: None,
    },
];
