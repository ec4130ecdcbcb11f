"""Scenario catalogue (importable without nanobot, for ``generate.py --list``)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo


@dataclass(frozen=True)
class ScenarioInfo:
    name: str
    tz: str
    #: local wall time the harness clock starts at
    start_local: str
    summary: str


SCENARIOS: dict[str, ScenarioInfo] = {
    info.name: info
    for info in (
        ScenarioInfo(
            name="gateway",
            tz="Europe/Berlin",
            start_local="2026-10-24T08:40:00",
            summary=(
                "one instance, gateway running 2026-10-24 08:45 .. 2026-10-26 09:45 across the "
                "CEST->CET switch: WebUI chats over the WebSocket channel (agentic turns of 5-20 "
                "minutes, tool-call-only steps, reused call_0, a retried 529 provider error), a "
                "Telegram chat (offline channel) that creates a daily 09:00 Europe/Berlin cron "
                "job, a /trigger local trigger, a spawned subagent, /new, pairing requests; a "
                "classic CLI session in the default workspace while the gateway runs"
            ),
        ),
        ScenarioInfo(
            name="explore",
            tz="drawn per seed",
            start_local="drawn per seed",
            summary=(
                "a seeded random stretch of 1-3 days of one user (issue 24 section 1): host zone "
                "drawn from EXPLORE_ZONES (half-hour and 45-minute offsets, DST), the start often "
                "placed so a DST change falls inside; one gateway with WebUI chats, a Telegram chat "
                "and classic CLI sessions; /new in each and the same prompt asked again after it, "
                "a deleted WebUI chat, long agentic turns, provider errors, reused and unique tool "
                "call ids, a subagent, a daily cron job and a local trigger, some firing while a "
                "WebUI turn runs, and concurrent turns in two sessions"
            ),
        ),
        ScenarioInfo(
            name="pasted-secrets",
            tz="Europe/Berlin",
            start_local="2026-10-27T09:50:00",
            summary=(
                "one instance, a classic CLI session in which the user pastes an OpenAI-style "
                "key and a GitHub token into the chat, the model writes the key into a .env file "
                "(tool arguments) and echoes an Authorization: Bearer header (tool result); the "
                "CLI history holds the pasted lines too"
            ),
        ),
        ScenarioInfo(
            name="workspaces",
            tz="Europe/Berlin",
            start_local="2026-10-24T18:50:00",
            summary=(
                "classic CLI sessions in two workspaces of one instance (the default "
                "~/.nanobot/workspace and ~/projects/alpha via --workspace) with multi-line "
                "input, /new and exit; a short gateway run with a WebUI chat on 2026-10-25; a "
                "second, CLI-only instance ~/.nanobot-work (--config)"
            ),
        ),
        ScenarioInfo(
            name="reasked-thinking",
            tz="Europe/Berlin",
            start_local="2026-11-05T08:50:00",
            summary=(
                "one instance, gateway 2026-11-05 08:55 .. 12:00, nanobot's own Anthropic and "
                "Bedrock providers (SDK responses on the wire) with extended thinking: a WebUI "
                "chat asks an agentic question, /new erases it and the same words are asked "
                "again twenty minutes after the first time; a second chat switches to a Bedrock "
                "preset (/model), whose thinking is stored as reasoning_content and "
                "thinking_blocks, one block redacted"
            ),
        ),
        ScenarioInfo(
            name="scale",
            tz="drawn per seed",
            start_local="drawn per seed",
            summary=(
                "benchmark home of realistic shape, grown until it reaches --size-mb (default "
                "20): weeks of one heavy user drawn from the seed -- many WebUI chats, long ones "
                "with tens of turns, whose tool calls (read_file, grep, exec on logs and documents "
                "placed in the workspace) return 50-200 KB results; three Telegram chats, classic "
                "CLI sessions, daily cron jobs and a local trigger (run records), subagents, idle "
                "compaction, gateway restarts; written to DIR/home/ without facts.json"
            ),
        ),
    )
}


# ---------------------------------------------------------------------------
# explore: the setting drawn from the seed
# ---------------------------------------------------------------------------

#: Host zones the explore scenario draws from: whole-hour, half-hour and
#: 45-minute offsets, with and without DST, one with a 30-minute DST shift.
EXPLORE_ZONES = (
    "Europe/Berlin",
    "America/New_York",
    "Asia/Kolkata",  # +5:30
    "Asia/Kathmandu",  # +5:45
    "Australia/Adelaide",  # +9:30 / +10:30
    "Australia/Lord_Howe",  # +10:30 / +11, a 30-minute DST shift
    "Pacific/Chatham",  # +12:45 / +13:45
    "UTC",
    "America/St_Johns",  # -3:30 / -2:30
)

EXPLORE_YEAR = 2026


def zone_transitions(tz: str, year: int) -> list[datetime]:
    """Every UTC instant (whole minute) in *year* at which *tz*'s offset changes."""
    zone = ZoneInfo(tz)
    out = []
    t = datetime(year, 1, 1, tzinfo=timezone.utc)
    end = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
    before = t.astimezone(zone).utcoffset()
    while t < end:
        step = t + timedelta(hours=1)
        after = step.astimezone(zone).utcoffset()
        if after != before:
            m = t
            while m.astimezone(zone).utcoffset() == before:
                m += timedelta(minutes=1)
            out.append(m)
            before = after
        t = step
    return out


