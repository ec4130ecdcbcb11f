//! Helpers for the unit tests.

use serde_json::{Map, Value};

/// A JSON object literal (an empty map when `s` is not one).
pub fn obj(s: &str) -> Map<String, Value> {
    serde_json::from_str::<Value>(s)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}
