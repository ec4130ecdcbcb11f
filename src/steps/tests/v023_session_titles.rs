//! The tests of `sql/V023__session_titles.sql`.

use super::*;

/// A session takes the WebUI title its start row's metadata holds (a
/// generated one without its `<think>` block; a blank one is no title),
/// else its first user row with text on one line, cut past 60 characters
/// to 59 and `…`; a session with neither has none.
#[test]
fn a_session_is_titled_by_its_webui_title_else_its_first_user_text() -> Res {
    let mut h = Steps::new()?;
    h.exec("UPDATE params SET given_offset_minutes = 0")?;
    let long = format!("  {}\n\tand more", "word ".repeat(20));
    for (session, meta, users) in [
        (
            "websocket:a",
            r#"{"title":"<think>name it</think>Offsite plan","webui":true}"#,
            vec!["shortlist venues"],
        ),
        (
            "websocket:b",
            r#"{"title":"  ","webui":true}"#,
            vec!["", "  what is  using\nport 8080?  "],
        ),
        ("cli:direct", r#"{"title":7}"#, vec![long.as_str()]),
        ("telegram:1", "{}", vec![]),
    ] {
        h.event(
            DB,
            &[
                ("session_id", session),
                ("x_namespace", "ws1"),
                ("source_path", WS1_DB),
                ("source_line", "1"),
                ("x_group", &group(Group::Session)),
                ("turn_type", "system"),
                ("text", &format!("session start: key={session}")),
                ("native", &format!(r#"{{"metadata":{meta}}}"#)),
                ("x_start", "true"),
                ("ts_local", "2026-03-02 09:00:00"),
            ],
        )?;
        for (k, text) in users.iter().enumerate() {
            h.event(
                DB,
                &[
                    ("session_id", session),
                    ("x_namespace", "ws1"),
                    ("source_path", WS1_DB),
                    ("source_line", &(k + 2).to_string()),
                    ("seq", &(k + 1).to_string()),
                    ("turn_type", "user"),
                    ("text", text),
                    ("x_match", text),
                    ("x_record", &format!("{session}{k}")),
                    ("ts_local", &format!("2026-03-02 10:0{k}:00")),
                ],
            )?;
        }
    }
    h.run_through("session_titles")?;
    assert_eq!(
        h.rows("SELECT session_id, coalesce(title, 'NULL') FROM sessions ORDER BY session_id")?,
        vec![
            format!("cli:direct | {}…", "word ".repeat(12).trim_end()),
            "telegram:1 | NULL".to_string(),
            "websocket:a | Offsite plan".to_string(),
            "websocket:b | what is using port 8080?".to_string(),
        ]
    );
    Ok(())
}
