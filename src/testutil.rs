//! Helpers for the unit tests.

use serde_json::{Map, Value};

#[path = "../tests/bless.rs"]
mod bless_rule;
pub use bless_rule::bless;

/// A JSON object literal (an empty map when `s` is not one).
pub fn obj(s: &str) -> Map<String, Value> {
    serde_json::from_str::<Value>(s)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

/// The text of docs/design.md's section under `heading` (a `### …` line),
/// up to the next heading of any level (empty when there is none).
pub fn design_section(heading: &str) -> &'static str {
    include_str!("../docs/design.md")
        .split(&format!("{heading}\n"))
        .nth(1)
        .and_then(|s| s.split("\n#").next())
        .unwrap_or_default()
}
