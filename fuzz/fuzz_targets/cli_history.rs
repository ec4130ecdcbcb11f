//! The prompt_toolkit history parser: one entry per `#` line, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (entries, _bad) = nanoload::sources::nanobot::cli_history::parse(data);
    let stamps = data.split(|b| *b == b'\n').filter(|l| l.first() == Some(&b'#')).count();
    assert_eq!(entries.len(), stamps);
    assert!(entries.windows(2).all(|w| w[0].line < w[1].line));
});
