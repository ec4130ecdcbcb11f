#!/usr/bin/env python3
"""Synthetic nanobot homes for the benchmark harness (issue 12).

    python3 benches/gen_home.py OUT_DIR --size-mb N --layout jsonl|sqlite --seed S
                                [--nanoclaw-sessions K] [--utc-offset-minutes M] [--message-scale F]

Writes a HOME directory (OUT_DIR, created; it must not exist or be empty)
shaped like one that nanobot-ai 0.3.5 leaves, about N MB (10^6 bytes) in all,
deterministic for a given seed (same Python and SQLite: identical bytes and
mtimes). Only the standard library is used.

What a home holds (formats: shared/nanobot-formats.md, and nanobot 0.3.5's
own code: session/manager.py `_save_unlocked`, webui/transcript.py,
llm_usage/store.py, agent/progress_hook.py, utils/progress_events.py,
utils/tool_hints.py):

* two instances, `.nanobot` (85 % of the sessions) and `.nanobot-work`, one
  workspace namespace each (`sessions/<32 hex>/`, `.workspace`,
  `<workspace>/.nanobot/workspace-id`, the lock files), a small config.json;
* sessions of the channels telegram, slack, discord and websocket (20 %,
  1.5× larger on average), six sessions per MB, their sizes log-normal
  (a few long WebUI chats roll over into segments): turns of a user message, model steps with parallel
  tool calls (read_file, exec, grep, list_dir, web_search, web_fetch,
  write_file, edit_file) and their results, reasoning on some steps, a
  final answer carrying `latency_ms`; assistant and tool messages of a turn
  share its end-of-turn timestamp, as nanobot's save does;
  layout `jsonl`: `sessions/<ns>/<urlsafe-b64 key>.jsonl` as
  `SessionManager._save_unlocked` writes it (metadata line, one message a
  line, `json.dumps(ensure_ascii=False)`);
  layout `sqlite`: no JSONL, `sessions/<ns>/sessions.sqlite3` as the SQLite
  session store (`sqlite_store.py` of HKUDS/nanobot 0d442d05, the store the
  dbera-* fixtures ran) writes it: verbatim DDL, WAL, user_version 1,
  `storage_meta jsonl_import=complete`, compact JSON records, two saves per
  turn (its user message, then the rest) so `revision` counts the saves;
* a WebUI transcript `webui/websocket_<chat id>.jsonl` for every websocket
  session (user, reasoning_end, stream_end per model step, tool_hint and
  progress messages with `tool_events`, turn_end with usage), rolled over
  into `.segments/NNNNNN.jsonl` + manifest.json past 2 MiB as
  `_rotate_active_transcript_if_needed` does;
* `llm_usage.sqlite3` per instance: one row per provider call attempt (an
  occasional 529 `overloaded` attempt before its retry, a title request
  after the first websocket turn), `started_at_ms` true UTC, starting
  150–900 ms after the turn's user message;
* session and transcript times: the host's local time at a fixed offset
  (default +120 min, no DST), naive ISO with microseconds; WebUI and
  llm_usage times in true UTC; every turn of the home is laid on one
  timeline, turns never overlap, so each llm call lies in exactly one turn.

Not written (a real home may have them): memory journal, cron and trigger
run records, CLI history, the sidebar cache `.webui_session_index.json`,
pairing.json, hidden summary checkpoints and their archive calls, spilled
tool results (results stay under maxToolResultChars = 16000).

--nanoclaw-sessions K adds a nanoclaw install root `nanoclaw/` with K
sessions: `data/v2.db` and per session `inbound.db`/`outbound.db`, the DDL
copied at run time from fixtures/nanoclaw/home-2-0 (written by nanoclaw
2.0.64's own code) and rows shaped like that fixture's (chat messages in,
text replies out). No Claude Code transcripts.

Calibration (BENCHMARKS.md "Harness (issue 12)"): --size-mb 200 --seed 1
gives 1 200 session files, 240 WebUI transcripts, 20 484 llm_calls rows,
130 005 nanoload events, 197.9 MB. The Python loader / DuckDB peer time
ratio follows the rows per MB: 1.2–1.4 with this shape on the shared 2-core
machine, 1.65 with --message-scale 0.5, 2.0 with 0.2 (3× the events).
"""
from __future__ import annotations

import argparse
import base64
import datetime as dt
import json
import math
import os
import random
import sqlite3
import sys
import uuid

SESSIONS_PER_MB = 6
WEBSOCKET_SHARE = 0.20
FAKE_HOME = "/home/bench"  # the absolute HOME the files name (as fixtures name /home/alice)
EPOCH_START = dt.datetime(2026, 4, 1, tzinfo=dt.timezone.utc)
SPAN_DAYS = 200
MAX_TOOL_RESULT_CHARS = 16000
ROTATE_BYTES = 2 * 1024 * 1024
TARGET_ACTIVE_BYTES = ROTATE_BYTES // 2
MAX_SEGMENT_BYTES = 8 * 1024 * 1024

INSTANCES = [(".nanobot", 0.85), (".nanobot-work", 0.15)]
CHANNELS = [("telegram", 35), ("slack", 25), ("discord", 20)]  # + websocket, WEBSOCKET_SHARE
MODELS = {
    ".nanobot": [("anthropic", "anthropic/claude-sonnet-4-5", 80), ("openrouter", "openai/gpt-5.4-mini", 20)],
    ".nanobot-work": [("anthropic", "anthropic/claude-haiku-4-5", 100)],
}

