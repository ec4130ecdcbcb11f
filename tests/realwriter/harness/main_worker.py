"""The main worker process: runs one scenario against nanobot's own code.

``python -m harness.main_worker SPEC.json RESULT.json`` (started by
generate.py with a fixed environment: HOME, TZ, PYTHONHASHSEED=0).  It installs
the deterministic environment (harness.env), swaps the LLM backend
(harness.provider) and the Telegram SDK (harness.gateway), then runs the
scenario's timeline (harness.scenarios) with a :class:`harness.driver.Driver`
and writes the harness log (turns, calls, secrets) as RESULT.json.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path


def main(spec_path: str, result_path: str) -> None:
    from . import env

    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    clock = env.install(spec["seed"], "main", spec["start_ms"], spec["tz"])

    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")

    from . import gateway as gw
    from . import provider as prov

    prov.install_nanobot_hooks()
    gw.install_telegram_stub()

    from .driver import Driver
    from .scenarios import RUNNERS

    driver = Driver(spec, clock)
    extra = asyncio.run(RUNNERS[spec["scenario"]](driver))
    driver.stamper.stamp()
    result = driver.result()
    result.update(extra)
    env.write_json(Path(result_path), result)


if __name__ == "__main__":
    import os

    sys.stdout = open(os.devnull, "w", encoding="utf-8")
    main(sys.argv[1], sys.argv[2])
