//! The audits of `sql/audits/`: invariants of the output tables, each a
//! query returning the rows that break its rule (ordinals unique per
//! session, one tool result per call and turn, the grain of `llm_calls` and
//! `sessions`, every event's session a `sessions` row, session_uid the hash
//! of its identity, disjoint `tz_offsets` ranges). Every audit holds on the
//! `--db` output of every fixture home (loaded once with `golden`, by
//! `fixture_homes`); every audit file opens with its `Rule:`, `Grain:` and
//! `Inputs:` lines; and every audit finds the violation it is for in a
//! hand-made table set, so an audit that can never fail is caught.

use duckdb::Connection;

use crate::common::*;
use crate::fixture_homes::{homes, load};

/// The tables an audit may read: `events`, the other output tables
/// ([`TABLES`]), and `kinds` (the registry's kind traits, as the SQL steps
/// see them: an audit never spells a source kind either).
fn readable(table: &str) -> bool {
    table == "events" || table == "kinds" || TABLES.contains(&table)
}

/// For each audit (file name without `.sql`): tables that break its rule,
/// built in an empty in-memory DuckDB, and how many rows the audit must
/// return on them. Each set also holds rows that keep the rule (the same
/// value in another session, a reused id in another turn), which the audit
/// must not return.
const VIOLATIONS: &[(&str, &str, usize)] = &[
    (
        "A001__ordinal_unique_per_session",
        "CREATE TABLE events AS SELECT * FROM (VALUES
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa', 1),
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa', 2),
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa', 2),
            ('nanobot', '.nanobot', 'telegram:1', 'bbbbbbbbbbbbbbbb', 1),
            ('nanobot', '.nanobot', NULL, NULL, 1),
            ('nanobot', '.nanobot', NULL, NULL, 1),
            ('nanobot', '.nanobot-work', NULL, NULL, 2)
         ) AS t(agent, instance, session_id, session_uid, ordinal);",
        2,
    ),
    (
        "A002__one_tool_result_per_call_and_turn",
        "CREATE TABLE events AS SELECT * FROM (VALUES
            (1, 'user',        NULL,     'nanobot.session_jsonl',    'primary',   's.jsonl', 2),
            (2, 'tool_use',    'call_0', 'nanobot.session_jsonl',    'primary',   's.jsonl', 3),
            (3, 'tool_result', 'call_0', 'nanobot.session_jsonl',    'primary',   's.jsonl', 4),
            (4, 'tool_result', 'call_0', 'nanobot.webui_transcript', 'secondary', 'w.jsonl', 9),
            (5, 'user',        NULL,     'nanobot.session_jsonl',    'primary',   's.jsonl', 5),
            (6, 'tool_result', 'call_0', 'nanobot.webui_transcript', 'secondary', 'w.jsonl', 12),
            (7, 'tool_use',    'call_0', 'nanobot.session_jsonl',    'primary',   's.jsonl', 6)
         ) AS t(ordinal, turn_type, tool_use_id, source_kind, source_role, source_path, source_line),
         (SELECT 'nanobot' AS agent, '.nanobot' AS instance, 'websocket:1' AS session_id,
                 'aaaaaaaaaaaaaaaa' AS session_uid);",
        1,
    ),
    (
        "A003__llm_calls_one_row_per_usage_row",
        "CREATE TABLE llm_calls AS SELECT * FROM (VALUES
            ('.nanobot', '.nanobot/llm_usage.sqlite3', 1),
            ('.nanobot', '.nanobot/llm_usage.sqlite3', 1),
            ('.nanobot', '.nanobot/llm_usage.sqlite3', 2),
            ('.nanobot-work', '.nanobot-work/llm_usage.sqlite3', 1),
            ('.nanobot-work', '.nanobot-work/llm_usage.sqlite3', NULL)
         ) AS t(instance, source_path, id);",
        2,
    ),
    (
        "A004__sessions_one_row_per_session_uid",
        "CREATE TABLE sessions AS SELECT * FROM (VALUES
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa'),
            ('nanobot', '.nanobot', 'cli:direct', 'bbbbbbbbbbbbbbbb'),
            ('nanobot', '.nanobot-work', 'cli:direct', 'bbbbbbbbbbbbbbbb'),
            ('nanobot', '.nanobot', 'telegram:1', NULL)
         ) AS t(agent, instance, session_id, session_uid);",
        2,
    ),
    (
        "A005__every_event_session_is_a_sessions_row",
        "CREATE TABLE sessions AS SELECT * FROM (VALUES
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa'),
            ('nanobot', '.nanobot', 'telegram:1', 'cccccccccccccccc')
         ) AS t(agent, instance, session_id, session_uid);
         CREATE TABLE events AS SELECT * FROM (VALUES
            ('nanobot', '.nanobot', 'cli:direct', 'aaaaaaaaaaaaaaaa'),
            ('nanobot', '.nanobot', NULL, NULL),
            ('nanobot', '.nanobot', 'slack:C1', 'bbbbbbbbbbbbbbbb'),
            ('nanobot', '.nanobot', 'slack:C1', NULL),
            ('nanobot', '.nanobot', 'discord:1', 'cccccccccccccccc')
         ) AS t(agent, instance, session_id, session_uid);",
        3,
    ),
    (
        "A006__session_uid_is_the_hash_of_its_identity",
        "CREATE TABLE sessions AS
         SELECT agent, instance, namespace, session_id,
             CASE WHEN right_uid
                  THEN left(sha256(agent || chr(0) || instance || chr(0) || namespace || chr(0) || session_id), 16)
                  ELSE left(sha256(agent || chr(0) || instance || chr(0) || session_id), 16) END AS session_uid
         FROM (VALUES
            ('nanobot', '.nanobot', 'aa67e0e21b9f438b02b8a175284b1b96', 'cli:direct', true),
            ('nanobot', '.nanobot', 'ffffffffffffffffffffffffffffffff', 'cli:direct', false),
            ('nanoclaw', '.', '', 'sess-1', true)
         ) AS t(agent, instance, namespace, session_id, right_uid);",
        1,
    ),
    (
        "A007__tz_offset_ranges_do_not_overlap",
        "CREATE TABLE tz_offsets AS SELECT instance, first_day::DATE AS first_day,
             last_day::DATE AS last_day, offset_minutes FROM (VALUES
            ('.nanobot', '2026-03-01', '2026-03-28', 60),
            ('.nanobot', '2026-03-28', '2026-04-30', 120),
            ('.nanobot-work', '2026-03-01', '2026-03-28', 60),
            ('.nanobot-work', '2026-03-29', '2026-04-30', 120),
            ('.nanobot-old', '2026-05-02', '2026-05-01', 0)
         ) AS t(instance, first_day, last_day, offset_minutes);",
        2,
    ),
];

