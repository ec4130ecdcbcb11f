//! The steps: the numbered SQL files of `sql/`, embedded in the binary and
//! run in order inside DuckDB. Each step creates tables, named by what they are.
//!
//! ```text
//! engine (run.rs)  params, prices, stage_events, stage_llm_calls, diagnostics, sources
//! run_all          kinds (one row per registry entry), x_group_<name>() macros
//!                  sql/V001__session_identity.sql … sql/V0NN__<name>.sql, in order
//!                  (zero-padded, contiguous, unique)
//! ```
//! Each file opens with `Purpose:`, `Grain:`, `Inputs:` and `Output:` lines.
//! No step spells a source kind's name or an `x_group` number: a step asks
//! `kinds` for a trait ([`crate::store::KindTraits`]) and names a group with
//! its macro ([`crate::schema::Group`]).

use std::time::{Duration, Instant};

use duckdb::Connection;

use crate::diag::DiagCode;
use crate::schema::Group;
use crate::sources::REGISTRY;
use crate::store::{KindTraits, NanoclawPart, SessionLayout, TurnCopy};

/// `(file name, its text)`: the file embedded.
macro_rules! step {
    ($file:literal) => {
        ($file, include_str!(concat!("../sql/", $file)))
    };
}

/// (file name, SQL text), in version order: the dataflow.
pub const STEPS: &[(&str, &str)] = &[
    step!("V001__session_identity.sql"),
    step!("V002__store_roles.sql"),
    step!("V003__raw_events.sql"),
    step!("V004__deduped_session_copies.sql"),
    step!("V005__tz_offsets.sql"),
    step!("V006__timestamps.sql"),
    step!("V007__session_turns.sql"),
    step!("V008__deduped_secondary_copies.sql"),
    step!("V009__nanoclaw_rows.sql"),
    step!("V010__nanoclaw_links.sql"),
    step!("V011__nanoclaw_transcript_sessions.sql"),
    step!("V012__project_paths.sql"),
    step!("V013__nanoclaw_losses.sql"),
    step!("V014__linked_events.sql"),
    step!("V015__events.sql"),
    step!("V016__write_layout.sql"),
    step!("V017__llm_calls.sql"),
    step!("V018__sessions.sql"),
];

#[derive(Debug, thiserror::Error)]
#[error("sql/{file}: {source}")]
pub struct StepError {
    pub file: &'static str,
    #[source]
    pub source: duckdb::Error,
}

/// What [`StepError::file`] names when the `kinds` table or the `x_group`
/// macros (built here, before the first file) fail.
pub const KINDS: &str = "V000__kinds (built by steps.rs from the registry)";

