//! `nanoload export`: the ledger's rows staged again as a load stages a
//! home's, and run through the same steps and sink as a load.

use super::*;

/// What `nanoload export` writes.
#[derive(Debug, Clone)]
pub struct ExportArgs {
    pub ledger: PathBuf,
    pub out: PathBuf,
    pub tables: Option<PathBuf>,
    /// Only the rows on disk at the latest sync, without the ledger's
    /// columns: the bytes a load of HOME at that sync writes.
    pub snapshot: bool,
    /// `--dataset DIR --host NAME`: the tables as that host's partition.
    pub dataset: Option<(PathBuf, String)>,
    pub threads: usize,
    pub memory_limit: u64,
    /// The price table of the export's costs (`--prices`, `--price`,
    /// `--free`; the built-in one without them).
    pub prices: crate::prices::PriceTable,
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    pub load_id: String,
    /// The latest sync the export is of.
    pub sync: i64,
    pub events: u64,
}

/// The columns an export appends to `events` (history, not `--snapshot`).
pub const SEEN_COLUMNS: [(&str, &str); 3] = [
    ("first_seen_load", "BIGINT"),
    ("last_seen_load", "BIGINT"),
    ("present", "BOOLEAN"),
];

/// Today's outputs from the ledger: its rows (all of them, or with
/// `snapshot` those on disk at the latest sync) staged again and run
/// through the same steps as a load — so dedup, offsets and attribution
/// decide over the whole history — then written as a load writes them,
/// `events` with [`SEEN_COLUMNS`] appended unless `snapshot`.
pub fn export(args: &ExportArgs) -> Result<Exported, SyncError> {
    use crate::config::OutputPaths;
    use crate::sink::Outputs;
    let ledger = std::path::absolute(&args.ledger).map_err(|e| SyncError::Ledger {
        path: args.ledger.clone(),
        message: e.to_string(),
    })?;
    let fail = |path: &Path, e: &dyn std::fmt::Display| SyncError::Ledger {
        path: path.to_path_buf(),
        message: crate::diag::one_line(&e.to_string()),
    };
    if !ledger.is_file() {
        return Err(fail(
            &ledger,
            &"no such ledger (nanoload sync HOME LEDGER.duckdb makes one)",
        ));
    }
    let front = Front::create(&ledger)?;
    let (run_dir, spill) = (front.run_dir(), front.run_dir().spill_dir());
    // the rows stream out; what sorts (the calls, the stores) spills
    let settings = crate::engine::Settings {
        memory_limit: crate::engine::READER_MEMORY_LIMIT,
        spill: Some(&spill),
        threads: Some(args.threads),
    };
    let conn = crate::engine::open_file(&ledger, crate::engine::Access::ReadOnly, &settings)
        .map_err(|e| unopened(&ledger, &e, false))?;
    ours(&conn).map_err(|e| fail(&ledger, &e))?;
    let (sync, latest): (i64, String) = conn
        .query_row(
            "SELECT sync, load_id FROM loads ORDER BY sync DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map_err(|e| fail(&ledger, &e))?;
    // a snapshot is the latest load's output; the history is not, and says
    // so; priced with another table than the built-in one (the sync's: a
    // ledger keeps no prices), neither is, and the id folds the table in,
    // as a load's does
    let builtin = crate::prices::PriceTable::builtin().map_err(|e| fail(&ledger, &e.0))?;
    let priced = (args.prices != builtin).then(|| format!(" prices={}", args.prices.digest()));
    let load_id = match (args.snapshot, priced) {
        (true, None) => latest,
        (true, Some(p)) => derived_id(&format!("ledger snapshot {latest}{p}")),
        (false, p) => derived_id(&format!(
            "ledger history {latest} {sync}{}",
            p.unwrap_or_default()
        )),
    };
    let stage = run_dir.stage_dir();
    std::fs::create_dir_all(&stage).map_err(|e| fail(&stage, &e))?;
    let filter = if args.snapshot { "present" } else { "true" };
    let seen = stage.join("seen.parquet");
    let staged = stage_kept(&conn, &stage, filter, &seen).map_err(|e| fail(&ledger, &e))?;
    drop(conn);
    let outputs = Outputs::prepare(&OutputPaths {
        out: Some(std::path::absolute(&args.out).map_err(|e| fail(&args.out, &e))?),
        tables: args
            .tables
            .as_deref()
            .map(std::path::absolute)
            .transpose()
            .map_err(|e| fail(&ledger, &e))?,
        db: None,
        dataset: args
            .dataset
            .as_ref()
            .map(|(d, host)| std::path::absolute(d).map(|d| (d, host.clone())))
            .transpose()
            .map_err(|e| fail(&args.out, &e))?,
        summary_json: None,
    })
    .map_err(|e| fail(&args.out, &e))?;
    let mut hook = PlaceSeen {
        seen: &seen,
        placed: if args.snapshot {
            Placed::Never
        } else {
            Placed::NotYet
        },
    };
    let warn = |w: &str| eprintln!("{w}");
    let run = crate::pipeline::EngineRun {
        spill: &spill,
        threads: args.threads,
        memory_limit: args.memory_limit,
        staged: &staged,
        utc_offset_minutes: None,
        load_id: &load_id,
        prices: &args.prices,
    };
    let engine = crate::pipeline::engine(&run, &mut hook, &warn, &mut Default::default())
        .map_err(|e| fail(&ledger, &e))?;
    match hook.placed {
        Placed::Never => {}
        Placed::Done(Ok(())) => append_seen(engine.conn()).map_err(|e| fail(&ledger, &e))?,
        Placed::Done(Err(e)) => return Err(fail(&ledger, &e)),
        Placed::NotYet => {
            return Err(fail(
                &ledger,
                &"internal: no step after the one that makes write_layout to place the rows at",
            ));
        }
    }
    let events: i64 = engine
        .conn()
        .query_row("SELECT count(*) FROM events_plan", [], |r| r.get(0))
        .map_err(|e| fail(&ledger, &e))?;
    outputs
        .write(&engine, &staged.blobs, &load_id)
        .map_err(|e| fail(&args.out, &e))?;
    outputs.commit("", || {}).map_err(|e| fail(&args.out, &e))?;
    Ok(Exported {
        load_id,
        sync,
        events: events as u64,
    })
}

/// Where the export's rows are in placing their seen columns.
enum Placed {
    /// A snapshot: no seen columns.
    Never,
    /// Not yet: the steps have not laid the rows out.
    NotYet,
    Done(Result<(), duckdb::Error>),
}

/// The export's hook into the engine half: each row's place in OUT is
/// known once a step has made `write_layout`, and its x_row only until a
/// later step drops `ordinals`, so the rows' seen columns are taken by
/// place before the step after the layout; an attempt that runs out of
/// memory starts over, and its rows are placed again.
struct PlaceSeen<'a> {
    seen: &'a Path,
    placed: Placed,
}

