//! The nanoclaw content mapper: a `messages_in` / `messages_out` `content`
//! JSON → row text, link keys and a secret-free copy for `native`. No I/O, no
//! DuckDB (a fuzz target drives it).
//!
//! ```text
//! inbound  chat-sdk  {"_type":"chat:Message","id",text,author{userId…},senderId,attachments[…]}  → text
//!          chat      {"text", sender?, senderId?, echo?{surface,label}}                          → text
//!          task      {"prompt", script, originSessionId}  (legacy: a plain string)               → prompt
//!          system    {"type":"question_response","questionId","selectedOption","userId"}        → selectedOption
//!                    {"type":"cli_response","requestId","frame":{id,ok,data|error}}              → system "cli_response <id> ok=…"
//! outbound chat      {"text"[,"files"]}                                                          → text
//!                    {"operation":"edit","messageId","text"}             → system "edit of <messageId>: <text>"
//!                    {"operation":"reaction","messageId","emoji"}        → system "reaction <emoji> on <messageId>"
//!          chat-sdk  {"type":"ask_question","questionId","title","question","options":[{label,selectedLabel,value}]}
//!                    → title, question and options; {"type":"card","card",fallbackText}          → fallbackText
//!          system    {"action":…}                                                                → system "<action> …"
//!          task_log  {"text"}                                                                    → text
//! ```
//! A `system` message other than a question_response (an operation the
//! agent asks of the host, or the host's response) is a `system` row whose
//! `native.operation` names its action or type; so are edits and reactions.
//! Secrets: nanoclaw has no secret flag. An answer (`selectedOption`) or
//! option `value` shaped like nanoclaw's own `SECRET_VALUE_RE`, or matching a
//! `--secret-pattern`, becomes `[redacted]` in the text, in the content kept
//! for `native` (every occurrence) and in the option of the question card.
//! Attachment `data` (base64 bytes) is always dropped.
//!
//! Credential fields, by allow-list ([`redact_fields`]): in every content,
//! the values under `env`, `headers` and secret-named keys (`token`,
//! `password`, `apiKey`, `GITHUB_TOKEN`, …) become `[redacted:field]` (an
//! object keeps its keys), and a `url` keeps only its origin — an
//! `add_mcp_server` request's `env`, a `cli_request`'s `--headers`, the MCP
//! servers a `groups-config-get` response lists. A `system` payload of an
//! action or type nanoload does not know keeps only its keys. A host note
//! (`sender: system`) that embeds such a JSON object gets the same.

use crate::sources::shared::str_field;
use regex::Regex;
use serde_json::{Map, Value, json};

pub const REDACTED: &str = "[redacted]";

/// A credential field's value (`[redacted:field]`, counted as the rule
/// `field` in `sources.redactions`).
pub const FIELD: &str = crate::secrets::FIELD_MARKER;

/// The `system` payloads nanoclaw writes (actions in `messages_out`, types
/// in `messages_in`; 2.0.x task actions; the `channels` branch's canvas).
const KNOWN_SYSTEM: &[&str] = &[
    "add_mcp_server",
    "install_packages",
    "create_agent",
    "cli_request",
    "cli_response",
    "question_response",
    "schedule_task",
    "cancel_task",
    "pause_task",
    "resume_task",
    "update_task",
    "canvas_edit",
    "canvas_read",
    "canvas_response",
];

/// A key whose value is a credential by design.
fn credential_key(k: &str) -> bool {
    matches!(
        k.to_ascii_lowercase().as_str(),
        "env"
            | "headers"
            | "token"
            | "password"
            | "passwd"
            | "apikey"
            | "api_key"
            | "secret"
            | "secrets"
            | "credential"
            | "credentials"
            | "authorization"
            | "cookie"
            | "cookies"
    ) || crate::secrets::secret_name(k)
}

/// Every value inside `v` becomes [`FIELD`] (object keys stay).
fn redact_all(v: &mut Value) -> usize {
    match v {
        Value::Object(o) => o.values_mut().map(redact_all).sum(),
        Value::Array(a) => a.iter_mut().map(redact_all).sum(),
        Value::Null => 0,
        other => {
            *other = json!(FIELD);
            1
        }
    }
}

