#!/usr/bin/env bash
# Create (or reuse) the real-writer venv: nanobot-ai 0.3.5, time-machine and
# every dependency, installed from requirements.lock (wheels only, hashes
# required).  The venv lives outside the clone at
#   ${NANOLOAD_REALWRITER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/realwriter-<lock hash>}
# where <lock hash> is the first 12 hex digits of sha256(requirements.lock).
# It is reused while requirements.lock is unchanged (a marker file is written
# only after a successful install).  The venv path is the last line on stdout.
#
# Needs CPython 3.11 on Linux x86_64: python3.11 on PATH, or set
# NANOLOAD_REALWRITER_PYTHON to its path.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
lock="$here/requirements.lock"
[[ -f "$lock" ]] || { echo "setup.sh: $lock not found" >&2; exit 1; }

lock_sha="$(sha256sum "$lock" | cut -d' ' -f1)"
venv="${NANOLOAD_REALWRITER_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/realwriter-${lock_sha:0:12}}"
marker="$venv/.nanoload-realwriter-lock-sha256"

if [[ -f "$marker" && "$(cat "$marker")" == "$lock_sha" && -x "$venv/bin/python" ]]; then
    echo "setup.sh: reusing $venv" >&2
    echo "$venv"
    exit 0
fi

python="${NANOLOAD_REALWRITER_PYTHON:-python3.11}"
if ! command -v "$python" >/dev/null 2>&1; then
    echo "setup.sh: $python not found; install CPython 3.11 or set NANOLOAD_REALWRITER_PYTHON" >&2
    exit 1
fi
version="$("$python" -c 'import sys, platform; print(platform.python_implementation(), "%d.%d" % sys.version_info[:2])')"
if [[ "$version" != "CPython 3.11" ]]; then
    echo "setup.sh: $python is $version; requirements.lock is for CPython 3.11" >&2
    exit 1
fi

if [[ -e "$venv" ]]; then
    if [[ -f "$venv/pyvenv.cfg" ]]; then
        echo "setup.sh: $venv is stale or incomplete; recreating it" >&2
        rm -rf -- "$venv"
    else
        echo "setup.sh: $venv exists and is not a venv; refusing to touch it" >&2
        exit 1
    fi
fi

echo "setup.sh: creating $venv" >&2
mkdir -p "$(dirname "$venv")"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    --no-deps --only-binary=:all: --require-hashes -r "$lock" >&2
"$venv/bin/python" -m pip check >&2
"$venv/bin/python" -c 'import nanobot, time_machine, websockets, prompt_toolkit; assert nanobot.__version__ == "0.3.5", nanobot.__version__' >&2
echo "$lock_sha" > "$marker"
echo "setup.sh: ready" >&2
echo "$venv"
