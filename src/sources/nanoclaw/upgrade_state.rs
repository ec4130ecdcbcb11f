//! `nanoclaw.upgrade_state`: the install's upgrade marker (primary; one row).
//!
//! ```text
//! <root>/data/upgrade-state.json      written by nanoclaw ≥ 2.1.0 (`writeUpgradeState`)
//!   {"version": "2.2.0", "updatedAt": "2026-…Z", "via": "setup"}   (src/upgrade-state.ts;
//!   via: setup, update-nanoclaw, migrate-nanoclaw or manual)
//!   → one system row at updatedAt (true UTC), no session:
//!     nanoclaw install: version=<version> via=<via> updated_at=<updatedAt>
//!     native {version, via, updatedAt} (absent ones left out; any other key
//!     named in native.other_keys, its value not read)
//! ```
//! The install's version also reaches `sources.agent_version` of every store
//! of the install and `native.nanoclaw_version` of its catalog's session
//! start rows, both from this row (sql/V022__install_versions.sql): no other
//! store reads the marker. A marker that is not a JSON object is a
//! `bad_record` with the `parser: unparseable record` row.

use serde_json::{Map, Value};

use crate::diag::DiagKind;
use crate::jsonl::decode_text;
use crate::schema::{EventRow, TurnType};
use crate::store::{StoreError, StoreOutput};

/// The marker's fields nanoclaw writes, with their labels in the row's text.
const FIELDS: [(&str, &str); 3] = [
    ("version", "version"),
    ("via", "via"),
    ("updatedAt", "updated_at"),
];

/// The row of a decoded marker (no I/O).
pub fn marker_row(v: &Value) -> Result<EventRow, String> {
    let o = v.as_object().ok_or("expected a JSON object")?;
    let mut parts = Vec::new();
    let mut native = Map::new();
    for (key, label) in FIELDS {
        match o.get(key) {
            Some(Value::String(s)) => {
                parts.push(format!("{label}={s}"));
                native.insert(key.into(), Value::String(s.clone()));
            }
            Some(Value::Null) | None => {}
            Some(other) => {
                parts.push(format!("{label}={other}"));
                native.insert(key.into(), other.clone());
            }
        }
    }
    let other: Vec<Value> = o
        .keys()
        .filter(|k| !FIELDS.iter().any(|(f, _)| f == k))
        .map(|k| Value::String(k.clone()))
        .collect();
    if !other.is_empty() {
        native.insert("other_keys".into(), Value::Array(other));
    }
    Ok(EventRow {
        ts_utc: o
            .get("updatedAt")
            .and_then(Value::as_str)
            .and_then(crate::time::parse_utc),
        turn_type: TurnType::System,
        text: Some(format!("nanoclaw install: {}", parts.join(" "))),
        source_line: Some(1),
        seq: Some(0),
        native: Some(native),
        ..Default::default()
    })
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    let bytes = std::fs::read(&out.store.abs).map_err(|e| StoreError::io("cannot read", e))?;
    let row = decode_text(&String::from_utf8_lossy(&bytes))
        .map_err(|e| e.0)
        .and_then(|d| marker_row(&d.value));
    match row {
        Ok(row) => out.push(row),
        Err(reason) => {
            out.diag(
                DiagKind::BadRecord,
                None,
                None,
                format!("not an upgrade marker: {reason}"),
            );
            out.push(crate::sources::shared::bad_line_row(1, &reason, &bytes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marker nanoclaw 2.2.0's `scripts/upgrade-state.ts set "" setup`
    /// writes (fixtures/nanoclaw/home-a/data/upgrade-state.json).
    #[test]
    fn a_marker_is_one_row_at_its_utc_time() -> Result<(), String> {
        let v: Value = serde_json::from_str(
            r#"{"version": "2.2.0", "updatedAt": "2026-12-02T22:46:56.138Z", "via": "setup"}"#,
        )
        .map_err(|e| e.to_string())?;
        let r = marker_row(&v)?;
        assert_eq!(
            r.text.as_deref(),
            Some("nanoclaw install: version=2.2.0 via=setup updated_at=2026-12-02T22:46:56.138Z")
        );
        assert_eq!(r.ts_utc, crate::time::parse_utc("2026-12-02T22:46:56.138Z"));
        assert!(r.ts_utc.is_some());
        assert_eq!(r.turn_type, TurnType::System);
        assert_eq!(r.session_id, None);
        assert_eq!(
            Value::Object(r.native.unwrap_or_default()),
            serde_json::json!({"version": "2.2.0", "via": "setup", "updatedAt": "2026-12-02T22:46:56.138Z"})
        );
        Ok(())
    }

    /// Absent fields are left out; a key nanoclaw does not write is named,
    /// its value not kept; a marker that is not an object is refused.
    #[test]
    fn other_keys_are_named_and_a_non_object_is_refused() -> Result<(), String> {
        let v: Value = serde_json::from_str(r#"{"version": "2.3.0", "note": "s3cr3t"}"#)
            .map_err(|e| e.to_string())?;
        let r = marker_row(&v)?;
        assert_eq!(r.text.as_deref(), Some("nanoclaw install: version=2.3.0"));
        assert_eq!(r.ts_utc, None);
        let native = Value::Object(r.native.unwrap_or_default());
        assert_eq!(
            native,
            serde_json::json!({"version": "2.3.0", "other_keys": ["note"]})
        );
        assert!(!native.to_string().contains("s3cr3t"));
        assert_eq!(
            marker_row(&serde_json::json!(["2.2.0"])).err().as_deref(),
            Some("expected a JSON object")
        );
        Ok(())
    }
}