/// Every audit returns no row on the `--db` output of every fixture home.
#[test]
fn every_audit_holds_on_every_fixture_home() -> TestResult {
    let n_audits = audit_files()?.len();
    let mut failures = Vec::new();
    let mut audited = 0;
    for home in homes()? {
        let loaded = load(&home)?;
        if loaded.rendering.starts_with("exit 2") {
            continue;
        }
        assert_eq!(loaded.audits.len(), n_audits, "{home}: audits run");
        audited += 1;
        for (audit, rows) in &loaded.audits {
            if !rows.is_empty() {
                failures.push(format!(
                    "audit {audit} fails on fixture home {home}: {} violating row(s), the first:\n  {}",
                    rows.len(),
                    rows.iter().take(5).cloned().collect::<Vec<_>>().join("\n  ")
                ));
            }
        }
    }
    assert!(audited >= 10, "only {audited} homes wrote output");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    Ok(())
}

/// Every audit file is `A###__rule.sql` with a number of its own, opens with
/// `-- Rule:`, then has `-- Grain:` and `-- Inputs:` lines (naming only
/// output tables) in its leading comment, and then one query.
#[test]
fn every_audit_file_opens_with_rule_grain_and_inputs() -> TestResult {
    let files = audit_files()?;
    assert!(files.len() >= 3, "{files:?}");
    let mut numbers = Vec::new();
    let mut problems = Vec::new();
    let kind_literal = regex::Regex::new(r"'nano(bot|claw)\.[a-z_]+'")?;
    for f in &files {
        let name = audit_name(f);
        let number = name
            .strip_prefix('A')
            .and_then(|s| s.split_once("__"))
            .filter(|(n, rule)| {
                n.len() == 3
                    && n.chars().all(|c| c.is_ascii_digit())
                    && !rule.is_empty()
                    && rule
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
            })
            .map(|(n, _)| n.to_string());
        match number {
            Some(n) if numbers.contains(&n) => problems.push(format!("{name}: number A{n} reused")),
            Some(n) => numbers.push(n),
            None => problems.push(format!("{name}: not named A###__rule.sql")),
        }
        let text = std::fs::read_to_string(f)?;
        if let Some(m) = kind_literal.find(&text) {
            problems.push(format!(
                "{name}: spells the source kind {} (ask `kinds` for its traits)",
                m.as_str()
            ));
        }
        let header: Vec<&str> = text.lines().take_while(|l| l.starts_with("--")).collect();
        let at = |word: &str| header.iter().position(|l| l.starts_with(word));
        match (at("-- Rule:"), at("-- Grain:"), at("-- Inputs:")) {
            (Some(0), Some(g), Some(i)) if g < i => {
                let inputs = header[i].trim_start_matches("-- Inputs:");
                for t in inputs.split(',').map(|t| t.trim().trim_end_matches('.')) {
                    if !readable(t) {
                        problems.push(format!("{name}: Inputs names {t:?}, not an output table"));
                    }
                }
            }
            _ => problems.push(format!(
                "{name}: does not open with `-- Rule:`, then `-- Grain:`, then `-- Inputs:` lines"
            )),
        }
        let body: String = text
            .lines()
            .skip(header.len())
            .filter(|l| !l.trim_start().starts_with("--"))
            .collect::<Vec<_>>()
            .join("\n");
        // string literals may hold `;`: look only outside them
        let outside: String = body.split('\'').step_by(2).collect();
        let outside = outside.trim().trim_end_matches(';');
        if outside.is_empty() || outside.contains(';') {
            problems.push(format!("{name}: the header is not followed by one query"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}

/// Every audit can fail: on the tables of its [`VIOLATIONS`] case it returns
/// exactly the violating rows the case holds. An audit file without a case,
/// or a case without its file, fails.
#[test]
fn every_audit_finds_the_violation_it_is_for() -> TestResult {
    let files = audit_files()?;
    let names: Vec<String> = files.iter().map(|f| audit_name(f)).collect();
    let mut problems = Vec::new();
    for (case, _, _) in VIOLATIONS {
        if !names.iter().any(|n| n == case) {
            problems.push(format!("case {case}: no file sql/audits/{case}.sql"));
        }
    }
    for (f, name) in files.iter().zip(&names) {
        let Some((_, setup, want)) = VIOLATIONS.iter().find(|(n, _, _)| n == name) else {
            problems.push(format!(
                "audit {name}: no violating case in VIOLATIONS (tests/audits.rs)"
            ));
            continue;
        };
        let c = Connection::open_in_memory()?;
        c.execute_batch(setup)?;
        let got = audit_violations(&c, &std::fs::read_to_string(f)?)
            .map_err(|e| format!("audit {name}: {e}"))?;
        if got.len() != *want {
            problems.push(format!(
                "audit {name}: {} rows on its violating tables, want {want}:\n  {}",
                got.len(),
                got.join("\n  ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    Ok(())
}
