//! The column catalog: every table nanoload writes (a load's outputs, a
//! ledger's tables), what it holds, and the meaning of each of its columns,
//! in the order the table has them.
//!
//! ```text
//! OUTPUTS   events, sessions, llm_calls, tz_offsets, diagnostics, sources
//!           (OUT.parquet, --tables DIR, --db FILE, --dataset DIR)
//! LEDGER    loads, ledger_events, ledger_llm_calls, ledger_sources,
//!           ledger_diagnostics, ledger_meta, ledger_versions (nanoload sync)
//! ```
//!
//! The writer's list of side tables is [`SIDE_TABLES`] (`engine::TABLES`),
//! `nanoload mcp`'s `list_tables` and `describe_table` answer from
//! [`table`], and the tests hold both to what a load and a sync write:
//! every column of every table, in order, has its line here
//! (`mcp::describe_table_gives_every_column_of_every_table_a_meaning`).
//! docs/design.md explains the columns at length; this is the one line a
//! reader of a table gets.

/// One table: its name, one line on what a row is, and its columns
/// (name, meaning) in table order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Table {
    pub name: &'static str,
    pub description: &'static str,
    pub columns: &'static [(&'static str, &'static str)],
}

impl Table {
    /// The meaning of column `name`, if the table has it.
    pub fn meaning(&self, name: &str) -> Option<&'static str> {
        self.columns
            .iter()
            .find(|(c, _)| *c == name)
            .map(|(_, m)| *m)
    }
}

/// The side tables of a load besides `events`, in `--tables` / `--db` order.
pub const SIDE_TABLES: [&str; 5] = [
    "sessions",
    "llm_calls",
    "tz_offsets",
    "diagnostics",
    "sources",
];

/// The table named `name`, if nanoload writes one.
pub fn table(name: &str) -> Option<&'static Table> {
    TABLES.iter().find(|t| t.name == name)
}

const AGENT: &str = "`nanobot` or `nanoclaw`";
const INSTANCE: &str = "the agent's state root relative to HOME (`.nanobot`, `.nanobot-work`, a nanoclaw root, `.`); through a followed link, the link's path";
const SESSION_ID: &str = "the session's id in its agent: nanobot's session key (`cli:direct`, `websocket:<uuid>`, …), nanoclaw's `sessions.id`; NULL for rows of no session";
const PARENT: &str =
    "the session this one was started from (nanobot's `metadata.parent_session_key`)";
const PROJECT: &str = "nanobot's workspace (`.workspace` text); nanoclaw's `groups/<folder>`";
const SEQ: &str = "position in the session and its store";
const TURN_TYPE: &str = "`user`, `assistant`, `tool_use`, `tool_result`, `thinking` or `system`";
const MODEL: &str = "the model (or preset) in force for the row";
const TOOL_NAME: &str = "the tool called (tool_use, tool_result rows)";
const TOOL_USE_ID: &str = "the id that joins a `tool_use` row to its `tool_result`";
const TEXT: &str = "the row's content, secrets redacted (docs/design.md \"Row templates\")";
const SOURCE_KIND: &str =
    "the kind of store the row was read from (`nanobot.session_jsonl`, `nanoclaw.outbound`, …)";
const SOURCE_ROLE: &str =
    "`primary` (a store of record) or `secondary` (a copy, deduplicated against the primary)";
const SOURCE_PATH: &str = "the file the row was read from, relative to HOME";
const SOURCE_LINE: &str = "the line (JSONL) or row number (SQLite) in that file";
const NATIVE: &str =
    "JSON of the source record's facts without a column of their own, secrets redacted";
const LOAD_ID: &str = "16 hex naming the load that wrote the row: the version, every store file read and every option that changes the output";
const SESSION_UID: &str =
    "16 hex: one session across agents and instances (docs/design.md \"Session identity\")";
const COST: &str =
    "USD at the price table's prices (`nanoload prices`); NULL when any of its calls has no price";