/// Run the `kinds` prelude, then every step in order; `starting` is told
/// each one's index and file name (`kinds` first) before it runs.
pub fn run_all(
    conn: &Connection,
    starting: &mut dyn FnMut(usize, &'static str),
) -> Result<Vec<(&'static str, Duration)>, StepError> {
    let mut times = Vec::with_capacity(STEPS.len() + 1);
    let started = Instant::now();
    starting(0, "kinds");
    run_kinds(conn)?;
    times.push(("kinds", started.elapsed()));
    for (i, step) in STEPS.iter().enumerate() {
        let started = Instant::now();
        starting(i + 1, step.0);
        run_step(conn, step)?;
        times.push((step.0, started.elapsed()));
    }
    Ok(times)
}

/// Create `kinds` and the `x_group_<name>()` macros ([`kinds_sql`]).
fn run_kinds(conn: &Connection) -> Result<(), StepError> {
    conn.execute_batch(&kinds_sql())
        .map_err(|source| StepError {
            file: KINDS,
            source,
        })
}

fn run_step(
    conn: &Connection,
    (file, sql): &(&'static str, &'static str),
) -> Result<(), StepError> {
    conn.execute_batch(sql)
        .map_err(|source| StepError { file, source })
}

/// One trait column of `kinds`: name, SQL type, its value in a registry entry.
type TraitColumn = (&'static str, &'static str, fn(&KindTraits) -> String);

/// The [`KindTraits`] fields as `kinds` columns, in column order.
const TRAIT_COLUMNS: [TraitColumn; 5] = [
    ("session_store", "VARCHAR", |t| {
        opt(t.session_store.map(SessionLayout::as_str))
    }),
    ("message_store", "BOOLEAN NOT NULL", |t| {
        t.message_store.to_string()
    }),
    ("turn_copy", "VARCHAR", |t| {
        opt(t.turn_copy.map(TurnCopy::as_str))
    }),
    ("prompt_copy", "BOOLEAN NOT NULL", |t| {
        t.prompt_copy.to_string()
    }),
    ("nanoclaw", "VARCHAR", |t| {
        opt(t.nanoclaw.map(NanoclawPart::as_str))
    }),
];

fn text(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn opt(s: Option<&str>) -> String {
    s.map_or_else(|| "NULL".to_string(), text)
}

/// The `kinds` table — one row per [`crate::sources::REGISTRY`] entry: its
/// `source_kind`, `agent` and one column per [`KindTraits`] field — one
/// macro per [`Group`], `x_group_<name>()`, whose value is the group's
/// `x_group`, and the traits row-wise, `kind_<trait>(source_kind)`.
pub fn kinds_sql() -> String {
    let columns: Vec<String> = TRAIT_COLUMNS
        .iter()
        .map(|(name, ty, _)| format!(",\n    {name} {ty}"))
        .collect();
    let rows: Vec<String> = REGISTRY
        .iter()
        .map(|e| {
            let traits: Vec<String> = TRAIT_COLUMNS.iter().map(|(_, _, v)| v(&e.traits)).collect();
            format!(
                "    ({}, {}, {})",
                text(e.kind),
                text(e.agent.as_str()),
                traits.join(", ")
            )
        })
        .collect();
    let mut sql = format!(
        "CREATE TABLE kinds (\n    source_kind VARCHAR PRIMARY KEY,\n    agent VARCHAR NOT NULL{}\n);\nINSERT INTO kinds VALUES\n{};\n",
        columns.concat(),
        rows.join(",\n")
    );
    for g in Group::ALL {
        sql.push_str(&format!(
            "CREATE MACRO x_group_{}() AS {};\n",
            g.name(),
            g as i32
        ));
    }
    // the diagnostic codes: a step names one as diag_code('…'), which fails
    // the step (when it is planned) for a code not on the list
    let codes: Vec<String> = DiagCode::ALL.iter().map(|c| text(c.as_str())).collect();
    sql.push_str(&format!(
        "CREATE MACRO diag_code(c) AS CASE WHEN c IN ({}) THEN c \
         ELSE error('diagnostic code not in diag::DiagCode: ' || c) END;\n",
        codes.join(", ")
    ));
    // The same traits row-wise, `kind_<trait>(source_kind)`: a step over the
    // wide rows asks these instead of joining `kinds`, since DuckDB may build
    // that join's hash table on the wide side (V003 ran out of memory at 256
    // MiB on 50 000 session files when it joined `kinds`).
    for (name, ty, value) in TRAIT_COLUMNS {
        let arms: String = REGISTRY
            .iter()
            .map(|e| format!(" WHEN {} THEN {}", text(e.kind), value(&e.traits)))
            .collect();
        let ty = ty.trim_end_matches(" NOT NULL");
        sql.push_str(&format!(
            "CREATE MACRO kind_{name}(k) AS CAST(CASE k{arms} END AS {ty});\n"
        ));
    }
    sql
}

/// The version number of a step file name (`V012__x.sql` → 12).
pub fn version_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('V')?;
    let (num, tail) = rest.split_once("__")?;
    (num.len() == 3 && tail.ends_with(".sql"))
        .then(|| num.parse().ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow::datatypes::{DataType, Schema, TimeUnit};

    /// A quoted source-kind name (`'nanobot.session_db'`).
    fn kind_literal() -> regex::Regex {
        regex::Regex::new(r"'nano(bot|claw)\.[a-z_]+'").unwrap_or_else(|e| unreachable!("{e}"))
    }

    /// An `x_group` compared with a bare number (`x_group = 0`, `3 > e.x_group`,
    /// `x_group IN (0, 1)`, `x_group BETWEEN 0 AND 3`).
    fn group_number() -> regex::Regex {
        regex::Regex::new(
            r"(?i)\bx_group\s*(=|<>|!=|<=|>=|<|>|\bin\b|\bbetween\b)\s*\(?\s*-?\d|-?\d\s*(=|<>|!=|<=|>=|<|>)\s*(\w+\.)?x_group\b",
        )
        .unwrap_or_else(|e| unreachable!("{e}"))
    }

    #[test]
    fn no_step_spells_a_source_kind_or_an_x_group_number() {
        let (kind, group) = (kind_literal(), group_number());
        // the patterns catch what they are for
        assert!(kind.is_match("WHERE source_kind = 'nanoclaw.outbound'"));
        for bad in [
            "c.x_group = 0",
            "x_group<>3",
            "X_GROUP IN (0, 1)",
            "2 > e.x_group",
        ] {
            assert!(group.is_match(bad), "{bad}");
        }
        assert!(!group.is_match("c.x_group = x_group_session()"));
        assert!(!group.is_match("ORDER BY x_group, seq"));
        for (name, sql) in STEPS {
            for (n, line) in sql.lines().enumerate() {
                assert!(
                    !kind.is_match(line),
                    "{name}:{}: a source kind's name; ask `kinds` for the trait instead: {line}",
                    n + 1
                );
                assert!(
                    !group.is_match(line),
                    "{name}:{}: an x_group number; use its x_group_<name>() macro: {line}",
                    n + 1
                );
            }
        }
    }

    #[test]
    fn kinds_has_one_row_per_registry_entry_and_a_macro_per_group()
    -> Result<(), Box<dyn std::error::Error>> {
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&kinds_sql())?;
        let mut stmt = conn.prepare(
            "SELECT source_kind, agent, session_store, message_store, turn_copy, prompt_copy, nanoclaw
             FROM kinds ORDER BY source_kind",
        )?;
        type Row = (
            String,
            String,
            Option<String>,
            bool,
            Option<String>,
            bool,
            Option<String>,
        );
        let rows: Vec<Row> = stmt
            .query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    r.get(6)?,
                ))
            })?
            .collect::<Result<_, _>>()?;
        let mut want: Vec<Row> = REGISTRY
            .iter()
            .map(|e| {
                let t = e.traits;
                (
                    e.kind.to_string(),
                    e.agent.as_str().to_string(),
                    t.session_store.map(|v| v.as_str().to_string()),
                    t.message_store,
                    t.turn_copy.map(|v| v.as_str().to_string()),
                    t.prompt_copy,
                    t.nanoclaw.map(|v| v.as_str().to_string()),
                )
            })
            .collect();
        want.sort();
        assert_eq!(rows, want);
        for g in Group::ALL {
            let v: i32 =
                conn.query_row(&format!("SELECT x_group_{}()", g.name()), [], |r| r.get(0))?;
            assert_eq!(v, g as i32, "{}", g.name());
        }
        // the row-wise macros say what the table says, for every kind and trait
        let differ: i64 = conn.query_row(
            "SELECT count(*) FROM kinds
             WHERE kind_session_store(source_kind) IS DISTINCT FROM session_store
                OR kind_message_store(source_kind) IS DISTINCT FROM message_store
                OR kind_turn_copy(source_kind) IS DISTINCT FROM turn_copy
                OR kind_prompt_copy(source_kind) IS DISTINCT FROM prompt_copy
                OR kind_nanoclaw(source_kind) IS DISTINCT FROM nanoclaw",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(differ, 0);
        let unknown: Option<String> = conn.query_row(
            "SELECT kind_session_store('nanobot.no_such_kind')",
            [],
            |r| r.get(0),
        )?;
        assert_eq!(unknown, None);
        Ok(())
    }

    #[test]
    fn embedded_list_equals_the_sql_folder_with_contiguous_versions() -> std::io::Result<()> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/sql");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)?
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".sql"))
            .collect();
        on_disk.sort();
        let embedded: Vec<String> = STEPS.iter().map(|(n, _)| n.to_string()).collect();
        assert_eq!(embedded, on_disk);
        let versions: Vec<Option<u32>> = STEPS.iter().map(|(n, _)| version_of(n)).collect();
        let want: Vec<Option<u32>> = (1..=STEPS.len() as u32).map(Some).collect();
        assert_eq!(
            versions, want,
            "versions must be V001… contiguous and unique"
        );
        for (name, sql) in STEPS {
            let text = std::fs::read_to_string(format!("{dir}/{name}"))?;
            assert_eq!(&text, sql, "{name} embedded text differs from the file");
            for word in ["Purpose:", "Grain:", "Inputs:", "Output:"] {
                assert!(
                    sql.lines()
                        .take(30)
                        .any(|l| l.starts_with("--") && l.contains(word)),
                    "{name} lacks a `{word}` header line"
                );
            }
        }
        Ok(())
    }

    /// The name of a step: its file name without `V###__` and `.sql`.
    fn stem(file: &str) -> &str {
        let name = file.split_once("__").map_or(file, |(_, n)| n);
        name.strip_suffix(".sql").unwrap_or(name)
    }

    /// A step's header (its leading comment lines) names every table and
    /// view it creates, and every table it appends to or updates, in its
    /// `Output:` part; a `V###` it mentions is a step; docs/design.md lists it.
    #[test]
    fn every_step_header_names_what_it_creates() -> Result<(), regex::Error> {
        let created = regex::Regex::new(
            r"(?im)^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)|INSERT\s+INTO|UPDATE)\s+(\w+)",
        )?;
        let version = regex::Regex::new(r"\bV(\d{3})\b")?;
        let design = include_str!("../docs/design.md");
        for (name, sql) in STEPS {
            let header: Vec<&str> = sql.lines().take_while(|l| l.starts_with("--")).collect();
            let output = header
                .iter()
                .position(|l| l.contains("Output:"))
                .map(|i| header[i..].join("\n"))
                .unwrap_or_default();
            for c in created.captures_iter(sql) {
                let table = &c[1];
                let named = regex::Regex::new(&format!(r"\b{table}\b"))?;
                assert!(
                    named.is_match(&output),
                    "{name}: `Output:` does not name {table}"
                );
            }
            assert!(
                design.contains(&format!("`{}`", name.trim_end_matches(".sql"))),
                "docs/design.md does not list the step {name}"
            );
            for c in version.captures_iter(sql) {
                let v: usize = c[1].parse().unwrap_or(0);
                assert!(
                    (1..=STEPS.len()).contains(&v),
                    "{name} mentions V{}, which is no step",
                    &c[1]
                );
            }
        }
        Ok(())
    }

    /// Each step and the tests that hold it (each test runs the steps up to
    /// its step with [`Steps::run_through`]).
    const STEP_TESTS: &[(&str, &str)] = &[
        (
            "session_identity",
            "session_identity_keeps_two_namespaces_apart_and_warns_on_an_ambiguous_key",
        ),
        (
            "store_roles",
            "store_roles_demote_a_legacy_copy_and_promote_the_jsonl_of_an_empty_database",
        ),
        (
            "raw_events",
            "raw_events_take_the_final_role_the_kind_traits_and_a_row_identity",
        ),
        (
            "deduped_session_copies",
            "session_copy_dedup_drops_what_the_primary_holds_and_keeps_what_only_the_copy_has",
        ),
        (
            "tz_offsets",
            "tz_offset_of_120_minutes_from_an_llm_call_pair",
        ),
        (
            "tz_offsets",
            "a_tie_in_the_offset_vote_goes_to_the_neighbouring_days_offset",
        ),
        (
            "tz_offsets",
            "one_pair_shows_a_dst_step_but_not_a_jump_to_another_zone",
        ),
        (
            "timestamps",
            "timestamps_take_the_derived_offset_of_the_nearest_evidence_day",
        ),
        (
            "tz_offsets",
            "a_tie_of_lone_pairs_goes_to_a_dst_step_from_the_nearest_strong_day",
        ),
        (
            "timestamps",
            "a_switch_inside_a_day_its_old_offset_kept_by_a_tie",
        ),
        (
            "timestamps",
            "a_row_that_pairs_at_both_offsets_of_a_switch_does_not_bound_it",
        ),
        ("timestamps", "timestamps_take_the_given_offset_first"),
        (
            "timestamps",
            "rows_of_a_switch_day_take_the_offset_in_force_at_their_time",
        ),
        (
            "llm_calls",
            "a_utc_row_and_a_call_take_the_offset_in_force_at_their_instant",
        ),
        (
            "session_turns",
            "a_turn_ends_at_its_final_answer_and_an_injected_message_starts_a_hidden_turn",
        ),
        (
            "deduped_secondary_copies",
            "a_copy_turn_mirrors_the_session_turn_that_contains_it",
        ),
        (
            "deduped_secondary_copies",
            "a_turn_erased_by_new_and_asked_again_mirrors_nothing_and_keeps_its_rows",
        ),
        (
            "deduped_secondary_copies",
            "a_webui_copy_of_a_user_message_in_its_turn_is_dropped_other_text_kept",
        ),
        (
            "deduped_secondary_copies",
            "cli_history_within_2_s_is_dropped_at_3_s_kept",
        ),
        (
            "nanoclaw_rows",
            "nanoclaw_rows_are_the_nanoclaw_events_with_native_parsed",
        ),
        (
            "nanoclaw_links",
            "a_delivered_row_folds_only_when_its_outbound_row_exists",
        ),
        (
            "nanoclaw_links",
            "an_edit_or_reaction_links_to_the_one_message_its_id_names",
        ),
        (
            "nanoclaw_links",
            "a_question_links_to_its_answer_only_when_both_are_one",
        ),
        (
            "nanoclaw_links",
            "a_messaging_group_joins_only_when_the_route_matches",
        ),
        (
            "nanoclaw_transcript_sessions",
            "a_transcript_belongs_to_the_session_naming_its_claude_continuation",
        ),
        (
            "project_paths",
            "projects_come_from_the_session_stores_and_the_agent_group",
        ),
        (
            "nanoclaw_losses",
            "a_folder_without_catalog_row_and_a_catalog_session_without_folder_are_losses",
        ),
        (
            "nanoclaw_losses",
            "declared_losses_are_one_per_session_and_kind_where_they_apply",
        ),
        (
            "linked_events",
            "linked_events_fold_deliveries_link_transcripts_and_fill_projects",
        ),
        (
            "events",
            "ordinal_is_unique_and_in_time_order_within_a_session",
        ),
        (
            "write_layout",
            "write_layout_is_the_output_order_with_where_each_text_is",
        ),
        (
            "llm_calls",
            "an_llm_call_belongs_to_the_turn_containing_it_and_to_none_between_turns",
        ),
        ("llm_calls", "an_llm_call_goes_to_a_turn_of_its_own_source"),
        (
            "llm_calls",
            "of_two_overlapping_chats_a_call_goes_to_the_one_that_saved_its_answer",
        ),
        (
            "llm_calls",
            "a_system_call_right_after_a_webui_chats_answer_is_its_title_call",
        ),
        ("llm_calls", "a_failed_attempt_goes_where_its_retry_goes"),
        (
            "llm_calls",
            "a_webui_turn_whose_rounds_name_its_calls_takes_no_other_call",
        ),
        (
            "llm_calls",
            "llm_calls_are_priced_by_exact_then_normalised_model_and_an_unknown_model_is_null",
        ),
        (
            "sessions",
            "sessions_count_rows_and_calls_and_flag_sessions_only_copies_hold",
        ),
        (
            "sessions",
            "a_session_takes_its_facts_from_the_row_that_starts_it",
        ),
        (
            "sessions",
            "sessions_sum_the_cost_of_their_calls_and_of_their_claude_code_usage",
        ),
    ];

    /// Every trait value a step compares a `kinds` trait with
    /// (`nanoclaw = 'outbound'`, `kind_turn_copy(source_kind) = 'webui'`,
    /// `nanoclaw IN ('inbound', 'outbound')`) is a value of its enum.
    #[test]
    fn every_trait_value_the_steps_compare_is_listed() -> Result<(), regex::Error> {
        let values = |t: &str| -> Vec<&'static str> {
            match t {
                "session_store" => SessionLayout::ALL.iter().map(|v| v.as_str()).collect(),
                "turn_copy" => TurnCopy::ALL.iter().map(|v| v.as_str()).collect(),
                _ => NanoclawPart::ALL.iter().map(|v| v.as_str()).collect(),
            }
        };
        let eq = regex::Regex::new(
            r"\b(?:kind_)?(session_store|turn_copy|nanoclaw)\b(?:\(\w+\))?\s*(?:=|<>|!=)\s*'([a-z_]+)'",
        )?;
        let within = regex::Regex::new(
            r"(?i)\b(?:kind_)?(session_store|turn_copy|nanoclaw)\b(?:\(\w+\))?\s+(?:NOT\s+)?IN\s*\(([^)]*)\)",
        )?;
        let literal = regex::Regex::new(r"'([a-z_]+)'")?;
        let mut compared = 0;
        for (file, sql) in STEPS {
            for c in eq.captures_iter(sql) {
                assert!(
                    values(&c[1]).contains(&&c[2]),
                    "{file}: {} = '{}'",
                    &c[1],
                    &c[2]
                );
                compared += 1;
            }
            for c in within.captures_iter(sql) {
                for l in literal.captures_iter(&c[2]) {
                    assert!(
                        values(&c[1]).contains(&&l[1]),
                        "{file}: {} IN '{}'",
                        &c[1],
                        &l[1]
                    );
                    compared += 1;
                }
            }
        }
        assert!(compared > 40, "{compared} comparisons found");
        Ok(())
    }

    /// The diagnostic codes are one list, `DiagCode`: every step names a code
    /// through `diag_code('…')` (no bare literal of one, none off the list),
    /// every code on the list is written by a step or an extractor, the
    /// macro fails a step for a code not on it, and design.md's table lists
    /// exactly the enum.
    #[test]
    fn every_diagnostic_code_of_the_steps_is_listed() -> Result<(), Box<dyn std::error::Error>> {
        let listed: Vec<&str> = DiagCode::ALL.iter().map(|c| c.as_str()).collect();
        let mut sorted = listed.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, listed, "DiagCode::ALL is alphabetical, each once");
        let wrapped = regex::Regex::new(r"diag_code\('([a-z_]+)'\)")?;
        let literal = regex::Regex::new(r"'([a-z][a-z_]*)'")?;
        let bare_code = regex::Regex::new(r"(?i)'[a-z_]+'\s+AS\s+code\b")?;
        let mut named = std::collections::BTreeSet::new();
        for (file, sql) in STEPS {
            for c in wrapped.captures_iter(sql) {
                assert!(
                    listed.contains(&&c[1]),
                    "{file}: diag_code('{}') is not in DiagCode",
                    &c[1]
                );
                named.insert(c[1].to_string());
            }
            for m in literal.find_iter(sql) {
                let code = &sql[m.start() + 1..m.end() - 1];
                let in_macro = sql[..m.start()].ends_with("diag_code(");
                assert!(
                    in_macro || !listed.contains(&code),
                    "{file}: the code '{code}' bare, not as diag_code('{code}')"
                );
            }
            assert!(
                bare_code.find(sql).is_none(),
                "{file}: a code literal not through diag_code()"
            );
        }
        // the extractors' codes, named by the enum in src/sources
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sources");
        for e in walkdir::WalkDir::new(root)
            .into_iter()
            .filter_map(Result::ok)
        {
            if e.path().extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(e.path())?;
                for c in DiagCode::ALL {
                    if text.contains(&format!("DiagCode::{c:?}")) {
                        named.insert(c.as_str().to_string());
                    }
                }
            }
        }
        let unused: Vec<&&str> = listed.iter().filter(|c| !named.contains(**c)).collect();
        assert!(
            unused.is_empty(),
            "codes no step or extractor writes: {unused:?}"
        );
        // the macro: a listed code is itself, another fails the statement
        let conn = Connection::open_in_memory()?;
        conn.execute_batch(&kinds_sql())?;
        let got: String = conn.query_row("SELECT diag_code('price_unknown')", [], |r| r.get(0))?;
        assert_eq!(got, "price_unknown");
        let err = conn
            .query_row("SELECT diag_code('price_unknwon')", [], |r| {
                r.get::<_, String>(0)
            })
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("diagnostic code not in diag::DiagCode: price_unknwon"),
            "{err}"
        );
        // design.md's table: exactly the enum, in its order
        let table = crate::testutil::design_section("### Diagnostic codes");
        let rows: Vec<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("| `")?.split('`').next())
            .collect();
        assert_eq!(rows, listed);
        Ok(())
    }

    /// Every `disabled_optimizers` setting and every dropped table of the
    /// steps is in design.md's list of planner workarounds.
    #[test]
    fn every_planner_workaround_is_listed() -> Result<(), regex::Error> {
        let list = crate::testutil::design_section("### Planner workarounds");
        // the rows of the list that name each kind of workaround
        let rows = |what: &str| -> Vec<&str> {
            list.lines()
                .filter(|l| l.starts_with(&format!("| `{what}")))
                .collect()
        };
        let dropped = regex::Regex::new(r"(?im)^\s*DROP\s+TABLE\s+(\w+)")?;
        for (name, sql) in STEPS {
            let step = name.split("__").next().unwrap_or_default();
            for c in dropped.captures_iter(sql) {
                let table = regex::Regex::new(&format!(r"\b{}\b", &c[1]))?;
                assert!(
                    rows("DROP TABLE")
                        .iter()
                        .any(|r| table.is_match(r) && r.contains(&format!("| {step} |"))),
                    "{name} drops {}, which design.md's planner workarounds do not list",
                    &c[1]
                );
            }
            if sql.contains("SET disabled_optimizers") {
                assert!(
                    rows("SET disabled_optimizers")
                        .iter()
                        .any(|r| r.contains(&format!("| {step} |"))),
                    "{name} disables optimizers: not in design.md's planner workarounds"
                );
            }
        }
        Ok(())
    }

    #[test]
    fn every_step_has_a_test_that_runs_it() {
        let source = include_str!("steps.rs");
        for (file, _) in STEPS {
            assert!(
                STEP_TESTS.iter().any(|(s, _)| *s == stem(file)),
                "{file} has no test in STEP_TESTS"
            );
        }
        for (step, test) in STEP_TESTS {
            assert!(
                STEPS.iter().any(|(f, _)| stem(f) == *step),
                "STEP_TESTS names {step}, which is no step"
            );
            let start = source.find(&format!("    fn {test}("));
            let body = start.map_or("", |i| {
                let rest = &source[i..];
                &rest[..rest.find("\n    }\n").unwrap_or(rest.len())]
            });
            assert!(
                body.contains(&format!("run_through(\"{step}\")")),
                "{test} (for {step}) is not a test here that runs {step}"
            );
        }
    }

    // ---- the harness -----------------------------------------------------

    type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

    /// The engine's inputs on hand-staged rows, and the steps run in order up
    /// to a named one.
    ///
    /// ```text
    /// Steps::new()                 params (load_id 'test', no --utc-offset) and empty
    ///                              prices, stage_events, stage_llm_calls, diagnostics,
    ///                              sources whose columns follow crate::schema and crate::diag
    /// .event(kind, &[(col, v)])    one stage_events row; .llm_call, .source, .diagnostic
    ///                              likewise; .price(model, provider, [in, out, read, write])
    ///                              one prices row (USD per token as text, "" NULL). A column not given is NULL, or, when the
    ///                              schema says NOT NULL, its default (see `defaults`).
    ///                              v is the value as text; `=…` is an SQL expression.
    /// .run_through("raw_events")   kinds, then each step not yet run up to that one
    /// .rows(sql)                   each row of a query, its columns as text joined by " | "
    /// ```
    /// Once `raw_events` has run the harness keeps `test_rows` (x_row,
    /// source_path, source_line, text), so a test can name the rows a later
    /// step drops.
    struct Steps {
        conn: Connection,
        /// Index in STEPS of the next step to run.
        next: usize,
    }

    fn duck_type(t: &DataType) -> Res<&'static str> {
        Ok(match t {
            DataType::Utf8 => "VARCHAR",
            DataType::Int64 => "BIGINT",
            DataType::Int32 => "INTEGER",
            DataType::Boolean => "BOOLEAN",
            DataType::Timestamp(TimeUnit::Microsecond, None) => "TIMESTAMP",
            other => return Err(format!("the harness has no DuckDB type for {other}").into()),
        })
    }

    fn quote(s: &str) -> String {
        format!("'{}'", s.replace('\'', "''"))
    }

    /// `v` (text) as an SQL literal of type `t`; `=expr` is the expression.
    fn literal(t: &DataType, v: &str) -> Res<String> {
        if let Some(expr) = v.strip_prefix('=') {
            return Ok(format!("({expr})"));
        }
        Ok(match t {
            DataType::Utf8 => quote(v),
            DataType::Int64 | DataType::Int32 => v.parse::<i64>()?.to_string(),
            DataType::Boolean => v.parse::<bool>()?.to_string(),
            _ => format!("CAST({} AS {})", quote(v), duck_type(t)?),
        })
    }

    /// `started_at_ms` of a UTC wall-clock time.
    fn ms(utc: &str) -> String {
        format!("=epoch_ms(TIMESTAMP {})", quote(utc))
    }

    fn entry(kind: &str) -> Res<&'static crate::store::Extractor> {
        Ok(REGISTRY
            .iter()
            .find(|e| e.kind == kind)
            .ok_or_else(|| format!("{kind} is no registry kind"))?)
    }

    /// Defaults of a kind's NOT NULL columns: what its store would give.
    fn defaults(kind: &str) -> Res<Vec<(&'static str, String)>> {
        let e = entry(kind)?;
        let role = match e.role {
            crate::store::StoreRole::Fixed(r) => r,
            crate::store::StoreRole::ByPath(_) => crate::schema::Role::Primary,
        };
        let instance = match e.agent {
            crate::schema::Agent::Nanobot => ".nanobot",
            crate::schema::Agent::Nanoclaw => ".",
        };
        Ok(vec![
            ("agent", e.agent.as_str().to_string()),
            ("instance", instance.to_string()),
            ("source_role", role.as_str().to_string()),
            ("source_path", kind.to_string()),
            ("turn_type", "system".to_string()),
            ("x_group", (Group::Record as i32).to_string()),
            ("x_sub", "0".to_string()),
            ("x_meta", "false".to_string()),
            ("x_legacy", "false".to_string()),
            ("x_start", "false".to_string()),
            (
                "x_row",
                "=(SELECT count(*) + 1 FROM stage_events)".to_string(),
            ),
            ("bytes", "0".to_string()),
            ("rows", "1".to_string()),
            ("status", "ok".to_string()),
            ("parts", "0".to_string()),
            ("redactions", "{}".to_string()),
        ])
    }

    impl Steps {
        fn new() -> Res<Steps> {
            let conn = Connection::open_in_memory()?;
            let mut ddl = String::from(
                "CREATE TABLE params AS SELECT CAST(NULL AS INTEGER) AS given_offset_minutes, 'test' AS load_id;\n",
            );
            ddl.push_str(crate::prices::PRICES_DDL);
            for (table, schema) in [
                ("stage_events", crate::schema::events_schema()),
                ("stage_llm_calls", crate::schema::llm_calls_schema()),
                ("diagnostics", crate::diag::diagnostics_schema()),
                ("sources", crate::schema::sources_schema()),
            ] {
                let columns = schema
                    .fields()
                    .iter()
                    .map(|f| {
                        let null = if f.is_nullable() { "" } else { " NOT NULL" };
                        Ok(format!("{} {}{null}", f.name(), duck_type(f.data_type())?))
                    })
                    .collect::<Res<Vec<String>>>()?;
                ddl.push_str(&format!("CREATE TABLE {table} ({});\n", columns.join(", ")));
            }
            conn.execute_batch(&ddl)?;
            Ok(Steps { conn, next: 0 })
        }

        fn insert(
            &self,
            table: &str,
            schema: &Schema,
            defaults: &[(&str, String)],
            given: &[(&str, &str)],
        ) -> Res {
            for (c, _) in given {
                schema.index_of(c)?;
            }
            let values = schema
                .fields()
                .iter()
                .map(|f| {
                    let v = given
                        .iter()
                        .find(|(c, _)| c == f.name())
                        .map(|(_, v)| v.to_string())
                        .or_else(|| {
                            defaults
                                .iter()
                                .find(|(c, _)| c == f.name() && !f.is_nullable())
                                .map(|(_, v)| v.clone())
                        });
                    v.map_or_else(|| Ok("NULL".to_string()), |v| literal(f.data_type(), &v))
                })
                .collect::<Res<Vec<String>>>()?;
            self.conn.execute_batch(&format!(
                "INSERT INTO {table} SELECT {};",
                values.join(", ")
            ))?;
            Ok(())
        }

        /// One staged event of `kind`.
        fn event(&self, kind: &str, given: &[(&str, &str)]) -> Res {
            let mut all = vec![("source_kind", kind)];
            all.extend_from_slice(given);
            self.insert(
                "stage_events",
                &crate::schema::events_schema(),
                &defaults(kind)?,
                &all,
            )
        }

        /// One `llm_calls` row of `.nanobot`.
        fn llm_call(&self, given: &[(&str, &str)]) -> Res {
            let defaults = [
                ("instance", ".nanobot".to_string()),
                ("source_path", ".nanobot/llm_usage.sqlite3".to_string()),
                (
                    "id",
                    "=(SELECT count(*) + 1 FROM stage_llm_calls)".to_string(),
                ),
            ];
            self.insert(
                "stage_llm_calls",
                &crate::schema::llm_calls_schema(),
                &defaults,
                given,
            )
        }

        /// One `prices` row: USD per token of input, output, cache read
        /// and cache write, as decimal text ("" is NULL).
        fn price(&self, model: &str, provider: &str, usd: [&str; 4]) -> Res {
            let v = |p: &str| {
                if p.is_empty() {
                    "NULL".to_string()
                } else {
                    format!("CAST({} AS DECIMAL(38,18))", quote(p))
                }
            };
            self.exec(&format!(
                "INSERT INTO prices VALUES ({}, {}, {}, {}, {}, {})",
                quote(model),
                quote(provider),
                v(usd[0]),
                v(usd[1]),
                v(usd[2]),
                v(usd[3])
            ))
        }

        /// One discovered store (a `sources` row).
        fn source(&self, kind: &str, path: &str, given: &[(&str, &str)]) -> Res {
            let mut all = vec![("source_kind", kind), ("source_path", path)];
            all.extend_from_slice(given);
            self.insert(
                "sources",
                &crate::schema::sources_schema(),
                &defaults(kind)?,
                &all,
            )
        }

        /// One diagnostic the extractors reported.
        fn diagnostic(&self, given: &[(&str, &str)]) -> Res {
            let defaults = [
                ("kind", "warning".to_string()),
                ("message", "test".to_string()),
            ];
            self.insert(
                "diagnostics",
                &crate::diag::diagnostics_schema(),
                &defaults,
                given,
            )
        }

        fn exec(&self, sql: &str) -> Res {
            self.conn.execute_batch(sql)?;
            Ok(())
        }

        /// Run `kinds` (first time) and every step not yet run up to and
        /// including `step` (a name without `V###__` and `.sql`).
        fn run_through(&mut self, step: &str) -> Res {
            let last = STEPS
                .iter()
                .position(|(f, _)| stem(f) == step)
                .ok_or_else(|| format!("no step {step}"))?;
            if last < self.next {
                return Err(format!("{step} has run already").into());
            }
            if self.next == 0 {
                run_kinds(&self.conn)?;
            }
            for s in &STEPS[self.next..=last] {
                run_step(&self.conn, s)?;
                if stem(s.0) == "raw_events" {
                    self.exec(
                        "CREATE TABLE test_rows AS
                         SELECT x_row, source_path, source_line, text FROM raw_events",
                    )?;
                }
            }
            self.next = last + 1;
            Ok(())
        }

        /// Each row of `sql`, its columns as text (NULL: `NULL`) joined by " | ".
        fn rows(&self, sql: &str) -> Res<Vec<String>> {
            let mut stmt = self
                .conn
                .prepare(&format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})"))?;
            let mut rows = stmt.query([])?;
            let n = rows.as_ref().map_or(0, |s| s.column_count());
            let mut out = Vec::new();
            while let Some(r) = rows.next()? {
                let cols = (0..n)
                    .map(|i| {
                        Ok(r.get::<_, Option<String>>(i)?
                            .unwrap_or_else(|| "NULL".into()))
                    })
                    .collect::<Res<Vec<String>>>()?;
                out.push(cols.join(" | "));
            }
            Ok(out)
        }
    }

    const DB: &str = "nanobot.session_db";
    const JSONL: &str = "nanobot.session_jsonl";
    const WEBUI: &str = "nanobot.webui_transcript";
    const CLI: &str = "nanobot.cli_history";
    const CATALOG: &str = "nanoclaw.catalog";
    const INBOUND: &str = "nanoclaw.inbound";
    const OUTBOUND: &str = "nanoclaw.outbound";
    const TRANSCRIPT: &str = "nanoclaw.claude_transcript";

    const WS1_DB: &str = ".nanobot/sessions/ws1/sessions.sqlite3";
    const WEBUI_C1: &str = ".nanobot/webui/websocket_c1.jsonl";

    /// session_uid of a nanobot session of `.nanobot` (docs/design.md "Session identity").
    fn uid(namespace: &str, session_id: &str) -> String {
        use sha2::Digest;
        let d = sha2::Sha256::digest(format!("nanobot\0.nanobot\0{namespace}\0{session_id}"));
        crate::store::hex(&d[..8])
    }

    /// The session `websocket:c1` in the database of namespace ws1: two turns
    /// in local time, each started by a `user` row whose turn records
    /// `llm_calls` of source `user`.
    ///
    /// ```text
    /// line seq  turn_type  text    ts_local
    ///  1    1   user       hi      2026-03-02 10:00:00
    ///  2    2   assistant  hello   2026-03-02 10:00:30
    ///  3    3   user       again   2026-03-02 11:00:00
    ///  4    4   assistant  sure    2026-03-02 11:00:20
    /// ```
    fn two_turns(h: &Steps) -> Res {
        for (line, turn_type, text, ts) in [
            ("1", "user", "hi", "2026-03-02 10:00:00"),
            ("2", "assistant", "hello", "2026-03-02 10:00:30"),
            ("3", "user", "again", "2026-03-02 11:00:00"),
            ("4", "assistant", "sure", "2026-03-02 11:00:20"),
        ] {
            h.event(
                DB,
                &[
                    ("session_id", "websocket:c1"),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("source_line", line),
                    ("seq", line),
                    ("turn_type", turn_type),
                    ("text", text),
                    ("x_match", text),
                    ("x_record", &format!("r{line}")),
                    (
                        "x_call_source",
                        if turn_type == "user" { "user" } else { "=NULL" },
                    ),
                    ("ts_local", ts),
                ],
            )?;
        }
        Ok(())
    }

    /// A WebUI transcript record of `websocket:c1` (true UTC).
    fn webui(h: &Steps, line: &str, turn: &str, turn_type: &str, text: &str, utc: &str) -> Res {
        h.event(
            WEBUI,
            &[
                ("session_id", "websocket:c1"),
                ("source_path", WEBUI_C1),
                ("source_line", line),
                ("x_turn", turn),
                ("turn_type", turn_type),
                ("text", text),
                ("x_match", text),
                ("ts_utc", utc),
            ],
        )
    }

    /// The value of `x_group` of a group, as text.
    fn group(g: Group) -> String {
        (g as i32).to_string()
    }

    /// The source lines of the rows of `path` a step dropped, with the reason.
    fn dropped(h: &Steps, path: &str) -> Res<Vec<String>> {
        h.rows(&format!(
            "SELECT t.source_line, d.reason FROM dropped_rows d JOIN test_rows t USING (x_row)
             WHERE t.source_path = {} ORDER BY t.source_line",
            quote(path)
        ))
    }

    #[test]
    fn the_harness_stages_a_row_of_every_kind() -> Res {
        let mut h = Steps::new()?;
        for e in REGISTRY {
            h.event(e.kind, &[])?;
        }
        h.run_through("raw_events")?;
        assert_eq!(
            h.rows("SELECT count(*), count(DISTINCT source_kind) FROM raw_events")?,
            vec![format!("{n} | {n}", n = REGISTRY.len())]
        );
        Ok(())
    }

    #[test]
    fn session_identity_keeps_two_namespaces_apart_and_warns_on_an_ambiguous_key() -> Res {
        let mut h = Steps::new()?;
        for ns in ["ws1", "ws2"] {
            let path = format!(".nanobot/sessions/{ns}/sessions.sqlite3");
            h.event(
                DB,
                &[
                    ("session_id", "cli:direct"),
                    ("x_namespace", ns),
                    ("source_path", &path),
                ],
            )?;
        }
        h.event(
            DB,
            &[
                ("session_id", "websocket:c1"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
            ],
        )?;
        // WebUI rows name a key, not a namespace
        h.event(
            WEBUI,
            &[("session_id", "websocket:c1"), ("source_path", WEBUI_C1)],
        )?;
        h.event(
            WEBUI,
            &[
                ("session_id", "cli:direct"),
                ("source_path", ".nanobot/webui/cli.jsonl"),
            ],
        )?;
        h.run_through("session_identity")?;
        // two workspaces' cli:direct are two sessions
        assert_eq!(
            h.rows(
                "SELECT namespace, session_uid FROM session_identity
                 WHERE is_store AND session_id = 'cli:direct' ORDER BY namespace"
            )?,
            vec![
                format!("ws1 | {}", uid("ws1", "cli:direct")),
                format!("ws2 | {}", uid("ws2", "cli:direct")),
            ]
        );
        // the one namespace holding the key is the WebUI row's
        assert_eq!(
            h.rows(
                "SELECT namespace, session_uid FROM session_identity
                 WHERE NOT is_store AND session_id = 'websocket:c1'"
            )?,
            vec![format!("ws1 | {}", uid("ws1", "websocket:c1"))]
        );
        // two namespaces hold cli:direct: '' and one warning
        assert_eq!(
            h.rows(
                "SELECT namespace, unresolved FROM session_identity
                 WHERE NOT is_store AND session_id = 'cli:direct'"
            )?,
            vec![" | true"]
        );
        assert_eq!(
            h.rows("SELECT kind, code, session_id, source_path FROM diagnostics")?,
            vec!["warning | namespace_unresolved | cli:direct | .nanobot/webui/cli.jsonl"]
        );
        Ok(())
    }

    /// ws1: a database and a legacy workspace file of the same session;
    /// ws2: an import that never completed (its database has no tables), a
    /// canonical JSONL and a legacy-named one beside it.
    fn legacy_and_aborted_import(h: &Steps) -> Res {
        const LEGACY: &str = ".nanobot/workspace/sessions/cli_direct.jsonl";
        const WS2_DB: &str = ".nanobot/sessions/ws2/sessions.sqlite3";
        const WS2_JSONL: &str = ".nanobot/sessions/ws2/Y2xpOmRpcmVjdA.jsonl";
        const WS2_LEGACY: &str = ".nanobot/sessions/ws2/cli_direct.jsonl";
        h.source(DB, WS1_DB, &[])?;
        h.source(JSONL, LEGACY, &[("source_role", "primary")])?;
        h.source(DB, WS2_DB, &[])?;
        h.source(JSONL, WS2_JSONL, &[("source_role", "secondary")])?;
        h.source(JSONL, WS2_LEGACY, &[("source_role", "secondary")])?;
        h.diagnostic(&[("source_path", WS2_DB), ("code", "session_db_empty")])?;
        for (kind, path, ns, legacy, role) in [
            (DB, WS1_DB, "ws1", "false", "primary"),
            (JSONL, LEGACY, "ws1", "true", "primary"),
            (JSONL, WS2_JSONL, "ws2", "false", "secondary"),
            (JSONL, WS2_LEGACY, "ws2", "true", "secondary"),
        ] {
            h.event(
                kind,
                &[
                    ("session_id", "cli:direct"),
                    ("x_namespace", ns),
                    ("source_path", path),
                    ("x_legacy", legacy),
                    ("source_role", role),
                ],
            )?;
        }
        Ok(())
    }

    #[test]
    fn store_roles_demote_a_legacy_copy_and_promote_the_jsonl_of_an_empty_database() -> Res {
        let mut h = Steps::new()?;
        legacy_and_aborted_import(&h)?;
        h.run_through("store_roles")?;
        assert_eq!(
            h.rows("SELECT source_path, source_role FROM sources ORDER BY source_path")?,
            vec![
                ".nanobot/sessions/ws1/sessions.sqlite3 | primary",
                // the JSONL of the aborted import are the store of record…
                ".nanobot/sessions/ws2/Y2xpOmRpcmVjdA.jsonl | primary",
                // …but a legacy-named file nanobot never loads stays a copy
                ".nanobot/sessions/ws2/cli_direct.jsonl | secondary",
                ".nanobot/sessions/ws2/sessions.sqlite3 | primary",
                // the database holds the session: the legacy file is a copy
                ".nanobot/workspace/sessions/cli_direct.jsonl | secondary",
            ]
        );
        Ok(())
    }

    #[test]
    fn raw_events_take_the_final_role_the_kind_traits_and_a_row_identity() -> Res {
        let mut h = Steps::new()?;
        legacy_and_aborted_import(&h)?;
        h.event(WEBUI, &[("session_id", "cli:direct")])?;
        h.event(CLI, &[])?;
        h.event(OUTBOUND, &[("session_id", "s1")])?;
        h.run_through("raw_events")?;
        assert_eq!(
            h.rows(
                "SELECT source_path, source_role, session_store, message_store, turn_copy,
                        prompt_copy, nanoclaw
                 FROM raw_events ORDER BY source_path"
            )?,
            vec![
                ".nanobot/sessions/ws1/sessions.sqlite3 | primary | db | true | NULL | false | NULL",
                ".nanobot/sessions/ws2/Y2xpOmRpcmVjdA.jsonl | primary | jsonl | true | NULL | false | NULL",
                ".nanobot/sessions/ws2/cli_direct.jsonl | secondary | jsonl | true | NULL | false | NULL",
                ".nanobot/workspace/sessions/cli_direct.jsonl | secondary | jsonl | true | NULL | false | NULL",
                "nanobot.cli_history | secondary | NULL | false | NULL | true | NULL",
                "nanobot.webui_transcript | secondary | NULL | false | webui | false | NULL",
                "nanoclaw.outbound | primary | NULL | true | NULL | false | outbound",
            ]
        );
        // the legacy copy and the database are one session
        assert_eq!(
            h.rows(
                "SELECT count(DISTINCT session_uid) FROM raw_events
                 WHERE source_path IN ('.nanobot/sessions/ws1/sessions.sqlite3',
                                       '.nanobot/workspace/sessions/cli_direct.jsonl')"
            )?,
            vec!["1"]
        );
        assert_eq!(
            h.rows("SELECT count(*) = count(DISTINCT x_row) FROM raw_events")?,
            vec!["true"]
        );
        Ok(())
    }

    #[test]
    fn session_copy_dedup_drops_what_the_primary_holds_and_keeps_what_only_the_copy_has() -> Res {
        const COPY: &str = ".nanobot/sessions/ws1/d2Vic29ja2V0OmMx.jsonl";
        let mut h = Steps::new()?;
        let session = [("session_id", "websocket:c1"), ("x_namespace", "ws1")];
        let row = |kind, path, line: &str, seq: &str, record: &str, msgkey: &str| {
            let mut given = session.to_vec();
            given.extend([
                ("source_path", path),
                ("source_line", line),
                ("seq", seq),
                ("x_record", record),
                ("x_msgkey", msgkey),
            ]);
            if kind == JSONL {
                given.push(("source_role", "secondary"));
            }
            h.event(kind, &given)
        };
        row(DB, WS1_DB, "1", "1", "A", "user\t2026-03-02T10:00:00")?;
        row(
            DB,
            WS1_DB,
            "2",
            "3",
            "C-rewritten",
            "assistant\t2026-03-02T10:00:40",
        )?;
        // the frozen copy: the same record A, B only it has (lost to /new),
        // and the database's message C as it was before nanobot rewrote it
        row(JSONL, COPY, "2", "1", "A", "user\t2026-03-02T10:00:00")?;
        row(JSONL, COPY, "3", "2", "B", "user\t2026-03-02T10:00:20")?;
        row(JSONL, COPY, "4", "3", "C", "assistant\t2026-03-02T10:00:40")?;
        // the copy's session metadata (model preset)
        let mut meta = session.to_vec();
        meta.extend([
            ("source_path", COPY),
            ("source_line", "1"),
            ("x_meta", "true"),
            ("source_role", "secondary"),
        ]);
        h.event(JSONL, &meta)?;
        h.run_through("deduped_session_copies")?;
        assert_eq!(
            dropped(&h, COPY)?,
            vec![
                "1 | session metadata of a copy; the primary store has the session",
                "2 | same record in the primary store",
                "4 | same message in the primary store, rewritten there (same position, role and timestamp)",
            ]
        );
        assert_eq!(
            h.rows(
                "SELECT source_path, source_line FROM events_kept ORDER BY source_path, source_line"
            )?,
            vec![
                format!("{COPY} | 3"),
                format!("{WS1_DB} | 1"),
                format!("{WS1_DB} | 2"),
            ]
        );
        Ok(())
    }

    #[test]
    fn tz_offset_of_120_minutes_from_an_llm_call_pair() -> Res {
        let mut h = Steps::new()?;
        h.event(
            DB,
            &[
                ("session_id", "cli:direct"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("seq", "1"),
                ("turn_type", "user"),
                ("x_call_source", "user"),
                ("ts_local", "2026-03-02 12:00:00"),
            ],
        )?;
        // the turn's first call, 3 s after the message, in UTC
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms("2026-03-02 10:00:03")),
        ])?;
        // a call of another source is no evidence for a `user` message
        h.llm_call(&[
            ("source", "cron"),
            ("started_at_ms", &ms("2026-03-02 11:00:05")),
        ])?;
        h.run_through("tz_offsets")?;
        assert_eq!(
            h.rows("SELECT instance, day, offset_minutes, kind FROM tz_evidence")?,
            vec![".nanobot | 2026-03-02 | 120 | llm"]
        );
        assert_eq!(
            h.rows(
                "SELECT instance, first_day, last_day, offset_minutes, pairs, agreement FROM tz_offsets"
            )?,
            vec![".nanobot | 2026-03-02 | 2026-03-02 | 120 | 1 | 1.0"]
        );
        Ok(())
    }

    /// A `cli:direct` user row of the database store (workspace ws1) whose
    /// turn's calls carry `source`, at naive local time `local`.
    fn cli_user(h: &Steps, seq: &str, source: &str, local: &str) -> Res {
        h.event(
            DB,
            &[
                ("session_id", "cli:direct"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("seq", seq),
                ("turn_type", "user"),
                ("x_call_source", source),
                ("ts_local", local),
            ],
        )
    }

    /// `cli:direct` user rows at these naive local times (seq 1, 2, …) and
    /// `user` calls starting at these UTC times.
    fn users_and_calls(h: &Steps, locals: &[&str], calls: &[&str]) -> Res {
        for (i, local) in locals.iter().enumerate() {
            cli_user(h, &(i + 1).to_string(), "user", local)?;
        }
        for utc in calls {
            h.llm_call(&[("source", "user"), ("started_at_ms", &ms(utc))])?;
        }
        Ok(())
    }

    #[test]
    fn a_tie_in_the_offset_vote_goes_to_the_neighbouring_days_offset() -> Res {
        let mut h = Steps::new()?;
        // Chatham (+13:45): each user message's call starts 2 s after it,
        // in UTC; on 2026-03-02 a cron message at 09:30:00 meets a cron call
        // at 09:00:05 UTC by chance (a 30-minute offset, one pair), which
        // ties the day's one true pair
        let user = |seq: &str, source: &str, local: &str| cli_user(&h, seq, source, local);
        user("1", "user", "2026-03-01 09:00:00")?;
        user("2", "user", "2026-03-01 11:00:00")?;
        user("3", "user", "2026-03-02 09:00:00")?;
        user("4", "cron", "2026-03-02 09:30:00")?;
        for (source, utc) in [
            ("user", "2026-02-28 19:15:02"),
            ("user", "2026-02-28 21:15:02"),
            ("user", "2026-03-01 19:15:02"),
            ("cron", "2026-03-02 09:00:05"),
        ] {
            h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
        }
        h.run_through("tz_offsets")?;
        assert_eq!(
            h.rows("SELECT day, offset_minutes, pairs, day_pairs FROM tz_days ORDER BY day")?,
            vec!["2026-03-01 | 825 | 2 | 5", "2026-03-02 | 825 | 1 | 2"]
        );
        Ok(())
    }

    #[test]
    fn one_pair_shows_a_dst_step_but_not_a_jump_to_another_zone() -> Res {
        let mut h = Steps::new()?;
        // Chatham (+13:45, +12:45 from the DST end): 2026-03-01 has two true
        // pairs; on 03-02 the only pair is a cron message at 09:30:00 meeting
        // a cron call at 09:00:05 UTC by chance (+00:30); on 03-03 one true
        // pair at +12:45, an hour from 03-01's offset (a DST step)
        let user = |seq: &str, source: &str, local: &str| cli_user(&h, seq, source, local);
        user("1", "user", "2026-03-01 09:00:00")?;
        user("2", "user", "2026-03-01 11:00:00")?;
        user("3", "cron", "2026-03-02 09:30:00")?;
        user("4", "user", "2026-03-03 09:00:00")?;
        // 03-04: a chance cron pair at +13:15, half an hour from 03-01's
        // offset (only Lord Howe steps by half an hour, between +10:30 and +11:00)
        user("5", "cron", "2026-03-04 09:30:00")?;
        for (source, utc) in [
            ("user", "2026-02-28 19:15:02"),
            ("user", "2026-02-28 21:15:02"),
            ("cron", "2026-03-02 09:00:05"),
            ("user", "2026-03-02 20:15:02"),
            ("cron", "2026-03-03 20:15:05"),
        ] {
            h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
        }
        h.run_through("tz_offsets")?;
        assert_eq!(
            h.rows("SELECT day, offset_minutes, pairs, day_pairs FROM tz_days ORDER BY day")?,
            vec![
                "2026-03-01 | 825 | 2 | 3",
                "2026-03-02 | 825 | 0 | 1",
                "2026-03-03 | 765 | 1 | 1",
                "2026-03-04 | 825 | 0 | 1",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_tie_of_lone_pairs_goes_to_a_dst_step_from_the_nearest_strong_day() -> Res {
        let mut h = Steps::new()?;
        // Adelaide (+10:30 until the 2026-04-05 fall-back, then +09:30): on
        // 04-04, the first day, one true pair at +10:30 and a message whose
        // call is another's meets a call by chance at +08:45 (one pair
        // each); 04-05 is won at +09:30 by two pairs. Not +08:45, 45 minutes
        // from the strong day (explore seed 296)
        users_and_calls(
            &h,
            &[
                "2026-04-04 06:42:00",
                "2026-04-04 08:25:28",
                "2026-04-05 08:00:00",
                "2026-04-05 13:00:00",
            ],
            &[
                "2026-04-03 20:12:02",
                "2026-04-03 23:40:30",
                "2026-04-04 22:30:02",
                "2026-04-05 03:30:02",
            ],
        )?;
        h.run_through("tz_offsets")?;
        assert_eq!(
            h.rows(
                "SELECT day, d.offset_minutes, list(e.offset_minutes ORDER BY e.offset_minutes)
                 FROM tz_days d JOIN tz_evidence e USING (instance, day)
                 GROUP BY ALL ORDER BY day"
            )?,
            vec![
                "2026-04-04 | 630 | [525, 630]",
                "2026-04-05 | 570 | [270, 570, 570]",
            ]
        );
        Ok(())
    }

    #[test]
    fn timestamps_take_the_derived_offset_of_the_nearest_evidence_day() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        // evidence on 2026-03-02: a call 3 s after `hi`, two hours earlier in UTC
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms("2026-03-02 08:00:03")),
        ])?;
        // no evidence on 2026-03-05: the nearest evidence day's offset
        h.event(
            DB,
            &[
                ("session_id", "websocket:c1"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("source_line", "5"),
                ("seq", "5"),
                ("ts_local", "2026-03-05 09:00:00"),
            ],
        )?;
        // true UTC stays; an instance without evidence is read as UTC
        webui(
            &h,
            "1",
            "t1",
            "user",
            "from the webui",
            "2026-03-02 08:00:01",
        )?;
        h.event(
            DB,
            &[
                ("instance", ".nanobot-work"),
                ("session_id", "cli:direct"),
                ("source_path", ".nanobot-work/sessions/w/sessions.sqlite3"),
                ("source_line", "9"),
                ("ts_local", "2026-03-02 10:00:00"),
            ],
        )?;
        h.run_through("timestamps")?;
        assert_eq!(
            h.rows(
                "SELECT instance, source_line, ts_local, time_basis, utc_offset_minutes, timestamp_utc
                 FROM events_utc ORDER BY instance, source_kind, source_line"
            )?,
            vec![
                ".nanobot | 1 | 2026-03-02 10:00:00 | local_derived | 120 | 2026-03-02 08:00:00",
                ".nanobot | 2 | 2026-03-02 10:00:30 | local_derived | 120 | 2026-03-02 08:00:30",
                ".nanobot | 3 | 2026-03-02 11:00:00 | local_derived | 120 | 2026-03-02 09:00:00",
                ".nanobot | 4 | 2026-03-02 11:00:20 | local_derived | 120 | 2026-03-02 09:00:20",
                ".nanobot | 5 | 2026-03-05 09:00:00 | local_derived | 120 | 2026-03-05 07:00:00",
                ".nanobot | 1 | NULL | utc | NULL | 2026-03-02 08:00:01",
                ".nanobot-work | 9 | 2026-03-02 10:00:00 | local_as_utc | 0 | 2026-03-02 10:00:00",
            ]
        );
        Ok(())
    }

    /// Berlin, CEST (+120) until 2026-10-25 03:00, then CET (+60): in
    /// `cli:direct` of ws1, a message (and its call 2 s later) on the 24th,
    /// one at 01:30 and one at 09:00 on the 25th; two more rows without a
    /// call in between.
    fn berlin_switch_day(h: &Steps) -> Res {
        let row = |seq: &str, turn_type: &str, local: &str| {
            h.event(
                DB,
                &[
                    ("session_id", "cli:direct"),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("seq", seq),
                    ("turn_type", turn_type),
                    (
                        "x_call_source",
                        if turn_type == "user" { "user" } else { "=NULL" },
                    ),
                    ("ts_local", local),
                ],
            )
        };
        row("1", "user", "2026-10-24 20:00:00")?;
        row("2", "user", "2026-10-25 01:30:00")?;
        row("3", "assistant", "2026-10-25 01:40:00")?;
        row("4", "assistant", "2026-10-25 08:00:00")?;
        row("5", "user", "2026-10-25 09:00:00")?;
        row("6", "user", "2026-10-25 09:30:00")?;
        for utc in [
            "2026-10-24 18:00:02",
            "2026-10-24 23:30:02",
            "2026-10-25 08:00:02",
            "2026-10-25 08:30:02",
        ] {
            h.llm_call(&[("source", "user"), ("started_at_ms", &ms(utc))])?;
        }
        Ok(())
    }

    #[test]
    fn rows_of_a_switch_day_take_the_offset_in_force_at_their_time() -> Res {
        let mut h = Steps::new()?;
        berlin_switch_day(&h)?;
        h.run_through("timestamps")?;
        assert_eq!(
            h.rows(
                "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
            )?,
            vec!["2026-10-25 | 120 | 60 | 2026-10-25 01:30:00 | 2026-10-25 09:00:00"]
        );
        assert_eq!(
            h.rows(
                "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq IS NOT NULL ORDER BY seq"
            )?,
            vec![
                "1 | 120 | local_derived | 2026-10-24 18:00:00",
                "2 | 120 | local_derived | 2026-10-24 23:30:00",
                // after the last CEST pair, before the first CET one
                "3 | 120 | local_uncertain | 2026-10-24 23:40:00",
                "4 | 60 | local_uncertain | 2026-10-25 07:00:00",
                "5 | 60 | local_derived | 2026-10-25 08:00:00",
                "6 | 60 | local_derived | 2026-10-25 08:30:00",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_utc_row_and_a_call_take_the_offset_in_force_at_their_instant() -> Res {
        let mut h = Steps::new()?;
        berlin_switch_day(&h)?;
        // rows with only a UTC time: before the switch, nearer its last
        // CEST pair (23:30 UTC), nearer its first CET pair (08:00 UTC),
        // after it, two days later (no evidence: the 25th's); and one of
        // an instance without evidence
        for (i, utc) in [
            "2026-10-24 18:30:00",
            "2026-10-24 23:35:00",
            "2026-10-25 07:50:00",
            "2026-10-25 12:00:00",
            "2026-10-27 10:00:00",
        ]
        .iter()
        .enumerate()
        {
            h.event(
                WEBUI,
                &[
                    ("session_id", "websocket:c1"),
                    ("source_path", WEBUI_C1),
                    ("seq", &(i + 1).to_string()),
                    ("text", &format!("utc {i}")),
                    ("ts_utc", utc),
                ],
            )?;
        }
        h.event(
            WEBUI,
            &[
                ("instance", ".nanobot-work"),
                ("session_id", "websocket:c2"),
                ("source_path", ".nanobot-work/webui/websocket_c2.jsonl"),
                ("seq", "1"),
                ("ts_utc", "2026-10-25 12:00:00"),
            ],
        )?;
        h.llm_call(&[
            ("instance", ".nanobot-work"),
            ("source_path", ".nanobot-work/llm_usage.sqlite3"),
            ("source", "user"),
            ("started_at_ms", &ms("2026-10-25 12:00:01")),
        ])?;
        h.run_through("llm_calls")?;
        assert_eq!(
            h.rows(
                "SELECT instance, timestamp_utc::TIMESTAMP, timestamp_local, utc_offset_minutes, time_basis
                 FROM events WHERE source_kind = 'nanobot.webui_transcript'
                 ORDER BY instance, timestamp_utc"
            )?,
            vec![
                ".nanobot | 2026-10-24 18:30:00 | 2026-10-24 20:30:00 | 120 | utc",
                ".nanobot | 2026-10-24 23:35:00 | 2026-10-25 01:35:00 | 120 | utc",
                ".nanobot | 2026-10-25 07:50:00 | 2026-10-25 08:50:00 | 60 | utc",
                ".nanobot | 2026-10-25 12:00:00 | 2026-10-25 13:00:00 | 60 | utc",
                ".nanobot | 2026-10-27 10:00:00 | 2026-10-27 11:00:00 | 60 | utc",
                ".nanobot-work | 2026-10-25 12:00:00 | NULL | NULL | utc",
            ]
        );
        assert_eq!(
            h.rows(
                "SELECT instance, started_at::TIMESTAMP, started_at_local, utc_offset_minutes
                 FROM llm_calls ORDER BY instance, started_at"
            )?,
            vec![
                ".nanobot | 2026-10-24 18:00:02 | 2026-10-24 20:00:02 | 120",
                ".nanobot | 2026-10-24 23:30:02 | 2026-10-25 01:30:02 | 120",
                ".nanobot | 2026-10-25 08:00:02 | 2026-10-25 09:00:02 | 60",
                ".nanobot | 2026-10-25 08:30:02 | 2026-10-25 09:30:02 | 60",
                ".nanobot-work | 2026-10-25 12:00:01 | NULL | NULL",
            ]
        );
        assert_eq!(
            h.rows(
                "SELECT kind, instance, source_path, message FROM diagnostics
                 WHERE code = 'local_time_unknown'"
            )?,
            vec![
                "loss | .nanobot-work | .nanobot-work/llm_usage.sqlite3 | no local time for 1 events rows and 1 llm_calls rows with only a UTC time: instance .nanobot-work holds no evidence of its UTC offset (timestamp_local and started_at_local are NULL; --utc-offset gives one)"
            ]
        );
        Ok(())
    }

    /// New York, -04:00 until 2026-11-01 02:00, then -05:00: two pairs at
    /// -04:00 on 10-31; on 11-01 one pair at -04:00 (at `before`, local)
    /// and one at -05:00 (08:20), and two rows without a call (03:00, 09:00).
    fn new_york_fall_back(h: &Steps, before: &str, before_utc: &str) -> Res {
        users_and_calls(
            h,
            &[
                "2026-10-31 10:00:00",
                "2026-10-31 12:00:00",
                before,
                "2026-11-01 08:20:00",
            ],
            &[
                "2026-10-31 14:00:02",
                "2026-10-31 16:00:02",
                before_utc,
                "2026-11-01 13:20:02",
            ],
        )?;
        cli_user(h, "5", "=NULL", "2026-11-01 03:00:00")?;
        cli_user(h, "6", "=NULL", "2026-11-01 09:00:00")
    }

    #[test]
    fn a_switch_inside_a_day_its_old_offset_kept_by_a_tie() -> Res {
        // 11-01 ties one pair against one (and chance pairs) and continuity
        // keeps -04:00 as its offset; its -05:00 pair follows the -04:00 one,
        // which is before 04:00: the switch is inside the day, and the rows
        // after the -05:00 pair take -05:00 (explore seed 302)
        let mut h = Steps::new()?;
        new_york_fall_back(&h, "2026-11-01 00:30:00", "2026-11-01 04:30:02")?;
        h.run_through("timestamps")?;
        assert_eq!(
            h.rows("SELECT day, offset_minutes FROM tz_days ORDER BY day")?,
            vec!["2026-10-31 | -240", "2026-11-01 | -240"]
        );
        assert_eq!(
            h.rows(
                "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
            )?,
            vec!["2026-11-01 | -240 | -300 | 2026-11-01 00:30:00 | 2026-11-01 08:20:00"]
        );
        assert_eq!(
            h.rows(
                "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq >= 3 ORDER BY seq"
            )?,
            vec![
                "3 | -240 | local_derived | 2026-11-01 04:30:00",
                "4 | -300 | local_derived | 2026-11-01 13:20:00",
                // nearer the -04:00 pair than the -05:00 one
                "5 | -240 | local_uncertain | 2026-11-01 07:00:00",
                "6 | -300 | local_derived | 2026-11-01 14:00:00",
            ]
        );
        // the same day with its -04:00 pair at 05:30: no zone changes offset
        // after 04:00, so one pair of a DST step is no evidence of a switch
        let mut h = Steps::new()?;
        new_york_fall_back(&h, "2026-11-01 05:30:00", "2026-11-01 09:30:02")?;
        h.run_through("timestamps")?;
        assert_eq!(h.rows("SELECT day FROM tz_switches")?, Vec::<String>::new());
        assert_eq!(
            h.rows("SELECT seq, utc_offset_minutes FROM events_utc WHERE seq >= 3 ORDER BY seq")?,
            vec!["3 | -240", "4 | -240", "5 | -240", "6 | -240"]
        );
        Ok(())
    }

    #[test]
    fn a_row_that_pairs_at_both_offsets_of_a_switch_does_not_bound_it() -> Res {
        let mut h = Steps::new()?;
        // Lord Howe, +10:30 until 2026-10-04 02:00, then +11:00: on 10-04 a
        // pair at +10:30 13 s before the switch; at 08:53:27 a message meets
        // its call at +11:00 and a later call 4 s off at +10:30; two more
        // pairs at +11:00 win the day. The switch lies between 01:59:47 and
        // 11:02:29, not nowhere (explore seed 161)
        users_and_calls(
            &h,
            &[
                "2026-10-03 10:00:00",
                "2026-10-03 12:00:00",
                "2026-10-04 01:59:47",
                "2026-10-04 08:53:27",
                "2026-10-04 11:02:29",
                "2026-10-04 12:00:00",
            ],
            &[
                "2026-10-02 23:30:02",
                "2026-10-03 01:30:02",
                "2026-10-03 15:29:49",
                "2026-10-03 21:53:29",
                "2026-10-03 22:23:31",
                "2026-10-04 00:02:31",
                "2026-10-04 01:00:02",
            ],
        )?;
        h.run_through("timestamps")?;
        assert_eq!(
            h.rows(
                "SELECT day, before_offset, after_offset, last_before, first_after FROM tz_switches"
            )?,
            vec!["2026-10-04 | 630 | 660 | 2026-10-04 01:59:47 | 2026-10-04 11:02:29"]
        );
        assert_eq!(
            h.rows(
                "SELECT seq, utc_offset_minutes, time_basis, timestamp_utc FROM events_utc
                 WHERE seq >= 3 ORDER BY seq"
            )?,
            vec![
                "3 | 630 | local_derived | 2026-10-03 15:29:47",
                "4 | 660 | local_uncertain | 2026-10-03 21:53:27",
                "5 | 660 | local_derived | 2026-10-04 00:02:29",
                "6 | 660 | local_derived | 2026-10-04 01:00:00",
            ]
        );
        Ok(())
    }

    #[test]
    fn timestamps_take_the_given_offset_first() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        // evidence says +120, --utc-offset -01:00 wins
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms("2026-03-02 08:00:03")),
        ])?;
        h.exec("UPDATE params SET given_offset_minutes = -60")?;
        h.run_through("timestamps")?;
        assert_eq!(
            h.rows(
                "SELECT DISTINCT time_basis, utc_offset_minutes, timestamp_utc - ts_local FROM events_utc"
            )?,
            vec!["local_given | -60 | 01:00:00"]
        );
        Ok(())
    }

    /// One row of session `websocket:c1` (namespace ws1, local time =
    /// UTC): `(seq, turn_type, text or tool id, ts_local)`; a `user` row's
    /// call source is `user`, or `cron` when the text says `cron`; an
    /// assistant text starting `subagent` is a message nanobot injected
    /// after its turn, a system one a result injected into the running turn.
    fn session_rows(h: &Steps, rows: &[(i64, &str, &str, &str)]) -> Res {
        for (i, (seq, turn_type, what, ts)) in rows.iter().enumerate() {
            let tool = turn_type.starts_with("tool");
            let line = (i + 1).to_string();
            let seq = seq.to_string();
            let source = match *turn_type {
                "user" if what.contains("cron") => "cron",
                "user" => "user",
                "assistant" if what.starts_with("subagent") => "system",
                "system" if what.starts_with("subagent") => "continue",
                _ => "=NULL",
            };
            h.event(
                DB,
                &[
                    ("session_id", "websocket:c1"),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("source_line", &line),
                    ("seq", &seq),
                    ("x_sub", &line),
                    ("turn_type", turn_type),
                    ("text", if tool { "=NULL" } else { what }),
                    ("x_match", if tool { "=NULL" } else { what }),
                    ("tool_use_id", if tool { what } else { "=NULL" }),
                    ("x_record", &format!("r{seq}")),
                    ("x_call_source", source),
                    ("ts_local", ts),
                ],
            )?;
        }
        Ok(())
    }

    #[test]
    fn a_turn_ends_at_its_final_answer_and_an_injected_message_starts_a_hidden_turn() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        session_rows(
            &h,
            &[
                // before the first user message: no turn
                (0, "assistant", "welcome", "2026-03-02 09:00:00"),
                (1, "user", "check disk", "2026-03-02 10:00:00"),
                (2, "assistant", "looking", "2026-03-02 10:05:00"),
                (2, "tool_use", "call_0", "2026-03-02 10:05:00"),
                (3, "tool_result", "call_0", "2026-03-02 10:05:00"),
                (4, "assistant", "disk ok", "2026-03-02 10:05:00"),
                // a subagent's result, injected eleven days later, and the
                // answer to it: a hidden turn of its own
                (5, "assistant", "subagent done", "2026-03-13 08:00:00"),
                (6, "assistant", "noted", "2026-03-13 08:00:30"),
                (7, "user", "cron: backup", "2026-03-13 09:00:00"),
                (8, "tool_use", "call_0", "2026-03-13 09:01:00"),
                (9, "tool_result", "call_0", "2026-03-13 09:01:00"),
                (10, "assistant", "backup ok", "2026-03-13 09:01:00"),
                // a helper's result injected into the running turn: the
                // turn goes on to the answer after it
                (11, "system", "subagent result", "2026-03-13 09:04:00"),
                (12, "assistant", "the helper says ok", "2026-03-13 09:05:00"),
            ],
        )?;
        h.run_through("session_turns")?;
        assert_eq!(
            h.rows(
                "SELECT turn_no, turn_start, turn_end, user_match, call_source
                 FROM session_turns ORDER BY turn_no"
            )?,
            vec![
                "1 | 2026-03-02 10:00:00 | 2026-03-02 10:05:00 | check disk | user",
                "2 | 2026-03-13 08:00:00 | 2026-03-13 08:00:30 | NULL | system",
                "3 | 2026-03-13 09:00:00 | 2026-03-13 09:05:00 | cron: backup | cron",
            ]
        );
        assert_eq!(
            h.rows("SELECT seq, turn_no FROM session_messages ORDER BY seq")?,
            vec![
                "0 | 0", "1 | 1", "2 | 1", "3 | 1", "4 | 1", "5 | 2", "6 | 2", "7 | 3", "8 | 3",
                "9 | 3", "10 | 3", "11 | 3", "12 | 3",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_turn_erased_by_new_and_asked_again_mirrors_nothing_and_keeps_its_rows() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // after /new the session holds only the question asked again; nanobot
        // stamped the turn when it saved it
        session_rows(
            &h,
            &[
                (1, "user", "status?", "2026-03-02 10:20:40"),
                (2, "tool_use", "call_0", "2026-03-02 10:20:40"),
                (3, "tool_result", "call_0", "2026-03-02 10:20:40"),
                (4, "assistant", "all green", "2026-03-02 10:20:40"),
            ],
        )?;
        // the WebUI transcript still has the erased turn (the same question,
        // the same reused call id, the same answer, twenty minutes earlier),
        // the /new, then the new turn
        for (line, turn, turn_type, what, utc) in [
            ("1", "t1", "user", "status?", "2026-03-02 10:00:00"),
            ("2", "t1", "tool_use", "call_0", "2026-03-02 10:00:20"),
            ("3", "t1", "tool_result", "call_0", "2026-03-02 10:00:21"),
            ("4", "t1", "assistant", "all green", "2026-03-02 10:00:30"),
            ("5", "tn", "user", "/new", "2026-03-02 10:10:00"),
            ("6", "t2", "user", "status?", "2026-03-02 10:20:00"),
            ("7", "t2", "tool_use", "call_0", "2026-03-02 10:20:20"),
            ("8", "t2", "tool_result", "call_0", "2026-03-02 10:20:21"),
            ("9", "t2", "assistant", "all green", "2026-03-02 10:20:40"),
        ] {
            let tool = turn_type.starts_with("tool");
            h.event(
                WEBUI,
                &[
                    ("session_id", "websocket:c1"),
                    ("source_path", WEBUI_C1),
                    ("source_line", line),
                    ("x_turn", turn),
                    ("turn_type", turn_type),
                    ("text", if tool { "=NULL" } else { what }),
                    ("x_match", if tool { "=NULL" } else { what }),
                    ("tool_use_id", if tool { what } else { "=NULL" }),
                    ("ts_utc", utc),
                ],
            )?;
        }
        h.run_through("deduped_secondary_copies")?;
        assert_eq!(
            h.rows(
                "SELECT c.copy_turn, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
            )?,
            vec!["turn:t1 | NULL", "turn:t2 | 1", "turn:tn | NULL"]
        );
        assert_eq!(
            dropped(&h, WEBUI_C1)?,
            vec![
                "6 | same text in the session turn",
                "7 | same tool call in the session turn",
                "8 | same tool call in the session turn",
                "9 | same text in the session turn",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_copy_turn_mirrors_the_session_turn_that_contains_it() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        webui(&h, "1", "t1", "user", "hi", "2026-03-02 10:00:01")?;
        webui(&h, "2", "t1", "assistant", "hello", "2026-03-02 10:00:25")?;
        webui(&h, "3", "t2", "user", "again", "2026-03-02 11:00:02")?;
        // a turn of a chat /new erased: it mirrors nothing
        webui(&h, "4", "t3", "user", "erased", "2026-03-02 12:30:00")?;
        h.run_through("deduped_secondary_copies")?;
        assert_eq!(
            h.rows(
                "SELECT source_path, turn_no, turn_start, turn_end FROM session_turns ORDER BY turn_no"
            )?,
            vec![
                format!("{WS1_DB} | 1 | 2026-03-02 10:00:00 | 2026-03-02 10:00:30"),
                format!("{WS1_DB} | 2 | 2026-03-02 11:00:00 | 2026-03-02 11:00:20"),
            ]
        );
        assert_eq!(
            h.rows(
                "SELECT c.copy_turn, c.t0, m.turn_no
                 FROM copy_turns c LEFT JOIN copy_turn_matches m USING (session_uid, copy_turn)
                 ORDER BY c.copy_turn"
            )?,
            vec![
                "turn:t1 | 2026-03-02 10:00:01 | 1",
                "turn:t2 | 2026-03-02 11:00:02 | 2",
                "turn:t3 | 2026-03-02 12:30:00 | NULL",
            ]
        );
        assert_eq!(
            h.rows("SELECT DISTINCT offset_known FROM copy_rows")?,
            vec!["true"]
        );
        Ok(())
    }

    #[test]
    fn a_webui_copy_of_a_user_message_in_its_turn_is_dropped_other_text_kept() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        webui(&h, "1", "t1", "user", "hi", "2026-03-02 10:00:01")?;
        webui(
            &h,
            "2",
            "t1",
            "user",
            "hi, but edited",
            "2026-03-02 10:00:02",
        )?;
        // the same text in the other turn is not this turn's copy
        webui(&h, "3", "t2", "user", "hi", "2026-03-02 11:00:02")?;
        h.run_through("deduped_secondary_copies")?;
        assert_eq!(
            dropped(&h, WEBUI_C1)?,
            vec!["1 | same text in the session turn"]
        );
        assert_eq!(
            h.rows(&format!(
                "SELECT source_line, text FROM events_deduped WHERE source_path = {} ORDER BY 1",
                quote(WEBUI_C1)
            ))?,
            vec!["2 | hi, but edited", "3 | hi"]
        );
        Ok(())
    }

    #[test]
    fn cli_history_within_2_s_is_dropped_at_3_s_kept() -> Res {
        const HISTORY: &str = ".nanobot/history/cli_history";
        let mut h = Steps::new()?;
        two_turns(&h)?;
        for (line, ts) in [("1", "2026-03-02 10:00:02"), ("2", "2026-03-02 10:00:03")] {
            h.event(
                CLI,
                &[
                    ("source_path", HISTORY),
                    ("source_line", line),
                    ("turn_type", "user"),
                    ("text", "hi"),
                    ("x_match", "hi"),
                    ("ts_local", ts),
                ],
            )?;
        }
        h.run_through("deduped_secondary_copies")?;
        assert_eq!(
            dropped(&h, HISTORY)?,
            vec!["1 | same text in a session within 2 s (local time)"]
        );
        assert_eq!(
            h.rows(&format!(
                "SELECT source_line FROM events_deduped WHERE source_path = {}",
                quote(HISTORY)
            ))?,
            vec!["2"]
        );
        Ok(())
    }

    /// nanoclaw session `s1` of agent group `ag1` (folder `main`): an outbound
    /// message `m1` and the backing `continuation:claude` `c1`; its
    /// `delivered` row and the `delivered` row of a message that is gone;
    /// a Claude Code transcript row of `c1`; the catalog's agent group.
    fn nanoclaw_session(h: &Steps) -> Res {
        let s1 = ("session_id", "s1");
        h.event(
            OUTBOUND,
            &[
                s1,
                ("x_id", "m1"),
                ("x_group", &group(Group::Outbound)),
                ("text", "hello"),
                (
                    "native",
                    r#"{"table":"messages_out","agent_group_id":"ag1"}"#,
                ),
            ],
        )?;
        h.event(
            OUTBOUND,
            &[
                s1,
                ("x_group", &group(Group::State)),
                (
                    "native",
                    r#"{"table":"session_state","continuation":{"provider":"claude","id":"c1"}}"#,
                ),
            ],
        )?;
        for (id, line) in [("m1", "1"), ("m2", "2")] {
            h.event(
                INBOUND,
                &[
                    s1,
                    ("x_id", id),
                    ("source_line", line),
                    ("x_group", &group(Group::State)),
                    ("text", &format!("nanoclaw delivered: {id}")),
                    (
                        "native",
                        &format!(
                            r#"{{"table":"delivered","record":{{"message_out_id":"{id}","status":"delivered"}}}}"#
                        ),
                    ),
                ],
            )?;
        }
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("text", "thinking about it"),
                ("native", r#"{"transcript_id":"c1","agent_group_id":"ag1"}"#),
            ],
        )?;
        h.event(
            CATALOG,
            &[
                ("x_group", &group(Group::State)),
                (
                    "native",
                    r#"{"table":"agent_groups","record":{"id":"ag1","folder":"main"}}"#,
                ),
            ],
        )
    }

    #[test]
    fn nanoclaw_rows_are_the_nanoclaw_events_with_native_parsed() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        nanoclaw_session(&h)?;
        h.run_through("nanoclaw_rows")?;
        assert_eq!(
            h.rows("SELECT j->>'table', count(*) FROM nc_rows GROUP BY ALL ORDER BY ALL")?,
            vec![
                "agent_groups | 1",
                "delivered | 2",
                "messages_out | 1",
                "session_state | 1",
                // the transcript row's native has no table
                "NULL | 1",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_delivered_row_folds_only_when_its_outbound_row_exists() -> Res {
        let mut h = Steps::new()?;
        nanoclaw_session(&h)?;
        h.run_through("nanoclaw_links")?;
        assert_eq!(
            h.rows("SELECT session_id, message_out_id, record->>'status' FROM nc_delivery_joined")?,
            vec!["s1 | m1 | delivered"]
        );
        Ok(())
    }

    #[test]
    fn a_transcript_belongs_to_the_session_naming_its_claude_continuation() -> Res {
        let mut h = Steps::new()?;
        nanoclaw_session(&h)?;
        // another provider's continuation backs no Claude Code transcript
        h.event(
            OUTBOUND,
            &[
                ("session_id", "s2"),
                ("x_group", &group(Group::State)),
                (
                    "native",
                    r#"{"table":"session_state","continuation":{"provider":"codex","id":"c2"}}"#,
                ),
            ],
        )?;
        // c3 resumed c1 (its first line copied from c1, sessionId c1), c4
        // resumed c3; c9 is named by no session. The line u1 with usage of
        // (m, r) in c1 and copied into c3 (the copy is dropped, c1 keeps the
        // usage) and (m9, r) twice in c9 (the larger keeps it).
        let usage = |path: &str, line: &str, native: &str| -> Res {
            h.event(
                TRANSCRIPT,
                &[
                    ("x_group", &group(Group::Transcript)),
                    ("source_path", path),
                    ("source_line", line),
                    ("native", native),
                ],
            )
        };
        let u = r#""usage":{"input_tokens":1,"output_tokens":9}"#;
        usage(
            "p/c1.jsonl",
            "5",
            &format!(
                r#"{{"transcript_id":"c1","sessionId":"c1","uuid":"u1","message_id":"m","requestId":"r",{u}}}"#
            ),
        )?;
        usage(
            "p/c3.jsonl",
            "1",
            &format!(
                r#"{{"transcript_id":"c3","sessionId":"c1","uuid":"u1","message_id":"m","requestId":"r",{u}}}"#
            ),
        )?;
        usage(
            "p/c4.jsonl",
            "1",
            r#"{"transcript_id":"c4","sessionId":"c3"}"#,
        )?;
        usage(
            "p/c9.jsonl",
            "1",
            &format!(
                r#"{{"transcript_id":"c9","sessionId":"c9","message_id":"m9","requestId":"r",{u}}}"#
            ),
        )?;
        usage(
            "p/c9.jsonl",
            "2",
            r#"{"transcript_id":"c9","sessionId":"c9","message_id":"m9","requestId":"r","usage":{"input_tokens":1,"output_tokens":20}}"#,
        )?;
        h.run_through("nanoclaw_transcript_sessions")?;
        assert_eq!(
            h.rows(
                "SELECT instance, continuation_id, session_id FROM nc_transcript_sessions ORDER BY ALL"
            )?,
            vec![". | c1 | s1", ". | c3 | s1", ". | c4 | s1"]
        );
        assert_eq!(
            h.rows(
                "SELECT source_path, source_line FROM nc_rows
                 WHERE x_row IN (SELECT x_row FROM nc_usage_repeats) ORDER BY ALL"
            )?,
            vec!["p/c9.jsonl | 1"]
        );
        // c3's line 1 is c1's line u1 copied into the resumed file: one row
        // (c1's, the file the line names), the copy dropped as a duplicate
        assert_eq!(
            h.rows(
                "SELECT r.source_path, r.source_line, d.reason FROM dropped_rows d JOIN nc_rows r USING (x_row)"
            )?,
            vec!["p/c3.jsonl | 1 | copy of a Claude Code line another transcript file of the session holds"]
        );
        Ok(())
    }

    #[test]
    fn projects_come_from_the_session_stores_and_the_agent_group() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE stage_events SET project_path = '/home/u/proj' WHERE source_line = 2")?;
        webui(
            &h,
            "1",
            "t1",
            "user",
            "from the webui",
            "2026-03-02 10:00:01",
        )?;
        nanoclaw_session(&h)?;
        h.run_through("project_paths")?;
        assert_eq!(
            h.rows("SELECT session_uid, project_path FROM session_projects")?,
            vec![format!("{} | /home/u/proj", uid("ws1", "websocket:c1"))]
        );
        assert_eq!(
            h.rows("SELECT instance, agent_group_id, folder FROM nc_folders")?,
            vec![". | ag1 | main"]
        );
        Ok(())
    }

    #[test]
    fn a_folder_without_catalog_row_and_a_catalog_session_without_folder_are_losses() -> Res {
        let mut h = Steps::new()?;
        let catalog = |id: &str| {
            let native = format!(
                r#"{{"table":"sessions","record":{{"id":"{id}","agent_group_id":"ag1"}}}}"#
            );
            h.event(
                CATALOG,
                &[
                    ("session_id", id),
                    ("x_group", &group(Group::Session)),
                    ("native", &native),
                ],
            )
        };
        catalog("s1")?;
        catalog("s3")?;
        for id in ["s1", "s2"] {
            let path = format!("data/v2-sessions/ag1/{id}/inbound.db");
            h.source(INBOUND, &path, &[])?;
            h.event(INBOUND, &[("session_id", id), ("source_path", &path)])?;
        }
        h.run_through("nanoclaw_losses")?;
        assert_eq!(
            h.rows(
                "SELECT kind, code, session_id, source_path FROM diagnostics
                    WHERE code IN ('catalog_row_missing', 'session_folder_missing') ORDER BY code"
            )?,
            vec![
                // s2 has a folder but no catalog row
                "loss | catalog_row_missing | s2 | data/v2-sessions/ag1/s2",
                // s3 has a catalog row but no folder
                "loss | session_folder_missing | s3 | data/v2-sessions/ag1/s3",
            ]
        );
        Ok(())
    }

    #[test]
    fn declared_losses_are_one_per_session_and_kind_where_they_apply() -> Res {
        let mut h = Steps::new()?;
        let path = "data/v2-sessions/ag1/s1/outbound.db";
        // s1: a question card and two state rows; s2: one message
        h.event(
            OUTBOUND,
            &[
                ("session_id", "s1"),
                ("source_path", path),
                (
                    "native",
                    r#"{"table":"messages_out","content_type":"ask_question","question_id":"q"}"#,
                ),
            ],
        )?;
        for table in ["session_state", "container_state"] {
            h.event(
                OUTBOUND,
                &[
                    ("session_id", "s1"),
                    ("source_path", path),
                    ("x_group", &group(Group::State)),
                    ("native", &format!(r#"{{"table":"{table}"}}"#)),
                ],
            )?;
        }
        h.event(
            INBOUND,
            &[
                ("session_id", "s2"),
                ("source_path", "data/v2-sessions/ag1/s2/inbound.db"),
                ("native", r#"{"table":"messages_in"}"#),
            ],
        )?;
        h.run_through("nanoclaw_losses")?;
        assert_eq!(
            h.rows("SELECT session_id, code, source_path FROM diagnostics
                    WHERE code NOT IN ('catalog_row_missing', 'session_folder_missing') ORDER BY ALL")?,
            vec![
                "s1 | lineage_unknown | data/v2-sessions/ag1/s1",
                "s1 | model_rendering_absent | data/v2-sessions/ag1/s1",
                "s1 | questions_deleted | data/v2-sessions/ag1/s1",
                "s1 | state_without_history | data/v2-sessions/ag1/s1",
                "s1 | usage_absent | data/v2-sessions/ag1/s1",
                "s2 | lineage_unknown | data/v2-sessions/ag1/s2",
                "s2 | model_rendering_absent | data/v2-sessions/ag1/s2",
                "s2 | usage_absent | data/v2-sessions/ag1/s2",
            ]
        );
        assert_eq!(
            h.rows("SELECT message FROM diagnostics WHERE code = 'state_without_history'")?,
            vec![
                "mutable state without history: only the latest container_state, session_state values exist (earlier continuations, routes and acks are overwritten)"
            ]
        );
        Ok(())
    }

    /// One session's messages for the link tests: inbound `in1` (seq 2),
    /// outbound `m1` (seq 3) delivered as platform message `p1`.
    fn nanoclaw_messages(h: &Steps) -> Res {
        let s1 = ("session_id", "s1");
        h.event(
            INBOUND,
            &[
                s1,
                ("x_id", "in1"),
                ("seq", "2"),
                ("native", r#"{"table":"messages_in"}"#),
            ],
        )?;
        h.event(
            OUTBOUND,
            &[
                s1,
                ("x_id", "m1"),
                ("seq", "3"),
                ("x_group", &group(Group::Outbound)),
                ("native", r#"{"table":"messages_out"}"#),
            ],
        )?;
        h.event(
            INBOUND,
            &[
                s1,
                ("x_id", "m1"),
                ("x_group", &group(Group::State)),
                ("native", r#"{"table":"delivered","record":{"message_out_id":"m1","platform_message_id":"p1"}}"#),
            ],
        )
    }

    #[test]
    fn an_edit_or_reaction_links_to_the_one_message_its_id_names() -> Res {
        let mut h = Steps::new()?;
        nanoclaw_messages(&h)?;
        for (id, seq, op, target) in [
            ("e1", "5", "edit", "p1"),
            ("e2", "7", "reaction", "in1"),
            ("e3", "9", "edit", "m1"),
            ("e4", "11", "edit", "elsewhere"),
        ] {
            h.event(
                OUTBOUND,
                &[
                    ("session_id", "s1"),
                    ("x_id", id),
                    ("seq", seq),
                    ("native", &format!(r#"{{"table":"messages_out","operation":"{op}","target_message_id":"{target}"}}"#)),
                ],
            )?;
            // the same id in another session is never a target
            h.event(
                INBOUND,
                &[
                    ("session_id", "s2"),
                    ("x_id", target),
                    ("seq", "4"),
                    ("native", r#"{"table":"messages_in"}"#),
                ],
            )?;
        }
        h.run_through("nanoclaw_links")?;
        assert_eq!(
            h.rows(
                "SELECT e.seq, l.patch FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY e.seq"
            )?,
            vec![
                r#"5 | {"linked_to":{"relation":"edit","seq":3}}"#,
                r#"7 | {"linked_to":{"relation":"reaction","seq":2}}"#,
                r#"9 | {"linked_to":{"relation":"edit","seq":3}}"#,
            ]
        );
        Ok(())
    }

    #[test]
    fn a_question_links_to_its_answer_only_when_both_are_one() -> Res {
        let mut h = Steps::new()?;
        let card = |seq: &str, q: &str| {
            h.event(
                OUTBOUND,
                &[("session_id", "s1"), ("seq", seq), ("native", &format!(r#"{{"table":"messages_out","content_type":"ask_question","question_id":"{q}"}}"#))],
            )
        };
        let answer = |seq: &str, q: &str| {
            h.event(
                INBOUND,
                &[("session_id", "s1"), ("seq", seq), ("native", &format!(r#"{{"table":"messages_in","content_type":"question_response","question_id":"{q}"}}"#))],
            )
        };
        card("3", "q1")?;
        answer("4", "q1")?;
        card("5", "q2")?;
        answer("6", "q2")?;
        answer("8", "q2")?;
        card("7", "q3")?;
        card("9", "q3")?;
        answer("10", "q3")?;
        card("11", "q4")?;
        h.run_through("nanoclaw_links")?;
        assert_eq!(
            h.rows(
                "SELECT e.seq, l.patch FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY e.seq"
            )?,
            vec![
                r#"3 | {"answered_by":{"seq":4}}"#,
                r#"4 | {"linked_to":{"relation":"answer","seq":3}}"#,
            ]
        );
        assert_eq!(
            h.rows("SELECT code, message FROM diagnostics ORDER BY message")?,
            vec![
                "question_link_ambiguous | question q2: 1 card(s) and 2 answer(s) in the session: not linked",
                "question_link_ambiguous | question q3: 2 card(s) and 1 answer(s) in the session: not linked",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_messaging_group_joins_only_when_the_route_matches() -> Res {
        let mut h = Steps::new()?;
        let start = |sid: &str, mg: &str| {
            h.event(
                CATALOG,
                &[
                    ("session_id", sid),
                    ("x_group", &group(Group::Session)),
                    ("native", &format!(r#"{{"table":"sessions","messaging_group":{{"id":"{mg}","channel_type":"slack","platform_id":"slack:C1"}}}}"#)),
                ],
            )
        };
        let routing = |sid: &str, platform: &str| {
            h.event(
                INBOUND,
                &[("session_id", sid), ("x_group", &group(Group::State)), ("native", &format!(r#"{{"table":"session_routing","record":{{"channel_type":"slack","platform_id":"{platform}"}}}}"#))],
            )
        };
        let message = |sid: &str, channel: &str, platform: &str| {
            h.event(
                INBOUND,
                &[("session_id", sid), ("native", &format!(r#"{{"table":"messages_in","channel_type":"{channel}","platform_id":"{platform}"}}"#))],
            )
        };
        // s1 routed to the group's chat; s2 routed elsewhere (its message
        // from the group's chat does not count beside session_routing); s3
        // has no session_routing, a message from the chat; s4 only an
        // agent-to-agent message: no evidence, no join, no warning
        start("s1", "mg1")?;
        routing("s1", "slack:C1")?;
        start("s2", "mg1")?;
        routing("s2", "slack:C2")?;
        message("s2", "slack", "slack:C1")?;
        start("s3", "mg1")?;
        message("s3", "slack", "slack:C1")?;
        start("s4", "mg1")?;
        message("s4", "agent", "slack:C1")?;
        h.run_through("nanoclaw_links")?;
        assert_eq!(
            h.rows("SELECT e.session_id, l.patch, l.route FROM nc_links l JOIN nc_rows e USING (x_row) ORDER BY 1")?,
            vec![
                r#"s1 | {"channel_type":"slack","platform_id":"slack:C1"} |  channel=slack platform=slack:C1"#,
                r#"s3 | {"channel_type":"slack","platform_id":"slack:C1"} |  channel=slack platform=slack:C1"#,
            ]
        );
        assert_eq!(
            h.rows("SELECT session_id, code FROM diagnostics")?,
            vec!["s2 | route_mismatch"]
        );
        Ok(())
    }

    #[test]
    fn linked_events_fold_deliveries_link_transcripts_and_fill_projects() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE stage_events SET project_path = '/home/u/proj'")?;
        webui(
            &h,
            "1",
            "t1",
            "user",
            "from the webui",
            "2026-03-02 10:00:01",
        )?;
        nanoclaw_session(&h)?;
        h.run_through("linked_events")?;
        let s1 =
            h.rows("SELECT DISTINCT session_uid FROM events_linked WHERE session_id = 's1'")?;
        assert_eq!(s1.len(), 1, "{s1:?}");
        // the transcript row joins s1 (and its session_uid)
        assert_eq!(
            h.rows(&format!(
                "SELECT session_id, session_uid = {} FROM events_linked WHERE nanoclaw = 'transcript'",
                quote(&s1[0])
            ))?,
            vec!["s1 | true"]
        );
        // m1's delivery rides on its outbound row; m2's stays, marked
        assert_eq!(
            h.rows(
                "SELECT source_kind, text, native::JSON->'delivered'->>'status' FROM events_linked
                 WHERE x_id IS NOT NULL ORDER BY source_kind, x_id"
            )?,
            vec![
                "nanoclaw.inbound | nanoclaw delivered: m2 (outbound row missing) | NULL",
                "nanoclaw.outbound | hello | delivered",
            ]
        );
        // projects: the WebUI row takes its session's, nanoclaw rows their group's
        assert_eq!(
            h.rows(
                "SELECT source_kind, project_path FROM events_linked
                 WHERE turn_copy = 'webui' OR nanoclaw = 'transcript' OR x_id = 'm1'
                 GROUP BY ALL ORDER BY ALL"
            )?,
            vec![
                "nanobot.webui_transcript | /home/u/proj",
                "nanoclaw.claude_transcript | groups/main",
                "nanoclaw.outbound | groups/main",
            ]
        );
        Ok(())
    }

    #[test]
    fn ordinal_is_unique_and_in_time_order_within_a_session() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // a database row without a time takes the time of the row before it
        // (`hello`, seq 2, whose record it is part of)
        h.event(
            DB,
            &[
                ("session_id", "websocket:c1"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("source_line", "5"),
                ("seq", "2"),
                ("x_sub", "1"),
                ("text", "untimed"),
            ],
        )?;
        // the session-level row comes first, whatever its time
        h.event(
            DB,
            &[
                ("session_id", "websocket:c1"),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("x_group", &group(Group::Session)),
                ("text", "session start"),
                ("ts_local", "2026-03-02 12:00:00"),
            ],
        )?;
        // a WebUI row only the transcript has falls in by its time
        webui(
            &h,
            "1",
            "t1",
            "assistant",
            "only here",
            "2026-03-02 10:00:45",
        )?;
        h.run_through("events")?;
        assert_eq!(
            h.rows(
                "SELECT o.ordinal, e.text, CAST(e.timestamp_utc AS TIMESTAMPTZ)
                 FROM ordinals o JOIN events_linked e USING (x_row)
                 WHERE e.session_id = 'websocket:c1' ORDER BY o.ordinal"
            )?,
            vec![
                "1 | session start | 2026-03-02 12:00:00+00",
                "2 | hi | 2026-03-02 10:00:00+00",
                "3 | hello | 2026-03-02 10:00:30+00",
                "4 | untimed | NULL",
                "5 | only here | 2026-03-02 10:00:45+00",
                "6 | again | 2026-03-02 11:00:00+00",
                "7 | sure | 2026-03-02 11:00:20+00",
            ]
        );
        assert_eq!(
            h.rows(
                "SELECT count(*) = count(DISTINCT (e.session_uid, o.ordinal)) AND min(o.ordinal) = 1
                        AND max(o.ordinal) = count(*)
                 FROM ordinals o JOIN events_linked e USING (x_row)"
            )?,
            vec!["true"]
        );
        Ok(())
    }

    /// The columns of `table`, in order.
    fn columns(h: &Steps, table: &str) -> Res<Vec<String>> {
        h.rows(&format!("SELECT column_name FROM (DESCRIBE {table})"))
    }

    #[test]
    fn write_layout_is_the_output_order_with_where_each_text_is() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        nanoclaw_session(&h)?;
        h.event(
            CLI,
            &[
                ("text", "a prompt of no session"),
                ("ts_local", "2026-03-02 09:00:00"),
                ("x_text_len", "5"),
                ("x_native_len", "2"),
            ],
        )?;
        h.run_through("write_layout")?;
        // out_pos runs 1…n in the output order (docs/design.md "Output order")
        assert_eq!(
            h.rows(
                "SELECT out_pos FROM events_plan JOIN plan_sessions USING (sess_id)
                 ORDER BY agent, instance, session_id NULLS FIRST, session_uid NULLS FIRST, ordinal"
            )?,
            (1..=10).map(|i| i.to_string()).collect::<Vec<_>>()
        );
        // stored in that order (the writer reads ranges of out_pos), x_bytes
        // the staged text and native lengths
        assert_eq!(
            h.rows(
                "SELECT list(out_pos) = list_sort(list(out_pos)), sum(x_bytes) FROM events_plan"
            )?,
            vec!["true | 7"]
        );
        // the ids stand for one set of strings each
        assert_eq!(
            h.rows(
                "SELECT count(*) = count(DISTINCT (agent, instance, session_id, session_uid))
                 FROM plan_sessions
                 UNION ALL
                 SELECT count(*) = count(DISTINCT (source_kind, source_role, source_path, load_id))
                 FROM plan_stores"
            )?,
            vec!["true", "true"]
        );
        // events: the contract columns; events_plan: the ones the ids do not
        // stand for, the ids, and where the text is
        let contract = [
            "agent",
            "instance",
            "session_id",
            "parent_session_id",
            "project_path",
            "git_branch",
            "seq",
            "timestamp_utc",
            "timestamp_local",
            "utc_offset_minutes",
            "time_basis",
            "turn_type",
            "model",
            "tool_name",
            "tool_use_id",
            "text",
            "source_kind",
            "source_role",
            "source_path",
            "source_line",
            "native",
            "load_id",
            "ordinal",
            "session_uid",
        ];
        assert_eq!(columns(&h, "events")?, contract);
        let looked_up = [
            "agent",
            "instance",
            "session_id",
            "session_uid",
            "source_kind",
            "source_role",
            "source_path",
            "load_id",
        ];
        let mut plan: Vec<&str> = vec!["out_pos", "sess_id", "store_id"];
        plan.extend(contract.iter().filter(|c| !looked_up.contains(c)));
        plan.extend([
            "x_start",
            "x_wide",
            "x_blob",
            "x_off",
            "x_text_len",
            "x_native_len",
            "x_bytes",
        ]);
        assert_eq!(columns(&h, "events_plan")?, plan);
        // events reads the materialized plan: the views of the rows it was
        // built from can go
        h.exec("DROP VIEW events_linked")?;
        assert_eq!(h.rows("SELECT count(*) FROM events")?, vec!["10"]);
        Ok(())
    }

    #[test]
    fn an_llm_call_belongs_to_the_turn_containing_it_and_to_none_between_turns() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        for utc in [
            "2026-03-02 10:00:20", // inside turn 1
            "2026-03-02 10:00:32", // turn 1's answer + 2 s (a time in whole seconds)
            "2026-03-02 10:00:39", // its answer + 9 s: a turn's calls start before it
            "2026-03-02 10:30:00", // between the turns
            "2026-03-02 11:00:19", // inside turn 2
        ] {
            h.llm_call(&[("source", "user"), ("started_at_ms", &ms(utc))])?;
        }
        h.run_through("llm_calls")?;
        let c1 = uid("ws1", "websocket:c1");
        assert_eq!(
            h.rows("SELECT id, started_at, session_id, session_uid FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | 2026-03-02 10:00:20+00 | websocket:c1 | {c1}"),
                format!("2 | 2026-03-02 10:00:32+00 | websocket:c1 | {c1}"),
                "3 | 2026-03-02 10:00:39+00 | NULL | NULL".to_string(),
                "4 | 2026-03-02 10:30:00+00 | NULL | NULL".to_string(),
                format!("5 | 2026-03-02 11:00:19+00 | websocket:c1 | {c1}"),
            ]
        );
        Ok(())
    }

    /// A turn of chat `telegram:42` (workspace ws1): its user message,
    /// whose turn's calls carry `source`, and its answer, each (text, naive
    /// local time).
    fn telegram_turn(h: &Steps, source: &str, user: (&str, &str), answer: (&str, &str)) -> Res {
        for (seq, turn_type, (text, ts)) in [("1", "user", user), ("2", "assistant", answer)] {
            h.event(
                DB,
                &[
                    ("session_id", "telegram:42"),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("source_line", &format!("1{seq}")),
                    ("seq", seq),
                    ("turn_type", turn_type),
                    ("text", text),
                    ("x_match", text),
                    ("x_record", &format!("t{seq}")),
                    ("x_call_source", if seq == "1" { source } else { "=NULL" }),
                    ("ts_local", ts),
                ],
            )?;
        }
        Ok(())
    }

    #[test]
    fn an_llm_call_goes_to_a_turn_of_its_own_source() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // a user turn 10:00–10:05 and, in the same session, a subagent's
        // result injected at 10:30 (a hidden turn: system calls only)
        session_rows(
            &h,
            &[
                (1, "user", "long job", "2026-03-02 10:00:00"),
                (2, "assistant", "done", "2026-03-02 10:05:00"),
                (3, "assistant", "subagent done", "2026-03-02 10:30:00"),
                (4, "assistant", "noted", "2026-03-02 10:30:20"),
            ],
        )?;
        // a cron run in another chat, 10:02–10:04, while the user turn runs
        telegram_turn(
            &h,
            "cron",
            ("cron: digest", "2026-03-02 10:02:00"),
            ("digest", "2026-03-02 10:04:00"),
        )?;
        for (source, utc) in [
            ("user", "2026-03-02 10:03:00"), // the user turn, not the later cron turn
            ("cron", "2026-03-02 10:03:00"), // the cron turn
            ("dream", "2026-03-02 10:03:00"), // a memory archive: no chat
            ("system", "2026-03-02 10:03:00"), // a title: the user turn
            ("user", "2026-03-02 10:20:00"), // after the final answer: none
            ("system", "2026-03-02 10:30:10"), // the injected message's turn
            ("user", "2026-03-02 10:30:10"), // not a user turn: none
        ] {
            h.llm_call(&[("source", source), ("started_at_ms", &ms(utc))])?;
        }
        h.run_through("llm_calls")?;
        let c1 = uid("ws1", "websocket:c1");
        let tg = uid("ws1", "telegram:42");
        assert_eq!(
            h.rows("SELECT id, source, coalesce(session_uid, 'NULL') FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | user | {c1}"),
                format!("2 | cron | {tg}"),
                "3 | dream | NULL".to_string(),
                format!("4 | system | {c1}"),
                "5 | user | NULL".to_string(),
                format!("6 | system | {c1}"),
                "7 | user | NULL".to_string(),
            ]
        );
        Ok(())
    }

    #[test]
    fn of_two_overlapping_chats_a_call_goes_to_the_one_that_saved_its_answer() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // chat c1: a user turn 10:00–10:05 whose tool call is saved at 10:03:30
        session_rows(
            &h,
            &[
                (1, "user", "long job", "2026-03-02 10:00:00"),
                (2, "tool_use", "call_a", "2026-03-02 10:03:30"),
                (3, "tool_result", "call_a", "2026-03-02 10:03:31"),
                (4, "assistant", "done", "2026-03-02 10:05:00"),
            ],
        )?;
        // chat telegram:42: a user turn 10:02–10:04, inside c1's
        telegram_turn(
            &h,
            "user",
            ("quick question", "2026-03-02 10:02:00"),
            ("quick answer", "2026-03-02 10:04:00"),
        )?;
        for (utc, duration) in [
            ("2026-03-02 10:03:00", "30000"), // ends 10:03:30: c1's tool call
            ("2026-03-02 10:03:40", "20000"), // ends 10:04:00: the telegram answer
            ("2026-03-02 10:03:00", "5000"),  // ends 10:03:05: no answer, the later start
            ("2026-03-02 10:03:00", "=NULL"), // no duration: the later start
            ("2026-03-02 10:03:29", "1500"),  // ends 10:03:30.5, c1's row 0.5 s before: c1
            ("2026-03-02 10:03:00", "27000"), // ends 10:03:27, 3 s before c1's row: telegram
        ] {
            h.llm_call(&[
                ("source", "user"),
                ("started_at_ms", &ms(utc)),
                ("duration_ms", duration),
            ])?;
        }
        h.run_through("llm_calls")?;
        let c1 = uid("ws1", "websocket:c1");
        let tg = uid("ws1", "telegram:42");
        assert_eq!(
            h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | {c1}"),
                format!("2 | {tg}"),
                format!("3 | {tg}"),
                format!("4 | {tg}"),
                format!("5 | {c1}"),
                format!("6 | {tg}"),
            ]
        );
        Ok(())
    }

    #[test]
    fn a_system_call_right_after_a_webui_chats_answer_is_its_title_call() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // WebUI chat c1: a user turn 10:00–10:05, its answer saved at 10:05
        session_rows(
            &h,
            &[
                (1, "user", "long job", "2026-03-02 10:00:00"),
                (2, "assistant", "done", "2026-03-02 10:05:00"),
            ],
        )?;
        // chat telegram:42: a user turn 10:04:30–10:06, started later
        telegram_turn(
            &h,
            "user",
            ("quick question", "2026-03-02 10:04:30"),
            ("quick answer", "2026-03-02 10:06:00"),
        )?;
        for (source, utc, duration) in [
            ("user", "2026-03-02 10:04:40", "20000"), // c1's answer, returns 10:05:00
            ("system", "2026-03-02 10:05:00", "2000"), // at once: c1's title (explore seed 119)
            ("system", "2026-03-02 10:05:03", "2000"), // 3 s later: the later start
            ("user", "2026-03-02 10:05:30", "30000"), // telegram's answer
            ("system", "2026-03-02 10:06:01", "2000"), // after telegram's answer: no WebUI chat
        ] {
            h.llm_call(&[
                ("source", source),
                ("started_at_ms", &ms(utc)),
                ("duration_ms", duration),
            ])?;
        }
        h.run_through("llm_calls")?;
        let c1 = uid("ws1", "websocket:c1");
        let tg = uid("ws1", "telegram:42");
        assert_eq!(
            h.rows("SELECT id, session_uid FROM title_calls ORDER BY id")?,
            vec![format!("2 | {c1}")]
        );
        assert_eq!(
            h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | {c1}"),
                format!("2 | {c1}"),
                format!("3 | {tg}"),
                format!("4 | {tg}"),
                format!("5 | {tg}"),
            ]
        );
        Ok(())
    }

    #[test]
    fn a_failed_attempt_goes_where_its_retry_goes() -> Res {
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // WebUI chat c1: a user turn 10:00–10:05
        session_rows(
            &h,
            &[
                (1, "user", "long job", "2026-03-02 10:00:00"),
                (2, "assistant", "done", "2026-03-02 10:05:00"),
            ],
        )?;
        // chat telegram:42: a user turn 10:03–10:04:30, started later
        telegram_turn(
            &h,
            "user",
            ("quick question", "2026-03-02 10:03:00"),
            ("quick answer", "2026-03-02 10:04:30"),
        )?;
        for (utc, duration, finish) in [
            ("2026-03-02 10:03:10", "2000", "error"), // its retry 2 s after its end: c1
            ("2026-03-02 10:03:12", "108000", "stop"), // returns 10:05, c1's answer
            ("2026-03-02 10:04:00", "30000", "stop"), // returns 10:04:30, telegram's answer
            ("2026-03-02 10:04:10", "1000", "error"), // no retry: the later start
            ("2026-03-02 10:04:40", "1000", "error"), // two calls after it: no retry
            ("2026-03-02 10:04:42", "1000", "stop"),
            ("2026-03-02 10:04:43", "1000", "stop"),
        ] {
            h.llm_call(&[
                ("source", "user"),
                ("started_at_ms", &ms(utc)),
                ("duration_ms", duration),
                ("finish_reason", finish),
            ])?;
        }
        h.run_through("llm_calls")?;
        assert_eq!(
            h.rows("SELECT failed_id, next_id FROM retries ORDER BY ALL")?,
            vec!["1 | 2"]
        );
        let c1 = uid("ws1", "websocket:c1");
        let tg = uid("ws1", "telegram:42");
        assert_eq!(
            h.rows("SELECT id, session_uid FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | {c1}"),
                format!("2 | {c1}"),
                format!("3 | {tg}"),
                format!("4 | {tg}"),
                format!("5 | {c1}"),
                format!("6 | {c1}"),
                format!("7 | {c1}"),
            ]
        );
        Ok(())
    }

    #[test]
    fn a_webui_turn_whose_rounds_name_its_calls_takes_no_other_call() -> Res {
        // a WebUI turn 10:00–10:20 (chat c1) with one round, 6765 prompt and
        // 381 completion tokens (its transcript's turn_end); inside it, the
        // calls of a turn /new erased from another chat (explore seed 66)
        let home = |rounds: &str, spawn: bool| -> Res<Steps> {
            let h = Steps::new()?;
            h.exec("UPDATE params SET given_offset_minutes = 0")?;
            let mut rows = vec![(1, "user", "long job", "2026-03-02 10:00:00")];
            if spawn {
                rows.push((2, "tool_use", "call_spawn", "2026-03-02 10:20:00"));
                rows.push((3, "tool_result", "call_spawn", "2026-03-02 10:20:00"));
            }
            rows.push((4, "assistant", "done", "2026-03-02 10:20:00"));
            session_rows(&h, &rows)?;
            if spawn {
                h.exec(&format!(
                    "UPDATE stage_events SET tool_name = 'spawn' WHERE tool_use_id = 'call_spawn' AND source_path = {}",
                    quote(WS1_DB)
                ))?;
            }
            webui(&h, "1", "t1", "user", "long job", "2026-03-02 10:00:00")?;
            h.event(
                WEBUI,
                &[
                    ("session_id", "websocket:c1"),
                    ("source_path", WEBUI_C1),
                    ("source_line", "2"),
                    ("x_turn", "t1"),
                    ("turn_type", "assistant"),
                    ("text", "done"),
                    ("x_match", "done"),
                    ("ts_utc", "2026-03-02 10:20:00"),
                    ("x_rounds", rounds),
                ],
            )?;
            for (utc, duration, input, output) in [
                ("2026-03-02 10:00:01", "1199000", "6765", "381"), // the round: c1
                ("2026-03-02 10:05:00", "60000", "1128", "296"),   // another chat's
                ("2026-03-02 10:07:00", "60000", "3656", "133"),   // another chat's
                ("2026-03-02 10:09:00", "60000", "=NULL", "=NULL"), // an error: may be c1's
            ] {
                h.llm_call(&[
                    ("source", "user"),
                    ("started_at_ms", &ms(utc)),
                    ("duration_ms", duration),
                    ("input_tokens", input),
                    ("output_tokens", output),
                ])?;
            }
            Ok(h)
        };
        let c1 = uid("ws1", "websocket:c1");
        let mut h = home("6765:381", false)?;
        h.run_through("llm_calls")?;
        assert_eq!(
            h.rows("SELECT id, coalesce(session_uid, 'NULL') FROM llm_calls ORDER BY id")?,
            vec![
                format!("1 | {c1}"),
                "2 | NULL".to_string(),
                "3 | NULL".to_string(),
                format!("4 | {c1}"),
            ]
        );
        // rounds that name no call (tokens counted otherwise) prove nothing,
        // and a turn that spawned a subagent has calls besides its rounds
        // (the subagent's, explore seed 108): every call inside the turn
        // stays its
        let all_c1 = |h: &Steps| -> Res {
            assert_eq!(
                h.rows(&format!(
                    "SELECT count(*) FROM llm_calls WHERE session_uid = {}",
                    quote(&c1)
                ))?,
                vec!["4".to_string()]
            );
            Ok(())
        };
        let mut h = home("6765:380", false)?;
        h.run_through("llm_calls")?;
        all_c1(&h)?;
        let mut h = home("6765:381", true)?;
        h.run_through("llm_calls")?;
        all_c1(&h)?;
        Ok(())
    }

    /// The prices of the cost tests (USD per token): Claude Sonnet 4.5 as
    /// LiteLLM prices it, its dated key at another input price (so a wrong
    /// choice shows), a model without cache prices, and an OpenRouter key.
    fn test_prices(h: &Steps) -> Res {
        h.price(
            "claude-sonnet-4-5",
            "anthropic",
            ["0.000003", "0.000015", "0.0000003", "0.00000375"],
        )?;
        h.price(
            "claude-sonnet-4-5-20250929",
            "anthropic",
            ["0.000004", "0.000015", "0.0000003", "0.00000375"],
        )?;
        h.price("gpt-x", "openai", ["0.000001", "0.000002", "", ""])?;
        h.price(
            "openrouter/vendor/model-1.0",
            "openrouter",
            ["0.000005", "0.000005", "", ""],
        )?;
        h.price(
            "vendor/model-1-0",
            "vendor",
            ["0.000009", "0.000009", "", ""],
        )
    }

    #[test]
    fn llm_calls_are_priced_by_exact_then_normalised_model_and_an_unknown_model_is_null() -> Res {
        let mut h = Steps::new()?;
        test_prices(&h)?;
        let call = |provider: &str, model: &str, tokens: &[(&str, &str)]| -> Res {
            let mut given = vec![
                ("provider", provider),
                ("model", model),
                ("started_at_ms", "0"),
            ];
            given.extend_from_slice(tokens);
            h.llm_call(&given)
        };
        let (inp, out, read, write) = (
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
        );
        // 1: a cached call, found after the normalisation (4.5 → 4-5) under
        //    `anthropic/claude-sonnet-4-5`, the undated key (input 3e-6):
        //    (1000 − 600 − 100) × 3e-6 + 600 × 3e-7 + 100 × 3.75e-6 + 50 × 1.5e-5
        //    = 0.0009 + 0.00018 + 0.000375 + 0.00075 = 0.002205
        call(
            "anthropic",
            "claude-sonnet-4.5",
            &[(inp, "1000"), (read, "600"), (write, "100"), (out, "50")],
        )?;
        // 2: OpenRouter's name of it, normalised model alone:
        //    2000 × 3e-6 + 100 × 1.5e-5 = 0.006 + 0.0015 = 0.0075
        call(
            "openrouter",
            "anthropic/claude-sonnet-4.5",
            &[(inp, "2000"), (out, "100")],
        )?;
        // 3: exact model, the dated key's `<provider>/<key>` name: 1000 × 4e-6 = 0.004
        call(
            "anthropic",
            "anthropic/claude-sonnet-4-5-20250929",
            &[(inp, "1000")],
        )?;
        // 4: case normalised; no cache price: cache reads at the input price:
        //    600 × 1e-6 + 400 × 1e-6 + 10 × 2e-6 = 0.0006 + 0.0004 + 0.00002 = 0.00102
        call(
            "openai",
            "GPT-X",
            &[(inp, "1000"), (read, "400"), (out, "10")],
        )?;
        // 5: exact provider/model wins over the normalised vendor/model-1-0:
        //    (10 + 10) × 5e-6 = 0.0001
        call(
            "openrouter",
            "vendor/model-1.0",
            &[(inp, "10"), (out, "10")],
        )?;
        // 6, 7: a model no row prices: NULL, never 0
        call("mystery", "unknown-model", &[(inp, "100")])?;
        call("mystery", "unknown-model", &[(inp, "100")])?;
        // 8: a priced model whose call reported no tokens (an error): 0
        call("anthropic", "claude-sonnet-4.5", &[])?;
        // 9: no model: NULL, and no warning (nothing to name)
        h.llm_call(&[
            ("provider", "anthropic"),
            ("started_at_ms", "0"),
            (inp, "5"),
        ])?;
        h.run_through("llm_calls")?;
        assert_eq!(
            h.rows("SELECT id, cost_usd FROM llm_calls ORDER BY id")?,
            vec![
                "1 | 0.002205",
                "2 | 0.0075",
                "3 | 0.004",
                "4 | 0.00102",
                "5 | 0.0001",
                "6 | NULL",
                "7 | NULL",
                "8 | 0.0",
                "9 | NULL",
            ]
        );
        // which rule found which row (1 exact provider/model, 2 exact model,
        // 3 and 4 the same normalised)
        assert_eq!(
            h.rows(
                "SELECT provider, model, price_model, price_step FROM model_prices ORDER BY ALL"
            )?,
            vec![
                "anthropic | anthropic/claude-sonnet-4-5-20250929 | claude-sonnet-4-5-20250929 | 2",
                "anthropic | claude-sonnet-4.5 | claude-sonnet-4-5 | 3",
                "mystery | unknown-model | NULL | NULL",
                "openai | GPT-X | gpt-x | 3",
                "openrouter | anthropic/claude-sonnet-4.5 | claude-sonnet-4-5 | 4",
                "openrouter | vendor/model-1.0 | openrouter/vendor/model-1.0 | 1",
            ]
        );
        // one warning per model, naming it
        assert_eq!(
            h.rows(
                "SELECT kind, agent, instance, source_path, message, code FROM diagnostics
                 WHERE kind = 'warning'"
            )?,
            vec![
                "warning | nanobot | .nanobot | .nanobot/llm_usage.sqlite3 | no price for model unknown-model (provider mystery): cost_usd is NULL for its 2 llm_calls rows (--prices FILE can price it) | price_unknown"
            ]
        );
        // the normalisation: case, `.` between digits, a trailing date stamp
        assert_eq!(
            h.rows(
                "SELECT price_name('Claude-Sonnet-4.5-20250929'), price_name('v3.5.1@20250929'),
                        price_name('gpt-4o-2024-08-06'), price_name('gpt-4-0613'),
                        price_name('o.k-1.x')"
            )?,
            vec!["claude-sonnet-4-5 | v3-5-1 | gpt-4o | gpt-4-0613 | o.k-1.x"]
        );
        Ok(())
    }

    #[test]
    fn sessions_count_rows_and_calls_and_flag_sessions_only_copies_hold() -> Res {
        let mut h = Steps::new()?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        h.llm_call(&[
            ("source", "user"),
            ("started_at_ms", &ms("2026-03-02 10:00:20")),
            ("input_tokens", "100"),
        ])?;
        // a deleted session: only a frozen copy holds it
        h.event(
            JSONL,
            &[
                ("session_id", "cli:old"),
                ("x_namespace", "ws1"),
                (
                    "source_path",
                    ".nanobot/sessions/ws1/jsonl-backup/Y2xpOm9sZA.jsonl",
                ),
                ("source_role", "secondary"),
                ("turn_type", "user"),
                ("x_record", "old"),
            ],
        )?;
        nanoclaw_session(&h)?;
        h.run_through("sessions")?;
        assert_eq!(
            h.rows(
                "SELECT session_id, rows, user_rows, in_primary_store, secondary_only, llm_calls,
                        input_tokens, continuation
                 FROM sessions ORDER BY session_id NULLS FIRST"
            )?,
            vec![
                "cli:old | 1 | 1 | false | true | 0 | NULL | NULL",
                "s1 | 4 | 0 | true | false | NULL | NULL | claude:c1",
                "websocket:c1 | 4 | 2 | true | false | 1 | 100 | NULL",
            ]
        );
        Ok(())
    }

    #[test]
    fn a_session_takes_its_facts_from_the_row_that_starts_it() -> Res {
        // the metadata row that starts websocket:c1 (x_start) and a message
        // a user typed that reads like one: only the first gives the
        // session's facts
        let mut h = Steps::new()?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        for (line, x_start, turn_type, text, created) in [
            (
                "1",
                "true",
                "system",
                "session start: key=websocket:c1",
                "2026-03-02T09:00:00",
            ),
            (
                "2",
                "false",
                "user",
                "session start: key=forged",
                "1999-01-01T00:00:00",
            ),
        ] {
            h.event(
                DB,
                &[
                    ("session_id", "websocket:c1"),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("source_line", line),
                    ("x_group", if x_start == "true" { "0" } else { "1" }),
                    ("turn_type", turn_type),
                    ("text", text),
                    ("native", &format!(r#"{{"created_at":"{created}"}}"#)),
                    ("x_start", x_start),
                    ("ts_local", "2026-03-02 09:00:00"),
                ],
            )?;
        }
        h.run_through("sessions")?;
        assert_eq!(h.rows("SELECT count(*) FROM session_starts")?, vec!["1"]);
        assert_eq!(
            h.rows("SELECT session_id, created_at FROM sessions")?,
            vec!["websocket:c1 | 2026-03-02T09:00:00"]
        );
        Ok(())
    }

    #[test]
    fn sessions_sum_the_cost_of_their_calls_and_of_their_claude_code_usage() -> Res {
        let mut h = Steps::new()?;
        test_prices(&h)?;
        two_turns(&h)?;
        h.exec("UPDATE params SET given_offset_minutes = 0")?;
        // websocket:c1: a cached call in turn 1 and one in turn 2
        //   (1000 − 600 − 100) × 3e-6 + 600 × 3e-7 + 100 × 3.75e-6 + 50 × 1.5e-5 = 0.002205
        //   2000 × 3e-6 + 100 × 1.5e-5                                            = 0.0075
        //   session: 0.002205 + 0.0075 = 0.009705
        h.llm_call(&[
            ("provider", "anthropic"),
            ("model", "claude-sonnet-4.5"),
            ("started_at_ms", &ms("2026-03-02 10:00:20")),
            ("input_tokens", "1000"),
            ("cache_read_tokens", "600"),
            ("cache_write_tokens", "100"),
            ("output_tokens", "50"),
        ])?;
        h.llm_call(&[
            ("provider", "anthropic"),
            ("model", "claude-sonnet-4.5"),
            ("started_at_ms", &ms("2026-03-02 11:00:19")),
            ("input_tokens", "2000"),
            ("output_tokens", "100"),
        ])?;
        // between the turns, of no session: its unknown model changes no session
        h.llm_call(&[
            ("provider", "mystery"),
            ("model", "unknown-model"),
            ("started_at_ms", &ms("2026-03-02 10:30:00")),
            ("input_tokens", "100"),
        ])?;
        nanoclaw_session(&h)?;
        // s1's Claude Code responses (Anthropic usage: input_tokens without the
        // cache), model claude-sonnet-4-5-20250929 found exactly as
        // `anthropic/claude-sonnet-4-5-20250929`, the dated key (input 4e-6):
        //   m1: 5 × 4e-6 + 100 × 3.75e-6 + 20 × 1.5e-5 = 0.00002 + 0.000375 + 0.0003 = 0.000695
        //   m2 (cached): 7 × 4e-6 + 400 × 3e-7 + 300 × 3.75e-6 + 30 × 1.5e-5
        //      = 0.000028 + 0.00012 + 0.001125 + 0.00045                           = 0.001723
        //   m2 repeated with a smaller usage: not counted, not priced
        //   session: 0.000695 + 0.001723 = 0.002418
        let response = |session: &str, line: &str, message: &str, usage: &str, model: &str| {
            let native = format!(
                r#"{{"transcript_id":"{session}","sessionId":"{session}","message_id":"{message}","requestId":"r-{message}","usage":{usage},"usage_counted":true}}"#
            );
            h.event(
                TRANSCRIPT,
                &[
                    ("x_group", &group(Group::Transcript)),
                    ("source_path", &format!("p/{session}.jsonl")),
                    ("source_line", line),
                    ("turn_type", "assistant"),
                    ("model", model),
                    ("native", &native),
                ],
            )
        };
        let sonnet = "claude-sonnet-4-5-20250929";
        response(
            "c1",
            "1",
            "m1",
            r#"{"input_tokens":5,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":20}"#,
            sonnet,
        )?;
        response(
            "c1",
            "2",
            "m2",
            r#"{"input_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":400,"output_tokens":30}"#,
            sonnet,
        )?;
        response(
            "c1",
            "3",
            "m2",
            r#"{"input_tokens":1,"output_tokens":1}"#,
            sonnet,
        )?;
        // s2: backed by c2, whose one response has a model no row prices
        h.event(
            OUTBOUND,
            &[
                ("session_id", "s2"),
                ("x_group", &group(Group::State)),
                (
                    "native",
                    r#"{"table":"session_state","continuation":{"provider":"claude","id":"c2"}}"#,
                ),
            ],
        )?;
        response(
            "c2",
            "1",
            "m9",
            r#"{"input_tokens":10,"output_tokens":10}"#,
            "mystery-model",
        )?;
        h.run_through("sessions")?;
        assert_eq!(
            h.rows(
                "SELECT session_id, llm_calls, transcript_turns_with_usage, cost_usd
                 FROM sessions ORDER BY session_id"
            )?,
            vec![
                "s1 | NULL | 2 | 0.002418",
                "s2 | NULL | 1 | NULL",
                "websocket:c1 | 2 | NULL | 0.009705",
            ]
        );
        // the last column, appended
        assert_eq!(
            columns(&h, "sessions")?.last().map(String::as_str),
            Some("cost_usd")
        );
        let calls = columns(&h, "llm_calls")?;
        assert_eq!(
            calls[calls.len() - 3..],
            ["cost_usd", "started_at_local", "utc_offset_minutes"]
        );
        assert_eq!(
            h.rows(
                "SELECT agent, message FROM diagnostics WHERE code = 'price_unknown' ORDER BY ALL"
            )?,
            vec![
                "nanobot | no price for model unknown-model (provider mystery): cost_usd is NULL for its 1 llm_calls rows (--prices FILE can price it)",
                "nanoclaw | no price for model mystery-model (provider anthropic): cost_usd is NULL for its 1 Claude Code responses (--prices FILE can price it)",
            ]
        );
        Ok(())
    }
}
