//! Cost (docs/design.md "Cost"): `llm_calls.cost_usd` and `sessions.cost_usd`
//! from the price table — the built-in `data/prices.json` (litellm 1.110.2)
//! or `--prices FILE` — on the fixture homes, each expected cost worked out
//! by hand from the tokens and the prices.

use crate::common::*;

/// nanobot/home-a with the built-in prices (LiteLLM 1.110.2, USD per token):
/// claude-sonnet-4-5 input 3e-6, output 1.5e-5, cache read 3e-7;
/// claude-haiku-4-5 input 1e-6, output 5e-6; gpt-5.4-mini input 7.5e-7,
/// output 4.5e-6. OpenRouter's `anthropic/claude-sonnet-4.5` and
/// Anthropic's `claude-haiku-4.5` are found by the normalisation
/// (`anthropic/claude-sonnet-4-5`, `anthropic/claude-haiku-4-5`).
#[test]
fn llm_calls_and_sessions_cost_what_the_pinned_prices_say() -> TestResult {
    let r = run_home(&fixture("nanobot/home-a"), &[])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr()); // the fixture's torn line
    assert_eq!(
        r.rows(
            "SELECT instance, id, provider, model, cost_usd FROM llm_calls
             WHERE (instance, id) IN (('.nanobot', 2), ('.nanobot', 8), ('.nanobot-work', 1))
             ORDER BY ALL"
        )?,
        strs(&[
            // cached: input 4390 of which 4096 cache reads, output 41:
            // 294 × 3e-6 + 4096 × 3e-7 + 41 × 1.5e-5 = 0.000882 + 0.0012288 + 0.000615
            &[
                ".nanobot",
                "2",
                "openrouter",
                "anthropic/claude-sonnet-4.5",
                "0.0027258",
            ],
            // 2100 × 7.5e-7 + 35 × 4.5e-6 = 0.001575 + 0.0001575
            &[".nanobot", "8", "openai", "gpt-5.4-mini", "0.0017325"],
            // 3000 × 1e-6 + 30 × 5e-6 = 0.003 + 0.00015
            &[
                ".nanobot-work",
                "1",
                "anthropic",
                "claude-haiku-4.5",
                "0.00315",
            ],
        ])
    );
    // every call is priced, none at 0
    assert_eq!(
        r.one("SELECT count(*) FILTER (cost_usd IS NULL OR cost_usd = 0) FROM llm_calls")?,
        "0"
    );
    // telegram:48213377 holds calls 1, 2, 12 and 17:
    //   4210 × 3e-6 + 96 × 1.5e-5 = 0.01407;  call 2 = 0.0027258;
    //   1900 × 3e-6 + 30 × 1.5e-5 = 0.00615;  2200 × 3e-6 + 45 × 1.5e-5 = 0.007275
    //   0.01407 + 0.0027258 + 0.00615 + 0.007275 = 0.0302208
    assert_eq!(
        r.rows(
            "SELECT llm_calls, cost_usd FROM sessions
             WHERE instance = '.nanobot' AND session_id = 'telegram:48213377'"
        )?,
        strs(&[&["4", "0.0302208"]])
    );
    // a session's cost is its attributed calls' (the calls of no session aside)
    assert_eq!(
        r.one(
            "SELECT count(*) FROM sessions s
             WHERE s.agent = 'nanobot'
               AND round(s.cost_usd, 12) IS DISTINCT FROM
                   (SELECT round(sum(cost_usd), 12) FROM llm_calls c WHERE c.session_uid = s.session_uid)"
        )?,
        "0"
    );
    assert_eq!(
        r.one("SELECT count(*) FROM diagnostics WHERE code = 'price_unknown'")?,
        "0"
    );
    Ok(())
}

/// nanoclaw/home-cc: the session's five Claude Code responses with counted
/// usage, model claude-sonnet-4-5-20250929 (found exactly as
/// `anthropic/claude-sonnet-4-5-20250929`: input 3e-6, output 1.5e-5, cache
/// read 3e-7, cache write 3.75e-6). Anthropic's input_tokens leave the cache
/// out, so each is input + reads + writes + output at their prices:
///
/// ```text
/// in  read  write  out
///  5     0    100   20   0.000015 + 0        + 0.000375  + 0.0003   = 0.00069
///  3  2000   1000   96   0.000009 + 0.0006   + 0.00375   + 0.00144  = 0.005799
///  7   400    300   30   0.000021 + 0.00012  + 0.001125  + 0.00045  = 0.001716
///  2  3000     50   41   0.000006 + 0.0009   + 0.0001875 + 0.000615 = 0.0017085
///  4  3100     60   55   0.000012 + 0.00093  + 0.000225  + 0.000825 = 0.001992
///                                                              sum   0.0119055
/// ```
#[test]
fn a_nanoclaw_sessions_claude_code_usage_is_priced() -> TestResult {
    let r = run_home(&fixture("nanoclaw/home-cc"), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT session_id, transcript_turns_with_usage, llm_calls, cost_usd FROM sessions"
        )?,
        strs(&[&["sess-1800000000110-cccccc", "5", "NULL", "0.0119055"]])
    );
    Ok(())
}

