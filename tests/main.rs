//! The one integration-test binary (every test binary links DuckDB, so there
//! is only this one). Each module is one area of behaviour.

mod audits; // sql/audits/ invariants hold on every fixture home and can fail
mod cli;
mod common;
mod fixture_homes; // shared: every fixture home loaded once (golden + audits)
mod foundation; // issue 2: nanobot session stores end to end
mod golden; // every fixture's outputs against tests/golden/
mod hardening; // issue 5: evidence, bad input, atomicity, reproducibility
mod nanobot_stores; // issue 3: the other nanobot stores, offsets, dedup windows
mod nanoclaw; // issue 4: nanoclaw catalog and session databases
mod realwriter; // issue 9: homes nanobot's own code wrote, checked against its own readers
