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
        strs(&[&["sess-1800000000110-cccccc", "5", "5", "0.0119055"]])
    );
    // each counted response is an llm_calls row, in nanobot's terms: input
    // with the cache reads and writes (EXPECTED-home-cc.md: msg_A's larger
    // copy, line 4; msg_B from the first file naming it), priced at Claude
    // Sonnet 4.5's 3e-6 / 15e-6 / 3e-7 / 3.75e-6 per token
    assert_eq!(
        r.rows(
            "SELECT agent, regexp_extract(source_path, '[^/]+$'), id, started_at_ms, provider,
                    model, finish_reason, input_tokens, output_tokens, total_tokens,
                    cache_read_tokens, cache_write_tokens, cost_usd, message_id, request_id,
                    session_id, duration_ms, source
             FROM llm_calls ORDER BY started_at_ms"
        )?,
        strs(&[
            &[
                "nanoclaw",
                "3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e.jsonl.rotated-1772719200000",
                "2",
                "1772719202000",
                "anthropic",
                "claude-sonnet-4-5-20250929",
                "end_turn",
                "105",
                "20",
                "125",
                "0",
                "100",
                "0.00069",
                "msg_Z",
                "req_Z",
                "sess-1800000000110-cccccc",
                "NULL",
                "NULL"
            ],
            &[
                "nanoclaw",
                "3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e.jsonl",
                "4",
                "1772719802500",
                "anthropic",
                "claude-sonnet-4-5-20250929",
                "tool_use",
                "3003",
                "96",
                "3099",
                "2000",
                "1000",
                "0.005799",
                "msg_A",
                "req_A",
                "sess-1800000000110-cccccc",
                "NULL",
                "NULL"
            ],
            &[
                "nanoclaw",
                "agent-a1b2c3d4.jsonl",
                "2",
                "1772719814000",
                "anthropic",
                "claude-sonnet-4-5-20250929",
                "end_turn",
                "707",
                "30",
                "737",
                "400",
                "300",
                "0.001716",
                "msg_E",
                "req_E",
                "sess-1800000000110-cccccc",
                "NULL",
                "NULL"
            ],
            &[
                "nanoclaw",
                "3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e.jsonl",
                "6",
                "1772719818000",
                "anthropic",
                "claude-sonnet-4-5-20250929",
                "end_turn",
                "3052",
                "41",
                "3093",
                "3000",
                "50",
                "0.0017085",
                "msg_B",
                "req_B",
                "sess-1800000000110-cccccc",
                "NULL",
                "NULL"
            ],
            &[
                "nanoclaw",
                "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl",
                "4",
                "1772721005000",
                "anthropic",
                "claude-sonnet-4-5-20250929",
                "end_turn",
                "3164",
                "55",
                "3219",
                "3100",
                "60",
                "0.001992",
                "msg_F",
                "req_F",
                "sess-1800000000110-cccccc",
                "NULL",
                "NULL"
            ],
        ])
    );
    // so the session's token columns are its calls' sums
    assert_eq!(
        r.rows(
            "SELECT input_tokens, output_tokens, total_tokens, cache_read_tokens,
                    cache_write_tokens FROM sessions"
        )?,
        strs(&[&["10031", "242", "10273", "8500", "1510"]])
    );
    Ok(())
}

