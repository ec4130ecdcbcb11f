//! Every total says what it is computed from: the priced part of a cost
//! (report cards, `usage`, `--summary-json`, MCP answers, OTLP spans), per-day
//! and peak figures from the days they name, total tokens as input + output
//! where the source has none; `--price` and `--free` on every command that
//! prices calls and `nanoload prices`; activity, first and last event only
//! from rows that are something the agent or a user did; `usage`'s
//! `--breakdown`, `--agent`, `--instance`, `--order` and models column.

use std::path::Path;
use std::process::Output;

use duckdb::Connection;

use crate::common::*;
use crate::fixture_homes::materialize;

fn s(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// `nanoload ARGS`, no terminal and no `COLUMNS`.
fn nanoload(args: &[&str]) -> Result<Output, Box<dyn std::error::Error>> {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.args(args)
        .env("XDG_CACHE_HOME", private_cache()?)
        .env_remove("COLUMNS");
    output_within(&mut cmd, HANG_LIMIT, &format!("nanoload {args:?}"))
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `fixtures/nanobot/home-a` (every file's mtime the fixtures' one) with
/// its `.nanobot-work` instance on a self-hosted model: its 6 calls
/// (2026-09-10 and 2026-09-16, 17 850 input and 111 output tokens) are
/// provider `vllm`, model `Qwen/Qwen3-32B`, which no price row knows, and
/// report `total_tokens` 0; the 26 calls of `.nanobot` report none (NULL).
fn self_hosted_home() -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let home = materialize("nanobot/home-a")?;
    let edit = |rel: &str, sql: &str| -> TestResult {
        let p = home.path().join(rel);
        let mtime = std::fs::metadata(&p)?.modified()?;
        let c = rusqlite::Connection::open(&p)?;
        c.execute_batch(sql)?;
        drop(c);
        filetime::set_file_mtime(&p, filetime::FileTime::from_system_time(mtime))?;
        Ok(())
    };
    edit(
        ".nanobot-work/llm_usage.sqlite3",
        "UPDATE llm_calls SET provider = 'vllm', model = 'Qwen/Qwen3-32B', total_tokens = 0",
    )?;
    edit(
        ".nanobot/llm_usage.sqlite3",
        "UPDATE llm_calls SET total_tokens = NULL",
    )?;
    Ok(home)
}

/// A load of `home` with `extra` flags, with its report written.
fn load_and_report(
    home: &Path,
    extra: &[&str],
) -> Result<(std::sync::Arc<Run>, String), Box<dyn std::error::Error>> {
    let r = run_home(home, extra)?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    let html = r.dir.path().join("report.html");
    let o = nanoload(&["report", &s(&r.out), "--tables", &s(&r.tables), &s(&html)])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    Ok((r.clone(), std::fs::read_to_string(&html)?))
}

/// The report's cards: (label, data-fact, value) in page order.
fn cards(page: &str) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for card in page.split("<div class=\"card\">").skip(1) {
        let label = between(card, "<span class=\"card-label\">", "</span>");
        let (fact, value) = card
            .split_once("<span class=\"card-value\" data-fact=\"")
            .and_then(|(_, r)| r.split_once("\">"))
            .map(|(f, r)| {
                (
                    f.to_string(),
                    r.split("</span>").next().unwrap_or("").to_string(),
                )
            })
            .unwrap_or_default();
        out.push((label, fact, value));
    }
    out
}

fn between(s: &str, a: &str, b: &str) -> String {
    s.split_once(a)
        .and_then(|(_, r)| r.split_once(b))
        .map(|(v, _)| v.to_string())
        .unwrap_or_default()
}

/// The activity-per-day table of a report page, its cells without their
/// column names (`data-c`, which a phone shows).
fn activity_table(page: &str) -> String {
    let mut out = String::new();
    let mut rest = between(page, "data-chart-table=\"activity-day\"", "</table>");
    while let Some(i) = rest.find(" data-c=\"") {
        out.push_str(&rest[..i]);
        let after = &rest[i + " data-c=\"".len()..];
        rest = after
            .find('"')
            .map_or(String::new(), |j| after[j + 1..].to_string());
    }
    out.push_str(&rest);
    out
}

/// The text of `data-fact="NAME"` (a card's or a note's).
fn fact(page: &str, name: &str) -> String {
    between(page, &format!("data-fact=\"{name}\">"), "</")
}

