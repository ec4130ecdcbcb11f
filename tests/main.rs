//! The one integration-test binary (every test binary links DuckDB, so there
//! is only this one). Each test module is one area of behaviour; `common`
//! and `fixture_homes` are shared helpers, the only modules a test module
//! imports from.

mod audits; // sql/audits/ invariants hold on every fixture home and can fail
mod cache; // --cache: unchanged stores staged from the cache, same output bytes
mod ci; // .ci/run and scripts/check.sh: CI never blesses, refused before anything runs
mod cli; // --help, argument errors, the end-of-run summary
mod common; // shared: run the binary, read outputs, run audits, home-a facts
mod cost; // llm_calls.cost_usd and sessions.cost_usd from the price table (--prices)
mod dataset; // --dataset: three homes as three hosts, read by DuckDB and PySpark
mod fixture_homes; // shared: every fixture home loaded once (golden + audits)
mod foundation; // nanobot session stores end to end on fixtures/nanobot/home-a
mod golden; // every fixture home's outputs against tests/golden/
mod hardening; // read-only HOME, bad input, live writers, atomic and reproducible output
mod keep; // a HOME as SOURCE: answered from the ledger kept in the cache dir; --no-keep; cache list/clear
mod ledger; // `nanoload sync`: every row ever seen kept, deletions marked gone, one sync at a time
mod mcp; // `nanoload mcp`: JSON-RPC over stdio, the mcp SDK as client, nanobot's own MCP client
mod nanobot_stores; // the other nanobot stores, UTC offsets, secondary dedup, side tables
mod nanoclaw; // nanoclaw's catalog, session databases and transcripts
mod notebook; // examples/analysis.ipynb run headless on fresh output; its totals equal sessions
mod otlp; // `nanoload otlp`: traces valid by opentelemetry-proto and equal to the tables; Phoenix reads them back
mod progress; // --progress in a pseudo-terminal and without one; --summary-json against the tables
mod realwriter; // homes nanobot's own code wrote, checked against its own readers
mod report; // `nanoload report` of every fixture home in headless Chromium: charts equal the outputs
mod secrets; // no secret in any output byte: the corpus planted by nanobot, nanoclaw's credential fields
mod sources; // every reader × every SOURCE kind of the same data: one answer
mod sql; // `nanoload sql`: one read-only query over a load, a --db file or a ledger; the guard
mod totals; // every total says what it is computed from: priced part, activity, --price/--free, usage flags
mod usage; // `nanoload usage`: each view of each fixture home, totals against SQL, widths, refusals
