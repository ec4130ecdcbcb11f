#!/usr/bin/env bash
# The test command: formatting, lints and every test, in the one cargo
# profile (dev) that builds the bundled DuckDB once.
set -euo pipefail
cd "$(dirname "$0")/.."
export INSTA_UPDATE=no
cargo fmt --check
cargo clippy --all-targets --locked -- -D warnings
# the library without the engine (what the fuzz crate links)
cargo clippy --lib --no-default-features --locked -- -D warnings
cargo test --locked
