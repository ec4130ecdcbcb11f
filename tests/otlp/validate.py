# Checks a `nanoload otlp` trace file against the OTLP protobuf schema.
#
#   validate.py FILE              the OpenTelemetry file-exporter format: one
#                                 ExportTraceServiceRequest as OTLP/JSON per line
#   validate.py DIR --protobuf    every DIR/*.pb is one serialized request
#
# Each request is parsed with the opentelemetry-proto classes, unknown fields
# being errors; then: trace ids are 16 bytes (32 hex digits), span ids 8 (16),
# start <= end, and every parentSpanId names a span of the same trace
# (anywhere in the input: a trace may be split over several requests).
# Exits 1 naming the first bad line (or file); otherwise prints
#   {"lines": n, "resource_spans": n, "spans": n, "trace_ids": n}
# Run with the venv of requirements.txt (setup.sh prints its python).
#
# OTLP/JSON is not quite protobuf's JSON mapping (see the OTLP spec, "JSON
# Protobuf Encoding"): ids are hex, not base64, keys are lowerCamelCase only
# and enums are integers. json_format.Parse would read a hex id as base64 (32
# hex digits make 24 bytes) and accept snake_case keys and enum names, so
# these are checked on the raw JSON first and the ids turned into base64 for
# json_format.
import argparse
import base64
import json
import os
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

# lowercase, as OpenTelemetry's exporters write them
HEX = {"traceId": re.compile(r"[0-9a-f]{32}"), "spanId": re.compile(r"[0-9a-f]{16}")}
HEX["parentSpanId"] = HEX["spanId"]


def fail(where, message):
    print(f"validate.py: {where}: {message}", file=sys.stderr)
    sys.exit(1)


def check_raw(where, value, path="$"):
    """Check keys, enums and ids of the raw JSON; rewrite ids for json_format."""
    if isinstance(value, list):
        for i, item in enumerate(value):
            check_raw(where, item, f"{path}[{i}]")
    elif isinstance(value, dict):
        last = path.split(".")[-1]
        for key, item in value.items():
            if "_" in key:  # no OTLP field's lowerCamelCase name has one
                fail(where, f"{path}: key {key!r} is not lowerCamelCase")
            is_enum = (key == "kind" and last.startswith("spans[")) or (key == "code" and last == "status")
            if is_enum and (not isinstance(item, int) or isinstance(item, bool)):
                fail(where, f"{path}.{key}: enum {item!r} is not an integer")
            if key in HEX and last.startswith(("spans[", "links[")):
                if not (isinstance(item, str) and (item == "" and key == "parentSpanId" or HEX[key].fullmatch(item))):
                    fail(where, f"{path}.{key}: {item!r} is not a lowercase hex id of the right length")
                value[key] = base64.b64encode(bytes.fromhex(item)).decode()
            else:
                check_raw(where, item, f"{path}.{key}")


def requests(args):
    """Yield (where, request) for each request, or exit naming the bad one."""
    if args.protobuf:
        for name in sorted(n for n in os.listdir(args.path) if n.endswith(".pb")):
            request = ExportTraceServiceRequest()
            with open(os.path.join(args.path, name), "rb") as f:
                try:
                    request.ParseFromString(f.read())
                except Exception as e:
                    fail(name, f"not an ExportTraceServiceRequest: {e}")
            # fields the schema does not know are kept aside by the parser
            known = ExportTraceServiceRequest()
            known.CopyFrom(request)
            known.DiscardUnknownFields()
            if known.SerializeToString(deterministic=True) != request.SerializeToString(deterministic=True):
                fail(name, "fields unknown to ExportTraceServiceRequest")
            yield name, request
        return
    with open(args.path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = f"line {number}"
            try:
                raw = json.loads(line)
            except ValueError as e:
                fail(where, f"not JSON: {e}")
            check_raw(where, raw)
            try:
                request = json_format.ParseDict(raw, ExportTraceServiceRequest(), ignore_unknown_fields=False)
            except json_format.ParseError as e:
                fail(where, str(e))
            yield where, request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("path", help="an OTLP/JSON lines file, or a directory with --protobuf")
    parser.add_argument("--protobuf", action="store_true", help="path is a directory of *.pb requests")
    args = parser.parse_args()

    lines = resource_spans = spans = 0
    by_trace = {}  # trace id -> span id -> (where, span), over the whole input
    for where, request in requests(args):
        lines += 1
        resource_spans += len(request.resource_spans)
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                for span in ss.spans:
                    spans += 1
                    trace_id, span_id = span.trace_id.hex(), span.span_id.hex()
                    if len(span.trace_id) != 16 or trace_id == "0" * 32:
                        fail(where, f"span {span.name!r}: bad trace id {trace_id!r}")
                    if len(span.span_id) != 8 or span_id == "0" * 16:
                        fail(where, f"span {span.name!r}: bad span id {span_id!r}")
                    if span.parent_span_id and len(span.parent_span_id) != 8:
                        fail(where, f"span {span.name!r}: bad parent span id")
                    if span.start_time_unix_nano > span.end_time_unix_nano:
                        fail(where, f"span {span.name!r} ({span_id}) ends before it starts")
                    if span_id in by_trace.get(trace_id, {}):
                        fail(where, f"span id {span_id} twice in trace {trace_id}")
                    by_trace.setdefault(trace_id, {})[span_id] = (where, span)
    # a trace may span several requests: parents are resolved over them all
    for trace_id, members in by_trace.items():
        for span_id, (where, span) in members.items():
            parent = span.parent_span_id.hex()
            if parent and parent not in members:
                fail(where, f"span {span.name!r} ({span_id}): parent {parent} is not in trace {trace_id}")
    print(json.dumps({"lines": lines, "resource_spans": resource_spans, "spans": spans, "trace_ids": len(by_trace)}))


if __name__ == "__main__":
    main()
