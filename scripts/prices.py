#!/usr/bin/env python3
"""Generate data/prices.json: the chat models' token prices of LiteLLM's
model price list, as shipped in one pinned `litellm` release on PyPI.

    python3 scripts/prices.py            # rewrite data/prices.json
    python3 scripts/prices.py --check    # exit 1 if data/prices.json differs

litellm itself is never installed or imported: the wheel is fetched with
`pip download litellm==<LITELLM_VERSION> --no-deps` into a temp dir and the
price list is read from it as a zip member. To move to a newer release,
change LITELLM_VERSION and LITELLM_RELEASED (the upload date PyPI shows for
that version's files), run this script, and review the diff of the prices.

Kept, per model key: entries whose `mode` is `chat` and which have a
numeric `input_cost_per_token` and `output_cost_per_token` (USD per token);
written as

    "<LiteLLM key>": {"provider": <litellm_provider>, "input": ..., "output": ...,
                      "cache_read": <cache_read_input_token_cost or null>,
                      "cache_write": <cache_creation_input_token_cost or null>}

one model per line, keys sorted, so a new release's diff reads model by
model. How nanoload matches and prices calls: docs/design.md "Cost".
"""

import argparse
import hashlib
import json
import pathlib
import subprocess
import sys
import tempfile
import zipfile

LITELLM_VERSION = "1.110.2"
# upload time of the litellm 1.110.2 files on PyPI (2026-11-20T04:05Z)
LITELLM_RELEASED = "2026-11-20"
PRICE_LIST = "litellm/model_prices_and_context_window_backup.json"

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "data" / "prices.json"


def download(dest: pathlib.Path) -> pathlib.Path:
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
         "--dest", str(dest), f"litellm=={LITELLM_VERSION}"],
        check=True,
    )
    wheels = sorted(dest.glob(f"litellm-{LITELLM_VERSION}-*.whl"))
    if not wheels:
        sys.exit(f"pip download gave no litellm {LITELLM_VERSION} wheel in {dest}")
    return wheels[0]


def price(v):
    """A price as given, or None when absent or not a number."""
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def render(raw: bytes) -> tuple[str, int]:
    models = json.loads(raw)
    kept = {}
    for key, e in models.items():
        if not isinstance(e, dict) or e.get("mode") != "chat":
            continue
        i, o = price(e.get("input_cost_per_token")), price(e.get("output_cost_per_token"))
        if i is None or o is None or not isinstance(e.get("litellm_provider"), str):
            continue
        kept[key] = {
            "provider": e["litellm_provider"],
            "input": i,
            "output": o,
            "cache_read": price(e.get("cache_read_input_token_cost")),
            "cache_write": price(e.get("cache_creation_input_token_cost")),
        }
    head = {
        "litellm_version": LITELLM_VERSION,
        "litellm_released": LITELLM_RELEASED,
        "source": f"{PRICE_LIST} in the litellm {LITELLM_VERSION} wheel (PyPI)",
        "source_sha256": hashlib.sha256(raw).hexdigest(),
        "generated_by": "scripts/prices.py",
        "unit": "USD per token; chat models with an input and an output price",
    }
    lines = ["{"]
    for k, v in head.items():
        lines.append(f"  {json.dumps(k)}: {json.dumps(v)},")
    lines.append('  "models": {')
    rows = [f"    {json.dumps(k)}: {json.dumps(kept[k])}" for k in sorted(kept)]
    lines.append(",\n".join(rows))
    lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n", len(kept)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="compare with data/prices.json instead of writing it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        wheel = download(pathlib.Path(tmp))
        with zipfile.ZipFile(wheel) as z:
            raw = z.read(PRICE_LIST)
    text, n = render(raw)
    if args.check:
        same = OUT.exists() and OUT.read_text() == text
        print("data/prices.json is up to date" if same else "data/prices.json differs")
        return 0 if same else 1
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}: {n} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