# ---------------------------------------------------------------- the shape
# Every size is in characters, drawn from a log-normal (median, sigma) and capped.
SIZES = {
    "user": (110, 1.0, 6000),
    "final": (650, 0.9, 8000),
    "interim": (140, 0.6, 1200),
    "reasoning": (320, 0.8, 4000),
    "read_file": (2600, 1.0, MAX_TOOL_RESULT_CHARS),
    "exec": (480, 1.3, MAX_TOOL_RESULT_CHARS),
    "list_dir": (320, 0.6, 4000),
    "grep": (900, 1.0, MAX_TOOL_RESULT_CHARS),
    "web_search": (2400, 0.4, 8000),
    "web_fetch": (5200, 0.8, MAX_TOOL_RESULT_CHARS),
    "write_file": (1500, 1.0, 12000),
    "edit_file": (220, 0.8, 3000),
}
SESSION_SIGMA = 1.4     # spread of the sessions' sizes (log-normal weights)
WEBSOCKET_WEIGHT = 1.5  # a websocket (WebUI) session is this many times larger than a chat-channel one
SIZE_SCALE = 1.06       # every median above times this (calibrated: BENCHMARKS.md "Harness (issue 12)")
MESSAGE_SCALE = 1.0     # --message-scale: < 1 gives more, smaller messages in the same bytes
BYTES_ESTIMATE = 0.93   # turn_bytes() overestimates the bytes a turn writes by about this factor
CHAT_TURN_SHARE = 0.15
STEPS = ([1, 2, 3, 4, 5, 6, 7, 8], [20, 22, 18, 13, 10, 7, 5, 5])        # tool steps of an agentic turn
FANOUT = ([1, 2, 3, 4, 5, 6, 7, 8], [15, 20, 18, 15, 12, 10, 5, 5])     # tool calls of one step
TOOLS = (["read_file", "exec", "grep", "list_dir", "web_search", "web_fetch", "write_file", "edit_file"],
         [30, 25, 11, 8, 7, 5, 8, 6])
P_REASONING = 0.35
P_INTERIM_TEXT = 0.30
P_ERROR_ATTEMPT = 0.01

# ---------------------------------------------------------------- text
_WORDS = """the a to of and in is it for on that this with be as are was at by from or not
have an but can will if do we you they file line value config server backup disk
check run test build error warning output path list read write update change fix note
user agent model session turn message tool call result data table query index row column
network port service restart status log time date week today tomorrow report summary plan
function class method return import module package version release branch commit merge
memory cache thread process queue worker request response client token limit retry
should could would need want make take give find keep start stop open close send get set
new old first last next other same small large quick simple clear full empty ready done
please thanks okay sure right also still just only very more most some any each every
router firewall dns proxy volume container image deploy cluster node pod job cron timer
invoice budget meeting calendar reminder travel flight hotel dentist groceries recipe""".split()
_NON_ASCII = ["Grüße", "Straße", "naïve", "café", "über", "→", "—", "✅", "⚠️", "📄", "日本", "ok…"]
NON_ASCII_WEIGHT = 1    # weight of each non-ASCII word; every ASCII word weighs 10
_CUM = None
_IDENTS = """main util config server client handler parser loader store cache index api
models views routes tests docs scripts tools backup notes report deploy build src lib""".split()
_EXTS = [".py", ".md", ".json", ".toml", ".yaml", ".ts", ".rs", ".sh", ".txt", ".log"]
_CMDS = ["git status", "git log --oneline -n 20", "ls -la", "df -h", "du -sh *", "uptime",
         "systemctl status nginx", "journalctl -u backup -n 50", "pytest -q", "cargo test",
         "docker ps", "free -m", "ss -tlnp", "cat /etc/hosts", "make check", "npm test",
         "python3 scripts/report.py", "tail -n 100 /var/log/syslog", "ip addr", "crontab -l"]


def _words(rng: random.Random, n: int) -> list[str]:
    global _CUM, _WORDS
    if _CUM is None:
        _WORDS = _WORDS + _NON_ASCII
        _CUM = []
        total = 0
        for w in [10] * (len(_WORDS) - len(_NON_ASCII)) + [NON_ASCII_WEIGHT] * len(_NON_ASCII):
            total += w
            _CUM.append(total)
    return rng.choices(_WORDS, cum_weights=_CUM, k=n)


def prose(rng: random.Random, nchars: int) -> str:
    """Sentences and paragraphs of about nchars characters."""
    out: list[str] = []
    size = 0
    while size < nchars:
        n = rng.randint(6, 18)
        ws = _words(rng, n)
        s = " ".join(ws)
        s = s[0].upper() + s[1:] + rng.choice([".", ".", ".", "?", "!", ":"])
        if out and rng.random() < 0.18:
            s = "\n\n" + s
        elif out:
            s = " " + s
        out.append(s)
        size += len(s)
    return "".join(out)[:max(nchars, 1)]


def code_lines(rng: random.Random, nchars: int) -> list[str]:
    lines: list[str] = []
    size = 0
    while size < nchars:
        indent = "    " * rng.choice([0, 0, 1, 1, 1, 2, 2, 3])
        kind = rng.random()
        ws = _words(rng, rng.randint(2, 9))
        if kind < 0.15:
            line = f"{indent}def {'_'.join(ws[:2])}({', '.join(ws[2:4])}):"
        elif kind < 0.25:
            line = f"{indent}# {' '.join(ws)}"
        elif kind < 0.32:
            line = ""
        else:
            line = f"{indent}{ws[0]}_{ws[1]} = {' '.join(ws[2:])}"
        lines.append(line)
        size += len(line) + 5
    return lines


def a_path(rng: random.Random) -> str:
    depth = rng.choice([1, 1, 2, 2, 3])
    parts = rng.sample(_IDENTS, depth)
    return "/".join(parts) + rng.choice(_EXTS)


def a_url(rng: random.Random) -> str:
    return f"https://{rng.choice(_IDENTS)}.example.org/{'/'.join(_words(rng, 2))}".replace(" ", "-")


