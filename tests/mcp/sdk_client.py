"""Drive `nanoload mcp SOURCE` with the official MCP Python SDK's client.

    python tests/mcp/sdk_client.py --nanoload BIN SOURCE \
        [--calls '[{"name": "query", "arguments": {"sql": "SELECT 1"}}, ...]'] \
        [--request-version 2025-03-26] [--timeout 30]

Starts `BIN mcp SOURCE` with `mcp.client.stdio.stdio_client` (the server gets
this process's whole environment and working directory), opens a
`ClientSession`, initializes, lists the tools and makes the calls in order.
Prints one JSON object on stdout:

    {"server": serverInfo, "protocol": negotiated version,
     "tools": [{"name", "description", "inputSchema"}],
     "results": [{"isError": bool, "text": first text content or null,
                  "structured": structuredContent or null}]}

A call the SDK raises on (a JSON-RPC error answer, or a result whose
structuredContent does not match the tool's outputSchema) gives
`{"isError": null, "text": null, "structured": null, "error": "<Type>: <message>"}`
and the calls go on.

`--request-version V` makes the client ask for protocol version V in
`initialize` instead of the SDK's latest (the answer must still be one the
SDK supports). Exit status 0 on success; 2 when the server cannot be started,
initialize or list_tools fails, or the whole exchange takes longer than
`--timeout` seconds (default 30); the reason goes to stderr.

Needs the `mcp` SDK (the realwriter venv has mcp 1.30.0).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
from datetime import timedelta
from typing import Any


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nanoload", required=True, metavar="BIN", help="the nanoload binary")
    ap.add_argument("source", metavar="SOURCE", help="passed as `BIN mcp SOURCE`")
    ap.add_argument("--calls", default="[]", help='JSON list of {"name": TOOL, "arguments": {...}}')
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds for the whole exchange (default 30)")
    ap.add_argument("--request-version", default=None, metavar="V",
                    help="protocol version the client requests (default: the SDK's latest)")
    args = ap.parse_args(argv)
    try:
        calls = json.loads(args.calls)
    except json.JSONDecodeError as exc:
        ap.error(f"--calls is not JSON: {exc}")
    if not isinstance(calls, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) and isinstance(c.get("arguments", {}), dict)
        for c in calls
    ):
        ap.error('--calls must be a JSON list of {"name": str, "arguments": object}')
    args.calls = calls
    binary = shutil.which(args.nanoload) or args.nanoload
    if not os.path.isfile(binary) or not os.access(binary, os.X_OK):
        ap.error(f"--nanoload {args.nanoload!r} is not an executable file")
    args.nanoload = os.path.abspath(binary)
    return args


def _dump(model: Any) -> Any:
    if model is None:
        return None
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class Failure(Exception):
    pass


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, types
    from mcp.client.stdio import stdio_client

    if args.request_version:
        # ClientSession.initialize reads types.LATEST_PROTOCOL_VERSION at call time.
        types.LATEST_PROTOCOL_VERSION = args.request_version

    params = StdioServerParameters(
        command=args.nanoload,
        args=["mcp", args.source],
        env=dict(os.environ),
        cwd=os.getcwd(),
    )
    stage = "starting the server"
    try:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=timedelta(seconds=args.timeout)) as session:
                stage = "initialize"
                init = await session.initialize()
                stage = "tools/list"
                listed = await session.list_tools()
                out: dict[str, Any] = {
                    "server": _dump(init.serverInfo),
                    "protocol": init.protocolVersion,
                    "tools": [
                        {"name": t.name, "description": t.description, "inputSchema": t.inputSchema}
                        for t in listed.tools
                    ],
                    "results": [],
                }
                for i, call in enumerate(args.calls):
                    stage = f"tools/call #{i} ({call['name']})"
                    try:
                        res = await session.call_tool(call["name"], call.get("arguments", {}))
                    except Exception as exc:  # JSON-RPC error or outputSchema mismatch
                        out["results"].append({
                            "isError": None, "text": None, "structured": None,
                            "error": f"{type(exc).__name__}: {exc}",
                        })
                        continue
                    text = next((b.text for b in res.content if isinstance(b, types.TextContent)), None)
                    out["results"].append({
                        "isError": bool(res.isError),
                        "text": text,
                        "structured": res.structuredContent,
                    })
                stage = "shutting down"
                return out
    except Failure:
        raise
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit, asyncio.CancelledError)):
            raise
        leaves = _leaves(exc)
        detail = "; ".join(f"{type(e).__name__}: {e}".rstrip(": ") for e in leaves) or type(exc).__name__
        if all(type(e).__name__ in _CLOSED or "connection closed" in str(e).lower() for e in leaves):
            detail += " (the server closed its stdout or exited; its stderr, if any, is above)"
        raise Failure(f"{stage} failed: {detail}") from exc


_CLOSED = {"BrokenResourceError", "ClosedResourceError", "EndOfStream", "BrokenPipeError"}


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        out = asyncio.run(asyncio.wait_for(run(args), timeout=args.timeout))
    except (asyncio.TimeoutError, TimeoutError):
        print(f"sdk_client: no complete MCP exchange with `{args.nanoload} mcp {args.source}` "
              f"within {args.timeout:g} s (timed out)", file=sys.stderr)
        return 2
    except Failure as exc:
        print(f"sdk_client: `{args.nanoload} mcp {args.source}`: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
