//! The steps: the numbered SQL files of `sql/`, embedded in the binary and
//! run in order inside DuckDB. Each step creates tables, named by what they are.
//!
//! ```text
//! engine (run.rs)  params, prices, stage_events, stage_llm_calls, diagnostics, sources
//! run_all          kinds (one row per registry entry), x_group_<name>() macros
//!                  sql/V001__session_identity.sql … sql/V0NN__<name>.sql, in order
//!                  (zero-padded, contiguous, unique); sql/shared/pricing.sql in
//!                  place of a step's `-- @pricing` line (PRICING, step_sql)
//! ```
//! Each file opens with `Purpose:`, `Grain:`, `Inputs:` and `Output:` lines,
//! and `-- Creates:` lines naming each table and view it makes ([`declared`]),
//! which the runner checks against what it made.
//!
//! The events chain ([`CHAIN`]: raw_events → events_kept → events_utc →
//! events_deduped → events_linked) is five views, each defined by one step
//! over the one before. How the run keeps them is [`Chain`]: views on a
//! large home (the staged Parquet stays the one copy of the rows), each
//! copied into a table of the same name right after its step on a small one
//! (a statement then plans and reads one table, not the staged files and
//! the chain's seventeen joins: that planning was most of a small home's run).
//! V016 joins the rows to their ordinals by hash or by sort as the staged
//! rows and the memory limit say ([`PlanJoin`], the macro `x_plan_by_sort()`).
//! No step spells a source kind's name or an `x_group` number: a step asks
//! `kinds` for a trait ([`crate::store::KindTraits`]) and names a group with
//! its macro ([`crate::schema::Group`]).

use duckdb::Connection;

use crate::diag::DiagCode;
use crate::schema::Group;
use crate::sources::REGISTRY;
use crate::store::{KindTraits, NanoclawPart, SessionLayout, TurnCopy};
use crate::timings::{Clock, Phase};

/// `(file name, its text)`: the file embedded.
macro_rules! step {
    ($file:literal) => {
        ($file, include_str!(concat!("../../sql/", $file)))
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
    step!("V017__call_attribution.sql"),
    step!("V018__nanoclaw_calls.sql"),
    step!("V019__call_prices.sql"),
    step!("V020__llm_calls.sql"),
    step!("V021__sessions.sql"),
    step!("V022__install_versions.sql"),
    step!("V023__session_titles.sql"),
];

/// The pricing rules (`sql/shared/pricing.sql`: the macros price_name,
/// call_cost and calls_cost, the tables price_names and model_prices over
/// `model_uses`): run by the step that holds the [`PRICING_AT`] line, in
/// its place, and by a reader that prices a load's output again at read
/// ([`crate::engine::reprice`]), so both price alike.
pub const PRICING: &str = include_str!("../../sql/shared/pricing.sql");

/// The line of a step that [`PRICING`] runs in place of.
pub const PRICING_AT: &str = "\n-- @pricing\n";

/// A step's SQL as it runs: [`PRICING`] in place of its [`PRICING_AT`] line.
pub fn step_sql(sql: &str) -> std::borrow::Cow<'_, str> {
    match sql.split_once(PRICING_AT) {
        Some((before, after)) => format!("{before}\n{PRICING}\n{after}").into(),
        None => sql.into(),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// DuckDB failed running the step.
    #[error("sql/{file}: {source}")]
    Sql {
        file: &'static str,
        #[source]
        source: duckdb::Error,
    },
    /// The step made other tables or views than its `-- Creates:` header
    /// declares ([`declared`]): a step file and its header disagree.
    #[error("sql/{file}: made {made}, but its header declares {declared}")]
    Undeclared {
        file: &'static str,
        made: String,
        declared: String,
    },
}

impl StepError {
    /// The file of the step that failed.
    pub fn file(&self) -> &'static str {
        match self {
            StepError::Sql { file, .. } | StepError::Undeclared { file, .. } => file,
        }
    }
}

/// What a step creates: a table or a view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Made {
    Table,
    View,
}

impl Made {
    fn as_str(self) -> &'static str {
        match self {
            Made::Table => "table",
            Made::View => "view",
        }
    }
}

