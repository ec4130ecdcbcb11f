use super::engine::{Search, builtin_regexes, dots_apart, ends_secretish, left_ok, literals};
use super::*;
use proptest::prelude::*;
use regex::Regex;

/// One scanner for the tests that only redact (its memo of clean texts
/// changes no output).
static SCANNER: std::sync::LazyLock<Scanner> = std::sync::LazyLock::new(|| Scanner::new(&[]));

fn redact(s: &str) -> (String, Counts) {
    let mut c = Counts::new();
    let out = SCANNER.redact(s, &mut c).unwrap_or_else(|| s.to_string());
    (out, c)
}

const SK: &str = "sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH6jD0sA9e";
const GHP: &str = "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R";

/// One positive per family: only the token goes, the rest of the text stays.
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
            "deepseek sk-3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e ok",
            "deepseek [redacted:sk_key] ok",
            "sk_key",
        ),
        (
            "token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R done",
            "token [redacted:github_token] done",
            "github_token",
        ),
        (
            "github_pat_11AQ7XT2MV0k9r4swz8ncy1p_hd6fja3euo5igtzq8xv3lm9",
            "[redacted:github_token]",
            "github_token",
        ),
        (
            "gitlab glpat-Zk3xQ9mT2vB7nL4pR8sW ok",
            "gitlab [redacted:gitlab_token] ok",
            "gitlab_token",
        ),
        (
            "aws AKIAZ3MT7QW5RX2LPK4N x",
            "aws [redacted:aws_access_key_id] x",
            "aws_access_key_id",
        ),
        (
            "aws_secret_access_key = Jq8vR3kZt0pW2mXn5bY7cL9dF4gH6sA1eU3iO5kT",
            "aws_secret_access_key = [redacted:aws_secret_access_key]",
            "aws_secret_access_key",
        ),
        (
            "id AKIAZ3MT7QW5RX2LPK4N, and the other one is Jq8vR3kZt0pW2mXn5bY7cL9dF4gH6sA1eU3iO5kT.",
            "id [redacted:aws_access_key_id], and the other one is [redacted:aws_secret_access_key].",
            "aws_secret_access_key",
        ),
        (
            "slack xoxb-572849163052-8136402957316-Q7xT2mVb9LkR4sWz8NcY1pHd",
            "slack [redacted:slack_token]",
            "slack_token",
        ),
        (
            "post to https://hooks.slack.com/services/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 now",
            "post to [redacted:slack_webhook] now",
            "slack_webhook",
        ),
        (
            "bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 ok",
            "bot [redacted:telegram_bot_token] ok",
            "telegram_bot_token",
        ),
        (
            "MTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.Q7xT2mVb9LkR4sWz8NcY1pHdYz0123456789",
            "[redacted:discord_bot_token]",
            "discord_bot_token",
        ),
        (
            "hook https://discord.com/api/webhooks/1187392046518273645/Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUuWq5Er8 x",
            "hook [redacted:discord_webhook] x",
            "discord_webhook",
        ),
        (
            "maps AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q end",
            "maps [redacted:google_api_key] end",
            "google_api_key",
        ),
        (
            "oauth ya29.a0AfB_byC3dE4fG5hI6jK7lM8nO9pQ end",
            "oauth [redacted:google_oauth] end",
            "google_oauth",
        ),
        (
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\nafter",
            "[redacted:private_key]\nafter",
            "private_key",
        ),
        (
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGXzQ3kBDACm7vT9\n-----END PGP PRIVATE KEY BLOCK-----",
            "[redacted:private_key]",
            "private_key",
        ),
        (
            "t=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U;",
            "t=[redacted:jwt];",
            "jwt",
        ),
        (
            "unsigned eyJhbGciOiJub25lIn0.eyJzdWIiOiJhZG1pbiJ9. end",
            "unsigned [redacted:jwt] end",
            "jwt",
        ),
        (
            "Authorization: Bearer 9f8e7d6c5b4a39281706abcdefAB ok",
            "Authorization: Bearer [redacted:bearer_token] ok",
            "bearer_token",
        ),
        (
            "Authorization: Basic YWRtaW46czNjcjN0UGFzcw== ok",
            "Authorization: Basic [redacted:basic_auth] ok",
            "basic_auth",
        ),
        (
            "curl -u deploy:Hx7pQ2vLm9 https://x",
            "curl -u deploy:[redacted:basic_auth] https://x",
            "basic_auth",
        ),
        (
            "Authorization: Token 8c1f3a9e7b5d2f4a6c8e0b1d3f5a7c9e",
            "Authorization: Token [redacted:token_auth]",
            "token_auth",
        ),
        (
            "stripe sk_live_4eC39HqLyjWDarjtT1zdp7dcQ9 ok",
            "stripe [redacted:stripe_key] ok",
            "stripe_key",
        ),
        (
            "twilio SK2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a ok",
            "twilio [redacted:twilio_api_key] ok",
            "twilio_api_key",
        ),
        (
            "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",
            "[redacted:sendgrid_api_key]",
            "sendgrid_api_key",
        ),
        (
            "npm npm_Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUu ok",
            "npm [redacted:npm_token] ok",
            "npm_token",
        ),
        (
            "pypi-AgEIcHlwaS5vcmcCJDk4ZTY0ZjBmLTBhNzEtNDg3Zi1iODBiLTQ3ZGQ4NzEyNmQ1MAACKlszLCJhNDE",
            "[redacted:pypi_token]",
            "pypi_token",
        ),
        (
            "hf 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 ok",
            "hf [redacted:huggingface_token] ok",
            "huggingface_token",
        ),
        (
            "groq gsk_Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUuWq5Er8Ty3Ui6 ok",
            "groq [redacted:llm_provider_key] ok",
            "llm_provider_key",
        ),
        (
            "shopify 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 ok",
            "shopify [redacted:service_token] ok",
            "service_token",
        ),
        (
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUuWq5Er8Ty3Ui6Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUu12==;",
            "DefaultEndpointsProtocol=https;AccountName=x;AccountKey=[redacted:azure_storage_key];",
            "azure_storage_key",
        ),
        (
            "mc 3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e-us21 ok",
            "mc [redacted:mailchimp_api_key] ok",
            "mailchimp_api_key",
        ),
        (
            "DATABASE_URL postgres://app:Hx7pQ2vLm9@db.internal:5432/app",
            "DATABASE_URL postgres://app:[redacted:url_password]@db.internal:5432/app",
            "url_password",
        ),
        (
            "STRIPE_WEBHOOK_SECRET=q8Zt3LmN7vXc2KpR9sWy\nDEBUG=1",
            "STRIPE_WEBHOOK_SECRET=[redacted:secret_assignment]\nDEBUG=1",
            "secret_assignment",
        ),
        (
            "post to https://acme.webhook.office.com/webhookb2/3f9a1c7e-5b2d-4f6a-8c0e-1b3d5f7a9c2e@5b2d4f6a-8c0e-1b3d-5f7a-9c2e3f9a1c7e/IncomingWebhook/q8zt3lmn7vxc2kpr9swy4jdf0agbh1ce/8c0e1b3d-5f7a-9c2e-3f9a-1c7e5b2d4f6a now",
            "post to [redacted:teams_webhook] now",
            "teams_webhook",
        ),
        (
            "client secret z0Y2Q~GI2FvzVKSRTTx687vhG8wxw.NJ9lF5NjWD ok",
            "client secret [redacted:azure_ad_client_secret] ok",
            "azure_ad_client_secret",
        ),
        (
            "    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUJx",
            "    client-key-data: [redacted:kube_credential]",
            "kube_credential",
        ),
        (
            "machine api.example.net login deploy password hunter2x",
            "machine api.example.net login deploy password [redacted:password_file]",
            "password_file",
        ),
        (
            "mysql -u app -pS3cr3t!x orders",
            "mysql -u app -p[redacted:cli_secret] orders",
            "cli_secret",
        ),
        (
            "new format glpat-Zk3xQ9mT2vB7nL4p ok",
            "new format [redacted:vendor_token] ok",
            "vendor_token",
        ),
    ];
    for (input, want, rule) in cases {
        let (got, counts) = redact(input);
        assert_eq!(&got, want, "{rule}");
        assert_eq!(counts.get(rule), Some(&1), "{rule}: {counts:?}");
    }
    for n in families() {
        assert!(
            cases.iter().any(|(_, _, r)| *r == n),
            "no positive case for {n}"
        );
    }
}

