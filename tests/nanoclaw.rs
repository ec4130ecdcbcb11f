//! nanoclaw on fixtures/nanoclaw (home-a, home-b): the catalog
//! (`data/v2.db`) and each session's inbound/outbound databases give
//! sessions, messages, kinds and seq; delivered rows join their outbound
//! message or stay as orphans; questions, answers and the agent's own
//! messages; a secret-shaped answer is redacted; continuations and declared
//! losses; the backing Claude Code transcript and rows only in a WAL; a home
//! with both agents loads both; HOME stays untouched.

use crate::common::*;

const DM: &str = "sess-1795989906279-qf49io";
const TASK: &str = "sess-1795989913797-oledfs";
const THREAD: &str = "sess-1795989916153-fr1dtf";
const SCOUT: &str = "sess-1795989908591-4389se";
const SECRET: &str = "ghp_Q7xT2mVb9LkR4sWz8NcY1pHd6FjA3eUo5iGt";

fn home_a() -> std::path::PathBuf {
    fixture("nanoclaw/home-a")
}

#[test]
fn sessions_messages_kinds_and_seq() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.one("SELECT count(*) FROM sessions WHERE agent = 'nanoclaw'")?,
        "4"
    );
    // kinds and seq lists per table, in ordinal order
    let q = |src: &str| {
        format!(
            "SELECT session_id, string_agg(seq::VARCHAR, ',' ORDER BY ordinal), string_agg(native::JSON->>'kind', ',' ORDER BY ordinal)
             FROM events WHERE source_kind = '{src}' AND seq IS NOT NULL GROUP BY 1 ORDER BY 1"
        )
    };
    assert_eq!(
        r.rows(&q("nanoclaw.inbound"))?,
        strs(&[
            &[DM, "2,4,6,8,10,12", "chat-sdk,system,chat,chat,system,chat"],
            &[SCOUT, "2", "chat"],
            &[TASK, "2", "task"],
            &[THREAD, "2,4,6", "chat-sdk,system,chat-sdk"],
        ])
    );
    assert_eq!(
        r.rows(&q("nanoclaw.outbound"))?,
        strs(&[
            &[DM, "3,5,7,9,11,13", "chat-sdk,system,chat,chat,system,chat"],
            &[SCOUT, "3", "chat"],
            &[THREAD, "3,5,7", "chat-sdk,chat,chat"]
        ])
    );
    // trigger=0 rows and statuses of the DM session, as EXPECTED.md counts them
    assert_eq!(
        r.rows(&format!(
            "SELECT count(*) FILTER ((native::JSON->>'trigger') = '0'), count(*) FILTER ((native::JSON->>'status') = 'completed'),
                    count(*) FILTER ((native::JSON->>'status') = 'pending')
             FROM events WHERE session_id = '{DM}' AND source_kind = 'nanoclaw.inbound' AND seq IS NOT NULL"
        ))?,
        strs(&[&["2", "5", "1"]])
    );
    // inbound (by seq) then outbound (by seq): seq is not a clock
    assert_eq!(
        r.one(&format!(
            "SELECT string_agg(turn_type || ':' || seq, ' ' ORDER BY ordinal) FROM events WHERE session_id = '{DM}' AND seq IS NOT NULL"
        ))?,
        "user:2 user:4 user:6 user:8 system:10 user:12 assistant:3 system:5 assistant:7 assistant:9 system:11 assistant:13"
    );
    assert_eq!(
        r.rows(&format!(
            "SELECT ordinal, text FROM events WHERE session_id = '{DM}' AND ordinal = 1"
        ))?[0][1],
        format!(
            "session start: id={DM} agent_group=ag-1795989906209-zr4eix channel=telegram platform=telegram:6037840640 status=active"
        )
    );
    assert_eq!(
        r.rows(&format!("SELECT DISTINCT project_path FROM events WHERE session_id IN ('{DM}', '{SCOUT}') ORDER BY 1"))?,
        strs(&[&["groups/dm-with-dana-whitfield"], &["groups/scout"]])
    );
    // every timestamp is the row's own UTC
    assert_eq!(r.one("SELECT count(*) FROM events WHERE agent = 'nanoclaw' AND seq IS NOT NULL AND time_basis <> 'utc'")?, "0");
    Ok(())
}

#[test]
fn delivered_rows_join_or_stay_as_orphans() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(0));
    let joined = r.rows(
        "SELECT native::JSON->>'id', coalesce(native::JSON->'delivered'->>'platform_message_id', 'NULL'), native::JSON->'delivered'->>'status'
         FROM events WHERE source_kind = 'nanoclaw.outbound' AND (native::JSON->'delivered') IS NOT NULL ORDER BY 1",
    )?;
    assert_eq!(
        joined,
        strs(&[
            &["cli-1795989913514-23yble", "NULL", "delivered"],
            &["msg-1795989907058-s9fz7b", "6037840640:901", "delivered"],
            &["msg-1795989908094-lqt1ks", "NULL", "delivered"],
            &["msg-1795989908113-nbwgu7", "6037840640:902", "delivered"],
            &["msg-1795989908562-k3n7q4", "NULL", "delivered"],
            &["msg-1795989911220-snqlkj", "NULL", "delivered"],
            &["msg-1795989914146-cwnsry", "6037840640:903", "delivered"],
            &["msg-1795989916748-45eq2u", "1795989917.049659", "delivered"],
            &["msg-1795989919028-bgm2tw", "1795989919.329532", "delivered"],
            &["msg-1795989921343-r1n3kq", "1795989921.580112", "delivered"],
        ])
    );
    assert_eq!(
        r.rows("SELECT session_id, text FROM events WHERE text LIKE 'nanoclaw delivered:%' ORDER BY text")?,
        strs(&[
            &[TASK, "nanoclaw delivered: msg-1795989927955-dkj30q status=delivered platform_message_id=6037840640:904 (outbound row missing)"],
            &[TASK, "nanoclaw delivered: msg-1795989927985-1prypo status=delivered (outbound row missing)"],
        ])
    );
    assert_eq!(
        r.rows(
            "SELECT source_path, session_id, code FROM diagnostics WHERE code = 'outbound_missing'"
        )?,
        strs(&[&[
            "data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989913797-oledfs/outbound.db",
            TASK,
            "outbound_missing"
        ]])
    );
    assert_eq!(
        r.rows(&format!("SELECT messages_in, messages_out, outbound_missing FROM sessions WHERE session_id = '{TASK}'"))?,
        strs(&[&["1", "0", "true"]])
    );
    Ok(())
}

#[test]
fn questions_answers_and_agent_origin() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.rows(
            "SELECT q.session_id, q.native::JSON->>'id', a.native::JSON->>'id', a.text
             FROM events q JOIN events a
               ON (a.native::JSON->>'question_id') = (q.native::JSON->>'question_id') AND a.session_id = q.session_id
             WHERE q.source_kind = 'nanoclaw.outbound' AND a.source_kind = 'nanoclaw.inbound' ORDER BY 1"
        )?,
        strs(&[
            &[DM, "msg-1795989907058-s9fz7b", "qr-msg-1795989907058-s9fz7b-1795989907881", "Lisbon"],
            &[THREAD, "msg-1795989916748-45eq2u", "qr-msg-1795989916748-45eq2u-1795989917767", "[redacted]"],
        ])
    );
    assert_eq!(
        r.rows("SELECT native::JSON->>'id', native::JSON->>'source_session_id' FROM events WHERE (native::JSON->>'agent_origin') = 'true' ORDER BY 1")?,
        strs(&[&["a2a-1795989908705-m8e1ut", DM], &["a2a-1795989911276-2al98m", SCOUT]])
    );
    assert_eq!(
        r.rows(
            "SELECT native::JSON->>'id', native::JSON->>'agent_origin', coalesce(native::JSON->>'echo_copy', 'false') FROM events
             WHERE native::JSON->>'id' IN ('sys-1795989908237-04ojwa', 'msg-1795989927955-dkj30q:echo:sess-1795989906279-qf49io') ORDER BY 1"
        )?,
        strs(&[&["msg-1795989927955-dkj30q:echo:sess-1795989906279-qf49io", "false", "true"], &["sys-1795989908237-04ojwa", "false", "false"]])
    );
    // task rows are harness injection; system rows tool plumbing
    assert_eq!(r.one("SELECT native::JSON->>'harness_injection' FROM events WHERE native::JSON->>'id' = 'offsite-reminder-72dd'")?, "true");
    assert_eq!(r.one("SELECT native::JSON->>'origin_session_id' FROM events WHERE native::JSON->>'id' = 'offsite-reminder-72dd'")?, DM);
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE (native::JSON->>'tool_plumbing') = 'true'")?,
        "5"
    );
    Ok(())
}

#[test]
fn the_secret_answer_never_leaves_and_lisbon_stays() -> TestResult {
    let (code, all) = all_outputs(&home_a(), &[])?;
    assert_eq!(code, Some(0));
    assert!(all.contains("Lisbon"));
    assert!(all.contains("- Use the new token from the vault = [redacted]"));
    assert!(!all.contains(SECRET), "the secret answer reached an output");
    assert!(
        !all.contains("ghp_"),
        "a secret-shaped value reached an output"
    );
    Ok(())
}

