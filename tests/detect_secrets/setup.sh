#!/usr/bin/env bash
# The detect-secrets venv (tests/detect_secrets/scan.py): the packages pinned
# in requirements.txt, made or reused by tests/pinned-venv.sh (its python is
# the last line on stdout).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../pinned-venv.sh" detect_secrets "$here/requirements.txt"
