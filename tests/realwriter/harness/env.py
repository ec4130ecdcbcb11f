"""Deterministic process environment for one harness worker process.

Every worker (the gateway process, each classic-CLI process) calls
:func:`install` before it imports nanobot.  It

* seeds Python's ``random`` and replaces the entropy sources nanobot uses
  (``uuid.uuid4``, ``secrets.token_*``, ``secrets.choice`` …) with functions
  that, when called from nanobot (or harness) code, draw from one seeded
  ``random.Random`` per worker (other libraries keep real entropy);
* starts the harness clock: ``time-machine`` travelling with ``tick=False``.
  Wall-clock time only moves when the harness (or the scripted LLM provider)
  moves it explicitly;
* makes ``time.monotonic_ns`` follow the harness clock.  In nanobot 0.3.5 only
  ``providers/base.py`` reads ``monotonic_ns`` (llm_calls ``duration_ms``,
  ``ttft_ms``, ``generation_ms``), so those columns become the simulated
  call durations instead of the host's real (random) few microseconds.
  ``time.monotonic`` (asyncio's clock) is left alone so timers still work.

It also provides :class:`MtimeStamper`: the kernel stamps files with the real
host time, not the simulated one, so at every harness sync point the files
that changed since the previous sync point get the simulated time of that
point as their mtime.  (A documented deviation: nanobot never calls utime.)

Nothing here touches nanobot's source files.
"""

from __future__ import annotations

import base64
import json
import os
import random
import secrets
import sys
import time
import types
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

#: Fixed absolute paths used while generating (nanobot writes absolute paths
#: into ``.workspace`` files and config, so HOME must not vary between runs).
DEFAULT_ROOT = Path("/tmp/nanoload-realwriter")
#: Another fixed root (the ``scale`` scenario's, see :func:`use_root`) reaches
#: the workers through this variable; it is unset for every other scenario.
ROOT_VARIABLE = "NANOLOAD_REALWRITER_ROOT"
FIXED_ROOT = Path(os.environ.get(ROOT_VARIABLE) or DEFAULT_ROOT)
FIXED_HOME = FIXED_ROOT / "home"
WORK_DIR = FIXED_ROOT / "work"


def use_root(root: Path) -> None:
    """Generate under *root* instead of the default fixed root (its own
    lock, so a long generation does not hold up the others)."""
    global FIXED_ROOT, FIXED_HOME, WORK_DIR
    FIXED_ROOT = root
    FIXED_HOME = root / "home"
    WORK_DIR = root / "work"


def worker_environ(home: Path, tz: str) -> dict[str, str]:
    """The complete environment a worker process runs with."""
    env = {
        "HOME": str(home),
        "TZ": tz,
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONIOENCODING": "utf-8",
        "NO_COLOR": "1",
        "TERM": "dumb",
        "COLUMNS": "100",
        "USER": "nanouser",
        "LOGNAME": "nanouser",
        "SHELL": "/bin/sh",
        "TMPDIR": str(FIXED_ROOT / "tmp"),
    }
    if FIXED_ROOT != DEFAULT_ROOT:
        env[ROOT_VARIABLE] = str(FIXED_ROOT)
    return env


class _SeededEntropy:
    """Replacements for the stdlib entropy helpers nanobot calls."""

    def __init__(self, seed: str) -> None:
        self.rng = random.Random(seed)

    def uuid4(self) -> uuid.UUID:
        return uuid.UUID(int=self.rng.getrandbits(128), version=4)

    def token_bytes(self, nbytes: int | None = None) -> bytes:
        return self.rng.randbytes(32 if nbytes is None else nbytes)

    def token_hex(self, nbytes: int | None = None) -> str:
        return self.token_bytes(nbytes).hex()

    def token_urlsafe(self, nbytes: int | None = None) -> str:
        return base64.urlsafe_b64encode(self.token_bytes(nbytes)).rstrip(b"=").decode("ascii")


