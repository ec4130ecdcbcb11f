//! nanobot stores (`.nanobot*/` instances directly under HOME).

pub mod cli_history;
pub mod cron_run;
pub mod llm_usage;
pub mod memory_history;
pub mod permissions;
pub mod record;
pub mod recovery;
pub mod run_records;
pub mod session_db;
pub mod session_jsonl;
pub mod subagent_records;
pub mod trigger_run;
pub mod unread;
pub mod webui_index;
pub mod webui_transcript;
pub mod workspace;