#[test]
fn continuations_and_declared_losses() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(
        r.rows("SELECT session_id, coalesce(continuation, 'NULL'), transcript_missing FROM sessions WHERE agent = 'nanoclaw' ORDER BY 1")?,
        strs(&[
            &[DM, "claude:5b0f3f0e-2c61-4d7e-9a57-1f8e6c2b7d41", "true"],
            &[SCOUT, "claude:a3c9e2d7-8b14-4f6a-bc05-6d2e91f4a7c8", "true"],
            &[TASK, "NULL", "false"],
            &[THREAD, "claude:e81d4b6a-0f2c-4c93-8a71-2b5d9c3e6f10", "true"],
        ])
    );
    assert_eq!(
        r.rows("SELECT code, count(*) FROM diagnostics WHERE kind = 'loss' GROUP BY 1 ORDER BY 1")?,
        strs(&[
            &["lineage_unknown", "4"],
            &["local_time_unknown", "1"],
            &["model_rendering_absent", "4"],
            &["outbound_missing", "1"],
            &["questions_deleted", "2"],
            &["state_without_history", "4"],
            &["transcript_missing", "3"],
            &["usage_absent", "4"],
        ])
    );
    // never invented: no usage, no model
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE agent = 'nanoclaw' AND model IS NOT NULL")?,
        "0"
    );
    // a session without transcript has no call and no tokens (0, not NULL:
    // it has none; its tokens NULL: none reported)
    assert_eq!(r.one("SELECT count(*) FROM sessions WHERE agent = 'nanoclaw' AND (llm_calls <> 0 OR total_tokens IS NOT NULL)")?, "0");
    assert_eq!(
        r.one("SELECT count(*) FROM llm_calls WHERE agent = 'nanoclaw'")?,
        "0"
    );
    // declared losses do not change the exit code, and the dangling
    // `/app/…` links (files in git) are not stores
    assert_eq!(r.code(), Some(0));
    Ok(())
}

#[test]
fn backing_transcript_and_wal_only_rows() -> TestResult {
    let home = fixture("nanoclaw/home-b");
    let before = tree(&home);
    let r = run_home(&home, &[])?;
    // the transcript's line 7 is torn on purpose
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    assert_eq!(tree(&home), before);
    let s1 = "sess-1800000000100-aaaaaa";
    assert_eq!(
        r.rows(&format!(
            "SELECT turn_type, coalesce(model, '-'), coalesce(tool_name, '-'), left(text, 40) FROM events
             WHERE session_id = '{s1}' AND source_kind = 'nanoclaw.claude_transcript' AND text NOT LIKE 'parser:%' ORDER BY ordinal"
        ))?,
        strs(&[
            &["user", "-", "-", "Which Rust files are in src/?"],
            &["thinking", "claude-sonnet-4-5-20250929", "-", "Just list src/."],
            &["tool_use", "claude-sonnet-4-5-20250929", "Bash", "ls src"],
            &["tool_result", "-", "-", "lib.rs\nmain.rs"],
            &["assistant", "claude-sonnet-4-5-20250929", "-", "Two files: src/lib.rs and src/main.rs."],
            &["system", "-", "-", "turn_duration"],
        ])
    );
    // usage counted once per API message id: the larger of the two lines of msg_…AAA
    assert_eq!(
        r.rows(
            "SELECT native::JSON->>'message_id', native::JSON->'usage'->>'input_tokens', native::JSON->'usage'->>'cache_creation_input_tokens',
                    native::JSON->'usage'->>'cache_read_input_tokens', native::JSON->'usage'->>'output_tokens'
             FROM events WHERE (native::JSON->>'usage_counted') = 'true' ORDER BY 1"
        )?,
        strs(&[&["msg_01DemoAAAAAAAAAAAAAAAAAA", "3", "1840", "12004", "96"], &["msg_01DemoCCCCCCCCCCCCCCCCCC", "1", "212", "13844", "41"]])
    );
    assert_eq!(
        r.rows(&format!("SELECT continuation, transcript_missing, messages_in, messages_out FROM sessions WHERE session_id = '{s1}'"))?,
        strs(&[&["claude:5d0c2a7e-8f3b-4c1d-9a6e-2b7f40c1e9d3", "false", "1", "1"]])
    );
    // a session row committed only to v2.db-wal is read; its folder is a declared loss
    assert_eq!(
        r.rows("SELECT session_id, session_folder_missing FROM sessions WHERE session_id = 'sess-1800000000200-bbbbbb'")?,
        strs(&[&["sess-1800000000200-bbbbbb", "true"]])
    );
    let all = all_text(
        &r.conn()?,
        &["events", "sessions", "diagnostics", "sources"],
    )?;
    assert!(
        !all.contains("ghp_HOMEBmcpSecret"),
        "container_configs.mcp_servers reached output"
    );
    assert!(
        all.contains("claude-sonnet-4-5"),
        "container_configs' other columns are kept"
    );
    Ok(())
}

#[test]
fn a_home_with_both_agents_loads_both() -> TestResult {
    let home = tempfile::tempdir()?;
    let cp = |src: std::path::PathBuf, dst: &str| {
        std::process::Command::new("cp")
            .arg("-a")
            .arg(src)
            .arg(home.path().join(dst))
            .status()
    };
    cp(fixture("nanobot/home-a/.nanobot"), ".nanobot")?;
    std::fs::create_dir_all(home.path().join("src"))?;
    cp(home_a(), "src/nanoclaw")?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(1), "the nanobot store's corrupt record");
    assert_eq!(
        r.rows("SELECT agent, instance, count(DISTINCT session_id) FROM events GROUP BY ALL ORDER BY ALL")?,
        strs(&[&["nanobot", ".nanobot", "6"], &["nanoclaw", "src/nanoclaw", "4"]])
    );
    assert_eq!(r.one("SELECT count(*) FROM sessions")?, "10");
    Ok(())
}

/// An install inside a folder named `data` (`HOME/data/nc/data/v2.db`) is its
/// own instance: the catalog and every session database name the install
/// root `data/nc`, so sessions join their catalog rows exactly as they do
/// for the same install at HOME's root.
#[test]
fn an_install_inside_a_folder_named_data_keeps_its_root() -> TestResult {
    let dir = tempfile::tempdir()?;
    copy_tree(&fixture("nanoclaw/home-a"), &dir.path().join("data/nc"))?;
    let nested = run_home(dir.path(), &[])?;
    let plain = run_home(&fixture("nanoclaw/home-a"), &[])?;
    assert_eq!(nested.code(), plain.code(), "{}", nested.stderr());
    assert_eq!(
        nested.rows("SELECT DISTINCT instance FROM events")?,
        strs(&[&["data/nc"]])
    );
    let per_session = "SELECT session_id, rows, agent_group_id, messaging_group_id, session_status,
                              catalog_row_missing, session_folder_missing
                       FROM sessions ORDER BY ALL";
    let want = plain.rows(per_session)?;
    assert!(want.len() >= 2, "{want:?}");
    assert_eq!(nested.rows(per_session)?, want);
    assert_eq!(
        nested.rows("SELECT kind, code, count(*) FROM diagnostics GROUP BY ALL ORDER BY ALL")?,
        plain.rows("SELECT kind, code, count(*) FROM diagnostics GROUP BY ALL ORDER BY ALL")?
    );
    Ok(())
}

/// Catalog tables are read by allow-list: a table a future module adds (here
/// with a webhook secret) gives one row naming it, its row count and its
/// columns, never a value; a column a later release adds to a known table
/// (an `api_key`) is not read and one warning says so; everything known is
/// read as before. The home is fixture home-a's catalog, as nanoclaw's
/// migrations made it, plus what its current code cannot write.
#[test]
fn catalog_tables_and_columns_nanoload_does_not_know_are_never_read() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-a"))?;
    {
        let db = rusqlite::Connection::open(home.path().join("data/v2.db"))?;
        db.execute_batch(
            "CREATE TABLE webhook_tokens (id TEXT PRIMARY KEY, provider TEXT, secret TEXT, created_at TEXT);
             INSERT INTO webhook_tokens VALUES ('w1', 'github', 'whsec-canary-9f8e7d6c5b4a', '2026-11-01T00:00:00Z');
             INSERT INTO webhook_tokens VALUES ('w2', 'stripe', 'whsec-canary-1a2b3c4d5e6f', '2026-11-02T00:00:00Z');
             ALTER TABLE agent_groups ADD COLUMN api_key TEXT;
             UPDATE agent_groups SET api_key = 'nc-agent-canary-7d6c5b4a3928';",
        )?;
    }
    let plain = run_home(&fixture("nanoclaw/home-a"), &[])?;
    let (run, all) = run_with_all_outputs(home.path(), &[])?;
    assert_eq!(run.code(), plain.code(), "{}", run.stderr());
    for canary in [
        "whsec-canary-9f8e7d6c5b4a",
        "whsec-canary-1a2b3c4d5e6f",
        "nc-agent-canary-7d6c5b4a3928",
    ] {
        assert!(!all.contains(canary), "{canary} reached an output");
    }
    assert_eq!(
        run.rows(
            "SELECT text, native::JSON->>'rows' FROM events WHERE text LIKE 'nanoclaw table %'"
        )?,
        strs(&[&[
            "nanoclaw table webhook_tokens: 2 rows, columns id, provider, secret, created_at (values not read: a table nanoload does not know may hold credentials)",
            "2"
        ]])
    );
    assert_eq!(
        run.rows(
            "SELECT kind, source_path, message FROM diagnostics WHERE message LIKE 'table %'"
        )?,
        strs(&[&[
            "warning",
            "data/v2.db",
            "table agent_groups: column(s) api_key not read (not known to be free of credentials)"
        ]])
    );
    let known =
        "SELECT text, native FROM events WHERE text LIKE 'nanoclaw agent_groups:%' ORDER BY ALL";
    assert_eq!(run.rows(known)?, plain.rows(known)?);
    assert_eq!(run.rows(known)?.len(), 2);
    Ok(())
}

/// `fixtures/nanoclaw/home-links` (nanoclaw 2.2.0's exact schema, the shapes
/// its code writes; see its EXPECTED file) and `home-2-0` (written by
/// nanoclaw 2.0.64's own code).
fn home_links() -> std::path::PathBuf {
    fixture("nanoclaw/home-links")
}
const EDITS: &str = "sess-1810000000100-edits1";
const DRIFT: &str = "sess-1810000000200-drift2";
const OLD_ROUTE: &str = "sess-1810000000300-oldrt3";
const V20: &str = "sess-1796047793731-5u7ezf";

