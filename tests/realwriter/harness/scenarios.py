"""The scenarios: what the simulated user does, and what the scripted model answers.

Each scenario is an async function driving a :class:`harness.driver.Driver`.
Times are local wall times in the scenario's zone (Europe/Berlin, switching
from CEST to CET at 2026-10-25 03:00); no activity falls in the repeated hour.
Tool calls are real nanobot tools doing harmless, deterministic things inside
the workspace (``exec`` of ``echo``/``printf``, ``read_file``, ``write_file``,
``list_dir``, ``cron``, ``spawn``).  Tool call ids are reused on purpose
(``call_0`` starts most turns, as some providers do).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from .catalog import SCENARIOS
from .driver import Driver
from .provider import Call, Reply


def C(call_id: str, tool: str, **args: Any) -> Call:
    return Call(call_id, tool, args)


def canary(seed: int, kind: str, length: int = 24) -> str:
    return hashlib.sha256(f"nanoload-realwriter:{seed}:{kind}".encode()).hexdigest()[:length]


def base_config(config: Any, *, seed: int, workspace: str | None = None,
                tz: str = "Europe/Berlin") -> list[str]:
    """Settings shared by every harness instance; returns the canary secrets.

    ``tz`` is the user's zone (``agents.defaults.timezone``): the scenario's
    zone, the host zone the harness clock runs in."""
    d = config.agents.defaults
    d.model = "anthropic/claude-sonnet-4-5"
    d.provider = "anthropic"
    d.timezone = tz
    d.timezone_mode = "manual"
    d.dream.enabled = False  # no unscripted Dream runs (the harness drives the cron timer)
    if workspace is not None:
        d.workspace = workspace
    config.gateway.heartbeat.enabled = False
    anthropic_key = f"sk-ant-canary-{seed}-{canary(seed, 'anthropic')}"
    config.providers.anthropic.api_key = anthropic_key
    config.tools.restrict_to_workspace = True
    config.tools.exec.timeout = 30
    config.tools.exec.allow_patterns = ["echo .*", "printf .*"]
    config.tools.exec.deny_patterns = [r"rm\s+-rf", "curl .*"]
    config.tools.exec.allowed_env_keys = ["LANG", "TZ"]
    return [anthropic_key]


def telegram_channel(config: Any, *, seed: int, allow_from: list[str]) -> str:
    """nanobot's Telegram channel (the harness's offline one); returns its
    canary token."""
    token = f"7{seed:09d}:AA-canary-{canary(seed, 'telegram')}"
    config.channels.telegram = {
        "enabled": True,
        "token": token,
        "allowFrom": allow_from,
        "streaming": False,
    }
    return token


def webui_channel(config: Any, *, seed: int) -> str:
    """nanobot's WebSocket channel (the WebUI's); returns its canary token
    secret."""
    secret = f"nb-webui-canary-{seed}-{canary(seed, 'webui', 16)}"
    config.channels.websocket = {
        "enabled": True,
        "host": "127.0.0.1",
        "port": 8765,
        "tokenIssueSecret": secret,
    }
    return secret


# ---------------------------------------------------------------------------
# gateway
# ---------------------------------------------------------------------------

BACKUP_JOB = "backup-digest"
BACKUP_MESSAGE = "Run the backup check and give me a two-line digest."
SUBAGENT_TASK = "List the files in notes/ and summarize what each one is about in one line."


async def gateway(d: Driver) -> dict[str, Any]:
    seed = d.seed
    secrets: list[str] = []

    def configure(config: Any) -> None:
        secrets.extend(base_config(config, seed=seed))
        secrets.append(telegram_channel(config, seed=seed, allow_from=["4242"]))
        secrets.append(webui_channel(config, seed=seed))

    d.write_config(".nanobot", configure)

    await d.at("2026-10-24T08:45:00")
    await d.start_gateway(".nanobot")

    # Telegram: the user asks for a daily digest; the model creates a cron job.
    await d.at("2026-10-24T08:50:00")
    await d.telegram(
        "Every morning at 9, run the backup check and send me a short digest.",
        [
            Reply("", [C("call_0", "cron", action="add", name=BACKUP_JOB, message=BACKUP_MESSAGE,
                         cron_expr="0 9 * * *", tz="Europe/Berlin")], think=35,
                  usage=(2150, 96, None, None)),
            Reply("Done. I'll send you the backup digest every day at 09:00 (Berlin time).",
                  think=20, usage=(2390, 31, 2048, None)),
        ],
        label="tg-cron-setup",
    )

    # 09:00 CEST: first run of the daily job (before the DST switch).
    await d.cron_due(BACKUP_JOB, [
        Reply("", [C("call_0", "exec", command="printf 'backup ok: 3 snapshots, newest 02:10\\n'")],
              think=40, usage=(2600, 70, 2048, None)),
        Reply("Backup digest: 3 snapshots, newest from 02:10.\nNothing failed overnight.",
              think=25, usage=(2750, 28, 2048, None)),
    ], label="cron-run-1")

    # WebUI: a long agentic turn (18 minutes, six model calls).
    await d.at("2026-10-24T09:20:00")
    tab = await d.webui_tab()
    chat_a = await tab.new_chat()
    await d.webui_turn(tab, chat_a, "Write a short status note for the home server into notes/status.md.", [
        Reply("", [C("call_0", "exec", command="echo checking workspace")], think=90,
              usage=(3100, 40, None, None)),
        Reply("Let me look at the workspace first.", [C("call_1", "list_dir", path=".")], think=150,
              usage=(3300, 52, 3072, 0), reasoning="The note needs facts; list the workspace before writing."),
        Reply("", [C("call_2", "write_file", path="notes/status.md",
                     content="# Home server status\n\n- backups: 3 snapshots, newest 02:10\n- disk: fine\n")],
              think=240, usage=(3500, 180, 3072, 256)),
        Reply("", [C("call_3", "read_file", path="notes/status.md")], think=180, usage=(3800, 30, 3328, 0)),
        Reply("", [C("call_4", "exec", command="printf 'status.md: 3 lines\\n'")], think=300,
              usage=(4000, 44, 3328, 0)),
        Reply("I wrote **notes/status.md** with the backup and disk status (3 lines).",
              think=120, usage=(4200, 25, 3328, 0)),
    ], label="webui-a-1")

    # Second turn of the same chat: the model reuses call_0 (nanobot drops its
    # result when saving; the WebUI transcript keeps it) after a retried 529.
    await d.at("2026-10-24T10:05:00")
    await d.webui_turn(tab, chat_a, "Add a line that the router was rebooted today.", [
        Reply(error=(529, "overloaded", "529 Overloaded: the API is temporarily overloaded"), think=8),
        Reply("", [C("call_0", "exec", command="echo router rebooted")], think=70,
              usage=(4400, 36, 4096, 0)),
        Reply("", [C("call_5", "edit_file", path="notes/status.md", old_text="- disk: fine\n",
                     new_text="- disk: fine\n- router: rebooted today\n")], think=110,
              usage=(4500, 60, 4096, 0)),
        Reply("Added: router rebooted today.", think=45, usage=(4600, 12, 4096, 0)),
    ], label="webui-a-2")
    await d.webui_close(tab)

    # Telegram: a local trigger for CI alerts.
    await d.at("2026-10-24T11:00:00")
    await d.telegram("/trigger ci-alerts", label="tg-trigger-create", kind="command")

    # Telegram: a two-step task (later erased by /new).
    await d.at("2026-10-24T11:30:00")
    await d.telegram(
        "How full is the backup disk? Keep it short.",
        [
            Reply("", [C("call_0", "exec", command="printf 'backup disk: 61 percent used\\n'")], think=30,
                  usage=(2900, 64, 2048, None)),
            Reply("", [C("call_1", "write_file", path="notes/disk.md", content="backup disk: 61% used\n")],
                  think=45, usage=(3050, 60, 2048, None)),
            Reply("The backup disk is 61 % full; I noted it in notes/disk.md.", think=20,
                  usage=(3200, 22, 3072, None)),
        ],
        label="tg-disk",
    )

    # A CI job calls `nanobot trigger <id> "..."`.
    await d.at("2026-10-24T14:10:00")
    await d.trigger("ci-alerts", "build #41 failed on main: test_backup timed out after 300s", [
        Reply("", [C("call_0", "exec", command="echo build 41 failed: test_backup timeout")], think=30,
              usage=(2500, 40, 2048, None)),
        Reply("CI alert: build #41 on main failed (test_backup timed out after 300 s).",
              think=25, usage=(2650, 22, 2048, None)),
    ], label="trigger-run-1")

    # The user opens a terminal and uses the classic CLI while the gateway runs.
    await d.cli(instance=".nanobot", label="cli", entries=[
        {"at": "2026-10-24T15:00:00", "label": "cli-1", "text": "what's in notes/status.md?",
         "replies": [
             Reply("", [C("call_0", "read_file", path="notes/status.md")], think=40),
             Reply("It lists backups (3 snapshots), disk fine, router rebooted today.", think=30),
         ]},
        {"gap_s": 150, "label": "cli-2", "text": "summarize it\nin one sentence",
         "replies": [Reply("Backups, disk and router are all fine.", think=35)]},
        {"gap_s": 90, "label": "cli-exit", "kind": "exit", "text": "exit"},
    ])

    # WebUI: a second chat in a fresh tab.
    await d.at("2026-10-24T16:30:00")
    tab = await d.webui_tab()
    chat_b = await tab.new_chat()
    # The first answer hits the output limit (finish_reason "length"); nanobot
    # asks the model to continue and streams both parts as one message.
    await d.webui_turn(tab, chat_b, "Draft a two-sentence reply to Tom about the backup schedule.", [
        Reply("Hi Tom, backups run every night and I get a digest", think=50,
              usage=(1900, 64, None, None), finish="length"),
        Reply(" at 09:00. Everything has been fine so far.", think=20, usage=(1990, 14, 1024, None)),
    ], label="webui-b-1")
    await d.at("2026-10-24T16:40:00")
    await d.webui_turn(tab, chat_b, "/status", [], label="webui-b-status", command=True)
    await d.webui_close(tab)

    # Telegram: a last question, then /new archives and clears the chat (the
    # archive call is recorded with source "dream").
    await d.at("2026-10-24T17:50:00")
    await d.telegram("Remind me: what was the CI failure this afternoon?", [
        Reply("Build #41 on main: test_backup timed out after 300 s.", think=20, usage=(3600, 20, 3072, None)),
    ], label="tg-before-new")
    await d.at("2026-10-24T18:00:00")
    await d.telegram("/new", label="tg-new", kind="new")
    await d.at("2026-10-24T18:05:00")
    await d.telegram("Thanks, that's all for today.",
                     [Reply("You're welcome, have a good evening!", think=15, usage=(1400, 12, None, None))],
                     label="tg-after-new")

    # 2026-10-25, after the switch to CET: the job still runs at 09:00 local.
    await d.cron_due(BACKUP_JOB, [
        Reply("", [C("call_0", "exec", command="printf 'backup ok: 4 snapshots, newest 02:40\\n'")],
              think=40, usage=(2300, 70, 2048, None)),
        Reply("Backup digest: 4 snapshots, newest from 02:40.\nNothing failed overnight.",
              think=25, usage=(2450, 28, 2048, None)),
    ], label="cron-run-2")

    # WebUI, next day: the chat is reopened; a spawned subagent works while the
    # turn waits, and its result is injected into the turn.
    await d.at("2026-10-25T10:15:00")
    tab = await d.webui_tab()
    await tab.attach(chat_a)
    await d.webui_turn(tab, chat_a, "Can you have a helper go through my notes and tell me what's in them?", [
        Reply("", [C("call_0", "spawn", task=SUBAGENT_TASK, label="notes survey")], think=30,
              usage=(4700, 64, 4096, 0)),
        Reply("I asked a helper to go through notes/; I'll report back when it is done.",
              think=20, usage=(4800, 24, 4096, 0), wait_subagents=True),
        Reply("The helper found two notes: notes/status.md (home server status) and "
              "notes/disk.md (backup disk usage).", think=60, usage=(5200, 30, 4096, 0)),
    ], subagents={SUBAGENT_TASK: [
        Reply("", [C("call_0", "list_dir", path="notes")], think=80, usage=(1500, 30, None, None)),
        Reply("", [C("call_1", "read_file", path="notes/status.md")], think=150, usage=(1700, 28, 1024, None)),
        Reply("", [C("call_2", "read_file", path="notes/disk.md")], think=120, usage=(1850, 28, 1024, None)),
        Reply("notes/status.md: home server status (backups, disk, router). "
              "notes/disk.md: backup disk usage (61 %).", think=90, usage=(1900, 20, 1024, None)),
    ]}, label="webui-a-3")
    await d.webui_close(tab)

    # Pairing: an unknown Telegram user asks for access, the owner approves.
    await d.at("2026-10-25T11:00:00")
    record = await d.telegram("hi, can I use this bot too?", label="tg-pairing-request", sender="3131",
                              kind="pairing")
    code = _pairing_code(record)
    await d.at("2026-10-25T11:02:00")
    await d.telegram(f"/pairing approve {code}", label="tg-pairing-approve", kind="command")
    await d.at("2026-10-25T11:10:00")
    await d.telegram("Thanks! What can you do?", [
        Reply("I can run small tasks on this home server, keep notes and send reminders.",
              think=20, usage=(1300, 20, None, None)),
    ], label="tg-3131-1", sender="3131")

    # Another CI notification, into the (new) Telegram conversation.
    await d.at("2026-10-25T14:00:00")
    await d.trigger("ci-alerts", "build #42 passed on main", [
        Reply("CI: build #42 on main passed.", think=15, usage=(1600, 12, None, None)),
    ], label="trigger-run-2")

    # 2026-10-26: third run, still 09:00 local.
    await d.cron_due(BACKUP_JOB, [
        Reply("", [C("call_0", "exec", command="printf 'backup ok: 5 snapshots, newest 02:05\\n'")],
              think=40, usage=(2500, 70, 2048, None)),
        Reply("Backup digest: 5 snapshots, newest from 02:05.\nNothing failed overnight.",
              think=25, usage=(2650, 28, 2048, None)),
    ], label="cron-run-3")

    # Another stranger writes; the pairing code stays pending.
    await d.at("2026-10-26T09:30:00")
    record = await d.telegram("hello?", label="tg-pairing-pending", sender="5150", kind="pairing")
    pending = _pairing_code(record)
    secrets.append(pending)

    await d.at("2026-10-26T09:45:00")
    await d.stop_gateway()
    return {"secrets": secrets}


def _pairing_code(record: dict[str, Any]) -> str:
    for text in record.get("replies_sent", []):
        match = re.search(r"`([A-Z0-9]{4}-[A-Z0-9]{4})`", text)
        if match:
            return match.group(1)
    raise RuntimeError(f"no pairing code in {record.get('replies_sent')}")


# ---------------------------------------------------------------------------
# workspaces
# ---------------------------------------------------------------------------


async def workspaces(d: Driver) -> dict[str, Any]:
    seed = d.seed
    secrets: list[str] = []

    def configure_main(config: Any) -> None:
        secrets.extend(base_config(config, seed=seed))
        secrets.append(webui_channel(config, seed=seed))

    def configure_work(config: Any) -> None:
        base_config(config, seed=seed, workspace="~/.nanobot-work/workspace")
        key = f"sk-ant-canary-{seed}-work-{canary(seed, 'work-anthropic')}"
        config.providers.anthropic.api_key = key
        config.tools.restrict_to_workspace = False
        secrets.append(key)

    d.write_config(".nanobot", configure_main)

    # Classic CLI in the default workspace, with /new part-way.
    await d.cli(instance=".nanobot", label="cli-default", entries=[
        {"at": "2026-10-24T19:00:00", "label": "cli-d-1", "text": "list my workspace",
         "replies": [
             Reply("", [C("call_0", "list_dir", path=".")], think=30),
             Reply("Your workspace has the default nanobot files and a memory/ folder.", think=25),
         ]},
        {"gap_s": 200, "label": "cli-d-2", "text": "write a todo file\nwith two items: milk, stamps",
         "replies": [
             Reply("", [C("call_1", "write_file", path="todo.md", content="- milk\n- stamps\n")], think=60),
             Reply("Created todo.md with milk and stamps.", think=20),
         ]},
        {"gap_s": 120, "label": "cli-d-new", "kind": "new", "text": "/new"},
        {"gap_s": 90, "label": "cli-d-3", "text": "what's on my todo list?",
         "replies": [
             Reply("", [C("call_0", "read_file", path="todo.md")], think=30),
             Reply("Milk and stamps.", think=15),
         ]},
    ])

    # Classic CLI in a project workspace: a second session namespace.
    await d.cli(instance=".nanobot", label="cli-alpha", workspace_arg="~/projects/alpha", entries=[
        {"at": "2026-10-24T20:30:00", "label": "cli-a-1", "text": "set up a README for project alpha",
         "replies": [
             Reply("", [C("call_0", "write_file", path="README.md",
                          content="# alpha\n\nA tiny experiment.\n")], think=90),
             Reply("", [C("call_1", "exec", command="echo README written")], think=45),
             Reply("README.md created for alpha.", think=20),
         ]},
        {"gap_s": 300, "label": "cli-a-2", "text": "show it",
         "replies": [
             Reply("", [C("call_0", "read_file", path="README.md")], think=25),
             Reply("# alpha — A tiny experiment.", think=15),
         ]},
    ])

    # A short gateway run on 2026-10-25 (after the DST switch) with a WebUI chat.
    await d.at("2026-10-25T10:00:00")
    await d.start_gateway(".nanobot")
    await d.at("2026-10-25T10:05:00")
    tab = await d.webui_tab()
    chat = await tab.new_chat()
    await d.webui_turn(tab, chat, "How many items are on my todo list?", [
        Reply("", [C("call_0", "read_file", path="todo.md")], think=45, usage=(2100, 30, None, None)),
        Reply("Two: milk and stamps.", think=20, usage=(2200, 9, 2048, None)),
    ], label="webui-1")
    await d.at("2026-10-25T10:20:00")
    await d.webui_turn(tab, chat, "Add bread.", [
        Reply("", [C("call_0", "edit_file", path="todo.md", old_text="- stamps\n",
                     new_text="- stamps\n- bread\n")], think=50, usage=(2300, 40, 2048, None)),
        Reply("Added bread.", think=15, usage=(2350, 5, 2048, None)),
    ], label="webui-2")
    await d.webui_close(tab)
    await d.at("2026-10-25T10:40:00")
    await d.stop_gateway()

    # A second instance, CLI only.
    d.write_config(".nanobot-work", configure_work)
    await d.cli(instance=".nanobot-work", label="cli-work", config_arg=True, entries=[
        {"at": "2026-10-25T11:30:00", "label": "cli-w-1", "text": "note: standup moved to 10:15",
         "replies": [
             Reply("", [C("call_0", "write_file", path="standup.md", content="standup: 10:15\n")], think=40),
             Reply("Noted in standup.md.", think=15),
         ]},
        {"gap_s": 240, "label": "cli-w-2", "text": "when is standup?",
         "replies": [Reply("At 10:15.", think=10)]},
        {"gap_s": 60, "label": "cli-w-exit", "kind": "exit", "text": "exit"},
    ])

    # Back in project alpha the next morning.
    await d.cli(instance=".nanobot", label="cli-alpha-2", workspace_arg="~/projects/alpha", entries=[
        {"at": "2026-10-26T08:30:00", "label": "cli-a-3", "text": "add a line: status draft",
         "replies": [
             Reply("", [C("call_0", "edit_file", path="README.md", old_text="A tiny experiment.\n",
                          new_text="A tiny experiment.\n\nStatus: draft\n")], think=60),
             Reply("Added 'Status: draft'.", think=15),
         ]},
    ])
    return {"secrets": secrets}


# ---------------------------------------------------------------------------
# pasted-secrets
# ---------------------------------------------------------------------------


async def pasted_secrets(d: Driver) -> dict[str, Any]:
    """Secrets a user pastes into a chat: what nanobot stores verbatim."""
    seed = d.seed
    secrets: list[str] = []
    openai_key = f"sk-proj-{canary(seed, 'pasted-openai', 40)}"
    github_token = f"ghp_{canary(seed, 'pasted-github', 36)}"
    bearer = canary(seed, "pasted-bearer", 32)

    def configure(config: Any) -> None:
        secrets.extend(base_config(config, seed=seed))

    d.write_config(".nanobot", configure)
    await d.cli(instance=".nanobot", label="cli-secrets", entries=[
        {"at": "2026-10-27T10:00:00", "label": "cli-s-1",
         "text": f"here is my OpenAI key {openai_key} - put it in .env please",
         "replies": [
             Reply("", [C("call_0", "write_file", path=".env",
                          content=f"OPENAI_API_KEY={openai_key}\n")], think=40),
             Reply("Saved your key to .env.", think=15),
         ]},
        {"gap_s": 180, "label": "cli-s-2",
         "text": f"and the GitHub token is {github_token}; show me the auth header for it",
         "replies": [
             Reply("", [C("call_0", "exec", command=f"echo Authorization: Bearer {bearer}")], think=30),
             Reply(f"Use the header Authorization: Bearer {bearer} (the token stays in .env).", think=20),
         ]},
        {"gap_s": 60, "label": "cli-s-exit", "kind": "exit", "text": "exit"},
    ])
    secrets.extend([openai_key, github_token, bearer])
    return {"secrets": secrets}


# ---------------------------------------------------------------------------
# reasked-thinking
# ---------------------------------------------------------------------------

BACKUP_PROMPT = "Check last night's backup log and tell me whether anything failed."
TODO_PROMPT = "What is still open on my list for today?"
BEDROCK_PRESET = "bedrock-sonnet"
BEDROCK_MODEL = "bedrock/eu.anthropic.claude-sonnet-4-5-20250929-v1:0"
LOCAL_PRESET = "local-qwen"
LOCAL_MODEL = "ollama/qwen3:14b"


def _toolu(seed: int, name: str) -> str:
    """An Anthropic tool_use id (toolu_01 + 22 base62 characters)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
    digest = hashlib.sha256(f"nanoload-realwriter:{seed}:{name}".encode()).digest()
    return "toolu_01" + "".join(alphabet[b % 62] for b in digest[:22])