const STARTED_AT_MS: &str = "when the call started, milliseconds since 1970-01-01 UTC";
const DURATION: &str = "how long the call took, milliseconds (nanobot's record)";
const PROVIDER: &str = "the LLM provider (`anthropic`, `openai`, `openrouter`, …)";
const CALL_MODEL: &str = "the model the call asked for";
const CALL_SOURCE: &str = "what started the call in nanobot: `user`, `cron`, `system`, …";
const STREAM: &str = "1 when the call streamed its answer, 0 when not (nanobot's record)";
const FINISH: &str = "why the answer ended (`stop`, `tool_calls`, `end_turn`, `length`, …)";
const INPUT: &str = "tokens sent, cached tokens included; NULL when not reported";
const OUTPUT: &str = "tokens generated; NULL when not reported";
const TOTAL: &str = "total tokens as the source reported it; NULL when not reported";
const CACHE_READ: &str = "input tokens read from the provider's cache";
const CACHE_WRITE: &str = "input tokens written to the provider's cache";
const REPORTED: &str = "tokens the provider reported (nanobot's record)";
const ESTIMATED: &str = "tokens nanobot estimated where the provider reported none";
const GENERATION: &str = "milliseconds spent generating the answer (nanobot's record)";
const MEASURED: &str = "output tokens nanobot counted itself";
const TTFT: &str = "milliseconds to the first token (nanobot's record)";
const TIMED: &str = "requests the call's timings cover (nanobot's record)";
const ERROR_STATUS: &str = "the HTTP status of a failed call";
const ERROR_KIND: &str = "what kind of error a failed call met (nanobot's record)";
const CALL_ID: &str = "nanobot's own key of the call attempt (`llm_usage.sqlite3` version 2: 32 hex); NULL on nanoclaw rows and older stores";
const LLM_ID: &str =
    "the call's row id in nanobot's `llm_usage.sqlite3`; a nanoclaw call: its transcript line";
const DIAG_KIND: &str =
    "`loss`, `bad_line`, `bad_record`, `unreadable`, `skipped_link` or `warning`";
const DIAG_PATH: &str = "the file concerned, relative to HOME";
const DIAG_LINE: &str = "the line or row in that file; NULL when the whole file is concerned";
const DIAG_MESSAGE: &str = "what was wrong, in one line";
const DIAG_SESSION: &str = "the session concerned, when one is";
const DIAG_CODE: &str =
    "a stable code for the diagnostic (`outbound_missing`, …: docs/design.md \"Diagnostic codes\")";
const STORE_KIND: &str = "the kind of store (`nanobot.session_jsonl`, `nanoclaw.v2_db`, …)";
const STORE_ROLE: &str = "`primary` or `secondary` (see events.source_role)";
const STORE_PATH: &str = "the store's file, relative to HOME";
const STORE_BYTES: &str = "the store's size in bytes";
const STORE_ROWS: &str = "rows the store yielded before dedup (events, or llm_calls rows)";
const STORE_STATUS: &str =
    "`ok`, `partial` (some lines or records unreadable), `failed` or `skipped`";
const STORE_AGENT: &str = "the agent that wrote the store";
const STORE_PARTS: &str = "further files read with the store (WebUI segments)";
const REDACTIONS: &str = "secrets redacted in the store's rows: JSON `{rule: count}`";
const FIRST_SEEN: &str = "the sync (loads.sync) that first saw the row";
const LAST_SEEN: &str = "the latest sync that saw the row";
const PRESENT: &str =
    "whether the latest sync still found it (false: the agent deleted it, see gone_load)";
const ROW_KEY: &str =
    "the row's identity across syncs: a digest of the agent's record and its occurrence";
const LEDGER_STORE_PATH: &str = "the file of the store that holds the row, relative to HOME";
const GONE_LOAD: &str = "the sync that marked it gone; NULL while present";
const X_GROUP: &str =
    "ordering group inside a session (0 session, 1 record, 2 outbound, 3 state, 4 transcript)";
const X_SUB: &str = "index of the row inside its source record";
const X_RECORD: &str = "digest of the source record: dedup of frozen copies";
const X_MATCH: &str = "digest of the normalised text: dedup of copies in a window";
const X_ID: &str = "the record's native id (nanoclaw), an ordering tie-breaker";
const X_META: &str = "a session metadata row a secondary copy emits";
const X_CALL_SOURCE: &str = "on a row that starts a turn: the llm_calls.source of its calls (`user`, `cron`, `system`, `continue`)";
const X_NAMESPACE: &str = "nanobot's workspace-id namespace of the store";
const X_LEGACY: &str = "a session file in a layout nanobot 0.3.x no longer loads";
const X_MSGKEY: &str = "`<role>\\t<timestamp as written>`: one message across copies";
const X_TURN: &str = "WebUI transcript: the record's `turn_id`";
const X_ROUNDS: &str = "WebUI transcript: a turn's token counts per round, on its answer row";
const X_START: &str = "the row that starts a session";
const X_CONTENT: &str =
    "digest of the row's text and native as read, before redaction: its content in row_key";

