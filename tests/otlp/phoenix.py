# A real Arize Phoenix server on loopback for the `nanoload otlp` tests:
# start it, wait for it, and read back what it stored.
#
#   phoenix.py serve --port P --grpc-port G --workdir DIR   (blocks; kill it to stop)
#   phoenix.py wait --port P [--timeout S]                   (exit 0 when ready, 1 on time-out)
#   phoenix.py spans --port P --project NAME [--min-spans N --timeout S]
#                                                            (one JSON object on stdout)
#   phoenix.py projects --port P                             (JSON list of project names)
#
# Run with the venv of requirements.txt (setup.sh prints its python).
# `serve` runs Phoenix in this process, so killing this process stops it.
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

# This file is named like the package it drives: take its own directory off
# the import path so that `import phoenix` finds Arize Phoenix, not this file.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or os.curdir) != _here]

HOST = "127.0.0.1"


def serve(args):
    # Hermetic environment: drop any PHOENIX_*/OTEL_* the caller had (a
    # database URL, auth, self-instrumentation exporting elsewhere, ...).
    for key in list(os.environ):
        if key.startswith(("PHOENIX_", "OTEL_")):
            del os.environ[key]
    workdir = os.path.abspath(args.workdir)
    os.makedirs(os.path.join(workdir, "tmp"), exist_ok=True)
    os.environ.update(
        {
            "PHOENIX_HOST": HOST,  # the HTTP server (UI, REST, OTLP/HTTP)
            "PHOENIX_PORT": str(args.port),
            "PHOENIX_GRPC_PORT": str(args.grpc_port),
            # sqlite at DIR/phoenix.db (the default when no database URL is set)
            "PHOENIX_WORKING_DIR": workdir,
            # no public-internet requests of its own (fonts, telemetry, WASM
            # download, docs MCP), no analytics pixels
            "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
            "PHOENIX_TELEMETRY_ENABLED": "false",
            # features a test does not need
            "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
            "PHOENIX_ENABLE_MCP_SERVER": "false",
            "PHOENIX_ENABLE_AUTH": "false",
            "PHOENIX_ENABLE_PROMETHEUS": "false",
            # pid files go to $TMPDIR/.arize-phoenix: keep them in DIR too
            "TMPDIR": os.path.join(workdir, "tmp"),
        }
    )
    # Phoenix binds its OTLP/gRPC server to [::] (every interface) whatever
    # PHOENIX_HOST says (phoenix/server/grpc_server.py): bind it to loopback.
    import grpc.aio

    make_server = grpc.aio.server

    def loopback_server(*a, **kw):
        server = make_server(*a, **kw)
        add_port = server.add_insecure_port
        server.add_insecure_port = lambda address: add_port(
            address.replace("[::]:", f"{HOST}:")
        )
        return server

    grpc.aio.server = loopback_server

    from phoenix.server.main import main

    sys.argv = ["phoenix", "serve"]
    main()


def get(port, path, timeout=5):
    # straight to loopback, whatever proxy the environment names
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(f"http://{HOST}:{port}{path}", timeout=timeout) as response:
        return response.status, response.read()


def wait(args):
    deadline = time.monotonic() + args.timeout
    error = None
    while time.monotonic() < deadline:
        try:
            # /readyz answers once the app has started and its database answers
            if get(args.port, "/readyz", timeout=2)[0] == 200:
                return 0
        except (urllib.error.URLError, OSError) as e:
            error = e
        time.sleep(0.2)
    print(f"phoenix.py: no answer on {HOST}:{args.port} in {args.timeout}s ({error})", file=sys.stderr)
    return 1


def get_all(port, path):
    """Every item of one of Phoenix's paged REST lists (phoenix/server/api/
    routers/v1: {"data": [...], "next_cursor": ...}, at most 1000 a page).
    Plain HTTP rather than phoenix.client, whose import takes ~10 s."""
    items, cursor = [], None
    while True:
        query = {"limit": 1000, **({"cursor": cursor} if cursor else {})}
        page = json.loads(get(port, f"{path}?{urllib.parse.urlencode(query)}", timeout=30)[1])
        items += page["data"]
        cursor = page.get("next_cursor")
        if not cursor or not page["data"]:
            return items


