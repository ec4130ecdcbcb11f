//! The extractor registry: one entry per store kind. Adding a store = one
//! file under `sources/<agent>/`, one line here, one fixture, one test.
//!
//! Each entry names its globs (relative to HOME, compiled once by
//! [`crate::discover::Matcher`] with `literal_separator(true)`), optionally a
//! test a matched path must pass, how the store's role is decided, and the
//! function that turns one store into rows.

use std::path::Path;

use crate::schema::{Agent, Role};
use crate::store::{
    Extractor, Glob, GlobPart, KindTraits, NanoclawPart, PLAIN, Reads, SessionLayout, StoreRole,
    TurnCopy,
};

pub mod nanobot;
pub mod nanoclaw;
pub mod shared;

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
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            session_store: Some(SessionLayout::Db),
            message_store: true,
            ..PLAIN
        },
        reads: Reads::Also(nanobot::workspace::governing_files),
        extract: nanobot::session_db::extract,
    },
    Extractor {
        kind: "nanobot.session_jsonl",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/sessions/*/*.jsonl"),
            Glob {
                pattern: ".nanobot*/sessions/*/*.checkpoint.json",
                part: GlobPart::PartOf(nanobot::session_jsonl::checkpoint_owner),
                accept: None,
            },
            store(".nanobot*/sessions/*.jsonl"),
            store(".nanobot*/sessions/*/.migration-conflicts/*.jsonl"),
            store(".nanobot*/sessions/*/jsonl-backup/*.jsonl"),
            store_if(
                ".nanobot*/*/sessions/*.jsonl",
                nanobot::workspace::is_workspace_file,
            ),
        ],
        role: StoreRole::ByPath(nanobot::session_jsonl::role),
        traits: KindTraits {
            session_store: Some(SessionLayout::Jsonl),
            message_store: true,
            ..PLAIN
        },
        reads: Reads::Also(nanobot::workspace::governing_files),
        extract: nanobot::session_jsonl::extract,
    },
    Extractor {
        kind: nanobot::webui_transcript::KIND,
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/webui/*.jsonl"),
            Glob {
                pattern: ".nanobot*/webui/*.segments/*.jsonl",
                part: GlobPart::PartOf(nanobot::webui_transcript::owner),
                accept: None,
            },
        ],
        role: StoreRole::Fixed(Role::Secondary),
        traits: KindTraits {
            turn_copy: Some(TurnCopy::Webui),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanobot::webui_transcript::extract,
    },
    Extractor {
        kind: "nanobot.cli_history",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/history/cli_history")],
        role: StoreRole::Fixed(Role::Secondary),
        traits: KindTraits {
            prompt_copy: true,
            ..PLAIN
        },
        reads: Reads::Own,
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
        role: StoreRole::Fixed(Role::Primary),
        traits: PLAIN,
        reads: Reads::Also(nanobot::workspace::governing_files),
        extract: nanobot::memory_history::extract,
    },
    Extractor {
        kind: "nanobot.cron_run",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/**/cron/runs/*.json")],
        role: StoreRole::Fixed(Role::Secondary),
        traits: KindTraits {
            turn_copy: Some(TurnCopy::Run),
            ..PLAIN
        },
        reads: Reads::Also(nanobot::workspace::governing_files),
        extract: nanobot::cron_run::extract,
    },
    Extractor {
        kind: "nanobot.trigger_run",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/**/triggers/runs/*.json")],
        role: StoreRole::Fixed(Role::Secondary),
        traits: KindTraits {
            turn_copy: Some(TurnCopy::Run),
            ..PLAIN
        },
        reads: Reads::Also(nanobot::workspace::governing_files),
        extract: nanobot::trigger_run::extract,
    },
    Extractor {
        kind: "nanobot.webui_index",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/sessions/*/.webui_session_index.json")],
        role: StoreRole::Fixed(Role::Secondary),
        traits: PLAIN,
        reads: Reads::Own,
        extract: nanobot::webui_index::extract,
    },
    Extractor {
        kind: "nanobot.permissions",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/config.json"),
            store(".nanobot*/pairing.json"),
        ],
        role: StoreRole::Fixed(Role::Primary),
        traits: PLAIN,
        reads: Reads::Own,
        extract: nanobot::permissions::extract,
    },
    Extractor {
        kind: "nanobot.llm_usage",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/llm_usage.sqlite3")],
        role: StoreRole::Fixed(Role::Primary),
        traits: PLAIN,
        reads: Reads::Own,
        extract: nanobot::llm_usage::extract,
    },
    Extractor {
        kind: "nanobot.subagent_records",
        agent: Agent::Nanobot,
        globs: &[
            store(".nanobot*/sessions/*/*.subagents.json"),
            store_if(
                ".nanobot*/*/sessions/*.subagents.json",
                nanobot::workspace::is_workspace_file,
            ),
        ],
        role: StoreRole::ByPath(nanobot::subagent_records::role),
        traits: PLAIN,
        reads: Reads::Also(nanobot::subagent_records::reads),
        extract: nanobot::subagent_records::extract,
    },
    Extractor {
        kind: "nanobot.session_search",
        agent: Agent::Nanobot,
        globs: &[store(".nanobot*/sessions/*/.session_search.sqlite3")],
        role: StoreRole::Fixed(Role::Secondary),
        traits: PLAIN,
        reads: Reads::Own,
        extract: nanobot::unread::skip,
    },
    Extractor {
        kind: "nanobot.unknown_store",
        agent: Agent::Nanobot,
        // no glob: discovery hands it what `unread::is_unknown_store` picks
        globs: &[],
        role: StoreRole::Fixed(Role::Secondary),
        traits: PLAIN,
        reads: Reads::Own,
        extract: nanobot::unread::name_it,
    },
    Extractor {
        kind: "nanoclaw.catalog",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2.db")],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Catalog),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::catalog::extract,
    },
    Extractor {
        kind: "nanoclaw.inbound",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2-sessions/*/*/inbound.db")],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Inbound),
            message_store: true,
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::inbound::extract,
    },
    Extractor {
        kind: "nanoclaw.outbound",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/v2-sessions/*/*/outbound.db")],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Outbound),
            message_store: true,
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::outbound::extract,
    },
    Extractor {
        kind: "nanoclaw.claude_transcript",
        agent: Agent::Nanoclaw,
        globs: &[
            store("**/data/v2-sessions/*/.claude-shared/projects/*/*.jsonl"),
            store("**/data/v2-sessions/*/.claude-shared/projects/*/*.jsonl.rotated-*"),
            store("**/data/v2-sessions/*/.claude-shared/projects/*/*/subagents/agent-*.jsonl"),
        ],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Transcript),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::claude_transcript::extract,
    },
    Extractor {
        kind: "nanoclaw.codex_rollout",
        agent: Agent::Nanoclaw,
        globs: &[store(
            "**/data/v2-sessions/*/.codex-shared/sessions/*/*/*/rollout-*.jsonl",
        )],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Transcript),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::codex_rollout::extract,
    },
    Extractor {
        kind: "nanoclaw.opencode_db",
        agent: Agent::Nanoclaw,
        globs: &[store(
            "**/data/v2-sessions/*/*/opencode-xdg/opencode/opencode.db",
        )],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Transcript),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::opencode_db::extract,
    },
    Extractor {
        kind: "nanoclaw.exchange_archive",
        agent: Agent::Nanoclaw,
        globs: &[store_if(
            "**/groups/*/conversations/*-*.md",
            nanoclaw::exchange_archive::accept,
        )],
        role: StoreRole::Fixed(Role::Secondary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Archive),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::exchange_archive::extract,
    },
    Extractor {
        kind: "nanoclaw.upgrade_state",
        agent: Agent::Nanoclaw,
        globs: &[store("**/data/upgrade-state.json")],
        role: StoreRole::Fixed(Role::Primary),
        traits: KindTraits {
            nanoclaw: Some(NanoclawPart::Marker),
            ..PLAIN
        },
        reads: Reads::Own,
        extract: nanoclaw::upgrade_state::extract,
    },
];
