#!/usr/bin/env bash
# The ledger's speed and size against a load (issue 28; CI does not run this):
#
#   benches/ledger.sh HOME [RUNS=3]
#
# On a private copy of HOME (cp -a: the copy is changed, HOME never is), each
# run measures, under /usr/bin/time -v (wall, CPU user+system, peak RSS):
#
#   load       nanoload COPY out.parquet --tables t            (the reference)
#   first      nanoload sync COPY L.duckdb                      (a new ledger)
#   unchanged  nanoload sync COPY L.duckdb                      (nothing changed)
#   grown      one session JSONL gains a turn (a user and an assistant line
#              appended, as nanobot's save appends), then nanoload sync COPY L.duckdb
#
# and once: the ledger's size against the same rows as zstd Parquet (its
# tables COPYed by DuckDB with COMPRESSION zstd). Prints Markdown for
# BENCHMARKS.md: medians, and the ratios unchanged/load and grown/load that
# the targets name (≤ 0.10 and ≤ 0.15), the size ratio (≤ 1.5) and the peak
# RSS (≤ 512 MiB). NANOLOAD selects the binary (default target/release/nanoload);
# DuckDB for the size comparison is the venv of benches/compare.sh.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,4p' "$0" >&2
  exit 2
fi
HOME_DIR=$(realpath "$1")
if [ -n "${NANOLOAD:-}" ] && [ -e "$NANOLOAD" ]; then NANOLOAD=$(realpath "$NANOLOAD"); fi
cd "$(dirname "$0")/.."
RUNS=${2:-3}
NANOLOAD=$(realpath "${NANOLOAD:-target/release/nanoload}")
[ -x "$NANOLOAD" ] || { echo "ledger.sh: $NANOLOAD not found (set NANOLOAD)" >&2; exit 2; }
PY=$(ls -d "${XDG_CACHE_HOME:-$HOME/.cache}"/nanoload/bench-venv-duckdb*/bin/python 2>/dev/null | head -n 1)
[ -n "$PY" ] || { echo "ledger.sh: run benches/compare.sh once first (it makes the DuckDB venv)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/nanoload-ledger.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
results="$work/results.tsv"   # what run wall_s rss_kb cpu_s status
: > "$results"

parse_time() { # file -> "wall_s rss_kb cpu_s"
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    /User time \(seconds\)/ { cpu += $2 }
    /System time \(seconds\)/ { cpu += $2 }
    END { printf "%.2f %d %.2f\n", wall, rss, cpu }' "$1"
}

timed() { # what run command…
  local what=$1 run=$2 st=0; shift 2
  /usr/bin/time -v -o "$work/$what.$run.time" "$@" > "$work/$what.$run.out" 2> "$work/$what.$run.err" || st=$?
  # 1: some input unreadable (the synthetic homes plant none); anything else fails
  echo "$what $run $(parse_time "$work/$what.$run.time") $st" >> "$results"
  if [ "$st" -gt 1 ]; then echo "ledger.sh: $what run $run exited $st" >&2; tail -n 5 "$work/$what.$run.err" >&2; exit 1; fi
}

for run in $(seq 1 "$RUNS"); do
  copy="$work/home"
  rm -rf "$copy" "$work/L.duckdb" "$work/L.duckdb.lock" "$work/out.parquet" "$work/t"
  cp -a "$HOME_DIR" "$copy"
  timed load "$run" "$NANOLOAD" "$copy" "$work/out.parquet" --tables "$work/t"
  timed first "$run" "$NANOLOAD" sync "$copy" "$work/L.duckdb"
  timed unchanged "$run" "$NANOLOAD" sync "$copy" "$work/L.duckdb"
  # the largest session file gains a turn
  session=$(find "$copy" -path '*/sessions/*' -name '*.jsonl' -printf '%s %p\n' | sort -n | tail -n 1 | cut -d' ' -f2-)
  printf '%s\n%s\n' \
    '{"role": "user", "content": "one more question", "timestamp": "2026-11-30T10:00:00.000000"}' \
    '{"role": "assistant", "content": "one more answer", "timestamp": "2026-11-30T10:00:05.000000"}' >> "$session"
  timed grown "$run" "$NANOLOAD" sync "$copy" "$work/L.duckdb"
  echo "ledger.sh: run $run done ($(tail -n 4 "$results" | awk '{printf "%s %ss  ", $1, $3}'))" >&2
done

"$PY" - "$work/L.duckdb" "$work/size" <<'PY' > "$work/size.txt"
import os, sys, duckdb
ledger, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
con = duckdb.connect()
con.execute(f"ATTACH '{ledger}' AS l (READ_ONLY)")
total = 0
for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE database_name = 'l' ORDER BY 1").fetchall():
    p = os.path.join(out, t + ".parquet")
    con.execute(f"COPY l.{t} TO '{p}' (FORMAT parquet, COMPRESSION zstd)")
    total += os.path.getsize(p)
print(os.path.getsize(ledger), total)
PY

input_bytes=$(du -sb "$HOME_DIR" | cut -f1)
"$PY" - "$results" "$input_bytes" "$(cat "$work/size.txt")" <<'PY'
import statistics, sys
path, input_bytes, size = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
ledger, parquet = int(size[0]), int(size[1])
data = {}
for line in open(path):
    what, run, wall, rss, cpu, st = line.split()
    data.setdefault(what, []).append((float(wall), int(rss), float(cpu)))
med = {w: (statistics.median(x[0] for x in v), statistics.median(x[1] for x in v) / 1024,
           statistics.median(x[2] for x in v), len(v)) for w, v in data.items()}
print(f"input: `du -sb HOME` = {input_bytes} bytes ({input_bytes / 1e6:.1f} MB)\n")
print("| step | runs | median wall (s) | median CPU (s) | peak RSS (MiB) | wall / load | CPU / load |")
print("|---|---|---|---|---|---|---|")
lw, _, lc, _ = med["load"]
for w in ("load", "first", "unchanged", "grown"):
    wall, rss, cpu, n = med[w]
    print(f"| {w} | {n} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {wall / lw:.3f} | {cpu / lc:.3f} |")
print()
print(f"ledger file: {ledger} bytes; its tables as zstd Parquet: {parquet} bytes; ratio {ledger / parquet:.2f}")
PY
