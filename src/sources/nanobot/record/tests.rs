use super::*;

fn v(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

#[test]
fn assistant_with_tool_call_and_reasoning_maps_in_record_order() -> Result<(), String> {
    let mut m = SessionMapper::new(Some("/w".into()));
    m.session_id = Some("telegram:1".into());
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"","tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec","arguments":"{\"command\": \"ss -ltnp\"}"}}],"reasoning_content":"Check.","timestamp":"2026-09-29T21:14:09.910000"}"#),
        1,
        3,
    )?;
    let got: Vec<(&str, Option<&str>, Option<&str>, i32)> = rows
        .iter()
        .map(|r| {
            (
                r.turn_type.as_str(),
                r.text.as_deref(),
                r.tool_use_id.as_deref(),
                r.x_sub,
            )
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("thinking", Some("Check."), None, 0),
            ("tool_use", Some("ss -ltnp"), Some("call_1"), 1)
        ]
    );
    assert_eq!(rows[1].tool_name.as_deref(), Some("exec"));
    assert_eq!(
        rows[1]
            .native
            .as_ref()
            .map(crate::schema::native_json)
            .as_deref(),
        Some(r#"{"arguments":"{\"command\": \"ss -ltnp\"}","type":"function"}"#)
    );
    assert!(
        rows.iter()
            .all(|r| r.project_path.as_deref() == Some("/w") && r.seq == Some(1))
    );
    Ok(())
}

/// (turn type, text, tool id, native JSON) of a row.
type Row = (String, Option<String>, Option<String>, Option<String>);

fn rows_of(rows: &[EventRow]) -> Vec<Row> {
    rows.iter()
        .map(|r| {
            (
                r.turn_type.as_str().to_string(),
                r.text.clone(),
                r.tool_use_id.clone(),
                r.native.as_ref().map(crate::schema::native_json),
            )
        })
        .collect()
}

fn row(t: &str, text: Option<&str>, id: Option<&str>, native: Option<&str>) -> Row {
    (
        t.to_string(),
        text.map(String::from),
        id.map(String::from),
        native.map(String::from),
    )
}

