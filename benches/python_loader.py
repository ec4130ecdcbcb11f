#!/usr/bin/env python3
"""The Python peer of the benchmark harness (issue 12): a plain loader.

    python3 benches/python_loader.py HOME OUT.parquet

Reads the nanobot stores of HOME the way one would write it by hand with
json, sqlite3 and pyarrow, and writes the same row kinds as nanoload:

* session JSONL (`.nanobot*/sessions/<ns>/*.jsonl`) or, where a namespace has
  one, `sessions.sqlite3` (read from a private copy of the db and its
  -wal/-shm; nothing is written inside HOME): a `system` row per session
  (session start), then per message `user` (`system` when hidden history),
  `thinking` (reasoning_content), one `tool_use` per tool call, `assistant`
  (when it has text or no tool call), `tool_result`;
* WebUI transcripts (`webui/*.jsonl` and their `.segments/NNNNNN.jsonl`):
  user, assistant (`message` without kind, non-empty `stream_end`),
  tool_use/tool_result from `tool_events`, other records `system`;
* `llm_usage.sqlite3` → a second table, OUT's name with `.llm_calls.parquet`.

No dedup, no time-zone derivation, no ordering beyond file order: session
rows carry their naive local time, WebUI rows their UTC time. Written the
natural way (a list of row dicts, `pa.Table.from_pylist`, zstd Parquet),
neither tuned nor slowed down. Needs pyarrow (compare.sh's venv has it).
"""
from __future__ import annotations

import datetime as dt
import glob
import json
import os
import shutil
import sqlite3
import sys
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq

EVENTS = pa.schema([
    ("agent", pa.string()),
    ("instance", pa.string()),
    ("namespace", pa.string()),
    ("session_id", pa.string()),
    ("seq", pa.int64()),
    ("timestamp_local", pa.timestamp("us")),
    ("timestamp_utc", pa.timestamp("us", tz="UTC")),
    ("turn_type", pa.string()),
    ("tool_name", pa.string()),
    ("tool_use_id", pa.string()),
    ("text", pa.string()),
    ("source_kind", pa.string()),
    ("source_path", pa.string()),
    ("source_line", pa.int64()),
    ("native", pa.string()),
])

LLM_COLUMNS = ["id", "started_at_ms", "duration_ms", "provider", "model", "source", "stream",
               "finish_reason", "input_tokens", "output_tokens", "total_tokens", "cache_read_tokens",
               "cache_write_tokens", "reported_tokens", "estimated_tokens", "generation_ms",
               "measured_output_tokens", "ttft_ms", "timed_requests", "error_status_code", "error_kind"]
LLM = pa.schema([("instance", pa.string())]
                + [(c, pa.string() if c in ("provider", "model", "source", "finish_reason", "error_kind")
                    else pa.int64()) for c in LLM_COLUMNS]
                + [("started_at", pa.timestamp("ms", tz="UTC"))])

MESSAGE_KEYS = {"role", "content", "timestamp", "tool_calls", "reasoning_content", "tool_call_id", "name"}


def parse_local(value):
    if not isinstance(value, str):
        return None
    try:
        return dt.datetime.fromisoformat(value)
    except ValueError:
        return None