impl crate::pipeline::Steps for PlaceSeen<'_> {
    fn before(&mut self, conn: &Connection, _: usize, _: usize, _: &str) -> bool {
        let place = matches!(self.placed, Placed::NotYet) && laid_out(conn);
        if place {
            self.placed = Placed::Done(place_seen(conn, self.seen));
        }
        place
    }

    fn again(&mut self) {
        if matches!(self.placed, Placed::Done(_)) {
            self.placed = Placed::NotYet;
        }
    }
}

/// The ledger's rows (those `filter` keeps) staged as a load stages a
/// home's: each row's text and native in a blob file unless a step reads
/// them ([`crate::stage::Stage::write_kept`]), so the steps hold no more
/// of the history than a load of the same rows does; each row's seen
/// columns by its `x_row` in `seen`. Rows stream from the ledger in its
/// own order: no output depends on which row gets which `x_row`.
pub(super) fn stage_kept(
    conn: &Connection,
    stage: &Path,
    filter: &str,
    seen: &Path,
) -> Result<crate::stage::Staged, Box<dyn std::error::Error + Send + Sync>> {
    use arrow::array::{ArrayRef, Int64Array};
    use arrow::datatypes::{Field, Schema};
    let kept = kept(&events_schema()).len();
    let mut stmt = conn.prepare(&format!(
        "SELECT {}, {} FROM ledger_events WHERE {filter}",
        column_list(&events_schema(), ""),
        seen_list("")
    ))?;
    let staging = crate::stage::Stage::new(stage)?;
    // x_row and the seen columns, typed as the ledger keeps them
    let seen_schema = Arc::new(Schema::new(
        std::iter::once(Field::new("x_row", DataType::Int64, false))
            .chain(SEEN_COLUMNS.iter().map(|(name, t)| {
                let t = if *t == "BOOLEAN" {
                    DataType::Boolean
                } else {
                    DataType::Int64
                };
                Field::new(*name, t, true)
            }))
            .collect::<Vec<_>>(),
    ));
    let mut seen_out = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(seen)?,
        seen_schema.clone(),
        None,
    )?;
    for batch in stmt.stream_arrow([])? {
        let batch = batch?;
        let first =
            staging.write_kept("ledger", &batch.project(&(0..kept).collect::<Vec<_>>())?)?;
        let x_row: ArrayRef = Arc::new(Int64Array::from_iter_values(
            (0..batch.num_rows() as i64).map(|r| first + r),
        ));
        let columns = std::iter::once(x_row)
            .chain((0..SEEN_COLUMNS.len()).map(|k| batch.column(kept + k).clone()))
            .collect();
        seen_out.write(&RecordBatch::try_new(seen_schema.clone(), columns)?)?;
    }
    seen_out.close()?;
    let mut staged = staging.finish(&[], &[])?;
    let calls = stage.join("llm_calls-ledger.parquet");
    conn.execute_batch(&format!(
        "COPY (SELECT {calls} FROM ledger_llm_calls WHERE {filter} ORDER BY row_key) TO {llm} (FORMAT parquet);
         COPY (SELECT {src} FROM ledger_sources WHERE {filter} ORDER BY source_kind, instance, source_path)
           TO {sources} (FORMAT parquet);
         COPY (SELECT {diag} FROM ledger_diagnostics) TO {diagnostics} (FORMAT parquet);",
        calls = column_list(&llm_calls_schema(), ""),
        src = column_list(&sources_schema(), ""),
        diag = column_list(&diagnostics_schema(), ""),
        llm = sql_str(&calls),
        sources = sql_str(&staged.sources),
        diagnostics = sql_str(&staged.diagnostics),
    ))?;
    staged.llm_calls.push(calls);
    Ok(staged)
}

