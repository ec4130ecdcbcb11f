#!/usr/bin/env bash
# nanoload against two peers on one home (issue 12; CI does not run this):
#
#   benches/compare.sh HOME [RUNS=5]
#
#   nanoload  ${NANOLOAD:-target/release/nanoload} HOME out.parquet --summary-json F,
#             TMPDIR a fresh dir (its peak size is polled with du -sb every 0.2 s);
#             F's timings split its wall and CPU time into extraction (discover,
#             extract, stage), the SQL steps (load, kinds, V001…) and the write
#   schema    DuckDB given the schema (issue 30: the reference peer): Python duckdb,
#             SET threads=2, read_json of the same files with columns={…} naming
#             the session-record fields (_type, key, role, content, timestamp,
#             tool_calls JSON, tool_call_id, name, reasoning_content, metadata JSON),
#             filename=true, ignore_errors=true, COPY to zstd Parquet
#   floor     benches/criterion/floor.rs (${FLOOR:-built with cargo build --release into
#             benches/criterion/target}): the least work of any loader of the same
#             output, with nanoload's scanner: every session line parsed (borrowed),
#             its strings scanned and redacted, zstd-1 Parquet, 2 threads; no dedup,
#             no time zones, no sessions, no other store (issue 30)
#   floorweb  the floor with --webui-parsed: the WebUI transcripts' lines parsed too
#             (not scanned, not written): the least nanoload itself must do, which
#             reads them for the rows only they hold
#   duckdb    Python duckdb, SET threads=2, default memory limit:
#             COPY (SELECT * FROM read_json('HOME/.nanobot*/sessions/*/*.jsonl',
#               format='newline_delimited', union_by_name=true)) TO 'x.parquet'
#               (FORMAT parquet, COMPRESSION zstd)
#   python    benches/python_loader.py HOME out.parquet (json + sqlite3 + pyarrow, no dedup)
#
# Each run does them all, in an order that rotates run by run (so a load
# that drifts hits each the same), every command under /usr/bin/time -v
# (wall clock, CPU user+system, peak RSS). Prints the input size (du -sb HOME), the medians
# and the ratios against the DuckDB peers and Python as Markdown
# for BENCHMARKS.md; per-run figures go to stderr. Exits non-zero if any run
# fails (any non-zero exit status, nanoload's 1 included).
#
# The peers run in a venv cached at
#   ${XDG_CACHE_HOME:-~/.cache}/nanoload/bench-venv-duckdb<V>-pyarrow<V>
# made once with pip (PyPI) from the pins below. DUCKDB_VERSION defaults to
# 2.0.1: duckdb 2.0.0 reserves 32 MiB per file under union_by_name and fails
# with "Out of Memory" on 601 files or more at its default memory limit on a
# 23 GiB machine (the 200 MB home has 1 200; BENCHMARKS.md). Set
# DUCKDB_VERSION=2.0.0 to run it anyway.
#
# Environment: NANOLOAD (binary), FLOOR (binary), TOOLS (default "nanoload schema floor floorweb duckdb python"; a
# subset runs only those, e.g. TOOLS="duckdb python" to calibrate the peers
# before a release build exists), DUCKDB_VERSION, PYARROW_VERSION, KEEP=1
# keeps the work dir. Never writes inside HOME. Runs as root on a fresh
# Debian with python3 (installs python3-venv and time with apt-get if absent).
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,4p' "$0" >&2
  exit 2
