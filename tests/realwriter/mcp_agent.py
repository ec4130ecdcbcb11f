"""One nanobot-ai 0.3.5 agent turn that uses `nanoload mcp` through nanobot's OWN MCP client.

    $venv/bin/python tests/realwriter/mcp_agent.py --nanoload BIN --workdir DIR SOURCE --sql 'SELECT ...'
    $venv/bin/python tests/realwriter/mcp_agent.py --nanoload BIN --workdir DIR SOURCE \
        --call usage_by_day --args '{"since": "2026-10-24"}'

In a fresh HOME (`DIR/home`) the script writes a nanobot config.json with
nanobot's own `save_config`: the harness's scripted model settings plus one MCP
server,

    "tools": {"mcpServers": {"nanoload": {"command": BIN, "args": ["mcp", SOURCE],
                                          "env": {...--server-env...}, "toolTimeout": 30}}}

and runs nanobot's own one-shot CLI turn, `nanobot.cli.agent.agent(message=...)`
(what `nanobot agent -m ... --config DIR/home/.nanobot/config.json` does):
nanobot's `MCPProvider.connect()` starts `BIN mcp SOURCE` over stdio, lists its
tools and registers them as `mcp_nanoload_<tool>`, then `AgentLoop.process_direct`
runs the turn. Only the LLM backend is replaced, as in the harness
(`providers.factory._make_provider_core` returns a scripted `LLMProvider`):

1. first model call: records the tools nanobot offers and answers with one tool
   call `mcp_nanoload_query {"sql": SQL}` (or `mcp_nanoload_TOOL ARGS`);
2. second model call: records the tool message nanobot put into the request
   (the `role: tool` message answering that call) and answers with final text.

Prints one JSON object on stdout:

    {"tools_offered": [the mcp_nanoload_* names nanobot offered the model, in its order],
     "tool_result": <content of that tool message, exactly as nanobot gave it>,
     "answer": <the final answer nanobot's turn returned>}

Exits 1 with a message on stderr when nanobot did not connect to the server,
did not offer the tool, never ran the call, or the turn failed; 2 on a usage
error; 3 when the whole run exceeds `--timeout` seconds (default 180; nanobot
itself puts no time limit on the MCP initialize handshake).

Clock and entropy as in the harness (`harness.env.install`: time-machine,
`tick=False`, seeded uuid/secrets) at a fixed start, 2026-10-24T08:00:00Z in
UTC unless `--start`/`--tz` say otherwise. No network: the model is scripted
and nanobot's web tools are not called.

`DIR/home` is deleted and recreated on every run; the worker leaves
`DIR/mcp_agent-result.json` and `DIR/mcp_agent-phase.txt` (last step reached)
beside it. The work runs in a child process (this file with `--worker`) with a fixed
environment (HOME=DIR/home, TZ, PYTHONHASHSEED=0); the parent waits for it
with the timeout, kills its process group if needed and prints its result.
Note: nanobot starts the stdio server with the MCP SDK's default environment
(HOME, LOGNAME, PATH, SHELL, TERM, USER only) plus the config's `env`: pass
anything else the server needs with `--server-env KEY=VALUE`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SERVER = "nanoload"
CALL_ID = "call_0"
PROMPT = "Use the nanoload tools to answer: what does my usage data say?"
ANSWER = "Here is what nanoload returned."


# ---------------------------------------------------------------------------
# parent: argument checks, environment, timeout
# ---------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Drive one nanobot-ai 0.3.5 agent turn that calls `nanoload mcp SOURCE` "
        "through nanobot's own MCP client; print what nanobot gave the model.",
    )
    ap.add_argument("--nanoload", required=True, metavar="BIN", help="the nanoload binary (MCP server command)")
    ap.add_argument("--workdir", required=True, metavar="DIR", help="scratch directory (nanobot's HOME is DIR/home)")
    ap.add_argument("source", metavar="SOURCE", help="the nanoload source; the server runs as `BIN mcp SOURCE`")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--sql", help="call the query tool with {\"sql\": SQL}")
    what.add_argument("--call", metavar="TOOL", help="call this nanoload tool instead (raw MCP name, e.g. list_tables)")
    ap.add_argument("--args", default="{}", metavar="JSON", help="arguments object for --call (default {})")
    ap.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                    help="extra environment for the server (config `env`); repeatable")
    ap.add_argument("--tool-timeout", type=int, default=30, help="config toolTimeout in seconds (nanobot's default 30)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds for the whole run (default 180)")
    ap.add_argument("--tz", default="UTC", help="host zone of the harness clock (default UTC)")
    ap.add_argument("--start", default="2026-10-24T08:00:00Z", help="UTC start of the harness clock")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.sql is not None:
        args.tool, args.tool_args = "query", {"sql": args.sql}
        if args.args != "{}":
            ap.error("--args goes with --call, not --sql")
    else:
        try:
            tool_args = json.loads(args.args)
        except json.JSONDecodeError as exc:
            ap.error(f"--args is not JSON: {exc}")
        if not isinstance(tool_args, dict):
            ap.error("--args must be a JSON object")
        args.tool, args.tool_args = args.call, tool_args
    env: dict[str, str] = {}
    for item in args.server_env:
        key, sep, value = item.partition("=")
        if not sep or not key:
            ap.error(f"--server-env wants KEY=VALUE, got {item!r}")
        env[key] = value
    args.server_env = env
    if not args.worker:
        binary = shutil.which(args.nanoload) or args.nanoload
        if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
            ap.error(f"--nanoload {args.nanoload!r} is not an executable file")
        args.nanoload = os.path.abspath(binary)
        # nanobot starts the server in this process's cwd; an existing relative
        # path is made absolute so the config does not depend on it.
        if os.path.exists(args.source):
            args.source = os.path.abspath(args.source)
        args.workdir = os.path.abspath(args.workdir)
    return args


def worker_env(args: argparse.Namespace, home: Path) -> dict[str, str]:
    """The generator's worker environment, with the caller's PATH and a
    TMPDIR inside --workdir."""
    from harness import env

    return env.worker_environ(home, args.tz) | {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "TMPDIR": str(Path(args.workdir) / "tmp"),
    }


def parent(args: argparse.Namespace) -> int:
    workdir = Path(args.workdir)
    home = workdir / "home"
    if home.exists():
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (workdir / "tmp").mkdir(exist_ok=True)
    result_path = workdir / "mcp_agent-result.json"
    result_path.unlink(missing_ok=True)
    phase_path = workdir / "mcp_agent-phase.txt"
    phase_path.unlink(missing_ok=True)

    # The worker gets the normalised paths.
    child_argv = [
        "--worker", "--nanoload", args.nanoload, "--workdir", str(workdir), args.source,
        "--tool-timeout", str(args.tool_timeout), "--tz", args.tz, "--start", args.start,
        *(["--sql", args.sql] if args.sql is not None else ["--call", args.call, "--args", args.args]),
        *[x for k, v in args.server_env.items() for x in ("--server-env", f"{k}={v}")],
    ]
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), *child_argv],
        env=worker_env(args, home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,  # nanobot's console output
        start_new_session=True,
    )
    try:
        rc = proc.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        phase = phase_path.read_text(encoding="utf-8").strip() if phase_path.exists() else "starting nanobot"
        print(
            f"mcp_agent: nanobot's turn did not finish within {args.timeout:g} s; "
            f"last step: {phase}; killed",
            file=sys.stderr,
        )
        return 3
    except KeyboardInterrupt:
        _kill_group(proc)
        raise
    elapsed = time.monotonic() - started
    if not result_path.exists():
        print(f"mcp_agent: nanobot worker exited with {rc} and no result (see its stderr above)", file=sys.stderr)
        return 1
    result = json.loads(result_path.read_text(encoding="utf-8"))
    if result.get("failure"):
        print(f"mcp_agent: {result['failure']}", file=sys.stderr)
        return 1
    if rc != 0:
        print(f"mcp_agent: nanobot worker exited with {rc} (see its stderr above)", file=sys.stderr)
        return 1
    print(f"mcp_agent: turn done in {elapsed:.1f} s", file=sys.stderr)
    print(json.dumps(result["output"], ensure_ascii=False))
    return 0


def _descendants(pid: int) -> list[int]:
    """Every live descendant of *pid* (Linux /proc), e.g. the MCP server the
    SDK started in its own session."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the worker, its process group and the server it started.

    The MCP SDK starts the server in a new session, so it is not in the
    worker's group; it is found as a descendant before the worker goes."""
    server_side = _descendants(proc.pid) if os.path.isdir("/proc") else []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for target in server_side:
            try:
                os.kill(target, sig)
            except ProcessLookupError:
                pass
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=5)
            break
        except subprocess.TimeoutExpired:
            continue


