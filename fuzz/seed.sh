#!/usr/bin/env bash
# Write the committed seed corpus, fuzz/corpus/<target>/, from the fixtures:
#   fuzz/seed.sh
# Run it again when the fixtures gain a shape worth seeding, and commit the
# result; CI fuzzes from the committed files (fuzz/run.sh) and never writes
# them. Each seed is named by the SHA-1 of its bytes (as libFuzzer names
# its own), so a line that several files hold is one seed; a target keeps at
# most 60 seeds, chosen by name, so the corpus stays small.
set -euo pipefail
cd "$(dirname "$0")"
root=..
rm -rf corpus
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

add() { # target < bytes: one seed
  local t=$1 f
  mkdir -p "$staging/$t"
  f=$(mktemp "$staging/$t/.new.XXXXXX")
  cat > "$f"
  mv "$f" "$staging/$t/$(sha1sum < "$f" | cut -c1-40)"
}
lines() { # target files…: every line of the files, one seed each
  local t=$1; shift
  for f in "$@"; do
    while IFS= read -r line || [ -n "$line" ]; do printf '%s' "$line" | add "$t"; done < "$f"
  done
}
lines jsonl_line "$root"/fixtures/nanobot/home-a/.nanobot/sessions/*/*.jsonl "$root"/fixtures/bad/*/.nanobot/sessions/*/*.jsonl
lines session_record "$root"/fixtures/nanobot/home-a/.nanobot*/sessions/*/*.jsonl "$root"/fixtures/bad/*/.nanobot/sessions/*/*.jsonl
lines webui_record "$root"/fixtures/nanobot/home-a/.nanobot/webui/*.jsonl "$root"/fixtures/nanobot/home-a/.nanobot/webui/*.segments/*.jsonl
add cli_history < "$root"/fixtures/nanobot/home-a/.nanobot/history/cli_history
add cli_history < "$root"/fixtures/bad/cli_history_bad_timestamp/.nanobot/history/cli_history
# nanoclaw's message contents, each after a selector byte (the kind, and
# whether secrets are redacted: fuzz_targets/nanoclaw_content.rs)
printf '\x03{"type":"question_response","questionId":"q","selectedOption":"ghp_x"}' | add nanoclaw_content
printf '\x81{"type":"ask_question","questionId":"q","title":"t","options":[{"label":"a","value":"ghp_y"}]}' | add nanoclaw_content
python3 - "$root/fixtures/nanoclaw" <<'PY' | while IFS= read -r -d '' c; do printf '%s' "$c" | add nanoclaw_content; done
import glob, sqlite3, sys
seen = []
for db in sorted(glob.glob(sys.argv[1] + "/home-*/data/v2-sessions/*/*/*.db")):
    con = sqlite3.connect(f"file:{db}?mode=ro&immutable=1", uri=True)
    for table in ("messages_in", "messages_out"):
        try:
            rows = con.execute(f"SELECT kind, content FROM {table} ORDER BY rowid LIMIT 20").fetchall()
        except sqlite3.Error:
            continue
        kinds = ["chat", "chat-sdk", "task", "system", "task_log", "webhook"]
        for kind, content in rows:
            if isinstance(content, str) and kind in kinds:
                seen.append(chr(kinds.index(kind)) + content)
for s in seen:
    sys.stdout.write(s + "\0")
PY
# the scanner: one pasted secret of each family, and texts without one
python3 - "$root/tests/secrets/corpus.json" <<'PY' | while IFS= read -r -d '' c; do printf '%s' "$c" | add secrets; done
import json, sys
c = json.load(open(sys.argv[1]))
first = {}
for p in c["positives"]:
    first.setdefault(p["family"], p["text"])
for text in list(first.values())[:40] + [n["text"] for n in c["negatives"][:20]]:
    sys.stdout.write(text + "\0")
PY
for d in "$staging"/*/; do
  t=$(basename "$d")
  mkdir -p "corpus/$t"
  ls "$d" | sort | head -n 60 | while read -r f; do cp "$d/$f" "corpus/$t/$f"; done
done
for t in corpus/*/; do echo "$(basename "$t"): $(ls "$t" | wc -l) seeds, $(du -sk "$t" | cut -f1) KiB"; done
