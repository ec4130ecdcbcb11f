//! The steps: the numbered SQL files of `sql/`, embedded in the binary and
//! run in order inside DuckDB. Each step creates tables, named by what they are.
//!
//! ```text
//! sql/V001__raw_events.sql … sql/V0NN__name.sql    zero-padded, contiguous, unique
//! ```
//! Each file opens with its purpose, grain and inputs. Before the first one
//! runs, the engine creates `params`, `stage_events`, `stage_llm_calls`,
//! `stage_diagnostics` and `stage_sources` (see `run.rs`).

use duckdb::Connection;

/// (file name, SQL text), in version order.
pub const STEPS: &[(&str, &str)] = &[
    (
        "V001__session_identity.sql",
        include_str!("../sql/V001__session_identity.sql"),
    ),
    (
        "V002__raw_events.sql",
        include_str!("../sql/V002__raw_events.sql"),
    ),
    (
        "V003__dedup_session_copies.sql",
        include_str!("../sql/V003__dedup_session_copies.sql"),
    ),
    (
        "V004__tz_offsets.sql",
        include_str!("../sql/V004__tz_offsets.sql"),
    ),
    (
        "V005__timestamps.sql",
        include_str!("../sql/V005__timestamps.sql"),
    ),
    (
        "V006__dedup_secondary_copies.sql",
        include_str!("../sql/V006__dedup_secondary_copies.sql"),
    ),
    (
        "V007__nanoclaw_links.sql",
        include_str!("../sql/V007__nanoclaw_links.sql"),
    ),
    ("V008__events.sql", include_str!("../sql/V008__events.sql")),
    (
        "V009__llm_calls.sql",
        include_str!("../sql/V009__llm_calls.sql"),
    ),
    (
        "V010__sessions.sql",
        include_str!("../sql/V010__sessions.sql"),
    ),
];

#[derive(Debug, thiserror::Error)]
#[error("sql/{file}: {source}")]
pub struct StepError {
    pub file: &'static str,
    #[source]
    pub source: duckdb::Error,
}

/// Run every step in order.
pub fn run_all(conn: &Connection) -> Result<(), StepError> {
    for (file, sql) in STEPS {
        conn.execute_batch(sql)
            .map_err(|source| StepError { file, source })?;
    }
    Ok(())
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
            for word in ["Purpose:", "Grain:", "Inputs:"] {
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
}
