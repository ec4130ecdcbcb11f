"""What a generated home holds (nanobot-free; ``generate.py`` writes it into
``DIR/scale.json`` after a ``scale`` generation).

    python -m harness.scale_stats HOME      # from tests/realwriter

Counted from the files as nanobot left them: session files, WebUI
transcripts (active files and ``.segments/`` parts), ``llm_calls`` rows,
run records (cron and local triggers), and tool results -- the ``role:
"tool"`` session messages and the WebUI ``tool_events`` results -- by the
UTF-8 size of the result text.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

KB = 1024


def _text_size(content: Any) -> int:
    if isinstance(content, str):
        return len(content.encode("utf-8"))
    if isinstance(content, list):
        return sum(_text_size(block.get("text")) for block in content if isinstance(block, dict))
    return 0


def _sizes_summary(sizes: list[int]) -> dict[str, Any]:
    big = sorted(s for s in sizes if s >= 50 * KB)
    return {
        "count": len(sizes),
        "at_least_50_KiB": len(big),
        "at_least_100_KiB": sum(1 for s in big if s >= 100 * KB),
        "at_least_150_KiB": sum(1 for s in big if s >= 150 * KB),
        "largest_bytes": max(sizes, default=0),
        "median_of_big_bytes": big[len(big) // 2] if big else 0,
    }


def collect(home: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    du = subprocess.run(["du", "-sb", str(home)], capture_output=True, text=True, check=False)
    out["du_sb"] = int(du.stdout.split()[0]) if du.returncode == 0 else None
    files = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]
    out["files"] = len(files)
    by_area: Counter[str] = Counter()
    for p in files:
        rel = p.relative_to(home).parts
        area = "/".join(rel[:2]) if len(rel) > 2 else "/".join(rel)
        if "workspace" in rel:
            i = rel.index("workspace")
            area = "/".join(rel[: i + 2]) if len(rel) > i + 2 else "/".join(rel[: i + 1])
        by_area[area] += p.stat().st_size
    out["bytes_by_area"] = dict(sorted(by_area.items(), key=lambda kv: -kv[1])[:15])

    sessions = [p for p in files if p.suffix == ".jsonl" and "sessions" in p.relative_to(home).parts]
    transcripts = [p for p in files if p.suffix == ".jsonl" and p.parent.name == "webui"]
    segments = [p for p in files if p.suffix == ".jsonl" and p.parent.name.endswith(".segments")]
    out["session_files"] = len(sessions)
    out["session_bytes"] = sum(p.stat().st_size for p in sessions)
    out["largest_session_bytes"] = max((p.stat().st_size for p in sessions), default=0)
    out["webui_transcripts"] = len(transcripts)
    out["webui_transcript_segments"] = len(segments)
    out["webui_transcript_bytes"] = sum(p.stat().st_size for p in transcripts + segments)

    session_results: list[int] = []
    references = 0
    messages = 0
    roles: Counter[str] = Counter()
    for p in sessions:
        with open(p, encoding="utf-8") as handle:
            for line in handle:
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if record.get("_type"):
                    continue
                messages += 1
                roles[str(record.get("role"))] += 1
                if record.get("role") == "tool":
                    session_results.append(_text_size(record.get("content")))
                    content = record.get("content")
                    if isinstance(content, str) and content.startswith("[tool output persisted]"):
                        references += 1
    out["session_messages"] = messages
    out["session_roles"] = dict(roles)
    out["session_tool_results"] = _sizes_summary(session_results)
    #: results offloaded to workspace/.nanobot/tool-results (reference + preview in the session)
    out["session_tool_result_references"] = references

    transcript_results: list[int] = []
    for p in transcripts + segments:
        with open(p, encoding="utf-8") as handle:
            for line in handle:
                if '"tool_events"' not in line:
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    continue
                for event in record.get("tool_events") or []:
                    if isinstance(event, dict) and event.get("phase") in ("end", "error"):
                        transcript_results.append(_text_size(event.get("result")))
    out["webui_tool_results"] = _sizes_summary(transcript_results)

    offloaded = [p for p in files if "tool-results" in p.relative_to(home).parts]
    out["offloaded_tool_result_files"] = len(offloaded)

    rows: dict[str, Any] = {}
    for db in sorted(home.glob(".nanobot*/llm_usage.sqlite3")):
        # immutable: no -wal/-shm left beside it (nanobot's store is in WAL mode)
        con = sqlite3.connect(f"file:{db}?immutable=1", uri=True)
        try:
            rows[str(db.relative_to(home))] = {
                "rows": con.execute("SELECT count(*) FROM llm_calls").fetchone()[0],
                "by_source": dict(con.execute("SELECT source, count(*) FROM llm_calls GROUP BY source").fetchall()),
            }
        finally:
            con.close()
    out["llm_usage"] = rows
    out["cron_run_records"] = sum(1 for p in files if p.parent.name == "runs" and p.parent.parent.name == "cron")
    out["trigger_run_records"] = sum(1 for p in files if p.parent.name == "runs" and p.parent.parent.name == "triggers")
    out["cli_history_bytes"] = sum(p.stat().st_size for p in files if p.name == "cli_history")
    return out


if __name__ == "__main__":
    print(json.dumps(collect(Path(sys.argv[1])), indent=2, ensure_ascii=False))
