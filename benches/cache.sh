#!/usr/bin/env bash
# The incremental cache against an uncached run (BENCHMARKS.md "Incremental cache").
#
#   benches/cache.sh HOME [RUNS]
#
# One populating `--cache` run (every store a miss), then RUNS pairs of a plain
# run and a `--cache` run (every store a hit), alternating; prints each wall
# (and the `extract` phase of `--timings`) and checks that the outputs are the
# same bytes. NANOLOAD selects the binary (default target/release/nanoload).
set -euo pipefail
home=${1:?usage: benches/cache.sh HOME [RUNS]}
runs=${2:-3}
bin=${NANOLOAD:-target/release/nanoload}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
timed() { # label, args…
    local label=$1; shift
    local start end
    start=$(date +%s.%N)
    "$bin" "$@" --timings 2>"$work/err" >/dev/null || true
    end=$(date +%s.%N)
    printf '%-9s %6.2f s  %s  %s\n' "$label" "$(echo "$end - $start" | bc)" \
        "$(grep -E '^  extract ' "$work/err" | tr -s ' ')" "$(grep -E '^  cache:' "$work/err" | sed 's/^ *//')"
}
timed populate "$home" "$work/populate.parquet" --cache "$work/cache"
for _ in $(seq "$runs"); do
    timed plain "$home" "$work/plain.parquet"
    timed cached "$home" "$work/cached.parquet" --cache "$work/cache"
done
cmp "$work/plain.parquet" "$work/cached.parquet" && cmp "$work/plain.parquet" "$work/populate.parquet" \
    && echo "outputs identical"