/// The operation rows of a run: seq, turn_type, text, target id, link.
const OPERATIONS: &str = "SELECT session_id, seq, turn_type, text, native::JSON->>'operation', native::JSON->>'target_message_id',
        coalesce((native::JSON->'linked_to')::VARCHAR, 'NULL')
    FROM events WHERE (native::JSON->>'operation') IS NOT NULL ORDER BY session_id, seq";

/// Edits and reactions are requests to the platform, not chat turns: `system`
/// rows saying what was asked, the target id in native, linked to the target
/// row of the same session when it is in the output — an inbound message by
/// its id, a delivered reply by its platform id, an undelivered one by its
/// internal id — and unlinked when it is not.
#[test]
fn edits_and_reactions_are_system_rows_linked_to_their_target() -> TestResult {
    let r = run_home(&home_links(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let inbound = "1810000010.000100:ag-1810000000000-lnk001";
    assert_eq!(
        r.rows(OPERATIONS)?,
        strs(&[
            &[
                EDITS,
                "5",
                "system",
                "edit of 1810000011.000200: Deploying staging now (build 412).",
                "edit",
                "1810000011.000200",
                r#"{"relation":"edit","seq":3}"#
            ],
            &[
                EDITS,
                "7",
                "system",
                &format!("reaction eyes on {inbound}"),
                "reaction",
                inbound,
                r#"{"relation":"reaction","seq":2}"#
            ],
            &[
                EDITS,
                "11",
                "system",
                "edit of msg-1810000000109-und001: Staging is green (all 212 checks).",
                "edit",
                "msg-1810000000109-und001",
                r#"{"relation":"edit","seq":9}"#
            ],
            &[
                EDITS,
                "19",
                "system",
                "reaction white_check_mark on 1810000009.000900",
                "reaction",
                "1810000009.000900",
                "NULL"
            ],
        ])
    );
    // the session's assistant turns are the four messages the agent sent
    assert_eq!(
        r.one(&format!("SELECT string_agg(seq::VARCHAR, ',' ORDER BY seq) FROM events WHERE session_id = '{EDITS}' AND turn_type = 'assistant'"))?,
        "3,9,13,15"
    );
    // system: the session start, the four operations, session_routing
    assert_eq!(
        r.one(&format!(
            "SELECT assistant_rows || '/' || system_rows FROM sessions WHERE session_id = '{EDITS}'"
        ))?,
        "4/6"
    );

    // nanoclaw 2.0.64's own edit_message / add_reaction
    let r = run_home(&fixture("nanoclaw/home-2-0"), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let rows = r.rows(OPERATIONS)?;
    let brief: Vec<_> = rows
        .iter()
        .map(|x| {
            (
                x[1].as_str(),
                x[2].as_str(),
                x[4].as_str(),
                x[5].as_str(),
                x[6].as_str(),
            )
        })
        .collect();
    assert_eq!(
        brief,
        vec![
            (
                "3",
                "system",
                "reaction",
                "5172938406:4101:ag-1796047793683-1wwid2",
                r#"{"relation":"reaction","seq":2}"#
            ),
            (
                "7",
                "system",
                "edit",
                "5172938406:4102",
                r#"{"relation":"edit","seq":5}"#
            ),
            (
                "11",
                "system",
                "edit",
                "msg-1796047798356-cnha0d",
                r#"{"relation":"edit","seq":9}"#
            ),
        ]
    );
    assert_eq!(
        rows[0][3],
        "reaction thumbs_up on 5172938406:4101:ag-1796047793683-1wwid2"
    );
    assert!(
        rows[1][3]
            .starts_with("edit of 5172938406:4102: Draft agenda for Wednesday's platform sync:"),
        "{}",
        rows[1][3]
    );
    Ok(())
}

/// The catalog's messaging group joins a session (channel= platform= in the
/// session start text, sessions.channel_type/platform_id) only when the
/// session's route — its `session_routing` row, or on a DB without one its
/// channel messages' reply address — names the same chat; a route that
/// differs is a warning and no join.
#[test]
fn a_messaging_group_joins_only_when_the_route_matches() -> TestResult {
    let r = run_home(&home_links(), &[])?;
    assert_eq!(
        r.rows("SELECT session_id, text, coalesce(channel_type, 'NULL'), coalesce(platform_id, 'NULL') FROM events JOIN sessions USING (session_uid, session_id) WHERE text LIKE 'session start:%' ORDER BY 1")?,
        strs(&[
            &[EDITS, "session start: id=sess-1810000000100-edits1 agent_group=ag-1810000000000-lnk001 channel=slack platform=slack:C0A status=active", "slack", "slack:C0A"],
            &[DRIFT, "session start: id=sess-1810000000200-drift2 agent_group=ag-1810000000000-lnk001 status=active", "NULL", "NULL"],
            &[OLD_ROUTE, "session start: id=sess-1810000000300-oldrt3 agent_group=ag-1810000000000-lnk001 channel=slack platform=slack:C0A status=active", "slack", "slack:C0A"],
        ])
    );
    assert_eq!(
        r.rows(
            "SELECT session_id, source_path, message FROM diagnostics WHERE code = 'route_mismatch'"
        )?,
        strs(&[&[
            DRIFT,
            "data/v2.db",
            "session sess-1810000000200-drift2: messaging group mg-1810000000002-tgm001 (telegram telegram:7) does not match the session's route (slack slack:C0A): not joined"
        ]])
    );
    assert!(r.stderr().contains("nanoload: warning: data/v2.db: session sess-1810000000200-drift2: messaging group mg-1810000000002-tgm001"), "{}", r.stderr());
    // the candidate stays in native, whatever the route
    assert_eq!(
        r.one(&format!("SELECT native::JSON->'messaging_group'->>'id' FROM events WHERE session_id = '{DRIFT}' AND text LIKE 'session start:%'"))?,
        "mg-1810000000002-tgm001"
    );
    // nanoclaw 2.0.64: its session_routing names its Telegram DM
    let r = run_home(&fixture("nanoclaw/home-2-0"), &[])?;
    assert_eq!(
        r.one("SELECT channel_type || ' ' || platform_id FROM sessions")?,
        "telegram telegram:5172938406"
    );
    Ok(())
}

/// An answer links to its question card (and the card to its answer) only
/// when the session holds one card and one answer for the question id; two
/// answers to one card, or two cards with one id, link nothing and give one
/// warning each.
#[test]
fn a_question_and_its_answer_link_only_when_unambiguous() -> TestResult {
    let q = "SELECT session_id, seq, native::JSON->>'question_id', coalesce((native::JSON->'linked_to')::VARCHAR, '-'), coalesce((native::JSON->'answered_by')::VARCHAR, '-')
             FROM events WHERE (native::JSON->>'question_id') IS NOT NULL ORDER BY session_id, seq";
    let r = run_home(&home_links(), &[])?;
    assert_eq!(
        r.rows(q)?,
        strs(&[
            &[
                EDITS,
                "13",
                "msg-1810000000111-qst001",
                "-",
                r#"{"seq":14}"#
            ],
            &[
                EDITS,
                "14",
                "msg-1810000000111-qst001",
                r#"{"relation":"answer","seq":13}"#,
                "-"
            ],
            &[EDITS, "15", "msg-1810000000113-qst002", "-", "-"],
            &[EDITS, "16", "msg-1810000000113-qst002", "-", "-"],
            &[EDITS, "18", "msg-1810000000113-qst002", "-", "-"],
            &[DRIFT, "3", "msg-1810000000203-qst003", "-", "-"],
            &[DRIFT, "5", "msg-1810000000203-qst003", "-", "-"],
            &[DRIFT, "6", "msg-1810000000203-qst003", "-", "-"],
        ])
    );
    assert_eq!(
        r.rows("SELECT session_id, message FROM diagnostics WHERE code = 'question_link_ambiguous' ORDER BY 1")?,
        strs(&[
            &[EDITS, "question msg-1810000000113-qst002: 1 card(s) and 2 answer(s) in the session: not linked"],
            &[DRIFT, "question msg-1810000000203-qst003: 2 card(s) and 1 answer(s) in the session: not linked"],
        ])
    );
    // nanoclaw's own interactive module: one card, one (redacted) answer
    let r = run_home(&fixture("nanoclaw/home-2-0"), &[])?;
    assert_eq!(
        r.rows(q)?,
        strs(&[
            &[
                V20,
                "8",
                "msg-1796047800875-xr7n6x",
                r#"{"relation":"answer","seq":13}"#,
                "-"
            ],
            &[V20, "13", "msg-1796047800875-xr7n6x", "-", r#"{"seq":8}"#],
        ])
    );
    assert_eq!(
        r.one("SELECT count(*) FROM diagnostics WHERE kind = 'warning'")?,
        "0"
    );
    Ok(())
}

/// The losses nanoclaw's registry entry declares: one `loss` row per
/// session and kind where it applies, listed in `sessions.losses`, and one
/// stderr line per kind (not per session or row).
#[test]
fn declared_losses_are_one_per_session_and_kind() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(0));
    assert_eq!(
        r.rows("SELECT code, count(*), count(DISTINCT session_id) FROM diagnostics WHERE kind = 'loss' GROUP BY 1 ORDER BY 1")?,
        strs(&[
            &["lineage_unknown", "4", "4"],
            // of the install, not of a session: nanoclaw keeps UTC only
            &["local_time_unknown", "1", "0"],
            &["model_rendering_absent", "4", "4"],
            &["outbound_missing", "1", "1"],
            &["questions_deleted", "2", "2"],
            &["state_without_history", "4", "4"],
            &["transcript_missing", "3", "3"],
            &["usage_absent", "4", "4"],
        ])
    );
    assert_eq!(
        r.rows("SELECT session_id, losses FROM sessions WHERE agent = 'nanoclaw' ORDER BY 1")?,
        strs(&[
            &[
                DM,
                "lineage_unknown,model_rendering_absent,questions_deleted,state_without_history,transcript_missing,usage_absent"
            ],
            &[
                SCOUT,
                "lineage_unknown,model_rendering_absent,state_without_history,transcript_missing,usage_absent"
            ],
            &[
                TASK,
                "lineage_unknown,model_rendering_absent,outbound_missing,state_without_history,usage_absent"
            ],
            &[
                THREAD,
                "lineage_unknown,model_rendering_absent,questions_deleted,state_without_history,transcript_missing,usage_absent"
            ],
        ])
    );
    assert_eq!(
        r.one(&format!("SELECT source_path || ' | ' || message FROM diagnostics WHERE code = 'questions_deleted' AND session_id = '{DM}'"))?,
        "data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io | 1 question card(s): answered questions and resolved approvals are deleted from data/v2.db (pending_questions, pending_approvals); only the cards and answers in the session remain"
    );
    let err = r.stderr();
    for line in [
        "nanoload: loss: lineage_unknown: 4 nanoclaw sessions (one diagnostics row each)",
        "nanoload: loss: usage_absent: 4 nanoclaw sessions (one diagnostics row each)",
        "nanoload: loss: questions_deleted: 2 nanoclaw sessions (one diagnostics row each)",
    ] {
        assert_eq!(err.matches(line).count(), 1, "{line}\n{err}");
    }
    assert!(!err.contains("nanoload: loss: data/v2-sessions/ag-1795989906209-zr4eix/sess-1795989906279-qf49io: what the model saw"), "{err}");
    assert_eq!(
        err.matches("nanoload: loss: data/upgrade-state.json: no local time for 82 events rows with only a UTC time: instance . holds no evidence of its UTC offset (timestamp_local and started_at_local are NULL; --utc-offset gives one)").count(),
        1,
        "{err}"
    );
    // a session backed by a transcript with usage does not declare it absent
    let r = run_home(&fixture("nanoclaw/home-b"), &[])?;
    assert_eq!(
        r.rows("SELECT session_id, losses FROM sessions WHERE agent = 'nanoclaw' ORDER BY 1")?,
        strs(&[
            &[
                "sess-1800000000100-aaaaaa",
                "lineage_unknown,model_rendering_absent,state_without_history"
            ],
            &[
                "sess-1800000000200-bbbbbb",
                "lineage_unknown,model_rendering_absent,session_folder_missing,usage_absent"
            ],
        ])
    );
    Ok(())
}

/// nanoclaw 2.0.64 (13 migrations; the container writes `datetime('now')`
/// times, `YYYY-MM-DD HH:MM:SS` without `T`/`Z`, which are UTC) loads: every
/// message, its time as UTC, no warning about its schema.
#[test]
fn a_nanoclaw_2_0_install_loads() -> TestResult {
    let r = run_home(&fixture("nanoclaw/home-2-0"), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows("SELECT source_kind, count(*) FILTER (seq IS NOT NULL), count(*) FROM events GROUP BY 1 ORDER BY 1")?,
        strs(&[
            &["nanoclaw.catalog", "0", "22"],
            &["nanoclaw.inbound", "4", "6"],
            &["nanoclaw.outbound", "7", "12"],
        ])
    );
    // a datetime('now') time (messages_out) and an ISO one (messages_in)
    assert_eq!(
        r.rows("SELECT seq, timestamp_utc::VARCHAR, time_basis FROM events WHERE seq IN (5, 6) ORDER BY seq")?,
        strs(&[&["5", "2026-11-30 14:09:55+00", "utc"], &["6", "2026-11-30 14:10:00.311+00", "utc"]])
    );
    assert_eq!(
        r.one("SELECT count(*) FROM events WHERE text LIKE 'nanoclaw schema_version:%'")?,
        "13"
    );
    assert_eq!(
        r.one(
            "SELECT count(*) FROM diagnostics WHERE kind IN ('warning', 'bad_record', 'unreadable')"
        )?,
        "0"
    );
    // the keys the user pasted: each span redacted, the sentence kept
    let pasted = r.one("SELECT text FROM events WHERE seq = 6")?;
    assert!(pasted.starts_with("Before I forget, here are the staging creds so you can wire the deploy bot: OPENAI_API_KEY=[redacted:sk_key]"), "{pasted}");
    assert!(pasted.contains("[redacted:github_token]"), "{pasted}");
    assert_eq!(
        r.one("SELECT text FROM events WHERE seq = 8")?,
        "[redacted]"
    );
    Ok(())
}

// fixtures/nanoclaw/home-cc (EXPECTED-home-cc.md): one session whose Claude
// Code continuation M has a main file, a rotated file, a subagent file, and a
// later file R resumed from it that repeats M's message msg_B.
const CC_SESSION: &str = "sess-1800000000110-cccccc";
const CC_M: &str = "3c6d1f0a-2b4e-4d7a-9c1e-5f8a0b2c4d6e";

fn home_cc() -> Result<std::sync::Arc<Run>, Box<dyn std::error::Error>> {
    let home = fixture("nanoclaw/home-cc");
    let before = tree(&home);
    let r = run_home(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(tree(&home), before);
    Ok(r)
}

/// Every file of the session — main, rotated, subagent and the resumed file
/// that names M in its copied lines — joins the session; the rows by turn
/// type are exact (the resumed file's copies of M's lines are dropped as
/// duplicates: one row per Claude Code line).
#[test]
fn every_claude_code_file_of_a_session_joins_it() -> TestResult {
    let r = home_cc()?;
    let file = "regexp_extract(source_path, '[^/]+(/subagents/[^/]+)?$')";
    assert_eq!(
        r.rows(&format!(
            "SELECT {file}, coalesce(session_id, 'NULL'), native::JSON->>'transcript_id', count(*)
             FROM events WHERE source_kind = 'nanoclaw.claude_transcript' GROUP BY ALL ORDER BY ALL"
        ))?,
        strs(&[
            &[&format!("{CC_M}.jsonl"), CC_SESSION, CC_M, "8"],
            &[
                &format!("{CC_M}.jsonl.rotated-1772719200000"),
                CC_SESSION,
                CC_M,
                "2"
            ],
            &[
                &format!("{CC_M}/subagents/agent-a1b2c3d4.jsonl"),
                CC_SESSION,
                CC_M,
                "2"
            ],
            &[
                "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl",
                CC_SESSION,
                "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b",
                "2"
            ],
        ])
    );
    // the resumed file's two copied lines (uuid …010, …014) are the rows M
    // holds: dropped as duplicates, each once, with their reason
    assert!(
        r.stderr().contains("dropped as duplicates: 2;")
            && r.stderr().contains(
                "2 copy of a Claude Code line another transcript file of the session holds"
            ),
        "{}",
        r.stderr()
    );
    assert_eq!(
        r.one(&format!(
            "SELECT count(*) FROM events WHERE session_id = '{CC_SESSION}' AND (native::JSON->>'uuid') IN
                ('00000000-0000-4000-8000-000000000010', '00000000-0000-4000-8000-000000000014')"
        ))?,
        "2"
    );
    assert_eq!(
        r.rows(&format!(
            "SELECT turn_type, count(*) FROM events
             WHERE session_id = '{CC_SESSION}' AND source_kind = 'nanoclaw.claude_transcript' GROUP BY ALL ORDER BY ALL"
        ))?,
        strs(&[
            &["assistant", "5"],
            &["system", "2"],
            &["thinking", "1"],
            &["tool_result", "1"],
            &["tool_use", "1"],
            &["user", "4"],
        ])
    );
    // one session_uid for the session's every row
    assert_eq!(
        r.one(&format!(
            "SELECT count(DISTINCT session_uid) FROM events WHERE session_id = '{CC_SESSION}'"
        ))?,
        "1"
    );
    Ok(())
}

/// Usage is counted once per (message.id, requestId) across every file of
/// the session: msg_A's larger line (output 96, not 8), msg_B once although
/// the resumed file repeats it (the copy in M, first by path), msg_E of the
/// subagent, msg_Z of the rotated file, msg_F; the `<synthetic>` message
/// none. Sums: 21 / 1510 / 8500 / 242.
#[test]
fn claude_code_usage_counts_once_per_identity_across_files() -> TestResult {
    let r = home_cc()?;
    let u = |k: &str| format!("sum((native::JSON->'usage'->>'{k}')::BIGINT)");
    assert_eq!(
        r.rows(&format!(
            "SELECT count(*), {}, {}, {}, {} FROM events
             WHERE session_id = '{CC_SESSION}' AND (native::JSON->'usage') IS NOT NULL",
            u("input_tokens"),
            u("cache_creation_input_tokens"),
            u("cache_read_input_tokens"),
            u("output_tokens")
        ))?,
        strs(&[&["5", "21", "1510", "8500", "242"]])
    );
    assert_eq!(
        r.rows(&format!(
            "SELECT native::JSON->>'message_id', regexp_extract(source_path, '[^/]+$'), source_line,
                    native::JSON->'usage'->>'output_tokens'
             FROM events WHERE session_id = '{CC_SESSION}' AND (native::JSON->>'usage_counted') = 'true' ORDER BY 1"
        ))?,
        strs(&[
            &["msg_A", &format!("{CC_M}.jsonl"), "4", "96"],
            &["msg_B", &format!("{CC_M}.jsonl"), "6", "41"],
            &["msg_E", "agent-a1b2c3d4.jsonl", "2", "30"],
            &["msg_F", "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl", "4", "55"],
            &["msg_Z", &format!("{CC_M}.jsonl.rotated-1772719200000"), "2", "20"],
        ])
    );
    Ok(())
}

/// Every row of an assistant message says whether it carries the usage
/// (`native.usage_counted`), and `sessions` counts the transcript's turns
/// (API responses) with and without usage.
#[test]
fn claude_code_rows_and_sessions_state_which_turns_had_usage() -> TestResult {
    let r = home_cc()?;
    assert_eq!(
        r.rows(&format!(
            "SELECT coalesce(native::JSON->>'message_id', '-'), turn_type, regexp_extract(source_path, '[^/]+$'),
                    native::JSON->>'usage_counted', (native::JSON->'usage') IS NOT NULL
             FROM events WHERE session_id = '{CC_SESSION}' AND (native::JSON->'usage_counted') IS NOT NULL
             ORDER BY 1, 3, source_line"
        ))?,
        strs(&[
            &["a3f0c9e2-7b1d-4c5e-9f8a-6d2b4e1c0a97", "assistant", &format!("{CC_M}.jsonl"), "false", "false"],
            &["msg_A", "thinking", &format!("{CC_M}.jsonl"), "false", "false"],
            &["msg_A", "tool_use", &format!("{CC_M}.jsonl"), "true", "true"],
            &["msg_B", "assistant", &format!("{CC_M}.jsonl"), "true", "true"],
            &["msg_E", "assistant", "agent-a1b2c3d4.jsonl", "true", "true"],
            &["msg_F", "assistant", "9e8d7c6b-5a4f-4e3d-8c2b-1a0f9e8d7c6b.jsonl", "true", "true"],
            &["msg_Z", "assistant", &format!("{CC_M}.jsonl.rotated-1772719200000"), "true", "true"],
        ])
    );
    assert_eq!(
        r.rows(&format!(
            "SELECT transcript_turns_with_usage, transcript_turns_without_usage FROM sessions WHERE session_id = '{CC_SESSION}'"
        ))?,
        strs(&[&["5", "1"]])
    );
    Ok(())
}

/// A subagent (Task) transcript's rows join the parent session and say which
/// agent wrote them.
#[test]
fn claude_code_subagent_rows_are_marked() -> TestResult {
    let r = home_cc()?;
    assert_eq!(
        r.rows(
            "SELECT turn_type, session_id, native::JSON->>'subagent', native::JSON->>'isSidechain', native::JSON->>'agentId', text
             FROM events WHERE (native::JSON->>'subagent') IS NOT NULL ORDER BY source_line"
        )?,
        strs(&[
            &["user", CC_SESSION, "a1b2c3d4", "true", "a1b2c3d4", "Read deploy.sh and report risks"],
            &["assistant", CC_SESSION, "a1b2c3d4", "true", "a1b2c3d4", "No risks found."],
        ])
    );
    Ok(())
}

/// `<synthetic>` is not a model (model NULL, the raw value in native, no
/// usage); command wrapper messages are system rows, not user prompts.
#[test]
fn claude_code_synthetic_has_no_model_and_command_wrappers_are_system() -> TestResult {
    let r = home_cc()?;
    assert_eq!(
        r.rows(&format!(
            "SELECT turn_type, coalesce(model, 'NULL'), native::JSON->>'model', (native::JSON->'usage') IS NULL, text
             FROM events WHERE session_id = '{CC_SESSION}' AND text = 'No response requested.'"
        ))?,
        strs(&[&["assistant", "NULL", "<synthetic>", "true", "No response requested."]])
    );
    assert_eq!(
        r.rows(&format!(
            "SELECT turn_type, left(text, 30) FROM events
             WHERE session_id = '{CC_SESSION}' AND source_kind = 'nanoclaw.claude_transcript'
               AND turn_type IN ('user', 'system') ORDER BY timestamp_utc, source_path"
        ))?,
        strs(&[
            &["user", "Hello"],
            &["user", "Audit the deploy script"],
            &["user", "Read deploy.sh and report risk"],
            &["system", "<command-name>/cost</command-n"],
            &["system", "<local-command-stdout>Total co"],
            &["user", "And the rollback script?"],
        ])
    );
    // the models that remain are real ones
    assert_eq!(
        r.rows(&format!(
            "SELECT DISTINCT model FROM events WHERE session_id = '{CC_SESSION}' AND model IS NOT NULL"
        ))?,
        strs(&[&["claude-sonnet-4-5-20250929"]])
    );
    Ok(())
}

/// Issue 24 f: an operation the agent asks of the host and the host's
/// answer are vendor records, not chat turns; a card's answer stays a turn.
#[test]
fn system_messages_are_system_rows_not_chat_turns() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT native::JSON->>'table', turn_type, native::JSON->>'operation', count(*)
             FROM events WHERE (native::JSON->>'kind') = 'system' GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[
            &["messages_in", "system", "cli_response", "1"],
            &["messages_in", "user", "NULL", "2"],
            &["messages_out", "system", "cli_request", "1"],
            &["messages_out", "system", "create_agent", "1"],
        ])
    );
    // the DM's user and assistant rows are its chat turns only
    assert_eq!(
        r.rows(&format!(
            "SELECT s.user_rows, s.assistant_rows, e.users, e.assistants
             FROM sessions s,
                  (SELECT count(*) FILTER (turn_type = 'user') AS users,
                          count(*) FILTER (turn_type = 'assistant') AS assistants
                   FROM events WHERE session_id = '{DM}' AND (native::JSON->>'kind') = 'system') e
             WHERE s.session_id = '{DM}'"
        ))?,
        strs(&[&["5", "4", "1", "0"]])
    );
    let mcp = run_home(&fixture("nanoclaw/home-mcp"), &[])?;
    assert_eq!(
        mcp.rows(
            "SELECT turn_type, native::JSON->>'operation', count(*) FROM events
             WHERE (native::JSON->>'kind') = 'system' GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[
            &["system", "add_mcp_server", "1"],
            &["system", "cli_request", "3"],
            &["system", "cli_response", "3"],
            &["system", "http", "1"],
            &["system", "install_packages", "1"],
        ])
    );
    Ok(())
}