def _by_caller(seeded: Callable[..., Any], real: Callable[..., Any]) -> Callable[..., Any]:
    def draw(*args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__", "")
        if caller.startswith(("nanobot", "harness")):
            return seeded(*args, **kwargs)
        return real(*args, **kwargs)

    draw.__name__ = getattr(real, "__name__", "draw")
    return draw


_ENTROPY: _SeededEntropy | None = None
CLOCK: Clock | None = None


def install(seed: int, worker: str, start_utc_ms: int, tz: str) -> Clock:
    """Seed entropy and start the frozen harness clock for this process."""
    global _ENTROPY, CLOCK
    if os.environ.get("PYTHONHASHSEED") != "0":
        raise RuntimeError("workers must run with PYTHONHASHSEED=0 (use generate.py)")
    os.environ["TZ"] = tz
    time.tzset()
    random.seed(f"{seed}:{worker}:random")
    ent = _SeededEntropy(f"{seed}:{worker}:entropy")
    _ENTROPY = ent
    # Only callers in nanobot (and the harness) draw from the seeded stream.
    # Libraries keep real entropy, so e.g. websockets' frame masks or
    # filelock's retry jitter -- drawn at moments that depend on real time --
    # cannot shift the identifiers nanobot writes.
    for module, name, seeded in (
        (uuid, "uuid4", ent.uuid4),
        (secrets, "token_bytes", ent.token_bytes),
        (secrets, "token_hex", ent.token_hex),
        (secrets, "token_urlsafe", ent.token_urlsafe),
        (secrets, "choice", ent.rng.choice),
        (secrets, "randbelow", ent.rng.randrange),
        (secrets, "randbits", ent.rng.getrandbits),
    ):
        setattr(module, name, _by_caller(seeded, getattr(module, name)))
    CLOCK = Clock(tz, start_utc_ms)
    # Only nanobot/providers/base.py reads monotonic_ns (call telemetry).
    time.monotonic_ns = time.time_ns  # type: ignore[assignment]
    return CLOCK


class _ClockedTime(types.ModuleType):
    """``time`` as seen by one nanobot module: perf_counter follows the harness clock."""

    def __getattr__(self, name: str) -> object:
        return getattr(time, name)

    @staticmethod
    def perf_counter() -> float:
        return time.time_ns() / 1e9


def clock_perf_counter_in(module: types.ModuleType) -> None:
    """Give *module* a ``time`` whose perf_counter is the harness clock.

    Used for ``nanobot.agent.runner``, which measures per-round ttft and
    generation time with ``time.perf_counter`` and persists them (turn usage
    in session metadata ``_last_usage`` and in WebUI ``turn_end`` records).
    """
    if getattr(module, "time", None) is not time:
        raise RuntimeError(f"{module.__name__} does not use the time module as expected")
    module.time = _ClockedTime("time")  # type: ignore[attr-defined]


class Clock:
    """The harness clock: frozen wall time that only moves forward on request."""

    def __init__(self, tz: str, start_utc_ms: int) -> None:
        import time_machine

        self.zone = ZoneInfo(tz)
        start = datetime.fromtimestamp(start_utc_ms / 1000, tz=timezone.utc)
        self._travel = time_machine.travel(start.astimezone(self.zone), tick=False)
        self._traveller = self._travel.start()

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def now_utc(self) -> datetime:
        return datetime.fromtimestamp(time.time_ns() / 1e9, tz=timezone.utc)

    def now_local(self) -> datetime:
        return self.now_utc().astimezone(self.zone).replace(tzinfo=None)

    def advance(self, seconds: float) -> None:
        if seconds < 0:
            raise ValueError("the harness clock never moves backwards")
        self._traveller.shift(timedelta(seconds=seconds))

    def move_to_ms(self, utc_ms: int) -> None:
        now = self.now_ms()
        if utc_ms < now:
            raise ValueError(f"clock would move backwards: {utc_ms} < {now}")
        self._traveller.shift(timedelta(milliseconds=utc_ms - now))

    def move_to_local(self, local: datetime) -> None:
        self.move_to_ms(local_to_utc_ms(local, self.zone))

    def stop(self) -> None:
        self._travel.stop()


def local_to_utc_ms(local: datetime, zone: ZoneInfo) -> int:
    """Naive local wall time -> UTC epoch ms; refuses ambiguous or skipped times."""
    if local.tzinfo is not None:
        raise ValueError("expected a naive local time")
    a = local.replace(tzinfo=zone, fold=0)
    b = local.replace(tzinfo=zone, fold=1)
    if a.utcoffset() != b.utcoffset():
        raise ValueError(f"{local} is ambiguous or skipped in {zone.key}")
    back = a.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None)
    if back != local:
        raise ValueError(f"{local} does not exist in {zone.key}")
    return int(a.timestamp() * 1000)


@dataclass
class _Seen:
    mtime_ns: int
    size: int
    ino: int


class MtimeStamper:
    """Give files the simulated time of the sync point after they changed."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._seen: dict[str, _Seen] = {}

    def stamp(self) -> None:
        now_ns = time.time_ns()
        entries: list[tuple[str, os.stat_result]] = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames.sort()
            for name in sorted(filenames) + dirnames:
                path = os.path.join(dirpath, name)
                entries.append((path, os.lstat(path)))
        entries.append((str(self.root), os.lstat(self.root)))
        # Deepest first so touching a child never follows its parent.
        entries.sort(key=lambda item: item[0].count(os.sep), reverse=True)
        for path, st in entries:
            old = self._seen.get(path)
            if old is not None and (old.mtime_ns, old.size, old.ino) == (st.st_mtime_ns, st.st_size, st.st_ino):
                continue
            os.utime(path, ns=(now_ns, now_ns), follow_symlinks=False)
            self._seen[path] = _Seen(now_ns, st.st_size, st.st_ino)
        # Directory mtimes change when entries are created or removed; a
        # second pass catches parents touched by the first pass's children.
        for path in list(self._seen):
            if not os.path.lexists(path):
                del self._seen[path]


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
