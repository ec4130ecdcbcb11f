//! The session-record mapper: any line maps to rows or to exactly one bad-line row.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nanoload::sources::nanobot::record::SessionMapper;
use nanoload::sources::nanobot::session_jsonl::{Line, classify, message_rows};

fuzz_target!(|data: &[u8]| {
    let (line, _) = classify(data);
    let mut m = SessionMapper::default();
    m.has_switch = data.first().is_some_and(|b| b & 1 == 1);
    if let Line::Metadata(meta) = &line {
        let meta = nanoload::sources::nanobot::record::SessionMeta::from_line(meta);
        m.set_meta(&meta);
        let _ = m.session_rows(&meta, Some(1));
    }
    match message_rows(&mut m, &line, data, 1, 0) {
        Ok(rows) => assert!(!matches!(line, Line::Message(_)) || !rows.is_empty()),
        Err(bad) => assert!(bad.1.text.as_deref().unwrap_or_default().starts_with("parser: unparseable line 1 (")),
    }
});
