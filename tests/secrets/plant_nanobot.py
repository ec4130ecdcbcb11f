#!/usr/bin/env python3
"""Plant tests/secrets/corpus.json in a nanobot home written by nanobot 0.3.5's
own storage code -> fixtures/secrets/nanobot-corpus/.

    venv=$(tests/realwriter/setup.sh | tail -n 1)
    $venv/bin/python tests/secrets/plant_nanobot.py
    $venv/bin/python tests/secrets/plant_nanobot.py --corpus tests/secrets/corpus.json \\
        --seed 1 --out fixtures/secrets/nanobot-corpus

Every positive and every negative of the corpus is pasted in every context
that applies to it (``corpus.json`` ``contexts``), each (item, context) pair
at least once, the placements rotating over the item's contexts:

======================  =====================================================
placement               where, written by
======================  =====================================================
session_user            a user message of a chat session (``Session.add_message``,
                        ``SessionManager.save``)
session_assistant       an assistant message of a chat session (same)
tool_args               ``tool_calls[0].function.arguments`` of an assistant message:
                        the model's raw JSON string through nanobot's
                        ``parse_tool_arguments`` + ``ToolCallRequest.to_openai_tool_call``
                        (tools ``write_file`` content, ``exec`` command, ``message`` content)
tool_result             a tool message: the file written by nanobot's ``WriteFileTool``,
                        read back by ``ReadFileTool`` or ``cat`` through ``ExecTool``
webui_user              a WebUI transcript ``user`` record (``WebUITranscriptRecorder``);
                        mirrored, as nanobot does, as a session user message
webui_assistant         a WebUI transcript ``stream_end`` record; mirrored as a session
                        assistant message
sidebar_preview         ``.webui_session_index.json`` ``sessions[k].preview``
                        (``list_webui_sessions``): the first user message of each
                        session, whitespace collapsed, cut to 119 characters + "…"
cli_history             ``~/.nanobot/history/cli_history`` (``SafeFileHistory``)
memory_history          ``workspace/memory/history.jsonl`` (``MemoryStore.raw_archive``)
workspace_file          the last file ``WriteFileTool`` wrote
torn_line               the last line of a session file, truncated mid-record
                        afterwards (simulated crash; the one step not done by nanobot)
======================  =====================================================

Output: ``home/`` (or ``home.tar.gz`` if nanobot left a ``.git``; it does not
here: no memory versioning runs), ``planted.json`` and ``PROVENANCE.md``.
Deterministic: frozen clock (time-machine), seeded entropy, PYTHONHASHSEED=0,
mtimes stamped to the simulated clock, reusing ``tests/realwriter/harness/env.py``.

A planting records where the needle (a positive's ``value``, a negative's
``text``) stands: ``path`` (relative to HOME), ``line`` (1-based), ``field``
(a JSON path in that line's record, ``/``-separated; absent for raw files),
``written`` (the needle as stored, when nanobot's storage changed it: JSON
escapes inside raw arguments, ``N| `` line numbers of read_file, ``+`` line
prefixes of the CLI history, collapsed whitespace of a preview, …), ``cut``
(only part of the needle survives: a preview or a torn line) and ``raw``
(``written`` is a substring of the raw file text, not of a decoded field).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import urllib.parse
import uuid
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from zoneinfo import ZoneInfo

sys.dont_write_bytecode = True  # leave no __pycache__ in tests/realwriter
HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
REALWRITER = REPO / "tests" / "realwriter"
sys.path.insert(0, str(REALWRITER))

from harness import env  # noqa: E402  (nanobot-free)
from make_corpus import applies, grams  # noqa: E402  (this directory: the corpus's own rules)

FIXED_ROOT = Path("/tmp/nanoload-secrets")
FIXED_HOME = FIXED_ROOT / "home"
WORK_DIR = FIXED_ROOT / "work"
TZ = "Europe/Berlin"
START_LOCAL = "2026-11-02T09:00:00"
DEFAULT_OUT = REPO / "fixtures" / "secrets" / "nanobot-corpus"
DEFAULT_CORPUS = HERE / "corpus.json"

ROTATION = ["session_user", "session_assistant", "tool_args", "tool_result",
            "webui_user", "webui_assistant", "cli_history", "memory_history"]
CHAT = {"session_user", "session_assistant", "tool_args", "tool_result"}
WEBUI = {"webui_user", "webui_assistant"}
S0, S1 = "\ue000", "\ue001"  # needle markers while computing how a text is stored
PREVIEW_MAX = 120  # nanobot.session.manager._SESSION_PREVIEW_MAX_CHARS

USER_FILLERS = ["next one", "and this one?", "keep going", "ok, what about this",
                "please handle it", "one more", "thanks, continue"]
ASSISTANT_FILLERS = ["Done.", "Noted.", "Got it, stored.", "Saved.", "Okay, handled that."]


# ---------------------------------------------------------------------------
# corpus -> plan (pure Python, no nanobot)
# ---------------------------------------------------------------------------


def render(ctx: dict, text: str, needle: str) -> tuple[str, int, int]:
    """The pasted string and the needle's span in it."""
    at = text.index(needle)
    before, after = text[:at], text[at + len(needle):]
    if ctx.get("transform") == "percent_encode":
        q = lambda s: urllib.parse.quote(s, safe="")  # noqa: E731
        before, needle, after = q(before), q(needle), q(after)
    head, tail = ctx["template"].split("{}")
    pasted = head + before + needle + after + tail
    start = len(head) + len(before)
    return pasted, start, start + len(needle)


