#!/usr/bin/env bash
# A HOME as every reader's SOURCE, answered from the ledger nanoload keeps
# for it (CI does not run this):
#   benches/kept_ledger.sh NANOLOAD HOME LABEL
#
# With a fresh XDG_CACHE_HOME, one run each, wall/CPU/peak RSS from
# /usr/bin/time: a full load with --tables (the peer every figure is a
# ratio of), `usage HOME` three times (the first syncs and exports the
# kept ledger), `report HOME` and `sql HOME "select count(*) from
# events"` (second calls), `usage` of a hard-linked copy of HOME before
# and after one session file gained a line (a call after a change),
# `usage HOME --no-keep`, and the cache's size. HOME is only read; the
# copy and the cache are in a temp dir, removed after. Results go to
# BENCHMARKS.md by hand ("The export staged as a load stages").
set -u
B=$1; H=$2; L=$3
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME=$W/cache
t() {
    local name=$1; shift
    /usr/bin/time -f "$L $name wall=%e user=%U sys=%S rss=%MKB" "$@" > /dev/null 2>> "$W/err" || true
    tail -1 "$W/err"
}
t load "$B" "$H" "$W/out.parquet" --tables "$W/tables" --progress never
t usage-first "$B" usage "$H"
t usage-second "$B" usage "$H"
t usage-third "$B" usage "$H"
t report-second "$B" report "$H" "$W/r.html"
t sql-second "$B" sql "$H" "select count(*) from events"
# one session gains a line: a copy of HOME whose files are hard links but
# the changed one's
C=$W/home
cp -al "$H" "$C"
F=$(find "$C" -path '*sessions*' -name '*.jsonl' | sort | head -1)
cp "$F" "$F.tmp" && rm -f "$F" && mv "$F.tmp" "$F"
tail -1 "$F" >> "$F"
t usage-copy-first "$B" usage "$C"
tail -1 "$F" >> "$F"
t usage-after-a-turn "$B" usage "$C"
t usage-no-keep "$B" usage "$H" --no-keep
du -sh "$XDG_CACHE_HOME" | sed "s/^/$L cache size /"
