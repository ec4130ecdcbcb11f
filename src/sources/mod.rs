//! The extractor registry: one entry per store kind. Adding a store = one
//! file under `sources/<agent>/`, one line here, one fixture, one test.
//!
//! Each entry names its globs (relative to HOME, compiled once by
//! [`crate::discover::Matcher`] with `literal_separator(true)`), optionally a
//! test a matched path must pass, how the store's role is decided, and the
//! function that turns one store into rows.

use std::collections::BTreeSet;
use std::path::Path;

use crate::extract::{StoreError, StoreOutput};
use crate::schema::{Agent, Role};

pub mod nanobot;
pub mod nanoclaw;

/// Whether a glob names a store, or a further file of a store (whose main
/// path the function computes).
#[derive(Clone, Copy)]
pub enum GlobPart {
    Store,
    PartOf(fn(&str) -> String),
}

pub struct Glob {
    pub pattern: &'static str,
    pub part: GlobPart,
    /// Extra test on a matched path (`rel`, HOME), e.g. "the directory is a workspace".
    pub accept: Option<fn(&str, &Path) -> bool>,
}

/// Decides a store's role from its path (relative to HOME), HOME, and every
/// discovered store path.
pub type RoleFn = fn(&str, &Path, &BTreeSet<String>) -> Role;