def plan(corpus: dict) -> tuple[list[dict], list[dict]]:
    """Items and their (context, placement) plantings."""
    items = [{"id": p["id"], "text": p["text"], "needle": p["value"], "positive": True}
             for p in corpus["positives"]]
    items += [{"id": n["id"], "text": n["text"], "needle": n["text"], "positive": False}
              for n in corpus["negatives"]]
    plantings: list[dict] = []
    for i, item in enumerate(items):
        j = 0
        for ctx in corpus["contexts"]:
            if not applies(ctx, item["text"]):
                continue
            pasted, vs, ve = render(ctx, item["text"], item["needle"])
            if ctx["placements"] == "any":
                placement = ROTATION[(i + j) % len(ROTATION)]
                j += 1
            else:
                (placement,) = ctx["placements"]
            plantings.append({"item": item["id"], "context": ctx["id"], "placement": placement,
                              "pasted": pasted, "span": (vs, ve), "needle": item["needle"]})
    return items, plantings


# ---------------------------------------------------------------------------
# how nanobot stores a pasted string (replicas, checked against the files)
# ---------------------------------------------------------------------------


def marked(p: dict) -> str:
    vs, ve = p["span"]
    s = p["pasted"]
    return s[:vs] + S0 + s[vs:ve] + S1 + s[ve:]


def between(s: str, a: str = S0, b: str = S1) -> str:
    i = s.index(a) + len(a)
    return s[i:s.index(b, i)]


def json_inner(s: str, ensure_ascii: bool) -> str:
    return json.dumps(s, ensure_ascii=ensure_ascii)[1:-1]


def written_json(p: dict, ensure_ascii: bool) -> str:
    enc = json_inner(marked(p), ensure_ascii)
    if ensure_ascii:
        return between(enc, json_inner(S0, True), json_inner(S1, True))
    return between(enc)


def read_file_numbered(s: str) -> str:
    """ReadFileTool's body: CRLF -> LF, 'N| ' before each line."""
    lines = s.replace("\r\n", "\n").splitlines()
    return "\n".join(f"{i + 1}| {line}" for i, line in enumerate(lines))


def cli_lines(s: str) -> str:
    """FileHistory.store_string: '+' before each line."""
    return "".join(f"+{line}\n" for line in s.split("\n"))


def preview_span(pasted: str, span: tuple[int, int]) -> tuple[str, int, int]:
    """_text_preview (session/manager.py) with the needle's span carried along."""
    m = marked({"pasted": pasted, "span": span})
    lines = [ln for ln in m.splitlines()
             if not re.match(r"^\[image: (?:/|~)[^\]]+\]\s*$", ln)
             and not re.match(r"^\s*(?:generate_image|message)\([^)]*\)\s*$", ln)]
    m = re.sub(r"\s+", " ", "\n".join(lines).strip()).strip()
    start = m.index(S0)
    end = m.index(S1) - 1
    text = m.replace(S0, "").replace(S1, "")
    return text, start, end


# ---------------------------------------------------------------------------
# worker: runs inside the real-writer venv, nanobot's code writes the home
# ---------------------------------------------------------------------------


