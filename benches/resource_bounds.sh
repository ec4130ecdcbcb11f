#!/usr/bin/env bash
# Peak memory and speed on large generated homes (CI does not run this):
#   benches/resource_bounds.sh [path to nanoload, default target/debug/nanoload]
#
#   many-files  50 000 small session JSONL files (one namespace, 4 messages each)
#   big-file    one 2 GB session JSONL (≈ 1.3 M messages)
#
# Peak RSS comes from /usr/bin/time -v (the bound: 512 MB). Speed is
# reported as a ratio against a peer in the same run: the DuckDB CLI
# (`pip install duckdb-cli`) converting the same JSONL to Parquet with
# read_json, so machine noise cancels. Results go to BENCHMARKS.md by hand.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-target/debug/nanoload}"
work="${WORK:-$(mktemp -d)}"
echo "work dir: $work"

python3 - "$work" <<'PY'
import base64, os, sys, json
work = sys.argv[1]
def b64(k): return base64.urlsafe_b64encode(k.encode()).decode().rstrip("=")
def session(key, n, pad=""):
    yield json.dumps({"_type": "metadata", "key": key, "created_at": "2026-10-01T08:00:00",
                      "updated_at": "2026-10-01T09:00:00", "metadata": {}, "last_archived": 0}) + "\n"
    for i in range(n):
        ts = "2026-10-01T08:%02d:%02d.%06d" % ((i // 60) % 60, i % 60, i % 1000000)
        role = "user" if i % 2 == 0 else "assistant"
        yield json.dumps({"role": role, "content": f"message {i} {pad}", "timestamp": ts}) + "\n"
many = os.path.join(work, "many-files/.nanobot/sessions/0123456789abcdef0123456789abcdef")
if not os.path.exists(many):
    os.makedirs(many)
    for s in range(50_000):
        key = f"telegram:{s}"
        with open(os.path.join(many, b64(key) + ".jsonl"), "w") as f:
            f.writelines(session(key, 4))
big = os.path.join(work, "big-file/.nanobot/sessions/0123456789abcdef0123456789abcdef")
if not os.path.exists(big):
    os.makedirs(big)
    pad = "x" * 1500
    with open(os.path.join(big, b64("cli:direct") + ".jsonl"), "w") as f:
        size, i = 0, 0
        for line in session("cli:direct", 10**9, pad):
            f.write(line); size += len(line)
            if size >= 2 * 1024**3: break
PY

measure() { # name, command…
  local name=$1; shift
  /usr/bin/time -v "$@" > /dev/null 2> "$work/$name.time" || true
  local rss secs
  rss=$(awk -F: '/Maximum resident set size/ {gsub(/ /,"",$2); print int($2/1024)}' "$work/$name.time")
  secs=$(awk '/Elapsed \(wall clock\)/ {print $NF}' "$work/$name.time")
  echo "$name: peak RSS ${rss} MB, wall ${secs}"
}
for home in many-files big-file; do
  measure "nanoload-$home" "$BIN" "$work/$home" "$work/$home.parquet" --quiet
done
# The peer: the DuckDB CLI (release build) turning the same JSONL into
# zstd Parquet, no sort, no dedup. It gets 1 GB: at nanoload's 256 MB it
# runs out of memory on this file (measured; BENCHMARKS.md).
if command -v duckdb >/dev/null; then
  cols="{_type: 'VARCHAR', key: 'VARCHAR', role: 'VARCHAR', content: 'VARCHAR', timestamp: 'VARCHAR'}"
  f=$(ls "$work"/big-file/.nanobot/sessions/*/*.jsonl)
  measure "duckdb-cli-big-file" duckdb -c "SET memory_limit='1GB'; SET temp_directory='$work/peer.tmp'; COPY (SELECT * FROM read_json('$f', format='newline_delimited', ignore_errors=true, columns=$cols)) TO '$work/peer.parquet' (FORMAT parquet, COMPRESSION zstd)"
  measure "duckdb-cli-many-files" duckdb -c "SET memory_limit='1GB'; COPY (SELECT * FROM read_json('$work/many-files/.nanobot/sessions/*/*.jsonl', format='newline_delimited', ignore_errors=true, columns=$cols)) TO '$work/peer-many.parquet' (FORMAT parquet, COMPRESSION zstd)"
fi