/// Every table, outputs first, then the ledger's.
pub const TABLES: &[Table] = &[
    Table {
        name: "events",
        description: "one row per message, tool call, tool result, thinking block or system record of nanobot and nanoclaw, deduplicated, in session order (ordinal)",
        columns: &[
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("session_id", SESSION_ID),
            ("parent_session_id", PARENT),
            ("project_path", PROJECT),
            ("git_branch", "always NULL (neither agent records one)"),
            ("seq", SEQ),
            (
                "timestamp_utc",
                "when the row happened, UTC (TIMESTAMP WITH TIME ZONE; NULL when the store gives no time)",
            ),
            (
                "timestamp_local",
                "the same instant on the host's wall clock (TIMESTAMP, no zone); NULL where no offset is known",
            ),
            (
                "utc_offset_minutes",
                "timestamp_local minus timestamp_utc, minutes (the host's offset then)",
            ),
            (
                "time_basis",
                "how timestamp_utc was found: `utc` (the store wrote UTC), `local_derived` (local time and a derived offset), `local_given` (--utc-offset), `local_uncertain`, …",
            ),
            ("turn_type", TURN_TYPE),
            ("model", MODEL),
            ("tool_name", TOOL_NAME),
            ("tool_use_id", TOOL_USE_ID),
            ("text", TEXT),
            ("source_kind", SOURCE_KIND),
            ("source_role", SOURCE_ROLE),
            ("source_path", SOURCE_PATH),
            ("source_line", SOURCE_LINE),
            ("native", NATIVE),
            ("load_id", LOAD_ID),
            (
                "ordinal",
                "the row's place in its session (docs/design.md \"Output order\")",
            ),
            ("session_uid", SESSION_UID),
            (
                "tool_error",
                "on a `tool_result` row: whether the result reports a failure (nanoclaw's `is_error`; nanobot's WebUI `error` phase or the retry hint nanobot appends to a failed call's result), from its text and native; NULL on every other row (NULL throughout in an OUT written before the column)",
            ),
        ],
    },
    Table {
        name: "sessions",
        description: "one row per session (session_uid): its agent, instance, first and last event, turns, tokens and cost_usd",
        columns: &[
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("session_id", SESSION_ID),
            (
                "channel",
                "where the chat happens: nanobot's key prefix (`cli`, `telegram`, `websocket`, …), nanoclaw's channel type",
            ),
            (
                "chat_id",
                "the chat within the channel (the rest of nanobot's key; nanoclaw's platform id)",
            ),
            (
                "created_at",
                "when the agent created the session, as the agent wrote it",
            ),
            (
                "updated_at",
                "when the agent last updated the session, as the agent wrote it",
            ),
            ("first_event_utc", "the session's first timed row, UTC"),
            ("last_event_utc", "the session's last timed row, UTC"),
            ("rows", "events rows of the session"),
            ("user_rows", "its `user` rows"),
            ("assistant_rows", "its `assistant` rows"),
            ("tool_use_rows", "its `tool_use` rows"),
            ("tool_result_rows", "its `tool_result` rows"),
            ("thinking_rows", "its `thinking` rows"),
            ("system_rows", "its `system` rows"),
            (
                "tool_calls",
                "distinct tool calls (tool_use_id) of the session",
            ),
            ("parent_session_id", PARENT),
            ("model_preset", "the model preset the session names"),
            ("project_path", PROJECT),
            (
                "in_primary_store",
                "whether a store of record holds the session",
            ),
            (
                "secondary_only",
                "whether only copies (secondary stores) hold it",
            ),
            (
                "source_kinds",
                "the kinds of store its rows came from, comma-separated",
            ),
            ("llm_calls", "LLM calls attributed to the session"),
            ("input_tokens", "their input tokens, cached included"),
            ("output_tokens", "their output tokens"),
            ("total_tokens", "their total tokens as reported"),
            (
                "cache_read_tokens",
                "their tokens read from the provider's cache",
            ),
            (
                "cache_write_tokens",
                "their tokens written to the provider's cache",
            ),
            ("agent_group_id", "nanoclaw: the agent group"),
            ("messaging_group_id", "nanoclaw: the messaging group"),
            ("thread_id", "nanoclaw: the thread"),
            ("session_status", "nanoclaw: the session's status"),
            ("messages_in", "nanoclaw: inbound messages"),
            ("messages_out", "nanoclaw: outbound messages"),
            (
                "continuation",
                "nanoclaw: the provider sessions it continues (`provider:id`, comma-separated)",
            ),
            (
                "outbound_missing",
                "nanoclaw: its outbound messages are lost",
            ),
            ("inbound_missing", "nanoclaw: its inbound messages are lost"),
            (
                "catalog_row_missing",
                "nanoclaw: its row in the central database is lost",
            ),
            (
                "transcript_missing",
                "nanoclaw: its Claude Code transcript is lost",
            ),
            (
                "session_folder_missing",
                "nanoclaw: its session folder is lost",
            ),
            (
                "namespace",
                "nanobot: the workspace-id namespace that holds the session",
            ),
            ("session_uid", SESSION_UID),
            (
                "transcript_turns_with_usage",
                "nanoclaw: transcript turns with counted usage",
            ),
            (
                "transcript_turns_without_usage",
                "nanoclaw: transcript turns without usage",
            ),
            (
                "losses",
                "the session's loss codes, comma-separated (see diagnostics.code)",
            ),
            ("channel_type", "nanoclaw: the channel type"),
            ("platform_id", "nanoclaw: the platform's chat id"),
            ("cost_usd", COST),
            ("load_id", LOAD_ID),
            (
                "title",
                "the session's name: its WebUI chat's title, else its first user message, on one line and cut to 60 characters (59 and `…`), redacted; NULL when it has neither",
            ),
        ],
    },
    Table {
        name: "llm_calls",
        description: "one row per LLM call: nanobot's llm_usage records and nanoclaw's Claude Code responses, with tokens, cost_usd and the session they belong to",
        columns: &[
            ("instance", INSTANCE),
            ("id", LLM_ID),
            ("started_at_ms", STARTED_AT_MS),
            ("duration_ms", DURATION),
            ("provider", PROVIDER),
            ("model", CALL_MODEL),
            ("source", CALL_SOURCE),
            ("stream", STREAM),
            ("finish_reason", FINISH),
            ("input_tokens", INPUT),
            ("output_tokens", OUTPUT),
            ("total_tokens", TOTAL),
            ("cache_read_tokens", CACHE_READ),
            ("cache_write_tokens", CACHE_WRITE),
            ("reported_tokens", REPORTED),
            ("estimated_tokens", ESTIMATED),
            ("generation_ms", GENERATION),
            ("measured_output_tokens", MEASURED),
            ("ttft_ms", TTFT),
            ("timed_requests", TIMED),
            ("error_status_code", ERROR_STATUS),
            ("error_kind", ERROR_KIND),
            (
                "started_at",
                "when the call started, UTC (TIMESTAMP WITH TIME ZONE)",
            ),
            (
                "session_id",
                "the session the call belongs to, as attributed (docs/design.md \"LLM call attribution\")",
            ),
            (
                "source_path",
                "the store the call was read from, relative to HOME",
            ),
            ("session_uid", SESSION_UID),
            (
                "cost_usd",
                "USD at the price table's prices (`nanoload prices`); NULL when the model has no price",
            ),
            (
                "started_at_local",
                "started_at on the host's wall clock; NULL where no offset is known",
            ),
            (
                "utc_offset_minutes",
                "started_at_local minus started_at, minutes",
            ),
            ("agent", AGENT),
            (
                "message_id",
                "nanoclaw: the response's message id (NULL on nanobot rows)",
            ),
            (
                "request_id",
                "nanoclaw: the response's request id (NULL on nanobot rows)",
            ),
            ("load_id", LOAD_ID),
            ("call_id", CALL_ID),
        ],
    },
    Table {
        name: "tz_offsets",
        description: "the host's UTC offset per instance and range of days, derived from true-UTC evidence",
        columns: &[
            ("instance", INSTANCE),
            ("first_day", "the first local day of the range"),
            ("last_day", "the last local day of the range"),
            (
                "offset_minutes",
                "the host's offset from UTC then, minutes (local minus UTC)",
            ),
            (
                "pairs",
                "evidence pairs (a local and a UTC stamp of one moment) that voted for it",
            ),
            (
                "agreement",
                "the share of the range's pairs that agree, 0 to 1",
            ),
            ("load_id", LOAD_ID),
        ],
    },
    Table {
        name: "diagnostics",
        description: "what could not be read, was lost or was skipped: kind, store, line, message",
        columns: &[
            ("kind", DIAG_KIND),
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("source_path", DIAG_PATH),
            ("source_line", DIAG_LINE),
            ("message", DIAG_MESSAGE),
            ("session_id", DIAG_SESSION),
            ("code", DIAG_CODE),
            ("load_id", LOAD_ID),
        ],
    },
    Table {
        name: "sources",
        description: "one row per store read: its kind, role, path, bytes, rows, status and the secrets redacted in it",
        columns: &[
            ("source_kind", STORE_KIND),
            ("source_role", STORE_ROLE),
            ("source_path", STORE_PATH),
            ("bytes", STORE_BYTES),
            ("rows", STORE_ROWS),
            ("status", STORE_STATUS),
            ("agent", STORE_AGENT),
            ("instance", INSTANCE),
            ("parts", STORE_PARTS),
            ("redactions", REDACTIONS),
            (
                "agent_version",
                "the version of the agent that wrote the store, where its install records one; else NULL",
            ),
            ("load_id", LOAD_ID),
        ],
    },
    Table {
        name: "loads",
        description: "ledger: one row per nanoload sync (added, changed, gone, rows, present)",
        columns: &[
            ("sync", "the sync's number: 1, 2, …"),
            ("load_id", LOAD_ID),
            (
                "started_at",
                "when the sync started, UTC (TIMESTAMP, no zone)",
            ),
            ("finished_at", "when it committed, UTC (TIMESTAMP, no zone)"),
            ("home", "the HOME it read"),
            (
                "options",
                "the options it ran with (a --secret-pattern counted, never shown)",
            ),
            ("added", "rows it saw for the first time"),
            ("changed", "rows it saw again moved or rendered otherwise"),
            ("gone", "rows it marked gone (deleted by the agent)"),
            ("rows", "rows it read"),
            ("present", "rows present after it"),
            (
                "unreadable",
                "its unreadable and skipped_link diagnostics (NULL: not recorded)",
            ),
        ],
    },
    Table {
        name: "ledger_events",
        description: "ledger: every staged event row ever seen, with first_seen_load, last_seen_load and present (false: the agent deleted it)",
        columns: &[
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("session_id", SESSION_ID),
            ("parent_session_id", PARENT),
            ("project_path", PROJECT),
            ("seq", SEQ),
            (
                "ts_utc",
                "when the row happened, where the store writes UTC (TIMESTAMP, no zone)",
            ),
            (
                "ts_local",
                "when the row happened on the host's wall clock, where the store writes local time (TIMESTAMP, no zone)",
            ),
            ("turn_type", TURN_TYPE),
            ("model", MODEL),
            ("tool_name", TOOL_NAME),
            ("tool_use_id", TOOL_USE_ID),
            ("text", TEXT),
            ("source_kind", SOURCE_KIND),
            ("source_role", SOURCE_ROLE),
            ("source_path", SOURCE_PATH),
            ("source_line", SOURCE_LINE),
            ("native", NATIVE),
            ("x_group", X_GROUP),
            ("x_sub", X_SUB),
            ("x_record", X_RECORD),
            ("x_match", X_MATCH),
            ("x_id", X_ID),
            ("x_meta", X_META),
            ("x_call_source", X_CALL_SOURCE),
            ("x_namespace", X_NAMESPACE),
            ("x_legacy", X_LEGACY),
            ("x_msgkey", X_MSGKEY),
            ("x_turn", X_TURN),
            ("x_rounds", X_ROUNDS),
            ("x_start", X_START),
            ("x_content", X_CONTENT),
            ("row_key", ROW_KEY),
            ("first_seen_load", FIRST_SEEN),
            ("last_seen_load", LAST_SEEN),
            ("present", PRESENT),
            ("store_path", LEDGER_STORE_PATH),
            ("gone_load", GONE_LOAD),
        ],
    },
    Table {
        name: "ledger_llm_calls",
        description: "ledger: every nanobot llm_usage record ever seen, with first_seen_load, last_seen_load and present",
        columns: &[
            ("instance", INSTANCE),
            (
                "source_path",
                "the llm_usage.sqlite3 the call was read from, relative to HOME",
            ),
            ("id", LLM_ID),
            ("started_at_ms", STARTED_AT_MS),
            ("duration_ms", DURATION),
            ("provider", PROVIDER),
            ("model", CALL_MODEL),
            ("source", CALL_SOURCE),
            ("stream", STREAM),
            ("finish_reason", FINISH),
            ("input_tokens", INPUT),
            ("output_tokens", OUTPUT),
            ("total_tokens", TOTAL),
            ("cache_read_tokens", CACHE_READ),
            ("cache_write_tokens", CACHE_WRITE),
            ("reported_tokens", REPORTED),
            ("estimated_tokens", ESTIMATED),
            ("generation_ms", GENERATION),
            ("measured_output_tokens", MEASURED),
            ("ttft_ms", TTFT),
            ("timed_requests", TIMED),
            ("error_status_code", ERROR_STATUS),
            ("error_kind", ERROR_KIND),
            ("call_id", CALL_ID),
            ("row_key", ROW_KEY),
            ("first_seen_load", FIRST_SEEN),
            ("last_seen_load", LAST_SEEN),
            ("present", PRESENT),
            ("store_path", LEDGER_STORE_PATH),
            ("gone_load", GONE_LOAD),
        ],
    },
    Table {
        name: "ledger_sources",
        description: "ledger: every store ever read, with when it was first and last seen",
        columns: &[
            ("source_kind", STORE_KIND),
            ("source_role", STORE_ROLE),
            ("source_path", STORE_PATH),
            ("bytes", STORE_BYTES),
            ("rows", STORE_ROWS),
            ("status", STORE_STATUS),
            ("agent", STORE_AGENT),
            ("instance", INSTANCE),
            ("parts", STORE_PARTS),
            ("redactions", REDACTIONS),
            ("first_seen_load", "the sync that first read the store"),
            ("last_seen_load", "the latest sync that read it"),
            ("present", "whether the latest sync still found the store"),
            (
                "state_key",
                "the key of the store as last read to its end (its --cache key): an unchanged store is not read again",
            ),
            ("gone_load", GONE_LOAD),
        ],
    },
    Table {
        name: "ledger_diagnostics",
        description: "ledger: the diagnostics of each sync",
        columns: &[
            ("kind", DIAG_KIND),
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("source_path", DIAG_PATH),
            ("source_line", DIAG_LINE),
            ("message", DIAG_MESSAGE),
            ("session_id", DIAG_SESSION),
            ("code", DIAG_CODE),
            ("sync", "the sync (loads.sync) that met it"),
        ],
    },
    Table {
        name: "ledger_meta",
        description: "ledger: its format and columns",
        columns: &[
            ("key", "`format`, `columns`, `created_by`, …"),
            ("value", "its value"),
        ],
    },
    Table {
        name: "ledger_versions",
        description: "ledger: a record the agent rewrote in place, its old row beside the row that replaced it",
        columns: &[
            ("old_row_key", "the earlier version's row_key"),
            ("new_row_key", "the later version's row_key"),
            ("agent", AGENT),
            ("instance", INSTANCE),
            ("session_id", SESSION_ID),
            ("source_path", SOURCE_PATH),
            ("turn_type", TURN_TYPE),
            (
                "old_last_seen_load",
                "the last sync that saw the earlier version",
            ),
            (
                "new_first_seen_load",
                "the first sync that saw the later version",
            ),
            ("old_text", "the earlier version's text"),
            ("new_text", "the later version's text"),
        ],
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    /// Each table and each of its columns is named once, every meaning
    /// says something, and the writer's side tables are catalogued.
    #[test]
    fn every_table_and_column_is_named_once_with_a_meaning() {
        let mut names: Vec<&str> = TABLES.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLES.len());
        for t in TABLES {
            assert!(!t.description.is_empty(), "{}", t.name);
            let mut cols: Vec<&str> = t.columns.iter().map(|(c, _)| *c).collect();
            cols.sort_unstable();
            cols.dedup();
            assert_eq!(cols.len(), t.columns.len(), "{}: a column twice", t.name);
            for (c, m) in t.columns {
                assert!(m.len() > 3, "{}.{c}", t.name);
            }
        }
        for t in SIDE_TABLES {
            assert!(table(t).is_some(), "{t}");
        }
        assert_eq!(
            table("events").and_then(|t| t.meaning("agent")),
            Some(AGENT)
        );
        assert_eq!(table("no_such_table"), None);
    }

    /// docs/design.md's table of the `events` columns names the same
    /// columns as the catalog, in the same order.
    #[test]
    fn the_design_names_the_catalogs_events_columns() {
        let section = crate::testutil::design_section("## The `events` table");
        let design: Vec<String> = section
            .lines()
            .skip_while(|l| !l.starts_with("| column | meaning |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .flat_map(|l| {
                let first = l.trim_matches('|').split(" | ").next().unwrap_or("");
                first
                    .split(',')
                    .map(|c| c.trim().to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        let catalog: Vec<&str> = table("events")
            .map(|t| t.columns.iter().map(|(c, _)| *c).collect())
            .unwrap_or_default();
        assert_eq!(design, catalog);
    }
}
