#!/usr/bin/env bash
# The OTLP test venv (tests/otlp/phoenix.py, validate.py): the packages pinned
# in requirements.txt, made or reused by tests/pinned-venv.sh (its python is
# the last line on stdout).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pinned-venv.sh" otlp "$here/requirements.txt"