# ---------------------------------------------------------------------------
# worker: nanobot's own code
# ---------------------------------------------------------------------------


def worker(args: argparse.Namespace) -> int:
    from datetime import datetime

    sys.path.insert(0, str(HERE))
    from harness import env

    start_ms = int(datetime.fromisoformat(args.start.replace("Z", "+00:00")).timestamp() * 1000)
    clock = env.install(0, "mcp-agent", start_ms, args.tz)

    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")

    import nanobot.agent.runner
    import nanobot.cli.agent as cli_agent
    from nanobot.agent.loop import AgentLoop
    from nanobot.agent.tools.mcp import MCPProvider, _sanitize_mcp_tool_name, _tool_prefix
    from nanobot.config.loader import save_config
    from nanobot.config.schema import Config, MCPServerConfig
    from harness import provider as harness_provider
    from nanobot.providers.base import LLMProvider, LLMResponse, LLMUsage, ToolCallRequest

    env.clock_perf_counter_in(nanobot.agent.runner)

    home = Path(os.environ["HOME"])
    result_path = Path(args.workdir) / "mcp_agent-result.json"
    phase_path = Path(args.workdir) / "mcp_agent-phase.txt"

    def phase(text: str) -> None:
        phase_path.write_text(text + "\n", encoding="utf-8")

    prefix = _tool_prefix(SERVER)
    wanted = _sanitize_mcp_tool_name(f"mcp_{SERVER}_{args.tool}")
    state: dict[str, Any] = {"calls": 0, "offered": None, "all_tools": None, "tool_result": None,
                             "tool_message_seen": False, "failure": None, "answer": None,
                             "providers": [], "extra_calls": []}

    # -- the scripted model ---------------------------------------------------

    def respond(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> LLMResponse:
        state["calls"] += 1
        n = state["calls"]
        clock.advance(2)
        usage = LLMUsage.reported(input_tokens=1800, output_tokens=40, cache_read_tokens=None,
                                  cache_write_tokens=None)
        phase(f"model call {n} answered")
        if n == 1:
            names = [_tool_name(t) for t in tools or []]
            state["all_tools"] = names
            state["offered"] = [name for name in names if name.startswith(prefix)]
            if wanted not in names:
                state["failure"] = _not_offered(wanted)
                return LLMResponse(content="(the nanoload tool was not offered)", finish_reason="stop", usage=usage)
            phase(f"nanobot runs the tool call {wanted} (MCP tools/call; toolTimeout {args.tool_timeout} s)")
            return LLMResponse(
                content="",
                tool_calls=[ToolCallRequest(id=CALL_ID, name=wanted, arguments=dict(args.tool_args))],
                finish_reason="tool_calls",
                usage=usage,
            )
        if n == 2:
            for message in messages:
                if message.get("role") == "tool" and message.get("tool_call_id") == CALL_ID:
                    state["tool_message_seen"] = True
                    state["tool_result"] = message.get("content")
            return LLMResponse(content=ANSWER, finish_reason="stop", usage=usage)
        state["extra_calls"].append(str(messages[-1])[:300] if messages else "")
        return LLMResponse(content="ok", finish_reason="stop", usage=usage)

    def _tool_name(schema: dict[str, Any]) -> str:
        fn = schema.get("function")
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn["name"]
        return str(schema.get("name", ""))

    def _not_offered(name: str) -> str:
        status = {p_: p_.runtime_status() for p_ in state["providers"]}
        statuses = [s.get(SERVER) for s in status.values()]
        if "connected" not in statuses:
            return (f"nanobot never connected to the MCP server {SERVER!r} "
                    f"(`{args.nanoload} mcp {args.source}`; MCPProvider status {statuses or 'none'}); "
                    f"see nanobot's log above")
        return (f"nanobot connected to {SERVER!r} but did not offer {name!r} to the model; "
                f"offered nanoload tools: {state['offered']}")

    class AgentProvider(LLMProvider):
        def __init__(self, *, api_key: str | None, api_base: str | None, default_model: str, provider_name: str):
            super().__init__(api_key=api_key, api_base=api_base, provider_name=provider_name)
            self.default_model = default_model

        def get_default_model(self) -> str:
            return self.default_model

        async def chat(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                       reasoning_effort=None, tool_choice=None) -> LLMResponse:  # type: ignore[override]
            return respond(messages, tools)

        async def chat_stream(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                              reasoning_effort=None, tool_choice=None, on_content_delta=None,
                              on_thinking_delta=None, on_tool_call_delta=None) -> LLMResponse:  # type: ignore[override]
            response = respond(messages, tools)
            if on_content_delta is not None and response.content and not response.tool_calls:
                await on_content_delta(response.content)
            return response

    harness_provider.install_factory_hook(AgentProvider)

    # -- observe nanobot (no behaviour change) -------------------------------

    original_connect = MCPProvider.connect

    async def connect(self: MCPProvider) -> None:
        if self not in state["providers"]:
            state["providers"].append(self)
        phase(f"nanobot connects to the MCP server {SERVER!r} (initialize, tools/list, "
              f"resources/list, prompts/list; nanobot sets no timeout here)")
        await original_connect(self)
        phase(f"MCP connect returned (status {self.runtime_status().get(SERVER)}); the turn runs")

    MCPProvider.connect = connect  # type: ignore[method-assign]

    original_process_direct = AgentLoop.process_direct

    async def process_direct(self: AgentLoop, *a: Any, **kw: Any) -> Any:
        response = await original_process_direct(self, *a, **kw)
        state["answer"] = response.content if response is not None else None
        return response

    AgentLoop.process_direct = process_direct  # type: ignore[method-assign]

    # -- config.json, written by nanobot ---------------------------------------

    config = Config()
    d = config.agents.defaults
    d.model = "anthropic/claude-sonnet-4-5"
    d.provider = "anthropic"
    d.timezone = args.tz
    d.timezone_mode = "manual"
    d.dream.enabled = False
    config.gateway.heartbeat.enabled = False
    config.providers.anthropic.api_key = "sk-ant-mcp-agent-not-a-key"
    config.tools.restrict_to_workspace = True
    config.tools.mcp_servers = {
        SERVER: MCPServerConfig(
            command=args.nanoload,
            args=["mcp", args.source],
            env=dict(args.server_env),
            tool_timeout=args.tool_timeout,
        )
    }
    config_path = home / ".nanobot" / "config.json"
    save_config(config, config_path)

    # -- one turn: `nanobot agent -m PROMPT --config config.json` --------------

    crashed: str | None = None
    try:
        cli_agent.agent(
            message=PROMPT, session_id=None, workspace=None, config=str(config_path),
            markdown=False, logs=True, classic=True, theme="auto",
        )
    except SystemExit as exc:  # typer.Exit is not SystemExit; click's may be
        if exc.code not in (None, 0):
            crashed = f"nanobot's agent command exited with {exc.code}"
    except BaseException as exc:  # typer.Exit, errors
        if type(exc).__name__ == "Exit" and getattr(exc, "exit_code", 1) == 0:
            pass
        else:
            crashed = f"nanobot's agent command failed: {type(exc).__name__}: {exc}"

    failure = state["failure"] or crashed
    if failure is None and state["calls"] == 0:
        failure = "nanobot made no model call (the turn never ran)"
    if failure is None and not state["tool_message_seen"]:
        failure = (f"nanobot's second model request held no tool message for {CALL_ID} "
                   f"({state['calls']} model calls)")
    if state["extra_calls"]:
        print(f"mcp_agent: warning: {len(state['extra_calls'])} unscripted model call(s): "
              f"{state['extra_calls']}", file=sys.stderr)
    result_path.write_text(json.dumps({
        "failure": failure,
        "output": {
            "tools_offered": state["offered"],
            "tool_result": state["tool_result"],
            "answer": state["answer"],
        },
    }, ensure_ascii=False), encoding="utf-8")
    return 0 if failure is None else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