#[test]
fn thinking_blocks_are_one_thinking_row_each_and_reasoning_content_only_when_it_adds_text()
-> Result<(), String> {
    let mut m = SessionMapper::new(None);
    m.session_id = Some("websocket:c1".into());
    // nanobot's Anthropic provider: the blocks, `reasoning_content` empty
    // (utils/helpers.py build_assistant_message)
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"","tool_calls":[{"id":"toolu_01A","type":"function","function":{"name":"exec","arguments":"{\"command\": \"df -h\"}"}}],"reasoning_content":"","thinking_blocks":[{"type":"thinking","thinking":"Check the disk.","signature":"EqACsig1"},{"type":"thinking","thinking":"Then answer.","signature":"EqACsig2"}],"timestamp":"2026-11-05T09:26:30"}"#),
        1,
        2,
    )?;
    assert_eq!(
        rows_of(&rows),
        vec![
            row(
                "thinking",
                Some("Check the disk."),
                None,
                Some(r#"{"signature":"EqACsig1","type":"thinking"}"#)
            ),
            row(
                "thinking",
                Some("Then answer."),
                None,
                Some(r#"{"signature":"EqACsig2","type":"thinking"}"#)
            ),
            row(
                "tool_use",
                Some("df -h"),
                Some("toolu_01A"),
                Some(r#"{"arguments":"{\"command\": \"df -h\"}","type":"function"}"#)
            ),
        ]
    );
    assert_eq!(
        rows.iter().map(|r| r.x_sub).collect::<Vec<_>>(),
        vec![0, 1, 2]
    );
    // their dedup key is the reasoning text the WebUI keeps for the
    // call: the blocks' texts joined
    assert_eq!(
        rows.iter()
            .map(|r| (r.x_match.as_deref(), r.x_match_text))
            .collect::<Vec<_>>(),
        vec![
            (Some("Check the disk.Then answer."), false),
            (Some("Check the disk.Then answer."), false),
            (None, false)
        ]
    );
    // nanobot's Bedrock provider: `reasoning_content` joins the blocks'
    // texts (one row per block, not a row more), a redacted block is a
    // thinking row without text that keeps its opaque content
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"97 % full.","reasoning_content":"Ask the system.Then say so.","thinking_blocks":[{"type":"thinking","thinking":"Ask the system.","signature":"EqACsig3"},{"type":"redacted_thinking","redactedContentBase64":"by5nr/AAGA=="},{"type":"thinking","thinking":"Then say so.","signature":"EqACsig4"}],"timestamp":"2026-11-05T10:32:55"}"#),
        2,
        3,
    )?;
    assert_eq!(
        rows_of(&rows),
        vec![
            row(
                "thinking",
                Some("Ask the system."),
                None,
                Some(r#"{"signature":"EqACsig3","type":"thinking"}"#)
            ),
            row(
                "thinking",
                None,
                None,
                Some(r#"{"redactedContentBase64":"by5nr/AAGA==","type":"redacted_thinking"}"#)
            ),
            row(
                "thinking",
                Some("Then say so."),
                None,
                Some(r#"{"signature":"EqACsig4","type":"thinking"}"#)
            ),
            row("assistant", Some("97 % full."), None, None),
        ]
    );
    // joined as nanobot's extract_reasoning joins them: no row more either
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"ok","reasoning_content":"A\n\nB","thinking_blocks":[{"type":"thinking","thinking":"A","signature":"s"},{"type":"thinking","thinking":"B","signature":"t"}],"timestamp":"2026-11-05T10:40:00"}"#),
        3,
        4,
    )?;
    assert_eq!(
        rows.iter().map(|r| r.text.as_deref()).collect::<Vec<_>>(),
        vec![Some("A"), Some("B"), Some("ok")]
    );
    // a reasoning text the blocks do not hold is a row of its own, first
    // (nanobot shows `reasoning_content` first); a block that is not an
    // object is kept whole
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"ok","reasoning_content":"Other.","thinking_blocks":[{"type":"thinking","thinking":"A","signature":"s"},7],"timestamp":"2026-11-05T10:41:00"}"#),
        4,
        5,
    )?;
    assert_eq!(
        rows_of(&rows),
        vec![
            row("thinking", Some("Other."), None, None),
            row(
                "thinking",
                Some("A"),
                None,
                Some(r#"{"signature":"s","type":"thinking"}"#)
            ),
            row("thinking", None, None, Some(r#"{"block":7}"#)),
            row("assistant", Some("ok"), None, None),
        ]
    );
    // `thinking_blocks` that is no list stays in the message's native
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"ok","thinking_blocks":"?","timestamp":"2026-11-05T10:42:00"}"#),
        5,
        6,
    )?;
    assert_eq!(
        rows_of(&rows),
        vec![row(
            "assistant",
            Some("ok"),
            None,
            Some(r#"{"thinking_blocks":"?"}"#)
        )]
    );
    Ok(())
}

#[test]
fn hidden_history_markers_are_system_rows() -> Result<(), String> {
    let mut m = SessionMapper::new(None);
    // a summary checkpoint (`true`) and a subagent result (an object,
    // agent/loop.py of nanobot-ai 0.3.5) are not chat turns; the result,
    // injected into the running turn, continues it (sql/V007)
    for (rec, source) in [
        (
            r#"{"role":"user","content":"Continue the active task from the working-memory checkpoint above.","_hidden_history":true,"timestamp":"2026-10-24T09:00:00"}"#,
            None,
        ),
        (
            r#"{"role":"user","content":"[Subagent result] done","_hidden_history":{"kind":"subagent_result","subagent_task_id":"t1"},"injected_event":"subagent_result","subagent_task_id":"t1","timestamp":"2026-10-24T09:20:00"}"#,
            Some("continue"),
        ),
    ] {
        let rows = m.map(&v(rec), 3, 4)?;
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].turn_type, TurnType::System);
        assert_eq!(rows[0].x_call_source.as_deref(), source, "starts no turn");
    }
    let rows = m.map(
        &v(r#"{"role":"user","content":"hi","_hidden_history":false,"timestamp":"2026-10-24T09:30:00"}"#),
        5,
        6,
    )?;
    assert_eq!(rows[0].turn_type, TurnType::User);
    assert_eq!(
        rows[0].x_msgkey.as_deref(),
        Some("user\t2026-10-24T09:30:00")
    );
    // a subagent result that arrived after its turn ended, kept as an
    // assistant message (agent/loop.py `_persist_subagent_followup`):
    // it starts a hidden turn of `system` calls (sql/V007)
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"[Subagent result] done","sender_id":"subagent","injected_event":"subagent_result","subagent_task_id":"t2","timestamp":"2026-11-04T09:00:00"}"#),
        7,
        8,
    )?;
    assert_eq!(rows[0].turn_type, TurnType::Assistant);
    assert_eq!(rows[0].x_call_source.as_deref(), Some("system"));
    let rows = m.map(
        &v(r#"{"role":"assistant","content":"ok","timestamp":"2026-11-04T09:00:05"}"#),
        9,
        10,
    )?;
    assert_eq!(rows[0].x_call_source, None);
    Ok(())
}

