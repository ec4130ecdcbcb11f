//! `nanoload prune`: the one deletion from a ledger, under its lock, in one
//! transaction.

use super::*;

/// What `nanoload prune` removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pruned {
    pub events: u64,
    pub llm_calls: u64,
    pub stores: u64,
}

/// Remove from the ledger what is no longer on disk and was last seen by a
/// sync that finished before `before` (UTC, `YYYY-MM-DD` or an instant
/// DuckDB reads): rows, calls and stores not present whose
/// `last_seen_load` is such a sync. Present rows and the `loads` rows stay.
/// What a sync that could not read all of HOME marked gone (its
/// `loads.unreadable` not 0, or not recorded: a sync of format 2) is
/// removed only with `force`; without it nothing is done
/// ([`SyncError::PruneRefused`]). The only deletion from a ledger; under
/// its lock, in one transaction.
pub fn prune(ledger: &Path, before: &str, force: bool) -> Result<Pruned, SyncError> {
    let ledger = std::path::absolute(ledger).map_err(|e| SyncError::Ledger {
        path: ledger.to_path_buf(),
        message: e.to_string(),
    })?;
    let fail = |e: &dyn std::fmt::Display| SyncError::Ledger {
        path: ledger.clone(),
        message: crate::diag::one_line(&e.to_string()),
    };
    if !ledger.is_file() {
        return Err(fail(&"no such ledger"));
    }
    let _lock = lock(&ledger)?;
    // what sorts spills beside the ledger, DuckDB's own place for a file's
    let settings = crate::engine::Settings {
        memory_limit: crate::engine::READER_MEMORY_LIMIT,
        spill: None,
        threads: None,
    };
    // `--before` is a UTC date or instant: the connection runs in UTC
    let conn = crate::engine::open_file(&ledger, crate::engine::Access::ReadWrite, &settings)
        .map_err(|e| unopened(&ledger, &e, true))?;
    ours(&conn).map_err(|e| fail(&e))?;
    compress_strings(&conn).map_err(|e| fail(&e))?;
    let cutoff: i64 = conn
        .query_row(
            "SELECT epoch_us(CAST(CAST(? AS TIMESTAMPTZ) AS TIMESTAMP))",
            [before],
            |r| r.get(0),
        )
        .map_err(|_| {
            fail(&format!(
                "--before {before:?}: not a date (YYYY-MM-DD) or an instant"
            ))
        })?;
    const TABLES: [&str; 3] = ["ledger_events", "ledger_llm_calls", "ledger_sources"];
    let old = format!("(SELECT sync FROM loads WHERE epoch_us(finished_at) < {cutoff})");
    let doubtful = "(gone_load IS NULL OR gone_load IN
                      (SELECT sync FROM loads WHERE unreadable IS NULL OR unreadable > 0))";
    let run = || -> Result<Result<Pruned, SyncError>, duckdb::Error> {
        conn.execute_batch("BEGIN TRANSACTION;")?;
        let gone = |table: &str| format!("{table} WHERE NOT present AND last_seen_load IN {old}");
        if !force {
            let mut n = [0u64; 3];
            for (n, table) in n.iter_mut().zip(TABLES) {
                *n = conn.query_row(
                    &format!("SELECT count(*) FROM {} AND {doubtful}", gone(table)),
                    [],
                    |r| r.get::<_, i64>(0),
                )? as u64;
            }
            if n.iter().any(|n| *n > 0) {
                let union = joined(TABLES, " UNION ALL ", |t| {
                    format!("SELECT gone_load FROM {} AND {doubtful}", gone(t))
                });
                let marked: Vec<Option<i64>> = {
                    let mut stmt = conn.prepare(&format!(
                        "SELECT DISTINCT gone_load FROM ({union}) ORDER BY 1 NULLS LAST"
                    ))?;
                    stmt.query_map([], |r| r.get(0))?
                        .collect::<Result<_, _>>()?
                };
                let syncs: Vec<i64> = marked.iter().flatten().copied().collect();
                let unknown = marked.iter().any(Option::is_none);
                conn.execute_batch("ROLLBACK;")?;
                return Ok(Err(SyncError::PruneRefused {
                    path: ledger.clone(),
                    rows: n[0],
                    calls: n[1],
                    stores: n[2],
                    syncs: which_syncs(&syncs, unknown),
                }));
            }
        }
        let n = |table: &str| {
            conn.execute(&format!("DELETE FROM {}", gone(table)), [])
                .map(|n| n as u64)
        };
        let pruned = Pruned {
            events: n(TABLES[0])?,
            llm_calls: n(TABLES[1])?,
            stores: n(TABLES[2])?,
        };
        conn.execute_batch("COMMIT; CHECKPOINT;")?;
        Ok(Ok(pruned))
    };
    match run() {
        Ok(done) => done,
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK;");
            Err(fail(&e))
        }
    }
}

/// The syncs a refused prune names: `sync 2`, `syncs 2, 5`, and those of
/// an earlier nanoload, which did not record what they could read.
pub(super) fn which_syncs(syncs: &[i64], unknown: bool) -> String {
    let mut said = Vec::new();
    match syncs {
        [] => {}
        [one] => said.push(format!("sync {one}")),
        many => said.push(format!("syncs {}", joined(many, ", ", i64::to_string))),
    }
    if unknown {
        said.push("syncs of an earlier nanoload, which did not record what they could read".into());
    }
    said.join("; ")
}
