//! `nanobot.cron_run`: `<workspace>/cron/runs/<safe run id>.json` (secondary, true UTC).
//!
//! ```text
//! {job_id, job_name, session_key, prompt_ref{…}, prompt_vars{message}, rendered_prompt,
//!  status, response?|error?, run_id "<job>:<start ms>:<8hex>", updated_at_ms}
//! → user      "Scheduled cron job triggered: <job_name>\n\n<message>" (else rendered_prompt),
//!             at the start time inside run_id
//!   assistant <response>, at updated_at_ms
//!   system    "cron run: job <job_name> (<job_id>) run <run_id> status=<s>[ error=<e>]", at updated_at_ms
//! ```

use serde_json::{Map, Value};

use super::run_records::{error_suffix, extract_with, num, rows};
use crate::schema::EventRow;
use crate::sources::shared::str_field;
use crate::store::{StoreError, StoreOutput};

/// Rows of one cron run record (no I/O).
pub fn cron_rows(o: &Map<String, Value>) -> Vec<EventRow> {
    let job_name = str_field(o, "job_name").unwrap_or_default();
    let job_id = str_field(o, "job_id").unwrap_or_default();
    let run_id = str_field(o, "run_id").unwrap_or_default();
    let started = run_id
        .split(':')
        .nth(1)
        .and_then(|ms| ms.parse::<i64>().ok());
    let message = o
        .get("prompt_vars")
        .and_then(|p| p.get("message"))
        .and_then(Value::as_str);
    let prompt = match message {
        Some(m) => format!("Scheduled cron job triggered: {job_name}\n\n{m}"),
        None => str_field(o, "rendered_prompt")
            .unwrap_or_default()
            .to_string(),
    };
    let mut status = format!(
        "cron run: job {job_name} ({job_id}) run {run_id} status={}",
        str_field(o, "status").unwrap_or_default()
    );
    status.push_str(&error_suffix(o));
    rows(o, prompt, started.or(num(o, "updated_at_ms")), status)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    extract_with(out, cron_rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::TurnType;
    use crate::testutil::obj;

    #[test]
    fn cron_record_rebuilds_the_session_text() {
        let r = cron_rows(&obj(
            r#"{"job_id":"j1","job_name":"morning digest","session_key":"slack:C42","prompt_vars":{"message":"summarise"},"status":"ok","response":"Three.","run_id":"j1:1791187200000:ab12cd34","updated_at_ms":1791187205000}"#,
        ));
        let t: Vec<(TurnType, &str, Option<i64>)> = r
            .iter()
            .map(|r| (r.turn_type, r.text.as_deref().unwrap_or(""), r.ts_utc))
            .collect();
        assert_eq!(
            t,
            vec![
                (
                    TurnType::User,
                    "Scheduled cron job triggered: morning digest\n\nsummarise",
                    Some(1_791_187_200_000_000)
                ),
                (TurnType::Assistant, "Three.", Some(1_791_187_205_000_000)),
                (
                    TurnType::System,
                    "cron run: job morning digest (j1) run j1:1791187200000:ab12cd34 status=ok",
                    Some(1_791_187_205_000_000)
                ),
            ]
        );
        assert!(
            r.iter()
                .all(|r| r.session_id.as_deref() == Some("slack:C42"))
        );
    }
}