fi
HOME_DIR=$(realpath "$1")   # before the cd: HOME may be relative to the caller's directory
if [ -n "${NANOLOAD:-}" ] && [ -e "$NANOLOAD" ]; then NANOLOAD=$(realpath "$NANOLOAD"); fi
cd "$(dirname "$0")/.."
RUNS=${2:-5}
NANOLOAD=${NANOLOAD:-target/release/nanoload}
TOOLS=${TOOLS:-nanoload schema floor floorweb duckdb python}
DUCKDB_VERSION=${DUCKDB_VERSION:-2.0.1}
PYARROW_VERSION=${PYARROW_VERSION:-26.0.1}
[ -d "$HOME_DIR" ] || { echo "compare: $HOME_DIR is not a directory" >&2; exit 2; }
case " $TOOLS " in *" nanoload "*) [ -x "$NANOLOAD" ] || { echo "compare: $NANOLOAD not found (set NANOLOAD)" >&2; exit 2; } ;; esac
NANOLOAD=$(realpath "$NANOLOAD" 2>/dev/null || echo "$NANOLOAD")
case " $TOOLS " in *" floor "*|*" floorweb "*)
  if [ -z "${FLOOR:-}" ]; then
    echo "compare: building the floor (benches/criterion, release)" >&2
    cargo build --release --locked --quiet --manifest-path benches/criterion/Cargo.toml --bin floor >&2
    FLOOR=$(realpath "${CARGO_TARGET_DIR:-benches/criterion/target}")/release/floor
  fi
  [ -x "$FLOOR" ] || { echo "compare: $FLOOR not found (set FLOOR)" >&2; exit 2; }
  FLOOR=$(realpath "$FLOOR") ;;
esac

# ---- tools: /usr/bin/time, the venv
apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "compare: apt-get install $*" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
  else
    echo "compare: please install $*" >&2; exit 2
  fi
}
[ -x /usr/bin/time ] || apt_install time
VENV="${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/bench-venv-duckdb${DUCKDB_VERSION}-pyarrow${PYARROW_VERSION}"
if [ ! -f "$VENV/.installed" ]; then
  rm -rf "$VENV"
  mkdir -p "$(dirname "$VENV")"
  if ! python3 -m venv "$VENV" >&2; then
    rm -rf "$VENV"
    apt_install python3-venv
    python3 -m venv "$VENV" >&2
  fi
  "$VENV/bin/pip" install -q --disable-pip-version-check --only-binary=:all: \
    "duckdb==$DUCKDB_VERSION" "pyarrow==$PYARROW_VERSION" >&2
  "$VENV/bin/python" -c 'import duckdb, pyarrow' >&2
  touch "$VENV/.installed"
fi
PY="$VENV/bin/python"

work=$(mktemp -d "${TMPDIR:-/tmp}/nanoload-compare.XXXXXX")
[ "${KEEP:-}" = 1 ] || trap 'rm -rf "$work"' EXIT
echo "compare: work dir $work, home $HOME_DIR, $RUNS runs, tools: $TOOLS" >&2

