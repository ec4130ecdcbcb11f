//! The nanoclaw content mapper: no panic, and a secret-shaped answer or option
//! value never survives in the text or the kept content.
#![no_main]
use libfuzzer_sys::fuzz_target;
use nanoload::sources::nanoclaw::content::{SecretRules, map_content};

const KINDS: [&str; 6] = ["chat", "chat-sdk", "task", "system", "task_log", "webhook"];

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let kind = KINDS[usize::from(sel) % KINDS.len()];
    let content = String::from_utf8_lossy(rest);
    let m = map_content(kind, &content, sel & 0x80 != 0, &SecretRules::default());
    let kept = m.content.to_string();
    for secret in [r#""selectedOption":"ghp_"#, r#""value":"ghp_"#, r#""value":"sk-"#] {
        assert!(!kept.contains(secret), "{kept}");
    }
});