def tool_args(rng: random.Random, name: str, size: int) -> dict:
    if name == "read_file":
        return {"path": a_path(rng)}
    if name == "exec":
        return {"command": rng.choice(_CMDS)}
    if name == "grep":
        return {"pattern": " ".join(_words(rng, rng.randint(1, 2))), "path": rng.choice(_IDENTS)}
    if name == "list_dir":
        return {"path": rng.choice([".", "notes", "src", "docs", "scripts"])}
    if name == "web_search":
        return {"query": " ".join(_words(rng, rng.randint(3, 7)))}
    if name == "web_fetch":
        return {"url": a_url(rng)}
    if name == "write_file":
        return {"path": a_path(rng), "content": "\n".join(code_lines(rng, size)) + "\n"}
    if name == "edit_file":
        return {"path": a_path(rng), "old_text": "\n".join(code_lines(rng, size // 2)) + "\n",
                "new_text": "\n".join(code_lines(rng, size // 2)) + "\n"}
    raise ValueError(name)


def tool_result(rng: random.Random, name: str, args: dict, size: int, workspace: str) -> str:
    if name == "read_file":
        lines = code_lines(rng, size)
        body = "\n".join(f"{i}| {line}" for i, line in enumerate(lines, 1))
        return f"{body}\n\n(End of file — {len(lines)} lines total)"
    if name == "exec":
        return "\n".join(" ".join(_words(rng, rng.randint(3, 12))) for _ in range(max(1, size // 50))) \
            + f"\n\n\nExit code: {0 if rng.random() < 0.9 else 1}"
    if name == "grep":
        return "\n".join(f"{a_path(rng)}:{rng.randint(1, 900)}: {' '.join(_words(rng, rng.randint(4, 12)))}"
                         for _ in range(max(1, size // 70)))
    if name == "list_dir":
        return "\n".join(("📁 " + rng.choice(_IDENTS)) if rng.random() < 0.3 else ("📄 " + a_path(rng).split("/")[-1])
                         for _ in range(max(1, size // 14)))
    if name == "web_search":
        n = max(1, size // 450)
        return "\n\n".join(f"{i}. {prose(rng, 50)}\n   {a_url(rng)}\n   {prose(rng, 330)}" for i in range(1, n + 1))
    if name == "web_fetch":
        return prose(rng, size)
    if name == "write_file":
        return f"Successfully wrote {len(args['content'])} characters to {workspace}/{args['path']}"
    if name == "edit_file":
        return f"Patch applied:\n- update {args['path']} (+{args['new_text'].count(chr(10))}/-{args['old_text'].count(chr(10))})"
    raise ValueError(name)


def tool_hint(name: str, args: dict) -> str:
    """utils/tool_hints.py format_tool_hints for one call (arguments here are short)."""
    if name == "read_file":
        return f"read {args['path']}"
    if name == "write_file":
        return f"write {args['path']}"
    if name == "exec":
        cmd = args["command"]
        return "$ " + (cmd if len(cmd) <= 40 else cmd[:39] + "…")
    if name == "grep":
        p = args["pattern"]
        return f'grep "{p if len(p) <= 40 else p[:39] + "…"}"'
    if name == "list_dir":
        return f"ls {args['path']}"
    if name == "web_search":
        q = args["query"]
        return f'search "{q if len(q) <= 40 else q[:39] + "…"}"'
    if name == "web_fetch":
        u = args["url"]
        return f"fetch {u if len(u) <= 40 else '…' + u[-39:]}"
    return name  # edit_file has no template: _fmt_fallback


def format_tool_hints(calls: list[tuple[str, dict]]) -> str:
    hints: list[list] = []
    for name, args in calls:
        h = tool_hint(name, args)
        if hints and hints[-1][0] == h:
            hints[-1][1] += 1
        else:
            hints.append([h, 1])
    return ", ".join(f"{h} \u00d7 {c}" if c > 1 else h for h, c in hints)


def lognorm(rng: random.Random, kind: str) -> int:
    median, sigma, cap = SIZES[kind]
    return max(1, min(cap, int(rng.lognormvariate(math.log(median * SIZE_SCALE * MESSAGE_SCALE), sigma))))


def b64key(key: str) -> str:
    return base64.urlsafe_b64encode(key.encode()).decode().rstrip("=")


def safe_key(key: str) -> str:
    # SessionManager.safe_key: ":" -> "_" then safe_filename; the keys here have no other unsafe char
    return key.replace(":", "_")


def iso_local(us_utc: int, offset_min: int) -> str:
    t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=us_utc + offset_min * 60_000_000)
    return t.isoformat()  # microseconds omitted when 0, as datetime.now().isoformat()


def a_uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def call_id(rng: random.Random) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    return "toolu_01" + "".join(rng.choices(alphabet, k=22))


# ---------------------------------------------------------------- plan
class Session:
    __slots__ = ("idx", "instance", "channel", "key", "chat_id", "provider", "model", "turns", "handle")


def plan_turn(rng: random.Random, websocket: bool) -> dict:
    """Sizes, tool names, durations of one turn (no text yet)."""
    steps = []
    n_steps = 0 if rng.random() < CHAT_TURN_SHARE else rng.choices(*STEPS)[0]
    for _ in range(n_steps):
        fan = rng.choices(*FANOUT)[0]
        calls = []
        for _ in range(fan):
            name = rng.choices(*TOOLS)[0]
            arg_size = lognorm(rng, name) if name in ("write_file", "edit_file") else 0
            res_size = lognorm(rng, name) if name not in ("write_file", "edit_file") else 0
            calls.append((name, arg_size, res_size, rng.randint(40, 6000)))  # tool run ms
        steps.append({
            "calls": calls,
            "text": lognorm(rng, "interim") if rng.random() < P_INTERIM_TEXT else 0,
            "reasoning": lognorm(rng, "reasoning") if rng.random() < P_REASONING else 0,
        })
    steps.append({"calls": [], "text": lognorm(rng, "final"),
                  "reasoning": lognorm(rng, "reasoning") if rng.random() < P_REASONING else 0})
    for s in steps:
        out_chars = s["text"] + s["reasoning"] + sum(c[1] for c in s["calls"]) + 60 * len(s["calls"])
        s["out_tokens"] = max(8, out_chars // 4)
        s["ttft"] = rng.randint(350, 2500)
        s["duration"] = s["ttft"] + int(s["out_tokens"] * rng.uniform(12, 30))  # ms
        s["error"] = rng.random() < P_ERROR_ATTEMPT
        s["error_ms"] = rng.randint(1500, 9000)
        s["timed"] = rng.random() < 0.7
    approx = lognorm(rng, "user")
    return {"user": approx, "steps": steps, "start_delay": rng.randint(150, 900)}


def turn_bytes(turn: dict, websocket: bool) -> int:
    """Rough bytes the turn adds to the home (session + transcript), for the size budget."""
    b = turn["user"] + 110
    for s in turn["steps"]:
        b += s["text"] + s["reasoning"] + 130
        for name, arg_size, res_size, _ in s["calls"]:
            tb = 330 + res_size * 1.06 + arg_size * 1.12 + 40
            b += tb
            if websocket:
                b += 2 * (arg_size * 1.12 + 40) + res_size * 1.06 + 520
        if websocket:
            b += s["text"] + s["reasoning"] + 450
    if websocket:
        b += turn["user"] + 900
    b += 130 * (len(turn["steps"]) + sum(1 for s in turn["steps"] if s["error"]))  # llm_calls rows
    return int(b * BYTES_ESTIMATE)


def turn_duration_ms(turn: dict) -> int:
    t = turn["start_delay"]
    for s in turn["steps"]:
        if s["error"]:
            t += s["error_ms"] + 1000
        t += s["duration"]
        if s["calls"]:
            t += max(c[3] for c in s["calls"]) + 20
    return t + 30


def make_plan(size_mb: float, seed: int):
    rng = random.Random(f"nanoload-bench:{seed}:plan")
    budget = size_mb * 1_000_000 * 0.985 - 60_000
    n = max(2, round(size_mb * SESSIONS_PER_MB))
    n_ws = round(n * WEBSOCKET_SHARE)
    channels = ["websocket"] * n_ws
    names, weights = zip(*CHANNELS)
    channels += rng.choices(names, weights=weights, k=n - n_ws)
    rng.shuffle(channels)
    weights_s = [rng.lognormvariate(0, SESSION_SIGMA) * (WEBSOCKET_WEIGHT if ch == "websocket" else 1)
                 for ch in channels]
    sessions: list[Session] = []
    used_keys = set()
    remaining_w = sum(weights_s)
    remaining_b = budget
    for i, ch in enumerate(channels):
        s = Session()
        s.idx = i
        s.instance = INSTANCES[0][0] if rng.random() < INSTANCES[0][1] else INSTANCES[1][0]
        s.channel = ch
        while True:
            if ch == "websocket":
                chat = a_uuid(rng)
            elif ch == "telegram":
                chat = str(rng.randint(10_000_000, 9_999_999_999))
            elif ch == "slack":
                chat = "C0" + "".join(rng.choices("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789", k=8))
            else:
                chat = str(rng.randint(10**17, 10**18))
            if (s.instance, ch, chat) not in used_keys:
                used_keys.add((s.instance, ch, chat))
                break
        s.chat_id = chat
        s.key = f"{ch}:{chat}"
        provs = MODELS[s.instance]
        p = rng.choices(provs, weights=[x[2] for x in provs])[0]
        s.provider, s.model = p[0], p[1]
        s.handle = "".join(rng.choices("bcdfghjklmnprstvz", k=2)[0] + rng.choice("aeiou") for _ in range(2))
        target = remaining_b * weights_s[i] / remaining_w
        remaining_w -= weights_s[i]
        s.turns = []
        got = 0
        while got < target or not s.turns:
            t = plan_turn(rng, ch == "websocket")
            b = turn_bytes(t, ch == "websocket")
            if s.turns and got + b > target and got + b - target > target - got:
                break
            s.turns.append(t)
            got += b
        remaining_b -= got
        sessions.append(s)
    # One timeline for the whole home: each session starts somewhere in the span, its turns
    # follow with gaps; turns are then laid out in that order without overlap.
    order = []
    span_us = SPAN_DAYS * 86_400_000_000
    for s in sessions:
        t = int(rng.random() * span_us * 0.8)
        for j, _ in enumerate(s.turns):
            order.append((t, s.idx, j))
            t += int(rng.expovariate(1 / (0.6 * 86_400_000_000)))
    order.sort()
    base = int(EPOCH_START.timestamp() * 1_000_000)
    cursor = 0
    for key_t, si, j in order:
        turn = sessions[si].turns[j]
        start = max(base + key_t, cursor + rng.randint(60, 900) * 1_000_000) + rng.randint(0, 999_999)
        turn["start_us"] = start
        dur = turn_duration_ms(turn)
        title = 3000 if (j == 0 and sessions[si].channel == "websocket") else 0
        cursor = start + (dur + title) * 1000
    return sessions, [(si, j) for _, si, j in order]


# ---------------------------------------------------------------- render
def render_session(s: Session, seed: int, offset: int, workspace: str):
    """Messages, WebUI records (per turn), llm_calls rows and metadata of one session."""
    rng = random.Random(f"nanoload-bench:{seed}:session:{s.idx}")
    ws = s.channel == "websocket"
    messages: list[dict] = []
    turn_msgs: list[tuple[int, int]] = []  # (first message index, end) per turn
    webui_turns: list[list[dict]] = []
    calls: list[tuple] = []
    context = 1800 + rng.randint(0, 600)
    last_usage = None
    title = None
    for j, turn in enumerate(s.turns):
        t0 = turn["start_us"]
        first = len(messages)
        user_text = prose(rng, turn["user"])
        messages.append({"role": "user", "content": user_text, "timestamp": iso_local(t0, offset)})
        context += len(user_text) // 4
        turn_id = a_uuid(rng)
        recs: list[dict] = []
        seq = 1
        if ws:
            recs.append({"event": "user", "chat_id": s.chat_id, "text": user_text, "turn_id": turn_id,
                         "turn_phase": "user", "turn_seq": seq, "created_at_ms": t0 // 1000})
        t = t0 + turn["start_delay"] * 1000
        pending: list[dict] = []  # assistant/tool messages, stamped at turn end
        rounds = []
        cache = None
        for si, step in enumerate(turn["steps"]):
            final = not step["calls"]
            if step["error"]:
                calls.append((t // 1000, step["error_ms"], s.provider, s.model, "user", 1, "error",
                              None, None, None, None, None, None, None, None, None, None, None, 529, "overloaded"))
                t += (step["error_ms"] + 1000) * 1000
            out_tok = step["out_tokens"]
            cache_read = (context // 1024) * 1024 if (cache is not None and rng.random() < 0.8) else None
            cache_write = 0 if cache_read is not None and rng.random() < 0.5 else None
            timed = step["timed"]
            calls.append((t // 1000, step["duration"], s.provider, s.model, "user", 1,
                          "stop" if final else "tool_calls", context, out_tok, context + out_tok,
                          cache_read, cache_write, context + out_tok, 0,
                          step["duration"] - step["ttft"] if timed else 0, out_tok if timed else 0,
                          step["ttft"] if timed else 0, 1 if timed else 0, None, None))
            r = {"prompt_tokens": context, "completion_tokens": out_tok, "total_tokens": context + out_tok,
                 "request_count": 1, "estimated_tokens": 0, "context_tokens": context}
            if cache_read is not None:
                r["cached_tokens"] = cache_read
            if timed:
                r.update(generation_ms=step["duration"] - step["ttft"], measured_completion_tokens=out_tok,
                         ttft_ms=step["ttft"], timed_requests=1)
            rounds.append((r, step["duration"], timed))
            cache = context
            t += step["duration"] * 1000
            text = prose(rng, step["text"]) if step["text"] else ""
            reasoning = prose(rng, step["reasoning"]) if step["reasoning"] else ""
            tcs = []
            for name, arg_size, res_size, run_ms in step["calls"]:
                args = tool_args(rng, name, arg_size)
                tcs.append((call_id(rng), name, args, res_size, run_ms))
            msg = {"role": "assistant", "content": text}
            if tcs:
                msg["tool_calls"] = [{"id": cid, "type": "function",
                                      "function": {"name": name, "arguments": json.dumps(args, ensure_ascii=False)}}
                                     for cid, name, args, _, _ in tcs]
            if reasoning:
                msg["reasoning_content"] = reasoning
            pending.append(msg)
            if ws:
                if reasoning:
                    seq += 2
                    recs.append({"event": "reasoning_end", "chat_id": s.chat_id, "turn_id": turn_id,
                                 "turn_phase": "reasoning", "turn_seq": seq, "text": reasoning,
                                 "created_at_ms": t // 1000})
                seq += 2
                se = {"event": "stream_end", "chat_id": s.chat_id,
                      "stream_id": f"websocket:{s.chat_id}:{t0 * 1000}:{si}"}
                if not final:
                    se["resuming"] = True
                se.update(turn_id=turn_id, turn_phase="answer", turn_seq=seq, text=text, created_at_ms=t // 1000)
                recs.append(se)
            context += (len(text) + len(reasoning)) // 4 + 20
            if tcs:
                if ws:
                    seq += 1
                    recs.append({"event": "message", "chat_id": s.chat_id,
                                 "text": format_tool_hints([(n, a) for _, n, a, _, _ in tcs]),
                                 "turn_id": turn_id,
                                 "tool_events": [{"version": 1, "phase": "start", "call_id": cid, "name": name,
                                                  "arguments": args, "result": None, "error": None,
                                                  "files": [], "embeds": []} for cid, name, args, _, _ in tcs],
                                 "kind": "tool_hint", "turn_phase": "activity", "turn_seq": seq,
                                 "created_at_ms": t // 1000})
                results = []
                for cid, name, args, res_size, run_ms in tcs:
                    res = tool_result(rng, name, args, res_size, workspace)
                    results.append(res)
                    pending.append({"role": "tool", "tool_call_id": cid, "name": name, "content": res})
                    context += (len(res) + len(json.dumps(args))) // 4 + 15
                t += (max(x[4] for x in tcs) + 20) * 1000
                if ws:
                    seq += 1
                    recs.append({"event": "message", "chat_id": s.chat_id, "text": "", "turn_id": turn_id,
                                 "tool_events": [{"version": 1, "phase": "end", "call_id": cid, "name": name,
                                                  "arguments": args, "result": res, "error": None,
                                                  "files": [], "embeds": []}
                                                 for (cid, name, args, _, _), res in zip(tcs, results)],
                                 "kind": "progress", "turn_phase": "activity", "turn_seq": seq,
                                 "created_at_ms": t // 1000})
        t_end = t + 30_000
        latency = (t_end - t0) // 1000
        stamp = iso_local(t_end, offset)
        for m in pending:
            m["timestamp"] = stamp
        pending[-1]["latency_ms"] = latency
        messages.extend(pending)
        turn_msgs.append((first, len(messages)))
        tot = {k: sum(r[0][k] for r in rounds) for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        timed = [r for r in rounds if r[2]]
        usage = {**tot, "request_count": len(rounds), "estimated_tokens": 0,
                 "context_tokens": rounds[-1][0]["context_tokens"],
                 "generation_ms": sum(r[0].get("generation_ms", 0) for r in rounds),
                 "measured_completion_tokens": sum(r[0].get("measured_completion_tokens", 0) for r in rounds),
                 "ttft_ms": timed[0][0]["ttft_ms"] if timed else 0, "timed_requests": len(timed)}
        last_usage = {"input_tokens": tot["prompt_tokens"], "output_tokens": tot["completion_tokens"],
                      "total_tokens": tot["total_tokens"],
                      "cache_read_tokens": rounds[-1][0].get("cached_tokens"), "cache_write_tokens": None,
                      "reported_tokens": tot["total_tokens"], "estimated_tokens": 0, "source": "reported",
                      "generation_ms": usage["generation_ms"],
                      "measured_output_tokens": usage["measured_completion_tokens"],
                      "ttft_ms": usage["ttft_ms"], "timed_requests": usage["timed_requests"],
                      "context_tokens": usage["context_tokens"], "request_count": len(rounds)}
        if ws:
            seq += 1
            rec = {"event": "turn_end", "chat_id": s.chat_id, "turn_id": turn_id, "latency_ms": latency,
                   "goal_state": {"active": False}, "usage": usage}
            if len(rounds) > 1:
                rec["round_usages"] = [r[0] for r in rounds]
            rec.update(context_window_tokens=200000, turn_phase="complete", turn_seq=seq,
                       created_at_ms=t_end // 1000)
            recs.append(rec)
            webui_turns.append(recs)
        if ws and j == 0:  # the title request (source system) right after the first turn
            title = " ".join(user_text.split()[:5]).rstrip(".?!:")
            calls.append((t_end // 1000, rng.randint(700, 2600), s.provider, s.model, "system", 1, "stop",
                          160, 8, 168, None, None, 168, 0, 0, 0, 0, 0, None, None))
    meta: dict = {}
    if ws:
        meta["webui"] = True
        meta["workspace_scope"] = {"project_path": workspace, "access_mode": "restricted"}
    meta["_compaction_route"] = {"channel": s.channel, "chat_id": s.chat_id, "metadata": {}}
    meta["_last_usage"] = last_usage
    if title is not None:
        meta["title"] = title
    meta["session_handle"] = s.handle
    created = s.turns[0]["start_us"] - rng.randint(1000, 40000)
    updated = messages[-1]["timestamp"]
    return {"messages": messages, "turn_msgs": turn_msgs, "webui_turns": webui_turns, "calls": calls,
            "metadata": meta, "created_at": iso_local(created, offset), "updated_at": updated}


def local_to_epoch(iso: str, offset: int) -> float:
    t = dt.datetime.fromisoformat(iso) - dt.timedelta(minutes=offset)
    return (t - dt.datetime(1970, 1, 1)).total_seconds()


def write_jsonl_session(path: str, s: Session, r: dict) -> int:
    head = {"_type": "metadata", "key": s.key, "created_at": r["created_at"], "updated_at": r["updated_at"],
            "metadata": r["metadata"], "last_archived": 0, "last_consolidated": 0}
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(head, ensure_ascii=False) + "\n")
        for m in r["messages"]:
            f.write(json.dumps(m, ensure_ascii=False) + "\n")
    return os.path.getsize(path)


def _rec_line(rec: dict) -> str:
    return json.dumps(rec, ensure_ascii=False, separators=(",", ":"))


def write_webui(webui_dir: str, s: Session, turns: list[list[dict]], mtime: float) -> tuple[int, int]:
    """Append turn by turn, rotating as webui/transcript.py does; returns (bytes, files)."""
    stem = safe_key(s.key)
    active: list[tuple[list[str], int]] = []  # (lines, bytes) per turn
    active_bytes = 0
    segments: list[dict] = []
    seg_dir = os.path.join(webui_dir, stem + ".segments")
    total = 0
    for recs in turns:
        lines = [_rec_line(r) for r in recs]
        nb = sum(len(x.encode("utf-8")) + 1 for x in lines)
        active.append((lines, nb))
        active_bytes += nb
        if active_bytes > ROTATE_BYTES and len(active) > 1:
            keep_start, keep = len(active) - 1, 0
            for idx in range(len(active) - 1, -1, -1):
                if idx == len(active) - 1 or keep + active[idx][1] <= TARGET_ACTIVE_BYTES:
                    keep_start = idx
                    keep += active[idx][1]
                    continue
                break
            moved, active = active[:keep_start], active[keep_start:]
            active_bytes = sum(x[1] for x in active)
            if moved:
                os.makedirs(seg_dir, exist_ok=True)
                batch: list = []
                bb = 0

                def flush(batch):
                    sid = f"{len(segments) + 1:06d}"
                    p = os.path.join(seg_dir, sid + ".jsonl")
                    with open(p, "w", encoding="utf-8") as f:
                        for lines_, _ in batch:
                            for x in lines_:
                                f.write(x + "\n")
                    segments.append({"id": sid, "bytes": os.path.getsize(p), "turn_count": len(batch),
                                     "user_count": len(batch)})
                for tb in moved:
                    if batch and bb + tb[1] > MAX_SEGMENT_BYTES:
                        flush(batch)
                        batch, bb = [], 0
                    batch.append(tb)
                    bb += tb[1]
                if batch:
                    flush(batch)
    path = os.path.join(webui_dir, stem + ".jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for lines, _ in active:
            for x in lines:
                f.write(x + "\n")
    os.utime(path, (mtime, mtime))
    total += os.path.getsize(path)
    files = 1
    if segments:
        mp = os.path.join(seg_dir, "manifest.json")
        with open(mp, "w", encoding="utf-8") as f:
            f.write(json.dumps({"version": 2, "segments": segments}, ensure_ascii=False, indent=2) + "\n")
        for name in os.listdir(seg_dir):
            p = os.path.join(seg_dir, name)
            os.utime(p, (mtime, mtime))
            total += os.path.getsize(p)
            files += 1
        os.utime(seg_dir, (mtime, mtime))
    return total, files


LLM_DDL = """
            CREATE TABLE IF NOT EXISTS llm_calls (
                id INTEGER PRIMARY KEY,
                started_at_ms INTEGER NOT NULL,
                duration_ms INTEGER NOT NULL,
                provider TEXT NOT NULL,
                model TEXT NOT NULL,
                source TEXT NOT NULL,
                stream INTEGER NOT NULL,
                finish_reason TEXT NOT NULL,
                input_tokens INTEGER,
                output_tokens INTEGER,
                total_tokens INTEGER,
                cache_read_tokens INTEGER,
                cache_write_tokens INTEGER,
                reported_tokens INTEGER,
                estimated_tokens INTEGER,
                generation_ms INTEGER,
                measured_output_tokens INTEGER,
                ttft_ms INTEGER,
                timed_requests INTEGER,
                error_status_code INTEGER,
                error_kind TEXT
            );
            CREATE INDEX IF NOT EXISTS llm_calls_started_at_idx
                ON llm_calls(started_at_ms);
            CREATE INDEX IF NOT EXISTS llm_calls_provider_model_time_idx
                ON llm_calls(provider, model, started_at_ms);
            """
LLM_INSERT = """
                INSERT INTO llm_calls (
                    started_at_ms, duration_ms, provider, model, source, stream,
                    finish_reason, input_tokens, output_tokens, total_tokens,
                    cache_read_tokens, cache_write_tokens, reported_tokens,
                    estimated_tokens, generation_ms, measured_output_tokens,
                    ttft_ms, timed_requests, error_status_code, error_kind
                ) VALUES (
                    ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
                )
                """

# sqlite_store.py@0d442d05, verbatim
SESSION_DDL = (
    "CREATE TABLE IF NOT EXISTS storage_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS sessions (
                    key TEXT PRIMARY KEY, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
                    metadata TEXT NOT NULL, provider_state TEXT, last_archived INTEGER NOT NULL,
                    revision INTEGER NOT NULL, generation TEXT NOT NULL,
                    title TEXT NOT NULL, preview TEXT NOT NULL, visible_updated_at TEXT
                )""",
    """CREATE TABLE IF NOT EXISTS messages (
                    session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
                    position INTEGER NOT NULL, record TEXT NOT NULL,
                    PRIMARY KEY (session_key, position)
                )""",
    """CREATE TABLE IF NOT EXISTS checkpoints (
                    session_key TEXT PRIMARY KEY REFERENCES sessions(key) ON DELETE CASCADE,
                    record TEXT NOT NULL
                )""",
    """CREATE TABLE IF NOT EXISTS pending_inputs (
                    session_key TEXT NOT NULL REFERENCES sessions(key) ON DELETE CASCADE,
                    kind TEXT NOT NULL, position INTEGER NOT NULL, record TEXT NOT NULL,
                    PRIMARY KEY (session_key, kind, position)
                )""",
    "CREATE INDEX IF NOT EXISTS sessions_updated ON sessions(updated_at DESC)",
)


def _encode(v) -> str:
    return json.dumps(v, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _preview(messages: list[dict]) -> str:
    """sqlite_store.save's preview: the first visible user text (no hidden messages are written here)."""
    fallback = ""
    for m in messages[:200]:
        c = m.get("content")
        text = " ".join(c.split()) if isinstance(c, str) else ""
        if len(text) > 120:
            text = text[:119].rstrip() + "…"
        if m.get("role") == "user" and text:
            return text
        if m.get("role") == "assistant" and not fallback:
            fallback = text
    return fallback


class SessionDb:
    """The writes SqliteSessionStore.initialize and .save make, in order."""

    def __init__(self, path: str):
        self.path = path
        c = sqlite3.connect(path, isolation_level=None)
        c.execute("PRAGMA journal_mode = WAL")
        c.close()
        os.chmod(path, 0o600)
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA synchronous = OFF")  # nanobot: FULL; same file content, no fsync per save
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("PRAGMA user_version")
        for stmt in SESSION_DDL:
            self.db.execute(stmt)
        self.db.execute("SELECT value FROM storage_meta WHERE key='jsonl_import'")
        self.db.execute("INSERT INTO storage_meta VALUES ('jsonl_import', 'complete')")
        self.db.execute("PRAGMA user_version = 1")
        self.db.execute("COMMIT")
        self.generations: dict[str, str] = {}

    def save(self, key: str, generation: str, created_at: str, updated_at: str, messages: list[dict],
             start: int, metadata: dict, title: str) -> None:
        last_visible = next((m["timestamp"] for m in reversed(messages)
                             if m.get("timestamp") and m.get("role") in {"user", "assistant"}), None)
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        row = db.execute("SELECT revision, generation FROM sessions WHERE key=?", (key,)).fetchone()
        if row is None:
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, '{}', NULL, 0, 0, ?, '', '', NULL)",
                       (key, created_at, updated_at, generation))
        db.execute("UPDATE sessions SET updated_at=?, provider_state=?, last_archived=?, revision=revision+1, "
                   "preview=?, visible_updated_at=? WHERE key=?",
                   (updated_at, None, 0, _preview(messages), last_visible, key))
        db.executemany("""INSERT INTO messages VALUES (?, ?, ?)
                ON CONFLICT(session_key, position) DO UPDATE SET record=excluded.record
                WHERE messages.record != excluded.record""",
                       [(key, p, _encode(m)) for p, m in enumerate(messages[start:], start)])
        db.execute("DELETE FROM messages WHERE session_key=? AND position>=?", (key, len(messages)))
        db.execute("DELETE FROM checkpoints WHERE session_key=?", (key,))
        db.execute("DELETE FROM pending_inputs WHERE session_key=? AND kind=?", (key, "pending_user_followups"))
        db.execute("UPDATE sessions SET metadata=?, title=?, revision=revision+? WHERE key=?",
                   (_encode(metadata), title, 0, key))
        db.execute("COMMIT")

    def close(self) -> None:
        self.db.close()


CONFIG = {
    "agents": {"defaults": {"workspace": "~/{inst}/workspace", "model": "{model}", "provider": "{provider}",
                            "maxTokens": 8192, "contextWindowTokens": 200000, "maxToolIterations": 200,
                            "maxToolResultChars": 16000, "timezone": "Etc/GMT-2", "botName": "nanobot"}},
    "channels": {"telegram": {"enabled": True, "allowFrom": ["*"]},
                 "slack": {"enabled": True, "allowFrom": ["*"]},
                 "discord": {"enabled": True, "allowFrom": ["*"]},
                 "websocket": {"enabled": True, "host": "127.0.0.1", "port": 8765}},
    "tools": {"restrictToWorkspace": True,
              "exec": {"enable": True, "timeout": 60, "sandbox": "", "allowPatterns": [], "denyPatterns": []},
              "webuiAllowLocalServiceAccess": False},
}


def set_tree_mtimes(root: str, mtime: float) -> None:
    for d, dirs, files in os.walk(root, topdown=False):
        for name in dirs:
            os.utime(os.path.join(d, name), (mtime, mtime))
    os.utime(root, (mtime, mtime))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--size-mb", type=float, required=True)
    ap.add_argument("--layout", choices=["jsonl", "sqlite"], required=True)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--nanoclaw-sessions", type=int, default=0)
    ap.add_argument("--utc-offset-minutes", type=int, default=120)
    ap.add_argument("--message-scale", type=float, default=1.0,
                    help="scale every message size (default 1: the calibrated shape; 0.2 gives ≈3× the "
                         "messages, events and llm calls in the same bytes)")
    a = ap.parse_args()
    global MESSAGE_SCALE
    MESSAGE_SCALE = a.message_scale
    out = os.path.abspath(a.out_dir)
    if os.path.exists(out) and os.listdir(out):
        print(f"gen_home: {out} exists and is not empty", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    offset = a.utc_offset_minutes
    sessions, order = make_plan(a.size_mb, a.seed)
    rng = random.Random(f"nanoload-bench:{a.seed}:home")
    inst_info = {}
    last_mtime = EPOCH_START.timestamp()
    for inst, _ in INSTANCES:
        ns = "%032x" % rng.getrandbits(128)
        root = os.path.join(out, inst)
        wsp = f"{FAKE_HOME}/{inst}/workspace"
        nsdir = os.path.join(root, "sessions", ns)
        os.makedirs(nsdir)
        os.makedirs(os.path.join(root, "workspace", ".nanobot"))
        os.makedirs(os.path.join(root, "webui"))
        with open(os.path.join(root, "workspace", ".nanobot", "workspace-id"), "w") as f:
            f.write(ns + "\n")
        with open(os.path.join(nsdir, ".workspace"), "w") as f:
            f.write(wsp + "\n")
        open(os.path.join(nsdir, ".session-files.lock"), "w").close()
        open(os.path.join(root, "sessions", ".workspace-migration.lock"), "w").close()
        provider, model = MODELS[inst][0][0], MODELS[inst][0][1]
        zone = f"Etc/GMT{-offset // 60:+d}" if offset % 60 == 0 else "UTC"  # Etc/GMT-2 is UTC+02:00
        cfg = json.loads(json.dumps(CONFIG).replace("{inst}", inst).replace("{model}", model)
                         .replace("{provider}", provider).replace("Etc/GMT-2", zone))
        with open(os.path.join(root, "config.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps(cfg, indent=2, ensure_ascii=False) + "\n")
        inst_info[inst] = {"ns": ns, "nsdir": nsdir, "workspace": wsp, "root": root, "calls": [],
                           "db": SessionDb(os.path.join(nsdir, "sessions.sqlite3")) if a.layout == "sqlite" else None}
    stats = {"sessions": 0, "session_files": 0, "webui": 0, "webui_files": 0, "messages": 0, "events": 0,
             "llm_calls": 0, "bytes": 0}
    rendered_for_db: dict[int, dict] = {}
    for s in sessions:
        info = inst_info[s.instance]
        r = render_session(s, a.seed, offset, info["workspace"])
        mtime = local_to_epoch(r["updated_at"], offset)
        last_mtime = max(last_mtime, mtime)
        info["calls"].extend(r["calls"])
        stats["sessions"] += 1
        stats["messages"] += len(r["messages"])
        ev = 2  # session start; session relayed (chat channels) or permission mode (websocket)
        for m in r["messages"]:
            if m["role"] == "assistant":
                ev += len(m.get("tool_calls", ())) + (1 if m.get("reasoning_content") else 0)
                ev += 1 if (m["content"] or not m.get("tool_calls")) else 0
            else:
                ev += 1
        stats["events"] += ev
        if a.layout == "jsonl":
            p = os.path.join(info["nsdir"], b64key(s.key) + ".jsonl")
            stats["bytes"] += write_jsonl_session(p, s, r)
            os.utime(p, (mtime, mtime))
            stats["session_files"] += 1
        else:
            rendered_for_db[s.idx] = {"turn_msgs": r["turn_msgs"], "messages": r["messages"],
                                      "metadata": r["metadata"], "created_at": r["created_at"],
                                      "generation": "%032x" % random.Random(f"{a.seed}:gen:{s.idx}").getrandbits(128)}
        if s.channel == "websocket":
            nb, nf = write_webui(os.path.join(info["root"], "webui"), s, r["webui_turns"], mtime)
            stats["bytes"] += nb
            stats["webui"] += 1
            stats["webui_files"] += nf
    if a.layout == "sqlite":
        # saves in timeline order: the user message at turn start, the rest at turn end
        for si, j in order:
            s = sessions[si]
            rd = rendered_for_db[si]
            db = inst_info[s.instance]["db"]
            first, end = rd["turn_msgs"][j]
            msgs = rd["messages"]
            meta = rd["metadata"]
            if j == 0:  # the title arrives after the first turn (its own request)
                meta = {k: v for k, v in meta.items() if k != "title"}
            title = meta.get("title", "")
            db.save(s.key, rd["generation"], rd["created_at"], msgs[first]["timestamp"], msgs[:first + 1],
                    first, meta, title)
            db.save(s.key, rd["generation"], rd["created_at"], msgs[end - 1]["timestamp"], msgs[:end],
                    first + 1, rd["metadata"] if j == 0 else meta, rd["metadata"].get("title", ""))
        for inst, info in inst_info.items():
            info["db"].close()
            p = os.path.join(info["nsdir"], "sessions.sqlite3")
            stats["bytes"] += os.path.getsize(p)
            stats["session_files"] += 1
            os.utime(p, (last_mtime, last_mtime))
    for inst, info in inst_info.items():
        p = os.path.join(info["root"], "llm_usage.sqlite3")
        c = sqlite3.connect(p, isolation_level=None)
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = OFF")
        c.executescript(LLM_DDL)
        c.execute("PRAGMA user_version = 1")
        c.execute("BEGIN")
        c.executemany(LLM_INSERT, sorted(info["calls"], key=lambda x: x[0]))
        c.execute("COMMIT")
        c.close()
        stats["llm_calls"] += len(info["calls"])
        stats["events"] += 6  # permission rows of config.json
        os.utime(p, (last_mtime, last_mtime))
    if a.nanoclaw_sessions > 0:
        sys.dont_write_bytecode = True  # no __pycache__ in the clone
        import nanoclaw_home  # benches/nanoclaw_home.py
        n_ev = nanoclaw_home.write(os.path.join(out, "nanoclaw"), a.nanoclaw_sessions, a.seed, prose)
        stats["events"] += n_ev
    # deterministic mtimes for everything else
    for d, dirs, files in os.walk(out):
        for name in files:
            p = os.path.join(d, name)
            if not (name.endswith(".jsonl") or name.endswith(".sqlite3") or name == "manifest.json"):
                os.utime(p, (EPOCH_START.timestamp(), EPOCH_START.timestamp()))
    set_tree_mtimes(out, last_mtime)
    total = 0
    for d, dirs, files in os.walk(out):
        total += sum(os.path.getsize(os.path.join(d, f)) for f in files)
    print(f"gen_home: {out}: layout {a.layout}, seed {a.seed}: {stats['sessions']} sessions "
          f"({stats['session_files']} session files), {stats['webui']} WebUI transcripts "
          f"({stats['webui_files']} files), {stats['messages']} messages, {stats['llm_calls']} llm_calls rows, "
          f"≈{stats['events']} nanoload events expected, {total} bytes in files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
