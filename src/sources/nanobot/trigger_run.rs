//! `nanobot.trigger_run`: `<workspace>/triggers/runs/<delivery id>.json` (secondary, true UTC).
//!
//! ```text
//! {kind:"local_trigger", trigger_id, delivery_id, content, created_at_ms, attempts, trigger_name?,
//!  session_key?, status, error?, response?, run_id, updated_at_ms}
//! → user      "Local trigger received: <trigger_name or trigger_id>\n\n<content>", at created_at_ms
//!   assistant <response>, at updated_at_ms
//!   system    "trigger run: trigger <name> (<id>) delivery <d> status=<s> attempts=<n>[ error=<e>]"
//! ```

use serde_json::{Map, Value};

use super::run_records::{error_suffix, extract_with, num, rows};
use crate::schema::EventRow;
use crate::sources::shared::str_field;
use crate::store::{StoreError, StoreOutput};

/// Rows of one trigger run record (no I/O).
pub fn trigger_rows(o: &Map<String, Value>) -> Vec<EventRow> {
    let id = str_field(o, "trigger_id").unwrap_or_default();
    let name = str_field(o, "trigger_name").filter(|n| !n.is_empty());
    let prompt = format!(
        "Local trigger received: {}\n\n{}",
        name.unwrap_or(id),
        str_field(o, "content").unwrap_or_default()
    );
    let attempts = o
        .get("attempts")
        .map(Value::to_string)
        .unwrap_or_else(|| "0".into());
    let mut status = format!(
        "trigger run: trigger {} ({id}) delivery {} status={} attempts={attempts}",
        name.unwrap_or(id),
        str_field(o, "delivery_id").unwrap_or_default(),
        str_field(o, "status").unwrap_or_default()
    );
    status.push_str(&error_suffix(o));
    rows(o, prompt, num(o, "created_at_ms"), status)
}

pub fn extract(out: &mut StoreOutput<'_>) -> Result<(), StoreError> {
    extract_with(out, trigger_rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::obj;

    #[test]
    fn trigger_record_with_error() {
        let r = trigger_rows(&obj(
            r#"{"trigger_id":"trg_1","delivery_id":"tdl_1","content":"c","created_at_ms":1000,"attempts":2,"status":"error","error":"boom","updated_at_ms":2000}"#,
        ));
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0].text.as_deref(),
            Some("Local trigger received: trg_1\n\nc")
        );
        assert_eq!(
            r[1].text.as_deref(),
            Some(
                "trigger run: trigger trg_1 (trg_1) delivery tdl_1 status=error attempts=2 error=boom"
            )
        );
    }
}