/// What a step's header declares it creates: its `-- Creates:` lines, each
/// a comma-separated list of `table <name>` and `view <name>` (the tables
/// and views that exist after the step and did not before it; what it
/// drops or replaces is not listed). The runner checks the step made
/// exactly these ([`run_step`]) and keeps the chain's layers by them
/// ([`Chain`]), never by reading the SQL itself.
pub fn declared(sql: &str) -> Vec<(Made, String)> {
    let mut made: Vec<(Made, String)> = sql
        .lines()
        .filter_map(|l| l.strip_prefix("-- Creates:"))
        .flat_map(|l| l.split(','))
        .filter_map(
            |item| match item.split_whitespace().collect::<Vec<_>>()[..] {
                ["table", name] => Some((Made::Table, name.to_string())),
                ["view", name] => Some((Made::View, name.to_string())),
                _ => None,
            },
        )
        .collect();
    made.sort();
    made
}

/// The tables and views of the engine's own catalog (temporary ones too),
/// sorted.
pub fn relations(conn: &Connection) -> duckdb::Result<Vec<(Made, String)>> {
    let mut stmt = conn.prepare(
        "SELECT 'table', table_name FROM duckdb_tables()
           WHERE NOT internal AND database_name IN (current_database(), 'temp')
         UNION ALL
         SELECT 'view', view_name FROM duckdb_views()
           WHERE NOT internal AND database_name IN (current_database(), 'temp')",
    )?;
    let rows = stmt.query_map([], |r| {
        let kind: String = r.get(0)?;
        let made = if kind == "view" {
            Made::View
        } else {
            Made::Table
        };
        Ok((made, r.get::<_, String>(1)?))
    })?;
    let mut all = rows.collect::<duckdb::Result<Vec<_>>>()?;
    all.sort();
    Ok(all)
}

/// `(kind, name)` pairs as the header writes them.
fn listed(made: &[(Made, String)]) -> String {
    if made.is_empty() {
        return "nothing".to_string();
    }
    made.iter()
        .map(|(m, n)| format!("{} {n}", m.as_str()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// What [`StepError::file`] names when the `kinds` table or the `x_group`
/// macros (built here, before the first file) fail.
pub const KINDS: &str = "V000__kinds (built by steps.rs from the registry)";

/// The layers of the events chain, in order: each a view that one step
/// defines over the layer before it (V003's raw_events over the staged
/// Parquet … V014's events_linked), read by the steps after it.
pub const CHAIN: [&str; 5] = [
    "raw_events",
    "events_kept",
    "events_utc",
    "events_deduped",
    "events_linked",
];

/// How the steps keep the [`CHAIN`]'s layers. The output is the same
/// either way (`hardening::the_chain_as_views_or_tables_gives_the_same_outputs`):
/// no step changes a table a layer reads after the layer's own step
/// (`tests::no_step_changes_what_a_chain_layer_reads_after_it`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// Views: each statement that reads a layer reads the staged Parquet
    /// again and runs the joins of the layers under it. Nothing is copied,
    /// so a large home stays within the memory limit.
    Views,
    /// Each layer copied into a table of its name right after the step that
    /// defines it (the view dropped). On a small home the planning of the
    /// chain in each of the ~40 statements that read it, and opening the
    /// staged files again, is most of the run; on a large one the five
    /// copies cost more than they save (BENCHMARKS.md "The events chain as
    /// tables").
    Tables,
}

impl Chain {
    /// The most staged event rows a run keeps the chain as tables for.
    pub const MAX_TABLE_ROWS: u64 = 25_000;
    /// The most staged events Parquet (uncompressed) a run keeps the chain as
    /// tables for: five copies of the staged text and native stay well
    /// within the default memory limit.
    pub const MAX_TABLE_BYTES: u64 = 16 << 20;

    /// The chain for a stage of `rows` event rows in `bytes` of Parquet.
    pub fn for_stage(rows: u64, bytes: u64) -> Chain {
        if rows <= Self::MAX_TABLE_ROWS && bytes <= Self::MAX_TABLE_BYTES {
            Chain::Tables
        } else {
            Chain::Views
        }
    }

    /// `views` or `tables` (`NANOLOAD_TEST_SQL_CHAIN`, which forces one in
    /// the tests).
    pub fn parse(s: &str) -> Option<Chain> {
        match s {
            "views" => Some(Chain::Views),
            "tables" => Some(Chain::Tables),
            _ => None,
        }
    }

    /// Its name, as [`Chain::parse`] reads it (`--timings`, `--summary-json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Chain::Views => "views",
            Chain::Tables => "tables",
        }
    }
}