#[test]
fn content_blocks_join_text_parts() {
    let c = v(
        r#"[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]"#,
    );
    assert_eq!(content_text(Some(&c)).as_deref(), Some("a\nb"));
}

#[test]
fn runtime_context_suffix_is_stripped_for_matching_only() -> Result<(), String> {
    let mut m = SessionMapper::new(None);
    let rows = m.map(&v(r#"{"role":"user","content":"hi\n\n[RC]x[/RC]","timestamp":"2026-10-20T14:20:00.040000","_runtime_context":{"version":1,"sources":["webui_quote"],"suffix":"[RC]x[/RC]"}}"#), 6, 7)?;
    assert_eq!(rows[0].text.as_deref(), Some("hi\n\n[RC]x[/RC]"));
    assert_eq!(rows[0].x_match.as_deref(), Some("hi"));
    assert_eq!(rows[0].x_call_source.as_deref(), Some("user"));
    Ok(())
}

#[test]
fn model_switch_rows() -> Result<(), String> {
    let mut m = SessionMapper {
        has_switch: true,
        ..SessionMapper::new(None)
    };
    m.set_meta(&SessionMeta {
        key: Some("cli:direct".into()),
        metadata: v(r#"{"_nanobot_model_preset":"fast"}"#)
            .as_object()
            .cloned()
            .unwrap_or_default(),
        ..Default::default()
    });
    let start = m.session_rows(
        &SessionMeta {
            key: Some("cli:direct".into()),
            ..Default::default()
        },
        Some(1),
    );
    assert_eq!(start.len(), 1, "no preset row in a session with a switch");
    let u = m.map(&v(r#"{"role":"user","content":"/model fast","timestamp":"2026-10-01T08:41:00","_command":true}"#), 4, 5)?;
    assert_eq!(u[0].model, None);
    let a = m.map(&v(r#"{"role":"assistant","content":"Switched model preset to `fast`.\n- Scope: current session\n- Model: `gpt-5.4-mini`","timestamp":"2026-10-01T08:41:00","_command":true}"#), 5, 6)?;
    assert_eq!(a.len(), 2);
    assert_eq!(
        a[1].text.as_deref(),
        Some("model: fast (preset) requested=fast resolved=gpt-5.4-mini")
    );
    assert_eq!(a[1].model.as_deref(), Some("fast"));
    let u2 = m.map(
        &v(r#"{"role":"user","content":"/model big","_command":true}"#),
        6,
        7,
    )?;
    assert_eq!(u2[0].model.as_deref(), Some("fast"));
    let a2 = m.map(&v(r#"{"role":"assistant","content":"Switched model preset to `big`.\n- Model: `m2`","_command":true}"#), 7, 8)?;
    assert_eq!(
        a2[1].text.as_deref(),
        Some("model: fast -> big (preset) requested=big resolved=m2")
    );
    Ok(())
}

#[test]
fn session_rows_relay_and_permission_mode() {
    let m = SessionMapper::new(None);
    let meta = SessionMeta {
        key: Some("unified:default".into()),
        created_at: Some("2026-10-01T08:30:00".into()),
        metadata: v(r#"{"last_channel":"telegram:42","workspace_scope":{"project_path":"/p","access_mode":"full"}}"#).as_object().cloned().unwrap_or_default(),
        ..Default::default()
    };
    let texts: Vec<String> = m
        .session_rows(&meta, Some(1))
        .into_iter()
        .filter_map(|r| r.text)
        .collect();
    assert_eq!(
        texts,
        vec![
            "session start: key=unified:default channel=unified chat=default last_channel=telegram:42 created_at=2026-10-01T08:30:00",
            "session relayed: telegram chat 42 (from metadata.last_channel)",
            "permission mode: access_mode=full project=/p (from session metadata workspace_scope)",
        ]
    );
}

#[test]
fn record_hash_ignores_separators_and_key_order() {
    assert_eq!(
        record_hash(
            &v(r#"{"b": 1, "a": [1, {"y": 2, "x": 1}]}"#),
            KeyDigest::Fast
        ),
        record_hash(&v(r#"{"a":[1,{"x":1,"y":2}],"b":1}"#), KeyDigest::Fast)
    );
    // the map is sorted (serde_json without `preserve_order`)
    assert_eq!(
        v(r#"{"b": 1, "a": [1, {"y": 2, "x": 1}]}"#).to_string(),
        r#"{"a":[1,{"x":1,"y":2}],"b":1}"#
    );
}

#[test]
fn non_object_record_is_an_error() {
    let mut m = SessionMapper::default();
    assert_eq!(
        m.map(&v("[1,2]"), 0, 1).err().as_deref(),
        Some("expected a JSON object, found an array")
    );
}