/// `scheme://host[:port]/[redacted:field]` when the URL holds more than its
/// origin (a token in a path segment, a query, userinfo); `None` to keep it.
fn url_origin(u: &str) -> Option<String> {
    let (scheme, rest) = u.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let tail = &rest[end..];
    (authority.contains('@') || !matches!(tail, "" | "/"))
        .then(|| format!("{scheme}://{host}/{FIELD}"))
}

/// Every URL of a text with more than its origin keeps only its origin
/// (`https://mcp.zapier.com/[redacted:field]`): an approval card's
/// `question` shows the MCP server it asks for, token in the path and all;
/// `None` when nothing changed.
pub fn redact_urls(text: &str) -> Option<String> {
    static URL: std::sync::LazyLock<Option<Regex>> =
        std::sync::LazyLock::new(|| Regex::new(r#"[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>`]+"#).ok());
    let re = URL.as_ref()?;
    let mut changed = false;
    let out = re.replace_all(text, |c: &regex::Captures<'_>| {
        let u = c.get(0).map_or("", |m| m.as_str());
        match url_origin(u) {
            Some(o) => {
                changed = true;
                o
            }
            None => u.to_string(),
        }
    });
    changed.then(|| out.into_owned())
}

/// The credential fields of a content value, redacted in place (see the
/// module header); the number of values redacted.
pub fn redact_fields(v: &mut Value) -> usize {
    match v {
        Value::Object(o) => o
            .iter_mut()
            .map(|(k, x)| {
                if credential_key(k) {
                    redact_all(x)
                } else if k == "url"
                    && let Some(origin) = x.as_str().and_then(url_origin)
                {
                    *x = json!(origin);
                    1
                } else {
                    redact_fields(x)
                }
            })
            .sum(),
        Value::Array(a) => a.iter_mut().map(redact_fields).sum(),
        _ => 0,
    }
}

/// A `system` payload nanoload does not know keeps only its keys (and what
/// names it: `action`, `type`, `requestId`).
fn keys_only(o: &mut Map<String, Value>) -> usize {
    o.iter_mut()
        .filter(|(k, _)| !matches!(k.as_str(), "action" | "type" | "requestId"))
        .map(|(_, x)| redact_all(x))
        .sum()
}

/// A host note that embeds a JSON object (an approved `ncl` command's
/// result): the object's credential fields redacted, re-serialized with two
/// spaces as nanoclaw's `JSON.stringify(…, null, 2)` wrote it.
fn redact_embedded_json(text: &str) -> Option<String> {
    let start = text
        .find("\n{")
        .map(|i| i + 1)
        .or_else(|| text.starts_with('{').then_some(0))?;
    let mut v: Value = crate::jsonl::parse(text[start..].trim_end()).ok()?;
    (redact_fields(&mut v) > 0)
        .then(|| serde_json::to_string_pretty(&v).ok())
        .flatten()
        .map(|j| format!("{}{j}", &text[..start]))
}

/// nanoclaw's `SECRET_VALUE_RE` (src/modules/self-mod/request.ts).
pub const SECRET_VALUE_RE: &str = r"^(sk-|ghp_|github_pat_|xox[a-z]-|AKIA|-----BEGIN )";

/// Which values count as secrets.
#[derive(Debug, Clone)]
pub struct SecretRules {
    builtin: Option<Regex>,
    user: Vec<Regex>,
}

impl Default for SecretRules {
    fn default() -> Self {
        SecretRules::new(Vec::new())
    }
}

impl SecretRules {
    pub fn new(user: Vec<Regex>) -> SecretRules {
        SecretRules {
            builtin: Regex::new(SECRET_VALUE_RE).ok(),
            user,
        }
    }

    pub fn is_secret(&self, v: &str) -> bool {
        self.builtin.as_ref().is_some_and(|r| r.is_match(v))
            || self.user.iter().any(|r| r.is_match(v))
    }
}

/// What one message's content maps to.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mapped {
    pub text: Option<String>,
    /// The content with secrets redacted and attachment bytes dropped.
    pub content: Value,
    /// `questionId` of an ask_question card or a question_response answer.
    pub question_id: Option<String>,
    /// `content.type` or `content.action` or `content.operation`.
    pub subtype: Option<String>,
    /// Secret values that were redacted (never output; for callers' counts).
    pub redacted: usize,
    /// An outbound `operation` (`edit`, `reaction`) and the `messageId` it
    /// targets: a request to the platform, not a chat turn.
    pub operation: Option<(String, Option<String>)>,
}