def content_text(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return "" if content is None else json.dumps(content, ensure_ascii=False)


def tool_text(name, arguments):
    """The command / path / url argument, else the arguments JSON."""
    try:
        args = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return arguments
    if isinstance(args, dict):
        for key in ("command", "path", "file_path", "url"):
            if isinstance(args.get(key), str):
                return args[key]
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


def native_of(record, known):
    extra = {k: v for k, v in record.items() if k not in known}
    return json.dumps(extra, ensure_ascii=False, sort_keys=True) if extra else None


class Loader:
    def __init__(self, home):
        self.home = home
        self.rows = []
        self.calls = []

    def add(self, **row):
        self.rows.append(row)

    # ------------------------------------------------------------- sessions
    def session_start(self, base, header):
        key = header.get("key")
        channel, _, chat = (key or "").partition(":")
        text = f"session start: key={key} channel={channel} chat={chat}"
        meta = header.get("metadata") or {}
        if isinstance(meta, dict) and meta.get("last_channel"):
            text += f" last_channel={meta['last_channel']}"
        text += f" created_at={header.get('created_at')} updated_at={header.get('updated_at')}"
        self.add(**base, session_id=key, seq=None, timestamp_local=parse_local(header.get("created_at")),
                 timestamp_utc=None, turn_type="system", tool_name=None, tool_use_id=None, text=text,
                 source_line=1, native=json.dumps(header, ensure_ascii=False, sort_keys=True))

    def message(self, base, key, seq, line, msg):
        ts = parse_local(msg.get("timestamp"))
        common = dict(base, session_id=key, seq=seq, timestamp_local=ts, timestamp_utc=None, source_line=line)
        role = msg.get("role")
        native = native_of(msg, MESSAGE_KEYS)
        if role == "user":
            kind = "system" if msg.get("_hidden_history") else "user"
            self.add(**common, turn_type=kind, tool_name=None, tool_use_id=None,
                     text=content_text(msg.get("content")), native=native)
        elif role == "assistant":
            if msg.get("reasoning_content"):
                self.add(**common, turn_type="thinking", tool_name=None, tool_use_id=None,
                         text=msg["reasoning_content"], native=None)
            calls = msg.get("tool_calls") or []
            for call in calls:
                fn = call.get("function") or {}
                self.add(**common, turn_type="tool_use", tool_name=fn.get("name"), tool_use_id=call.get("id"),
                         text=tool_text(fn.get("name"), fn.get("arguments")),
                         native=json.dumps({"arguments": fn.get("arguments"), "type": call.get("type")},
                                           ensure_ascii=False, sort_keys=True))
            text = content_text(msg.get("content"))
            if text or not calls:
                self.add(**common, turn_type="assistant", tool_name=None, tool_use_id=None, text=text,
                         native=native)
        elif role == "tool":
            self.add(**common, turn_type="tool_result", tool_name=msg.get("name"),
                     tool_use_id=msg.get("tool_call_id"), text=content_text(msg.get("content")), native=native)
        else:
            self.add(**common, turn_type="system", tool_name=None, tool_use_id=None,
                     text=json.dumps(msg, ensure_ascii=False), native=None)

    def session_jsonl(self, instance, namespace, path):
        base = dict(agent="nanobot", instance=instance, namespace=namespace, source_kind="nanobot.session_jsonl",
                    source_path=os.path.relpath(path, self.home))
        key = None
        seq = 0
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError:
                    print(f"python_loader: {path}:{line_no}: unparseable line", file=sys.stderr)
                    continue
                if not isinstance(record, dict):
                    continue
                if record.get("_type") == "metadata":
                    key = record.get("key")
                    self.session_start(base, record)
                elif record.get("_type") == "provider_state":
                    continue
                else:
                    self.message(base, key, seq, line_no, record)
                    seq += 1

    def session_db(self, instance, namespace, path):
        base = dict(agent="nanobot", instance=instance, namespace=namespace, source_kind="nanobot.session_db",
                    source_path=os.path.relpath(path, self.home))
        with private_copy(path) as db:
            for key, created, updated, metadata in db.execute(
                    "SELECT key, created_at, updated_at, metadata FROM sessions ORDER BY key").fetchall():
                header = {"key": key, "created_at": created, "updated_at": updated, "metadata": json.loads(metadata)}
                self.session_start(base, header)
                for position, record in db.execute(
                        "SELECT position, record FROM messages WHERE session_key=? ORDER BY position", (key,)):
                    try:
                        msg = json.loads(record)
                    except ValueError:
                        print(f"python_loader: {path}: {key} position {position}: unparseable record",
                              file=sys.stderr)
                        continue
                    self.message(base, key, position, position, msg)

    # ------------------------------------------------------------- WebUI
    def webui(self, instance, path):
        base = dict(agent="nanobot", instance=instance, namespace=None, source_kind="nanobot.webui_transcript",
                    source_path=os.path.relpath(path, self.home), seq=None, timestamp_local=None)
        with open(path, encoding="utf-8") as f:
            for line_no, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError:
                    print(f"python_loader: {path}:{line_no}: unparseable line", file=sys.stderr)
                    continue
                event = rec.get("event")
                ms = rec.get("created_at_ms")
                ts = dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc) if isinstance(ms, (int, float)) else None
                chat = rec.get("chat_id")
                common = dict(base, session_id=f"websocket:{chat}" if chat else None, timestamp_utc=ts,
                              source_line=line_no)
                native = json.dumps({k: rec[k] for k in ("turn_id", "turn_phase", "turn_seq", "usage")
                                     if k in rec}, ensure_ascii=False, sort_keys=True)
                if event == "user":
                    self.add(**common, turn_type="user", tool_name=None, tool_use_id=None, text=rec.get("text"),
                             native=native)
                elif event in ("delta", "reasoning_delta", "turn_end", "reasoning_end"):
                    continue
                elif event == "stream_end":
                    if rec.get("text") and not rec.get("merge_next"):
                        self.add(**common, turn_type="assistant", tool_name=None, tool_use_id=None,
                                 text=rec["text"], native=native)
                elif event == "message":
                    if not rec.get("kind") and rec.get("text"):
                        self.add(**common, turn_type="assistant", tool_name=None, tool_use_id=None,
                                 text=rec["text"], native=native)
                    for te in rec.get("tool_events") or []:
                        if te.get("phase") == "start":
                            self.add(**common, turn_type="tool_use", tool_name=te.get("name"),
                                     tool_use_id=te.get("call_id"), text=tool_text(te.get("name"), te.get("arguments")),
                                     native=native)
                        else:
                            result = te.get("result") if te.get("phase") == "end" else te.get("error")
                            self.add(**common, turn_type="tool_result", tool_name=te.get("name"),
                                     tool_use_id=te.get("call_id"),
                                     text=result if isinstance(result, str) else json.dumps(result, ensure_ascii=False),
                                     native=native)
                else:
                    self.add(**common, turn_type="system", tool_name=None, tool_use_id=None,
                             text=f"webui {event}", native=json.dumps(rec, ensure_ascii=False, sort_keys=True))

    # ------------------------------------------------------------- llm usage
    def llm_usage(self, instance, path):
        with private_copy(path) as db:
            db.row_factory = sqlite3.Row
            for row in db.execute("SELECT * FROM llm_calls ORDER BY id"):
                call = {c: row[c] for c in LLM_COLUMNS}
                call["instance"] = instance
                call["started_at"] = dt.datetime.fromtimestamp(row["started_at_ms"] / 1000, dt.timezone.utc)
                self.calls.append(call)

    def run(self):
        for root in sorted(glob.glob(os.path.join(self.home, ".nanobot*"))):
            if not os.path.isdir(root):
                continue
            instance = os.path.basename(root)
            for nsdir in sorted(glob.glob(os.path.join(root, "sessions", "*", ""))):
                namespace = os.path.basename(os.path.dirname(nsdir))
                db = os.path.join(nsdir, "sessions.sqlite3")
                if os.path.exists(db):
                    self.session_db(instance, namespace, db)
                else:
                    for path in sorted(glob.glob(os.path.join(nsdir, "*.jsonl"))):
                        self.session_jsonl(instance, namespace, path)
            for path in sorted(glob.glob(os.path.join(root, "webui", "*.jsonl"))):
                stem = path[:-len(".jsonl")]
                for segment in sorted(glob.glob(os.path.join(stem + ".segments", "[0-9]*.jsonl"))):
                    self.webui(instance, segment)
                self.webui(instance, path)
            usage = os.path.join(root, "llm_usage.sqlite3")
            if os.path.exists(usage):
                self.llm_usage(instance, usage)


class private_copy:
    """Open a copy of a SQLite db with its -wal/-shm (opening the user's file would create files in HOME)."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix="python_loader.")
        dst = os.path.join(self.dir, "db.sqlite3")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(self.path + suffix):
                shutil.copyfile(self.path + suffix, dst + suffix)
        self.db = sqlite3.connect(dst)
        return self.db

    def __exit__(self, *exc):
        self.db.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    home, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    loader = Loader(home)
    loader.run()
    pq.write_table(pa.Table.from_pylist(loader.rows, schema=EVENTS), out, compression="zstd")
    calls_out = (out[:-len(".parquet")] if out.endswith(".parquet") else out) + ".llm_calls.parquet"
    pq.write_table(pa.Table.from_pylist(loader.calls, schema=LLM), calls_out, compression="zstd")
    print(f"python_loader: {len(loader.rows)} events, {len(loader.calls)} llm calls", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
