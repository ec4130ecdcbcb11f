//! The steps' tests: the checks of the SQL folder as a whole (headers,
//! kinds, trait values, diagnostic codes, planner workarounds) here, and one
//! file per step, `v###_<step>.rs`, whose tests stage rows by hand, run the
//! steps up to that step ([`Steps::run_through`]) and read its tables. The
//! harness ([`Steps`] and the helpers that stage common shapes) is here.

use super::*;

use arrow::datatypes::{DataType, Schema, TimeUnit};

// the tests of each step, in step order
mod v001_session_identity;
mod v002_store_roles;
mod v003_raw_events;
mod v004_deduped_session_copies;
mod v005_tz_offsets;
mod v006_timestamps;
mod v007_session_turns;
mod v008_deduped_secondary_copies;
mod v009_nanoclaw_rows;
mod v010_nanoclaw_links;
mod v011_nanoclaw_transcript_sessions;
mod v012_project_paths;
mod v013_nanoclaw_losses;
mod v014_linked_events;
mod v015_events;
mod v016_write_layout;
mod v017_call_attribution;
mod v018_nanoclaw_calls;
mod v019_call_prices;
mod v020_llm_calls;
mod v021_sessions;
mod v022_install_versions;
mod v023_session_titles;

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
        let v: i32 = conn.query_row(&format!("SELECT x_group_{}()", g.name()), [], |r| r.get(0))?;
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
        assert!(
            !declared(sql).is_empty(),
            "{name} declares nothing it creates"
        );
    }
    Ok(())
}

/// A step makes exactly the tables and views its `-- Creates:` header
/// declares: one that makes more, or less, is refused by name.
#[test]
fn a_step_that_makes_other_than_its_header_declares_is_refused() -> Res {
    let conn = Connection::open_in_memory()?;
    let as_declared = (
        "V900__as_declared.sql",
        "-- Creates: table a, view b\nCREATE TABLE a AS SELECT 1 AS x; CREATE VIEW b AS SELECT * FROM a;",
    );
    let more = (
        "V901__more.sql",
        "-- Creates: table c\nCREATE TABLE c AS SELECT 1 AS x; CREATE TABLE d AS SELECT 1 AS x;",
    );
    let less = (
        "V902__less.sql",
        "-- Creates: table e, view f\nCREATE TABLE e AS SELECT 1 AS x;",
    );
    let outcome = |step| match run_step(&conn, step) {
        Ok(()) => "ok".to_string(),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        [outcome(&as_declared), outcome(&more), outcome(&less)],
        [
            "ok",
            "sql/V901__more.sql: made table c, table d, but its header declares table c",
            "sql/V902__less.sql: made table e, but its header declares table e, view f",
        ]
    );
    Ok(())
}

/// The pricing rules are run by one step, in place of its `-- @pricing`
/// line, and have the header every step has; a reader runs the same text
/// (`engine::reprice`).
#[test]
fn one_step_runs_the_shared_pricing_rules() {
    let holders: Vec<&str> = STEPS
        .iter()
        .filter(|(_, sql)| sql.contains(PRICING_AT))
        .map(|(n, _)| *n)
        .collect();
    assert_eq!(holders, ["V019__call_prices.sql"]);
    for (_, sql) in STEPS {
        assert!(sql.matches(PRICING_AT).count() <= 1);
        let run = step_sql(sql);
        assert!(!run.contains(PRICING_AT));
        assert_eq!(run.contains(PRICING), sql.contains(PRICING_AT));
    }
    for word in ["Purpose:", "Grain:", "Inputs:", "Output:"] {
        assert!(
            PRICING
                .lines()
                .any(|l| l.starts_with("--") && l.contains(word)),
            "sql/shared/pricing.sql lacks a `{word}` header line"
        );
    }
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sql/shared/pricing.sql"
    ))
    .unwrap_or_default();
    assert_eq!(text, PRICING);
}

/// Each layer of the events chain is a view one step defines, in chain
/// order: what `run_all` copies into a table under `Chain::Tables` (a layer
/// no step defined as a view would silently stay a view).
#[test]
fn every_chain_layer_is_the_view_of_one_step_in_order() {
    let mut at = Vec::new();
    for layer in CHAIN {
        let steps: Vec<usize> = STEPS
            .iter()
            .enumerate()
            .filter(|(_, (_, sql))| chain_layers(sql).any(|l| l == layer))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(steps.len(), 1, "{layer} is a view of steps {steps:?}");
        at.push(steps[0]);
    }
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "chain out of step order: {at:?}"
    );
}