/// Secret-shaped answers anywhere in a content value: every string under a
/// `selectedOption` or `value` key at any depth (a question_response's
/// answer, an ask_question's options, and the same keys in any other shape).
pub fn answer_secrets(v: &Value, rules: &SecretRules, out: &mut Vec<String>) {
    match v {
        Value::Object(o) => {
            for (k, x) in o {
                match x.as_str() {
                    Some(x) if (k == "selectedOption" || k == "value") && rules.is_secret(x) => {
                        out.push(x.to_string())
                    }
                    _ => answer_secrets(x, rules, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| answer_secrets(x, rules, out)),
        _ => {}
    }
}

/// Replace every occurrence of each secret inside every string of `v`.
fn scrub(v: &mut Value, secrets: &[String]) {
    match v {
        Value::String(s) => {
            for sec in secrets {
                if !sec.is_empty() && s.contains(sec.as_str()) {
                    *s = s.replace(sec.as_str(), REDACTED);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| scrub(x, secrets)),
        Value::Object(o) => o.values_mut().for_each(|x| scrub(x, secrets)),
        _ => {}
    }
}

fn drop_attachment_bytes(v: &mut Value) {
    if let Some(atts) = v.get_mut("attachments").and_then(Value::as_array_mut) {
        for a in atts {
            if let Some(o) = a.as_object_mut() {
                o.remove("data");
            }
        }
    }
}

/// The shared start of a message row's `native`: its mapped content, and a
/// map holding `table`, `agent_group_id` and the record's `keys` that exist.
pub fn message_native(
    rec: &Map<String, Value>,
    table: &str,
    agent_group: &str,
    keys: &[&str],
    rules: &SecretRules,
) -> (Mapped, Map<String, Value>) {
    let kind = str_field(rec, "kind").unwrap_or_default();
    let content = str_field(rec, "content").unwrap_or_default();
    let m = map_content(kind, content, table == "messages_out", rules);
    let mut n = Map::new();
    n.insert("table".into(), json!(table));
    n.insert("agent_group_id".into(), json!(agent_group));
    for &k in keys {
        if let Some(v) = rec.get(k) {
            n.insert(k.into(), v.clone());
        }
    }
    if kind == "system" {
        n.insert("tool_plumbing".into(), json!(true));
        // an operation the agent asks of the host (create_agent,
        // cli_request, add_mcp_server, …) or the host's response: a vendor
        // record, a `system` row, not a chat turn (the registry entry); a
        // question_response is the user's answer to a card, a turn
        if m.operation.is_none() && m.subtype.as_deref() != Some("question_response") {
            n.insert(
                "operation".into(),
                json!(m.subtype.as_deref().unwrap_or("system")),
            );
        }
    }
    if let Some(q) = &m.question_id {
        n.insert("question_id".into(), json!(q));
    }
    if let Some(t) = &m.subtype {
        n.insert("content_type".into(), json!(t));
    }
    if let Some((op, target)) = &m.operation {
        n.insert("operation".into(), json!(op));
        if let Some(t) = target {
            n.insert("target_message_id".into(), json!(t));
        }
    }
    (m, n)
}

/// Map one `content` text. `outbound` selects the messages_out shapes.
pub fn map_content(kind: &str, content: &str, outbound: bool, rules: &SecretRules) -> Mapped {
    let mut value: Value = match crate::jsonl::decode_text(content) {
        Ok(d) => d.value,
        // Legacy task rows (and anything else) may be plain text.
        Err(_) => Value::String(content.to_string()),
    };
    drop_attachment_bytes(&mut value);
    let mut secrets: Vec<String> = Vec::new();
    let mut m = Mapped::default();
    answer_secrets(&value, rules, &mut secrets);
    m.redacted = secrets.len();
    scrub(&mut value, &secrets);
    redact_fields(&mut value);
    if let Value::Object(o) = &mut value {
        let named = str_field(o, "action").or(str_field(o, "type"));
        if kind == "system" && !named.is_some_and(|n| KNOWN_SYSTEM.contains(&n)) {
            keys_only(o);
        }
        if str_field(o, "sender") == Some("system")
            && let Some(t) = str_field(o, "text").and_then(redact_embedded_json)
        {
            o.insert("text".into(), json!(t));
        }
    }
    if let Value::Object(o) = &value {
        m.question_id = str_field(o, "questionId").map(String::from);
        m.subtype = str_field(o, "type")
            .or(str_field(o, "action"))
            .or(str_field(o, "operation"))
            .map(String::from);
        m.text = text_of(kind, o, outbound);
        if outbound {
            m.operation = str_field(o, "operation")
                .map(|op| (op.to_string(), str_field(o, "messageId").map(String::from)));
        }
    } else if let Value::String(t) = &value {
        m.text = Some(t.clone());
    }
    m.content = value;
    m
}

fn text_of(kind: &str, o: &Map<String, Value>, outbound: bool) -> Option<String> {
    if let Some(t) = str_field(o, "type") {
        match t {
            "question_response" => return str_field(o, "selectedOption").map(String::from),
            "cli_response" => {
                let frame = o.get("frame");
                let ok = frame
                    .and_then(|f| f.get("ok"))
                    .map(Value::to_string)
                    .unwrap_or_default();
                return Some(format!(
                    "cli_response {} ok={ok}",
                    str_field(o, "requestId").unwrap_or_default()
                ));
            }
            "ask_question" => {
                let mut lines = vec![str_field(o, "title").unwrap_or_default().to_string()];
                if let Some(q) = str_field(o, "question").filter(|q| !q.is_empty()) {
                    lines.push(q.to_string());
                }
                for opt in o
                    .get("options")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let label = opt.get("label").and_then(Value::as_str).unwrap_or_default();
                    let value = opt.get("value").and_then(Value::as_str).unwrap_or_default();
                    lines.push(if value == label {
                        format!("- {label}")
                    } else {
                        format!("- {label} = {value}")
                    });
                }
                return Some(lines.join("\n"));
            }
            "card" => return str_field(o, "fallbackText").map(String::from),
            _ => {}
        }
    }
    if let Some(op) = str_field(o, "operation") {
        let target = str_field(o, "messageId").unwrap_or("?");
        return Some(match op {
            "edit" => format!(
                "edit of {target}: {}",
                str_field(o, "text").unwrap_or_default()
            ),
            "reaction" => format!(
                "reaction {} on {target}",
                str_field(o, "emoji").unwrap_or_default()
            ),
            _ => format!("{op} on {target}"),
        });
    }
    if let Some(action) = str_field(o, "action") {
        let detail = match action {
            "cli_request" => {
                let args = o.get("args").map(Value::to_string).unwrap_or_default();
                format!(" {} {args}", str_field(o, "command").unwrap_or_default())
            }
            "create_agent" => format!(" {}", str_field(o, "name").unwrap_or_default()),
            "add_mcp_server" => {
                let target = str_field(o, "command")
                    .map(|c| {
                        let args = o.get("args").map(Value::to_string).unwrap_or_default();
                        format!("{c} {args}")
                    })
                    .or_else(|| str_field(o, "url").map(String::from))
                    .unwrap_or_default();
                format!(" {} {target}", str_field(o, "name").unwrap_or_default())
            }
            "install_packages" => format!(
                " apt={} npm={}",
                o.get("apt").map(Value::to_string).unwrap_or_default(),
                o.get("npm").map(Value::to_string).unwrap_or_default()
            ),
            _ => String::new(),
        };
        return Some(format!("{action}{detail}"));
    }
    if kind == "task" && !outbound {
        return str_field(o, "prompt").map(String::from);
    }
    str_field(o, "text").map(String::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_answer_and_option_are_redacted_everywhere() {
        let rules = SecretRules::default();
        let a = map_content(
            "system",
            r#"{"type":"question_response","questionId":"q1","selectedOption":"ghp_abc","userId":"U1"}"#,
            false,
            &rules,
        );
        assert_eq!(a.text.as_deref(), Some(REDACTED));
        assert_eq!(a.question_id.as_deref(), Some("q1"));
        assert!(!a.content.to_string().contains("ghp_abc"));
        let q = map_content(
            "chat-sdk",
            r#"{"type":"ask_question","questionId":"q1","title":"Token","question":"Which?","options":[{"label":"New","selectedLabel":"New ghp_abc","value":"ghp_abc"},{"label":"Cancel","selectedLabel":"Cancel","value":"cancel"}]}"#,
            true,
            &rules,
        );
        assert_eq!(
            q.text.as_deref(),
            Some("Token\nWhich?\n- New = [redacted]\n- Cancel = cancel")
        );
        assert!(!q.content.to_string().contains("ghp_abc"), "{}", q.content);
        let keep = map_content(
            "system",
            r#"{"type":"question_response","questionId":"q2","selectedOption":"Lisbon"}"#,
            false,
            &rules,
        );
        assert_eq!(keep.text.as_deref(), Some("Lisbon"));
    }

    /// The shapes nanoclaw 2.2.0 writes (fixtures/nanoclaw/home-mcp): a
    /// credential field's value goes, the request's structure and its
    /// non-secret fields stay.
    #[test]
    fn credential_fields_of_system_payloads_go_by_allow_list() {
        let r = SecretRules::default();
        let stdio = map_content(
            "system",
            r#"{"action":"add_mcp_server","name":"github","command":"npx","args":["-y","@modelcontextprotocol/server-github"],"env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"ghp_x","DATABASE_URL":"postgres://app:pw@db:5432/app","API_KEY":"4Bcz"}}"#,
            true,
            &r,
        );
        assert_eq!(
            stdio.content.to_string(),
            r#"{"action":"add_mcp_server","args":["-y","@modelcontextprotocol/server-github"],"command":"npx","env":{"API_KEY":"[redacted:field]","DATABASE_URL":"[redacted:field]","GITHUB_PERSONAL_ACCESS_TOKEN":"[redacted:field]"},"name":"github"}"#
        );
        assert_eq!(
            stdio.text.as_deref(),
            Some(r#"add_mcp_server github npx ["-y","@modelcontextprotocol/server-github"]"#)
        );
        let http = map_content(
            "system",
            r#"{"action":"add_mcp_server","name":"zapier","type":"http","url":"https://mcp.zapier.com/api/mcp/s/pqHK/mcp"}"#,
            true,
            &r,
        );
        assert_eq!(
            http.text.as_deref(),
            Some("add_mcp_server zapier https://mcp.zapier.com/[redacted:field]")
        );
        let cli = map_content(
            "system",
            r#"{"action":"cli_request","requestId":"c1","command":"groups-config-add-mcp-server","args":{"id":"ag","name":"linear","url":"https://mcp.linear.app/mcp","headers":"{\"Authorization\":\"Bearer lin\"}"}}"#,
            true,
            &r,
        );
        assert_eq!(
            cli.text.as_deref(),
            Some(
                r#"cli_request groups-config-add-mcp-server {"headers":"[redacted:field]","id":"ag","name":"linear","url":"https://mcp.linear.app/[redacted:field]"}"#
            )
        );
        let resp = map_content(
            "system",
            r#"{"type":"cli_response","requestId":"c2","frame":{"id":"c2","ok":true,"data":{"skills":"all","mcp_servers":{"linear":{"type":"http","url":"https://mcp.linear.app/mcp","headers":{"Authorization":"Bearer lin"}},"gh":{"command":"npx","env":{"T":"x"}}}}}}"#,
            false,
            &r,
        );
        assert_eq!(
            resp.content["frame"]["data"]["mcp_servers"].to_string(),
            r#"{"gh":{"command":"npx","env":{"T":"[redacted:field]"}},"linear":{"headers":{"Authorization":"[redacted:field]"},"type":"http","url":"https://mcp.linear.app/[redacted:field]"}}"#
        );
        let note = map_content(
            "chat",
            r#"{"text":"Your `ncl x` request was approved and executed.\n\n{\n  \"servers\": {\n    \"linear\": {\n      \"headers\": {\n        \"Authorization\": \"Bearer lin\"\n      }\n    }\n  }\n}","sender":"system","senderId":"system"}"#,
            false,
            &r,
        );
        assert_eq!(
            note.text.as_deref(),
            Some(
                "Your `ncl x` request was approved and executed.\n\n{\n  \"servers\": {\n    \"linear\": {\n      \"headers\": {\n        \"Authorization\": \"[redacted:field]\"\n      }\n    }\n  }\n}"
            )
        );
        let unknown = map_content(
            "system",
            r#"{"action":"rotate_vault","requestId":"c3","target":"prod","depth":3,"opts":{"k":"v"}}"#,
            true,
            &r,
        );
        assert_eq!(
            unknown.content.to_string(),
            r#"{"action":"rotate_vault","depth":"[redacted:field]","opts":{"k":"[redacted:field]"},"requestId":"c3","target":"[redacted:field]"}"#
        );
        assert_eq!(
            redact_urls(
                "Add MCP:\nurl: \"https://mcp.zapier.com/api/mcp/s/pqHK/mcp\"\nsee https://x.org/"
            )
            .as_deref(),
            Some("Add MCP:\nurl: \"https://mcp.zapier.com/[redacted:field]\"\nsee https://x.org/")
        );
        assert_eq!(redact_urls("no url, or https://x.org"), None);
        let chat = map_content(
            "chat",
            r#"{"text":"the url is https://x.org/a/b"}"#,
            true,
            &r,
        );
        assert_eq!(chat.text.as_deref(), Some("the url is https://x.org/a/b"));
    }

    #[test]
    fn user_patterns_search_anywhere() {
        let rules = SecretRules::new(vec![
            Regex::new("hunter2").unwrap_or_else(|_| unreachable!()),
        ]);
        let a = map_content(
            "system",
            r#"{"type":"question_response","questionId":"q","selectedOption":"pw is hunter2!"}"#,
            false,
            &rules,
        );
        assert_eq!(a.text.as_deref(), Some(REDACTED));
    }

    #[test]
    fn shapes() {
        let r = SecretRules::default();
        assert_eq!(
            map_content(
                "task",
                r#"{"prompt":"Remind Dana","script":null}"#,
                false,
                &r
            )
            .text
            .as_deref(),
            Some("Remind Dana")
        );
        assert_eq!(
            map_content("task", "legacy prompt", false, &r)
                .text
                .as_deref(),
            Some("legacy prompt")
        );
        assert_eq!(
            map_content(
                "chat",
                r#"{"operation":"reaction","messageId":"m","emoji":"👍"}"#,
                true,
                &r
            )
            .text
            .as_deref(),
            Some("reaction 👍 on m")
        );
        assert_eq!(
            map_content(
                "system",
                r#"{"action":"create_agent","name":"Scout"}"#,
                true,
                &r
            )
            .text
            .as_deref(),
            Some("create_agent Scout")
        );
        let att = map_content(
            "chat-sdk",
            r#"{"text":"pic","attachments":[{"name":"a.png","data":"QUJD"}]}"#,
            false,
            &r,
        );
        assert_eq!(
            att.content.to_string(),
            r#"{"attachments":[{"name":"a.png"}],"text":"pic"}"#
        );
    }

    /// Inputs the fuzzer found (fixtures/fuzz/nanoclaw_content), replayed with
    /// the fuzz target's property: no secret-shaped answer survives.
    #[test]
    fn fuzz_findings_stay_fixed() -> std::io::Result<()> {
        const KINDS: [&str; 6] = ["chat", "chat-sdk", "task", "system", "task_log", "webhook"];
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/fuzz/nanoclaw_content"
        );
        let mut n = 0;
        for e in std::fs::read_dir(dir)? {
            let data = std::fs::read(e?.path())?;
            let Some((&sel, rest)) = data.split_first() else {
                continue;
            };
            let m = map_content(
                KINDS[usize::from(sel) % KINDS.len()],
                &String::from_utf8_lossy(rest),
                sel & 0x80 != 0,
                &SecretRules::default(),
            );
            let kept = m.content.to_string();
            assert!(
                !kept.contains(r#""selectedOption":"ghp_"#) && !kept.contains(r#""value":"ghp_"#),
                "{kept}"
            );
            n += 1;
        }
        assert!(n >= 1);
        Ok(())
    }
}
