#!/usr/bin/env bash
# Short deterministic fuzz runs of every target (cargo-fuzz, libFuzzer):
#   fuzz/run.sh [seconds per target, default 60]
# Seeds come from the fixtures; crashes found become fixtures/bad cases.
# Needs `cargo install cargo-fuzz`; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain accept the flags cargo-fuzz passes (no sanitizer: `-s none`).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
root=..
# one line per corpus file, from the fixtures
split_lines() { # target, files…
  local t=$1; shift; local i=0
  for f in "$@"; do while IFS= read -r line || [ -n "$line" ]; do i=$((i+1)); printf '%s' "$line" > "corpus/$t/seed-$i"; done < "$f"; done
}
split_lines jsonl_line "$root"/fixtures/nanobot/home-a/.nanobot/sessions/*/*.jsonl "$root"/fixtures/bad/*/.nanobot/sessions/*/*.jsonl
split_lines session_record "$root"/fixtures/nanobot/home-a/.nanobot*/sessions/*/*.jsonl
split_lines webui_record "$root"/fixtures/nanobot/home-a/.nanobot/webui/*.jsonl "$root"/fixtures/nanobot/home-a/.nanobot/webui/*.segments/*.jsonl
cp "$root"/fixtures/nanobot/home-a/.nanobot/history/cli_history corpus/cli_history/seed-1
cp "$root"/fixtures/bad/cli_history_bad_timestamp/.nanobot/history/cli_history corpus/cli_history/seed-2
printf '\x03{"type":"question_response","questionId":"q","selectedOption":"ghp_x"}' > corpus/nanoclaw_content/seed-1
printf '\x81{"type":"ask_question","questionId":"q","title":"t","options":[{"label":"a","value":"ghp_y"}]}' > corpus/nanoclaw_content/seed-2
for t in jsonl_line session_record cli_history webui_record nanoclaw_content secrets; do
  echo "== $t (${secs}s)"
  RUSTC_BOOTSTRAP=1 cargo fuzz run -s none "$t" "corpus/$t" -- -max_total_time="$secs" -seed=1 -rss_limit_mb=1024 2>&1 | tail -3
done
