#!/usr/bin/env python3
"""Yelp's detect-secrets over a directory of text: a second opinion on what
nanoload writes.

    scan.py DUMP_DIR

prints to stdout a JSON list of findings, one per (file, line, type, value,
match), sorted by those five:

    {"file": <path relative to DUMP_DIR>, "line": n,
     "type": <the plugin's secret_type>, "value": <the raw flagged string>,
     "match": <the whole text the plugin's regex matched around it>}

`value` is detect-secrets' own `secret_value`. For a regex plugin whose
pattern has a capturing group it is only that group: every GitHub token is
reported as `ghp` (Yelp/detect-secrets#858), a GitLab one as `glpat`, a
basic-auth URL as its password. `match` is the whole match of that pattern
on the line (`ghp_…` in full), found again here; where no pattern matches
the line as written (an INI-transformed line) and for the entropy and
keyword plugins it equals `value`. Two different tokens that detect-secrets
folds into one `value` on a line are two findings.

Every regular file under DUMP_DIR is scanned (symlinks are not followed),
with every built-in plugin on and detect-secrets' default filters, as
`detect-secrets scan --no-verify` would: verification (a plugin calling its
provider's API to test a key) is off. Its filter is dropped from the
settings, which is the one switch both verification paths check
(`BasePlugin.analyze_line` and the filter itself). On top of that the socket
layer is closed for the whole run: an attempt to resolve or connect anywhere
is refused, recorded, and turns the run into exit 2, so a detect-secrets
upgrade that verifies by another path fails loudly instead of reaching out.

Each occurrence is reported (detect-secrets' SecretsCollection keeps one per
file, type and value, at its first line); files are scanned one by one, in
sorted order, in this process (no multiprocessing pool).
"""

import json
import os
import socket
import sys

# --- no network, whatever detect-secrets does -------------------------------
NETWORK_ATTEMPTS = []


def _refuse(what):
    def refuse(*args, **kwargs):
        NETWORK_ATTEMPTS.append(f"{what}{args[1:] if what.startswith('socket.') else args}")
        raise OSError(f"scan.py: network disabled ({what})")

    return refuse


socket.socket.connect = _refuse("socket.connect")
socket.socket.connect_ex = _refuse("socket.connect_ex")
socket.socket.sendto = _refuse("socket.sendto")
socket.create_connection = _refuse("create_connection")
socket.getaddrinfo = _refuse("getaddrinfo")

from detect_secrets.core import scan as ds_scan  # noqa: E402
from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class  # noqa: E402
from detect_secrets.plugins.base import RegexBasedDetector  # noqa: E402
from detect_secrets.settings import default_settings  # noqa: E402
from detect_secrets.settings import get_settings  # noqa: E402

VERIFY_FILTER = "detect_secrets.filters.common.is_ignored_due_to_verification_policies"


def files_under(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.isfile(path) and not os.path.islink(path):
                out.append(os.path.relpath(path, root))
    return sorted(out)


def whole_matches(plugin_class, line, value):
    """The whole matches of a regex plugin's patterns on line that yield value
    (as detect-secrets' analyze_string does: the match, or each non-empty
    group of it); [value] when there is none."""
    out = set()
    if issubclass(plugin_class, RegexBasedDetector):
        for regex in plugin_class.denylist:
            for m in regex.finditer(line):
                parts = [g for g in m.groups() if g] if regex.groups else [m.group(0)]
                if value in parts:
                    out.add(m.group(0))
    return sorted(out) or [value]


def scan_dir(root):
    """The findings under root, sorted; verification off."""
    findings = set()
    with default_settings() as settings:  # every built-in plugin, default filters
        settings.disable_filters(VERIFY_FILTER)
        if VERIFY_FILTER in get_settings().filters:
            raise SystemExit("scan.py: could not disable verification")
        classes = get_mapping_from_secret_type_to_class()
        for rel in files_under(root):
            path = os.path.join(root, rel)
            lines = None
            for secret in ds_scan.scan_file(path):
                if lines is None:
                    with open(path, encoding="utf-8") as f:  # scan_file read it as text too
                        lines = f.read().splitlines()
                n, t, v = secret.line_number, secret.type, secret.secret_value
                line = lines[n - 1] if 0 < n <= len(lines) else ""
                for m in whole_matches(classes[t], line, v):
                    findings.add((rel, n, t, v, m))
    return [
        {"file": f, "line": n, "type": t, "value": v, "match": m}
        for f, n, t, v, m in sorted(findings)
    ]


def main(argv):
    if len(argv) != 2 or not os.path.isdir(argv[1]):
        print("usage: scan.py DUMP_DIR", file=sys.stderr)
        return 64
    findings = scan_dir(argv[1])
    if NETWORK_ATTEMPTS:
        print("scan.py: detect-secrets tried to reach the network:", file=sys.stderr)
        for a in NETWORK_ATTEMPTS:
            print(f"  {a}", file=sys.stderr)
        return 2
    json.dump(findings, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
