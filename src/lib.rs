//! nanoload: everything the nanobot and nanoclaw agents leave on disk, as one
//! analyst-ready Parquet table.
//!
//! ```text
//! HOME ──discover (globset)──▶ stores ──extract (rayon, one store per task)──▶ Arrow batches
//!      ──▶ staging Parquet (one file per store kind) ──▶ embedded DuckDB runs sql/V###__*.sql
//!      ──▶ COPY events TO OUT.parquet   (+ --tables DIR, --db FILE.duckdb)
//! ```
//!
//! The decoders (`jsonl`, `sources::*::*` mappers) need no DuckDB: with
//! `default-features = false` the crate builds without the `engine` feature,
//! which is how the fuzz targets link it.
#![deny(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

pub mod diag;
pub mod discover;
pub mod extract;
pub mod jsonl;
pub mod schema;
pub mod snapshot;
pub mod sources;
pub mod stage;
pub mod store;
pub mod time;

#[cfg(test)]
mod testutil;

#[cfg(feature = "engine")]
pub mod cli;
#[cfg(feature = "engine")]
pub mod output;
#[cfg(feature = "engine")]
pub mod run;
#[cfg(feature = "engine")]
pub mod steps;

#[cfg(feature = "engine")]
pub use run::{ExitCode, Options, Summary, run};

/// The version string that enters `load_id`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
