//! The tests of `sql/V019__call_prices.sql`.

use super::*;

/// Every model the calls use is priced once per (agent, provider, model),
/// with the rule that matched; a model no price answers to is unmatched
/// and said once as `price_unknown`, however many calls use it.
#[test]
fn each_model_used_is_priced_once_and_an_unknown_one_is_said_once() -> Res {
    let mut h = Steps::new()?;
    test_prices(&h)?;
    for (provider, model) in [
        ("anthropic", "claude-sonnet-4.5"),
        ("anthropic", "claude-sonnet-4.5"),
        ("mystery", "unknown-model"),
        ("mystery", "unknown-model"),
    ] {
        h.llm_call(&[
            ("provider", provider),
            ("model", model),
            ("started_at_ms", "0"),
        ])?;
    }
    h.run_through("call_prices")?;
    assert_eq!(
        h.rows(
            "SELECT u.agent, u.provider, u.model, u.uses, m.price_step
             FROM model_uses u LEFT JOIN model_prices m USING (agent, provider, model)
             ORDER BY ALL"
        )?,
        vec![
            // rule 3: `anthropic/claude-sonnet-4.5` normalised (4.5 → 4-5)
            // is the key `anthropic/claude-sonnet-4-5`
            "nanobot | anthropic | claude-sonnet-4.5 | 2 | 3",
            "nanobot | mystery | unknown-model | 2 | NULL",
        ]
    );
    assert_eq!(
        h.rows("SELECT count(*) FROM diagnostics WHERE code = 'price_unknown'")?,
        vec!["1"]
    );
    Ok(())
}