class Planter:
    def __init__(self, spec: dict, clock: Any) -> None:
        from nanobot.agent.memory import MemoryStore
        from nanobot.agent.tools.filesystem import ReadFileTool, WriteFileTool
        from nanobot.agent.tools.shell import ExecTool
        from nanobot.cli.terminal import SafeFileHistory
        from nanobot.config.loader import save_config
        from nanobot.config.paths import get_cli_history_path
        from nanobot.config.schema import Config
        from nanobot.session.manager import SessionManager
        from nanobot.webui.transcript import WebUITranscriptRecorder

        self.spec = spec
        self.clock = clock
        self.home = Path.home()
        self.rng = random.Random(f"{spec['seed']}:plant")
        self.stamper = env.MtimeStamper(self.home)
        config = Config()
        save_config(config, self.home / ".nanobot" / "config.json")
        self.workspace = Path(config.workspace_path)
        self.sm = SessionManager(self.workspace)
        self.memory = MemoryStore(self.workspace)
        hist = get_cli_history_path()
        hist.parent.mkdir(parents=True, exist_ok=True)
        self.cli_path = hist
        self.cli = SafeFileHistory(str(hist))
        self.recorder = WebUITranscriptRecorder()
        self.write_tool = WriteFileTool(workspace=self.workspace, allowed_dir=self.workspace)
        self.read_tool = ReadFileTool(workspace=self.workspace, allowed_dir=self.workspace)
        self.exec_tool = ExecTool(working_dir=str(self.workspace))
        self.records: list[dict] = []
        self.transcript_lines: dict[str, int] = {}
        self.memory_lines = 0
        self.tool_counter = 0
        self.result_counter = 0
        self.stamper.stamp()

    # -- helpers -------------------------------------------------------------

    def tick(self, lo: int = 20, hi: int = 70) -> None:
        self.clock.advance(self.rng.randint(lo, hi))

    def rel(self, path: Path) -> str:
        return path.relative_to(self.home).as_posix()

    def record(self, p: dict, placement: str, path: Path, line: int, field: str | None,
               written: str | None, **extra: Any) -> None:
        needle = p["needle"]
        rec = {"id": p["item"], "context": p["context"], "placement": placement,
               "path": self.rel(path), "line": line}
        if field is not None:
            rec["field"] = field
        if written is not None and written != needle:
            rec["written"] = written
        rec.update(extra)
        self.records.append(rec)

    def call_id(self) -> str:
        return "call_" + "".join(self.rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
                                 for _ in range(24))

    def chat_uuid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    # -- chat sessions -----------------------------------------------------------

    def chat_session(self, key: str, queue: list[dict]) -> None:
        from nanobot.providers.base import ToolCallRequest, parse_tool_arguments

        session = self.sm.get_or_create(key)
        path = self.sm.sessions_dir / f"{self.sm._storage_key(key)}.jsonl"
        chat_id = key.split(":", 1)[1]
        pending: list[tuple[int, dict, str, str | None, str, dict]] = []

        def add(role: str, content: str, **kw: Any) -> int:
            if not kw:
                session.add_message(role, content)
            else:
                # AgentLoop._save_turn keeps the runner's key order and stamps the time last
                if role == "tool":
                    msg = {"role": "tool", "tool_call_id": kw["tool_call_id"], "name": kw["name"],
                           "content": content}
                else:
                    msg = {"role": role, "content": content, **kw}
                msg["timestamp"] = datetime.now().isoformat()
                session.messages.append(msg)
                session.updated_at = datetime.now()
            return len(session.messages) - 1

        q = list(queue)
        while q:
            self.tick()
            if q[0]["placement"] == "session_user":
                p = q.pop(0)
                idx = add("user", p["pasted"])
                pending.append((idx, p, "session_user", "content", between(marked(p)), {}))
            else:
                add("user", self.rng.choice(USER_FILLERS))
            steps = 0
            while q and q[0]["placement"] in ("tool_args", "tool_result") and steps < 3:
                p = q.pop(0)
                steps += 1
                self.tick(5, 30)
                if p["placement"] == "tool_args":
                    pending.extend(self.tool_args_step(add, p, chat_id, ToolCallRequest, parse_tool_arguments))
                else:
                    pending.extend(self.tool_result_step(add, p, ToolCallRequest))
            self.tick(5, 40)
            if q and q[0]["placement"] == "session_assistant":
                p = q.pop(0)
                idx = add("assistant", p["pasted"])
                pending.append((idx, p, "session_assistant", "content", between(marked(p)), {}))
            else:
                add("assistant", self.rng.choice(ASSISTANT_FILLERS))
        self.sm.save(session)
        for idx, p, placement, field, written, extra in pending:
            self.record(p, placement, path, idx + 2, field, written, **extra)
        self.stamper.stamp()

    def tool_args_step(self, add, p, chat_id, ToolCallRequest, parse_tool_arguments):
        tool = ("write_file", "exec", "message")[self.tool_counter % 3]
        self.tool_counter += 1
        if tool == "write_file":
            n = self.tool_counter
            args = {"path": f"notes/snippet-{n}.txt", "content": p["pasted"]}
            field_name = "content"
        elif tool == "exec":
            args = {"command": p["pasted"]}
            field_name = "command"
        else:
            args = {"channel": "telegram", "chat_id": chat_id, "content": p["pasted"]}
            field_name = "content"
        verbatim = p["context"] == "json_after_unicode"
        if verbatim:
            # The model sent ensure_ascii JSON and stopped short (max tokens): the
            # raw string is not valid JSON, so nanobot keeps it verbatim.
            raw = json.dumps(args, ensure_ascii=True)[:-2]
        else:
            raw = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
        cid = self.call_id()
        tc = ToolCallRequest(id=cid, name=tool, arguments=parse_tool_arguments(raw)).to_openai_tool_call()
        idx = add("assistant", "", tool_calls=[tc])
        stored = tc["function"]["arguments"]
        written = written_json(p, ensure_ascii=verbatim)
        assert written in stored, (p["item"], p["context"])
        if verbatim:
            result = (f"Error: Tool '{tool}' parameters must be a JSON object, got str. Use named parameters "
                      'like tool_name(param1="value1", param2="value2") matching the tool schema.')
        elif tool == "write_file":
            result = f"Successfully wrote {len(p['pasted'])} characters to {self.workspace / args['path']}"
        elif tool == "exec":
            result = "\nExit code: 0"
        else:
            result = f"Message sent to telegram:{chat_id}"
        add("tool", result, tool_call_id=cid, name=tool)
        extra = {"tool": tool, "arg": field_name}
        if verbatim:
            extra["args_kept_verbatim"] = True
        return [(idx, p, "tool_args", "tool_calls/0/function/arguments", written, extra)]

    def tool_result_step(self, add, p, ToolCallRequest):
        rel = "app/.env"
        out = asyncio.run(self.write_tool.execute(path=rel, content=p["pasted"]))
        assert out.startswith("Successfully wrote"), out
        self.last_file = p
        use_exec = self.result_counter % 2 == 1
        self.result_counter += 1
        cid = self.call_id()
        if use_exec:
            tool, args = "exec", {"command": f"cat {rel}"}
            result = asyncio.run(self.exec_tool.execute(command=f"cat {rel}"))
            written = between(marked(p))
        else:
            tool, args = "read_file", {"path": rel}
            result = asyncio.run(self.read_tool.execute(path=rel, force=True))
            written = between(read_file_numbered(marked(p)))
        assert isinstance(result, str) and written in result, (p["item"], p["context"], result[:200])
        tc = ToolCallRequest(id=cid, name=tool, arguments=args).to_openai_tool_call()
        add("assistant", "", tool_calls=[tc])
        idx = add("tool", result, tool_call_id=cid, name=tool)
        return [(idx, p, "tool_result", "content", written, {"tool": tool})]

    # -- WebUI sessions ------------------------------------------------------------

    def webui_session(self, chat_id: str, queue: list[dict]) -> None:
        from nanobot.webui.outbound_wire import encode_turn_end
        from nanobot.webui.session_identity import webui_session_key
        from nanobot.webui.transcript import webui_transcript_path

        key = webui_session_key(chat_id)
        session = self.sm.get_or_create(key)
        spath = self.sm.sessions_dir / f"{self.sm._storage_key(key)}.jsonl"
        tpath = webui_transcript_path(key)
        pending: list[tuple[int, dict, str, str, str]] = []
        q = list(queue)
        while q:
            self.tick()
            turn = self.chat_uuid()
            meta = self.recorder.client_turn_metadata(turn)
            p = q.pop(0) if q[0]["placement"] == "webui_user" else None
            text = p["pasted"] if p else self.rng.choice(USER_FILLERS)
            assert self.recorder.append_user_message(chat_id, text, metadata=meta)
            self.transcript_lines[key] = self.transcript_lines.get(key, 0) + 1
            if p:
                self.record(p, "webui_user", tpath, self.transcript_lines[key], "text", between(marked(p)))
            session.add_message("user", text)
            if p:
                pending.append((len(session.messages) - 1, p, "session_user", "content", between(marked(p))))
            self.tick(5, 60)
            p = q.pop(0) if q and q[0]["placement"] == "webui_assistant" else None
            text = p["pasted"] if p else self.rng.choice(ASSISTANT_FILLERS)
            event = {"event": "stream_end", "chat_id": chat_id,
                     "stream_id": f"{key}:{self.clock.now_ms() * 1_000_000}:0", "text": text}
            assert self.recorder.prepare_and_append_stream_event(
                chat_id, event, completed_text=text, metadata=meta, phase="answer", include_source=True)
            self.transcript_lines[key] += 1
            if p:
                self.record(p, "webui_assistant", tpath, self.transcript_lines[key], "text", between(marked(p)))
            session.add_message("assistant", text)
            if p:
                pending.append((len(session.messages) - 1, p, "session_assistant", "content", between(marked(p))))
            end = SimpleNamespace(latency_ms=None, goal_state={"active": False}, usage=None, round_usages=[],
                                  context_window_tokens=200000, outcome="completed", failure_kind=None,
                                  failure_error_kind=None, failure_attempts=None, failure_message=None)
            assert self.recorder.prepare_and_append(chat_id, dict(encode_turn_end(chat_id, end, meta)),
                                                    metadata=meta, phase="complete")
            self.transcript_lines[key] += 1
        self.sm.save(session)
        for idx, p, placement, field, written in pending:
            self.record(p, placement, spath, idx + 2, field, written, via="webui")
        self.stamper.stamp()

    # -- CLI history, memory history -------------------------------------------------

    def cli_entries(self, queue: list[dict]) -> None:
        for p in queue:
            self.tick(30, 120)
            before = self.cli_path.read_text(encoding="utf-8").count("\n") if self.cli_path.exists() else 0
            self.cli.append_string(p["pasted"])
            written = between(cli_lines(marked(p)))
            self.record(p, "cli_history", self.cli_path, before + 3, None, written, raw=True)
        self.stamper.stamp()

    def memory_entries(self, queue: list[dict], session_keys: list[str]) -> None:
        for n, p in enumerate(queue):
            self.tick(30, 120)
            role = ("user", "assistant")[n % 2]
            msg = {"role": role, "content": p["pasted"], "timestamp": datetime.now().isoformat()}
            self.memory.raw_archive([msg], session_key=session_keys[n % len(session_keys)])
            self.memory_lines += 1
            self.record(p, "memory_history", self.memory.history_file, self.memory_lines, "content",
                        between(marked(p)))
        self.stamper.stamp()

    # -- torn lines -----------------------------------------------------------------

    def torn_session(self, key: str, p: dict, user_first: bool, cut_inside: bool) -> None:
        """A session whose last line holds ``p`` and is then truncated (a crash)."""
        session = self.sm.get_or_create(key)
        path = self.sm.sessions_dir / f"{self.sm._storage_key(key)}.jsonl"
        self.tick()
        session.add_message("user", "can you keep this safe for me?")
        self.tick()
        session.add_message("assistant", "Sure, paste it.")
        self.tick()
        session.add_message("user" if user_first else "assistant", p["pasted"])
        self.sm.save(session)
        data = path.read_bytes()
        lines = data.split(b"\n")
        assert lines[-1] == b""
        last = lines[-2].decode("utf-8")
        esc = written_json(p, ensure_ascii=False)
        at = last.index(esc)
        # the simulated crash: keep the file up to a point inside the last record
        keep = at + (len(esc) // 2 if cut_inside else len(esc) + 3)
        torn = last[:keep]
        head = b"\n".join(lines[:-2]) + b"\n"
        path.write_bytes(head + torn.encode("utf-8"))
        written = esc[: len(esc) // 2] if cut_inside else esc
        rec_extra = {"raw": True, "torn_at_byte": len(head) + len(torn.encode("utf-8"))}
        if cut_inside:
            rec_extra["cut"] = True
        self.record(p, "torn_line", path, len(lines) - 1, None, written, **rec_extra)
        self.stamper.stamp()

    # -- sidebar index ------------------------------------------------------------------

    def sidebar(self, anchors: dict[str, dict]) -> None:
        from nanobot.webui.session_list_index import list_webui_sessions

        self.stamper.stamp()
        list_webui_sessions(self.sm)
        ipath = self.sm.sessions_dir / ".webui_session_index.json"
        rows = json.loads(ipath.read_text(encoding="utf-8"))["sessions"]
        corpus = json.loads(Path(os.environ["NANOLOAD_SECRETS_CORPUS"]).read_text(encoding="utf-8"))
        also = {q["id"]: q.get("also_secret", []) for q in corpus["positives"]}
        self.absent: list[dict] = []
        for k, row in enumerate(rows):
            p = anchors.get(row["key"])
            if p is None:
                continue
            text, start, end = preview_span(p["pasted"], p["span"])
            if len(text) > PREVIEW_MAX:
                shown = text[: PREVIEW_MAX - 1].rstrip()
                expect = shown + "…"
            else:
                shown, expect = text, text
            assert row["preview"] == expect, (row["key"], row["preview"], expect)
            if start >= len(shown):
                gone = {"id": p["item"], "context": p["context"], "path": self.rel(ipath),
                        "field": f"sessions/{k}/preview"}
                shown_also = [a for a in also.get(p["item"], []) if a in row["preview"]]
                if shown_also:
                    gone["also_secret_shown"] = shown_also  # must still vanish
                self.absent.append(gone)
                continue
            written = text[start:min(end, len(shown))]
            extra = {"cut": True} if end > len(shown) else {}
            self.record(p, "sidebar_preview", ipath, 1, f"sessions/{k}/preview", written, **extra)
        self.stamper.stamp()


def verify(home: Path, records: list[dict]) -> None:
    """Every planting's ``written`` (or needle) is where the record says."""
    cache: dict[str, list[str]] = {}
    corpus = json.loads(Path(os.environ["NANOLOAD_SECRETS_CORPUS"]).read_text(encoding="utf-8"))
    needles = {p["id"]: p["value"] for p in corpus["positives"]}
    needles.update({n["id"]: n["text"] for n in corpus["negatives"]})
    for r in records:
        path = home / r["path"]
        want = r.get("written", needles[r["id"]])
        if r["placement"] == "workspace_file":
            assert want in path.read_text(encoding="utf-8"), r
            continue
        if r["path"] not in cache:
            cache[r["path"]] = path.read_bytes().decode("utf-8").split("\n")
        line = cache[r["path"]][r["line"] - 1]
        if r.get("raw"):
            if r["placement"] == "cli_history":
                block = "\n".join(cache[r["path"]][r["line"] - 1:])
                assert block.startswith("+") and want in block.split("\n\n#", 1)[0], r
            else:
                assert want in line, r
            continue
        node: Any = json.loads(line)
        for part in r["field"].split("/"):
            node = node[int(part)] if isinstance(node, list) else node[part]
        assert isinstance(node, str) and want in node, (r, node[:200] if isinstance(node, str) else node)


def worker(spec_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    clock = env.install(spec["seed"], "plant", spec["start_ms"], spec["tz"])

    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")

    corpus = json.loads(Path(spec["corpus"]).read_text(encoding="utf-8"))
    os.environ["NANOLOAD_SECRETS_CORPUS"] = spec["corpus"]
    items, plantings = plan(corpus)
    # the script's own words must not look like any value (the corpus invariant, extended)
    value_grams: set[str] = set()
    for p in corpus["positives"]:
        for v in [p["value"], *p.get("also_secret", [])]:
            value_grams |= grams(v)
    for words in USER_FILLERS + ASSISTANT_FILLERS + ["can you keep this safe for me?", "Sure, paste it."]:
        assert not grams(words) & value_grams, words
    by_item: dict[str, list[dict]] = {}
    for p in plantings:
        by_item.setdefault(p["item"], []).append(p)

    # One session per item, opened by one of its user-side plantings, so that
    # every item reaches a sidebar preview; the rest are dealt round-robin.
    anchors: list[dict] = []
    pick = random.Random(f"{spec['seed']}:anchors")
    for item in items:
        user_side = [p for p in by_item[item["id"]] if p["placement"] in ("session_user", "webui_user")]
        first = pick.choice(user_side)
        first["anchor"] = True
        anchors.append(first)
    rng = random.Random(f"{spec['seed']}:keys")
    chat, web = [], []
    for a in anchors:
        if a["placement"] == "session_user":
            chat.append({"key": f"telegram:{rng.randint(10**8, 10**10)}", "queue": [a]})
        else:
            web.append({"chat_id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "queue": [a]})
    rest = [p for p in plantings if not p.get("anchor")]
    ci = wi = 0
    cli_q, mem_q = [], []
    for p in rest:
        if p["placement"] in CHAT:
            chat[ci % len(chat)]["queue"].append(p)
            ci += 1
        elif p["placement"] in WEBUI:
            web[wi % len(web)]["queue"].append(p)
            wi += 1
        elif p["placement"] == "cli_history":
            cli_q.append(p)
        else:
            mem_q.append(p)

    pl = Planter(spec, clock)
    # interleave chat and WebUI sessions in time
    order = []
    for n in range(max(len(chat), len(web))):
        if n < len(chat):
            order.append(("chat", chat[n]))
        if n < len(web):
            order.append(("web", web[n]))
    anchor_by_key: dict[str, dict] = {}
    for kind, s in order:
        pl.clock.advance(rng.randint(300, 3600))
        if kind == "chat":
            pl.chat_session(s["key"], s["queue"])
            anchor_by_key[s["key"]] = s["queue"][0]
        else:
            pl.webui_session(s["chat_id"], s["queue"])
            anchor_by_key["websocket:" + s["chat_id"]] = s["queue"][0]
    pl.cli_entries(cli_q)
    pl.memory_entries(mem_q, [s["key"] for s in chat])
    # the last file WriteFileTool wrote stays in the workspace
    last = pl.last_file
    pl.record(last, "workspace_file", pl.workspace / "app" / ".env", 1, None, between(marked(last)))
    # two crashes: a private key cut inside its body, an OpenAI key whose record is cut after it
    pos = {p["id"]: p for p in corpus["positives"]}
    ctx = {c["id"]: c for c in corpus["contexts"]}
    for key, pid, cid, user_first, inside in (("telegram:4000000001", "p-private_key-1", "markdown_fence", False, True),
                                              ("telegram:4000000002", "p-openai-1", "prose", True, False)):
        item = pos[pid]
        pasted, vs, ve = render(ctx[cid], item["text"], item["value"])
        p = {"item": pid, "context": cid, "placement": "torn_line", "pasted": pasted, "span": (vs, ve),
             "needle": item["value"]}
        pl.clock.advance(600)
        pl.torn_session(key, p, user_first, inside)
    pl.sidebar(anchor_by_key)
    verify(pl.home, pl.records)
    result = {"plantings": pl.records, "absent_from_preview": pl.absent,
              "sessions": {"chat": len(chat), "webui": len(web), "torn": 2}}
    Path(spec["result"]).write_text(json.dumps(result, ensure_ascii=False), encoding="utf-8")


# ---------------------------------------------------------------------------
# orchestrator
# ---------------------------------------------------------------------------


def provenance(out: Path, corpus_path: Path, corpus: dict, seed: int, result: dict, archive: str) -> str:
    recs = result["plantings"]
    placements = ["session_user", "session_assistant", "tool_args", "tool_result", "webui_user",
                  "webui_assistant", "sidebar_preview", "cli_history", "memory_history",
                  "workspace_file", "torn_line"]
    ctx_ids = [c["id"] for c in corpus["contexts"]]
    matrix = {c: {pl: 0 for pl in placements} for c in ctx_ids}
    for r in recs:
        matrix[r["context"]][r["placement"]] += 1
    head = "| context | " + " | ".join(placements) + " |"
    rows = [head, "|" + "---|" * (len(placements) + 1)]
    for c in ctx_ids:
        rows.append(f"| {c} | " + " | ".join(str(matrix[c][pl]) or "" for pl in placements) + " |")
    total = {pl: sum(matrix[c][pl] for c in ctx_ids) for pl in placements}
    rows.append("| **total** | " + " | ".join(str(total[pl]) for pl in placements) + " |")
    pairs = {(r["id"], r["context"]) for r in recs}
    cut = sum(1 for r in recs if r.get("cut") and r["placement"] == "sidebar_preview")
    changed = sum(1 for r in recs if "written" in r)
    sha = hashlib.sha256(corpus_path.read_bytes()).hexdigest()
    n_items = len(corpus["positives"]) + len(corpus["negatives"])
    return f"""# nanobot-corpus: the secrets corpus planted in a nanobot 0.3.5 home

Generated by `tests/secrets/plant_nanobot.py` (seed **{seed}**) from
`tests/secrets/corpus.json` (sha256 `{sha}`; itself generated by
`tests/secrets/make_corpus.py --seed {corpus['seed']}`), with nanobot-ai **0.3.5** and
the dependencies pinned in `tests/realwriter/requirements.lock`, time zone
**{TZ}**, clock frozen at {START_LOCAL} and moved only by the script (time-machine,
`tick=False`), HOME `{FIXED_HOME}` while generating. `{archive}` holds the home
(no `.git`: no memory versioning ran, so it is a plain directory); `planted.json`
says where every planting stands. Every credential is a fake drawn from the
corpus seed: shaped like a real one, valid nowhere.

Regenerate (both steps are deterministic; running them twice gives the same bytes):

```sh
python3.11 tests/secrets/make_corpus.py
venv=$(tests/realwriter/setup.sh | tail -n 1)
$venv/bin/python tests/secrets/plant_nanobot.py
```

## What wrote what

Only nanobot's own functions write files; the script builds message dicts and
calls them, in one process set up like the real-writer harness
(`tests/realwriter/harness/env.py`: `env.install` freezes the clock and seeds
`uuid4`/`secrets` for nanobot's calls, PYTHONHASHSEED=0; `MtimeStamper` gives
files the simulated time after each step).

| file | written by |
|---|---|
| `.nanobot/config.json` | `nanobot.config.loader.save_config(Config())` |
| `.nanobot/sessions/<workspace id>/*.jsonl` | `SessionManager.save` (`JsonlSessionStore._save_unlocked`) of sessions from `SessionManager.get_or_create`; text messages added with `Session.add_message`, tool-call and tool messages appended as dicts in the key order `AgentLoop._save_turn` keeps; tool calls built by `ToolCallRequest(..., arguments=parse_tool_arguments(raw)).to_openai_tool_call()` as the OpenAI-compatible provider does |
| `.nanobot/sessions/<workspace id>/.webui_session_index.json` | `nanobot.webui.session_list_index.list_webui_sessions(SessionManager)` |
| `.nanobot/webui/websocket_<chat id>.jsonl` | `WebUITranscriptRecorder.append_user_message`, `.prepare_and_append_stream_event` (`stream_end`), `.prepare_and_append` (`turn_end` from `encode_turn_end`) |
| `.nanobot/history/cli_history` | `nanobot.cli.terminal.SafeFileHistory(...).append_string` (prompt_toolkit `FileHistory.store_string`) |
| `.nanobot/workspace/memory/history.jsonl`, `.cursor` | `MemoryStore(workspace).raw_archive([message], session_key=...)` |
| `.nanobot/workspace/app/.env` | `WriteFileTool.execute` (read back by `ReadFileTool.execute` / `ExecTool.execute("cat …")` for the tool results) |
| `.nanobot/workspace/.nanobot/workspace-id`, `sessions/<id>/.workspace`, lock files | `SessionManager(workspace)` / `JsonlSessionStore` |

Composed by the script in nanobot's formats (not produced by running the
tool): the results of `write_file` ("Successfully wrote N characters to …"),
`exec` of a pasted command ("\\nExit code: 0"), `message` ("Message sent to …"),
and the registry error for arguments nanobot could not parse.

**The one step that is not nanobot's code:** after `SessionManager.save`, the
script truncates the last JSONL line of two session files to simulate a crash
mid-write (`telegram:4000000001`: inside a private key's base64 body;
`telegram:4000000002`: three bytes after an OpenAI key, the record unclosed).
nanobot's own reader (`JsonlSessionStore.repair`) skips such a line; the
sidebar index was built after the tear.

Git keeps neither the empty directory `.nanobot/media/` (nanobot creates it)
nor mtimes: the index's `mtime_ns` are the simulated times the files had when
it was built, so after a checkout nanobot itself would consider the index
stale and rebuild it; its previews are what nanobot wrote.

## Coverage

{n_items} items ({len(corpus['positives'])} positives, {len(corpus['negatives'])} negatives), {len(pairs)} (item, context) pairs, all
of them planted; {len(recs)} plantings in {result['sessions']['chat']} chat sessions, {result['sessions']['webui']} WebUI chats
(session + transcript), {result['sessions']['torn']} torn sessions, the CLI history and the memory history.
Every item opens one session, so every item reaches a sidebar preview:
{total['sidebar_preview']} previews hold (part of) their needle, {cut} of them cut short
(`"cut": true`), {len(result['absent_from_preview'])} lose it entirely to the 119-character cut
(listed in `planted.json` `absent_from_preview`). {changed} plantings record a
`written` form that differs from the needle.

Plantings by context and placement (a WebUI planting also counts once in
`session_user`/`session_assistant`, `"via": "webui"`, for nanobot's session copy):

{chr(10).join(rows)}

## What nanobot's storage does to a pasted value

* Session JSONL, WebUI transcript, memory history: JSON with
  `ensure_ascii=False`; the decoded string is the pasted text unchanged.
* Tool arguments: nanobot parses the provider's raw arguments
  (`parse_tool_arguments`) and stores `json.dumps(args, ensure_ascii=False)`
  (separators `", "`, `": "`). So in the stored arguments string a pasted
  line break is `\\n`, a tab `\\t`, a quote `\\"`, a backslash `\\\\`, a control
  character `\\u001b`; non-ASCII stays raw. A `\\uXXXX` escape of a non-ASCII
  character survives only in arguments nanobot could not parse (kept
  verbatim): the `json_after_unicode` plantings are such truncated, ensure_ascii
  arguments (`"args_kept_verbatim": true`).
* `read_file` results: CRLF becomes LF and every line gets `N| `, so a
  multi-line needle is interrupted by line numbers (`written`).
* CLI history: every line of an entry gets a leading `+` (`written`); CR stays.
* Sidebar preview: line breaks and runs of whitespace become one space, then
  the text is cut to 119 characters, right-stripped, plus `…`.
* `history.jsonl` (raw archive): the entry is `[RAW] 1 messages\\n[<time>] ROLE: <text>`, right-stripped.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--keep", action="store_true", help=f"keep {FIXED_ROOT} for debugging")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker)
        return

    import generate  # tests/realwriter/generate.py: fixed_root, export_home

    corpus_path = args.corpus.resolve()
    corpus = json.loads(corpus_path.read_text(encoding="utf-8"))
    out = args.out.resolve()
    with generate.fixed_root(FIXED_ROOT, (FIXED_HOME, WORK_DIR, FIXED_ROOT / "tmp"), keep=args.keep):
        start_ms = env.local_to_utc_ms(datetime.fromisoformat(START_LOCAL), ZoneInfo(TZ))
        spec = {"seed": args.seed, "tz": TZ, "start_ms": start_ms, "corpus": str(corpus_path),
                "result": str(WORK_DIR / "result.json")}
        spec_path = WORK_DIR / "spec.json"
        spec_path.write_text(json.dumps(spec), encoding="utf-8")
        log = WORK_DIR / "worker.log"
        environ = env.worker_environ(FIXED_HOME, TZ)
        environ["TMPDIR"] = str(FIXED_ROOT / "tmp")
        with open(log, "wb") as stderr:
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", str(spec_path)],
                                  cwd=WORK_DIR, env=environ,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr, timeout=1800)
        if proc.returncode != 0:
            sys.stderr.write(log.read_text(encoding="utf-8", errors="replace"))
            raise SystemExit(f"worker failed with exit code {proc.returncode}")
        result = json.loads((WORK_DIR / "result.json").read_text(encoding="utf-8"))
        archive = "home.tar.gz" if generate.export_home(FIXED_HOME, out) else "home/"
        planted = {"nanobot": "0.3.5", "seed": args.seed, "corpus": "tests/secrets/corpus.json",
                   "corpus_sha256": hashlib.sha256(corpus_path.read_bytes()).hexdigest(),
                   "home": archive, "home_while_generating": str(FIXED_HOME), "tz": TZ,
                   "plantings": result["plantings"], "absent_from_preview": result["absent_from_preview"]}
        (out / "planted.json").write_text(json.dumps(planted, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                          encoding="utf-8")
        (out / "PROVENANCE.md").write_text(provenance(out, corpus_path, corpus, args.seed, result, archive),
                                           encoding="utf-8")
        print(f"{out}: {len(result['plantings'])} plantings", file=sys.stderr)


if __name__ == "__main__":
    main()