/// The contexts a key is pasted in: the token goes in each, whatever stands
/// before or after it.
#[test]
fn boundaries_follow_the_token_not_the_word() {
    let contexts: &[(&str, &str)] = &[
        ("我的密钥是{}", "我的密钥是[redacted:R]"),
        ("{}是我的密钥", "[redacted:R]是我的密钥"),
        ("{}", "[redacted:R]"),
        ("openai\\n{}\\n", "openai\\n[redacted:R]\\n"),
        ("a\\t{}", "a\\t[redacted:R]"),
        ("{\\\"k\\\":\\\"{}\\\"}", "{\\\"k\\\":\\\"[redacted:R]\\\"}"),
        ("\\u5bc6\\u94a5{}", "\\u5bc6\\u94a5[redacted:R]"),
        (
            "https://api.example.com/v1/items?ref={}&page=2",
            "https://api.example.com/v1/items?ref=[redacted:R]&page=2",
        ),
        ("?q=key%3D{}%26x", "?q=key%3D[redacted:R]%26x"),
        ("set `{}` in config", "set `[redacted:R]` in config"),
        ("```\n{}\n```", "```\n[redacted:R]\n```"),
    ];
    let keys: &[(&str, &str)] = &[
        (SK, "sk_key"),
        ("sk-3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e", "sk_key"),
        (GHP, "github_token"),
        ("AKIAZ3MT7QW5RX2LPK4N", "aws_access_key_id"),
        ("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q", "google_api_key"),
        ("glpat-Zk3xQ9mT2vB7nL4pR8sW", "gitlab_token"),
        (
            "xoxb-572849163052-8136402957316-Q7xT2mVb9LkR4sWz8NcY1pHd",
            "slack_token",
        ),
        ("npm_Zq8Xv3Lm9Nt2Kp7Rs4Wb6Yc1Hd5Jf0GgTtUu", "npm_token"),
    ];
    for (key, rule) in keys {
        for (ctx, want) in contexts {
            let text = ctx.replace("{}", key);
            let (got, _) = redact(&text);
            assert_eq!(got, want.replace('R', rule), "{rule} in {ctx:?}");
        }
    }
    // after any letter, a distinctive token still goes
    for (key, rule) in &keys[2..] {
        assert_eq!(
            redact(&format!("token{key}")).0,
            format!("token[redacted:{rule}]"),
            "{rule}"
        );
    }
    assert_eq!(
        redact(&format!("mykey{SK}")).0,
        "mykey[redacted:sk_key]",
        "sk-proj- is distinctive"
    );
    // the bot token inside Telegram's API URL
    assert_eq!(
        redact(
            "GET https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0/getMe"
        )
        .0,
        "GET https://api.telegram.org/bot[redacted:telegram_bot_token]/getMe"
    );
    // Bearer, URL-encoded
    assert_eq!(
        redact("cb?auth=Bearer%209f8e7d6c5b4a39281706abcdefAB&x=1").0,
        "cb?auth=Bearer%20[redacted:bearer_token]&x=1"
    );
}

/// The generic `sk-` shape keeps a left boundary: `task-`, `risk-` + a long
/// suffix are words. An escape or a non-ASCII character is a boundary.
#[test]
fn a_generic_sk_key_keeps_its_boundary() {
    let key = "sk-3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e";
    for glued in ["x", "task", "risk-", "_", "9"] {
        let text = format!("{glued}{key}");
        assert_eq!(redact(&text).0, text, "{glued}");
    }
    for ok in ["é", "是", " ", "\\n", "%20", "\\u00e9", "="] {
        assert_eq!(
            redact(&format!("{ok}{key}")).0,
            format!("{ok}[redacted:sk_key]"),
            "{ok}"
        );
    }
    assert!(left_ok("a\\nb", 3, Some(|b: u8| b.is_ascii_alphanumeric())));
    assert!(!left_ok("anb", 2, Some(|b: u8| b.is_ascii_alphanumeric())));
}

/// Matches that overlap are redacted together: a later match that runs on
/// past the earliest one goes with it. An AWS secret key's 40 characters,
/// armed by the word `aws` nearby, can start inside a JSON escape and end
/// inside a JWT's header; the rest of the JWT (its claims and signature)
/// is no JWT on its own and would stay.
#[test]
fn overlapping_matches_are_redacted_together() {
    let jwt = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJoM2p5eW51dnA1M3oiLCJpYXQiOjE3MDA1ODMxOTV9.NkQpik25ZNjxATCQmXoDSqLqvcZDzI1CE-jnwWMLkY0";
    let text = format!("{{\"content\": \"aws \\u5bc6\\u94a5{jwt}\"}}");
    let (out, counts) = redact(&text);
    assert_eq!(
        out,
        "{\"content\": \"aws \\u5bc6\\u[redacted:aws_secret_access_key]\"}"
    );
    assert_eq!(counts, Counts::from([("aws_secret_access_key", 1)]));
}

/// A token cut short — nanobot's sidebar preview (119 characters and `…`), a
/// torn JSONL line, a 200-character preview — keeps no recognisable start.
#[test]
fn a_token_cut_short_is_redacted_at_the_cut() {
    let cases: &[(&str, &str)] = &[
        (
            "preview=my key is sk-proj-4fT9xQ2m…",
            "preview=my key is [redacted:sk_key]…",
        ),
        ("… is ghp_1a2B3c4D5e6F", "… is [redacted:github_token]"),
        (
            "{\"content\": \"here AKIAZ3MT7QW5",
            "{\"content\": \"here [redacted:aws_access_key_id]",
        ),
        ("deepseek sk-3f9a1c7e5b…", "deepseek [redacted:sk_key]…"),
        (
            "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAA…",
            "[redacted:private_key]",
        ),
        (
            "preview=Authorization: Bearer 9f8e7d6c5b4a…",
            "preview=Authorization: Bearer [redacted:bearer_token]…",
        ),
        ("pypi-AgEIcHlwaS5vcm", "[redacted:pypi_token]"),
    ];
    for (input, want) in cases {
        assert_eq!(&redact(input).0, want, "{input}");
    }
    // a word that merely starts like one is kept
    for keep in ["see sk-learning…", "the task-…", "AKIA…"] {
        assert_eq!(redact(keep).0, keep);
    }
}

#[test]
fn lookalikes_and_placeholders_survive() {
    let negatives = [
        "commit 3f786850e387550fdab836ed7e6dc881de23001b fixed it",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "session 5b0f3c1e-8a2d-4e6f-9b1c-7d3e2f1a0b9c",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
        r#"{"type":"text","value":"the value of a paragraph in mdast"}"#,
        "a risk-free, well-known, state-of-the-art sk-learn-compatible-estimator-interface",
        "use-sk-learn-compatible-estimator-2024 and sklearn",
        "bearer of bad news: the bearer token is missing",
        "Bearer abc",
        "AKIA is a prefix; AKIAshort is not a key",
        "call_0 call_1 toolu_01ABCdefGHIjklMNOpqrSTUvw msg_01XyZ chatcmpl-8x2Lq",
        "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
        "https://blog.example.org/2024/05/hugs-and-xoxo-indieweb-1.jpg",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "OPENAI_API_KEY=<your-api-key>",
        "DB_PASSWORD=${DB_PASSWORD}",
        "PASSWORD=changeme",
        "postgres://user:password@localhost:5432/db",
        "session_key: telegram:123456789 and cache_key=abc:def:ghi",
        "max_tokens: 4096, input_tokens=123456789",
        "a compass: northnorthwest, bypass=enabled_for_all",
        "git push -u origin main; docker run -u 1000:1000 img",
        "- Keep the current token = keep-current",
        "basic understanding of Basic authentication",
        "the secret is out; aws regions us-east-1",
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko)",
        "TASK0123456789ABCDEF0123456789ABCDEF",
        "ASIAPACIFICREGIONXYZABCD is a tag",
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
        s.redact(&format!("id corp-123456 and {SK}"), &mut c)
            .as_deref(),
        Some("id [redacted:secret_pattern] and [redacted:sk_key]")
    );
    assert_eq!(counts_json(&c), r#"{"secret_pattern":1,"sk_key":1}"#);
    Ok(())
}

/// Keys and strings of a JSON value are scanned decoded; a value under a
/// secret-named key goes whole.
#[test]
fn json_strings_keys_and_secret_named_values_are_redacted_in_place() {
    let s = Scanner::new(&[]);
    let mut v = serde_json::json!({
        "arguments": {"env": ["OPENAI_API_KEY=sk-proj-4fT9xQ2mZ8vL1nB7cR5kW3yH"]},
        "ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R": 1,
        "n": 7,
        "env": {"API_KEY": "q8Zt3LmN7vXc2KpR9sWy", "DEBUG": "q8Zt3LmN7vXc2KpR9sWy",
                "db_password": "hunter2hunter2", "session_key": "telegram:12345678",
                "GITHUB_TOKEN": "<your token>"},
        "content": "openai\nsk-ant-api03-Zx8Qm3Lp9Vt2Rk7Ws4Nb6Yc1Hd5Jf0GgTtUu-AbCd"
    });
    let mut c = Counts::new();
    s.redact_json(&mut v, &mut c);
    assert_eq!(
        v,
        serde_json::json!({
            "arguments": {"env": ["OPENAI_API_KEY=[redacted:sk_key]"]},
            "[redacted:github_token]": 1,
            "n": 7,
            "env": {"API_KEY": "[redacted:secret_assignment]", "DEBUG": "q8Zt3LmN7vXc2KpR9sWy",
                    "db_password": "[redacted:secret_assignment]", "session_key": "telegram:12345678",
                    "GITHUB_TOKEN": "<your token>"},
            "content": "openai\n[redacted:sk_key]"
        })
    );
    assert_eq!(c.values().sum::<u64>(), 5, "{c:?}");
    assert!(secret_name("OPENAI_API_KEY") && secret_name("apiKey") && secret_name("client-secret"));
    assert!(!secret_name("session_key") && !secret_name("max_tokens") && !secret_name("compass"));
}

/// The search reports one literal per start, so a literal that starts with
/// another is folded into it (and one that holds another, not a name end);
/// what is left has no prefix pairs, and every rule's literals still lead
/// to a literal they hold.
#[test]
fn literals_fold_prefixes_and_keep_every_rule() {
    let lits = literals(RULES);
    for (i, (a, _)) in lits.iter().enumerate() {
        for (j, (b, _)) in lits.iter().enumerate() {
            assert!(
                i == j || !b.starts_with(a.as_str()),
                "{a} is a prefix of {b}"
            );
        }
    }
    for (i, r) in RULES.iter().enumerate() {
        if let Needle::Any(ls) = r.needle {
            for l in ls {
                assert!(
                    lits.iter()
                        .any(|(k, m)| l.contains(k.as_str()) && m & (1 << i) != 0),
                    "{}: {l}",
                    r.name
                );
            }
        }
    }
    // a name end is searched as itself (folded into a shorter literal, its
    // sign would be looked for after the wrong end)
    for l in super::engine::NAME_ENDS {
        assert!(lits.iter().any(|(k, _)| k == l), "{l} folded");
    }
    // every Teddy searcher builds (none falls back to the automaton)
    assert!(
        lits.iter().all(|(l, _)| l.len() >= 3),
        "a literal under 3 bytes"
    );
    assert!(!format!("{:?}", Scanner::new(&[])).contains("teddy: []"));
    // `sk-` carries the distinctive sk- prefixes' rule too
    let sk = lits.iter().find(|(k, _)| k == "sk-").map(|(_, m)| *m);
    assert_eq!(sk.map(u128::count_ones), Some(2));
}

