//! The secret scanner: finds credential-shaped tokens in a text and replaces
//! only the matched span by `[redacted:<rule>]`. No I/O, no DuckDB (a fuzz
//! target drives it).
//!
//! ```text
//! "my key is sk-proj-4fT9…Qz, thanks"  ──redact──▶  "my key is [redacted:sk_key], thanks"
//! "我的密钥是sk-proj-4fT9…Qz"            ──redact──▶  "我的密钥是[redacted:sk_key]"
//! {"env": {"API_KEY": "q8Zt…"}}        ──redact──▶  {"env": {"API_KEY": "[redacted:secret_assignment]"}}
//!                                                   counts {"sk_key": 2, "secret_assignment": 1}
//! ```
//! `rules.rs` is the table of shapes (families, needles, boundaries, cut
//! starts); `engine.rs` runs it: a pre-pass finds every rule's needle in one
//! SIMD search, only the rules whose needle is there run, each match passes
//! its boundaries, checks and the placeholder allow-list, and where matches
//! overlap the earliest names the span (then the longest, then the first
//! rule) and the others join it. The
//! marker never matches a rule, so redacting twice changes nothing. User
//! patterns (`--secret-pattern`) are the rule `secret_pattern`.

mod engine;
mod rules;

pub use engine::{
    Counts, FIELD_MARKER, FIELD_RULE, NAMED_RULE, Needle, Rule, Scanner, USER_RULE, counts_json,
    families, placeholder, rule_name, secret_name,
};
pub use rules::RULES;

pub mod corpus;
#[cfg(test)]
mod tests;