/// `--prices FILE` replaces the table: here it prices Claude Sonnet 4.5
/// only (input 1e-6, output 2e-6, cache read 1e-7), so home-a's
/// claude-haiku-4.5 and gpt-5.4-mini calls cost NULL — never 0 — each model
/// named by one warning, and a session holding such a call costs NULL.
#[test]
fn an_unknown_model_costs_null_and_is_named_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let prices = dir.path().join("prices.json");
    std::fs::write(
        &prices,
        r#"{"models": {"claude-sonnet-4-5": {"provider": "anthropic", "input": 1e-06,
            "output": 2e-06, "cache_read": 1e-07, "cache_write": null}}}"#,
    )?;
    let prices_arg = prices.to_string_lossy().into_owned();
    let r = run_home(&fixture("nanobot/home-a"), &["--prices", &prices_arg])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr()); // warnings keep the exit code
    assert_eq!(
        r.rows(
            "SELECT provider, model, count(*), count(cost_usd), min(cost_usd) FROM llm_calls
             GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[
            &["anthropic", "claude-haiku-4.5", "6", "0", "NULL"],
            &["openai", "gpt-5.4-mini", "4", "0", "NULL"],
            // the smallest: the cached call 2,
            // 294 × 1e-6 + 4096 × 1e-7 + 41 × 2e-6 = 0.000294 + 0.0004096 + 0.000082
            &[
                "openrouter",
                "anthropic/claude-sonnet-4.5",
                "22",
                "22",
                "0.0007856",
            ],
        ])
    );
    let warnings = r.rows(
        "SELECT agent, instance, source_path, message FROM diagnostics
         WHERE code = 'price_unknown' AND kind = 'warning' ORDER BY ALL",
    )?;
    assert_eq!(
        warnings,
        strs(&[
            &[
                "nanobot",
                ".nanobot",
                ".nanobot/llm_usage.sqlite3",
                "no price for model gpt-5.4-mini (provider openai): cost_usd is NULL for its 4 llm_calls rows (--prices FILE can price it)",
            ],
            &[
                "nanobot",
                ".nanobot-work",
                ".nanobot-work/llm_usage.sqlite3",
                "no price for model claude-haiku-4.5 (provider anthropic): cost_usd is NULL for its 6 llm_calls rows (--prices FILE can price it)",
            ],
        ])
    );
    for w in &warnings {
        let line = format!("nanoload: warning: {}: {}", w[2], w[3]);
        assert!(r.stderr().contains(&line), "{line}\n{}", r.stderr());
    }
    // telegram:48213377 (calls 1, 2, 12, 17), at these prices:
    //   4210 × 1e-6 + 96 × 2e-6                      = 0.004402
    //   294 × 1e-6 + 4096 × 1e-7 + 41 × 2e-6 (cached) = 0.0007856
    //   1900 × 1e-6 + 30 × 2e-6                      = 0.00196
    //   2200 × 1e-6 + 45 × 2e-6                      = 0.00229
    //   sum 0.0094376; cli:direct holds gpt-5.4-mini calls: NULL
    assert_eq!(
        r.rows(
            "SELECT instance, session_id, cost_usd FROM sessions
             WHERE session_id IN ('telegram:48213377', 'cli:direct', 'slack:C0WORK7') ORDER BY ALL"
        )?,
        strs(&[
            &[".nanobot", "cli:direct", "NULL"],
            &[".nanobot", "telegram:48213377", "0.0094376"],
            &[".nanobot-work", "slack:C0WORK7", "NULL"],
        ])
    );
    Ok(())
}

/// A `--prices` file that does not read or is not a price table: exit 2,
/// one stderr line naming it, nothing written.
#[test]
fn a_bad_price_file_exits_2_with_one_line() -> TestResult {
    let dir = tempfile::tempdir()?;
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"models": {"m": {"input": 2, "output": 0}}}"#)?;
    let missing = dir.path().join("missing.json");
    for (file, says) in [
        (&bad, "model \"m\": input 2 is not a price per token"),
        (&missing, "No such file"),
    ] {
        let out = dir.path().join("o");
        std::fs::create_dir_all(&out)?;
        let o = assert_cmd::Command::cargo_bin("nanoload")?
            .arg(fixture("nanoclaw/home-a"))
            .arg(out.join("o.parquet"))
            .arg("--prices")
            .arg(file)
            .output()?;
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{err}");
        let head = format!("nanoload: error: --prices {}: ", file.display());
        assert!(err.starts_with(&head) && err.contains(says), "{err}");
        assert_eq!(std::fs::read_dir(&out)?.count(), 0);
    }
    Ok(())
}
