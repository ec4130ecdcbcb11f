//! The tests of `sql/V004__deduped_session_copies.sql`.

use super::*;

#[test]
fn session_copy_dedup_drops_what_the_primary_holds_and_keeps_what_only_the_copy_has() -> Res {
    const COPY: &str = ".nanobot/sessions/ws1/d2Vic29ja2V0OmMx.jsonl";
    let mut h = Steps::new()?;
    let session = [("session_id", "websocket:c1"), ("x_namespace", "ws1")];
    let row = |kind, path, line: &str, seq: &str, record: &str, msgkey: &str| {
        let mut given = session.to_vec();
        given.extend([
            ("source_path", path),
            ("source_line", line),
            ("seq", seq),
            ("x_record", record),
            ("x_msgkey", msgkey),
        ]);
        if kind == JSONL {
            given.push(("source_role", "secondary"));
        }
        h.event(kind, &given)
    };
    row(DB, WS1_DB, "1", "1", "A", "user\t2026-03-02T10:00:00")?;
    row(
        DB,
        WS1_DB,
        "2",
        "3",
        "C-rewritten",
        "assistant\t2026-03-02T10:00:40",
    )?;
    // the frozen copy: the same record A, B only it has (lost to /new),
    // and the database's message C as it was before nanobot rewrote it
    row(JSONL, COPY, "2", "1", "A", "user\t2026-03-02T10:00:00")?;
    row(JSONL, COPY, "3", "2", "B", "user\t2026-03-02T10:00:20")?;
    row(JSONL, COPY, "4", "3", "C", "assistant\t2026-03-02T10:00:40")?;
    // the copy's session metadata (model preset)
    let mut meta = session.to_vec();
    meta.extend([
        ("source_path", COPY),
        ("source_line", "1"),
        ("x_meta", "true"),
        ("source_role", "secondary"),
    ]);
    h.event(JSONL, &meta)?;
    h.run_through("deduped_session_copies")?;
    assert_eq!(
        dropped(&h, COPY)?,
        vec![
            "1 | session metadata of a copy; the primary store has the session",
            "2 | same record in the primary store",
            "4 | same message in the primary store, rewritten there (same position, role and timestamp)",
        ]
    );
    assert_eq!(
        h.rows(
            "SELECT source_path, source_line FROM events_kept ORDER BY source_path, source_line"
        )?,
        vec![
            format!("{COPY} | 3"),
            format!("{WS1_DB} | 1"),
            format!("{WS1_DB} | 2"),
        ]
    );
    Ok(())
}
