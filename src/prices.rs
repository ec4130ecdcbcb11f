//! The price table: USD per token of chat models, from which `llm_calls`
//! and `sessions` get `cost_usd` (docs/design.md "Cost").
//!
//! ```text
//! data/prices.json (embedded; scripts/prices.py writes it from one pinned litellm release)
//!   or --prices FILE (the same format; replaces it)
//!   {"litellm_version": …, "litellm_released": …, …,
//!    "models": {"<LiteLLM key>": {"provider": "anthropic", "input": 3e-06, "output": 1.5e-05,
//!                                 "cache_read": 3e-07 | null, "cache_write": 3.75e-06 | null}}}
//!   then each --price MODEL=IN/OUT (USD per million tokens) laid over it
//! PriceTable::rows → the DuckDB table `prices` (model, provider, input, output,
//!                    cache_read, cache_write: DECIMAL(38,18) USD per token)
//! PriceTable::free → the DuckDB table `free_models` (pattern: each --free
//!                    PATTERN, a case-insensitive glob; a model it matches costs 0)
//! listing          → `nanoload prices`: the table in use, its source and age,
//!                    the overlay formats
//! ```
//! Matching a call's model to a row and the cost arithmetic are SQL
//! (`sql/V019__call_prices.sql`, `sql/V021__sessions.sql`). No DuckDB here: the
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
);
CREATE TABLE free_models (pattern VARCHAR NOT NULL);\n";

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
    /// `--free` patterns: a model one matches costs 0, whatever `models`
    /// says (case-insensitive globs over the call's model and its
    /// `provider/model`; `sql/V019__call_prices.sql`).
    pub free: Vec<String>,
}

/// The most a `--price` may say, USD per million tokens (the price
/// file's limit, 1 USD per token).
const MAX_PER_MILLION: f64 = 1_000_000.0;

/// One `--price MODEL=IN/OUT`: the model and its price per token (cache
/// reads and writes at the input price).
pub fn parse_price_flag(s: &str) -> Result<(String, Price), PriceError> {
    let usage = || {
        PriceError(format!(
            "--price {s:?}: give MODEL=IN/OUT, USD per million input and output tokens (e.g. Qwen/Qwen3-32B=0.5/1.5)"
        ))
    };
    let (model, prices) = s.rsplit_once('=').ok_or_else(usage)?;
    let (input, output) = prices.split_once('/').ok_or_else(usage)?;
    if model.trim().is_empty() {
        return Err(usage());
    }
    let per_token = |v: &str| -> Result<f64, PriceError> {
        v.trim()
            .parse::<f64>()
            .ok()
            .filter(|x| (0.0..=MAX_PER_MILLION).contains(x))
            .map(|x| x / 1e6)
            .ok_or_else(|| {
                PriceError(format!(
                    "--price {s:?}: {v:?} is not a price (USD per million tokens, 0 to 1000000)"
                ))
            })
    };
    Ok((
        model.to_string(),
        Price {
            provider: None,
            input: per_token(input)?,
            output: per_token(output)?,
            cache_read: None,
            cache_write: None,
        },
    ))
}

/// One `--free PATTERN`: a model name or a glob (`*`, `?`, `[…]`).
pub fn check_free(s: &str) -> Result<String, PriceError> {
    if s.trim().is_empty() {
        return Err(PriceError(
            "--free: give a model name or a glob (vllm/*)".into(),
        ));
    }
    Ok(s.to_string())
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
            free: Vec::new(),
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
        // (no pattern: the digest of the rows alone, as before patterns were)
        for p in &self.free {
            h.update(b"free");
            h.update((p.len() as u64).to_le_bytes());
            h.update(p.as_bytes());
        }
        crate::store::hex(&h.finalize()[..8])
    }
}

/// The built-in table's head: LiteLLM's version and release date, and
/// where its list comes from.
fn builtin_head() -> (String, String, String) {
    let v: serde_json::Value = serde_json::from_str(BUILTIN).unwrap_or(serde_json::Value::Null);
    let s = |k: &str| v[k].as_str().unwrap_or("?").to_string();
    (s("litellm_version"), s("litellm_released"), s("source"))
}

