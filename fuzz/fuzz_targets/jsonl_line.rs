//! The lenient JSONL line decoder: any bytes decode or give an error, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(d)) = nanoload::jsonl::decode_line(data) {
        // a decoded value always hashes (its canonical encoding) and re-serialises
        let _ = nanoload::sources::nanobot::record::record_hash(&d.value, nanoload::store::KeyDigest::Fast);
        let _ = d.value.to_string();
    }
    let _ = nanoload::jsonl::replace_lone_surrogates(&String::from_utf8_lossy(data));
});
