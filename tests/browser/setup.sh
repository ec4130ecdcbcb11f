#!/usr/bin/env bash
# The browser of the report test (tests/report.rs): Debian's chromium
# (/usr/bin/chromium, installed with apt-get when missing; CI runs as root)
# and playwright-core pinned by package-lock.json, installed with `npm ci`
# into tests/browser/node_modules (git-ignored). Playwright never downloads
# a browser: report.mjs launches /usr/bin/chromium (or $NANOLOAD_CHROMIUM).
# Prints the node_modules directory as its last line on stdout.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
chromium="${NANOLOAD_CHROMIUM:-/usr/bin/chromium}"
if [[ ! -x "$chromium" ]]; then
    [[ "$(id -u)" == 0 ]] || { echo "setup.sh: $chromium missing; install Debian's chromium (apt-get install chromium) as root" >&2; exit 1; }
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    # fonts-dejavu-core: the report's SVG text needs one font; without
    # recommends chromium brings none
    apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >&2
fi
"$chromium" --version >&2
command -v npm >/dev/null 2>&1 || { echo "setup.sh: npm not found (Node.js >= 20 is needed)" >&2; exit 1; }
# no browser download, whatever the environment says
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
echo "$here/node_modules"
