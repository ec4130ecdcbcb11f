//! The one integration-test binary (every test binary links DuckDB, so there
//! is only this one). Each module is one area of behaviour.

mod common;
mod foundation;
mod nanobot_stores;
mod nanoclaw;