/// The tables and views a statement reads (`FROM x`, `JOIN x`).
fn read_names(sql: &str) -> Vec<String> {
    let re = regex::Regex::new(r"(?i)\b(?:FROM|JOIN)\s+([a-z_][a-z0-9_]*)")
        .unwrap_or_else(|e| unreachable!("{e}"));
    re.captures_iter(sql).map(|c| c[1].to_lowercase()).collect()
}

/// Where in `sql` a statement changes `name` (appends, updates, deletes,
/// alters, drops or replaces it).
fn changes(sql: &str, name: &str) -> Option<String> {
    let re = regex::Regex::new(&format!(
        r"(?im)^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM|ALTER\s+TABLE|DROP\s+(?:TABLE|VIEW)|CREATE\s+OR\s+REPLACE\s+(?:TABLE|VIEW)|TRUNCATE)\s+{name}\b.*"
    ))
    .unwrap_or_else(|e| unreachable!("{e}"));
    re.find(sql).map(|m| m.as_str().trim().to_string())
}

/// The statements after each chain layer's view that change a table the
/// view reads: `(layer, table, statement)`.
fn chain_conflicts(steps: &[(&str, &str)]) -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    for (i, (_, sql)) in steps.iter().enumerate() {
        for layer in chain_layers(sql) {
            let Some(start) = sql.find(&format!("CREATE VIEW {layer} AS")) else {
                continue;
            };
            let end = sql[start..].find(';').map_or(sql.len(), |e| start + e);
            let read = read_names(&sql[start..end]);
            let after = std::iter::once(&sql[end..]).chain(steps[i + 1..].iter().map(|s| s.1));
            for (text, t) in after.flat_map(|text| read.iter().map(move |t| (text, t))) {
                if let Some(stmt) = changes(text, t) {
                    found.push((layer.to_string(), t.clone(), stmt));
                }
            }
        }
    }
    found
}

/// A layer copied into a table (`Chain::Tables`) is the rows of its view
/// at its step's end; a view is read later. They stay the same only while
/// no later statement changes a table the view reads (V008 appends to
/// dropped_rows, which no layer reads: events_kept reads
/// session_copy_drops).
#[test]
fn no_step_changes_what_a_chain_layer_reads_after_it() {
    assert_eq!(chain_conflicts(STEPS), Vec::new());
    // the check finds a change: session_copy_drops appended to after V004
    let v004 = STEPS
        .iter()
        .find(|(f, _)| stem(f) == "deduped_session_copies")
        .unwrap_or_else(|| unreachable!("V004"));
    let later = (
        "V999__later.sql",
        "INSERT INTO session_copy_drops SELECT 1;\n",
    );
    assert_eq!(
        chain_conflicts(&[*v004, later]),
        vec![(
            "events_kept".to_string(),
            "session_copy_drops".to_string(),
            "INSERT INTO session_copy_drops SELECT 1;".to_string()
        )]
    );
}

#[test]
fn a_small_stage_keeps_the_chain_as_tables() {
    use Chain::*;
    let (rows, bytes) = (Chain::MAX_TABLE_ROWS, Chain::MAX_TABLE_BYTES);
    assert_eq!(Chain::for_stage(0, 0), Tables);
    assert_eq!(Chain::for_stage(rows, bytes), Tables);
    assert_eq!(Chain::for_stage(rows + 1, 0), Views);
    assert_eq!(Chain::for_stage(1, bytes + 1), Views);
    assert_eq!(Chain::parse("views"), Some(Views));
    assert_eq!(Chain::parse("tables"), Some(Tables));
    assert_eq!(Chain::parse("table"), None);
}

#[test]
fn a_small_stage_runs_the_steps_on_one_thread() {
    use StepThreads::*;
    let most = StepThreads::MAX_ONE_THREAD_ROWS;
    assert_eq!(StepThreads::for_stage(0), One);
    assert_eq!(StepThreads::for_stage(most), One);
    assert_eq!(StepThreads::for_stage(most + 1), All);
    // the event rows of BENCHMARKS.md's realistic and synthetic 200 MB homes
    assert_eq!(StepThreads::for_stage(17_525), One);
    assert_eq!(StepThreads::for_stage(151_846), All);
    assert_eq!(StepThreads::parse("one"), Some(One));
    assert_eq!(StepThreads::parse("all"), Some(All));
    assert_eq!(StepThreads::parse("1"), None);
}

