#!/usr/bin/env bash
# Explore nanobot-ai 0.3.5 with the seeded `explore` scenario (issue 24 §1):
# generate seeds FIRST .. FIRST+N-1 one after another (generate.py uses one
# fixed generation root, so never two at a time), then check every home with
# realwriter::explored_homes_match_what_nanobot_reads, which prints each
# failed check line per seed, marked [expected <defect>] (listed in
# explore-expected-failures) or [NEW].
#
#   tests/realwriter/explore.sh [FIRST] [N]          # default: 1 10
#   tests/realwriter/explore.sh --seeds FILE         # the seeds listed in FILE
#
# Environment: NANOLOAD_EXPLORE_OUT=DIR keeps the homes there (default: a
# temp dir, removed at exit); NANOLOAD_EXPLORE_CHECK=no only generates
# (scripts/check.sh: its `cargo test` checks them); CARGO_TARGET_DIR as for
# cargo. The check runs in the release test profile (`cargo test --release`,
# much faster per home); NANOLOAD_EXPLORE_PROFILE=dev runs the dev profile.
# A seed whose generation fails leaves DIR/explore-<seed>/generate-failed.txt
# (the generator's stderr), which the test reports as a failure.
set -euo pipefail
cd "$(dirname "$0")/../.."

seeds=()
if [ "${1:-}" = "--seeds" ]; then
  while read -r s _; do
    case "$s" in ''|'#'*) ;; *) seeds+=("$s") ;; esac
  done <"$2"
else
  first=${1:-1}
  n=${2:-10}
  for ((s = first; s < first + n; s++)); do seeds+=("$s"); done
fi

venv=$(tests/realwriter/setup.sh | tail -n 1)
if [ -n "${NANOLOAD_EXPLORE_OUT:-}" ]; then
  out=$NANOLOAD_EXPLORE_OUT
  mkdir -p "$out"
else
  out=$(mktemp -d)
  trap 'rm -rf "$out"' EXIT
fi

t0=$(date +%s)
for s in "${seeds[@]}"; do
  case_dir="$out/explore-$(printf '%05d' "$s")"
  rm -rf "$case_dir"
  mkdir -p "$case_dir"
  t=$(date +%s)
  if "$venv/bin/python" tests/realwriter/generate.py --scenario explore --seed "$s" --out "$case_dir" \
      >"$case_dir/generate.log" 2>&1; then
    echo "seed $s: generated in $(( $(date +%s) - t ))s: $(tail -n 1 "$case_dir/generate.log")" >&2
  else
    mv "$case_dir/generate.log" "$case_dir/generate-failed.txt"
    rm -f "$case_dir/facts.json"
    echo "seed $s: GENERATION FAILED: $(tail -n 1 "$case_dir/generate-failed.txt")" >&2
  fi
done
echo "${#seeds[@]} seed(s) generated in $(( $(date +%s) - t0 ))s into $out" >&2

[ "${NANOLOAD_EXPLORE_CHECK:-yes}" = no ] && exit 0
profile=(--release)
[ "${NANOLOAD_EXPLORE_PROFILE:-release}" = dev ] && profile=()
NANOLOAD_REALWRITER_EXPLORE="$out" cargo test "${profile[@]}" --test integration \
  realwriter::explored_homes_match_what_nanobot_reads -- --exact --include-ignored --nocapture