/// The built-in table's release: `LiteLLM 1.110.2, released 2026-11-20`.
pub fn builtin_release() -> String {
    let (version, released, _) = builtin_head();
    format!("LiteLLM {version}, released {released}")
}

/// USD per token as USD per million tokens, at least two decimals
/// (`3.00`, `0.075`).
fn per_million(v: f64) -> String {
    let s = format!("{:.6}", v * 1e6);
    let (whole, frac) = s.split_once('.').unwrap_or((&s, ""));
    let frac = frac.trim_end_matches('0');
    format!("{whole}.{frac:0<2}")
}

/// What `nanoload prices` prints: where the table comes from (`source`:
/// the built-in one, or a `--prices` file) and, for the built-in one, how
/// old it is on `today`; the `--free` patterns; the rows whose model
/// contains `pattern` (case-insensitive; all without), USD per million
/// tokens, the `--price` ones (`given`) marked; then the formats.
pub fn listing(
    table: &PriceTable,
    source: Option<(&str, bool)>,
    given: &[String],
    pattern: Option<&str>,
    today: chrono::NaiveDate,
) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let (version, released, list) = builtin_head();
    let age = chrono::NaiveDate::parse_from_str(&released, "%Y-%m-%d")
        .map(|d| (today - d).num_days())
        .map_or(String::new(), |n| format!(", {n} days ago"));
    match source {
        None => {
            let _ = writeln!(
                s,
                "price table: built in (data/prices.json): LiteLLM {version}, released {released}{age}"
            );
        }
        Some((file, true)) => {
            let _ = writeln!(s, "price table: {file} alone (--prices-replace)");
        }
        Some((file, false)) => {
            let _ = writeln!(
                s,
                "price table: {file} laid over the built-in one (LiteLLM {version}, released {released}{age})"
            );
        }
    }
    let _ = writeln!(s, "  built-in list: {list}");
    let _ = writeln!(s, "  {} models priced", table.models.len());
    if !given.is_empty() {
        let _ = writeln!(s, "  --price: {}", given.join(", "));
    }
    if !table.free.is_empty() {
        let _ = writeln!(s, "free (--free, cost 0): {}", table.free.join(", "));
    }
    let _ = writeln!(
        s,
        "\nUSD per million tokens{}:\nmodel  provider  input  output  cache read  cache write",
        pattern.map_or(String::new(), |p| format!(" (models containing {p:?})"))
    );
    let want = pattern.map(str::to_lowercase);
    for (model, p) in &table.models {
        if want
            .as_ref()
            .is_some_and(|w| !model.to_lowercase().contains(w))
        {
            continue;
        }
        let provider = if given.contains(model) {
            "(--price)".to_string()
        } else {
            p.provider.clone().unwrap_or_else(|| "-".into())
        };
        let opt = |v: Option<f64>| v.map_or("-".to_string(), per_million);
        let _ = writeln!(
            s,
            "{model}  {provider}  {}  {}  {}  {}",
            per_million(p.input),
            per_million(p.output),
            opt(p.cache_read),
            opt(p.cache_write)
        );
    }
    s.push_str(FORMATS);
    s
}

/// How to change the table (`nanoload prices`).
const FORMATS: &str = "
How a call finds its price: its provider/model, then its model, exactly, then both
normalised (lower case, 4.5 as 4-5, a trailing date removed); a model no row
matches has no price (cost unknown, never 0). Change the table with:
  --prices FILE: a JSON object {\"models\": {\"MODEL\": {\"provider\": \"P\", \"input\": 3e-06,
      \"output\": 1.5e-05, \"cache_read\": 3e-07, \"cache_write\": 3.75e-06}}}: USD per
      token (0 to 1), provider, cache_read and cache_write optional (cached tokens
      then cost the input price); laid over the built-in table (--prices-replace:
      alone)
  --price MODEL=IN/OUT: USD per million input and output tokens for MODEL, laid
      over both (repeatable), e.g. --price Qwen/Qwen3-32B=0.5/1.5
  --free PATTERN: models matching PATTERN cost 0 (self-hosted): a model name or a
      glob (* any characters, ? one), case-insensitive, matched against the model
      and provider/model, e.g. --free 'vllm/*' or --free '*qwen*' (repeatable)
";

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
