//! The tests of `sql/V018__nanoclaw_calls.sql`.

use super::*;

/// nanoclaw's calls are its transcript rows whose usage is counted, with
/// the usage as numbers and the provider Anthropic unless the row names
/// another (a Codex rollout's); a row whose usage is not counted (a
/// response repeated with a smaller usage) is no call.
#[test]
fn a_counted_transcript_usage_is_one_call_with_its_numbers() -> Res {
    let mut h = Steps::new()?;
    nanoclaw_session(&h)?;
    let response = |line: &str, message: &str, extra: &str, counted: bool| {
        let native = format!(
            r#"{{"transcript_id":"c1","sessionId":"c1","message_id":"{message}","requestId":"r-{message}","usage":{{"input_tokens":7,"cache_creation_input_tokens":300,"cache_read_input_tokens":400,"output_tokens":30}},"usage_counted":{counted}{extra}}}"#
        );
        h.event(
            TRANSCRIPT,
            &[
                ("x_group", &group(Group::Transcript)),
                ("source_path", "p/c1.jsonl"),
                ("source_line", line),
                ("turn_type", "assistant"),
                ("model", "claude-sonnet-4-5"),
                ("native", &native),
            ],
        )
    };
    response("1", "m1", "", true)?;
    response("2", "m1", "", false)?;
    response("3", "m2", r#","provider":"openai""#, true)?;
    h.run_through("nanoclaw_calls")?;
    assert_eq!(
        h.rows(
            "SELECT source_line, provider, model, message_id, request_id, input, output,
                    cache_read, cache_write
             FROM transcript_usage ORDER BY source_line"
        )?,
        vec![
            "1 | anthropic | claude-sonnet-4-5 | m1 | r-m1 | 7 | 30 | 400 | 300",
            "3 | openai | claude-sonnet-4-5 | m2 | r-m2 | 7 | 30 | 400 | 300",
        ]
    );
    Ok(())
}