def project_ids(port):
    return {p["name"]: p["id"] for p in get_all(port, "/v1/projects")}


def projects(args):
    print(json.dumps(sorted(project_ids(args.port))))
    return 0


def stored_spans(args):
    """GET /v1/projects/{id}/spans: the spans as stored in Phoenix's database,
    attributes flattened to dotted keys (by id: a name with a '/' does not
    route). Phoenix answers an OTLP POST before it writes the spans (a
    background queue, flushed every 0.1 s), so wait until the project has
    --min-spans of them, or --timeout."""
    deadline = time.monotonic() + args.timeout
    while True:
        stored = None
        if (project_id := project_ids(args.port).get(args.project)) is not None:
            stored = get_all(args.port, f"/v1/projects/{urllib.parse.quote(project_id, safe='')}/spans")
            if len(stored) >= args.min_spans:
                return stored
        if time.monotonic() >= deadline:
            found = f"no project {args.project!r}" if stored is None else f"{len(stored)} spans"
            print(
                f"phoenix.py: {found}, not {args.min_spans}, after {args.timeout}s"
                f" (projects: {sorted(project_ids(args.port))})",
                file=sys.stderr,
            )
            sys.exit(1)
        time.sleep(0.1)


def spans(args):
    # Every number below is read from what Phoenix stored. The kind is its
    # span_kind column (it takes openinference.span.kind out of the
    # attributes); times are ISO 8601 to the microsecond (it keeps no
    # nanoseconds); the attributes include what it synthesizes from gen_ai.*
    # when absent (llm.system, llm.token_count.prompt_details.cache_write,
    # tool.id, output.value, ...: phoenix/trace/gen_ai/conversion.py).
    stored = stored_spans(args)
    detail, traces, by_kind, sessions = [], set(), {}, set()
    tokens, cost = {}, {}
    for span in stored:
        attrs = span.get("attributes") or {}
        kind = span["span_kind"]
        traces.add(span["context"]["trace_id"])
        by_kind[kind] = by_kind.get(kind, 0) + 1
        if kind == "AGENT" and "session.id" in attrs:
            sessions.add(attrs["session.id"])
        if kind == "LLM":
            model = attrs.get("gen_ai.request.model", attrs.get("llm.model_name"))
            t = tokens.setdefault(model, {"input": 0, "output": 0, "total": 0})
            t["input"] += attrs.get("gen_ai.usage.input_tokens", 0)
            t["output"] += attrs.get("gen_ai.usage.output_tokens", 0)
            t["total"] += attrs.get("llm.token_count.total", 0)
            if "llm.cost.total" in attrs:
                cost[model] = cost.get(model, 0.0) + attrs["llm.cost.total"]
        detail.append(
            {
                "trace_id": span["context"]["trace_id"],
                "span_id": span["context"]["span_id"],
                "parent_id": span.get("parent_id"),
                "name": span["name"],
                "kind": kind,
                "start": span["start_time"],
                "end": span["end_time"],
                "attributes": dict(sorted(attrs.items())),
            }
        )
    detail.sort(key=lambda s: (s["trace_id"], s["start"], s["span_id"]))
    out = {
        "traces": len(traces),
        "spans": len(detail),
        "by_kind": dict(sorted(by_kind.items())),
        "sessions": sorted(sessions),
        "tokens_by_model": dict(sorted(tokens.items())),
        "cost_by_model": {m: round(c, 9) for m, c in sorted(cost.items())},
        "spans_detail": detail,
    }
    print(json.dumps(out, sort_keys=False))
    return 0


def main():
    parser = argparse.ArgumentParser(prog="phoenix.py")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("serve")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--grpc-port", type=int, required=True)
    p.add_argument("--workdir", required=True)
    p = sub.add_parser("wait")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--timeout", type=float, default=60)
    p = sub.add_parser("spans")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--project", required=True)
    p.add_argument("--min-spans", type=int, default=1, help="wait until this many are stored")
    p.add_argument("--timeout", type=float, default=30)
    p = sub.add_parser("projects")
    p.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    return {"serve": serve, "wait": wait, "spans": spans, "projects": projects}[args.command](args) or 0


if __name__ == "__main__":
    sys.exit(main())