/// How many threads DuckDB runs the SQL steps on. The output is the same
/// either way (`hardening::the_steps_on_one_thread_or_all_give_the_same_outputs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepThreads {
    /// One thread: on a small stage DuckDB's parallel operators cost more in
    /// scheduling than they save, in wall time as in CPU (BENCHMARKS.md
    /// "The SQL steps of a small home on one thread").
    One,
    /// Every thread the engine was opened with (`--threads`).
    All,
}

impl StepThreads {
    /// The most staged event rows a run's SQL steps take one thread for:
    /// set between synthetic homes of 45 k rows, where one thread is as
    /// fast as two and cheaper in CPU, and of 76 k, where it is slower.
    pub const MAX_ONE_THREAD_ROWS: u64 = 50_000;

    /// The threads for a stage of `rows` event rows.
    pub fn for_stage(rows: u64) -> StepThreads {
        if rows <= Self::MAX_ONE_THREAD_ROWS {
            StepThreads::One
        } else {
            StepThreads::All
        }
    }

    /// `one` or `all` (`NANOLOAD_TEST_STEP_THREADS`, which forces one in
    /// the tests).
    pub fn parse(s: &str) -> Option<StepThreads> {
        match s {
            "one" => Some(StepThreads::One),
            "all" => Some(StepThreads::All),
            _ => None,
        }
    }

    /// Its name, as [`StepThreads::parse`] reads it (`--timings`, `--summary-json`).
    pub fn as_str(self) -> &'static str {
        match self {
            StepThreads::One => "one",
            StepThreads::All => "all",
        }
    }

    /// Run `steps` with DuckDB's `threads` as this says, `all` being the
    /// engine's own; `all` is set again after, whatever `steps` returns, so
    /// what runs next (the write, a ledger's merge) has every thread.
    pub fn around<T, E: From<duckdb::Error>>(
        self,
        conn: &Connection,
        all: usize,
        steps: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let one = self == StepThreads::One && all > 1;
        if one {
            conn.execute_batch("SET threads = 1;")?;
        }
        let done = steps();
        if one {
            conn.execute_batch(&format!("SET threads = {all};"))?;
        }
        done
    }
}

/// How V016 joins every row to its `ordinals` row (by `x_row`), as the
/// macro `x_plan_by_sort()` of the prelude tells it. The output is the same
/// either way (`hardening::the_plan_by_hash_or_by_sort_gives_the_same_outputs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanJoin {
    /// `ordinals` hashed: the cheaper, while its hash table fits in the
    /// memory limit beside the hash tables of the views' joins.
    Hash,
    /// Both sides sorted by `x_row` and matched in order (an ASOF join):
    /// sorts spill, a hash table the probe needs does not. The 4 GB home of
    /// BENCHMARKS.md runs out of memory at the default limit hashed and
    /// loads sorted; where both fit the sort is the slower (BENCHMARKS.md
    /// "The 4 GB home at 256 MiB again").
    Sort,
}

impl PlanJoin {
    /// Memory limit per staged row below which `ordinals` is hashed: a
    /// row's hash table entry (~40 bytes), its share of the pointer array
    /// and of the views' own hash tables, with room to spare: at the
    /// default limit the 1 GB home of BENCHMARKS.md (764 k staged rows)
    /// hashes, and the line, 839 k staged rows, stays below the 4 GB home's
    /// halves (1.33 M each), which did not fit hashed.
    pub const HASH_BYTES_PER_ROW: u64 = 320;

    /// The join for a stage of `rows` event rows under `memory_limit` bytes.
    pub fn for_stage(rows: u64, memory_limit: u64) -> PlanJoin {
        if rows.saturating_mul(Self::HASH_BYTES_PER_ROW) <= memory_limit {
            PlanJoin::Hash
        } else {
            PlanJoin::Sort
        }
    }

    /// `hash` or `sort` (`NANOLOAD_TEST_PLAN_JOIN`, which forces one in the
    /// tests).
    pub fn parse(s: &str) -> Option<PlanJoin> {
        match s {
            "hash" => Some(PlanJoin::Hash),
            "sort" => Some(PlanJoin::Sort),
            _ => None,
        }
    }

    /// Its name, as [`PlanJoin::parse`] reads it (`--timings`, `--summary-json`).
    pub fn as_str(self) -> &'static str {
        match self {
            PlanJoin::Hash => "hash",
            PlanJoin::Sort => "sort",
        }
    }

    /// The macro V016 reads: a constant, so the branch not taken is a
    /// constant false filter DuckDB drops before planning it.
    fn macro_sql(self) -> String {
        format!(
            "CREATE MACRO x_plan_by_sort() AS {};\n",
            self == PlanJoin::Sort
        )
    }
}

