//! `nanobot.permissions`: standing permission settings of `config.json` and
//! `pairing.json` (primary).
//!
//! ```text
//! .nanobot*/config.json     camelCase (snake_case accepted) full config dump: API KEYS INSIDE.
//!   Only the whitelisted paths below are ever materialised; every other value is
//!   skipped by the deserializer (serde IgnoredAny) and never held in memory.
//!   tools.restrictToWorkspace  tools.exec.{enable,sandbox,allowPatterns,denyPatterns,
//!   sandboxRoBinds,sandboxRwBinds,allowedEnvKeys}  tools.ssrfWhitelist
//!   tools.webuiAllowLocalServiceAccess (legacy allowLocalPreviewAccess)
//!   tools.webuiAllowRemotePackageInstall  channels.<name>.allowFrom
//!   → `permission setting: <key as spelled>=<value> (from <path>, file mtime)`,
//!     one row per list entry, at the file's mtime (UTC)
//! .nanobot*/pairing.json    {"approved": {channel: [sender…]}, "pending": {"<CODE>": {channel,
//!                            sender_id, created_at, expires_at, delivery_status?}}}
//!   → `permission setting: pairing.approved.<channel>=<sender> (from <path>, file mtime)`
//!     `permission setting: pairing.pending.<channel>=<sender> expires_at=<UTC> [delivery_status=<s> ]
//!      (from <path>, created_at)` — the pairing code is never deserialized.
//! ```

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use crate::diag::DiagKind;
use crate::schema::{EventRow, Group, TurnType};
use crate::store::{StoreError, StoreOutput};
use crate::time::{format_utc, from_epoch_secs_f64};

/// The permission keys of the catalog entry, in row order (`*` = any key).
pub const PERMISSION_KEYS: [&str; 13] = [
    "tools.restrictToWorkspace",
    "tools.exec.enable",
    "tools.exec.sandbox",
    "tools.exec.allowPatterns",
    "tools.exec.denyPatterns",
    "tools.exec.sandboxRoBinds",
    "tools.exec.sandboxRwBinds",
    "tools.exec.allowedEnvKeys",
    "tools.ssrfWhitelist",
    "tools.webuiAllowLocalServiceAccess",
    "tools.allowLocalPreviewAccess",
    "tools.webuiAllowRemotePackageInstall",
    "channels.*.allowFrom",
];

/// `restrict_to_workspace` → `restrictToWorkspace` (camelCase keys pass unchanged).
fn to_camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// A picked value: (index into PERMISSION_KEYS, key path as the file spells it, value).
pub type Picked = Vec<(usize, String, Value)>;

struct Pick<'a> {
    /// Segments already matched (camelCase) and as spelled.
    camel: Vec<String>,
    spelled: Vec<String>,
    out: &'a RefCell<Picked>,
}

impl Pick<'_> {
    /// (pattern index that `path` completes, whether `path` is a proper prefix of some pattern)
    fn classify(path: &[String]) -> (Option<usize>, bool) {
        let mut full = None;
        let mut prefix = false;
        for (i, pat) in PERMISSION_KEYS.iter().enumerate() {
            let segs: Vec<&str> = pat.split('.').collect();
            if segs.len() < path.len() {
                continue;
            }
            let matches = segs.iter().zip(path).all(|(s, p)| *s == "*" || *s == p);
            if !matches {
                continue;
            }
            if segs.len() == path.len() {
                full = full.or(Some(i));
            } else {
                prefix = true;
            }
        }
        (full, prefix)
    }
}

impl<'de> DeserializeSeed<'de> for Pick<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Pick<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let mut camel = self.camel.clone();
            camel.push(to_camel(&key));
            let (full, prefix) = Pick::classify(&camel);
            let mut spelled = self.spelled.clone();
            spelled.push(key);
            if let Some(i) = full {
                let v: Value = map.next_value()?;
                self.out.borrow_mut().push((i, spelled.join("."), v));
            } else if prefix {
                map.next_value_seed(Pick {
                    camel,
                    spelled,
                    out: self.out,
                })?;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }
    // Anything that is not an object at a prefix position holds no permission.
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(())
    }
}

/// Pick the permission values out of config.json bytes, in row order.
pub fn pick_config(bytes: &[u8]) -> Result<Picked, String> {
    let out = RefCell::new(Vec::new());
    let mut de = serde_json::Deserializer::from_slice(bytes);
    Pick {
        camel: Vec::new(),
        spelled: Vec::new(),
        out: &out,
    }
    .deserialize(&mut de)
    .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    let mut v = out.into_inner();
    // catalog order; file order within a key (channels, list entries)
    v.sort_by_key(|(i, _, _)| *i);
    Ok(v)
}

/// One row text per value (lists: one per entry); empty strings and lists give none.
pub fn render_values(v: &Value) -> Vec<String> {
    match v {
        Value::Null => vec![],
        Value::String(s) if s.is_empty() => vec![],
        Value::String(s) => vec![s.clone()],
        Value::Bool(b) => vec![b.to_string()],
        Value::Number(n) => vec![n.to_string()],
        Value::Array(a) => a.iter().flat_map(render_values).collect(),
        Value::Object(_) => vec![v.to_string()],
    }
}

#[derive(Debug, Deserialize)]
struct Pairing {
    #[serde(default)]
    approved: BTreeMap<String, Vec<Value>>,
    #[serde(default, deserialize_with = "values_only")]
    pending: Vec<Pending>,
}

