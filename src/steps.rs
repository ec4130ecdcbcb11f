//! The steps: the numbered SQL files of `sql/`, embedded in the binary and
//! run in order inside DuckDB. Each step creates tables, named by what they are.
//!
//! ```text
//! engine (run.rs)  params, stage_events, stage_llm_calls, diagnostics, sources
//! run_all          kinds (one row per registry entry), x_group_<name>() macros
//!                  sql/V001__session_identity.sql … sql/V0NN__<name>.sql, in order
//!                  (zero-padded, contiguous, unique)
//! ```
//! Each file opens with `Purpose:`, `Grain:`, `Inputs:` and `Output:` lines.
//! No step spells a source kind's name or an `x_group` number: a step asks
//! `kinds` for a trait ([`crate::store::KindTraits`]) and names a group with
//! its macro ([`crate::schema::Group`]).

use duckdb::Connection;

use crate::schema::Group;
use crate::sources::REGISTRY;

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
    step!("V007__mirrored_turns.sql"),
    step!("V008__deduped_secondary_copies.sql"),
    step!("V009__nanoclaw_rows.sql"),
    step!("V010__nanoclaw_deliveries.sql"),
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

/// Run the `kinds` prelude, then every step in order.
pub fn run_all(conn: &Connection) -> Result<(), StepError> {
    run_kinds(conn)?;
    STEPS.iter().try_for_each(|step| run_step(conn, step))
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

/// The `kinds` table — one row per [`crate::sources::REGISTRY`] entry: its
/// `source_kind`, `agent` and one column per [`crate::store::KindTraits`]
/// field — and one macro per [`Group`], `x_group_<name>()`, whose value is
/// the group's `x_group`.
pub fn kinds_sql() -> String {
    fn text(s: &str) -> String {
        format!("'{}'", s.replace('\'', "''"))
    }
    fn opt(s: Option<&str>) -> String {
        s.map_or_else(|| "NULL".to_string(), text)
    }
    let rows: Vec<String> = REGISTRY
        .iter()
        .map(|e| {
            let t = &e.traits;
            format!(
                "    ({}, {}, {}, {}, {}, {}, {})",
                text(e.kind),
                text(e.agent.as_str()),
                opt(t.session_store),
                t.message_store,
                opt(t.turn_copy),
                t.prompt_copy,
                opt(t.nanoclaw),
            )
        })
        .collect();
    let mut sql = format!(
        "CREATE TABLE kinds (
    source_kind VARCHAR PRIMARY KEY,
    agent VARCHAR NOT NULL,
    session_store VARCHAR,
    message_store BOOLEAN NOT NULL,
    turn_copy VARCHAR,
    prompt_copy BOOLEAN NOT NULL,
    nanoclaw VARCHAR
);
INSERT INTO kinds VALUES
{};
",
        rows.join(",\n")
    );
    for g in Group::ALL {
        sql.push_str(&format!(
            "CREATE MACRO x_group_{}() AS {};\n",
            g.name(),
            g as i32
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
                    t.session_store.map(String::from),
                    t.message_store,
                    t.turn_copy.map(String::from),
                    t.prompt_copy,
                    t.nanoclaw.map(String::from),
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

    /// A step's header (its leading comment lines) names every table and
    /// view it creates, and every table it appends to or updates, in its
    /// `Output:` part; a `V###` it mentions is a step.
    #[test]
    fn every_step_header_names_what_it_creates() -> Result<(), regex::Error> {
        let created = regex::Regex::new(
            r"(?im)^\s*(?:CREATE\s+(?:OR\s+REPLACE\s+)?(?:TABLE|VIEW)|INSERT\s+INTO|UPDATE)\s+(\w+)",
        )?;
        let version = regex::Regex::new(r"\bV(\d{3})\b")?;
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
}
