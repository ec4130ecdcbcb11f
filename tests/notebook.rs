//! examples/analysis.ipynb, executed headless (nbclient, a fresh kernel of
//! the pinned venv tests/notebook/) against fresh output of a nanobot, a
//! nanoclaw and a mixed home:
//! no cell fails, every chart is drawn, and its last cell's totals — computed
//! from `events` and `llm_calls` — equal the `sessions` table.

use std::process::Command;

use std::path::Path;

use crate::common::{Run, TestResult, fixture, mixed_home, run_home};

/// On a nanobot home, a nanoclaw home (only UTC times) and the two in one
/// HOME: each chart the data has is drawn (events per day, tokens and cost
/// by model, tools, a session's timeline, rows only in secondary copies).
#[test]
#[ignore = "tools tier (Jupyter): scripts/check.sh runs it (cargo test -- --ignored)"]
fn the_analysis_notebook_runs_on_fresh_output_and_its_totals_equal_sessions() -> TestResult {
    let mixed = mixed_home()?;
    for (home, code) in [
        (fixture("nanobot/home-a"), 1),
        (fixture("nanoclaw/home-cc"), 0),
        (mixed.path().to_path_buf(), 1),
    ] {
        let run = run_home(&home, &[])?;
        assert_eq!(run.code(), Some(code), "{}", run.stderr());
        notebook_on(&run, &home)?;
    }
    Ok(())
}

fn notebook_on(run: &Run, home: &Path) -> TestResult {
    let python = crate::common::venv_python("NANOLOAD_NOTEBOOK_PYTHON", "notebook/setup.sh")?;
    let out = Command::new(&python)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/notebook/run.py"
        ))
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/analysis.ipynb"
        ))
        .env("NANOLOAD_OUT", &run.out)
        .env("NANOLOAD_TABLES", &run.tables)
        .env("MPLCONFIGDIR", run.dir.path())
        .output()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}: {}\n{}",
        home.display(),
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    // one image per chart whose data the output has
    let images = run.one(
        "SELECT (count(*) > 0)::INT
              + ((SELECT count(*) FROM llm_calls) > 0)::INT
              + (count(*) FILTER (WHERE turn_type = 'tool_use') > 0)::INT
              + (count(*) FILTER (WHERE session_uid IS NOT NULL AND timestamp_utc IS NOT NULL) > 0)::INT
              + (count(*) FILTER (WHERE source_role = 'secondary') > 0)::INT
         FROM events",
    )?;
    // the numbers the last cell printed are the sessions table's own
    let sessions = run.one("SELECT count(*) FROM sessions")?;
    let totals = run.one(
        "SELECT format('{{''rows'': {}.0, ''calls'': {}.0, ''input_tokens'': {}.0, ''output_tokens'': {}.0, ''cost_usd'': {}}}',
            sum(rows), sum(coalesce(llm_calls, 0)), sum(coalesce(input_tokens, 0)),
            sum(coalesce(output_tokens, 0)), round(sum(coalesce(cost_usd, 0)), 9)::DOUBLE) FROM sessions",
    )?;
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            format!("images: {images}"),
            format!("totals equal the sessions table: {sessions} sessions, {totals}"),
        ],
        "{}",
        home.display()
    );
    Ok(())
}