cat > "$work/duckdb_peer.py" <<'PY'
import sys, duckdb
home, out = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute("SET threads=2")
con.execute(f"COPY (SELECT * FROM read_json('{home}/.nanobot*/sessions/*/*.jsonl', "
            f"format='newline_delimited', union_by_name=true)) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
PY

cat > "$work/schema_peer.py" <<'PY'
import sys, duckdb
home, out = sys.argv[1], sys.argv[2]
con = duckdb.connect()
con.execute("SET threads=2")
columns = ("{'_type': 'VARCHAR', 'key': 'VARCHAR', 'role': 'VARCHAR', 'content': 'VARCHAR', "
           "'timestamp': 'VARCHAR', 'tool_calls': 'JSON', 'tool_call_id': 'VARCHAR', 'name': 'VARCHAR', "
           "'reasoning_content': 'VARCHAR', 'metadata': 'JSON'}")
con.execute(f"COPY (SELECT * FROM read_json('{home}/.nanobot*/sessions/*/*.jsonl', "
            f"format='newline_delimited', columns={columns}, filename=true, ignore_errors=true)) "
            f"TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
PY

failed=0
results="$work/results.tsv"   # tool run wall_s rss_kb cpu_s tmp_bytes status
: > "$results"

timed() { # tool run log command… ; appends a line to results
  local tool=$1 run=$2 log=$3; shift 3
  local status=0
  /usr/bin/time -v -o "$log.time" "$@" > "$log.out" 2> "$log.err" || status=$?
  echo "$status"
}

parse_time() { # file -> "wall_s rss_kb cpu_s" (cpu: user + system)
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; wall = s }
    /Maximum resident set size/ { rss = $2 }
    /User time \(seconds\)/ { cpu += $2 }
    /System time \(seconds\)/ { cpu += $2 }
    END { printf "%.2f %d %.2f\n", wall, rss, cpu }' "$1"
}

run_nanoload() { # run
  local run=$1 log="$work/nanoload.$1" tmp="$work/tmp.$1" peak=0 status
  mkdir "$tmp"
  rm -f "$work/out.parquet"
  ( st=0
    TMPDIR="$tmp" /usr/bin/time -v -o "$log.time" "$NANOLOAD" "$HOME_DIR" "$work/out.parquet" \
      --summary-json "$log.json" > "$log.out" 2> "$log.err" || st=$?
    echo "$st" > "$log.status" ) &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    local b
    b=$(du -sb "$tmp" 2>/dev/null | cut -f1) || b=0
    [ "${b:-0}" -gt "$peak" ] && peak=$b
    sleep 0.2
  done
  wait "$pid" || true
  status=$(cat "$log.status")
  rm -rf "$tmp"
  echo "nanoload $run $(parse_time "$log.time") $peak $status" >> "$results"
}

run_duckdb() {
  local run=$1 log="$work/duckdb.$1" status
  rm -f "$work/duckdb.parquet"
  status=$(timed duckdb "$run" "$log" "$PY" "$work/duckdb_peer.py" "$HOME_DIR" "$work/duckdb.parquet")
  echo "duckdb $run $(parse_time "$log.time") 0 $status" >> "$results"
}

run_schema() {
  local run=$1 log="$work/schema.$1" status
  rm -f "$work/schema.parquet"
  status=$(timed schema "$run" "$log" "$PY" "$work/schema_peer.py" "$HOME_DIR" "$work/schema.parquet")
  echo "schema $run $(parse_time "$log.time") 0 $status" >> "$results"
}

run_floor() {
  local run=$1 log="$work/floor.$1" status
  rm -f "$work"/floor.parquet.*
  status=$(timed floor "$run" "$log" "$FLOOR" "$HOME_DIR" "$work/floor.parquet" --threads 2)
  echo "floor $run $(parse_time "$log.time") 0 $status" >> "$results"
}

run_floorweb() {
  local run=$1 log="$work/floorweb.$1" status
  rm -f "$work"/floorweb.parquet.*
  status=$(timed floorweb "$run" "$log" "$FLOOR" "$HOME_DIR" "$work/floorweb.parquet" --threads 2 --webui-parsed)
  echo "floorweb $run $(parse_time "$log.time") 0 $status" >> "$results"
}

run_python() {
  local run=$1 log="$work/python.$1" status
  rm -f "$work/python.parquet" "$work/python.llm_calls.parquet"
  status=$(timed python "$run" "$log" "$PY" benches/python_loader.py "$HOME_DIR" "$work/python.parquet")
  echo "python $run $(parse_time "$log.time") 0 $status" >> "$results"
}

if ! compgen -G "$HOME_DIR/.nanobot*/sessions/*/*.jsonl" > /dev/null; then
  echo "compare: no session JSONL under $HOME_DIR (sqlite layout?): the DuckDB peers do not apply, skipped" >&2
  TOOLS=$(echo " $TOOLS " | sed 's/ duckdb / /; s/ schema / /; s/ floor / /; s/ floorweb / /; s/^ *//; s/ *$//')
fi
read -r -a tools <<< "$TOOLS"
n=${#tools[@]}
for run in $(seq 1 "$RUNS"); do
  for k in $(seq 0 $((n - 1))); do
    tool=${tools[$(( (k + run - 1) % n ))]}
    "run_$tool" "$run"
    line=$(tail -n 1 "$results")
    echo "compare: run $run $line   (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    set -- $line
    if [ "$7" != 0 ]; then
      failed=1
      echo "compare: $tool run $run exited with status $7; stderr:" >&2
      tail -n 20 "$work/$tool.$run.err" >&2
    fi
  done
done

input_bytes=$(du -sb "$HOME_DIR" | cut -f1)
rows=""
if [ -f "$work/out.parquet" ]; then
  rows=$("$PY" -c 'import sys, pyarrow.parquet as pq; print(pq.ParquetFile(sys.argv[1]).metadata.num_rows)' "$work/out.parquet")
fi
"$PY" - "$results" "$input_bytes" "$RUNS" "$rows" "$(cut -d' ' -f1-3 /proc/loadavg)" "$work" <<'PY'
import glob, json, statistics, sys
path, input_bytes, runs, rows, load, work = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
data = {}
for line in open(path):
    tool, run, wall, rss, cpu, tmp, status = line.split()
    if status == "0":
        data.setdefault(tool, []).append((float(wall), int(rss), float(cpu), int(tmp)))
med = {t: {"wall": statistics.median(x[0] for x in v), "rss": statistics.median(x[1] for x in v) / 1024,
           "cpu": statistics.median(x[2] for x in v), "tmp": statistics.median(x[3] for x in v) / 2**20,
           "n": len(v)} for t, v in data.items()}
names = {"nanoload": "nanoload", "schema": "DuckDB, given the schema", "floor": "floor (parse, scan, zstd-1)",
         "floorweb": "floor + WebUI transcripts parsed",
         "duckdb": "DuckDB, auto-detect", "python": "Python loader"}
print(f"input: `du -sb HOME` = {input_bytes} bytes ({input_bytes / 1e6:.1f} MB)"
      + (f"; nanoload OUT rows: {rows}" if rows else "") + f"; load average at the end: {load}\n")
print("| tool | runs ok | median wall (s) | median CPU user+sys (s) | median peak RSS (MiB) | median peak temp (MiB) |")
print("|---|---|---|---|---|---|")
for t in ("nanoload", "schema", "floor", "floorweb", "duckdb", "python"):
    if t in med:
        m = med[t]
        tmp = f"{m['tmp']:.0f}" if t == "nanoload" else "—"
        print(f"| {names[t]} | {m['n']}/{runs} | {m['wall']:.2f} | {m['cpu']:.2f} | {m['rss']:.0f} | {tmp} |")
print()
print("| ratio | wall | CPU |")
print("|---|---|---|")
for a, b in (("nanoload", "schema"), ("nanoload", "duckdb"), ("nanoload", "python"),
             ("schema", "duckdb"), ("python", "schema"), ("floor", "schema"), ("floorweb", "schema"), ("nanoload", "floorweb")):
    if a in med and b in med and med[b]["wall"] > 0:
        print(f"| {names[a]} / {names[b]} | {med[a]['wall'] / med[b]['wall']:.2f} | "
              f"{med[a]['cpu'] / med[b]['cpu']:.2f} |")
# where nanoload's time went (its --summary-json of each run), against the
# whole run of DuckDB given the schema
def part(phase):  # load, the SQL steps and a retry's "load and sql, …" are the steps
    return ("extraction" if phase in ("discover", "extract", "stage")
            else "write" if phase == "write" else "SQL steps")
split = {k: ([], []) for k in ("extraction", "SQL steps", "write")}
for f in sorted(glob.glob(f"{work}/nanoload.*.json")):
    sums = {k: [0.0, 0.0] for k in split}
    for p in json.load(open(f))["timings"]["phases"]:
        sums[part(p["phase"])][0] += p["seconds"]
        sums[part(p["phase"])][1] += p["cpu_seconds"]
    for k, (w, c) in sums.items():
        split[k][0].append(w)
        split[k][1].append(c)
if split["write"][0]:
    peer = med.get("schema", {}).get("cpu")
    floor = med.get("floorweb", {}).get("cpu")
    print()
    print("| nanoload part | median wall (s) | median CPU (s) | CPU / DuckDB given the schema's run "
          "| CPU / the floor + WebUI's run |")
    print("|---|---|---|---|---|")
    for k, (w, c) in split.items():
        r = f"{statistics.median(c) / peer:.2f}" if peer else "—"
        f = f"{statistics.median(c) / floor:.2f}" if floor else "—"
        print(f"| {k} | {statistics.median(w):.2f} | {statistics.median(c):.2f} | {r} | {f} |")
PY
exit $failed
