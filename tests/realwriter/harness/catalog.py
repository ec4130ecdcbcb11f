"""Scenario catalogue (importable without nanobot, for ``generate.py --list``)."""

from __future__ import annotations

from dataclasses import dataclass


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
    )
}
