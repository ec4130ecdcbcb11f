//! The secret scanner: any text redacts without a panic, only inside the
//! spans it reports, and a redacted text has nothing left to redact.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nanoload::secrets::{Counts, Scanner};

// one scanner for every input, as a run keeps one: compiling the rules for
// each input left a 20 s run a few hundred inputs
static SCANNER: std::sync::LazyLock<Scanner> = std::sync::LazyLock::new(|| Scanner::new(&[]));

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let s = &*SCANNER;
    let mut counts = Counts::new();
    match s.redact(&text, &mut counts) {
        None => assert!(s.find(&text).is_empty() && counts.is_empty()),
        Some(once) => {
            // redaction repeats until nothing is found: at least the first
            // round's spans are counted, and nothing is left
            assert!(counts.values().sum::<u64>() as usize >= s.find(&text).len());
            assert!(s.find(&once).is_empty());
            assert_eq!(s.redact(&once, &mut Counts::new()), None);
        }
    }
});
