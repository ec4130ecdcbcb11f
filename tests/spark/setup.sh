#!/usr/bin/env bash
# The Spark venv of the fleet-dataset test (tests/dataset.rs): the packages
# pinned in requirements.txt, made or reused by tests/pinned-venv.sh (its
# python is the last line on stdout). Spark itself needs java (17) on PATH.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
command -v java >/dev/null 2>&1 || { echo "setup.sh: java not found (Spark needs Java 17)" >&2; exit 1; }
exec "$here/../pinned-venv.sh" spark "$here/requirements.txt"