fn card_rows(v: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    v.iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

/// A self-hosted model's calls have no price: the cards say what the cost
/// is of (26 priced calls of 32), the cost per day is over the 8 days with
/// priced calls (not the 10 with calls: $0.2915013 / 8), the peak day is the
/// priced calls', and total tokens count input + output where the source
/// reports 0 or nothing (118 040 + 1 757).
#[test]
fn report_cards_say_what_part_of_the_cost_is_priced() -> TestResult {
    let home = self_hosted_home()?;
    let (_, page) = load_and_report(home.path(), &[])?;
    assert_eq!(
        cards(&page),
        card_rows(&[
            ("total cost", "total_cost", "$0.29"),
            ("total tokens (input + output)", "total_tokens", "119,797"),
            ("sessions", "sessions_total", "8"),
            ("days with LLM calls", "active_days", "10"),
            ("cost per day with priced calls", "cost_per_day", "$0.04"),
            ("peak day (priced calls)", "peak_day", "2026-10-20 ($0.06)"),
            ("cache-hit rate", "cache_hit_rate", "3.5 %"),
            ("unpriced calls", "unpriced_calls", "6"),
        ])
    );
    assert_eq!(
        fact(&page, "total_cost_basis"),
        "of 26 priced calls; 6 unpriced (19 %)"
    );
    Ok(())
}

/// A nanoclaw install whose sessions have no usage: no LLM calls, so no
/// "unknown" cost beside "0 unpriced calls"; its catalog rows of no session
/// and its install marker are not activity (first and last event are the
/// messages').
#[test]
fn a_home_without_calls_says_so_and_its_catalog_is_not_activity() -> TestResult {
    let home = materialize("nanoclaw/home-a")?;
    let (_, page) = load_and_report(home.path(), &[])?;
    assert_eq!(
        cards(&page),
        card_rows(&[
            ("total cost", "total_cost", "no LLM calls"),
            ("total tokens (input + output)", "total_tokens", "-"),
            ("sessions", "sessions_total", "4"),
            ("days with LLM calls", "active_days", "0"),
            ("cost per day with priced calls", "cost_per_day", "-"),
            ("peak day (priced calls)", "peak_day", "-"),
            ("cache-hit rate", "cache_hit_rate", "-"),
            ("unpriced calls", "unpriced_calls", "0"),
        ])
    );
    for unknown in ["data-v=\"unknown\"", ">unknown</span>"] {
        assert!(!page.contains(unknown), "an unknown cost without calls");
    }
    // (the catalog's rows and the install marker of 2026-12-02 are later)
    assert_eq!(fact(&page, "first_event"), "2026-11-29 22:05:04");
    assert_eq!(fact(&page, "last_event"), "2026-11-29 22:05:28");
    // the one day of activity: the 42 rows of the sessions, not the 39
    // catalog rows of no session
    let activity = activity_table(&page);
    assert!(
        activity
            .contains("<tr><td class=\"d\">2026-11-29</td><td class=\"n\" data-v=\"42\">42</td>"),
        "{activity}"
    );
    Ok(())
}

/// Permission rows are dated by config.json's mtime (the fixtures':
/// 2026-11-01): they are settings, not activity — not the last event, not
/// a day of 22 system events, not the summary's last event.
#[test]
fn permission_rows_are_not_activity() -> TestResult {
    let home = materialize("nanobot/home-a")?;
    let dir = tempfile::tempdir()?;
    let summary = dir.path().join("summary.json");
    let (r, page) = load_and_report(home.path(), &["--summary-json", &s(&summary)])?;
    assert_eq!(
        r.one(
            "SELECT count(*) FROM events WHERE source_kind = 'nanobot.permissions'
               AND CAST(CAST(timestamp_utc AS TIMESTAMP) AS DATE) = DATE '2026-11-01'"
        )?,
        "22"
    );
    assert_eq!(fact(&page, "first_event"), "2026-08-20 19:00:00");
    assert_eq!(fact(&page, "last_event"), "2026-10-22 09:10:04");
    let activity = activity_table(&page);
    assert!(activity.contains("2026-10-22"), "{activity}");
    assert!(!activity.contains("2026-11-01"), "{activity}");
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary)?)?;
    assert_eq!(
        doc["totals"]["first_event_utc"],
        "2026-08-20T17:00:00.000000Z"
    );
    assert_eq!(
        doc["totals"]["last_event_utc"],
        "2026-10-22T07:10:04.910000Z"
    );
    Ok(())
}