#[derive(Debug, Deserialize)]
struct Pending {
    channel: Option<String>,
    sender_id: Option<Value>,
    created_at: Option<f64>,
    expires_at: Option<f64>,
    delivery_status: Option<String>,
}

/// The values of a JSON object; its keys (pairing codes) are skipped unread.
fn values_only<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Pending>, D::Error> {
    struct V;
    impl<'de> Visitor<'de> for V {
        type Value = Vec<Pending>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an object of pending pairings")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Pending>, A::Error> {
            let mut out = Vec::new();
            while map.next_key::<IgnoredAny>()?.is_some() {
                out.push(map.next_value()?);
            }
            Ok(out)
        }
    }
    d.deserialize_map(V)
}

fn id_text(v: &Option<Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// (text, UTC µs) of pairing.json rows; `mtime` for the approved ones.
pub fn pairing_rows(
    bytes: &[u8],
    path: &str,
    mtime: Option<i64>,
) -> Result<Vec<(String, Option<i64>)>, String> {
    let p: Pairing = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for (channel, senders) in &p.approved {
        for s in senders.iter().flat_map(render_values) {
            rows.push((
                format!(
                    "permission setting: pairing.approved.{channel}={s} (from {path}, file mtime)"
                ),
                mtime,
            ));
        }
    }
    for e in &p.pending {
        let mut t = format!(
            "permission setting: pairing.pending.{}={}",
            e.channel.as_deref().unwrap_or(""),
            id_text(&e.sender_id)
        );
        if let Some(x) = e.expires_at.and_then(from_epoch_secs_f64) {
            t.push_str(&format!(" expires_at={}", format_utc(x)));
        }
        if let Some(s) = &e.delivery_status {
            t.push_str(&format!(" delivery_status={s}"));
        }
        t.push_str(&format!(" (from {path}, created_at)"));
        rows.push((t, e.created_at.and_then(from_epoch_secs_f64)));
    }
    Ok(rows)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let store = out.store;
    let bytes = std::fs::read(&store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let mtime = i64::try_from(store.mtime_ns / 1000).ok();
    let rows: Result<Vec<(String, Option<i64>)>, String> = if store.rel.ends_with("pairing.json") {
        pairing_rows(&bytes, &store.rel, mtime)
    } else {
        pick_config(&bytes).map(|picked| {
            picked
                .iter()
                .flat_map(|(_, key, v)| render_values(v).into_iter().map(move |s| (key.clone(), s)))
                .map(|(key, s)| {
                    (
                        format!(
                            "permission setting: {key}={s} (from {}, file mtime)",
                            store.rel
                        ),
                        mtime,
                    )
                })
                .collect()
        })
    };
    let rows = match rows {
        Ok(r) => r,
        // The decoder's message names a position, never a value.
        Err(reason) => return Err(StoreError::Unreadable(format!("not valid JSON: {reason}"))),
    };
    for (i, (text, ts)) in rows.into_iter().enumerate() {
        out.push(EventRow {
            turn_type: TurnType::System,
            ts_utc: ts,
            text: Some(text),
            source_line: Some(1),
            x_group: Group::Record,
            x_sub: i as i32,
            ..Default::default()
        })?;
    }
    if out.store.rel.ends_with("config.json") && mtime.is_none() {
        out.diag(
            DiagKind::Warning,
            None,
            None,
            "file modification time unknown: permission rows have no time",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whitelisted_keys_are_picked_in_catalog_order() -> Result<(), String> {
        let cfg = br#"{"providers":{"x":{"apiKey":"SECRET-1"}},"channels":{"sendProgress":true,"telegram":{"token":"SECRET-2","allowFrom":["1"]},"slack":{"allow_from":["U1","U2"]}},
            "tools":{"exec":{"enable":true,"timeout":60,"sandbox":"","allowPatterns":["^git "]},"restrict_to_workspace":false,"mcpServers":{"g":{"env":{"T":"SECRET-3"}}},"maxSessionMessagesPerMinute":6}}"#;
        let picked = pick_config(cfg)?;
        let keys: Vec<(&str, String)> = picked
            .iter()
            .map(|(_, k, v)| (k.as_str(), v.to_string()))
            .collect();
        assert_eq!(
            keys,
            vec![
                ("tools.restrict_to_workspace", "false".to_string()),
                ("tools.exec.enable", "true".into()),
                ("tools.exec.sandbox", "\"\"".into()),
                ("tools.exec.allowPatterns", "[\"^git \"]".into()),
                ("channels.telegram.allowFrom", "[\"1\"]".into()),
                ("channels.slack.allow_from", "[\"U1\",\"U2\"]".into()),
            ]
        );
        let all = format!("{picked:?}");
        assert!(!all.contains("SECRET"));
        Ok(())
    }

    #[test]
    fn pairing_rows_never_show_the_code() -> Result<(), String> {
        let p = br#"{"approved":{"telegram":["48213377"]},"pending":{"I7NE-KJ8F":{"channel":"discord","sender_id":"555666777","created_at":1792659600.0,"expires_at":1792660200.0}}}"#;
        let rows = pairing_rows(p, ".nanobot/pairing.json", Some(5))?;
        assert_eq!(
            rows,
            vec![
                ("permission setting: pairing.approved.telegram=48213377 (from .nanobot/pairing.json, file mtime)".to_string(), Some(5)),
                (
                    "permission setting: pairing.pending.discord=555666777 expires_at=2026-10-22T09:10:00Z (from .nanobot/pairing.json, created_at)".to_string(),
                    Some(1_792_659_600_000_000)
                ),
            ]
        );
        Ok(())
    }
}
