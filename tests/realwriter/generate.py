#!/usr/bin/env python3
"""Generate a real nanobot home (nanobot-ai 0.3.5's own code) plus facts.json.

    python generate.py --list
    python generate.py --scenario gateway --out DIR [--seed N]

Run it with the interpreter of the venv that ``setup.sh`` prints.  Steps:

1. wipe the fixed generation root ``/tmp/nanoload-realwriter`` (HOME is
   ``/tmp/nanoload-realwriter/home`` because nanobot writes absolute paths);
2. run the scenario in a worker process with a fixed environment
   (``harness/main_worker.py``: nanobot gateway + WebUI/Telegram/cron/trigger
   drivers, classic-CLI subprocesses, scripted LLM backend, frozen clock);
3. snapshot the home into ``DIR/home.tar.gz`` (deterministic tar: sorted
   entries, uid/gid 0, mode bits kept, mtimes as left in the home, gzip
   mtime 0) -- or ``DIR/home/`` when no workspace holds a ``.git``;
4. compute ``DIR/facts.json`` in a fresh process from nanobot's own readers
   run on the (now private) generation copy (``harness/facts_worker.py``);
5. remove the generation root.

Seeds of the committed fixtures: ``seeds.json``.

``--scenario scale --seed N --size-mb M`` (benchmarks, issue 30) differs:
it generates under its own root ``/tmp/nanoload-realwriter-scale`` (own
lock), grows the home until it holds M MB, moves it to ``DIR/home/`` (a
directory even with the workspaces' dulwich ``.git``) and writes
``DIR/scale.json`` (what the home holds, generation time) instead of
facts.json.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gzip
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from harness import env  # noqa: E402  (nanobot-free module)
from harness.catalog import SCENARIOS, setting  # noqa: E402


def run_worker(module: str, *args: str, tz: str, log: Path, timeout: float = 600) -> None:
    # faulthandler: a worker stopped for taking too long prints every
    # thread's stack into its log first (SIGABRT), so a hang names its line
    environ = env.worker_environ(env.FIXED_HOME, tz) | {"PYTHONFAULTHANDLER": "1"}
    with open(log, "wb") as stderr:
        # its own process group: a worker stopped for taking too long takes
        # the CLI workers it started with it (an orphan would write into the
        # next generation's fixed root)
        proc = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            cwd=HERE, env=environ, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGABRT)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            sys.stderr.write(log.read_text(encoding="utf-8", errors="replace")[-20000:])
            raise SystemExit(f"{module} did not finish in {timeout:.0f} s; its stacks are above (log: {log})")
    if proc.returncode != 0:
        sys.stderr.write(log.read_text(encoding="utf-8", errors="replace"))
        raise SystemExit(f"{module} failed with exit code {proc.returncode} (log: {log})")


def has_nested_git(home: Path) -> bool:
    return any(p.name == ".git" and p.is_dir() for p in home.rglob(".git"))


def write_tarball(home: Path, target: Path) -> None:
    """Deterministic tar.gz of *home* with member names ``./...``."""
    paths: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(home):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            paths.append(Path(dirpath) / name)
    paths.sort(key=lambda p: p.relative_to(home).as_posix())
    with open(target, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar:
                for path in [home, *paths]:
                    st = path.lstat()
                    name = "." if path == home else "./" + path.relative_to(home).as_posix()
                    info = tarfile.TarInfo(name)
                    info.mode = stat.S_IMODE(st.st_mode)
                    info.mtime = int(st.st_mtime)
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    if stat.S_ISDIR(st.st_mode):
                        info.type = tarfile.DIRTYPE
                        tar.addfile(info)
                    elif stat.S_ISLNK(st.st_mode):
                        info.type = tarfile.SYMTYPE
                        info.linkname = os.readlink(path)
                        tar.addfile(info)
                    elif stat.S_ISREG(st.st_mode):
                        info.size = st.st_size
                        with open(path, "rb") as handle:
                            tar.addfile(info, handle)
                    else:
                        raise RuntimeError(f"unexpected file type: {path}")


def copy_home(home: Path, target: Path) -> None:
    shutil.copytree(home, target, symlinks=True, copy_function=shutil.copy2)
    for dirpath, _dirnames, _files in os.walk(home, topdown=False):
        src = Path(dirpath)
        shutil.copystat(src, target / src.relative_to(home))


@contextmanager
def fixed_root(root: Path, subdirs: Iterable[Path], *, keep: bool) -> Iterator[None]:
    """`root` made afresh with `subdirs`, under a lock (one generation at a
    time uses the fixed paths), and removed afterwards unless `keep`."""
    root.parent.mkdir(parents=True, exist_ok=True)
    lock = open(str(root) + ".lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        if root.exists():
            shutil.rmtree(root)
        for sub in subdirs:
            sub.mkdir(parents=True)
        yield
    finally:
        if not keep and root.exists():
            shutil.rmtree(root)
        fcntl.flock(lock, fcntl.LOCK_UN)
        lock.close()


def export_home(home: Path, out: Path, also: Iterable[str] = ()) -> bool:
    """`home` into `out` as `home.tar.gz` when it holds a nested git
    repository (git refuses to commit one), else as `home/`, after removing
    what an earlier run left there (those two and `also`). True: a tarball."""
    out.mkdir(parents=True, exist_ok=True)
    for old in ("home", "home.tar.gz", *also):
        target = out / old
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    if has_nested_git(home):
        write_tarball(home, out / "home.tar.gz")
        return True
    copy_home(home, out / "home")
    return False


def generate(scenario: str, seed: int, out: Path, *, keep: bool = False, size_mb: float | None = None) -> dict:
    if scenario == "scale":
        return generate_scale(seed, out, keep=keep, size_mb=size_mb or SCALE_DEFAULT_MB)
    if size_mb is not None:
        raise ValueError("--size-mb is for the scale scenario only")
    tz, start_local = setting(scenario, seed)
    root = env.FIXED_ROOT
    with fixed_root(root, (env.FIXED_HOME, env.WORK_DIR, root / "tmp"), keep=keep):
        start_ms = env.local_to_utc_ms(datetime.fromisoformat(start_local), ZoneInfo(tz))
        spec = {"scenario": scenario, "seed": seed, "tz": tz, "start_ms": start_ms}
        spec_path = env.WORK_DIR / "main.spec.json"
        result_path = env.WORK_DIR / "main.result.json"
        env.write_json(spec_path, spec)
        run_worker("harness.main_worker", str(spec_path), str(result_path), tz=tz,
                   log=env.WORK_DIR / "main.log")

        spec["archive"] = "home.tar.gz" if export_home(env.FIXED_HOME, out, also=("facts.json",)) else None
        # From here on the generation home is a private copy.
        env.write_json(spec_path, spec)
        run_worker("harness.facts_worker", str(spec_path), str(result_path), str(out / "facts.json"),
                   tz=tz, log=env.WORK_DIR / "facts.log")
        log = json.loads(result_path.read_text(encoding="utf-8"))
        return {"spec": spec, "notes": log.get("notes", []), "turns": len(log["turns"]), "calls": len(log["calls"])}


#: the scale scenario's own fixed root (and lock): a long generation there
#: does not hold up the fixture generations under /tmp/nanoload-realwriter
SCALE_ROOT = Path("/tmp/nanoload-realwriter-scale")
SCALE_DEFAULT_MB = 20.0


def generate_scale(seed: int, out: Path, *, keep: bool, size_mb: float) -> dict:
    """The ``scale`` scenario: ``DIR/home/`` (a directory, its workspaces'
    dulwich ``.git`` included) and ``DIR/scale.json`` (what the home holds,
    generation time); no facts.json."""
    tz, start_local = setting("scale", seed)
    env.use_root(SCALE_ROOT)
    try:
        return _generate_scale(seed, out, keep=keep, size_mb=size_mb, tz=tz, start_local=start_local)
    finally:
        env.use_root(env.DEFAULT_ROOT)


def _generate_scale(seed: int, out: Path, *, keep: bool, size_mb: float, tz: str, start_local: str) -> dict:
    from harness import scale_stats

    root = env.FIXED_ROOT
    with fixed_root(root, (env.FIXED_HOME, env.WORK_DIR, root / "tmp"), keep=keep):
        start_ms = env.local_to_utc_ms(datetime.fromisoformat(start_local), ZoneInfo(tz))
        spec = {"scenario": "scale", "seed": seed, "tz": tz, "start_ms": start_ms, "size_mb": size_mb}
        spec_path = env.WORK_DIR / "main.spec.json"
        result_path = env.WORK_DIR / "main.result.json"
        env.write_json(spec_path, spec)
        started = time.monotonic()
        # about 10 s of generation per MB on an idle 2-core machine
        run_worker("harness.main_worker", str(spec_path), str(result_path), tz=tz,
                   log=env.WORK_DIR / "main.log", timeout=600 + 60 * size_mb)
        seconds = time.monotonic() - started
        out.mkdir(parents=True, exist_ok=True)
        for old in ("home", "home.tar.gz", "facts.json", "scale.json"):
            target = out / old
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
        if keep:
            copy_home(env.FIXED_HOME, out / "home")
        else:
            try:
                os.rename(env.FIXED_HOME, out / "home")
            except OSError:  # another file system
                copy_home(env.FIXED_HOME, out / "home")
        log = json.loads(result_path.read_text(encoding="utf-8"))
        summary = {
            "seed": seed,
            "size_mb": size_mb,
            "tz": tz,
            "start_local": start_local,
            "generation_seconds": round(seconds, 1),
            "generation_home": str(env.FIXED_HOME),
            "driven_actions": len(log["turns"]),
            "model_calls": len(log["calls"]),
            "timeline": log.get("scale", {}),
            "home": scale_stats.collect(out / "home"),
        }
        env.write_json(out / "scale.json", summary)
        return {"spec": spec, "notes": log.get("notes", []), "turns": len(log["turns"]), "calls": len(log["calls"]),
                "summary": summary}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="list scenarios and exit")
    parser.add_argument("--scenario", choices=sorted(SCENARIOS))
    parser.add_argument("--seed", type=int, help="default: the scenario's seed in seeds.json")
    parser.add_argument("--out", type=Path, help="output directory (home.tar.gz or home/, facts.json)")
    parser.add_argument("--keep", action="store_true", help="keep /tmp/nanoload-realwriter for debugging")
    parser.add_argument("--size-mb", type=float,
                        help=f"scale only: grow the home to this many MB (default {SCALE_DEFAULT_MB:g})")
    args = parser.parse_args()
    if args.list:
        seeds = json.loads((HERE / "seeds.json").read_text(encoding="utf-8"))
        for name, info in SCENARIOS.items():
            print(f"{name}\tseed {seeds.get(name, '-')}\t{info.tz}\t{info.summary}")
        return
    if not args.scenario or not args.out:
        parser.error("--scenario and --out are required (or --list)")
    if args.size_mb is not None and args.scenario != "scale":
        parser.error("--size-mb is for --scenario scale only")
    seed = args.seed
    if seed is None:
        seed = json.loads((HERE / "seeds.json").read_text(encoding="utf-8")).get(args.scenario)
        if seed is None:
            parser.error(f"no seed for {args.scenario} in seeds.json: give --seed")
    summary = generate(args.scenario, seed, args.out.resolve(), keep=args.keep, size_mb=args.size_mb)
    for note in summary["notes"]:
        print(f"note: {note}", file=sys.stderr)
    print(f"{args.scenario} seed {seed}: {summary['turns']} driven actions, {summary['calls']} model calls "
          f"-> {args.out}")
    if "summary" in summary:
        print(json.dumps(summary["summary"], indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
