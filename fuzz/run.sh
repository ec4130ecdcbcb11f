#!/usr/bin/env bash
# Bounded fuzz runs of every target (cargo-fuzz, libFuzzer), from the
# committed corpus fuzz/corpus/<target>/ (fuzz/seed.sh writes it):
#   fuzz/run.sh [seconds per target, default 60] [--dev]
# `--dev` builds the targets unoptimised, with overflow checks and debug
# assertions: a build in half the time (on a 2-core machine 6.5 min against
# 12 to 16, BENCHMARKS.md "Fuzzing in CI") for a sixteenth to a twentieth of
# the runs a second. CI runs `fuzz/run.sh 20 --dev` (scripts/check.sh). A crash, a failed assertion of a
# target, a timeout or an out-of-memory fails the run: the target's whole
# libFuzzer log is printed, with the input that failed (libFuzzer prints it
# as bytes and Base64; it is also kept under fuzz/artifacts/<target>/ —
# make it a fixtures/bad case). What a run finds new goes to a temp dir,
# never into the committed corpus, so the tree stays as it was.
# Needs `cargo install cargo-fuzz`; RUSTC_BOOTSTRAP=1 lets the stable
# toolchain accept the flags cargo-fuzz passes (no sanitizer: `-s none`).
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-60}"
mode=()
case "${2:-}" in
  "") ;;
  --dev) mode=(--dev) ;;
  *) echo "fuzz/run.sh: unknown option ${2}: [seconds] [--dev]" >&2; exit 2 ;;
esac
targets=(jsonl_line session_record cli_history webui_record nanoclaw_content secrets)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export RUSTC_BOOTSTRAP=1
# one build of every target first, so each run below is the fuzzing alone
cargo fuzz build -s none "${mode[@]}"
for t in "${targets[@]}"; do
  [ -n "$(ls -A "corpus/$t" 2>/dev/null)" ] || { echo "fuzz/corpus/$t is empty: run fuzz/seed.sh" >&2; exit 1; }
  mkdir -p "$work/$t" "artifacts/$t"
  echo "== $t (${secs}s, $(ls "corpus/$t" | wc -l) seeds)"
  # -seed fixed: the same mutations on the same build; -timeout: an input
  # that takes over 10 s is a hang; new inputs go to the first (temp) dir
  if ! cargo fuzz run -s none "${mode[@]}" "$t" "$work/$t" "corpus/$t" -- \
      -max_total_time="$secs" -seed=1 -timeout=10 -rss_limit_mb=1024 \
      -artifact_prefix="artifacts/$t/" >"$work/$t.log" 2>&1; then
    cat "$work/$t.log" >&2
    echo "fuzz target $t failed: the input is under fuzz/artifacts/$t/" >&2
    exit 1
  fi
  grep -E '^(#[0-9]+[[:space:]]+DONE|Done [0-9]+ runs)' "$work/$t.log" | tail -n 1
done