/// Run the `kinds` prelude, then every step in order, keeping the events
/// chain as `chain` says and joining V016's plan as `plan` says; `starting`
/// is told each one's index and file name (`kinds` first) before it runs,
/// and returns whether it made tables or views itself (the catalog is then
/// read again before the step: what a step made is checked against what
/// existed right before it).
/// Returns each one's wall and CPU time, named by its file (`kinds` first).
pub fn run_all(
    conn: &Connection,
    (chain, plan): (Chain, PlanJoin),
    starting: &mut dyn FnMut(usize, &'static str) -> bool,
) -> Result<Vec<Phase>, StepError> {
    let mut times = Vec::with_capacity(STEPS.len() + 1);
    let started = Clock::start();
    starting(0, "kinds");
    run_kinds(conn, plan)?;
    times.push(started.phase("kinds"));
    let catalog = |file| {
        move |conn: &Connection| relations(conn).map_err(|source| StepError::Sql { file, source })
    };
    // the catalog after one step is the one before the next, unless a hook
    // between them made something
    let mut known = catalog(KINDS)(conn)?;
    for (i, step) in STEPS.iter().enumerate() {
        let started = Clock::start();
        if starting(i + 1, step.0) {
            known = catalog(step.0)(conn)?;
        }
        known = run_step_after(conn, step, &known)?;
        if chain == Chain::Tables {
            for layer in chain_layers(step.1) {
                conn.execute_batch(&format!(
                    "CREATE TABLE {layer}__table AS SELECT * FROM {layer};
                     DROP VIEW {layer};
                     ALTER TABLE {layer}__table RENAME TO {layer};"
                ))
                .map_err(|source| StepError::Sql {
                    file: step.0,
                    source,
                })?;
                known.retain(|(_, n)| n != layer);
                known.push((Made::Table, layer.to_string()));
            }
            known.sort();
        }
        times.push(started.phase(step.0));
    }
    Ok(times)
}

/// The [`CHAIN`] layers a step creates, by its header ([`declared`]).
fn chain_layers(sql: &str) -> impl Iterator<Item = &'static str> {
    let views = declared(sql);
    CHAIN
        .into_iter()
        .filter(move |layer| views.iter().any(|(m, n)| *m == Made::View && n == layer))
}

/// Create `kinds` and the `x_group_<name>()` macros ([`kinds_sql`]), and
/// `x_plan_by_sort()` ([`PlanJoin`]).
fn run_kinds(conn: &Connection, plan: PlanJoin) -> Result<(), StepError> {
    conn.execute_batch(&(kinds_sql() + &plan.macro_sql()))
        .map_err(|source| StepError::Sql {
            file: KINDS,
            source,
        })
}

/// Run one step and check it made exactly the tables and views its header
/// declares ([`declared`]), the catalog read before it (the step tests'
/// harness, which makes tables of its own between steps).
#[cfg(test)]
fn run_step(conn: &Connection, step: &(&'static str, &'static str)) -> Result<(), StepError> {
    let before = relations(conn).map_err(|source| StepError::Sql {
        file: step.0,
        source,
    })?;
    run_step_after(conn, step, &before).map(|_| ())
}

/// [`run_step`] given the catalog as it is before the step (`before`,
/// sorted): the catalog after it.
fn run_step_after(
    conn: &Connection,
    (file, sql): &(&'static str, &'static str),
    before: &[(Made, String)],
) -> Result<Vec<(Made, String)>, StepError> {
    let sql_err = |source| StepError::Sql { file, source };
    conn.execute_batch(&step_sql(sql)).map_err(sql_err)?;
    let after = relations(conn).map_err(sql_err)?;
    let made: Vec<(Made, String)> = after
        .iter()
        .filter(|r| before.binary_search(r).is_err())
        .cloned()
        .collect();
    let declared = declared(sql);
    if made != declared {
        return Err(StepError::Undeclared {
            file,
            made: listed(&made),
            declared: listed(&declared),
        });
    }
    Ok(after)
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

pub use crate::readout::sql_text;

fn opt(s: Option<&str>) -> String {
    s.map_or_else(|| "NULL".to_string(), sql_text)
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
                sql_text(e.kind),
                sql_text(e.agent.as_str()),
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
    let codes: Vec<String> = DiagCode::ALL.iter().map(|c| sql_text(c.as_str())).collect();
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
            .map(|e| format!(" WHEN {} THEN {}", sql_text(e.kind), value(&e.traits)))
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
mod tests;