/// home-a's upgrade marker (written by nanoclaw 2.2.0's own
/// `writeUpgradeState`): one `system` row at its UTC instant, the install's
/// version on every store of the install in `sources` and on each session
/// start row; a nanoclaw install without a marker (home-b) has none.
#[test]
fn the_upgrade_marker_versions_the_install() -> TestResult {
    let r = run_home(&home_a(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert_eq!(
        r.rows(
            "SELECT instance, coalesce(session_id, '-'), turn_type, text,
                    strftime(CAST(timestamp_utc AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%g'), source_path
             FROM events WHERE source_kind = 'nanoclaw.upgrade_state'"
        )?,
        strs(&[&[
            ".",
            "-",
            "system",
            "nanoclaw install: version=2.2.0 via=setup updated_at=2026-12-02T22:46:56.138Z",
            "2026-12-02T22:46:56.138",
            "data/upgrade-state.json",
        ]])
    );
    // every store of the install: its kind and version
    assert_eq!(
        r.rows(
            "SELECT source_kind, count(*), string_agg(DISTINCT coalesce(agent_version, 'NULL'), ',')
             FROM sources GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[
            &["nanoclaw.catalog", "1", "2.2.0"],
            &["nanoclaw.inbound", "4", "2.2.0"],
            &["nanoclaw.outbound", "3", "2.2.0"],
            &["nanoclaw.upgrade_state", "1", "2.2.0"],
        ])
    );
    assert_eq!(
        r.rows(
            "SELECT count(*), count(*) FILTER (WHERE native::JSON->>'nanoclaw_version' = '2.2.0')
             FROM events WHERE source_kind = 'nanoclaw.catalog' AND text LIKE 'session start:%'"
        )?,
        strs(&[&["4", "4"]])
    );
    let b = run_home(&fixture("nanoclaw/home-b"), &[])?;
    assert_eq!(b.one("SELECT count(agent_version) FROM sources")?, "0");
    assert_eq!(
        b.one(
            "SELECT count(*) FROM events
             WHERE native::JSON->>'nanoclaw_version' IS NOT NULL OR source_kind = 'nanoclaw.upgrade_state'"
        )?,
        "0"
    );
    Ok(())
}

/// An install whose central database is not SQLite (nanoclaw's PostgreSQL
/// driver, `NANOCLAW_DB_URL`) has `data/v2-sessions/` and no `data/v2.db`:
/// fixture home-a's session folders as its own code wrote them, without its
/// catalog. One loss says so for the install, naming the setting — not a
/// `catalog_row_missing` per session — and every session row still loads.
#[test]
fn an_install_whose_central_db_is_elsewhere_says_so_once() -> TestResult {
    let home = copy_home(&home_a())?;
    std::fs::remove_file(home.path().join("data/v2.db"))?;
    let plain = run_home(&home_a(), &[])?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    let message = "central database absent beside data/v2-sessions/ (4 session folders): an \
         install whose NANOCLAW_DB_URL names a PostgreSQL database keeps its catalog there, which \
         nanoload does not read (or data/v2.db was not copied); every session's catalog row \
         (agent group name, provider, status, route) is lost, the agent group taken from the path";
    assert_eq!(
        r.rows(
            "SELECT kind, instance, source_path, coalesce(session_id, '-'), message FROM diagnostics
             WHERE code IN ('catalog_row_missing', 'central_db_absent')"
        )?,
        strs(&[&["loss", ".", "data/v2.db", "-", message]])
    );
    let stderr = r.stderr();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("central database") || l.contains("catalog"))
        .collect();
    assert_eq!(lines, [format!("nanoload: loss: data/v2.db: {message}")]);
    // the session databases' rows are all there, as with the catalog
    let per_kind = "SELECT source_kind, count(*) FROM events
                    WHERE source_kind IN ('nanoclaw.inbound', 'nanoclaw.outbound')
                    GROUP BY ALL ORDER BY ALL";
    assert_eq!(r.rows(per_kind)?, plain.rows(per_kind)?);
    assert_eq!(r.rows(per_kind)?.len(), 2);
    // each session knows its catalog row is missing, and why
    assert_eq!(
        r.rows(
            "SELECT count(*), count(*) FILTER (WHERE catalog_row_missing
                                               AND losses LIKE '%central_db_absent%'
                                               AND agent_group_id IS NOT NULL)
             FROM sessions WHERE agent = 'nanoclaw'"
        )?,
        strs(&[&["4", "4"]])
    );
    Ok(())
}

/// nanoclaw's catalog after 2.2.0: fixture home-a's `data/v2.db` (written by
/// nanoclaw f0d35831, at migration `messaging-group-detached-at`) carried on
/// by the next migrations exactly as their `up()` runs them — 023
/// `approvals-instance`, 024 `host-coordination`, 025 `container-config-speed`
/// (ziliboba-dev/nanoclaw 0ab6b975, d072d185, baaeb355), and the nanocoai
/// line's `container-config-env` (1d1e5688), `host-leadership` (ec8c3919)
/// and `agent-templates` (1f2f3538) — with rows as `src/db/coordination.ts`
/// (42132785) writes them: a host instance, a session claim, a wake signal,
/// a delivery retried twice whose last error quotes the bot URL. The new
/// tables and columns are read by allow-list; a delivery's attempts and last
/// error are a system row of the session the message belongs to; the
/// container env and a template's files are never read.
#[test]
fn catalog_tables_after_2_2_are_read_by_allow_list() -> TestResult {
    let home = copy_home(&home_a())?;
    let session = "sess-1795989916153-fr1dtf";
    let message = "msg-1795989919028-bgm2tw";
    let bot_token = "7312450981:AAHf3kQ9xZr2Lm8PqW4tYvB6nC1dE5gJ7sK";
    {
        let db = rusqlite::Connection::open(home.path().join("data/v2.db"))?;
        db.execute_batch(&format!(
            "ALTER TABLE pending_approvals ADD COLUMN instance TEXT;
             CREATE TABLE host_instances (
               instance_id TEXT PRIMARY KEY, install_id TEXT NOT NULL, hostname TEXT, pid INTEGER,
               started_at TEXT NOT NULL, lease_expires_at TEXT NOT NULL, stopped_at TEXT);
             CREATE TABLE session_claims (
               session_id TEXT PRIMARY KEY, incarnation INTEGER NOT NULL DEFAULT 0, claimed_by TEXT,
               claimed_at TEXT, container_ref TEXT, stop_intent TEXT, updated_at TEXT NOT NULL);
             CREATE TABLE delivery_attempts (
               message_id TEXT PRIMARY KEY, session_id TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
               last_attempt_at TEXT, next_attempt_at TEXT, last_error TEXT);
             CREATE INDEX idx_delivery_attempts_session ON delivery_attempts(session_id);
             CREATE TABLE wake_signals (
               id TEXT PRIMARY KEY, session_id TEXT NOT NULL, reason TEXT NOT NULL,
               created_at TEXT NOT NULL, consumed_at TEXT, consumed_by TEXT);
             CREATE INDEX idx_wake_signals_session_pending ON wake_signals(session_id, consumed_at);
             ALTER TABLE container_configs ADD COLUMN speed TEXT;
             ALTER TABLE container_configs ADD COLUMN env TEXT;
             ALTER TABLE container_configs ADD COLUMN blocked_hosts TEXT;
             CREATE TABLE host_leadership (
               install_id TEXT PRIMARY KEY, leader_instance_id TEXT NOT NULL,
               acquired_at TEXT NOT NULL, lease_expires_at TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS agent_templates (
               name TEXT PRIMARY KEY, digest TEXT NOT NULL, source TEXT NOT NULL,
               bundle TEXT NOT NULL, updated_at TEXT NOT NULL);
             INSERT INTO schema_version (version, name, applied)
               SELECT max(version) + 1, 'approvals-instance', '2026-12-01T09:00:00.001Z' FROM schema_version;
             INSERT INTO schema_version (version, name, applied)
               SELECT max(version) + 1, 'host-coordination', '2026-12-01T09:00:00.002Z' FROM schema_version;
             INSERT INTO host_instances (instance_id, install_id, hostname, pid, started_at, lease_expires_at)
               VALUES ('hi-7f3a', 'install-1', 'nc-host', 4242, '2026-12-01T09:00:01.000Z', '2026-12-01T09:00:31.000Z');
             INSERT INTO session_claims (session_id, incarnation, claimed_by, claimed_at, container_ref, updated_at)
               VALUES ('{session}', 1, 'hi-7f3a', '2026-12-01T09:00:02.000Z', 'nanoclaw-agent-fr1dtf', '2026-12-01T09:00:02.000Z');
             INSERT INTO wake_signals (id, session_id, reason, created_at)
               VALUES ('5b1e9c2a-0d4f-4e8a-9c71-3f2b6a8d4e10', '{session}', 'inbound-message', '2026-12-01T09:00:03.000Z');
             INSERT INTO delivery_attempts (message_id, session_id, attempts, last_attempt_at, next_attempt_at, last_error)
               VALUES ('{message}', '{session}', 1, '2026-12-01T09:00:04.000Z', '2026-12-01T09:00:09.000Z',
                       'fetch failed: ECONNRESET');
             UPDATE delivery_attempts SET attempts = attempts + 1, last_attempt_at = '2026-12-01T09:00:09.500Z',
               next_attempt_at = '2026-12-01T09:00:19.500Z',
               last_error = '429 Too Many Requests from https://api.telegram.org/bot{bot_token}/sendMessage'
               WHERE message_id = '{message}';
             UPDATE container_configs SET speed = 'fast', blocked_hosts = '[\"api.anthropic.com\"]',
               env = '{{\"ANTHROPIC_BASE_URL\":\"http://ollama.lan:11434\",\"OLLAMA_TOKEN\":\"env-canary-5e4d3c2b1a09\"}}';
             INSERT INTO host_leadership VALUES ('install-1', 'hi-7f3a', '2026-12-01T09:00:01.500Z', '2026-12-01T09:00:31.500Z');
             INSERT INTO agent_templates VALUES ('researcher', 'sha256:9f2c', 'recipe',
               '{{\"files\":{{\".env\":\"TEMPLATE_KEY=template-canary-0a1b2c3d4e5f\"}}}}', '2026-12-01T08:59:00.000Z');"
        ))?;
    }
    let plain = run_home(&home_a(), &[])?;
    let (run, all) = run_with_all_outputs(home.path(), &[])?;
    assert_eq!(run.code(), plain.code(), "{}", run.stderr());
    for canary in [
        "env-canary-5e4d3c2b1a09",
        "template-canary-0a1b2c3d4e5f",
        bot_token,
    ] {
        assert!(!all.contains(canary), "{canary} reached an output");
    }
    // no warning: every new column is either read or known as a credential
    assert_eq!(
        run.rows(
            "SELECT message FROM diagnostics WHERE kind = 'warning' AND message LIKE 'table %'"
        )?,
        Vec::<Vec<String>>::new()
    );
    assert_eq!(
        run.rows(
            "SELECT coalesce(session_id, '-'), strftime(CAST(timestamp_utc AS TIMESTAMP), '%Y-%m-%dT%H:%M:%S.%g'), text
             FROM events
             WHERE text LIKE 'nanoclaw host_%' OR text LIKE 'nanoclaw session_claims%'
                OR text LIKE 'nanoclaw wake_signals%' OR text LIKE 'nanoclaw delivery_attempts%'
                OR text LIKE 'nanoclaw agent_templates%'
             ORDER BY ALL"
        )?,
        strs(&[
            &["-", "2026-12-01T08:59:00.000", "nanoclaw agent_templates: researcher"],
            &["-", "2026-12-01T09:00:01.000", "nanoclaw host_instances: hi-7f3a"],
            &["-", "2026-12-01T09:00:01.500", "nanoclaw host_leadership: install-1"],
            &[
                session,
                "2026-12-01T09:00:02.000",
                &format!("nanoclaw session_claims: {session}"),
            ],
            &[
                session,
                "2026-12-01T09:00:03.000",
                "nanoclaw wake_signals: 5b1e9c2a-0d4f-4e8a-9c71-3f2b6a8d4e10",
            ],
            &[
                session,
                "2026-12-01T09:00:09.500",
                &format!(
                    "nanoclaw delivery_attempts: {message}: 2 attempts, last 2026-12-01T09:00:09.500Z, \
                     next 2026-12-01T09:00:19.500Z, last error: 429 Too Many Requests from \
                     https://api.telegram.org/bot[redacted:telegram_bot_token]/sendMessage"
                ),
            ],
        ])
    );
    // the columns read: the allow-list, never env or bundle
    assert_eq!(
        run.rows(
            "SELECT native::JSON->>'table',
                    array_to_string(list_sort(json_keys(native::JSON->'record')), ',')
             FROM events WHERE (native::JSON->>'table') IN
                 ('container_configs', 'agent_templates', 'delivery_attempts', 'pending_approvals')
             GROUP BY ALL ORDER BY ALL"
        )?,
        strs(&[
            &["agent_templates", "digest,name,source,updated_at"],
            &[
                "container_configs",
                "additional_mounts,agent_group_id,assistant_name,blocked_hosts,cli_scope,effort,\
                 image_tag,max_messages_per_prompt,model,packages_apt,packages_npm,provider,skills,\
                 speed,timezone,updated_at",
            ],
            &[
                "delivery_attempts",
                "attempts,last_attempt_at,last_error,message_id,next_attempt_at,session_id",
            ],
        ])
    );
    // the delivery is evidence in the session of the message it concerns
    assert_eq!(
        run.rows(&format!(
            "SELECT count(*) FROM events
             WHERE session_id = '{session}' AND source_kind = 'nanoclaw.outbound'
               AND (native::JSON->>'id') = '{message}'"
        ))?,
        strs(&[&["1"]])
    );
    // everything else as before
    let before = "SELECT source_kind, count(*) FROM events GROUP BY ALL ORDER BY ALL";
    let grown = run.rows(before)?;
    let was = plain.rows(before)?;
    assert_eq!(grown.len(), was.len());
    assert_eq!(
        grown
            .iter()
            .zip(&was)
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a[0].clone())
            .collect::<Vec<_>>(),
        ["nanoclaw.catalog"]
    );
    Ok(())
}

/// `fixtures/nanoclaw/home-codex` (PROVENANCE.md "home-codex"): an agent
/// group on the Codex provider; the rollout the real Codex CLI 0.138.0 wrote
/// (two turns through its app-server, five model calls: a greeting, `echo
/// hello`, `ls /nonexistent` exiting 2, an `apply_patch`, a final answer)
/// backs the session whose `continuation:codex` names its thread. Every
/// rollout row joins the session; each model call is one llm_calls row with
/// the usage its `token_count` reports (input with the cached part, as
/// nanobot counts it); the failed command is a failed tool result; the
/// credential file beside it is never read.
#[test]
fn codex_rollouts_back_their_session_with_tools_and_usage() -> TestResult {
    let home = fixture("nanoclaw/home-codex");
    let (r, all) = run_with_all_outputs(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert!(!all.contains("CANARY"), "auth.json reached an output");
    let session = "sess-codex-1";
    assert_eq!(
        r.rows(
            "SELECT count(*), count(*) FILTER (WHERE session_id = 'sess-codex-1'),
                    string_agg(DISTINCT native::JSON->>'transcript_id', ',')
             FROM events WHERE source_kind = 'nanoclaw.codex_rollout'"
        )?,
        strs(&[&["18", "18", "01a239f1-c5a9-7872-9bec-428a6519819a"]])
    );
    assert_eq!(
        r.rows(
            "SELECT turn_type, coalesce(model, '-'), coalesce(tool_name, '-'), left(text, 40),
                    coalesce(native::JSON->>'is_error', '-')
             FROM events WHERE source_kind = 'nanoclaw.codex_rollout'
               AND turn_type IN ('user', 'assistant', 'tool_use', 'tool_result')
             ORDER BY ordinal"
        )?,
        strs(&[
            &[
                "user",
                "-",
                "-",
                "Say hello. This is turn one of the nanol",
                "-"
            ],
            &[
                "assistant",
                "gpt-5.5",
                "-",
                "Hello from the stub model. Nothing to ru",
                "-"
            ],
            &[
                "user",
                "-",
                "-",
                "Now use your tools: run `echo hello`, th",
                "-"
            ],
            &[
                "assistant",
                "gpt-5.5",
                "-",
                "I will run `echo hello` first.",
                "-"
            ],
            &["tool_use", "gpt-5.5", "exec_command", "echo hello", "-"],
            &[
                "tool_result",
                "-",
                "-",
                "Chunk ID: 2beea2\nWall time: 0.0000 secon",
                "false"
            ],
            &[
                "tool_use",
                "gpt-5.5",
                "exec_command",
                "ls /nonexistent",
                "-"
            ],
            &[
                "tool_result",
                "-",
                "-",
                "Chunk ID: 235dde\nWall time: 0.0000 secon",
                "true"
            ],
            &[
                "tool_use",
                "gpt-5.5",
                "apply_patch",
                "*** Begin Patch\n*** Add File: stub-note.",
                "-"
            ],
            &[
                "tool_result",
                "-",
                "-",
                "Exit code: 0\nWall time: 0 seconds\nOutput",
                "false"
            ],
            &[
                "assistant",
                "gpt-5.5",
                "-",
                "Done: `echo hello` printed hello, and `l",
                "-"
            ],
        ])
    );
    // one llm_calls row per model call, the numbers the stub model reported
    assert_eq!(
        r.rows(
            "SELECT agent, provider, model, session_id, input_tokens, cache_read_tokens,
                    output_tokens, total_tokens, message_id
             FROM llm_calls ORDER BY started_at, message_id"
        )?,
        (1..=5)
            .map(|n: i64| {
                let thread = "01a239f1-c5a9-7872-9bec-428a6519819a";
                [
                    "nanoclaw".to_string(),
                    "stub".into(),
                    "gpt-5.5".into(),
                    session.into(),
                    (1200 * n + 34).to_string(),
                    (512 * (n - 1)).to_string(),
                    (20 * n + 5).to_string(),
                    (1200 * n + 34 + 20 * n + 5).to_string(),
                    format!("{thread}#{n}"),
                ]
                .to_vec()
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(
        r.rows(
            "SELECT s.llm_calls, s.input_tokens, s.output_tokens, s.transcript_turns_with_usage,
                    s.transcript_turns_without_usage, s.losses,
                    round(s.cost_usd, 9) = round((SELECT sum(cost_usd) FROM llm_calls), 9)
                    AND s.cost_usd > 0
             FROM sessions s WHERE s.session_id = 'sess-codex-1'"
        )?,
        strs(&[&[
            "5",
            "18170",
            "325",
            "5",
            "0",
            "lineage_unknown,model_rendering_absent,state_without_history",
            "true"
        ]])
    );
    // without its rollout the session declares the transcript lost, naming where it looked
    let gone = without_codex_rollouts(&home)?;
    let g = run_home(gone.path(), &[])?;
    assert_eq!(
        g.rows("SELECT source_path, message FROM diagnostics WHERE code = 'transcript_missing'")?,
        strs(&[&[
            "data/v2-sessions/ag-codex/sess-codex-1/outbound.db",
            "backing transcript of continuation:codex 01a239f1-c5a9-7872-9bec-428a6519819a \
             unavailable (no <agent group>/.codex-shared/sessions/*/*/*/rollout-*-<id>.jsonl)"
        ]])
    );
    assert_eq!(g.one("SELECT count(*) FROM llm_calls")?, "0");
    Ok(())
}

const ARCHIVE_A: &str =
    "groups/coder/conversations/2026-12-03-codex-01a239f1-c5a9-7872-9bec-428a6519819a.md";
const ARCHIVE_B: &str =
    "groups/coder/conversations/2026-12-03-codex-01a2390e-5d31-7b42-9c7e-3f1a2b4c5d6e.md";

/// `fixtures/nanoclaw/home-codex-archive` (PROVENANCE.md
/// "home-codex-archive"): home-codex plus the exchange archive nanoclaw's
/// own `archiveProviderExchange` wrote (TZ Asia/Kolkata) for the rollout's
/// two exchanges (thread A) and for an earlier thread B whose rollout is
/// absent. Thread A's archive rows are copies of the rollout's (and of the
/// session's messages): all dropped, its header too. Thread B's are kept,
/// secondary, in the folder's only session, with their texts exactly as
/// written (a body holding `---` and `**User**:` lines; a prompt cut to 2000
/// characters and `...`). A's answer stamped 08:57 local and the rollout's
/// 03:27:55.911 UTC give the install's offset (+05:30), so B's local stamps
/// get their UTC time and every nanoclaw row its local time. Without the
/// rollout, A's messages still drop against the session's inbound and
/// outbound rows, its header stays, and there is no offset evidence.
#[test]
fn exchange_archives_are_dropped_where_a_primary_holds_them_and_recovered_where_lost() -> TestResult
{
    let home = fixture("nanoclaw/home-codex-archive");
    let r = run_home(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("nanoclaw.exchange_archive         2        12         7          5"),
        "{}",
        r.stderr()
    );
    assert!(r.stderr().contains(
        "         4 exchange archive copy of a message the transcript of its thread or the messages of its session hold\n         1 exchange archive header of a thread whose transcript is read"
    ), "{}", r.stderr());
    assert_eq!(
        r.one(&format!(
            "SELECT count(*) FROM events WHERE source_path = '{ARCHIVE_A}'"
        ))?,
        "0"
    );
    let long = {
        let items: Vec<String> = (1..=80)
            .map(|i| format!("item {i}: check the value of setting number {i}."))
            .collect();
        let full = format!("Review this checklist line by line. {}", items.join(" "));
        assert!(full.len() > 2000);
        format!("{}...", &full[..2000])
    };
    let b = r.rows(&format!(
        "SELECT session_id, source_role, turn_type, text, source_line,
                coalesce(native::JSON->>'status', '-'), coalesce(native::JSON->>'archived_local', '-'),
                coalesce(native::JSON->>'truncated', '-'), native::JSON->>'session_joined_by',
                strftime(timestamp_utc, '%H:%M:%S'), strftime(timestamp_local, '%H:%M'), time_basis
         FROM events WHERE source_path = '{ARCHIVE_B}' ORDER BY ordinal"
    ))?;
    let row =
        |turn: &str, text: &str, line: &str, status: &str, stamp: &str, cut: &str, utc: &str| {
            [
                "sess-codex-1",
                "secondary",
                turn,
                text,
                line,
                status,
                stamp,
                cut,
                "folder",
                utc,
                &stamp[stamp.len().saturating_sub(5)..],
                "local_derived",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
        };
    let (s1, s2, s3) = ("2026-12-03 07:40", "2026-12-03 07:42", "2026-12-03 07:53");
    assert_eq!(
        b,
        vec![
            {
                let mut h = row(
                    "system",
                    "exchange archive: provider=codex thread=01a2390e-5d31-7b42-9c7e-3f1a2b4c5d6e",
                    "1",
                    "-",
                    "-",
                    "-",
                    "02:10:00",
                );
                h[10] = "07:40".into();
                h
            },
            row(
                "user",
                "Summarise this pasted log for me:\n\n---\n\n**User**: this line is part of the log, not a new exchange\nend of log",
                "10",
                "completed",
                s1,
                "false",
                "02:10:00"
            ),
            row(
                "assistant",
                "Summary of the log:\n\n---\n\n**Assistant**: was quoted in it, and the log has two lines.",
                "17",
                "completed",
                s1,
                "false",
                "02:10:00"
            ),
            row("user", &long, "27", "undelivered", s2, "true", "02:12:00"),
            row(
                "assistant",
                "Reviewed all 80 items; none needs a change.",
                "29",
                "undelivered",
                s2,
                "false",
                "02:12:00"
            ),
            row(
                "user",
                "Are you still there?",
                "35",
                "error",
                s3,
                "false",
                "02:23:00"
            ),
            row(
                "assistant",
                "Error: Turn timed out after 600000ms",
                "37",
                "error",
                s3,
                "false",
                "02:23:00"
            ),
        ]
    );
    // the archive's answer and the rollout's give the install's offset
    assert_eq!(
        r.rows("SELECT instance, first_day, offset_minutes, pairs FROM tz_offsets")?,
        strs(&[&[".", "2026-12-03", "330", "1"]])
    );
    assert_eq!(
        r.rows(
            "SELECT count(*), count(timestamp_local) FROM events
             WHERE agent = 'nanoclaw' AND time_basis = 'utc'"
        )?,
        strs(&[&["29", "29"]])
    );
    assert_eq!(
        r.one("SELECT count(*) FROM diagnostics WHERE code = 'local_time_unknown'")?,
        "0"
    );
    // the rollout lost: A's messages are still the session's inbound and
    // outbound rows, its header is recovered, no evidence gives an offset
    let gone = without_codex_rollouts(&home)?;
    let g = run_home(gone.path(), &[])?;
    assert_eq!(
        g.rows(&format!(
            "SELECT turn_type, session_id, native::JSON->>'session_joined_by', time_basis
             FROM events WHERE source_path = '{ARCHIVE_A}'"
        ))?,
        strs(&[&["system", "sess-codex-1", "continuation", "local_as_utc"]])
    );
    assert_eq!(
        g.one(&format!(
            "SELECT count(*) FROM events WHERE source_path = '{ARCHIVE_B}'"
        ))?,
        "7"
    );
    assert_eq!(g.one("SELECT count(*) FROM tz_offsets")?, "0");
    Ok(())
}

/// A torn archive (cut inside its last answer, without the final newline),
/// a file without the provider header, and Claude Code's PreCompact archive
/// beside them: the torn exchange's rows are kept and marked, the headless
/// file gives a `parser: unparseable record` row, each is one
/// `bad_record` with its path and line on stderr (exit 1), every valid row
/// is kept; the Claude archive is listed as skipped and gives no row.
#[test]
fn a_torn_or_headerless_archive_is_named_and_its_valid_rows_kept() -> TestResult {
    let home = copy_home(&fixture("nanoclaw/home-codex-archive"))?;
    let b = home.path().join(ARCHIVE_B);
    let text = std::fs::read_to_string(&b)?;
    std::fs::write(&b, &text[..text.len() - 10])?;
    let dir = home.path().join("groups/coder/conversations");
    std::fs::write(
        dir.join("2026-12-04-codex-notes.md"),
        "Some notes the agent kept.\n\n---\n\nArchived: 2026-12-04 09:00 · Status: completed\n\n**User**: hi\n\n**Assistant**: hello\n",
    )?;
    // claude.ts formatTranscriptMarkdown's shape (providers efc8eff4)
    std::fs::write(
        dir.join("2026-12-03-conversation-0857.md"),
        "# Conversation\n\nArchived: Dec 3, 8:57 AM\n\n---\n\n**User**: hi\n\n**Andy**: hello\n",
    )?;
    let r = run_home(home.path(), &[])?;
    assert_eq!(r.code(), Some(1), "{}", r.stderr());
    let err = r.stderr();
    for line in [
        format!("nanoload: bad_record: {ARCHIVE_B}:33: exchange torn: the file ends without its final newline"),
        "nanoload: bad_record: groups/coder/conversations/2026-12-04-codex-notes.md:1: no exchange-archive header (`# <Provider> Conversation`, blank, `Provider: …`, `Continuation/thread id: …`)".to_string(),
    ] {
        assert!(err.lines().any(|l| l == line), "{line}\n{err}");
    }
    assert_eq!(
        r.rows(
            "SELECT source_path, source_line, kind FROM diagnostics
             WHERE source_path LIKE 'groups/%' ORDER BY ALL"
        )?,
        strs(&[
            &[ARCHIVE_B, "33", "bad_record"],
            &[
                "groups/coder/conversations/2026-12-04-codex-notes.md",
                "1",
                "bad_record"
            ],
        ])
    );
    // B's seven rows, the last answer cut and marked; the headless file's
    // exchange and its unread opening
    assert_eq!(
        r.rows(&format!(
            "SELECT text, native::JSON->>'torn' FROM events
             WHERE source_path = '{ARCHIVE_B}' AND source_line = 37"
        ))?,
        strs(&[&["Error: Turn timed out after", "true"]])
    );
    assert_eq!(
        r.one(&format!(
            "SELECT count(*) FROM events WHERE source_path = '{ARCHIVE_B}'"
        ))?,
        "7"
    );
    assert_eq!(
        r.rows(
            "SELECT turn_type, left(text, 60) FROM events
             WHERE source_path LIKE '%2026-12-04-codex-notes.md' ORDER BY source_line"
        )?,
        strs(&[
            &[
                "system",
                "parser: unparseable record line 1 (no exchange-archive heade"
            ],
            &["user", "hi"],
            &["assistant", "hello"],
        ])
    );
    assert_eq!(
        r.rows("SELECT status, rows FROM sources WHERE source_path LIKE '%conversation-0857.md'")?,
        strs(&[&["skipped", "0"]])
    );
    Ok(())
}

/// `fixtures/nanoclaw/home-opencode` (PROVENANCE.md "home-opencode"): an
/// agent group on the OpenCode provider; the database the real OpenCode CLI
/// 1.3.2 wrote in the session's `opencode-xdg/` (two turns through `opencode
/// serve`, killed as nanoclaw kills it: most rows only in `opencode.db-wal`)
/// backs the session. Every message and part is a row of that session; each
/// assistant message is one llm_calls row with its tokens (cache reads
/// counted in the input); a command exiting 2 and a tool that threw are
/// failed results; the credential file beside it is never read.
#[test]
fn opencode_databases_back_their_session_with_tools_and_usage() -> TestResult {
    let home = fixture("nanoclaw/home-opencode");
    let db = home.join("data/v2-sessions/ag-open/sess-open-1/opencode-xdg/opencode/opencode.db");
    // the main file alone holds 2 of the 7 messages: the rest are in the WAL
    let alone = tempfile::tempdir()?;
    std::fs::copy(&db, alone.path().join("opencode.db"))?;
    let c = rusqlite::Connection::open(alone.path().join("opencode.db"))?;
    assert_eq!(
        c.query_row("SELECT count(*) FROM message", [], |r| r.get::<_, i64>(0))?,
        2
    );
    let (r, all) = run_with_all_outputs(&home, &[])?;
    assert_eq!(r.code(), Some(0), "{}", r.stderr());
    assert!(!all.contains("CANARY"), "auth.json reached an output");
    assert_eq!(
        r.rows(
            "SELECT count(*), count(*) FILTER (WHERE session_id = 'sess-open-1'),
                    string_agg(DISTINCT native::JSON->>'transcript_id', ',')
             FROM events WHERE source_kind = 'nanoclaw.opencode_db'"
        )?,
        strs(&[&["16", "16", "ses_dc60e2d11ffeV20Cb5WoDRNJE7"]])
    );
    assert_eq!(
        r.rows(
            "SELECT turn_type, coalesce(tool_name, '-'), left(text, 30),
                    coalesce(native::JSON->>'is_error', '-')
             FROM events WHERE source_kind = 'nanoclaw.opencode_db'
               AND turn_type IN ('tool_use', 'tool_result')
             ORDER BY ordinal"
        )?,
        strs(&[
            &["tool_use", "bash", "echo hello", "-"],
            &["tool_result", "bash", "hello\n", "false"],
            &["tool_use", "bash", "ls /nonexistent", "-"],
            &[
                "tool_result",
                "bash",
                "ls: cannot access '/nonexisten",
                "true"
            ],
            &["tool_use", "read", "{\"filePath\":\"/nonexistent/miss", "-"],
            &[
                "tool_result",
                "read",
                "File not found: /nonexistent/m",
                "true"
            ],
        ])
    );
    // OpenCode stores input without the cache reads; llm_calls counts them in
    assert_eq!(
        r.rows(
            "SELECT provider, model, session_id, input_tokens, cache_read_tokens, cache_write_tokens,
                    output_tokens, total_tokens
             FROM llm_calls ORDER BY started_at"
        )?,
        (1..=5)
            .map(|n: i64| {
                [
                    "stubai".to_string(),
                    "stub-model".into(),
                    "sess-open-1".into(),
                    (1200 * n + 34).to_string(),
                    (512 * (n - 1)).to_string(),
                    "0".into(),
                    (20 * n + 5).to_string(),
                    (1200 * n + 34 + 20 * n + 5).to_string(),
                ]
                .to_vec()
            })
            .collect::<Vec<_>>()
    );
    assert_eq!(
        r.rows(
            "SELECT llm_calls, input_tokens, transcript_turns_with_usage, losses, continuation
             FROM sessions WHERE session_id = 'sess-open-1'"
        )?,
        strs(&[&[
            "5",
            "18170",
            "5",
            "lineage_unknown,model_rendering_absent,state_without_history",
            "opencode:ses_dc60e2d11ffeV20Cb5WoDRNJE7"
        ]])
    );
    // a custom provider has no price: one warning, cost NULL
    assert_eq!(
        r.rows("SELECT message FROM diagnostics WHERE code = 'price_unknown'")?,
        strs(&[&[
            "no price for model stub-model (provider stubai): cost_usd is NULL for its 5 \
                  transcript responses (--prices FILE can price it)"
        ]])
    );
    // without its database the session declares the transcript lost
    let gone = copy_home(&home)?;
    std::fs::remove_dir_all(
        gone.path()
            .join("data/v2-sessions/ag-open/sess-open-1/opencode-xdg"),
    )?;
    let g = run_home(gone.path(), &[])?;
    assert_eq!(
        g.rows("SELECT message FROM diagnostics WHERE code = 'transcript_missing'")?,
        strs(&[&[
            "backing transcript of continuation:opencode ses_dc60e2d11ffeV20Cb5WoDRNJE7 \
                  unavailable (no <session>/opencode-xdg/opencode/opencode.db)"
        ]])
    );
    Ok(())
}

/// A copy of a Codex home without its rollouts (`.codex-shared/sessions`):
/// what nanoload reads when the transcripts are gone.
fn without_codex_rollouts(
    home: &std::path::Path,
) -> Result<tempfile::TempDir, Box<dyn std::error::Error>> {
    let gone = copy_home(home)?;
    std::fs::remove_dir_all(
        gone.path()
            .join("data/v2-sessions/ag-codex/.codex-shared/sessions"),
    )?;
    Ok(gone)
}
