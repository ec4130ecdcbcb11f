#!/usr/bin/env python3
"""Run the generator repeatedly and check that the same seed gives the same result.

    python check_determinism.py [--runs 20] [SCENARIO ...]

For every scenario (default: all) the whole generator (generate.py's
``generate``) runs ``--runs`` times with the seed from seeds.json.  Reported:
how many runs succeeded, whether every facts.json is byte-identical, and
whether every home is identical member by member (name, mode, mtime, bytes),
apart from dulwich's ``.git/index`` files, which cache the host's real
ctime/inode of the tracked memory files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
from harness.catalog import SCENARIOS  # noqa: E402

VOLATILE = ("/.git/index",)


def home_digest(out: Path) -> tuple[str, list[str]]:
    """Digest of the home's members; also the names left out as volatile."""
    h = hashlib.sha256()
    skipped: list[str] = []
    archive = out / "home.tar.gz"
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if member.name.endswith(VOLATILE):
                skipped.append(member.name)
                h.update(f"{member.name}|volatile\n".encode())
                continue
            data = tar.extractfile(member).read() if member.isfile() else b""  # type: ignore[union-attr]
            h.update(f"{member.name}|{member.mode:o}|{member.mtime}|{member.type!r}|".encode())
            h.update(hashlib.sha256(data).digest())
    return h.hexdigest(), skipped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=20)
    # scale writes home/ (not home.tar.gz) and no facts.json: not compared here
    parser.add_argument("scenarios", nargs="*", default=sorted(s for s in SCENARIOS if s != "scale"))
    args = parser.parse_args()
    seeds = json.loads((HERE / "seeds.json").read_text(encoding="utf-8"))
    ok = True
    with tempfile.TemporaryDirectory(prefix="realwriter-determinism-") as tmp:
        for scenario in args.scenarios:
            facts: set[str] = set()
            homes: set[str] = set()
            archives: set[str] = set()
            durations: list[float] = []
            failures = 0
            skipped: list[str] = []
            for run in range(args.runs):
                out = Path(tmp) / f"{scenario}-{run}"
                started = time.monotonic()
                try:
                    generate.generate(scenario, seeds[scenario], out)
                except BaseException as exc:  # noqa: BLE001 - report and continue
                    failures += 1
                    print(f"{scenario} run {run + 1}: FAILED: {exc}", file=sys.stderr)
                    continue
                durations.append(time.monotonic() - started)
                facts.add(hashlib.sha256((out / "facts.json").read_bytes()).hexdigest())
                archives.add(hashlib.sha256((out / "home.tar.gz").read_bytes()).hexdigest())
                digest, skipped = home_digest(out)
                homes.add(digest)
                print(f"{scenario} run {run + 1}/{args.runs}: {durations[-1]:.1f} s", file=sys.stderr)
            identical = failures == 0 and len(facts) == 1 and len(homes) == 1
            ok = ok and identical
            print(
                f"{scenario}: {args.runs - failures}/{args.runs} runs succeeded; "
                f"facts.json {'identical' if len(facts) == 1 else f'{len(facts)} variants'}; "
                f"home {'identical' if len(homes) == 1 else f'{len(homes)} variants'} "
                f"except {len(skipped)} volatile member(s) {skipped}; "
                f"home.tar.gz bytes: {len(archives)} variant(s); "
                f"time per run {min(durations or [0]):.1f}-{max(durations or [0]):.1f} s"
            )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