pub struct Extractor {
    /// `source_kind` of its rows.
    pub kind: &'static str,
    pub agent: Agent,
    pub globs: &'static [Glob],
    /// Decides primary/secondary from the store's path and every discovered
    /// store path; `None` means always primary.
    pub role: Option<RoleFn>,
    /// Fixed role when `role` is `None`.
    pub default_role: Role,
    pub extract: fn(&mut StoreOutput<'_>) -> Result<(), StoreError>,
}

const fn store(pattern: &'static str) -> Glob {
    Glob {
        pattern,
        part: GlobPart::Store,
        accept: None,
    }
}

const fn store_if(pattern: &'static str, accept: fn(&str, &Path) -> bool) -> Glob {
    Glob {
        pattern,
        part: GlobPart::Store,
        accept: Some(accept),
    }
}

pub static REGISTRY: &[Extractor] = &[
    Extractor {
        kind: "nanobot.session_db",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/sessions/*/sessions.sqlite3")],
        role: None,
        default_role: Role::Primary,
        extract: nanobot::session_db::extract,
    },
    Extractor {
        kind: "nanobot.session_jsonl",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/sessions/*/*.jsonl"),
            store(".nanobot*/sessions/*.jsonl"),
            store(".nanobot*/sessions/*/.migration-conflicts/*.jsonl"),
            store(".nanobot*/sessions/*/jsonl-backup/*.jsonl"),
            store_if(
                ".nanobot*/*/sessions/*.jsonl",
                nanobot::workspace::is_workspace_file,
            ),
        ],
        role: Some(nanobot::session_jsonl::role),
        default_role: Role::Primary,
        extract: nanobot::session_jsonl::extract,
    },
    Extractor {
        kind: "nanobot.webui_transcript",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/webui/*.jsonl"),
            Glob {
                pattern: ".nanobot*/webui/*.segments/*.jsonl",
                part: GlobPart::PartOf(nanobot::webui_transcript::owner),
                accept: None,
            },
        ],
        role: None,
        default_role: Role::Secondary,
        extract: nanobot::webui_transcript::extract,
    },
    Extractor {
        kind: "nanobot.cli_history",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/history/cli_history")],
        role: None,
        default_role: Role::Secondary,
        extract: nanobot::cli_history::extract,
    },
    Extractor {
        kind: "nanobot.memory_history",
        agent: Agent::Nanobot,
        globs: &[
            store_if(
                ".nanobot*/*/memory/history.jsonl",
                nanobot::workspace::is_workspace_file,
            ),
            store_if(
                ".nanobot*/*/memory/HISTORY.md",
                nanobot::workspace::is_workspace_file,
            ),
        ],
        role: None,
        default_role: Role::Primary,
        extract: nanobot::memory_history::extract,
    },
    Extractor {
        kind: "nanobot.cron_run",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/**/cron/runs/*.json")],
        role: None,
        default_role: Role::Secondary,
        extract: nanobot::cron_run::extract,
    },
    Extractor {
        kind: "nanobot.trigger_run",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/**/triggers/runs/*.json")],
        role: None,
        default_role: Role::Secondary,
        extract: nanobot::trigger_run::extract,
    },
    Extractor {
        kind: "nanobot.webui_index",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/sessions/*/.webui_session_index.json")],
        role: None,
        default_role: Role::Secondary,
        extract: nanobot::webui_index::extract,
    },
    Extractor {
        kind: "nanobot.permissions",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/config.json"),
            store(".nanobot*/pairing.json"),
        ],
        role: None,
        default_role: Role::Primary,
        extract: nanobot::permissions::extract,
    },
    Extractor {
        kind: "nanobot.llm_usage",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/llm_usage.sqlite3")],
        role: None,
        default_role: Role::Primary,
        extract: nanobot::llm_usage::extract,
    },
    Extractor {
        kind: "nanoclaw.catalog",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2.db")],
        role: None,
        default_role: Role::Primary,
        extract: nanoclaw::catalog::extract,
    },
    Extractor {
        kind: "nanoclaw.inbound",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2-sessions/*/*/inbound.db")],
        role: None,
        default_role: Role::Primary,
        extract: nanoclaw::inbound::extract,
    },
    Extractor {
        kind: "nanoclaw.outbound",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2-sessions/*/*/outbound.db")],
        role: None,
        default_role: Role::Primary,
        extract: nanoclaw::outbound::extract,
    },
    Extractor {
        kind: "nanoclaw.claude_transcript",
        agent: Agent::Nanoclaw,
        globs: &[
            store("**/data/v2-sessions/*/.claude-shared/projects/*/*.jsonl"),
            store("**/data/v2-sessions/*/.claude-shared/projects/*/*.jsonl.rotated-*"),
        ],
        role: None,
        default_role: Role::Primary,
        extract: nanoclaw::claude_transcript::extract,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::Matcher;

    /// Paths a real home can hold, each with the one kind that must claim it.
    #[test]
    fn every_path_is_claimed_by_at_most_one_extractor() -> Result<(), Box<dyn std::error::Error>> {
        let m = Matcher::new()?;
        let home = Path::new("/nonexistent-home");
        let cases: &[(&str, Option<&str>)] = &[
            (
                ".nanobot/sessions/369b/sessions.sqlite3",
                Some("nanobot.session_db"),
            ),
            (".nanobot/sessions/369b/sessions.sqlite3-wal", None),
            (
                ".nanobot/sessions/369b/Y2xpOmRpcmVjdA.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            (
                ".nanobot/sessions/369b/jsonl-backup/discord_1.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            (
                ".nanobot/sessions/369b/.migration-conflicts/a.workspace.0123.4567.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            (
                ".nanobot/sessions/telegram_1.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            (".nanobot/sessions/369b/a.checkpoint.json", None),
            (
                ".nanobot-work/sessions/0902/discord_99001.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            // not an instance: below a workspace, or not directly under HOME
            ("projects/.nanobot/sessions/369b/a.jsonl", None),
            (".nanobot/sessions/369b/sub/a.jsonl", None),
            // `*` never crosses `/`
            (".nanobot/sessions/a/b/sessions.sqlite3", None),
            (
                ".nanobot/webui/websocket_b8.jsonl",
                Some("nanobot.webui_transcript"),
            ),
            (
                ".nanobot/webui/websocket_b8.segments/000001.jsonl",
                Some("nanobot.webui_transcript"),
            ),
            (".nanobot/webui/websocket_b8.segments/manifest.json", None),
            (".nanobot/history/cli_history", Some("nanobot.cli_history")),
            (
                ".nanobot-work/history/cli_history",
                Some("nanobot.cli_history"),
            ),
            (
                ".nanobot/workspace/cron/runs/02b8f7b8_1792562400000_fe7656d3.json",
                Some("nanobot.cron_run"),
            ),
            (".nanobot/workspace/cron/jobs.json", None),
            (".nanobot/cron/runs/x.json", Some("nanobot.cron_run")),
            (
                ".nanobot/workspace/triggers/runs/tdl_badd0d8f081d.json",
                Some("nanobot.trigger_run"),
            ),
            (
                ".nanobot/sessions/369b/.webui_session_index.json",
                Some("nanobot.webui_index"),
            ),
            (".nanobot/config.json", Some("nanobot.permissions")),
            (".nanobot/pairing.json", Some("nanobot.permissions")),
            (".nanobot/workspace/config.json", None),
            (".nanobot/llm_usage.sqlite3", Some("nanobot.llm_usage")),
            (".nanobot/llm_usage.sqlite3-wal", None),
            ("data/v2.db", Some("nanoclaw.catalog")),
            ("nanoclaw/data/v2.db", Some("nanoclaw.catalog")),
            ("nanoclaw/data/v2.db-wal", None),
            (
                "data/v2-sessions/ag-1/sess-1/inbound.db",
                Some("nanoclaw.inbound"),
            ),
            (
                "data/v2-sessions/ag-1/sess-1/outbound.db",
                Some("nanoclaw.outbound"),
            ),
            ("data/v2-sessions/ag-1/sess-1/inbox/m1/a.db", None),
            (
                "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f.jsonl",
                Some("nanoclaw.claude_transcript"),
            ),
            (
                "data/v2-sessions/ag-1/.claude-shared/projects/-workspace-agent/5b0f.jsonl.rotated-17",
                Some("nanoclaw.claude_transcript"),
            ),
            ("data/v2-sessions/ag-1/.claude-shared/settings.json", None),
            ("mydata/v2.db", None),
        ];
        for (path, want) in cases {
            let got = m.classify(path, home)?.map(|(e, _)| REGISTRY[e].kind);
            assert_eq!(got, *want, "{path}");
        }
        Ok(())
    }

    /// Globs whose claim depends on the directory being a workspace.
    #[test]
    fn workspace_globs_check_the_directory() -> Result<(), Box<dyn std::error::Error>> {
        let m = Matcher::new()?;
        let home = Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/nanobot/home-a"
        ));
        let cases: &[(&str, Option<&str>)] = &[
            (
                ".nanobot/workspace/memory/history.jsonl",
                Some("nanobot.memory_history"),
            ),
            (
                ".nanobot-work/workspace/memory/HISTORY.md",
                Some("nanobot.memory_history"),
            ),
            (
                ".nanobot/workspace/sessions/old.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            // `sessions/` is never a workspace, so this stays a namespace file only
            (
                ".nanobot/sessions/memory/history.jsonl",
                Some("nanobot.session_jsonl"),
            ),
            (".nanobot/webui/sessions/x.jsonl", None),
            (".nanobot/notaworkspace/memory/history.jsonl", None),
        ];
        for (path, want) in cases {
            let got = m.classify(path, home)?.map(|(e, _)| REGISTRY[e].kind);
            assert_eq!(got, *want, "{path}");
        }
        Ok(())
    }
}