/// `usage`: the cost note says what part is priced; total tokens count
/// input + output where the source has none; an empty range says there
/// are no calls in it, not that their cost is unknown.
#[test]
fn usage_says_what_part_is_priced_and_an_empty_range_has_no_calls() -> TestResult {
    let home = self_hosted_home()?;
    let r = run_home(home.path(), &[])?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let o = nanoload(&["usage", &out, "--tables", &tables, "--by", "monthly"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let total = t.lines().find(|l| l.starts_with("TOTAL")).unwrap_or("");
    assert_eq!(
        total.split_whitespace().collect::<Vec<_>>(),
        [
            "TOTAL", "32", "118,040", "1,757", "4,096", "-", "119,797", "$0.29+", "6"
        ]
    );
    assert!(
        t.contains("cost (USD): $0.29 of 26 priced calls; 6 unpriced (19 %)"),
        "{t}"
    );
    let o = nanoload(&["usage", &out, "--tables", &tables, "--since", "2030-01-01"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(t.contains("cost: no calls in range"), "{t}");
    assert!(!t.contains("unknown"), "{t}");
    let o = nanoload(&[
        "usage",
        &out,
        "--tables",
        &tables,
        "--since",
        "2030-01-01",
        "--json",
    ])?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["cost_basis"], "no calls in range");
    assert_eq!(doc["totals"]["priced_calls"], 0);
    Ok(())
}

/// nanobot's provider `anthropic` with LiteLLM's routing name
/// `anthropic/claude-sonnet-4-5` is one `anthropic/claude-sonnet-4-5`.
#[test]
fn usage_by_model_names_the_provider_once() -> TestResult {
    let home = materialize("realwriter/reasked-thinking")?;
    let r = run_home(home.path(), &[])?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let o = nanoload(&["usage", &out, "--tables", &tables, "--by", "model"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let keys: Vec<&str> = t
        .lines()
        .skip_while(|l| !l.starts_with('─'))
        .skip(1)
        .take_while(|l| !l.starts_with('─'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        keys,
        [
            "anthropic/claude-sonnet-4-5",
            "ollama/qwen3:14b",
            "bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ],
        "{t}"
    );
    let o = nanoload(&[
        "usage", &out, "--tables", &tables, "--by", "model", "--json",
    ])?;
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(
        doc["cost_basis"],
        "$0.05 of 9 priced calls; 13 unpriced (59 %)"
    );
    Ok(())
}

/// `--summary-json` says how many calls are priced and what the cost is of.
#[test]
fn summary_json_says_what_part_is_priced() -> TestResult {
    let home = self_hosted_home()?;
    let dir = tempfile::tempdir()?;
    let summary = dir.path().join("summary.json");
    let r = run_home(home.path(), &["--summary-json", &s(&summary)])?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&summary)?)?;
    let t = &doc["totals"];
    assert_eq!(t["llm_calls"], 32);
    assert_eq!(t["priced_calls"], 26);
    assert_eq!(t["unpriced_calls"], 6);
    assert_eq!(t["total_tokens"], 119_797);
    assert_eq!(
        t["cost_basis"],
        "$0.29 of 26 priced calls; 6 unpriced (19 %)"
    );
    Ok(())
}

/// One MCP tool call through `nanoload mcp-call` (as the server runs it).
fn mcp_call(
    r: &Run,
    tool: &str,
    args: serde_json::Value,
) -> Result<serde_json::Value, Box<dyn std::error::Error>> {
    use std::io::Write as _;
    let spill = tempfile::tempdir()?;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"))
        .args([
            "mcp-call",
            &s(&r.out),
            "--tables",
            &s(&r.tables),
            "--max-rows",
            "1000",
            "--timeout",
            "60",
            "--memory-limit",
            "1073741824",
            "--spill",
            &s(spill.path()),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    {
        let mut stdin = child.stdin.take().ok_or("stdin")?;
        writeln!(
            stdin,
            "{}",
            serde_json::json!({"name": tool, "arguments": args})
        )?;
    }
    let out = child.wait_with_output()?;
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// MCP's ready answers say what part of their cost is priced: usage per
/// day counts the priced calls and says so; the costliest sessions say
/// that sessions with an unpriced call are left out, and how many.
#[test]
fn mcp_answers_say_what_part_is_priced() -> TestResult {
    let home = self_hosted_home()?;
    let r = run_home(home.path(), &[])?;
    let v = mcp_call(&r, "usage_by_day", serde_json::json!({}))?;
    let ok = &v["result"];
    let cols: Vec<&str> = ok["columns"]
        .as_array()
        .map(|a| a.iter().filter_map(|c| c["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(cols.contains(&"priced_calls"), "{v}");
    assert_eq!(
        ok["cost_basis"], "$0.29 of 26 priced calls; 6 unpriced (19 %)",
        "{v}"
    );
    let v = mcp_call(&r, "top_sessions_by_cost", serde_json::json!({}))?;
    assert_eq!(
        v["result"]["cost_basis"],
        "sessions whose every call is priced: 6 of 8 sessions with calls; 2 with an unpriced call are left out",
        "{v}"
    );
    Ok(())
}

/// An OTLP chat span says whether its call is priced (a backend summing
/// the costs of a trace otherwise cannot tell a partial sum).
#[test]
fn otlp_chat_spans_say_whether_the_call_is_priced() -> TestResult {
    let home = self_hosted_home()?;
    let r = run_home(home.path(), &[])?;
    let file = r.dir.path().join("traces.jsonl");
    let o = nanoload(&["otlp", &s(&r.out), "--tables", &s(&r.tables), &s(&file)])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&file)?;
    let mut by: std::collections::BTreeMap<String, usize> = Default::default();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        for rs in v["resourceSpans"].as_array().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for sp in ss["spans"].as_array().into_iter().flatten() {
                    for a in sp["attributes"].as_array().into_iter().flatten() {
                        if a["key"] == "nanoload.cost.status" {
                            let v = a["value"]["stringValue"].as_str().unwrap_or("");
                            *by.entry(v.to_string()).or_default() += 1;
                        }
                    }
                }
            }
        }
    }
    assert_eq!(
        by.into_iter().collect::<Vec<_>>(),
        [("priced".to_string(), 26), ("unpriced".to_string(), 6)]
    );
    Ok(())
}

/// `--free PATTERN` prices a self-hosted model's calls at 0 and `--price
/// MODEL=IN/OUT` at the prices given (USD per million tokens), on a load
/// and on `usage HOME`; a bad one is refused in one line.
#[test]
fn price_and_free_price_a_self_hosted_model() -> TestResult {
    let home = self_hosted_home()?;
    let free = run_home(home.path(), &["--free", "vllm/*"])?;
    assert_eq!(
        free.rows(
            "SELECT count(*), count(cost_usd), sum(cost_usd) FROM llm_calls WHERE instance = '.nanobot-work'"
        )?,
        strs(&[&["6", "6", "0.0"]])
    );
    // 17 850 input tokens at $0.50 and 111 output at $1.50 per million
    let priced = run_home(home.path(), &["--price", "Qwen/Qwen3-32B=0.5/1.5"])?;
    assert_eq!(
        priced.rows(
            "SELECT count(cost_usd), round(sum(cost_usd), 7) FROM llm_calls WHERE instance = '.nanobot-work'"
        )?,
        strs(&[&["6", "0.0090915"]])
    );
    assert_ne!(
        free.one("SELECT DISTINCT load_id FROM events")?,
        priced.one("SELECT DISTINCT load_id FROM events")?
    );
    let o = nanoload(&["usage", &s(home.path()), "--free", "*qwen*", "--json"])?;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)?;
    assert_eq!(doc["totals"]["unpriced_calls"], 0);
    assert_eq!(doc["cost_basis"], "$0.29, all 32 calls priced");
    let dir = tempfile::tempdir()?;
    for (flag, value, want) in [
        (
            "--price",
            "Qwen/Qwen3-32B=0.5",
            "--price \"Qwen/Qwen3-32B=0.5\": give MODEL=IN/OUT, USD per million input and output tokens (e.g. Qwen/Qwen3-32B=0.5/1.5)",
        ),
        (
            "--price",
            "m=1/-2",
            "--price \"m=1/-2\": \"-2\" is not a price (USD per million tokens, 0 to 1000000)",
        ),
        ("--free", "", "--free: give a model name or a glob (vllm/*)"),
    ] {
        let out = dir.path().join("out.parquet");
        let o = nanoload(&[&s(home.path()), &s(&out), flag, value])?;
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        let err = stderr(&o);
        assert!(err.contains(want), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!out.exists());
    }
    Ok(())
}

/// `nanoload prices` prints the table in use: where it comes from, how old
/// the built-in prices are, the overlay format, and the rows asked for.
#[test]
fn prices_prints_the_table_its_source_and_age() -> TestResult {
    let o = nanoload(&["prices", "claude-sonnet-4-5"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    let released = chrono::NaiveDate::from_ymd_opt(2026, 11, 20).ok_or("date")?;
    let age = (chrono::Utc::now().date_naive() - released).num_days();
    assert!(
        t.starts_with(&format!(
            "price table: built in (data/prices.json): LiteLLM 1.110.2, released 2026-11-20, {age} days ago\n"
        )),
        "{t}"
    );
    assert!(
        t.contains("claude-sonnet-4-5  anthropic  3.00  15.00  0.30  3.75\n"),
        "{t}"
    );
    assert!(t.contains("--prices FILE: a JSON object"), "{t}");
    let o = nanoload(&[
        "prices",
        "--price",
        "Qwen/Qwen3-32B=0.5/1.5",
        "--free",
        "vllm/*",
        "qwen3-32b",
    ])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t = stdout(&o);
    assert!(
        t.contains("Qwen/Qwen3-32B  (--price)  0.50  1.50  -  -\n"),
        "{t}"
    );
    assert!(t.contains("free (--free, cost 0): vllm/*\n"), "{t}");
    Ok(())
}

/// `usage`'s flags on a home of both agents: per-model rows under each
/// day and session (`--breakdown`), one agent or instance, newest first,
/// and the models column.
#[test]
fn usage_breakdown_filters_order_and_models() -> TestResult {
    let home = mixed_home()?;
    let r = run_home(home.path(), &[])?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let mut shown = String::new();
    for args in [
        &["--breakdown"][..],
        &["--by", "session", "--breakdown", "--agent", "nanoclaw"],
        &["--by", "monthly", "--instance", ".nanobot-work"],
        &["--by", "weekly", "--order", "desc"],
        &["--by", "model", "--order", "asc", "--agent", "nanobot"],
    ] {
        let mut a = vec!["usage", out.as_str(), "--tables", tables.as_str()];
        a.extend_from_slice(args);
        let o = nanoload(&a)?;
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        shown.push_str(&format!(
            "$ nanoload usage OUT --tables DIR {}\n",
            args.join(" ")
        ));
        shown.push_str(&stdout(&o));
        shown.push('\n');
    }
    insta::assert_snapshot!("usage_flags_mixed", shown);
    let o = nanoload(&[
        "usage",
        &out,
        "--tables",
        &tables,
        "--by",
        "model",
        "--breakdown",
    ])?;
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "nanoload: error: --breakdown splits each day, week, month or session by model; --by model has one row per model already\n"
    );
    Ok(())
}

/// `nanoload prices --help`: every flag, no line wider than the 80 columns
/// given.
#[test]
fn prices_help_explains_every_flag() -> TestResult {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_nanoload"));
    cmd.args(["prices", "--help"]).env("COLUMNS", "80");
    let o = output_within(&mut cmd, HANG_LIMIT, "nanoload prices --help")?;
    assert_eq!(o.status.code(), Some(0));
    let help = stdout(&o);
    for line in help.lines() {
        assert!(line.chars().count() <= 80, "{line:?}");
    }
    for flag in [
        "--prices",
        "--prices-replace",
        "--price",
        "--free",
        "[TEXT]",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
    insta::assert_snapshot!("prices_help", help);
    Ok(())
}

// ---- --prices, --price and --free on every command that shows cost ----

/// Qwen/Qwen3-32B at $1 per million input tokens and $2 per million
/// output tokens. The self-hosted home's 6 calls of it (17 850 input, 111
/// output tokens) then cost 17 850 × 1 / 10⁶ + 111 × 2 / 10⁶ = $0.018072;
/// with the other 26 calls' $0.2915013, all 32 cost $0.3095733.
const QWEN_PRICE: &str = "Qwen/Qwen3-32B=1/2";

/// What a reader of a load's output says when it priced the calls itself.
fn priced_at_read(flags: &str) -> String {
    format!(
        "priced at read from each call's tokens, not as loaded: the built-in table (LiteLLM 1.110.2, released 2026-11-20), {flags}"
    )
}

/// The self-hosted home and its load without pricing flags.
fn self_hosted_load() -> Result<(tempfile::TempDir, std::sync::Arc<Run>), Box<dyn std::error::Error>>
{
    let home = self_hosted_home()?;
    let r = run_home(home.path(), &[])?;
    assert!(matches!(r.code(), Some(0 | 1)), "{}", r.stderr());
    Ok((home, r))
}

/// `usage OUT.parquet --tables DIR` with `--free` or `--price` prices every
/// call again from its tokens (the load's costs are not kept) and says so,
/// in the table's notes and in the JSON.
#[test]
fn usage_of_an_output_prices_its_calls_again_with_price_and_free() -> TestResult {
    let (_home, r) = self_hosted_load()?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let usage = |extra: &[&str]| -> Result<Output, Box<dyn std::error::Error>> {
        let mut a = vec!["usage", out.as_str(), "--tables", tables.as_str()];
        a.extend_from_slice(extra);
        let o = nanoload(&a)?;
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        Ok(o)
    };
    let doc = |o: &Output| serde_json::from_slice::<serde_json::Value>(&o.stdout);
    let free = doc(&usage(&["--free", "qwen*", "--json"])?)?;
    assert_eq!(free["totals"]["unpriced_calls"], 0);
    assert_eq!(free["totals"]["cost_usd"], serde_json::json!(0.291501));
    assert_eq!(free["cost_basis"], "$0.29, all 32 calls priced");
    assert_eq!(free["prices"], priced_at_read("--free qwen*"));
    let priced = doc(&usage(&["--price", QWEN_PRICE, "--by", "model", "--json"])?)?;
    let qwen: Vec<&serde_json::Value> = (priced["rows"].as_array().into_iter().flatten())
        .filter(|r| r["provider"] == "vllm" && r["model"] == "Qwen/Qwen3-32B")
        .collect();
    assert_eq!(qwen.len(), 1, "{priced}");
    assert_eq!(qwen[0]["cost_usd"], serde_json::json!(0.018072));
    assert_eq!(qwen[0]["unpriced_calls"], 0);
    assert_eq!(priced["totals"]["cost_usd"], serde_json::json!(0.309573));
    assert_eq!(
        priced["prices"],
        priced_at_read(&format!("--price {QWEN_PRICE}"))
    );
    // without the flags: the load's costs, as written
    let loaded = doc(&usage(&["--json"])?)?;
    assert_eq!(loaded["prices"], serde_json::Value::Null);
    assert_eq!(loaded["totals"]["unpriced_calls"], 6);
    let t = stdout(&usage(&["--free", "qwen*"])?);
    assert!(
        t.contains(&format!("cost: {}", priced_at_read("--free qwen*"))),
        "{t}"
    );
    Ok(())
}

/// `report` with `--free` or `--price` prices the output's calls again: the
/// cards, the cost per model and the facts say so.
#[test]
fn report_of_an_output_prices_its_calls_again_with_price_and_free() -> TestResult {
    let (_home, r) = self_hosted_load()?;
    let report = |extra: &[&str]| -> Result<String, Box<dyn std::error::Error>> {
        let html = r.dir.path().join(format!("report-{}.html", extra.len()));
        let (out, tables, page) = (s(&r.out), s(&r.tables), s(&html));
        let mut a = vec!["report", out.as_str(), "--tables", tables.as_str(), &page];
        a.extend_from_slice(extra);
        let o = nanoload(&a)?;
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        Ok(std::fs::read_to_string(&html)?)
    };
    let free = report(&["--free", "qwen*"])?;
    let card = |page: &str, fact: &str| {
        cards(page)
            .into_iter()
            .find(|c| c.1 == fact)
            .map(|c| c.2)
            .unwrap_or_default()
    };
    assert_eq!(card(&free, "total_cost"), "$0.29");
    assert_eq!(card(&free, "unpriced_calls"), "0");
    assert_eq!(fact(&free, "total_cost_basis"), "all 32 calls priced");
    // (as the page writes it: the apostrophe escaped)
    let html = |s: String| s.replace('\'', "&#39;");
    assert_eq!(fact(&free, "prices"), html(priced_at_read("--free qwen*")));
    let priced = report(&["--price", QWEN_PRICE, "--free", "nothing-matches"])?;
    assert_eq!(card(&priced, "total_cost"), "$0.31");
    let by_model = between(&priced, "data-chart-table=\"cost-model\"", "</table>");
    assert!(
        by_model.contains(
            "<td data-c=\"model\">Qwen/Qwen3-32B</td><td class=\"n\" data-c=\"cost_usd\" data-v=\"0.018072\">$0.02</td><td class=\"n\" data-c=\"unpriced_calls\" data-v=\"0\">0</td>"
        ),
        "{by_model}"
    );
    assert_eq!(
        fact(&priced, "prices"),
        html(priced_at_read(&format!(
            "--price {QWEN_PRICE}, --free nothing-matches"
        )))
    );
    Ok(())
}

/// `nanoload mcp OUT --tables DIR` with `--free` or `--price`: every tool
/// call reads the calls priced again (the ready answers say so), and the
/// costliest sessions come with their titles.
#[test]
fn mcp_of_an_output_prices_its_calls_again_with_price_and_free() -> TestResult {
    let (_home, r) = self_hosted_load()?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let free = mcp_answers(
        &[&out, "--tables", &tables, "--free", "qwen*"],
        &[
            mcp_request(1, "usage_by_day", serde_json::json!({})),
            mcp_request(2, "top_sessions_by_cost", serde_json::json!({"limit": 100})),
        ],
    )?;
    let by_day = mcp_structured(&free[0])?;
    assert_eq!(by_day["cost_basis"], "$0.29, all 32 calls priced");
    assert_eq!(by_day["prices"], priced_at_read("--free qwen*"));
    let top = mcp_structured(&free[1])?;
    // the self-hosted instance's sessions are priced now: none left out
    assert_eq!(
        top["cost_basis"],
        "sessions whose every call is priced: 8 of 8 sessions with calls; 0 with an unpriced call are left out"
    );
    let priced = mcp_answers(
        &[&out, "--tables", &tables, "--price", QWEN_PRICE],
        &[mcp_request(
            1,
            "query",
            serde_json::json!({"sql": "SELECT count(cost_usd) AS priced, round(sum(cost_usd), 6) AS usd FROM llm_calls WHERE model = 'Qwen/Qwen3-32B'"}),
        )],
    )?;
    assert_eq!(
        mcp_structured(&priced[0])?["rows"],
        serde_json::json!([[6, 0.018072]])
    );
    Ok(())
}

/// MCP's costliest sessions name each session by its title
/// (`sessions.title`) beside its id, as the report and usage do.
#[test]
fn mcp_top_sessions_by_cost_gives_each_sessions_title() -> TestResult {
    let (_home, r) = self_hosted_load()?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let a = mcp_answers(
        &[&out, "--tables", &tables],
        &[mcp_request(
            1,
            "top_sessions_by_cost",
            serde_json::json!({}),
        )],
    )?;
    let top = mcp_structured(&a[0])?;
    let cols: Vec<&str> = (top["columns"].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(cols[..2], ["session_uid", "title"], "{top}");
    let rows = top["rows"].as_array().ok_or("rows")?;
    assert_eq!(rows.len(), 6, "{top}");
    for row in rows {
        let uid = row[0].as_str().ok_or("uid")?;
        assert_eq!(
            row[1].as_str().unwrap_or("NULL"),
            r.one(&format!(
                "SELECT coalesce(title, 'NULL') FROM sessions WHERE session_uid = '{uid}'"
            ))?,
            "{uid}"
        );
    }
    assert!(rows.iter().any(|r| r[1].is_string()), "no title: {top}");
    Ok(())
}

/// `otlp` with `--free` or `--price`: each chat span carries the cost the
/// calls have priced again, and the resource says how they were priced.
#[test]
fn otlp_of_an_output_prices_its_calls_again_with_price_and_free() -> TestResult {
    let (_home, r) = self_hosted_load()?;
    let spans = |extra: &[&str]| -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
        let file = r.dir.path().join(format!("traces-{}.jsonl", extra.len()));
        let (out, tables, f) = (s(&r.out), s(&r.tables), s(&file));
        let mut a = vec!["otlp", out.as_str(), "--tables", tables.as_str(), &f];
        a.extend_from_slice(extra);
        let o = nanoload(&a)?;
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
        otlp_spans(&std::fs::read_to_string(&file)?)
    };
    let free = spans(&["--free", "qwen*"])?;
    let status = |spans: &[serde_json::Value]| -> Vec<String> {
        let mut v: Vec<String> = spans
            .iter()
            .filter_map(|sp| span_attr(sp, "nanoload.cost.status"))
            .filter_map(|a| a["stringValue"].as_str().map(str::to_string))
            .collect();
        v.dedup();
        v
    };
    assert_eq!(status(&free), ["priced"]);
    assert!(
        free.iter()
            .all(|sp| sp["resource_prices"] == priced_at_read("--free qwen*")),
        "{:?}",
        free.first()
    );
    let priced = spans(&["--price", QWEN_PRICE])?;
    let qwen: Vec<f64> = priced
        .iter()
        .filter(|sp| sp["name"] == "chat Qwen/Qwen3-32B")
        .filter_map(|sp| span_attr(sp, "gen_ai.usage.cost"))
        .filter_map(|a| a["doubleValue"].as_f64())
        .collect();
    assert_eq!(qwen.len(), 6);
    assert!(
        (qwen.iter().sum::<f64>() - 0.018072).abs() < 1e-12,
        "{qwen:?}"
    );
    Ok(())
}

/// Every span of an OTLP/JSON file, each with its resource's
/// `nanoload.cost.prices` as `resource_prices`.
fn otlp_spans(text: &str) -> Result<Vec<serde_json::Value>, Box<dyn std::error::Error>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line)?;
        for rs in v["resourceSpans"].as_array().into_iter().flatten() {
            let prices = (rs["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten())
            .find(|a| a["key"] == "nanoload.cost.prices")
            .map(|a| a["value"]["stringValue"].clone())
            .unwrap_or_default();
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for sp in ss["spans"].as_array().into_iter().flatten() {
                    let mut sp = sp.clone();
                    sp["resource_prices"] = prices.clone();
                    out.push(sp);
                }
            }
        }
    }
    Ok(out)
}

/// The value of a span's attribute `key`.
fn span_attr(span: &serde_json::Value, key: &str) -> Option<serde_json::Value> {
    (span["attributes"].as_array().into_iter().flatten())
        .find(|a| a["key"] == key)
        .map(|a| a["value"].clone())
}

/// `sql` with `--free` or `--price` reads `llm_calls` and `sessions` priced
/// again, by the load's own rules: the same rows a load with the same
/// flags writes (but load_id), every call's cost and every session's sum.
#[test]
fn sql_of_an_output_prices_its_calls_again_as_a_load_would() -> TestResult {
    let (home, r) = self_hosted_load()?;
    let (out, tables) = (s(&r.out), s(&r.tables));
    let sql =
        |o: &str, t: &str, q: &str, extra: &[&str]| -> Result<String, Box<dyn std::error::Error>> {
            let mut a = vec!["sql", o, "--tables", t, "--json", "--max-rows", "0", q];
            a.extend_from_slice(extra);
            let o = nanoload(&a)?;
            assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", stderr(&o));
            Ok(stdout(&o))
        };
    let qwen = "SELECT count(cost_usd) AS priced, round(sum(cost_usd), 6) AS usd FROM llm_calls WHERE model = 'Qwen/Qwen3-32B'";
    let rows = |doc: &str| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        Ok(serde_json::from_str::<serde_json::Value>(doc)?["rows"].clone())
    };
    assert_eq!(
        rows(&sql(&out, &tables, qwen, &["--free", "qwen*"])?)?,
        serde_json::json!([[6, 0.0]])
    );
    assert_eq!(
        rows(&sql(&out, &tables, qwen, &["--price", QWEN_PRICE])?)?,
        serde_json::json!([[6, 0.018072]])
    );
    // a --db file's tables are priced again alike
    let dir = tempfile::tempdir()?;
    let db = dir.path().join("all.duckdb");
    let with_db = run_home(home.path(), &["--db", &s(&db)])?;
    assert!(
        matches!(with_db.code(), Some(0 | 1)),
        "{}",
        with_db.stderr()
    );
    let o = nanoload(&["sql", &s(&db), "--json", qwen, "--free", "qwen*"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(rows(&stdout(&o))?, serde_json::json!([[6, 0.0]]));
    // both agents' calls (nanoclaw's Claude Code usage priced as V019 and
    // V021 price it) on the mixed home
    let mixed = mixed_home()?;
    let plain = run_home(mixed.path(), &[])?;
    let mixed_flags = [
        "--price",
        "claude-sonnet-4-5-20250929=1/2",
        "--free",
        "gpt*",
    ];
    for (home, plain, flags) in [
        (home.path(), &r, &["--free", "qwen*"][..]),
        (home.path(), &r, &["--price", QWEN_PRICE]),
        (mixed.path(), &plain, &mixed_flags),
    ] {
        let (out, tables) = (s(&plain.out), s(&plain.tables));
        let loaded = run_home(home, flags)?;
        for q in [
            "SELECT * EXCLUDE (load_id) FROM llm_calls ORDER BY ALL",
            "SELECT * EXCLUDE (load_id) FROM sessions ORDER BY ALL",
            // the price_unknown warnings are this table's too
            "SELECT * EXCLUDE (load_id) FROM diagnostics",
        ] {
            assert_eq!(
                sql(&out, &tables, q, flags)?,
                sql(&s(&loaded.out), &s(&loaded.tables), q, &[])?,
                "{flags:?}: {q}"
            );
        }
    }
    // the flags changed the mixed home's costs, both agents'
    let by_agent = |flags: &[&str]| -> Result<serde_json::Value, Box<dyn std::error::Error>> {
        let q = "SELECT agent, round(sum(cost_usd), 6) FROM llm_calls GROUP BY ALL ORDER BY ALL";
        rows(&sql(&s(&plain.out), &s(&plain.tables), q, flags)?)
    };
    let (before, after) = (by_agent(&[])?, by_agent(&mixed_flags)?);
    for k in 0..2 {
        assert_eq!(before[k][0], after[k][0]);
        assert_ne!(before[k][1], after[k][1], "{before} {after}");
    }
    Ok(())
}

/// A ledger's export prices its calls with `--prices`, `--price` and
/// `--free`, and a load_id of its own; `otlp` of a ledger (an export at
/// read) takes them too. A ledger holds no costs for `sql` and `mcp` to
/// price: they refuse the flags in one line.
#[test]
fn export_of_a_ledger_prices_with_price_and_free() -> TestResult {
    let home = self_hosted_home()?;
    let dir = tempfile::tempdir()?;
    let ledger = dir.path().join("history.duckdb");
    let o = nanoload(&["sync", &s(home.path()), &s(&ledger), "--quiet"])?;
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
    let export = |name: &str, extra: &[&str]| -> Result<Connection, Box<dyn std::error::Error>> {
        let out = dir.path().join(format!("{name}.parquet"));
        let tables = dir.path().join(name);
        let (l, o, t) = (s(&ledger), s(&out), s(&tables));
        let mut a = vec!["export", l.as_str(), o.as_str(), "--tables", t.as_str()];
        a.extend_from_slice(extra);
        let x = nanoload(&a)?;
        assert_eq!(x.status.code(), Some(0), "{extra:?}: {}", stderr(&x));
        let c = Connection::open_in_memory()?;
        c.execute_batch(&format!(
            "CREATE VIEW events AS FROM read_parquet('{o}');
             CREATE VIEW llm_calls AS FROM read_parquet('{t}/llm_calls.parquet');
             CREATE VIEW sessions AS FROM read_parquet('{t}/sessions.parquet');"
        ))?;
        Ok(c)
    };
    let qwen = "SELECT count(*), count(cost_usd), CAST(round(sum(cost_usd), 6) AS VARCHAR) FROM llm_calls WHERE model = 'Qwen/Qwen3-32B'";
    let plain = export("plain", &[])?;
    assert_eq!(query(&plain, qwen)?, strs(&[&["6", "0", "NULL"]]));
    let free = export("free", &["--free", "qwen*"])?;
    assert_eq!(query(&free, qwen)?, strs(&[&["6", "6", "0.0"]]));
    let priced = export("priced", &["--price", QWEN_PRICE])?;
    assert_eq!(query(&priced, qwen)?, strs(&[&["6", "6", "0.018072"]]));
    let id = "SELECT DISTINCT load_id FROM events";
    let ids = [query(&plain, id)?, query(&free, id)?, query(&priced, id)?];
    assert!(
        ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2],
        "{ids:?}"
    );
    // otlp of the ledger: priced at its export
    let traces = dir.path().join("ledger.jsonl");
    let o = nanoload(&["otlp", &s(&ledger), &s(&traces), "--free", "qwen*"])?;
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let spans = otlp_spans(&std::fs::read_to_string(&traces)?)?;
    let unpriced = spans
        .iter()
        .filter(|sp| {
            span_attr(sp, "nanoload.cost.status").is_some_and(|a| a["stringValue"] == "unpriced")
        })
        .count();
    assert_eq!(unpriced, 0);
    for cmd in [
        vec![
            "sql",
            ledger.to_str().ok_or("path")?,
            "FROM loads",
            "--free",
            "qwen*",
        ],
        vec!["mcp", ledger.to_str().ok_or("path")?, "--free", "qwen*"],
    ] {
        let o = nanoload(&cmd)?;
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert_eq!(
            stderr(&o),
            format!(
                "nanoload: {}: a ledger holds no costs (its calls are kept as read, before pricing): --prices, --price and --free price its export (nanoload export LEDGER OUT.parquet --tables DIR …) and its traces (nanoload otlp LEDGER …)\n",
                ledger.display()
            ),
            "{cmd:?}"
        );
    }
    Ok(())
}
