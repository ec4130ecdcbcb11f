#!/usr/bin/env bash
# Create (or reuse) the notebook venv (tests/notebook.rs): the packages
# pinned in requirements.txt. The venv lives outside the clone at
#   ${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/notebook-<first 12 hex of sha256(requirements.txt)>
# and is reused while requirements.txt is unchanged (a marker file is written
# only after a successful install). Its python is the last line on stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
req="$here/requirements.txt"
sha="$(sha256sum "$req" | cut -d' ' -f1)"
venv="${XDG_CACHE_HOME:-$HOME/.cache}/nanoload/notebook-${sha:0:12}"
marker="$venv/.nanoload-notebook-sha256"
if [[ -f "$marker" && "$(cat "$marker")" == "$sha" && -x "$venv/bin/python" ]]; then
    echo "setup.sh: reusing $venv" >&2
else
    rm -rf -- "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$req"
    echo "$sha" >"$marker"
fi
echo "$venv/bin/python"