/// A home of both agents: `llm_calls` holds nanobot's calls exactly as a
/// load of the nanobot home alone writes them, and nanoclaw's responses
/// exactly as a load of the nanoclaw home alone; each session's token and
/// cost columns are its own agent's calls summed.
#[test]
fn llm_calls_holds_both_agents_usage_on_a_mixed_home() -> TestResult {
    let home = crate::common::mixed_home()?;
    let mixed = run_home(home.path(), &[])?;
    // home-a's torn line and bad record (EXPECTED.md)
    assert_eq!(mixed.code(), Some(1), "{}", mixed.stderr());
    // the nanoclaw root's path (its instance, and so its session_uids)
    // differs: `.` alone, `nanoclaw` in the mixed home; each load has its
    // own load_id
    let all = "SELECT * EXCLUDE (source_path, instance, session_uid, load_id),
                      regexp_replace(source_path, '^nanoclaw/', ''),
                      CASE WHEN agent = 'nanobot' THEN instance || session_uid END
               FROM llm_calls WHERE agent = '{}' ORDER BY ALL";
    for (agent, alone) in [
        ("nanobot", "nanobot/home-a"),
        ("nanoclaw", "nanoclaw/home-cc"),
    ] {
        let one = run_home(&fixture(alone), &[])?;
        let q = all.replace("{}", agent);
        let want = one.rows(&q)?;
        assert!(!want.is_empty(), "{agent}");
        assert_eq!(mixed.rows(&q)?, want, "{agent}");
        assert_eq!(
            one.rows(
                "SELECT count(*) FROM llm_calls WHERE agent <> '{}'"
                    .replace("{}", agent)
                    .as_str()
            )?,
            strs(&[&["0"]])
        );
    }
    assert_eq!(
        mixed.rows(
            "SELECT s.agent, count(*) FROM sessions s
             WHERE s.llm_calls = (SELECT count(*) FROM llm_calls l WHERE l.session_uid = s.session_uid)
               AND s.input_tokens IS NOT DISTINCT FROM
                   (SELECT sum(input_tokens) FROM llm_calls l WHERE l.session_uid = s.session_uid)
             GROUP BY ALL ORDER BY ALL"
        )?,
        mixed.rows("SELECT agent, count(*) FROM sessions GROUP BY ALL ORDER BY ALL")?
    );
    Ok(())
}

/// A price file pricing Claude Sonnet 4.5 alone (input 1e-6, output 2e-6,
/// cache read 1e-7), written in `dir`; its path.
fn sonnet_only_prices(dir: &std::path::Path) -> Result<String, std::io::Error> {
    let prices = dir.join("prices.json");
    std::fs::write(
        &prices,
        r#"{"models": {"claude-sonnet-4-5": {"provider": "anthropic", "input": 1e-06,
            "output": 2e-06, "cache_read": 1e-07, "cache_write": null}}}"#,
    )?;
    Ok(prices.to_string_lossy().into_owned())
}

/// `--prices FILE --prices-replace` replaces the table: here it prices
/// Claude Sonnet 4.5 only (input 1e-6, output 2e-6, cache read 1e-7), so home-a's
/// claude-haiku-4.5 and gpt-5.4-mini calls cost NULL — never 0 — each model
/// named by one warning, and a session holding such a call costs NULL.
#[test]
fn an_unknown_model_costs_null_and_is_named_once() -> TestResult {
    let dir = tempfile::tempdir()?;
    let prices_arg = sonnet_only_prices(dir.path())?;
    let r = run_home(
        &fixture("nanobot/home-a"),
        &["--prices", &prices_arg, "--prices-replace"],
    )?;
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

/// `--prices FILE` is laid over the built-in table: a model the file names
/// takes its prices, every other keeps the built-in ones.
#[test]
fn a_price_file_is_laid_over_the_builtin_table() -> TestResult {
    let dir = tempfile::tempdir()?;
    let prices_arg = sonnet_only_prices(dir.path())?;
    let over = run_home(&fixture("nanobot/home-a"), &["--prices", &prices_arg])?;
    let builtin = run_home(&fixture("nanobot/home-a"), &[])?;
    let by_model = "SELECT provider, model, count(*), count(cost_usd), min(cost_usd) FROM llm_calls
                    GROUP BY ALL ORDER BY ALL";
    let (o, b) = (over.rows(by_model)?, builtin.rows(by_model)?);
    // the model the file names takes its prices (the cached call 2 as in
    // an_unknown_model_costs_null_and_is_named_once); the others keep the
    // built-in ones, and no model is unpriced
    assert_eq!(
        o[2],
        [
            "openrouter",
            "anthropic/claude-sonnet-4.5",
            "22",
            "22",
            "0.0007856"
        ]
    );
    assert_eq!(o[..2], b[..2]);
    assert_eq!(o[0][3], "6");
    assert_eq!(
        over.one("SELECT count(*) FROM diagnostics WHERE code = 'price_unknown'")?,
        "0"
    );
    Ok(())
}

/// `--prices-replace` without `--prices` is refused by clap (exit 2).
#[test]
fn prices_replace_needs_a_price_file() -> TestResult {
    let dir = tempfile::tempdir()?;
    let o = assert_cmd::Command::cargo_bin("nanoload")?
        .arg(fixture("nanobot/home-a"))
        .arg(dir.path().join("o.parquet"))
        .arg("--prices-replace")
        .output()?;
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with(
            "error: the following required arguments were not provided:\n  --prices <FILE>"
        ),
        "{err}"
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
