//! The price table: USD per token of chat models, from which `llm_calls`
//! and `sessions` get `cost_usd` (docs/design.md "Cost").
//!
//! ```text
//! data/prices.json (embedded; scripts/prices.py writes it from one pinned litellm release)
//!   or --prices FILE (the same format; replaces it)
//!   {"litellm_version": …, "litellm_released": …, …,
//!    "models": {"<LiteLLM key>": {"provider": "anthropic", "input": 3e-06, "output": 1.5e-05,
//!                                 "cache_read": 3e-07 | null, "cache_write": 3.75e-06 | null}}}
//! PriceTable::rows → the DuckDB table `prices` (model, provider, input, output,
//!                    cache_read, cache_write: DECIMAL(38,18) USD per token)
//! ```
//! Matching a call's model to a row and the cost arithmetic are SQL
//! (`sql/V017__llm_calls.sql`, `sql/V018__sessions.sql`). No DuckDB here: the
//! table is parsed and checked in Rust, so a bad `--prices` file is a usage
//! error before anything runs.

use std::collections::BTreeMap;

use serde::Deserialize;

/// The built-in price table (`data/prices.json`).
pub const BUILTIN: &str = include_str!("../data/prices.json");

/// The DuckDB table the steps read (also created empty by the step tests).
pub const PRICES_DDL: &str = "CREATE TABLE prices (
    model VARCHAR NOT NULL PRIMARY KEY,
    provider VARCHAR,
    input DECIMAL(38,18) NOT NULL,
    output DECIMAL(38,18) NOT NULL,
    cache_read DECIMAL(38,18),
    cache_write DECIMAL(38,18)
);\n";

/// The price rows as text, appended by the engine ([`PriceTable::rows`]).
pub const PRICES_TEXT_DDL: &str = "CREATE TEMP TABLE prices_text (model VARCHAR, provider VARCHAR,
    input VARCHAR, output VARCHAR, cache_read VARCHAR, cache_write VARCHAR);\n";

/// `prices` from the appended text: each price cast to its exact decimal.
pub const PRICES_FROM_TEXT: &str = "INSERT INTO prices SELECT model, provider,
    CAST(input AS DECIMAL(38,18)), CAST(output AS DECIMAL(38,18)),
    CAST(cache_read AS DECIMAL(38,18)), CAST(cache_write AS DECIMAL(38,18))
    FROM prices_text ORDER BY model;
DROP TABLE prices_text;\n";

/// A price file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct PriceError(pub String);

/// One model's prices, USD per token.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// LiteLLM's `litellm_provider`.
    #[serde(default)]
    pub provider: Option<String>,
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: Option<f64>,
    #[serde(default)]
    pub cache_write: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct PriceFile {
    models: BTreeMap<String, Price>,
}

/// The models and their prices, keyed by LiteLLM model key.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The table in `data/prices.json`.
    pub fn builtin() -> Result<PriceTable, PriceError> {
        PriceTable::parse(BUILTIN).map_err(|e| PriceError(format!("data/prices.json: {e}")))
    }

    /// A price file's table: a JSON object with `models`; every price a
    /// number from 0 up to 1 USD per token.
    pub fn parse(text: &str) -> Result<PriceTable, PriceError> {
        let file: PriceFile =
            serde_json::from_str(text).map_err(|e| PriceError(format!("not a price file: {e}")))?;
        for (model, p) in &file.models {
            let prices = [
                ("input", Some(p.input)),
                ("output", Some(p.output)),
                ("cache_read", p.cache_read),
                ("cache_write", p.cache_write),
            ];
            for (name, v) in prices {
                if let Some(v) = v
                    && !(0.0..=1.0).contains(&v)
                {
                    return Err(PriceError(format!(
                        "model {model:?}: {name} {v} is not a price per token (0 to 1 USD)"
                    )));
                }
            }
        }
        Ok(PriceTable {
            models: file.models,
        })
    }

    /// The rows of `prices`, each price as the exact decimal text DuckDB
    /// casts to `DECIMAL(38,18)` ([`PRICES_TEXT_DDL`], then
    /// [`PRICES_FROM_TEXT`]): appended, not parsed as SQL (an `INSERT …
    /// VALUES` of 3 331 rows took DuckDB's parser most of a second).
    pub fn rows(&self) -> impl Iterator<Item = [Option<String>; 6]> + '_ {
        self.models.iter().map(|(model, p)| {
            [
                Some(model.clone()),
                p.provider.clone(),
                decimal(Some(p.input)),
                decimal(Some(p.output)),
                decimal(p.cache_read),
                decimal(p.cache_write),
            ]
        })
    }
}

impl PriceTable {
    /// 16 hex of SHA-256 over [`PriceTable::rows`] — what the engine loads,
    /// so two files that price every model alike give the same digest
    /// (`load_id` folds it in for a `--prices` table that is not the
    /// built-in one).
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for row in self.rows() {
            for v in row {
                match v {
                    Some(v) => {
                        h.update((v.len() as u64).to_le_bytes());
                        h.update(v.as_bytes());
                    }
                    None => h.update(u64::MAX.to_le_bytes()),
                }
            }
        }
        crate::store::hex(&h.finalize()[..8])
    }
}

/// A price as an exact DECIMAL: the shortest decimal text of the number
/// (`3.75e-6` → `0.00000375`), so the cost arithmetic is exact.
fn decimal(v: Option<f64>) -> Option<String> {
    v.map(|v| format!("{v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_table_parses_and_prices_claude_sonnet_4_5() {
        let t = PriceTable::builtin().unwrap_or_else(|e| unreachable!("{e}"));
        assert!(t.models.len() > 1000, "{}", t.models.len());
        assert_eq!(
            t.models.get("claude-sonnet-4-5"),
            Some(&Price {
                provider: Some("anthropic".into()),
                input: 3e-6,
                output: 1.5e-5,
                cache_read: Some(3e-7),
                cache_write: Some(3.75e-6),
            })
        );
        // the pinned release is recorded in the file
        let head: serde_json::Value =
            serde_json::from_str(BUILTIN).unwrap_or(serde_json::Value::Null);
        assert_eq!(head["litellm_version"], "1.110.2");
        assert_eq!(head["litellm_released"], "2026-11-20");
    }

    #[test]
    fn a_bad_price_file_is_refused_with_its_reason() {
        let bad = |s: &str| PriceTable::parse(s).err().map(|e| e.0).unwrap_or_default();
        assert!(bad("[]").starts_with("not a price file"));
        assert!(bad(r#"{"models":{"m":{"input":1e-6}}}"#).contains("output"));
        assert!(
            bad(r#"{"models":{"m":{"input":-1e-6,"output":0}}}"#)
                .contains(r#"model "m": input -0.000001 is not a price per token"#)
        );
        assert!(
            bad(r#"{"models":{"m":{"input":0,"output":0,"cahce_read":0}}}"#).contains("cahce_read")
        );
    }

    #[test]
    fn prices_are_exact_decimal_texts() {
        let t = PriceTable::parse(
            r#"{"models":{"it's":{"provider":"p","input":3.75e-06,"output":1.5e-05,"cache_read":null}}}"#,
        )
        .unwrap_or_else(|e| unreachable!("{e}"));
        let rows: Vec<_> = t.rows().collect();
        let text = |s: &str| Some(s.to_string());
        assert_eq!(
            rows,
            [[
                text("it's"),
                text("p"),
                text("0.00000375"),
                text("0.000015"),
                None,
                None
            ]]
        );
    }
}