/// The bucket packing only orders the literals: each once.
#[test]
fn bucket_order_is_a_permutation() {
    let lits = literals(RULES);
    for chunk in [&lits[..], &lits[..10], &lits[..40]] {
        let mut order = super::engine::bucket_order(chunk);
        order.sort_unstable();
        assert_eq!(order, (0..chunk.len()).collect::<Vec<_>>());
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
fn an_assignment_needle_is_a_secret_ish_name_before_its_sign() {
    let s = Scanner::new(&[]);
    let bit = RULES
        .iter()
        .position(|r| matches!(r.needle, Needle::Assign))
        .map(|i| 1u128 << i)
        .unwrap_or_default();
    assert_ne!(bit, 0);
    // searched by Teddy (long) and by the automaton (short)
    let pad = " ".repeat(300);
    let assignment = |t: &[u8], json: bool| {
        let t = std::str::from_utf8(t).unwrap_or_default();
        [t.to_string(), format!("{pad}{t}{pad}")]
            .iter()
            .all(|x| s.prepass.rules_of_text(x, json) & bit != 0)
    };
    let none = |t: &[u8], json: bool| {
        let t = std::str::from_utf8(t).unwrap_or_default();
        [t.to_string(), format!("{pad}{t}{pad}")]
            .iter()
            .all(|x| s.prepass.rules_of_text(x, json) & bit == 0)
    };
    for yes in [
        "API_KEY=x",
        "password : x",
        "\"apiKey\": \"x\"",
        "db_Pwd='x'",
        "token=1",
        "DB_PASSWORD=x",
        "Passwd:x",
        "GITHUB_TOKEN\\\"=x",
        "client_secret\\\": \\\"x",
        "{\"k\": \"api_key=x\"}",
    ] {
        assert!(assignment(yes.as_bytes(), false), "{yes}");
    }
    for no in [
        "a = b",
        "monkey business",
        "key",
        "time: 10:00",
        "keys=1",
        "passing: 3",
    ] {
        assert!(none(no.as_bytes(), false), "{no}");
    }
    // a JSON key's own colon is no assignment; one inside a string is
    assert!(none(br#"{"api_key":"x"}"#, true));
    assert!(assignment(br#"{"k":"api_key=x"}"#, true));
    assert!(assignment(br#"{"k":"\"api_key\": \"x\""}"#, true));
}

/// Texts built from tokens, look-alikes and glue characters.
fn mixtures() -> impl Strategy<Value = String> {
    (
        proptest::collection::vec(
            prop_oneof![
                "[a-zA-Z0-9_.:=-]{1,12}",
                Just(SK.to_string()),
                Just(GHP.to_string()),
                Just("AKIAZ3MT7QW5RX2LPK4N".to_string()),
                Just("xoxb-572849163052-8136".to_string()),
                Just("123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0".to_string()),
                Just(
                    "MTA4NzY1NDMyMTAxMjM0NTY3OA.GhIjKl.Q7xT2mVb9LkR4sWz8NcY1pHdYz0123456789"
                        .to_string()
                ),
                Just("AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q".to_string()),
                Just("-----BEGIN EC PRIVATE KEY-----\nMIIE".to_string()),
                Just(
                    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmN".to_string()
                ),
                Just("Jq8vR3kZt0pW2mXn5bY7cL9dF4gH6sA1eU3iO5kT".to_string()),
                Just("aws_secret_access_key".to_string()),
                Just("postgres://app:Hx7pQ2vLm9@db".to_string()),
                Just("API_KEY=".to_string()),
                Just("Basic YWRtaW46czNjcjN0UGFzcw==".to_string()),
                Just("sk-3f9a1c7e5b2d4f6a8c0e1b3d5f7a9c2e".to_string()),
                Just("…".to_string()),
                Just("\\n".to_string()),
                "(Bearer|bearer|BEARER)\\s{1,2}[A-Za-z0-9]{14,20}",
                "\\PC{0,8}",
            ],
            0..10,
        ),
        prop_oneof![Just(" "), Just(""), Just("\n"), Just("\""), Just("是")],
    )
        .prop_map(|(words, sep)| words.join(sep))
}

/// The three pre-pass searches, compiled once for the property tests.
static SCANNERS: std::sync::LazyLock<[Scanner; 3]> = std::sync::LazyLock::new(|| {
    [
        Scanner::with_search(&[], Search::Teddy),
        Scanner::with_search(&[], Search::Automaton),
        Scanner::with_search(&[], Search::Off),
    ]
});

proptest! {
    /// The pre-pass only skips work: Teddy, the automaton and no pre-pass
    /// at all find the same spans, and a native's JSON text flags every
    /// value that redaction would change.
    #[test]
    fn the_prepass_never_hides_a_secret(text in mixtures()) {
        let [teddy, automaton, none] = &*SCANNERS;
        let off = none.find(&text);
        prop_assert_eq!(&teddy.find(&text), &off);
        prop_assert_eq!(&automaton.find(&text), &off);
        let value = serde_json::json!({ "k": [text.clone()], text.clone(): 1 });
        let json = value.to_string();
        let mut redacted = value.clone();
        none.redact_json(&mut redacted, &mut Counts::new());
        if redacted != value {
            prop_assert!(teddy.may_match_json(&json), "{}", json);
            let map = value.as_object().cloned().unwrap_or_default();
            prop_assert!(teddy.may_match_native(&map, &json), "{}", json);
        }
    }

    /// Redacting a redacted text changes nothing, and a text without a
    /// match is returned as it is.
    #[test]
    fn redaction_is_idempotent(text in mixtures()) {
        let s = &SCANNERS[0];
        let mut c = Counts::new();
        match s.redact(&text, &mut c) {
            None => prop_assert!(s.find(&text).is_empty()),
            Some(once) => {
                let mut c2 = Counts::new();
                prop_assert_eq!(s.redact(&once, &mut c2), None, "{}", once);
                prop_assert!(c2.is_empty());
            }
        }
    }
}

/// Plain words of prose and code: no credential, no secret-ish name
/// (`key`, `token`, `pass`…), no scheme that carries a password, so no
/// text made of them (with [`plain_piece`]'s other parts) holds a secret.
const PLAIN_WORDS: &[&str] = &[
    "the",
    "agent",
    "wrote",
    "a",
    "summary",
    "of",
    "yesterday's",
    "meeting",
    "and",
    "sent",
    "it",
    "to",
    "Alice",
    "please",
    "check",
    "build",
    "failed",
    "again",
    "on",
    "main",
    "because",
    "tests",
    "timed",
    "out",
    "after",
    "ten",
    "minutes",
    "Let's",
    "try",
    "with",
    "smaller",
    "batch",
    "size",
    "fn",
    "main()",
    "{",
    "}",
    "let",
    "x",
    "=",
    "42;",
    "return",
    "Ok(())",
    "if",
    "else",
    "for",
    "i",
    "in",
    "0..10",
    "println!(\"{i}\");",
    "def",
    "load(path):",
    "import",
    "json",
    "SELECT",
    "count(*)",
    "FROM",
    "events",
    "WHERE",
    "role",
    "'user'",
    "GROUP",
    "BY",
    "session_id",
    "ORDER",
    "LIMIT",
    "100",
    "https://example.com/docs/intro",
    "alice at example.com",
    "2026-10-05T09:00:01",
    "v1.2.3",
    "#123",
    "50%",
    "$19.99",
    "→",
    "✓",
    "🙂",
    "résumé",
    "naïve",
    "Straße",
    "日本語",
    "你好",
    "世界",
    "привет",
    "مرحبا",
    "…",
    "—",
    "(see",
    "above)",
    "[link](https://x.org)",
    "`cargo",
    "test`",
    "*bold*",
    "_em_",
    "a/b/c.txt",
    "C:\\Users\\bob",
    "\\n",
    "ls",
    "-la",
    "cd",
    "..",
    "git",
    "commit",
    "-m",
    "'fix'",
    "npm",
    "install",
    "pip",
    "uuid",
    "4f3c",
    "0x1F",
    "3.14159",
    "1e-9",
    "null",
    "true",
    "false",
    "[]",
    "{ }",
    "<div>",
    "</div>",
];

/// A piece of text that is no secret: a plain word, a short lowercase word
/// (not a secret-ish name), a number, CJK.
fn plain_piece() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => proptest::sample::select(PLAIN_WORDS).prop_map(String::from),
        2 => "[a-z]{1,9}".prop_filter("a secret-ish name", |w| {
            !ends_secretish(w.as_bytes()) && !["bearer", "basic", "curl", "auth"].contains(&w.as_str())
        }),
        1 => "[0-9]{1,6}",
        1 => "[\u{4e00}-\u{9fa5}]{1,4}",
    ]
}

/// Plain pieces joined by blanks and punctuation.
fn plain_words() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            plain_piece(),
            proptest::sample::select(&[" ", " ", " ", "\n", "\t", ", ", ". ", "\n\n", ": "][..]),
        ),
        0..12,
    )
    .prop_map(|v| v.into_iter().map(|(p, s)| p + s).collect::<String>())
}

/// Random prose and code without a token: plain words, and at most one
/// look-alike of the corpus (`tests/secrets/corpus.json` negatives:
/// hashes, placeholders, elided keys, public keys, identifiers) after them.
/// (A look-alike is a negative as it stands: what follows a private key's
/// header may be its body, a cut key; two look-alikes can make a token.)
fn plain_text() -> impl Strategy<Value = String> {
    (
        plain_words(),
        proptest::option::of(proptest::sample::select(corpus_items().negatives.clone())),
    )
        .prop_map(|(words, n)| match n {
            Some(n) => format!("{words} {n}"),
            None => words,
        })
}

/// What stands before a planted token and after it: blanks and
/// punctuation that end a word. (A token glued to a word is a known miss,
/// `corpus::KNOWN_MISSES`; a character that may belong to the token itself
/// — `.` after an Azure secret, `/` after base64, `:` after a `.pgpass`
/// line — makes another token.)
const GAPS_BEFORE: &[&str] = &[
    " ", "\n", "\t", "\n\n", " (", " \"", ": ", "> ", " — ", "* ", "- ", "# ", "= ", "→ ",
    " <code>", "<td>",
];
const GAPS_AFTER: &[&str] = &[
    " ", "\n", "\t", "\n\n", ") ", "\" ", ", ", " — ", "! ", "; ", "? ", ")\n", "\"\n", "\r\n",
    "\u{a0}", "</code> ", "</td>", "<br>",
];

/// A positive of the corpus: its text, and the values that must not survive.
type Positive = (String, Vec<String>);

/// The corpus's claimed positives by family (each as its text and the
/// values that must not survive), and its negatives.
struct CorpusItems {
    families: Vec<(String, Vec<Positive>)>,
    negatives: Vec<String>,
    contexts: Vec<serde_json::Value>,
}

fn corpus_items() -> &'static CorpusItems {
    static ITEMS: std::sync::LazyLock<CorpusItems> = std::sync::LazyLock::new(|| {
        let corpus = corpus_json().unwrap_or_default();
        let empty = Vec::new();
        let mut families: std::collections::BTreeMap<String, Vec<Positive>> =
            std::collections::BTreeMap::new();
        for p in corpus["positives"].as_array().unwrap_or(&empty) {
            let fam = p["family"].as_str().unwrap_or_default();
            if corpus["families"][fam]["hard"].as_bool() == Some(true) {
                continue;
            }
            let mut values: Vec<String> =
                p["value"].as_str().map(String::from).into_iter().collect();
            for a in p["also_secret"].as_array().unwrap_or(&empty) {
                values.extend(a.as_str().map(String::from));
            }
            let text = p["text"].as_str().unwrap_or_default().to_string();
            families
                .entry(fam.to_string())
                .or_default()
                .push((text, values));
        }
        let negatives = corpus["negatives"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter_map(|n| n["text"].as_str().map(String::from))
            // a template's `{}` stands for the token
            .filter(|t| !t.contains("{}"))
            .collect();
        // every context but the glued one, a known miss for some families
        let contexts = corpus["contexts"]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|c| c["id"] != "letter_glued")
            .cloned()
            .collect();
        CorpusItems {
            families: families.into_iter().collect(),
            negatives,
            contexts,
        }
    });
    &ITEMS
}

/// How a text reaches the scanner: as it is, or inside a JSON string (a
/// tool call's raw arguments), with or without `ensure_ascii`.
fn encode(text: &str, how: u8) -> String {
    match how % 3 {
        0 => text.to_string(),
        1 => serde_json::Value::String(text.to_string()).to_string(),
        _ => {
            let mut s = String::from("{\"content\": \"");
            for c in text.chars() {
                match c {
                    '"' => s.push_str("\\\""),
                    '\\' => s.push_str("\\\\"),
                    '\n' => s.push_str("\\n"),
                    '\t' => s.push_str("\\t"),
                    c if c.is_ascii() && (c as u32) >= 0x20 => s.push(c),
                    c => {
                        let mut buf = [0u16; 2];
                        for u in c.encode_utf16(&mut buf) {
                            s.push_str(&format!("\\u{u:04x}"));
                        }
                    }
                }
            }
            s.push_str("\"}");
            s
        }
    }
}

proptest! {
    // each case plants a token of every family (111)
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The oracle of the scanner: a token of every claimed family of the
    /// corpus (one of its positives, in one of its contexts), planted in
    /// random prose and code — at the start, in the middle or at the end,
    /// the whole as it is or JSON-escaped — keeps no 12 characters of its
    /// value (nor of an `also_secret`). A scanner that finds nothing fails.
    #[test]
    fn a_planted_token_of_every_family_is_always_redacted(
        before in prop_oneof![Just(String::new()), plain_words()],
        after in prop_oneof![Just(String::new()), plain_words()],
        gaps in (proptest::sample::select(GAPS_BEFORE), proptest::sample::select(GAPS_AFTER)),
        how in 0u8..3,
        pick in any::<u64>(),
    ) {
        let items = corpus_items();
        prop_assert!(items.families.len() > 100, "{} families", items.families.len());
        for (n, (fam, positives)) in items.families.iter().enumerate() {
            let (text, values) = &positives[(pick as usize).wrapping_add(n) % positives.len()];
            let ctx = &items.contexts[(pick as usize / 7).wrapping_add(n) % items.contexts.len()];
            let gap_before = if before.is_empty() { "" } else { gaps.0 };
            let gap_after = if after.is_empty() { "" } else { gaps.1 };
            // the prose goes around the context's own text (inside a tool
            // call's JSON arguments, where the context is one)
            let mut around = ctx.clone();
            around["template"] = serde_json::Value::String(format!(
                "{before}{gap_before}{}{gap_after}{after}",
                ctx["template"].as_str().unwrap_or("{}")
            ));
            let json = ctx["placements"].as_array().is_some_and(|p| p.iter().any(|x| x == "tool_args"));
            let planted = match super::corpus::in_context(&around, text) {
                Some(t) if json => t,
                Some(t) => encode(&t, how),
                None => encode(&format!("{before}{gap_before}{text}{gap_after}{after}"), how),
            };
            let (out, counts) = redact(&planted);
            for v in values {
                let leak = super::corpus::leaked_window(v, &out);
                prop_assert!(leak.is_none(), "{} ({}): {:?} survives in {:?}", fam, ctx["id"], leak, out);
            }
            prop_assert!(!counts.is_empty(), "{}: nothing counted for {:?}", fam, planted);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// And its other half: random prose and code that holds no token, as it
    /// is or JSON-escaped, comes out unchanged (nothing found, nothing
    /// counted). A scanner that redacts a plain word fails.
    #[test]
    fn a_text_without_a_token_is_never_changed(text in plain_text(), how in 0u8..3) {
        let text = encode(&text, how);
        let (out, counts) = redact(&text);
        prop_assert_eq!(&out, &text);
        prop_assert!(counts.is_empty(), "{:?}", counts);
    }
}

/// The memo of clean texts only skips work: a text found clean once is not
/// searched again, one with a secret is redacted and counted every time it
/// comes (a copy of a session pastes it again), a native with a
/// secret-named key is walked every time, and clones of a scanner share
/// what it learnt.
#[test]
fn the_memo_remembers_only_what_was_found_clean() {
    let s = Scanner::new(&[]);
    let clean = "a text long enough to remember, with no secret in it, as a copy repeats it";
    let secret = format!("a text long enough to remember that pastes {SK} into the chat");
    let named = serde_json::json!({ "env": { "API_KEY": "q8ZtR2vW9xL4mN7pK3sD6fH1jG5bC0aE" } });
    let named_json = named.to_string();
    let named_map = named.as_object().cloned().unwrap_or_default();
    let plain =
        serde_json::json!({ "note": "a native long enough to remember, holding nothing secret" });
    let plain_json = plain.to_string();
    let plain_map = plain.as_object().cloned().unwrap_or_default();
    for round in 1..=3u64 {
        let mut c = Counts::new();
        assert_eq!(s.redact(clean, &mut c), None);
        assert_eq!(
            s.redact(&secret, &mut c).as_deref(),
            Some("a text long enough to remember that pastes [redacted:sk_key] into the chat")
        );
        assert_eq!(c, Counts::from([("sk_key", 1)]), "round {round}");
        assert!(s.may_match_native(&named_map, &named_json));
        assert!(!s.may_match_native(&plain_map, &plain_json));
        assert_eq!(s.remembered(), 2, "round {round}");
    }
    // a text shorter than the memo's threshold is searched every time
    assert_eq!(s.redact("short and clean", &mut Counts::new()), None);
    assert_eq!(s.remembered(), 2);
    let t = s.clone();
    assert_eq!(
        t.redact(
            "another text long enough to remember, clean as the first one was",
            &mut Counts::new()
        ),
        None
    );
    assert_eq!(s.remembered(), 3);
}

/// The corpus (`tests/secrets/corpus.json`, made by
/// `tests/secrets/make_corpus.py` in the shapes of gitleaks' and
/// detect-secrets' rules), at the scanner: every positive of a family
/// nanoload claims, in every context that applies, keeps no 12 characters
/// of its value (nor of an `also_secret`) but for the listed known misses;
/// every negative stays verbatim. The JSON contexts are the raw JSON text a
/// tool call's arguments hold. Recall and precision per family and per
/// context are `tests/secrets/REPORT.md`, which this test rewrites with
/// `NANOLOAD_BLESS=1` (never under CI, where the variable fails it) and
/// otherwise must equal. (The same corpus planted in
/// a home by nanobot's own code, through every output:
/// `secrets::the_corpus_planted_by_nanobot_leaves_no_secret_in_any_output_byte`.)
#[test]
fn the_corpus_in_every_context_at_the_scanner() -> Result<(), Box<dyn std::error::Error>> {
    let bless = crate::testutil::bless()?;
    use serde_json::Value;
    use std::collections::BTreeMap;
    let root = env!("CARGO_MANIFEST_DIR");
    let corpus: Value = serde_json::from_str(&std::fs::read_to_string(format!(
        "{root}/tests/secrets/corpus.json"
    ))?)?;
    let hard = |fam: &str| corpus["families"][fam]["hard"].as_bool() == Some(true);
    let empty = Vec::new();
    let (mut misses, mut over) = (Vec::new(), Vec::new());
    // [positives, fully redacted, negatives, kept verbatim]
    let mut by_family: BTreeMap<String, [u32; 4]> = BTreeMap::new();
    let mut by_context: BTreeMap<String, [u32; 4]> = BTreeMap::new();
    let items = corpus["positives"]
        .as_array()
        .unwrap_or(&empty)
        .iter()
        .map(|p| (true, p))
        .chain(
            corpus["negatives"]
                .as_array()
                .unwrap_or(&empty)
                .iter()
                .map(|n| (false, n)),
        );
    let contexts = corpus["contexts"].as_array().unwrap_or(&empty);
    for (positive, item) in items {
        let fam = item["family"].as_str().unwrap_or_default();
        let shape = item["shape"].as_str().unwrap_or_default();
        let text = item["text"].as_str().unwrap_or_default();
        for ctx in contexts {
            let id = ctx["id"].as_str().unwrap_or_default();
            let Some(planted) = super::corpus::in_context(ctx, text) else {
                continue;
            };
            let (out, _) = redact(&planted);
            let ok = if positive {
                let mut values = vec![item["value"].as_str().unwrap_or_default()];
                for a in item["also_secret"].as_array().unwrap_or(&empty) {
                    values.extend(a.as_str());
                }
                let leak = values
                    .iter()
                    .find_map(|v| super::corpus::leaked_window(v, &out));
                let known = super::corpus::KNOWN_MISSES.contains(&(fam, shape, id));
                if let Some(w) = leak.filter(|_| !hard(fam) && !known) {
                    misses.push(format!("{fam} {} in {id}: {w:?} in {out:?}", item["id"]));
                }
                leak.is_none()
            } else {
                if out != planted {
                    over.push(format!("{fam} {} in {id}: {out:?}", item["id"]));
                }
                out == planted
            };
            let col = if positive { 0 } else { 2 };
            for row in [
                by_family.entry(fam.to_string()).or_default(),
                by_context.entry(id.to_string()).or_default(),
            ] {
                row[col] += 1;
                row[col + 1] += u32::from(ok);
            }
        }
    }
    assert!(
        misses.is_empty() && over.is_empty(),
        "{} misses:\n{}\n{} over-redacted:\n{}",
        misses.len(),
        misses.join("\n"),
        over.len(),
        over.join("\n")
    );
    let pct = |a: u32, b: u32| {
        if b == 0 {
            "—".to_string()
        } else {
            format!("{:.1} %", f64::from(a) * 100.0 / f64::from(b))
        }
    };
    let table = |title: &str, rows: &BTreeMap<String, [u32; 4]>, note: &dyn Fn(&str) -> String| {
        let mut t = format!(
            "| {title} | positives | redacted | recall | negatives | kept | precision |\n|---|---:|---:|---:|---:|---:|---:|\n"
        );
        let mut total = [0u32; 4];
        for (k, r) in rows {
            t.push_str(&format!(
                "| {k}{} | {} | {} | {} | {} | {} | {} |\n",
                note(k),
                r[0],
                r[1],
                pct(r[1], r[0]),
                r[2],
                r[3],
                pct(r[3], r[2])
            ));
            (0..4).for_each(|i| total[i] += r[i]);
        }
        t.push_str(&format!(
            "| **all** | {} | {} | {} | {} | {} | {} |\n",
            total[0],
            total[1],
            pct(total[1], total[0]),
            total[2],
            total[3],
            pct(total[3], total[2])
        ));
        t
    };
    let fam_note = |f: &str| {
        if hard(f) {
            " (not claimed)".to_string()
        } else {
            String::new()
        }
    };
    let report = format!(
        "# The secret scanner against the corpus\n\n\
         Written by `src/secrets/tests.rs::the_corpus_in_every_context_at_the_scanner`\n\
         (`NANOLOAD_BLESS=1 cargo test --lib the_corpus` rewrites it; CI checks it is current).\n\
         The corpus is `tests/secrets/corpus.json` (`tests/secrets/make_corpus.py`, seed {}):\n\
         fakes in the shapes of gitleaks' rules and detect-secrets' plugins, each pasted in\n\
         every context that applies to it. A positive counts as redacted when no 12 characters\n\
         of its value (nor of an `also_secret`) are left; a negative as kept when its text is\n\
         unchanged. Known misses (by design, docs/design.md \"Secrets\"): {}.\n\n\
         ## Per family\n\n{}\n## Per context\n\n{}",
        corpus["seed"],
        super::corpus::KNOWN_MISSES
            .iter()
            .map(|(f, s, c)| format!("`{f}` `{s}` in `{c}`"))
            .collect::<Vec<_>>()
            .join(", "),
        table("family", &by_family, &fam_note),
        table("context", &by_context, &|_| String::new()),
    );
    let path = format!("{root}/tests/secrets/REPORT.md");
    if bless {
        std::fs::write(&path, &report)?;
    }
    assert_eq!(
        std::fs::read_to_string(&path)?,
        report,
        "tests/secrets/REPORT.md is stale: NANOLOAD_BLESS=1"
    );
    Ok(())
}

/// Under `CI` the corpus report is never rewritten: with `NANOLOAD_BLESS=1`
/// this test binary run again on the corpus test fails at once, naming the
/// variable and why.
#[test]
fn ci_never_blesses_the_corpus_report() -> Result<(), Box<dyn std::error::Error>> {
    let o = std::process::Command::new(std::env::current_exe()?)
        .args([
            "secrets::tests::the_corpus_in_every_context_at_the_scanner",
            "--exact",
            "--test-threads",
            "1",
        ])
        .env("CI", "true")
        .env("NANOLOAD_BLESS", "1")
        .stdin(std::process::Stdio::null())
        .output()?;
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(101), "{stdout}");
    // the test's error, as the test harness prints it
    let want = format!(
        "Error: {:?}",
        "NANOLOAD_BLESS=\"1\" under CI=\"true\": CI never blesses; unset NANOLOAD_BLESS"
    );
    assert!(stdout.contains(&want), "{stdout}");
    Ok(())
}

/// Not a test: the scanner's speed over every string of every record of
/// every `.jsonl` under `$NANOLOAD_SCAN_DIR` (a generated home), short
/// texts (the automaton) and long ones (Teddy) apart, for tuning the
/// needles — `NANOLOAD_SCAN_DIR=… cargo test --release --lib -- --ignored
/// scan_speed --nocapture`.
#[test]
#[ignore = "a measurement, not a test"]
fn scan_speed() -> Result<(), Box<dyn std::error::Error>> {
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let Ok(dir) = std::env::var("NANOLOAD_SCAN_DIR") else {
        return Ok(());
    };
    let mut texts: Vec<String> = Vec::new();
    for e in walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
    {
        if e.path().extension().is_some_and(|x| x == "jsonl") {
            for l in std::fs::read_to_string(e.path())?.lines() {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(l) {
                    strings(&v, &mut texts);
                }
            }
        }
    }
    let s = Scanner::new(&[]);
    let (long, short): (Vec<&str>, Vec<&str>) = texts
        .iter()
        .map(String::as_str)
        .partition(|t| t.len() >= 256);
    for (label, set) in [("short", &short), ("long", &long)] {
        let bytes: usize = set.iter().map(|t| t.len()).sum();
        eprintln!("-- {label}: {} texts, {} MB", set.len(), bytes / 1_000_000);
        // the fastest of five runs (a busy machine only adds time)
        let measure = |name: &str, f: &dyn Fn(&str) -> bool| {
            let mut best = f64::MAX;
            let mut hits = 0;
            for _ in 0..5 {
                let t = std::time::Instant::now();
                hits = set.iter().filter(|x| f(x)).count();
                best = best.min(t.elapsed().as_secs_f64());
            }
            eprintln!("{name}: {hits} hits, {best:.3} s");
        };
        measure("find", &|t| !s.find(t).is_empty());
        measure("pre-pass", &|t| s.prepass.rules(t) != 0);
        measure("percent", &|t| super::engine::percent_view(t).is_some());
        measure("dots", &|t| dots_apart(t.as_bytes(), 6));
        for (i, (t, _)) in s.prepass.teddy.iter().enumerate() {
            measure(
                &format!("teddy[{i}] ({} literals)", s.prepass.teddy[i].1.len()),
                &|x| {
                    let mut at = 0;
                    let mut any = false;
                    while let Some(m) =
                        t.find_in(x.as_bytes(), aho_corasick::Span::from(at..x.len()))
                    {
                        any = true;
                        at = m.start() + 1;
                    }
                    any
                },
            );
        }
    }
    Ok(())
}

/// A secret-ish name ends in one of seven words, in any ASCII case; the
/// test looks at the end only (`compass`: the key check rejects it later).
#[test]
fn a_secret_ish_name_ends_in_one_of_seven_words_in_any_case() {
    for yes in [
        "key",
        "API_KEY",
        "apiKey",
        "kEy",
        "token",
        "GITHUB_TOKEN",
        "client_secret",
        "SECRET",
        "pass",
        "DB_PASS",
        "compass",
        "pwd",
        "db_Pwd",
        "passwd",
        "Passwd",
        "password",
        "DB_PASSWORD",
    ] {
        assert!(ends_secretish(yes.as_bytes()), "{yes}");
    }
    for no in [
        "",
        "y",
        "ey",
        "keys",
        "tokens",
        "max_tokens",
        "secrets",
        "passing",
        "pw",
        "wd",
        "word",
        "assword",
        "monkey_",
        "key_id",
    ] {
        assert!(!ends_secretish(no.as_bytes()), "{no}");
    }
}

/// The corpus (`tests/secrets/corpus.json`).
fn corpus_json() -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    let root = env!("CARGO_MANIFEST_DIR");
    Ok(serde_json::from_str(&std::fs::read_to_string(format!(
        "{root}/tests/secrets/corpus.json"
    ))?)?)
}

/// What is public at the start of a token: a vendor's fixed prefix (one to
/// three words and separators, or a longer literal), a Telegram bot's id, a
/// Discord token's or a JWT's first segment.
const PUBLIC: &str = concat!(
    r"^(?:sk-ant-[a-z]+[0-9]{2}-|xox[a-z]\.xox[a-z]-[0-9]-|[0-9]{5,16}:AA|pypi-AgEIcHlwaS5vcmc",
    r"|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t|AGE-SECRET-KEY-1|GR1348941|eyJ[A-Za-z0-9_-]*\.",
    r"|A{22}|access-[a-z]+-|[MNO][A-Za-z0-9_-]{23,27}\.",
    r"|[A-Za-z][A-Za-z0-9]{0,8}(?:[_.-][A-Za-z0-9]{1,7}){0,2}[_.-])"
);

/// A token the agent itself cut — nanobot's sidebar preview, a tool
/// result cut at its limit, a torn line — keeps no 12 characters of its
/// start, in every family: every claimed positive of the corpus, written
/// in its own form (`AWS_SECRET_ACCESS_KEY=…`, `postgres://app:…`,
/// `Authorization: Basic …`), cut after 12 characters of its value and at
/// every few characters on, then followed by a preview's `…` or by the end
/// of the text. The 12 characters are counted after what is public in a
/// token: a vendor's fixed prefix (`sk-proj-`, `xoxe.xoxp-1-`,
/// `pypi-AgEIcHlwaS5vcmc`), a Telegram bot's id, a Discord bot token's first
/// segment (the base64 of the bot's id), a JWT's header.
#[test]
fn every_family_cut_short_keeps_no_12_characters_of_its_token()
-> Result<(), Box<dyn std::error::Error>> {
    let corpus = corpus_json()?;
    let public_re = Regex::new(PUBLIC)?;
    let empty = Vec::new();
    let hard = |fam: &str| corpus["families"][fam]["hard"].as_bool() == Some(true);
    let mut misses: Vec<String> = Vec::new();
    let mut checked = 0;
    'item: for p in corpus["positives"].as_array().unwrap_or(&empty) {
        let fam = p["family"].as_str().unwrap_or_default();
        let (Some(text), Some(value)) = (p["text"].as_str(), p["value"].as_str()) else {
            continue;
        };
        if hard(fam) {
            continue;
        }
        let Some(at) = text.find(value) else { continue };
        // where a token's mark stands after a random start (`.atlasv1.`,
        // `_mmk`, `-us<dc>`), a cut before the mark leaves no shape to know
        let mark = [
            ("hashicorp", ".atlasv1."),
            ("maxmind", "_mmk"),
            ("mailchimp", "-us"),
            ("authress", ".acc"),
            ("facebook", "|"),
            ("airtable", "."),
        ]
        .iter()
        .find(|(f, _)| *f == fam)
        .and_then(|(_, m)| value.find(m).map(|i| i + m.len()))
        .unwrap_or(0);
        let public = public_re
            .find(value)
            .map_or(0, |m| m.end())
            .max(mark.saturating_sub(12));
        let ends: Vec<usize> = value
            .char_indices()
            .map(|(i, _)| i)
            .filter(|&i| i >= public + 12)
            .collect();
        let step = (ends.len() / 24).max(1);
        for (n, &k) in ends.iter().enumerate() {
            if n % step != 0 && n + 1 != ends.len() {
                continue;
            }
            for tail in ["…", ""] {
                let planted = format!("{}{}{tail}", &text[..at], &value[..k]);
                let (out, _) = redact(&planted);
                checked += 1;
                let mut leaks = vec![super::corpus::leaked_window(&value[..k], &out)];
                for a in p["also_secret"].as_array().unwrap_or(&empty) {
                    if let Some(a) = a.as_str().filter(|a| text[..at].contains(a)) {
                        leaks.push(super::corpus::leaked_window(a, &out));
                    }
                }
                if let Some(w) = leaks.into_iter().flatten().next() {
                    misses.push(format!("{fam} {} cut at {k}: {w:?} in {out:?}", p["id"]));
                    continue 'item;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
    assert!(
        misses.is_empty(),
        "{} cut tokens keep their start:\n{}",
        misses.len(),
        misses
            .iter()
            .take(60)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    Ok(())
}

/// Credentials in the configuration syntax a tool prints (`cat
/// ~/.kube/config`, `cat ~/.docker/config.json`, a `.netrc`, a command
/// line): only the secret goes, named by what holds it; what is not a
/// secret (a flag's file, a variable, the CLI's own `--user`) stays.
#[test]
fn credentials_in_configuration_syntax_are_redacted() {
    let cases: &[(&str, &str)] = &[
        (
            "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCKzZnQXdJQkFnSUI=\n    client-key-data: LS0tLS1CRUdJTiBFQyBQUklWQVRFIEtFWS0tLS0tCk1IY0NBUUVFSUJx\n    token: 4f9c2a.8b7d6e5f4a3b2c1d\n",
            "users:\n- name: admin\n  user:\n    client-certificate-data: [redacted:kube_credential]\n    client-key-data: [redacted:kube_credential]\n    token: [redacted:secret_assignment]\n",
        ),
        (
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: aHVudGVyMmh1bnRlcjI=\n  username: YXBw\n",
            "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  password: [redacted:kube_credential]\n  username: [redacted:kube_credential]\n",
        ),
        (
            r#"{"auths": {"ghcr.io": {"auth": "ZGVwbG95OnE4WnQzTG1ON3ZYYzJLcFI="}}}"#,
            r#"{"auths": {"ghcr.io": {"auth": "[redacted:basic_auth]"}}}"#,
        ),
        (
            "machine api.example.net login deploy password hunter2x",
            "machine api.example.net login deploy password [redacted:password_file]",
        ),
        (
            "machine git.example.org\n  login ci\n  password qwertyuiop\n",
            "machine git.example.org\n  login ci\n  password [redacted:password_file]\n",
        ),
        (
            "mysql -h db -u app -pS3cr3t!x orders",
            "mysql -h db -u app -p[redacted:cli_secret] orders",
        ),
        (
            "mysqldump --user=root --password=hunter22 shop > shop.sql",
            "mysqldump --user=root --password=[redacted:cli_secret] shop > shop.sql",
        ),
        (
            "MYSQL_PWD=secretpw mysql -u root",
            "MYSQL_PWD=[redacted:cli_secret] mysql -u root",
        ),
        (
            "PGPASSWORD=hunter psql -h db -U app",
            "PGPASSWORD=[redacted:cli_secret] psql -h db -U app",
        ),
        (
            "db.internal:5432:orders:app:Xy7-pass.word\n*:*:*:replicator:s3cretpass",
            "db.internal:5432:orders:app:[redacted:password_file]\n*:*:*:replicator:[redacted:password_file]",
        ),
        (
            "[prod]\naws_access_key_id = ASIAZ3MT7QW5RX2LPK4N\naws_secret_access_key = Jq8vR3kZt0pW2mXn5bY7cL9dF4gH6sA1eU3iO5kT\naws_session_token = IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6\n",
            "[prod]\naws_access_key_id = [redacted:aws_access_key_id]\naws_secret_access_key = [redacted:aws_secret_access_key]\naws_session_token = [redacted:secret_assignment]\n",
        ),
        (
            "//registry.npmjs.org/:_authToken=3f9a1c7e-5b2d-4f6a-8c0e-1b3d5f7a9c2e",
            "//registry.npmjs.org/:_authToken=[redacted:secret_assignment]",
        ),
        (
            "registry=https://npm.example.net/\n_auth = Y2k6cThadDNMbU43dlhjMktwUg==\n",
            "registry=https://npm.example.net/\n_auth = [redacted:basic_auth]\n",
        ),
        (
            "[private]\nrepository = https://pypi.example.net/\nusername = deploy\npassword = swordfishes\n",
            "[private]\nrepository = https://pypi.example.net/\nusername = deploy\npassword = [redacted:password_file]\n",
        ),
        (
            r#"<add key="ClearTextPassword" value="q8Zt!3LmN7" />"#,
            r#"<add key="ClearTextPassword" value="[redacted:password_file]" />"#,
        ),
        (
            "gh-deploy --token q8Zt3LmN7vXc2KpR9sWy4JdF --repo acme",
            "gh-deploy --token [redacted:cli_secret] --repo acme",
        ),
        (
            "vercel deploy --token=q8Zt3LmN7vXc2KpR9sWy4JdF",
            "vercel deploy --token=[redacted:cli_secret]",
        ),
        (
            "sshpass -p 'S3cr3t!pw' ssh deploy@10.0.0.7",
            "sshpass -p '[redacted:cli_secret]' ssh deploy@10.0.0.7",
        ),
        (
            "docker login -u deploy -p q8Zt3LmN7vXc registry.example.net",
            "docker login -u deploy -p [redacted:cli_secret] registry.example.net",
        ),
        (
            "$config['secret_key'] => 'sk_q8Zt3LmN7vXc2KpR9sWy4JdF0aB'",
            "$config['secret_key'] => '[redacted:secret_assignment]'",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(&redact(input).0, want, "{input}");
    }
    for keep in [
        "kubectl --token-file /var/run/secrets/token get pods",
        "docker login --password-stdin registry.example.net",
        "gh-deploy --token $GITHUB_TOKEN",
        "vercel deploy --token=<your-token>",
        "mysql -h db.internal -P 3306 -u app -p orders",
        "the machine asks for a login password on every boot",
        "at 12:30:45 the ratio was 1:2:3:4:5 and fe80::1ff:fe23:4567:890a",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  log-level: debugVerbose2\n",
        r#"{"credsStore": "desktop", "auths": {"ghcr.io": {}}}"#,
        "[pypi]\nusername = __token__\n",
        "//registry.npmjs.org/:_authToken=${NPM_TOKEN}",
    ] {
        assert_eq!(redact(keep).0, keep);
    }
}

/// What the agents send themselves is not a secret: nanoclaw's own `ncl`
/// instructions (in every Codex thread) are no `curl -u` credential, and an
/// image pasted as base64 is no token, wherever a vendor's prefix happens
/// to stand in it. (The agents' whole instruction and skill files:
/// `secrets::the_agents_own_instruction_files_are_not_redacted`.)
#[test]
fn an_agents_own_instructions_and_images_are_not_mangled() -> Result<(), Box<dyn std::error::Error>>
{
    for keep in [
        "ncl members add --user telegram:jane",
        "To let someone in: `ncl members add --user telegram:jane --group main`",
        "ncl members remove --user discord:123456789012345678",
        "useradd --user deploy:deploy is not a thing",
    ] {
        assert_eq!(redact(keep).0, keep);
    }
    let corpus = corpus_json()?;
    let empty = Vec::new();
    let mut images = 0;
    for n in corpus["negatives"].as_array().unwrap_or(&empty) {
        if n["why"].as_str().is_some_and(|w| w.contains("base64 PNG")) {
            let text = n["text"].as_str().unwrap_or_default();
            assert_eq!(redact(text).0, text, "{}", n["id"]);
            images += 1;
        }
    }
    assert_eq!(images, 4);
    // a real key pasted beside an image still goes
    let png = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAEAAAABACAYAAACqaXHeAAAA";
    assert_eq!(
        redact(&format!("{png} and {GHP}")).0,
        format!("{png} and [redacted:github_token]")
    );
    Ok(())
}

/// `tests/secrets/COVERAGE.md` lists every rule of gitleaks' default
/// configuration and every detect-secrets plugin (the versions it names)
/// with the corpus family that covers it — a family with a positive and a
/// look-alike or placeholder in the corpus, whose `sources` name the rule —
/// or why none can.
#[test]
fn every_rule_of_the_public_rule_sets_has_a_family_or_a_reason()
-> Result<(), Box<dyn std::error::Error>> {
    let root = env!("CARGO_MANIFEST_DIR");
    let table = std::fs::read_to_string(format!("{root}/tests/secrets/COVERAGE.md"))?;
    let corpus = corpus_json()?;
    let empty = Vec::new();
    let items = |key: &str, fam: &str| {
        corpus[key]
            .as_array()
            .unwrap_or(&empty)
            .iter()
            .filter(|p| p["family"] == fam)
            .count()
    };
    let (mut gitleaks, mut plugins) = (0, 0);
    let mut problems = Vec::new();
    let mut listed = std::collections::BTreeSet::new();
    for line in table.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (source, id, fam, how) = (cells[1], cells[2].trim_matches('`'), cells[3], cells[4]);
        let key = match source {
            "`gitleaks`" => {
                gitleaks += 1;
                format!("gitleaks:{id}")
            }
            "`detect-secrets`" => {
                plugins += 1;
                format!("detect-secrets:{id}")
            }
            _ => {
                problems.push(format!("unknown source {source}"));
                continue;
            }
        };
        listed.insert(key.clone());
        if fam == "—" {
            if how.is_empty() {
                problems.push(format!("{key}: no family and no reason"));
            }
            continue;
        }
        let fam = fam.trim_matches('`');
        let sources = corpus["families"][fam]["sources"].as_array();
        if !sources.is_some_and(|s| s.iter().any(|x| x == key.as_str())) {
            problems.push(format!("{key}: family {fam} does not name it"));
        }
        if items("positives", fam) == 0 || items("negatives", fam) == 0 {
            problems.push(format!(
                "{key}: family {fam} lacks a positive or a look-alike"
            ));
        }
    }
    // every source a family names is in the table
    if let Some(fams) = corpus["families"].as_object() {
        for (fam, f) in fams {
            for s in f["sources"].as_array().unwrap_or(&empty) {
                if let Some(s) = s.as_str().filter(|s| !listed.contains(*s)) {
                    problems.push(format!("{fam} names {s}, which the table does not list"));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert_eq!((gitleaks, plugins), (222, 27));
    Ok(())
}

/// A value glued to markup (a page or a rendered answer pasted into a
/// chat) ends at the tag: the tag stays, the value goes; a value that is
/// itself in angle brackets is a placeholder.
#[test]
fn a_value_glued_to_markup_is_redacted_up_to_the_tag() {
    for (text, want) in [
        (
            "<code>API_KEY=q8ZtR2vW9xL4mN7pK3sD6fH1jG5bC0aE</code>",
            "<code>API_KEY=[redacted:secret_assignment]</code>",
        ),
        (
            "<td>password: Xk29!vQp7#Lm</td>",
            "<td>password: [redacted:secret_assignment]</td>",
        ),
        ("API_KEY=<your-api-key>", "API_KEY=<your-api-key>"),
    ] {
        assert_eq!(redact(text).0, want, "{text}");
    }
}

/// The `.pgpass` rule runs only on a text with a whole `.pgpass` line's
/// shape (host, port, three fields): a clock's `12:30:45` or a port
/// mapping's `8080:80:tcp` does not wake it, as its `:port:` alone did; a
/// line whose fields hold a `"` still does in a native's JSON, where the
/// quote is escaped.
#[test]
fn the_pgpass_rule_runs_only_on_a_pgpass_shaped_text() {
    let bit = RULES
        .iter()
        .position(|r| r.name == "password_file" && matches!(r.needle, Needle::Custom(_)))
        .map(|i| 1u128 << i)
        .unwrap_or_default();
    assert_ne!(bit, 0, "no .pgpass rule");
    let runs = |t: &str, json: bool| SCANNER.prepass.rules_of_text(t, json) & bit != 0;
    for no in [
        "at 12:30:45 the build ran",
        "ports: 8080:80:tcp and 9090:90:udp",
        "db.internal:5432:app:alice:",
        "psql -h db:5432:app then alice",
    ] {
        assert!(!runs(no, false), "{no}");
    }
    let line = "db.internal:5432:a\"pp:alice:s3cr3tPw";
    assert!(runs(line, false));
    assert!(runs("*:*:*:alice:s3cr3tPw", false));
    let value = serde_json::json!({ "line": line });
    let json = value.to_string();
    assert!(runs(&json, true), "{json}");
    let map = value.as_object().cloned().unwrap_or_default();
    assert!(SCANNER.may_match_native(&map, &json));
    assert_eq!(
        redact(line).0,
        "db.internal:5432:a\"pp:alice:[redacted:password_file]"
    );
}

/// A flag's value after a tab is a flag's value (`--pass\tX`, as a
/// script's tab-separated arguments give it), like one after a blank or
/// an `=`: the pre-pass looks for the flag's name, whatever follows it.
#[test]
fn a_flag_value_after_a_tab_is_redacted() {
    let s = Scanner::new(&[]);
    for text in [
        "pg_dump --pass\tHx7pQ2vLm9Zk",
        "pg_dump --pass Hx7pQ2vLm9Zk",
        "tool --client-secret\tHx7pQ2vLm9Zk",
    ] {
        let found: Vec<&str> = s.find(text).into_iter().map(|(_, _, r)| r).collect();
        assert_eq!(found, ["cli_secret"], "{text:?}");
    }
}

/// A built-in rule's regexes are compiled where it first runs, not when a
/// scanner is made: one that does not compile would never redact.
#[test]
fn every_rule_compiles() {
    for (i, r) in RULES.iter().enumerate() {
        let compiled = builtin_regexes(i);
        assert!(
            compiled.is_some(),
            "rule {i} ({}): its pattern does not compile",
            r.name
        );
        assert_eq!(
            compiled.and_then(|(_, cut)| cut).is_some(),
            r.cut.is_some(),
            "rule {i} ({}): its cut start does not compile",
            r.name
        );
    }
}

/// Every assignment of a text is redacted wherever its sign stands: after
/// signs whose names are no secret's, after a name in a case the rule does
/// not take (`kEy`), inside another sign's value, and cut short where the
/// text or a preview's `…` ends it, blanks or `=>` before its value; the
/// pre-pass (Teddy for a long text, the automaton for a short one) finds
/// what no pre-pass at all finds.
#[test]
fn an_assignment_is_found_wherever_its_sign_stands() {
    let cases: &[(&str, &str)] = &[
        (
            "a: 1, b = 2, API_KEY=q8Zt4mXp2LrV9sWk DB_PASSWORD=Hx7pQ2vLm9wE3rT5 keyring: none",
            "a: 1, b = 2, API_KEY=[redacted:secret_assignment] \
             DB_PASSWORD=[redacted:secret_assignment] keyring: none",
        ),
        (
            "x_kEy=my_token=q8Zt4mXp2LrV9sWk done",
            "x_kEy=my_token=[redacted:secret_assignment] done",
        ),
        (
            "the monkey: 3, time: 10:00, GITHUB_TOKEN\\\"=Hx7pQ2vLm9wE3rT5",
            "the monkey: 3, time: 10:00, GITHUB_TOKEN\\\"=[redacted:secret_assignment]",
        ),
        // letters of two cases and no digit: only a cut start takes these
        (
            "run it with API_KEY=   qZtmXpLrVs",
            "run it with API_KEY=   [redacted:secret_assignment]",
        ),
        (
            "$config['db_password'] =>\tqZtmXpLrVs",
            "$config['db_password'] =>\t[redacted:secret_assignment]",
        ),
        (
            "token: none\nPASSWORD=Hx7pQ2vLm9w",
            "token: none\nPASSWORD=[redacted:secret_assignment]",
        ),
        (
            "secret: q8Zt4mXp2L… and more",
            "secret: [redacted:secret_assignment]… and more",
        ),
    ];
    let [teddy, _, none] = &*SCANNERS;
    let pad = "word ".repeat(60);
    for (input, want) in cases {
        for (text, want) in [
            (input.to_string(), want.to_string()),
            (format!("{pad}{input}"), format!("{pad}{want}")),
        ] {
            let mut c = Counts::new();
            let out = teddy.redact(&text, &mut c).unwrap_or_else(|| text.clone());
            assert_eq!(out, want, "{text:?}");
            assert_eq!(teddy.find(&text), none.find(&text), "{text:?}");
        }
    }
}

/// A kubeconfig's client certificate is redacted on its own, with no
/// `client-key-data` beside it to wake the rule, in a short text (the
/// automaton) and in a long one (Teddy).
#[test]
fn a_client_certificate_alone_is_redacted() {
    let line = "    client-certificate-data: \
                LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCKzZnQXdJQkFnSUI=";
    let want = "    client-certificate-data: [redacted:kube_credential]";
    let pad = "users:\n- name: admin\n  user:\n".repeat(10);
    assert_eq!(redact(line).0, want);
    assert_eq!(redact(&format!("{pad}{line}")).0, format!("{pad}{want}"));
}

/// A native object is redacted as [`Scanner::redact_map`] redacts it, and
/// `redact_native` says whether it changed: a secret-named value at any
/// depth (under an object in an array too) goes whether or not a needle
/// is in the object's text, and an object with nothing to redact is left
/// as it is.
#[test]
fn a_native_is_redacted_as_its_map_is() {
    let natives = [
        serde_json::json!({"env": {"API_KEY": "q8Zt4mXp2LrV9sWk"}, "n": 1}),
        serde_json::json!({"steps": [{"name": "db", "password": "Hx7pQ2vLm9wE3rT5"}], "ok": true}),
        serde_json::json!({"steps": [[{"client_secret": "Hx7pQ2vLm9wE3rT5"}]]}),
        serde_json::json!({"token": "<your-token>", "api_key": "short"}),
        serde_json::json!({"note": format!("see {GHP}"), "password": "Hx7pQ2vLm9wE3rT5"}),
        serde_json::json!({"args": ["ls", "-la"], "session_key": "websocket:abc"}),
        serde_json::json!({"k": "API_KEY=q8Zt4mXp2LrV9sWk", "list": [1, 2]}),
    ];
    for value in natives {
        let map = value.as_object().cloned().unwrap_or_default();
        assert!(!map.is_empty());
        let json = value.to_string();
        let mut want = map.clone();
        let mut want_counts = Counts::new();
        SCANNER.redact_map(&mut want, &mut want_counts);
        let mut got = map.clone();
        let mut counts = Counts::new();
        let changed = Scanner::new(&[]).redact_native(&mut got, &json, &mut counts);
        assert_eq!(got, want, "{json}");
        assert_eq!(counts, want_counts, "{json}");
        assert_eq!(changed, want != map, "{json}");
    }
}

/// A native whose text holds needles has each key and string searched for
/// those rules alone: it is redacted exactly as [`Scanner::redact_map`],
/// which searches each for every rule, redacts it — one rule's needle in one string and
/// another's in the next, a percent-escaped string (whose decoded `"` is no
/// key's quote), an assignment whose escaped quote JSON escapes again, a
/// key, a nested array, a long string (Teddy) and short ones (the
/// automaton).
#[test]
fn a_native_is_searched_for_the_needles_its_text_holds() {
    let long = "word ".repeat(60);
    let natives = [
        serde_json::json!({"url": "see https://example.com/docs", "cmd": "token%22:Hx7pQ2vLm9wE3rT5"}),
        serde_json::json!({"url": "https://example.com/a", "cmd": "export API_KEY%3Dq8Zt4mXp2LrV9sWk"}),
        serde_json::json!({"a": format!("{long} {GHP}"), "b": ["API_KEY=q8Zt4mXp2LrV9sWk"]}),
        serde_json::json!({"a": "postgres://app:Hx7pQ2vLm9wE3rT5@db/x", "b": {"c": [format!("{long}Basic YWRtaW46czNjcjN0UGFzcw==")]}}),
        serde_json::json!({format!("x {SK}"): 1, "b": "ghp_ in prose"}),
        serde_json::json!({"a": "curl -u\tadmin:Hx7pQ2vLm9wE3rT5", "b": format!("{long}db.internal:5432:app:admin:Hx7pQ2vLm9wE3rT5")}),
        serde_json::json!({"a": "machine api.example.com login bob password Hx7pQ2vLm9wE3rT5", "b": "AKIAZ3MT7QW5RX2LPK4N"}),
        serde_json::json!({"url": "https://example.com/a", "cmd": "api_key\\\":Hx7pQ2vLm9wE3rT5"}),
    ];
    for value in natives {
        let map = value.as_object().cloned().unwrap_or_default();
        let json = value.to_string();
        let mut want = map.clone();
        let mut want_counts = Counts::new();
        SCANNER.redact_map(&mut want, &mut want_counts);
        assert_ne!(want, map, "{json}");
        let mut got = map.clone();
        let mut counts = Counts::new();
        assert!(
            Scanner::new(&[]).redact_native(&mut got, &json, &mut counts),
            "{json}"
        );
        assert_eq!(got, want, "{json}");
        assert_eq!(counts, want_counts, "{json}");
    }
}

/// A secret-named assignment whose name ends in an escaped quote (a JSON
/// body on a command line, `api_key\":…`) is found in a native whose JSON
/// holds nothing else the pre-pass looks for: serialized, the string's own
/// `\"` is `\\\"` (and `\'` is `\\'`), which must not hide the sign.
#[test]
fn an_assignment_behind_an_escaped_quote_in_a_native_is_redacted() {
    for cmd in [
        "api_key\\\":Hx7pQ2vLm9wE3rT5",
        "curl -d {\\\"password\\\": \\\"Hx7pQ2vLm9wE3rT5\\\"}",
        "secret_token\\'=q8Zt4mXp2LrV9sWk",
    ] {
        let value = serde_json::json!({ "cmd": cmd });
        let map = value.as_object().cloned().unwrap_or_default();
        let json = value.to_string();
        let mut want = map.clone();
        SCANNER.redact_map(&mut want, &mut Counts::new());
        assert_ne!(want, map, "{json}: the rule itself finds it");
        let mut got = map.clone();
        assert!(
            Scanner::new(&[]).redact_native(&mut got, &json, &mut Counts::new()),
            "{json}"
        );
        assert_eq!(got, want, "{json}");
    }
}

proptest! {
    /// [`a_native_is_searched_for_the_needles_its_text_holds`] over mixtures
    /// of tokens and glue: a native is redacted as [`Scanner::redact_map`]
    /// redacts it.
    #[test]
    fn a_native_is_redacted_as_every_rule_on_every_string_would(
        a in mixtures(), b in mixtures(), c in mixtures(), pad in 0usize..3,
    ) {
        let long = "word ".repeat(60 * pad);
        let value = serde_json::json!({"a": a, "b": [format!("{long}{b}")], c.clone(): {"d": c}});
        let map = value.as_object().cloned().unwrap_or_default();
        let json = value.to_string();
        let mut want = map.clone();
        let mut want_counts = Counts::new();
        SCANNERS[0].redact_map(&mut want, &mut want_counts);
        let mut got = map.clone();
        let mut counts = Counts::new();
        let changed = Scanner::new(&[]).redact_native(&mut got, &json, &mut counts);
        prop_assert_eq!(&got, &want, "{}", json);
        prop_assert_eq!(counts, want_counts, "{}", json);
        prop_assert_eq!(changed, want != map, "{}", json);
    }
}

/// A Discord bot token whose first part ends in a `_` or a `-` (token
/// characters, right before its dot) is found: the pre-pass looks for 24
/// token characters before a dot.
#[test]
fn a_discord_token_is_found_whatever_characters_its_first_part_holds() {
    // the id's base64 (`108765432101234567`), then what its last group
    // leaves undecoded
    for first in [
        "MTA4NzY1NDMyMTAxMjM0NTY3_",
        "MTA4NzY1NDMyMTAxMjM0NTY3-",
        "MTA4NzY1NDMyMTAxMjM0NTY3_-",
        "MTA4NzY1NDMyMTAxMjM0NTY3a-_",
    ] {
        let token = format!("{first}.GhIjKl.Q7xT2mVb9LkR4sWz8NcY1pHdYz0123456789");
        let text = format!("bot token {token} here");
        assert_eq!(
            redact(&text).0,
            "bot token [redacted:discord_bot_token] here",
            "{token}"
        );
    }
}

/// A tab in a native's string shows as `\t` in its serialized JSON, which
/// the pre-pass searches: a tab between a secret-named key and its `=`, or
/// after `-u`, still lets the rules run on the native, in a short text
/// (the automaton) and a long one (Teddy).
#[test]
fn a_tab_before_a_secret_in_a_native_still_redacts_it() {
    let cases = [
        (
            "export API_KEY\t=q8Zt4mXp2LrV9sWk",
            "export API_KEY\t=[redacted:secret_assignment]",
        ),
        (
            "curl -u\tadmin:Hx7pQ2vLm9wE3rT5",
            "curl -u\tadmin:[redacted:basic_auth]",
        ),
    ];
    for (text, want) in cases {
        for pad in [String::new(), "word ".repeat(60)] {
            let value = serde_json::json!({ "pad": pad, "cmd": text });
            let json = value.to_string();
            let map = value.as_object().cloned().unwrap_or_default();
            assert!(SCANNER.may_match_native(&map, &json), "{json}");
            let mut got = map.clone();
            let mut counts = Counts::new();
            assert!(Scanner::new(&[]).redact_native(&mut got, &json, &mut counts));
            assert_eq!(got.get("cmd"), Some(&serde_json::json!(want)), "{json}");
        }
    }
}
