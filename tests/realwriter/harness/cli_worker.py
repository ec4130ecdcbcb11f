"""One ``nanobot agent --classic`` process, typed into by the harness.

Run as ``python -m harness.cli_worker SPEC.json RESULT.json`` (the main worker
starts it as a subprocess, like a user opening a second terminal while the
gateway runs).  It calls nanobot's own ``nanobot.cli.agent.agent`` command
function with ``classic=True`` (and ``--workspace`` / ``--config`` when the
spec says so).  That function builds the provider with ``make_provider`` --
no llm_usage observer, as in 0.3.5 -- creates the prompt_toolkit session with
nanobot's ``SafeFileHistory`` (``~/.nanobot/history/cli_history``) and runs
its read-eval loop.

Input is typed through a prompt_toolkit pipe input: before each prompt the
harness moves the clock to the entry's time, starts the entry's scripted
turn and writes the keystrokes (Enter submits, ESC+Enter inserts a newline,
Ctrl-D ends the session; ``exit`` is typed like a user would).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from . import env


def _keys(text: str) -> str:
    """Keystrokes for one prompt entry (multi-line via Alt+Enter)."""
    return "\x1b\r".join(text.split("\n")) + "\r"


async def _cancel_outbound_again() -> None:
    """Let the classic CLI exit even when Python 3.11 loses its one cancel.

    At exit ``run_interactive`` cancels its outbound consumer once
    (``cli/agent.py:439``); the consumer waits in ``asyncio.wait_for(...,
    timeout=1.0)`` and catches ``asyncio.TimeoutError`` to loop on
    (``:313,361-362``).  When the cancel meets the timeout, 3.11's
    ``wait_for`` raises TimeoutError and the cancel is gone: the task stays
    "cancelling" forever and the CLI never exits (seen once in a long
    ``scale`` run).  Cancel it again while it is in that state -- a second
    Ctrl-C; it changes nothing the CLI writes."""
    while True:
        await asyncio.sleep(0.5)
        for task in asyncio.all_tasks():
            name = getattr(task.get_coro(), "__qualname__", "")
            if name.endswith("._consume_outbound") and task.cancelling() and not task.done():
                task.cancel()


def main(spec_path: str, result_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    clock = env.install(spec["seed"], spec["worker"], spec["start_ms"], spec["tz"])

    from . import provider as prov

    prov.install_nanobot_hooks()
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")

    import nanobot.cli.agent as cli_agent
    import nanobot.cli.terminal as cli_terminal
    from nanobot.agent.loop import AgentLoop
    from nanobot.session.manager import JsonlSessionStore
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    # The classic CLI's agent loop scans for idle sessions when its inbound
    # queue is quiet (real time).  The harness runs that scan on the harness
    # clock instead: once before each typed entry (see scripted_read).
    loops: list[AgentLoop] = []
    original_init = AgentLoop.__init__

    def recording_init(self: AgentLoop, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self._next_idle_compact_check_at = float("inf")
        loops.append(self)

    AgentLoop.__init__ = recording_init  # type: ignore[method-assign]

    async def idle_scan() -> None:
        for loop in loops:
            script.begin_turn(None, [], label="idle-scan")
            loop._next_idle_compact_check_at = 0.0
            loop._check_expired_sessions_if_due()
            loop._next_idle_compact_check_at = float("inf")
            for _ in range(3000):
                if not loop._background_tasks:
                    break
                await asyncio.sleep(0.01)
            else:
                raise RuntimeError("CLI idle scan did not finish")
            script.end_turn()

    script = prov.Script(spec["instance"])
    prov.ScriptedProvider.SCRIPT = script
    entries: list[dict[str, Any]] = list(spec["entries"])
    session_ref = prov.SessionRef(spec["instance"], spec["workspace"], spec["session_key"])
    turns: list[dict[str, Any]] = []
    original_read = cli_terminal._read_interactive_input_async
    state: dict[str, Any] = {"index": 0, "open": None}

    def session_length() -> int:
        marker = Path(spec["workspace"]) / ".nanobot" / "workspace-id"
        if not marker.exists():
            return 0
        ns = marker.read_text(encoding="utf-8").strip()
        path = Path(spec["sessions_root"]) / ns / (JsonlSessionStore.storage_key(spec["session_key"]) + ".jsonl")
        if not path.exists():
            return 0
        count = 0
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip() and json.loads(line).get("_type") not in {"metadata", "provider_state"}:
                count += 1
        return count

    def close_open_turn() -> None:
        record = state["open"]
        if record is None:
            return
        script.end_turn()
        record["end_ms"] = clock.now_ms()
        record["after"] = session_length()
        turns.append(record)
        state["open"] = None

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):

        async def scripted_read() -> str:
            if "watchdog" not in state:
                state["watchdog"] = asyncio.get_running_loop().create_task(_cancel_outbound_again())
            close_open_turn()
            index = state["index"]
            if index >= len(entries):
                pipe.send_text("\x04")  # Ctrl-D: EOF ends the classic CLI
                return await original_read()
            entry = entries[index]
            state["index"] = index + 1
            if entry.get("at_ms") is not None:
                clock.move_to_ms(entry["at_ms"])
            else:
                if entry.get("gap_s", 0) <= 30:
                    raise RuntimeError("CLI entries must be more than 30 s apart")
                clock.advance(entry["gap_s"])
            await idle_scan()
            replies = [prov.reply_from_json(r) for r in entry.get("replies", [])]
            script.begin_turn(session_ref, replies, label=entry["label"])
            state["open"] = {
                "label": entry["label"],
                "kind": entry.get("kind", "turn"),
                "text": entry["text"],
                "start_ms": clock.now_ms(),
                "before": session_length(),
            }
            pipe.send_text(_keys(entry["text"]))
            return await original_read()

        cli_terminal._read_interactive_input_async = scripted_read
        args: dict[str, Any] = dict(
            message=None, session_id=None, workspace=spec.get("workspace_arg"),
            config=spec.get("config_arg"), markdown=False, logs=False, classic=True, theme="auto",
        )
        try:
            cli_agent.agent(**args)
        except SystemExit:
            pass
    close_open_turn()
    env.write_json(Path(result_path), {
        "end_ms": clock.now_ms(),
        "calls": script.calls,
        "turns": turns,
    })


if __name__ == "__main__":
    sys.stdout = open(os.devnull, "w", encoding="utf-8")
    main(sys.argv[1], sys.argv[2])