/// The steps see one thread and what follows sees all again, also when a
/// step fails; with one thread in all, or with `All`, nothing is changed.
#[test]
fn the_steps_threads_are_set_back_after_them() -> Result<(), duckdb::Error> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch("SET threads = 4;")?;
    let threads = |c: &Connection| -> Result<i64, duckdb::Error> {
        c.query_row("SELECT current_setting('threads')", [], |r| r.get(0))
    };
    let seen = StepThreads::One.around(&conn, 4, || threads(&conn))?;
    assert_eq!((seen, threads(&conn)?), (1, 4));
    let failed: Result<(), duckdb::Error> = StepThreads::One.around(&conn, 4, || {
        assert_eq!(threads(&conn)?, 1);
        conn.execute_batch("SELECT * FROM no_such_table;")
    });
    assert!(failed.is_err());
    assert_eq!(threads(&conn)?, 4);
    let seen = StepThreads::All.around(&conn, 4, || threads(&conn))?;
    assert_eq!((seen, threads(&conn)?), (4, 4));
    conn.execute_batch("SET threads = 1;")?;
    let seen = StepThreads::One.around(&conn, 1, || threads(&conn))?;
    assert_eq!((seen, threads(&conn)?), (1, 1));
    Ok(())
}

#[test]
fn a_stage_whose_ordinals_would_not_fit_hashed_is_joined_by_sort() {
    use PlanJoin::*;
    let limit = 256 << 20;
    let most = limit / PlanJoin::HASH_BYTES_PER_ROW;
    assert_eq!(PlanJoin::for_stage(0, limit), Hash);
    assert_eq!(PlanJoin::for_stage(most, limit), Hash);
    assert_eq!(PlanJoin::for_stage(most + 1, limit), Sort);
    // the 1 GB and 4 GB homes of BENCHMARKS.md, staged rows
    assert_eq!(PlanJoin::for_stage(763_918, limit), Hash);
    assert_eq!(PlanJoin::for_stage(3_049_140, limit), Sort);
    // twice the limit, twice the rows
    assert_eq!(PlanJoin::for_stage(2 * most, 2 * limit), Hash);
    assert_eq!(PlanJoin::for_stage(u64::MAX, limit), Sort);
    assert_eq!(PlanJoin::parse("hash"), Some(Hash));
    assert_eq!(PlanJoin::parse("sort"), Some(Sort));
    assert_eq!(PlanJoin::parse("asof"), None);
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
    let design = include_str!("../../../docs/design.md");
    for (name, sql) in STEPS {
        let header: Vec<&str> = sql.lines().take_while(|l| l.starts_with("--")).collect();
        let output = header
            .iter()
            .position(|l| l.contains("Output:"))
            .map(|i| header[i..].join("\n"))
            .unwrap_or_default();
        // what the step runs: the shared pricing rules in place of its
        // `-- @pricing` line too
        for c in created.captures_iter(&step_sql(sql)) {
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
        // as the step runs: the shared pricing rules in place of its line
        let sql = &*step_sql(sql);
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

/// Every step has its file of tests, `tests/v###_<step>.rs`, and every
/// test in it runs the steps up to that step ([`Steps::run_through`]).
#[test]
fn every_step_has_a_test_that_runs_it() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/steps/tests");
    for (file, _) in STEPS {
        let module = format!("v{}_{}", &file[1..4], stem(file));
        let source = std::fs::read_to_string(dir.join(format!("{module}.rs")))?;
        let tests: Vec<&str> = source.split("#[test]").skip(1).collect();
        assert!(!tests.is_empty(), "{file}: no test in {module}.rs");
        for t in tests {
            assert!(
                t.contains(&format!("run_through(\"{}\")", stem(file))),
                "{module}.rs: a test that does not run {}: {}",
                stem(file),
                t.lines().find(|l| l.contains("fn ")).unwrap_or_default()
            );
        }
    }
    let mods = std::fs::read_dir(&dir)?.filter_map(Result::ok).count();
    assert_eq!(mods, STEPS.len() + 1, "one file per step, and mod.rs");
    Ok(())
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
    /// How V016 joins its plan ([`PlanJoin::Hash`] unless a test sets it
    /// before the first step).
    plan: PlanJoin,
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
        Ok(Steps {
            conn,
            next: 0,
            plan: PlanJoin::Hash,
        })
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
            run_kinds(&self.conn, self.plan)?;
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

/// A secondary copy of a thread's exchanges.
const ARCHIVE: &str = "nanoclaw.exchange_archive";

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

/// The columns of `table`, in order.
fn columns(h: &Steps, table: &str) -> Res<Vec<String>> {
    h.rows(&format!("SELECT column_name FROM (DESCRIBE {table})"))
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
