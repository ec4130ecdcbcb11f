#!/usr/bin/env python3
"""Generate nanobot homes in the pre-namespace layouts, written by old nanobot releases.

Every store file in the generated homes is written by the code of a released
``nanobot-ai`` wheel from PyPI (pinned, with hashes, in ``requirements-*.lock``
beside this file); this script only drives that code (agent loops with a
scripted LLM provider, session managers) under a fixed HOME, a fixed time zone
and a frozen, explicitly advanced clock, and then reads the result back with
nanobot 0.3.5's own readers to write ``facts.json`` (see ../FACTS.md).

Homes (under ``fixtures/realwriter/``):

``legacy-history``
    A user who stopped at nanobot 0.1.4.post6: pre-namespace global session
    files from 0.1.3.post7 (``~/.nanobot/sessions/<key ':'→'_'>.jsonl``),
    workspace session files from 0.1.4.post6
    (``<workspace>/sessions/<key ':'→'_'>.jsonl``) and the legacy
    ``memory/HISTORY.md`` that both releases append to.
``legacy-upgrade``
    The same history, continued with 0.3.0 (workspace base64 file names, its
    memory store migrates HISTORY.md), then 0.3.5 whose workspace-to-namespace
    migration cannot remove the workspace files (the unlink fails with
    EACCES, so every source stays behind), a downgrade to 0.3.0 and a
    restart of 0.3.5 (genuine ``.migration-conflicts/`` of both kinds).

Usage::

    python3 tests/realwriter/legacy/generate_legacy.py --setup   # venvs from the locks
    python3 tests/realwriter/legacy/generate_legacy.py           # both homes → fixtures/
    python3 tests/realwriter/legacy/generate_legacy.py --out DIR --check-runs 20

The orchestrator needs only the standard library; each stage runs in the
venv of its nanobot release (``--stage``, internal).
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
GEN_ROOT = Path("/tmp/nanoload-legacy")
GEN_HOME = GEN_ROOT / "home"
TZ_NAME = "Europe/Berlin"
SEED = 1
VERSIONS = ("0.1.3.post7", "0.1.4.post6", "0.3.0", "0.3.5")
VENV_ROOT = Path(os.environ.get("NANOLOAD_LEGACY_VENVS", "/tmp/nanoload-legacy-venvs"))
INSTANCE = ".nanobot"
WORKSPACE_REL = ".nanobot/workspace"


def lock_path(version: str) -> Path:
    return HERE / f"requirements-{version}.lock"


def venv_python(version: str) -> Path:
    return VENV_ROOT / version / "bin" / "python"


# ---------------------------------------------------------------------------
# Stage side: runs inside the venv of one nanobot release
# ---------------------------------------------------------------------------


class Clock:
    """A frozen clock (time-machine, tick=False) that only moves when told."""

    def __init__(self, start_iso: str):
        import time_machine

        self._traveller = time_machine.travel(datetime.fromisoformat(start_iso), tick=False)
        self._coords = self._traveller.start()

    def advance(self, seconds: float) -> None:
        self._coords.shift(timedelta(seconds=seconds))

    def now_iso(self) -> str:
        return datetime.now().astimezone().isoformat()

    def epoch(self) -> float:
        import time

        return time.time()


def stage_setup(args: dict[str, Any]) -> Clock:
    """Determinism and isolation for one stage process."""
    import random
    import secrets
    import socket
    import time
    import uuid

    time.tzset()
    rng = random.Random(f"{SEED}:{args['stage']}")

    def token_bytes(n: int | None = None) -> bytes:
        return rng.randbytes(32 if n is None else n)

    def token_hex(n: int | None = None) -> str:
        return token_bytes(n).hex()

    secrets.token_bytes = token_bytes  # type: ignore[assignment]
    secrets.token_hex = token_hex  # type: ignore[assignment]
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)  # type: ignore[assignment]

    def no_network(*_a: Any, **_k: Any) -> None:
        raise OSError("network disabled in the legacy generator")

    socket.socket.connect = no_network  # type: ignore[assignment]
    socket.create_connection = no_network  # type: ignore[assignment]
    try:  # tiktoken would try to download its encodings: fail fast instead
        import tiktoken

        def no_encoding(*_a: Any, **_k: Any) -> None:
            raise OSError("tiktoken encodings are not available offline")

        tiktoken.get_encoding = no_encoding  # type: ignore[assignment]
    except ImportError:
        pass
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level=os.environ.get("LEGACY_LOG_LEVEL", "WARNING"))
    return Clock(args["start"])


class FsClock:
    """Keep file modification times on the simulated clock.

    The kernel stamps files with the real time, not the frozen one. After each
    turn every file under HOME that changed since the previous sync gets the
    simulated "now" as its mtime, as if the machine's clock had been the
    simulated one. nanobot reads mtimes in two places that matter here: the
    fallback timestamp of a HISTORY.md paragraph without a stamp
    (agent/memory.py `_legacy_fallback_timestamp`) and session files without
    an updated_at. File contents are never touched.
    """

    def __init__(self, home: Path):
        self.home = home
        self.seen: dict[str, tuple[int, int, int]] = self._scan()

    def _scan(self) -> dict[str, tuple[int, int, int]]:
        out = {}
        for root, _dirs, files in os.walk(self.home):
            for name in files:
                p = os.path.join(root, name)
                try:
                    st = os.lstat(p)
                except FileNotFoundError:
                    continue
                out[p] = (st.st_mtime_ns, st.st_size, st.st_ino)
        return out

    def sync(self) -> None:
        import time

        now = time.time_ns()
        for p, sig in self._scan().items():
            if self.seen.get(p) != sig:
                os.utime(p, ns=(now, now), follow_symlinks=False)
        self.seen = self._scan()


class Script:
    """The scripted model: a queue of responses, each advancing the clock."""

    def __init__(self, clock: Clock, calls: list[dict[str, Any]]):
        self.clock = clock
        self.queue: list[dict[str, Any]] = []
        self.calls = calls
        self.turn: dict[str, Any] | None = None

    def push(self, *responses: dict[str, Any]) -> None:
        self.queue.extend(responses)

    def next(self) -> dict[str, Any]:
        if not self.queue:
            raise RuntimeError("scripted model ran out of responses")
        spec = self.queue.pop(0)
        self.calls.append({"at": self.clock.now_iso(), "turn": self.turn})
        self.clock.advance(spec.get("secs", 2))
        return spec


def make_provider(script: Script, version: str) -> Any:
    from nanobot.providers import base

    class ScriptedProvider(base.LLMProvider):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            try:
                super().__init__(api_key=None, api_base=None, provider_name="scripted")
            except TypeError:  # releases before 0.3.5 take no provider_name
                super().__init__(api_key=None, api_base=None)

        async def chat(self, messages: list[dict[str, Any]], tools: Any = None, model: Any = None, **_kw: Any) -> Any:
            spec = script.next()
            calls = [
                base.ToolCallRequest(id=c["id"], name=c["name"], arguments=c["arguments"])
                for c in spec.get("tool_calls", [])
            ]
            usage: Any = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
            if hasattr(base, "LLMUsage"):  # 0.3.5: a typed usage object
                usage = None
            return base.LLMResponse(
                content=spec.get("content"),
                tool_calls=calls,
                finish_reason="tool_calls" if calls else "stop",
                usage=usage,
            )

        def get_default_model(self) -> str:
            return "scripted/legacy-model"

        def estimate_prompt_tokens(self, messages: Any, tools: Any = None, model: Any = None) -> tuple[int, str]:
            text = json.dumps(messages, ensure_ascii=False, default=str)
            return len(text) // 4, "scripted"

    return ScriptedProvider()


def text(content: str, secs: float = 2) -> dict[str, Any]:
    return {"content": content, "secs": secs}


def tool(call_id: str, name: str, arguments: dict[str, Any], content: str | None = None, secs: float = 2) -> dict[str, Any]:
    return {"content": content, "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}], "secs": secs}


def run_async(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)


# -- stage A: nanobot 0.1.3.post7 (global ~/.nanobot/sessions/, HISTORY.md) ----


def stage_a_0_1_3(args: dict[str, Any]) -> dict[str, Any]:
    clock = stage_setup(args)
    from nanobot.agent.loop import AgentLoop
    from nanobot.bus.events import InboundMessage
    from nanobot.bus.queue import MessageBus

    ws = Path(args["workspace"])
    ws.mkdir(parents=True, exist_ok=True)
    calls: list[dict[str, Any]] = []
    script = Script(clock, calls)
    fs = FsClock(Path(os.environ["HOME"]))
    loop = AgentLoop(bus=MessageBus(), provider=make_provider(script, "0.1.3.post7"), workspace=ws, memory_window=50)
    notes = ws / "notes.txt"

    async def cli(content: str) -> None:
        script.turn = {"key": "cli:direct"}
        await loop.process_direct(content, session_key="cli:direct")
        fs.sync()
        clock.advance(60)

    async def telegram(content: str) -> None:
        script.turn = {"key": "telegram:4242"}
        await loop._process_message(
            InboundMessage(channel="telegram", sender_id="4242", chat_id="4242", content=content)
        )
        fs.sync()
        clock.advance(45)

    async def main() -> None:
        script.push(text("Hallo Lena! I'll remember that you live in Köln."))
        await cli("Hi nanobot, I'm Lena. I live in Köln.")
        script.push(
            tool("call_a1", "write_file", {"path": str(notes), "content": "Buy oat milk\nCall Jonas\n"}),
            text("Saved your shopping note to notes.txt."),
        )
        await cli("Please write 'Buy oat milk' and 'Call Jonas' into notes.txt.")
        # /new: the 0.1.3 loop asks the model for a JSON consolidation, appends
        # history_entry verbatim to HISTORY.md and clears the session. This
        # model forgot the timestamp the prompt asks for.
        script.push(
            text(
                json.dumps(
                    {
                        "history_entry": "Lena (lives in Köln) introduced herself and had a shopping note saved to notes.txt.",
                        "memory_update": "# Memory\n- User: Lena, lives in Köln\n",
                    }
                ),
                secs=4,
            )
        )
        await cli("/new")
        script.push(text("We saved a shopping note earlier; it is in notes.txt."))
        await cli("What did I ask you to note down?")
        script.push(text("Hi! How can I help?"))
        await telegram("hello from telegram")
        script.push(text("It's 7 °C and cloudy in Köln."))
        await telegram("weather in Köln?")

    run_async(main())
    fs.sync()
    return {"calls": calls, "end": clock.now_iso()}


# -- stage B: nanobot 0.1.4.post6 (<workspace>/sessions/<key ':'→'_'>.jsonl) ----


def stage_b_0_1_4(args: dict[str, Any]) -> dict[str, Any]:
    clock = stage_setup(args)
    from nanobot.agent.loop import AgentLoop
    from nanobot.bus.events import InboundMessage
    from nanobot.bus.queue import MessageBus

    ws = Path(args["workspace"])
    calls: list[dict[str, Any]] = []
    script = Script(clock, calls)
    fs = FsClock(Path(os.environ["HOME"]))
    loop = AgentLoop(
        bus=MessageBus(),
        provider=make_provider(script, "0.1.4.post6"),
        workspace=ws,
        context_window_tokens=1_000_000,
    )
    notes = ws / "notes.txt"

    async def turn(key: str, content: str) -> None:
        script.turn = {"key": key}
        channel, chat_id = key.split(":", 1)
        if channel == "cli":
            await loop.process_direct(content, session_key=key)
        else:
            await loop._process_message(
                InboundMessage(channel=channel, sender_id="u777", chat_id=chat_id, content=content)
            )
        # /new archives in a background task; let it finish before going on
        await loop.close_mcp()
        fs.sync()
        clock.advance(60)

    def save_memory(call_id: str, entry: str, memory: str) -> dict[str, Any]:
        return tool(call_id, "save_memory", {"history_entry": entry, "memory_update": memory}, secs=3)

    async def main() -> None:
        # cli:direct continues: the global 0.1.3 file is moved into <workspace>/sessions/
        script.push(
            tool("call_b1", "read_file", {"path": str(notes)}),
            text("Your note says: Buy oat milk, Call Jonas."),
        )
        await turn("cli:direct", "Read my notes back to me.")
        script.push(text("Done — I'd suggest calling Jonas first."))
        await turn("cli:direct", "Which one first?")
        # discord:777 is new in 0.1.4.post6
        script.push(text("Welcome to the server, I'm nanobot."))
        await turn("discord:777", "hi bot")
        script.push(text("Sure: the meetup is on Friday at 19:00 in the Stadtbibliothek."))
        await turn("discord:777", "when is the meetup?")
        script.push(
            save_memory(
                "call_b2",
                "[2026-03-09 18:05] Discord user asked about the meetup: Friday 19:00, Stadtbibliothek.",
                "# Memory\n- User: Lena, lives in Köln\n- Meetup: Friday 19:00, Stadtbibliothek\n",
            )
        )
        await turn("discord:777", "/new")
        script.push(text("First paragraph of the agenda: welcome and introductions.\n\nSecond paragraph: talks, then pizza."))
        await turn("discord:777", "what's on the agenda?")
        # three consolidation attempts without a save_memory call: 0.1.4.post6
        # falls back to a raw archive of the messages ([RAW] entry)
        script.push(text("I cannot summarise right now.", secs=3), text("Still cannot.", secs=3), text("No.", secs=3))
        await turn("discord:777", "/new")
        script.push(text("Bring a laptop if you want to demo something."))
        await turn("discord:777", "anything to bring?")

    run_async(main())
    fs.sync()
    return {"calls": calls, "end": clock.now_iso()}


# -- stage C/F: nanobot 0.3.0 (<workspace>/sessions/<urlsafe-b64 key>.jsonl) ----


def agent_loop_030_or_035(script: Script, ws: Path, version: str) -> Any:
    from nanobot.agent.loop import AgentLoop
    from nanobot.bus.queue import MessageBus

    return AgentLoop(
        bus=MessageBus(),
        provider=make_provider(script, version),
        workspace=ws,
        context_window_tokens=1_000_000,
    )


async def direct_turn(
    loop: Any, script: Script, clock: Clock, key: str, content: str, *, fs: FsClock, gap: float = 60
) -> None:
    channel, chat_id = key.split(":", 1)
    script.turn = {"key": key}
    await loop.process_direct(content, session_key=key, channel=channel, chat_id=chat_id)
    script.turn = None
    fs.sync()
    clock.advance(gap)


def stage_c_0_3_0(args: dict[str, Any]) -> dict[str, Any]:
    clock = stage_setup(args)
    ws = Path(args["workspace"])
    calls: list[dict[str, Any]] = []
    script = Script(clock, calls)
    fs = FsClock(Path(os.environ["HOME"]))
    loop = agent_loop_030_or_035(script, ws, "0.3.0")
    fs.sync()

    async def main() -> None:
        script.push(text("You asked me to note: Buy oat milk, Call Jonas."))
        await direct_turn(loop, script, clock, "cli:direct", "Remind me of my notes please.", fs=fs)
        # 0.3.0's write_stdin tool (agent/tools/exec_session.py): 0.3.5 renames
        # it to exec_session and rewrites its arguments when it loads the
        # session (session/manager.py `_migrate_legacy_exec_session_records`),
        # so the next 0.3.5 save rewrites these records in place.
        script.push(
            tool("call_c0", "write_stdin", {"session_id": "sess_build", "chars": "status\n", "yield_time_ms": 500}),
            text("That shell session has already ended; there is nothing left to poll."),
        )
        await direct_turn(loop, script, clock, "cli:direct", "Poll my build shell session, please.", fs=fs)
        script.push(text("Morning! The standup is at 09:30."))
        await direct_turn(loop, script, clock, "slack:C0ABC", "when is standup?", fs=fs)
        script.push(
            tool("call_c1", "write_file", {"path": str(ws / "standup.md"), "content": "# Standup\n- 09:30 daily\n"}),
            text("Noted in standup.md."),
        )
        await direct_turn(loop, script, clock, "slack:C0ABC", "write that down in standup.md", fs=fs)

    run_async(main())
    return {"calls": calls, "end": clock.now_iso()}


# -- stages D/E and G/H: nanobot 0.3.5 (namespaced sessions) ----------------


def deny_workspace_session_unlinks(ws: Path) -> None:
    """The workspace's sessions/ directory refuses deletions (EACCES).

    0.3.5 copies every <workspace>/sessions/*.jsonl into its namespace and
    then unlinks the source (session/manager.py `_remove_migrated_source`).
    Here that unlink fails the way it does when the directory is not
    writable by the nanobot user; nanobot catches the OSError, logs
    "Session migrated but legacy source changed or could not be removed"
    and leaves the source behind. Nothing else is changed.
    """
    import errno
    import pathlib

    denied = (ws / "sessions").resolve()
    real_unlink = pathlib.Path.unlink

    def unlink(self: pathlib.Path, missing_ok: bool = False) -> None:
        if self.resolve().parent == denied:
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        real_unlink(self, missing_ok=missing_ok)

    pathlib.Path.unlink = unlink  # type: ignore[method-assign]


def turns_stage(
    args: dict[str, Any],
    version: str,
    turns: list[tuple[str, str, str]],
    *,
    deny_unlinks: bool,
    settle: bool,
) -> dict[str, Any]:
    """Start `version`'s AgentLoop on the workspace and run `turns`, each
    (session key, what the user types, what the model answers). With
    `deny_unlinks` the workspace's sessions/ refuses deletions (an
    interrupted migration); with `settle` the start's own writes are
    stamped and 30 s pass before the first turn."""
    clock = stage_setup(args)
    ws = Path(args["workspace"])
    if deny_unlinks:
        deny_workspace_session_unlinks(ws)
    calls: list[dict[str, Any]] = []
    script = Script(clock, calls)
    fs = FsClock(Path(os.environ["HOME"]))
    loop = agent_loop_030_or_035(script, ws, version)
    if settle:
        fs.sync()
        clock.advance(30)

    async def main() -> None:
        for key, content, reply in turns:
            script.push(text(reply))
            await direct_turn(loop, script, clock, key, content, fs=fs)

    run_async(main())
    fs.sync()
    return {"calls": calls, "end": clock.now_iso()}


def stage_de_0_3_5(args: dict[str, Any]) -> dict[str, Any]:
    """First start of 0.3.5 (interrupted migration), then a few turns."""
    return turns_stage(
        args,
        "0.3.5",
        [
            ("cli:direct", "I'm back after the update. What's in my notes?",
             "Welcome back, Lena. Your notes still say: Buy oat milk, Call Jonas."),
            ("slack:C0ABC", "standup moves to 10:00 from monday", "Standup moved to 10:00 from Monday, noted."),
        ],
        deny_unlinks=True,
        settle=True,
    )


def stage_f_0_3_0(args: dict[str, Any]) -> dict[str, Any]:
    """A downgrade to 0.3.0: it still reads <workspace>/sessions/, where the
    un-removed pre-migration copy of cli:direct is, and continues it there."""
    return turns_stage(
        args,
        "0.3.0",
        [("cli:direct", "Quick check on the old version: my notes?", "Your notes: Buy oat milk, Call Jonas.")],
        deny_unlinks=False,
        settle=False,
    )


def stage_gh_0_3_5(args: dict[str, Any]) -> dict[str, Any]:
    """0.3.5 again: the migration meets the left-behind workspace files."""
    return turns_stage(
        args,
        "0.3.5",
        [
            ("cli:direct", "Is oat milk on my list?", "Oat milk is on the list; Jonas is still to be called."),
            ("discord:777", "hey, what did we say about the meetup?",
             "Hi! I don't see an earlier conversation here. How can I help?"),
        ],
        deny_unlinks=True,
        settle=True,
    )


# -- facts: nanobot 0.3.5's own readers on a private copy --------------------


def stage_facts_0_3_5(args: dict[str, Any]) -> dict[str, Any]:
    """Read a private copy of a home with 0.3.5's own readers.

    1. Every legacy copy (a session JSONL that 0.3.5 does not load as a
       session: global pre-namespace files, <workspace>/sessions/ files,
       non-canonical names in the namespace, .migration-conflicts/) is read
       with 0.3.5's lenient session-file reader (`JsonlSessionStore.repair`
       with an explicit path), through a store on a scratch workspace so that
       nothing in the home moves before it is read. Its session key is the
       metadata line's "key"; files written by 0.1.3.post7 have none, and
       their key is what that release's `SessionManager.list_sessions`
       derives from the file name (stem with every "_" → ":").
    2. 0.3.5's `SessionManager(workspace)` starts on the copy (its
       workspace migration runs as on a real start) and returns every
       session with its messages.
    3. 0.3.5's `MemoryStore(workspace)` migrates a legacy HISTORY.md if the
       copy has one, and returns the journal entries.
    """
    stage_setup(args)
    import tempfile

    from nanobot.agent.memory import MemoryStore
    from nanobot.session.manager import JsonlSessionStore, SessionManager

    home = Path(os.environ["HOME"])
    ws = Path(args["workspace"])
    root = home / INSTANCE / "sessions"
    id_file = ws / ".nanobot" / "workspace-id"
    ns_on_disk = id_file.read_text(encoding="utf-8").strip() if id_file.exists() else None

    candidates: list[tuple[Path, str]] = []
    if root.is_dir():
        candidates += [(p, "global") for p in sorted(root.glob("*.jsonl"))]
        for ns_dir in sorted(d for d in root.iterdir() if d.is_dir()):
            candidates += [
                (p, "namespace-legacy-name")
                for p in sorted(ns_dir.glob("*.jsonl"))
                if JsonlSessionStore.session_key_from_path(p) is None
            ]
            candidates += [(p, "migration-conflict") for p in sorted((ns_dir / ".migration-conflicts").glob("*.jsonl"))]
    candidates += [(p, "workspace") for p in sorted((ws / "sessions").glob("*.jsonl"))]

    scratch = Path(tempfile.mkdtemp(prefix="legacy-reader-"))
    reader = JsonlSessionStore(scratch / "ws", sessions_root=scratch / "sessions")
    copies = []
    for path, layout in candidates:
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        key = first.get("key") if isinstance(first.get("key"), str) else path.stem.replace("_", ":")
        session = reader.repair(key, path=path)
        copies.append(
            {
                "rel": path.relative_to(home).as_posix(),
                "layout": layout,
                "key": key,
                # as 0.3.5 reads them (its reader renames write_stdin records)
                "messages": copy.deepcopy(session.messages) if session else [],
                # as stored on disk
                "raw_messages": read_jsonl_messages(path),
            }
        )
    shutil.rmtree(scratch)

    sm = SessionManager(ws)
    sessions = []
    for info in sorted(sm.list_sessions(), key=lambda i: i["key"]):
        session = sm.get_or_create(info["key"])
        sessions.append({"key": info["key"], "messages": copy.deepcopy(session.messages)})
    ns_dir = sm.sessions_dir

    legacy_md = ws / "memory" / "HISTORY.md"
    stamped: list[bool] | None = None
    legacy_text = legacy_md.read_text(encoding="utf-8") if legacy_md.exists() else None
    memory = MemoryStore(ws)
    if legacy_text is not None:
        normalized = legacy_text.replace("\r\n", "\n").replace("\r", "\n").strip()
        stamped = [
            bool(memory._LEGACY_TIMESTAMP_RE.match(chunk))
            for chunk in memory._split_legacy_history_chunks(normalized)
        ]
    history = memory.read_unprocessed_history(since_cursor=0)
    if stamped is not None:
        if len(stamped) != len(history):
            raise RuntimeError("HISTORY.md chunks and migrated entries disagree")
        for entry, has_stamp in zip(history, stamped):
            if not has_stamp:
                entry["timestamp_from_mtime"] = True
    return {
        "namespace": ns_dir.name,
        "namespace_on_disk": ns_on_disk,
        "workspace_marker": (ns_dir / ".workspace").read_text(encoding="utf-8"),
        "sessions": sessions,
        "legacy_copies": copies,
        "memory_history": history,
    }


def stage_facts_0_1_4(args: dict[str, Any]) -> dict[str, Any]:
    """Read a private copy of a home no 0.3.x ever opened with the reader of
    the release that wrote it last (0.1.4.post6): there the workspace and
    global files are the store of record. Its `SessionManager.list_sessions`
    lists the workspace's sessions; a global pre-namespace file is loaded
    (and moved into the workspace, on the copy) by `get_or_create` under the
    key 0.1.4.post6 derives from its name (the first "_" → ":")."""
    stage_setup(args)
    from nanobot.session.manager import SessionManager

    home = Path(os.environ["HOME"])
    ws = Path(args["workspace"])
    global_keys = [p.stem.replace("_", ":", 1) for p in sorted((home / INSTANCE / "sessions").glob("*.jsonl"))]
    sm = SessionManager(ws)
    keys = sorted({i["key"] for i in sm.list_sessions()} | set(global_keys))
    sessions = []
    for key in keys:
        session = sm.get_or_create(key)
        sessions.append({"key": key, "messages": copy.deepcopy(session.messages)})
    return {"sessions": sessions}


def read_jsonl_messages(path: Path) -> list[dict[str, Any]]:
    """The message records of a session JSONL exactly as stored (every line
    that is not a metadata or provider_state record, as nanobot's readers
    split them), without 0.3.5's in-memory write_stdin rename."""
    msgs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec.get("_type") in ("metadata", "provider_state"):
            continue
        msgs.append(rec)
    return msgs


STAGES = {
    "A": stage_a_0_1_3,
    "B": stage_b_0_1_4,
    "C": stage_c_0_3_0,
    "DE": stage_de_0_3_5,
    "F": stage_f_0_3_0,
    "GH": stage_gh_0_3_5,
    "facts": stage_facts_0_3_5,
    "facts_old": stage_facts_0_1_4,
}


def stage_main(name: str, args_json: str) -> None:
    args = json.loads(args_json)
    args["stage"] = name
    result = STAGES[name](args)
    sys.stdout.write("\n@@RESULT@@" + json.dumps(result, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------------------
# Orchestrator
# ---------------------------------------------------------------------------


def run_stage(name: str, version: str, home: Path, args: dict[str, Any]) -> dict[str, Any]:
    py = venv_python(version)
    if not py.exists():
        sys.exit(f"missing venv for nanobot {version}: run {sys.argv[0]} --setup")
    env = {
        "HOME": str(home),
        "TZ": TZ_NAME,
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "NANOBOT_MAX_CONCURRENT_REQUESTS": "1",
    }
    if "LEGACY_LOG_LEVEL" in os.environ:
        env["LEGACY_LOG_LEVEL"] = os.environ["LEGACY_LOG_LEVEL"]
    proc = subprocess.run(
        [str(py), str(Path(__file__).resolve()), "--stage", name, "--args", json.dumps(args)],
        env=env,
        cwd=str(home),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-8000:])
        sys.exit(f"stage {name} (nanobot {version}) failed with exit code {proc.returncode}")
    marker = proc.stdout.rfind("@@RESULT@@")
    return json.loads(proc.stdout[marker + len("@@RESULT@@"):])


def setup_venvs() -> None:
    for version in VERSIONS:
        target = VENV_ROOT / version
        if venv_python(version).exists():
            continue
        subprocess.run([sys.executable, "-m", "venv", str(target)], check=True)
        subprocess.run(
            [
                str(venv_python(version)), "-m", "pip", "install", "--quiet", "--no-deps",
                "--require-hashes", "--only-binary", ":all:", "-r", str(lock_path(version)),
            ],
            check=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stage")
    ap.add_argument("--args")
    ap.add_argument("--setup", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "fixtures" / "realwriter")
    ap.add_argument("--check-runs", type=int, default=1)
    a = ap.parse_args()
    if a.stage:
        stage_main(a.stage, a.args)
        return
    if a.setup:
        setup_venvs()
        return
    generate(a.out, a.check_runs)


# -- the timeline ---------------------------------------------------------

# (stage, nanobot release, simulated start in TZ_NAME)
TIMELINE_HISTORY = [
    ("A", "0.1.3.post7", "2026-03-02T09:00:00+01:00"),
    ("B", "0.1.4.post6", "2026-03-09T18:00:00+01:00"),
]
TIMELINE_UPGRADE = [
    ("C", "0.3.0", "2026-03-20T08:55:00+01:00"),
    ("DE", "0.3.5", "2026-03-30T09:10:00+02:00"),
    ("F", "0.3.0", "2026-04-02T20:15:00+02:00"),
    ("GH", "0.3.5", "2026-04-03T07:45:00+02:00"),
]


def build_homes() -> dict[str, Path]:
    """Run the timeline once; return the snapshot of each home (under GEN_ROOT)."""
    shutil.rmtree(GEN_ROOT, ignore_errors=True)
    GEN_HOME.mkdir(parents=True)
    ws = GEN_HOME / WORKSPACE_REL
    snaps: dict[str, Path] = {}
    for stage, version, start in TIMELINE_HISTORY:
        run_stage(stage, version, GEN_HOME, {"start": start, "workspace": str(ws)})
    snaps["legacy-history"] = GEN_ROOT / "snap-legacy-history"
    shutil.copytree(GEN_HOME, snaps["legacy-history"], symlinks=True)
    for stage, version, start in TIMELINE_UPGRADE:
        run_stage(stage, version, GEN_HOME, {"start": start, "workspace": str(ws)})
    snaps["legacy-upgrade"] = GEN_ROOT / "snap-legacy-upgrade"
    shutil.copytree(GEN_HOME, snaps["legacy-upgrade"], symlinks=True)
    return snaps


# -- facts ----------------------------------------------------------------


def local_to_utc(ts: str) -> str:
    from zoneinfo import ZoneInfo

    naive = datetime.fromisoformat(ts)
    aware = naive.replace(tzinfo=ZoneInfo(TZ_NAME))
    return aware.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") + (
        f".{aware.microsecond:06d}Z" if aware.microsecond else "Z"
    )


def content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(p for p in parts if isinstance(p, str))
    return None


def fact_message(index: int, m: dict[str, Any]) -> dict[str, Any]:
    role = m.get("role")
    hidden = role == "user" and bool(m.get("_hidden_history"))
    ts = m.get("timestamp")
    return {
        "index": index,
        "role": role,
        "timestamp": ts,
        "utc": local_to_utc(ts) if isinstance(ts, str) else None,
        "hidden": hidden,
        "text": content_text(m.get("content")),
        "tool_calls": [c.get("id") for c in m.get("tool_calls") or [] if isinstance(c, dict)]
        if role == "assistant"
        else [],
        "tool_call_id": m.get("tool_call_id") if role == "tool" else None,
    }


def secondary_rows(m: dict[str, Any]) -> list[dict[str, Any]]:
    """One session-JSONL message as nanoload maps that source (../FACTS.md)."""
    role = m.get("role")
    txt = content_text(m.get("content"))
    if role == "user":
        return [{"kind": "user", "call_id": None, "text": txt}]
    if role == "assistant":
        rows = [
            {"kind": "tool_use", "call_id": c.get("id"), "text": None}
            for c in m.get("tool_calls") or []
            if isinstance(c, dict)
        ]
        if txt or not rows:
            rows.append({"kind": "assistant", "call_id": None, "text": txt})
        return rows
    if role == "tool":
        return [{"kind": "tool_result", "call_id": m.get("tool_call_id"), "text": None}]
    raise ValueError(f"unexpected role in a legacy copy: {role!r}")


def canonical(v: Any) -> str:
    return json.dumps(v, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def compose_facts(name: str, snap: Path, read: dict[str, Any]) -> dict[str, Any]:
    ns = read["namespace_on_disk"]
    sessions = []
    held: dict[str, set[str]] = {}
    for s in read["sessions"]:
        held[s["key"]] = {canonical(m) for m in s["messages"]}
        sessions.append(
            {
                "instance": INSTANCE,
                "namespace": read["namespace"],
                "key": s["key"],
                "workspace": read["workspace_marker"].rstrip("\n") if read["workspace_marker"] else None,
                "messages": [fact_message(i, m) for i, m in enumerate(s["messages"])],
            }
        )
    by_key = {s["key"]: s["messages"] for s in read["sessions"]}
    secondary: list[dict[str, Any]] = []
    rewritten: list[dict[str, Any]] = []
    seen: set[tuple[Any, ...]] = set()
    for copy_ in read["legacy_copies"]:
        key = copy_["key"]
        copy_ns = None if copy_["layout"] == "global" else ns
        current = by_key.get(key, [])
        for index, raw in enumerate(copy_["raw_messages"]):
            if (
                index < len(current)
                and raw != current[index]
                and current[index].get("role") == raw.get("role")
                and current[index].get("timestamp") == raw.get("timestamp")
                and (key, index, canonical(raw)) not in seen
            ):
                # the stored record differs from the one nanobot holds at the
                # same position (same role, same timestamp): nanobot rewrote
                # it in place; the copy keeps the older version
                seen.add((key, index, canonical(raw)))
                rewritten.append(
                    {
                        "instance": INSTANCE,
                        "namespace": read["namespace"],
                        "key": key,
                        "index": index,
                        "old_text": content_text(raw.get("content")),
                        "new_text": content_text(current[index].get("content")),
                        "old_record": raw,
                        "new_record": current[index],
                        "copies": [c["rel"] for c in read["legacy_copies"]
                                   if c["key"] == key and index < len(c["raw_messages"]) and c["raw_messages"][index] == raw],
                    }
                )
        for index, m in enumerate(copy_["messages"]):
            if canonical(m) in held.get(key, set()):
                continue
            ident = (copy_ns, key, canonical(m))
            if ident in seen:
                continue
            seen.add(ident)
            if (
                index < len(current)
                and current[index].get("role") == m.get("role")
                and current[index].get("timestamp") == m.get("timestamp")
            ):
                # nanobot still holds this message, rewritten in place: an
                # older version of a held record, not a lost one
                raise RuntimeError(f"{key}[{index}]: a copy's record differs from the held one as 0.3.5 reads it")
            for row in secondary_rows(m):
                secondary.append(
                    {"instance": INSTANCE, "namespace": copy_ns, "key": key, "source": "nanobot.session_jsonl", **row}
                )
    memory = []
    for e in read["memory_history"]:
        entry = {
            "instance": INSTANCE,
            "workspace": WORKSPACE_REL,
            "timestamp": e["timestamp"],
            "content": e["content"],
        }
        if e.get("timestamp_from_mtime"):
            entry["timestamp_from_mtime"] = True
        memory.append(entry)
    return {
        "format": 1,
        "generator": {
            "scenario": name,
            "seed": SEED,
            "nanobot": "0.1.4.post6" if name == "legacy-history" else "0.3.5",
            "tz": TZ_NAME,
            "writers": sorted({v for _, v, _ in TIMELINE_HISTORY + (TIMELINE_UPGRADE if name == "legacy-upgrade" else [])}),
        },
        "archive": None,
        "exit_code": 0,
        "instances": [{"instance": INSTANCE, "offset_evidence": False}],
        "sessions": sessions,
        "secondary_only": secondary,
        "llm_usage": [],
        "llm_calls": [],
        "offsets": [],
        "secrets": [],
        "memory_history": memory,
        "rewritten": rewritten,
        "legacy_copies": [
            {"path": c["rel"], "layout": c["layout"], "key": c["key"], "messages": len(c["raw_messages"])}
            for c in read["legacy_copies"]
        ],
    }


def read_facts(name: str, snap: Path) -> dict[str, Any]:
    """Restore a snapshot at the fixed HOME and read it with 0.3.5's readers;
    a home that no 0.3.x ever opened (legacy-history) takes its sessions from
    the reader of the release that wrote it (stage_facts_0_1_4) and only its
    memory journal from 0.3.5 (whose migration of HISTORY.md is the expected
    cut)."""
    args = {"start": "2026-04-10T12:00:00+02:00", "workspace": str(GEN_HOME / WORKSPACE_REL)}
    shutil.rmtree(GEN_HOME, ignore_errors=True)
    shutil.copytree(snap, GEN_HOME, symlinks=True)
    res = run_stage("facts", "0.3.5", GEN_HOME, args)
    shutil.rmtree(GEN_HOME, ignore_errors=True)
    if name == "legacy-history":
        shutil.copytree(snap, GEN_HOME, symlinks=True)
        old = run_stage("facts_old", "0.1.4.post6", GEN_HOME, args)
        shutil.rmtree(GEN_HOME, ignore_errors=True)
        res.update(sessions=old["sessions"], legacy_copies=[], namespace=None, workspace_marker=None)
    return res


def write_home(snap: Path, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if any(p.name == ".git" for p in snap.rglob("*")):
        raise SystemExit("a .git/ appeared in a legacy home: write a tarball instead")
    shutil.copytree(snap, dest / "home", symlinks=True)


def tree_digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file():
            h.update(f"F {rel}\n".encode())
            h.update(p.read_bytes())
        elif p.is_dir():
            h.update(f"D {rel}\n".encode())
    return h.hexdigest()


def generate_once(out: Path) -> dict[str, str]:
    snaps = build_homes()
    digests = {}
    for name, snap in snaps.items():
        read = read_facts(name, snap)
        facts = compose_facts(name, snap, read)
        dest = out / name
        write_home(snap, dest)
        (dest / "facts.json").write_text(json.dumps(facts, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        (dest / "PROVENANCE.md").write_text(PROVENANCE[name], encoding="utf-8")
        digests[name] = hashlib.sha256((dest / "facts.json").read_bytes()).hexdigest()
        digests[name + "/home"] = tree_digest(dest / "home")
    return digests


def generate(out: Path, runs: int) -> None:
    first: dict[str, str] | None = None
    for i in range(runs):
        target = out if i == 0 else GEN_ROOT.parent / f"nanoload-legacy-check-{i}"
        digests = generate_once(target)
        if first is None:
            first = digests
        print(f"run {i + 1}/{runs}: " + " ".join(f"{k}={v[:12]}" for k, v in sorted(digests.items())))
        if digests != first:
            diff = sorted(k for k in digests if digests[k] != first.get(k))
            sys.exit(f"run {i + 1} differs from run 1 in: {', '.join(diff)}")
        if i:
            shutil.rmtree(target)
    shutil.rmtree(GEN_ROOT, ignore_errors=True)


_PROVENANCE_COMMON = """\
Generated by `tests/realwriter/legacy/generate_legacy.py` (run it again to
regenerate; it must reproduce this directory byte for byte). Every store file
under `home/` was written by the code of released `nanobot-ai` wheels from
PyPI, pinned with hashes in `tests/realwriter/legacy/requirements-<version>.lock`,
run unmodified. The generator only drives that code: agent loops
(`AgentLoop.process_direct` / `_process_message`) with a scripted LLM provider
(a subclass of each release's `LLMProvider`; no network), under HOME
`/tmp/nanoload-legacy/home` (absolute paths inside the files name it), time
zone Europe/Berlin and a frozen clock (time-machine, `tick=False`) that each
scripted model call advances by a few seconds. `secrets.token_*` and
`uuid.uuid4` are seeded in each process; sockets and tiktoken downloads are
disabled.

Not written by nanobot: nothing in the store files. File modification times
are moved onto the simulated clock after every turn (`FsClock`), because
nanobot reads them (the fallback timestamp of a HISTORY.md paragraph without a
stamp, agent/memory.py `_legacy_fallback_timestamp`); git does not keep them,
so a checkout has checkout-time mtimes.

`facts.json` (format: tests/realwriter/FACTS.md) comes from nanobot 0.3.5's
own readers run on a private copy of the home at the same HOME path:
`SessionManager(workspace)` (its start runs the workspace-to-namespace
migration as a real start would) for `sessions`; 0.3.5's lenient session-file
reader (`JsonlSessionStore.repair(key, path=…)`) for every legacy copy (global
files, `<workspace>/sessions/` files, non-canonical names in the namespace,
`.migration-conflicts/`), whose messages that 0.3.5's session does not hold
(record equality, after 0.3.5's own in-memory write_stdin rename) are
`secondary_only` (source `nanobot.session_jsonl`; namespace null for the
global directory and for a workspace without a workspace-id); `MemoryStore`
for `memory_history`. Extra top-level fields: `memory_history` (entries
0.3.5's MemoryStore returns; `timestamp_from_mtime: true` marks a paragraph
that had no `[YYYY-MM-DD HH:MM]` stamp, whose timestamp 0.3.5 takes from
HISTORY.md's mtime), `rewritten` (records a legacy copy stores in an older
form than the record 0.3.5 holds at the same position with the same role and
timestamp), `legacy_copies` (every legacy session file, its layout and key).
The key of a 0.1.3.post7 file (no "key" in its metadata line) is what that
release's `SessionManager.list_sessions` derives from the file name.
"""

PROVENANCE: dict[str, str] = {
    "legacy-history": """\
# legacy-history: a home last used with nanobot 0.1.4.post6

Timeline (Europe/Berlin):

1. 2026-03-02, **nanobot-ai 0.1.3.post7** (the last release with the global
   pre-namespace layout, `session/manager.py:70,72-76`): `cli:direct` (two
   turns, one with a `write_file` tool call; 0.1.3.post7 persists only the
   user text and the final answer with `tools_used`), `/new` (the model's JSON
   consolidation is appended to `memory/HISTORY.md` by
   `MemoryStore.append_history`, `agent/memory.py:24-26`; this scripted model
   left out the `[YYYY-MM-DD HH:MM]` stamp the prompt asks for, so HISTORY.md
   starts with an unstamped paragraph), one more `cli:direct` turn, and two
   `telegram:4242` turns. Files: `~/.nanobot/sessions/cli_direct.jsonl`,
   `telegram_4242.jsonl` (metadata line without "key", `json.dumps` with
   ASCII escapes).
2. 2026-03-09, **nanobot-ai 0.1.4.post6** (the last release that writes
   HISTORY.md; 0.1.5 and later migrate it): `cli:direct` continues, so its
   global file is moved to `<workspace>/sessions/cli_direct.jsonl`
   (`session/manager.py:173-180`) and rewritten with a "key"; `discord:777`
   (new, `<workspace>/sessions/discord_777.jsonl`) with two `/new`: the first
   consolidation succeeds (`save_memory` tool call → a stamped HISTORY.md
   entry), the second gets three answers without `save_memory` and falls back
   to a `[RAW]` archive whose message content contains a blank line
   (`agent/memory.py` `_raw_archive`). `telegram:4242` is never reopened, so
   its global file stays.

No later release ever ran: HISTORY.md is unmigrated. nanobot 0.3.5 started on
this home would move both workspace files into its namespace under their old
names, which it never loads, so `sessions` is empty and every message is
`secondary_only`.

""" + _PROVENANCE_COMMON,
    "legacy-upgrade": """\
# legacy-upgrade: the same history, upgraded through 0.3.0 to 0.3.5

Stages 1-2 as in `legacy-history`, then (Europe/Berlin):

3. 2026-03-20, **nanobot-ai 0.3.0**: its `MemoryStore` migrates HISTORY.md to
   `memory/history.jsonl` and renames it `HISTORY.md.bak` (the unstamped
   paragraphs get HISTORY.md's mtime as timestamp). `cli:direct` continues:
   0.3.0 moves `cli_direct.jsonl` to the base64 name
   `<workspace>/sessions/Y2xpOmRpcmVjdA.jsonl` (`_resolve_session_path`,
   `session/manager.py:510-543`); one turn calls 0.3.0's `write_stdin` tool.
   `slack:C0ABC` is new (`c2xhY2s6QzBBQkM.jsonl`, a `write_file` call).
   `discord_777.jsonl` keeps its old name (never reopened by 0.3.0).
4. 2026-03-30, **nanobot-ai 0.3.5** starts: `JsonlSessionStore` creates the
   workspace-id and namespace and copies all three `<workspace>/sessions/*.jsonl`
   into it under their own names (`session/manager.py` `_migrate_from_workspace`).
   The unlink of each source fails with EACCES (the generator makes
   `Path.unlink` raise `PermissionError` for that directory, as a
   non-writable `sessions/` would); nanobot catches it in
   `_remove_migrated_source` and leaves every source behind. One turn each in
   `cli:direct` (0.3.5 loads it, renaming the write_stdin records to
   exec_session in memory, and saves) and `slack:C0ABC`.
5. 2026-04-02, a downgrade to **0.3.0**: it reads the left-behind
   `<workspace>/sessions/Y2xpOmRpcmVjdA.jsonl` (without the 0.3.5 turn, with
   write_stdin) and adds a turn there.
6. 2026-04-03, **0.3.5** again (unlink still failing): for `cli:direct` the
   workspace file is newer, so the namespace file is archived as
   `.migration-conflicts/Y2xpOmRpcmVjdA.destination.<12 hex>.<8 hex>.jsonl`
   and the workspace version installed (the 0.3.5 turn of stage 4 now exists
   only in that conflict file: `secondary_only`); for `slack:C0ABC` the
   workspace file is older and is archived as
   `.migration-conflicts/c2xhY2s6QzBBQkM.workspace.<12 hex>.<8 hex>.jsonl`;
   `discord_777.jsonl` is identical and skipped; no source can be removed.
   Then a `cli:direct` turn (0.3.5 renames write_stdin again and saves, so
   the left-behind workspace copy keeps the older records: `rewritten`) and a
   `discord:777` turn, which starts an empty `ZGlzY29yZDo3Nzc.jsonl`: 0.3.5
   never reads the legacy-named `discord_777.jsonl`.

The global `~/.nanobot/sessions/telegram_4242.jsonl` is never read by 0.3.5.
No `llm_usage.sqlite3`: the scripted provider has no usage observer attached
(`providers/base.py` `_observe_llm_call` records only through one), so
`llm_usage`, `llm_calls` and `offsets` are empty.

""" + _PROVENANCE_COMMON,
}


if __name__ == "__main__":
    main()