/// An export's own load_id: 16 hex of SHA-256 over what it is of.
pub(super) fn derived_id(of: &str) -> String {
    use sha2::Digest;
    crate::store::hex(&sha2::Sha256::digest(of.as_bytes()))[..16].to_string()
}

/// Each exported row's seen columns by its place in OUT (`out_pos`
/// = its session's first position + its `ordinal`), while `ordinals` still
/// maps x_row to the place.
pub(super) fn place_seen(conn: &Connection, seen: &Path) -> Result<(), duckdb::Error> {
    conn.execute_batch(&format!(
        "CREATE TABLE seen_at AS
           SELECT CAST(l.rows_before + o.ordinal AS BIGINT) AS out_pos, {}
           FROM ordinals o JOIN write_layout l USING (sess_id) JOIN read_parquet({}) s USING (x_row);",
        seen_list("s."),
        sql_str(seen)
    ))
}

/// Whether the steps have laid the rows out in OUT: `write_layout` (a row's
/// place) and `ordinals` (its x_row's) both there.
pub(super) fn laid_out(conn: &Connection) -> bool {
    use crate::steps::Made;
    crate::steps::relations(conn).is_ok_and(|made| {
        ["write_layout", "ordinals"]
            .iter()
            .all(|t| made.iter().any(|(m, n)| *m == Made::Table && n == t))
    })
}

pub(super) fn seen_list(prefix: &str) -> String {
    joined(SEEN_COLUMNS, ", ", |(n, _)| format!("{prefix}{n}"))
}

/// Append [`SEEN_COLUMNS`] to the plan the events writer reads (by
/// `out_pos`, in the plan's order) and to the `events` view it takes its
/// columns and types from.
pub(super) fn append_seen(conn: &Connection) -> Result<(), duckdb::Error> {
    let typed = joined(SEEN_COLUMNS, ", ", |(n, t)| {
        format!("CAST(NULL AS {t}) AS {n}")
    });
    conn.execute_batch(&format!(
        "CREATE TABLE events_plan_seen AS
           SELECT p.*, {} FROM events_plan p LEFT JOIN seen_at s USING (out_pos) ORDER BY p.out_pos;
         ALTER VIEW events RENAME TO events_unseen;
         DROP TABLE events_plan;
         ALTER TABLE events_plan_seen RENAME TO events_plan;
         CREATE VIEW events AS SELECT *, {typed} FROM events_unseen;",
        seen_list("s.")
    ))
}
