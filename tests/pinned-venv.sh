#!/usr/bin/env bash
# Create (or reuse) a venv of the packages pinned in a requirements file:
#   tests/pinned-venv.sh NAME REQUIREMENTS
# The venv lives outside the clone at
#   ${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/NAME-<first 12 hex of sha256(REQUIREMENTS)>
# and is reused while the file is unchanged (a marker file is written only
# after a successful install). Its python is the last line on stdout.
set -euo pipefail
name=${1:?usage: pinned-venv.sh NAME REQUIREMENTS}
req=${2:?usage: pinned-venv.sh NAME REQUIREMENTS}
sha="$(sha256sum "$req" | cut -d' ' -f1)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/$name-${sha:0:12}"
marker="$venv/.nanoload-$name-sha256"
if [[ -f "$marker" && "$(cat "$marker")" == "$sha" && -x "$venv/bin/python" ]]; then
    echo "pinned-venv.sh: reusing $venv" >&2
else
    rm -rf -- "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    echo "$sha" >"$marker"
fi
echo "$venv/bin/python"