@dataclass(frozen=True)
class ExploreSetting:
    tz: str
    #: the first simulated day (local) and how many days the user is active
    first_day: date
    days: int
    #: local wall time the harness clock starts at (before the gateway starts)
    start_local: str


def explore_setting(seed: int) -> ExploreSetting:
    """The zone and days of explore seed *seed* (its own random stream)."""
    rng = random.Random(f"explore-setting:{seed}")
    tz = rng.choice(EXPLORE_ZONES)
    transitions = zone_transitions(tz, EXPLORE_YEAR)
    if transitions and rng.random() < 0.5:
        # A DST change falls in a night inside the span: on the night before
        # day 2 or 3 (transitions happen between 00:00 and 04:00 local).
        change = rng.choice(transitions).astimezone(ZoneInfo(tz))
        days = rng.randint(2, 3)
        first = change.date() - timedelta(days=rng.randint(1, days - 1))
    else:
        days = rng.randint(1, 3)
        first = date(EXPLORE_YEAR, 1, 4) + timedelta(days=rng.randrange(355))
    start = datetime(first.year, first.month, first.day, 6, 30) + timedelta(minutes=rng.randrange(0, 90, 5))
    return ExploreSetting(tz=tz, first_day=first, days=days, start_local=start.isoformat())


# ---------------------------------------------------------------------------
# scale: the setting drawn from the seed
# ---------------------------------------------------------------------------

#: Host zones of the scale scenario (its days avoid the night hours, so DST
#: changes pass between them).
SCALE_ZONES = ("Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Adelaide", "UTC")


def scale_setting(seed: int) -> ExploreSetting:
    """The zone and first day of scale seed *seed* (``days``: an upper bound,
    the run ends when the home reaches its size)."""
    rng = random.Random(f"scale-setting:{seed}")
    tz = rng.choice(SCALE_ZONES)
    first = date(EXPLORE_YEAR, 1, 5) + timedelta(days=rng.randrange(240))
    start = datetime(first.year, first.month, first.day, 6, 30) + timedelta(minutes=rng.randrange(0, 60, 5))
    return ExploreSetting(tz=tz, first_day=first, days=400, start_local=start.isoformat())


def setting(name: str, seed: int) -> tuple[str, str]:
    """(zone, start local time) of scenario *name* with *seed*."""
    if name == "explore":
        drawn = explore_setting(seed)
        return drawn.tz, drawn.start_local
    if name == "scale":
        drawn = scale_setting(seed)
        return drawn.tz, drawn.start_local
    info = SCENARIOS[name]
    return info.tz, info.start_local
