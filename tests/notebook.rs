//! examples/analysis.ipynb, executed headless (nbclient, a fresh kernel of
//! the pinned venv tests/notebook/) against fresh output of a fixture home:
//! no cell fails, every chart is drawn, and its last cell's totals — computed
//! from `events` and `llm_calls` — equal the `sessions` table.

use std::process::Command;

use crate::common::{TestResult, fixture, run_home};

#[test]
#[ignore = "tools tier (Jupyter): scripts/check.sh runs it (cargo test -- --ignored)"]
fn the_analysis_notebook_runs_on_fresh_output_and_its_totals_equal_sessions() -> TestResult {
    let run = run_home(&fixture("nanobot/home-a"), &[])?;
    assert_eq!(run.code(), Some(1), "{}", run.stderr());
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
        "{}\n{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
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
            "images: 5".to_string(),
            format!("totals equal the sessions table: {sessions} sessions, {totals}"),
        ],
    );
    Ok(())
}