async def reasked_thinking(d: Driver) -> dict[str, Any]:
    """nanobot's own Anthropic and Bedrock providers with extended thinking,
    and WebUI prompts asked again, word for word, twenty minutes after the
    turn a ``/new`` erased -- once typed in the WebUI, once sent by another
    client of the WebSocket channel (so the transcript does not record it)."""
    from . import sdk_backends
    from .provider import Thought

    seed = d.seed
    secrets: list[str] = []

    def configure(config: Any) -> None:
        from nanobot.config.schema import ModelPresetConfig

        secrets.extend(base_config(config, seed=seed))
        secrets.append(webui_channel(config, seed=seed))
        config.agents.defaults.reasoning_effort = "medium"
        config.providers.bedrock.region = "eu-central-1"
        config.model_presets[BEDROCK_PRESET] = ModelPresetConfig(
            model=BEDROCK_MODEL, provider="bedrock", reasoning_effort="medium")
        config.model_presets[LOCAL_PRESET] = ModelPresetConfig(model=LOCAL_MODEL, provider="ollama")

    d.write_config(".nanobot", configure)
    # nanobot's AnthropicProvider and BedrockProvider parse the answers
    sdk_backends.use_sdk_backends()

    await d.at("2026-11-05T08:55:00")
    await d.start_gateway(".nanobot")

    # WebUI chat A (Anthropic, extended thinking): an agentic turn, /new typed
    # in the WebUI, and the same words again twenty minutes after the first.
    await d.at("2026-11-05T09:05:00")
    tab = await d.webui_tab()
    chat_a = await tab.new_chat()
    await d.webui_turn(tab, chat_a, BACKUP_PROMPT, [
        Reply("", [C(_toolu(seed, "a1"), "exec", command="printf 'backup 02:10 ok\\nbackup 02:40 FAILED: disk full\\n'")],
              think=40, usage=(3100, 180, None, 2900),
              thinking=[Thought("The user wants last night's backup result. The log is the source; "
                                "print it before saying anything.")]),
        Reply("", [C(_toolu(seed, "a2"), "write_file", path="notes/backup-check.md",
                     content="02:10 ok\n02:40 FAILED (disk full)\n")],
              think=55, usage=(3400, 140, 2900, 260),
              thinking=[Thought("One of the two runs failed: disk full at 02:40."),
                        Thought("Note it in the workspace so the next check can compare.")]),
        Reply("One of last night's two backups failed: the 02:40 run stopped with *disk full*; "
              "the 02:10 run was fine. I noted it in notes/backup-check.md.",
              think=30, usage=(3650, 60, 3160, 0),
              thinking=[Thought("Answer briefly and name the failed run.")]),
    ], label="webui-a-1")
    await d.at("2026-11-05T09:12:00")
    await d.webui_turn(tab, chat_a, "/new", [], label="webui-a-new", command=True, erases=True)
    await d.at("2026-11-05T09:25:00")
    await d.webui_turn(tab, chat_a, BACKUP_PROMPT, [
        Reply("", [C(_toolu(seed, "a3"), "exec", command="printf 'backup 02:10 ok\\nbackup 02:40 FAILED: disk full\\n'")],
              think=35, usage=(2900, 150, None, 2700),
              thinking=[Thought("Fresh session: read the backup log again.")]),
        Reply("", [C(_toolu(seed, "a4"), "read_file", path="notes/backup-check.md")],
              think=25, usage=(3150, 70, 2700, 200),
              thinking=[Thought("A note from an earlier check may exist; compare with it.")]),
        Reply("The 02:40 backup failed (disk full); 02:10 was fine -- the same as in "
              "notes/backup-check.md.", think=30, usage=(3400, 50, 2900, 0)),
    ], label="webui-a-2")
    await d.webui_close(tab)

    # WebUI chat B: the session switches to a Bedrock preset (/model). Bedrock
    # keeps both a reasoning_content (the blocks' texts joined) and the
    # thinking blocks, one of them redacted.
    await d.at("2026-11-05T10:30:00")
    tab = await d.webui_tab()
    chat_b = await tab.new_chat()
    await d.webui_turn(tab, chat_b, f"/model {BEDROCK_PRESET}", [], label="webui-b-model", command=True)
    await d.at("2026-11-05T10:32:00")
    await d.webui_turn(tab, chat_b, "How much space is left on the backup disk?", [
        Reply("", [C("tooluse_" + canary(seed, "bedrock-b1", 22), "exec",
                     command="printf 'backup disk: 97 percent used, 31 GB free\\n'")],
              think=30, usage=(2800, 120, None, None),
              thinking=[Thought("Disk space: ask the system, do not guess."),
                        Thought(redacted=hashlib.sha256(f"redacted:{seed}:b1".encode()).digest() * 3),
                        Thought(" One exec of printf with the numbers is enough.")]),
        Reply("The backup disk is 97 % full (31 GB free) -- that is why the 02:40 run failed.",
              think=25, usage=(3000, 45, None, None),
              thinking=[Thought("97 % used explains the disk-full failure; say so.")]),
    ], label="webui-b-1")
    await d.webui_close(tab)

    # WebUI chat C on a local model (Ollama, OpenAI-compatible: it numbers its
    # tool calls call_0, call_1 in every turn and returns reasoning_content).
    # The user's phone, another client of the WebSocket channel, sends /new
    # into the chat: nanobot clears the session, the WebUI transcript does
    # not record it. Twenty minutes after the first time the same words
    # again, in the WebUI.
    await d.at("2026-11-05T11:00:00")
    tab = await d.webui_tab()
    chat_c = await tab.new_chat()
    await d.webui_turn(tab, chat_c, f"/model {LOCAL_PRESET}", [], label="webui-c-model", command=True)
    await d.at("2026-11-05T11:01:00")
    await d.webui_turn(tab, chat_c, TODO_PROMPT, [
        Reply("", [C("call_0", "exec", command="printf 'todo: renew domain\\ntodo: call the plumber\\n'")],
              think=20, usage=(1900, 60, None, None), reasoning="Read the list first."),
        Reply("", [C("call_1", "exec", command="printf 'done: call the plumber\\n'")],
              think=15, usage=(2000, 40, None, None)),
        Reply("One thing is still open: renew the domain (the plumber is done).", think=15,
              usage=(2100, 20, None, None)),
    ], label="webui-c-1")
    await d.webui_close(tab)
    await d.at("2026-11-05T11:10:00")
    phone = await d.webui_tab()
    await phone.attach(chat_c)
    await d.webui_turn(phone, chat_c, "/new", [], label="phone-c-new", command=True, erases=True, webui=False)
    await d.webui_close(phone)
    await d.at("2026-11-05T11:21:00")
    tab = await d.webui_tab()
    await tab.attach(chat_c)
    await d.webui_turn(tab, chat_c, TODO_PROMPT, [
        Reply("", [C("call_0", "exec", command="printf 'todo: renew domain\\ntodo: call the plumber\\n'")],
              think=20, usage=(1700, 60, None, None), reasoning="The list again, from the start."),
        Reply("", [C("call_1", "exec", command="printf 'done: call the plumber\\n'")],
              think=15, usage=(1800, 40, None, None)),
        Reply("Still open: renewing the domain.", think=15, usage=(1900, 15, None, None)),
    ], label="webui-c-2")
    await d.webui_close(tab)

    await d.at("2026-11-05T12:00:00")
    await d.stop_gateway()
    return {"secrets": secrets}


from .explore import explore  # noqa: E402  (it builds on base_config and the channels above)
from .scale import scale  # noqa: E402  (it builds on explore)

RUNNERS = {"gateway": gateway, "workspaces": workspaces, "pasted-secrets": pasted_secrets, "explore": explore,
           "scale": scale, "reasked-thinking": reasked_thinking}
assert set(RUNNERS) == set(SCENARIOS)
