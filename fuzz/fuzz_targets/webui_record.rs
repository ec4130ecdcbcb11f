//! The WebUI record mapper: any decodable object maps without a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nanoload::schema::EventRow;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(d)) = nanoload::jsonl::decode_line(data) {
        if let Some(o) = d.value.as_object() {
            let base = EventRow::default();
            for thinking in [false, true] {
                let rows = nanoload::sources::nanobot::webui_transcript::map_record(o, &base, thinking);
                assert!(rows.iter().enumerate().all(|(i, r)| r.x_sub == i as i32));
            }
        }
    }
});
