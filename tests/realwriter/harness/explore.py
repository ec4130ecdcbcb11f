"""The ``explore`` scenario: a seeded random stretch of one user's days with nanobot.

Issue 24 section 1.  Everything is drawn from the seed: the host zone and
the days (``catalog.explore_setting``, its own random stream, so generate.py
knows the zone and start before nanobot is imported) and the timeline
(``random.Random("explore-timeline:<seed>")``, here).  Only nanobot's own
code writes the home, driven through the same :class:`harness.driver.Driver`
as the fixed scenarios.

What a day holds, drawn action by action (weights in ``Explorer.pick``):

* WebUI visits: a tab opens, a new chat or an old one, one or two turns;
* Telegram turns in the one allowed chat (``telegram:4242``);
* classic CLI sessions (``nanobot agent --classic``, subprocess) in the
  default workspace, while the gateway runs;
* ``/new`` in a WebUI chat, in Telegram and in the CLI, usually followed by
  **the same prompt as an erased turn** (defect a of issue 24);
* a WebUI chat deleted from the sidebar;
* a daily cron job (created by the model's ``cron`` tool from Telegram, so
  bound to ``telegram:4242``, at a drawn daytime minute) whose every due run
  is driven; a local trigger (``/trigger`` typed in Telegram) fired now and
  then, as a CI job would;
* concurrency: a WebUI turn whose first model call is held in flight while
  a cron run, a trigger run, a Telegram turn or a turn in another WebUI chat
  runs beside it (nanobot: turns of one session serial, of different
  sessions concurrent), then the held call returns;
* turn shapes: one-line answers, tool steps (``exec`` of echo/printf,
  ``write_file``, ``read_file``, ``list_dir``), long agentic turns (4-8
  calls, up to ~30 minutes), an answer cut at the output limit
  (``finish_reason: length``), a spawned subagent whose result the turn
  waits for, a retried provider error (529 or 500); tool call ids are
  ``call_0``, ``call_1``, ... in most turns (reused across turns, as some
  providers do) and unique ``toolu_…`` ids in the others.

Time: actions start a drawn gap after the previous one ended (more than
30 s; idle-session scans and their archive calls run in between, as in
every scenario), between about 07:00 and 23:30 local; at night the clock
jumps to the next morning.  When a DST change falls in a night of the span,
the night often holds an action close to it: before a spring-forward gap a
turn that runs across it; around a fall-back, actions just before and just
after.  **Nothing happens in a repeated (fall-back) hour**, including the
idle-scan archive calls that follow an action by 15-16 minutes: nanobot
writes naive local timestamps (``datetime.now().isoformat()``), which cannot
say which of the two passes through that hour they belong to, so nanobot
itself cannot represent such a moment (and facts.json could not state its
UTC instant).  A skipped (spring-forward) hour needs no care: the clock
never shows a local time that does not exist.  Cron times are drawn between
07:00 and 21:59, so cron runs never fall near a change either.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any
from zoneinfo import ZoneInfo

from .catalog import ExploreSetting, explore_setting, zone_transitions
from .driver import Driver
from .provider import Call, Reply
from .scenarios import base_config, telegram_channel, webui_channel

TG_USER = "4242"
TG_KEY = f"telegram:{TG_USER}"
MINUTE_MS = 60_000
#: idle compaction archives a session 15-16 minutes after its last
#: activity: what an action may still cause after it ends
IDLE_TAIL_MS = 18 * MINUTE_MS

# ---------------------------------------------------------------------------
# what the user asks (prompt texts are fixed strings, so a prompt asked
# again after /new is the same text)
# ---------------------------------------------------------------------------

CHAT_PROMPTS = (
    "What's the difference between rsync and rclone, in two sentences?",
    "Suggest a name for a script that rotates my logs.",
    "How long should I keep nightly backups?",
    "Translate 'the backup finished without errors' into German.",
    "Is it a bad idea to run apt upgrade from cron?",
    "Remind me what a good SSH key type is these days.",
    "Give me a one-line summary of what a reverse proxy does.",
)
NOTE_TOPICS = ("router", "backups", "groceries", "printer", "vpn", "garden", "meeting")
NOTE_PROMPTS = (
    "Write a short note about the {topic} into notes/{topic}.md.",
    "Please jot down what we said about the {topic} in notes/{topic}.md.",
)
CHECK_PROMPTS = (
    ("Check the backup status and tell me in one line.", "printf 'backup ok: {n} snapshots\\n'"),
    ("How full is the backup disk? Keep it short.", "printf 'backup disk: {n} percent used\\n'"),
    ("Is the web server still answering?", "echo web server answered in {n} ms"),
    ("Count the open tickets for me.", "echo open tickets: {n}"),
)
AGENTIC_PROMPTS = (
    "Write a status report for the home server into reports/status-{topic}.md and check it.",
    "Go through the workspace and make an index of my notes in notes/index.md.",
    "Prepare a checklist for the {topic} maintenance and save it in notes/{topic}-checklist.md.",
)
READ_PROMPTS = ("What did I write in {path}?", "Show me {path} again, briefly.")
LIST_PROMPTS = ("What files do I have in the workspace?", "List my workspace, please.")
SUBAGENT_PROMPTS = (
    "Can you have a helper go through my notes and summarize them?",
    "Ask a helper to look through the workspace and tell me what is there.",
)
SUBAGENT_TASKS = (
    "List the files in the workspace and summarize each one in one line.",
    "Read the notes in notes/ and write a one-paragraph summary.",
)
LONG_PROMPTS = (
    "Draft a three-sentence message to my landlord about the heating.",
    "Explain in a few sentences how I should rotate my backup disks.",
)
CRON_JOBS = (
    ("backup-digest", "Run the backup check and give me a two-line digest."),
    ("morning-brief", "Send me a short morning briefing: disk, backups, open tickets."),
    ("plant-reminder", "Remind me to water the plants and say which ones are due."),
)
TRIGGER_NAMES = ("ci-alerts", "door-sensor", "build-watch")
TRIGGER_EVENTS = (
    "build #{n} failed on main: test_backup timed out after 300s",
    "build #{n} passed on main",
    "front door opened at the usual time ({n})",
    "deploy {n} finished: 3 services restarted",
)
PROVIDER_ERRORS = (
    (529, "overloaded", "529 Overloaded: the API is temporarily overloaded"),
    (500, "server_error", "500 Internal Server Error: upstream connect error"),
)


def C(call_id: str, tool: str, **args: Any) -> Call:
    return Call(call_id, tool, args)


@dataclass
class Draft:
    """One turn as the user types it and the model answers it."""

    kind: str
    text: str
    replies: list[Reply]
    subagents: dict[str, list[Reply]] | None = None

    def seconds(self) -> float:
        """Simulated time the model calls take (subagents included)."""
        total = sum(r.think for r in self.replies)
        for replies in (self.subagents or {}).values():
            total += sum(r.think for r in replies)
        return total


@dataclass
class SessionLog:
    """What the user asked in one session: since the last /new, and erased by it."""

    key: str
    asked: list[tuple[str, str]] = field(default_factory=list)  # (template kind, text)
    erased: list[tuple[str, str]] = field(default_factory=list)
    turns: int = 0


@dataclass
class Chat(SessionLog):
    chat_id: str = ""
    deleted: bool = False


class Ids:
    """Tool call ids of one turn: ``call_0``, ``call_1``, ... (reused across
    turns, as some providers do) or unique ``toolu_…`` ids."""

    def __init__(self, rng: random.Random, *, reuse: bool) -> None:
        self.rng = rng
        self.reuse = reuse
        self.n = 0

    def next(self) -> str:
        self.n += 1
        if self.reuse:
            return f"call_{self.n - 1}"
        return "toolu_" + "".join(self.rng.choice("0123456789abcdefghijklmnopqrstuvwxyz") for _ in range(20))


class Explorer:
    """Draws the timeline and drives it."""

    def __init__(self, d: Driver, setting: ExploreSetting) -> None:
        self.d = d
        self.setting = setting
        self.rng = random.Random(f"explore-timeline:{d.seed}")
        self.zone = ZoneInfo(setting.tz)
        self.serial = 0
        self.chats: list[Chat] = []
        self.tg = SessionLog(TG_KEY)
        self.cli_log = SessionLog("cli:direct")
        self.cli_sessions = 0
        self.written: list[str] = []
        self.trigger_name: str | None = None
        self.trigger_fired = 0
        self.cron_jobs: dict[str, str] = {}  # name -> message
        self.followups: list[tuple[str, Any]] = []
        changes = zone_transitions(setting.tz, setting.first_day.year)
        self.windows: list[tuple[int, int]] = []
        self.changes: list[datetime] = changes
        self.add_repeated_hours(changes)

    def add_repeated_hours(self, changes: list[datetime]) -> None:
        """The fall-back changes among *changes*: the UTC stretch whose local
        times repeat, a minute either side, into ``windows``."""
        for change in changes:
            before = (change - timedelta(minutes=1)).astimezone(self.zone).utcoffset()
            after = change.astimezone(self.zone).utcoffset()
            assert before is not None and after is not None
            if after < before:
                ms = int(change.timestamp() * 1000)
                shift = int((before - after).total_seconds() * 1000)
                self.windows.append((ms - shift - MINUTE_MS, ms + shift + MINUTE_MS))

    # -- drawing helpers ----------------------------------------------------

    def label(self, what: str) -> str:
        self.serial += 1
        return f"{what}-{self.serial}"

    def usage(self) -> tuple[int, int, int | None, int | None] | None:
        rng = self.rng
        if rng.random() < 0.1:
            return None  # the provider reports no usage: nanobot estimates it
        inp = rng.randint(800, 9000)
        # cached tokens are part of the input (nanobot rejects more)
        read = rng.choice((None, None, 512, 1024, 2048, 4096))
        read = read if read is None or read <= inp - 256 else 512
        return inp, rng.randint(8, 400), read, rng.choice((None, None, 0, 256))

    def think(self, lo: int, hi: int) -> float:
        return float(self.rng.randint(lo, hi))

    def reply(self, text: str = "", calls: list[Call] | None = None, *, lo: int = 5, hi: int = 60,
              **kw: Any) -> Reply:
        if "reasoning" not in kw and self.rng.random() < 0.12:
            kw["reasoning"] = "Think about what the user needs before answering."
        return Reply(text, calls or [], think=self.think(lo, hi), usage=self.usage(), **kw)

    def ids(self) -> Ids:
        return Ids(self.rng, reuse=self.rng.random() < 0.75)

    def with_error(self, replies: list[Reply], p: float = 0.12) -> list[Reply]:
        """Sometimes one call fails first with a provider error nanobot retries."""
        if self.rng.random() >= p:
            return replies
        status, kind, message = self.rng.choice(PROVIDER_ERRORS)
        at = self.rng.randrange(len(replies))
        return replies[:at] + [Reply(error=(status, kind, message), think=self.think(2, 20))] + replies[at:]

    # -- turn shapes --------------------------------------------------------

    def draft(self, kind: str, text: str | None = None, *, channel: str) -> Draft:
        """A turn of template *kind* (``text``: the prompt, when asked again)."""
        rng = self.rng
        ids = self.ids()
        if kind == "chat":
            text = text or rng.choice(CHAT_PROMPTS)
            if channel != "cli" and rng.random() < 0.15:
                # cut at the output limit: nanobot asks the model to continue
                replies = [self.reply("Here is the short version: keep it simple and", lo=20, hi=60, finish="length"),
                           self.reply(" check the result once a week.", lo=5, hi=20)]
            else:
                replies = [self.reply(f"Short answer: {text.lower().rstrip('?.')} -- done, see above.", lo=5, hi=45)]
        elif kind == "note":
            topic = rng.choice(NOTE_TOPICS)
            text = text or rng.choice(NOTE_PROMPTS).format(topic=topic)
            path = text.rsplit(" ", 1)[-1].rstrip(".")
            replies = [self.reply("", [C(ids.next(), "write_file", path=path,
                                         content=f"# {path}\n\n- noted on request\n")], lo=20, hi=90),
                       self.reply(f"Saved the note in {path}.", lo=5, hi=30)]
            self.written.append(path)
        elif kind == "check":
            if text is None:
                text, command = rng.choice(CHECK_PROMPTS)
            else:
                command = next(c for t, c in CHECK_PROMPTS if t == text)
            n = rng.randint(2, 97)
            replies = [self.reply("", [C(ids.next(), "exec", command=command.format(n=n))], lo=10, hi=60),
                       self.reply(f"All fine: the check reported {n}.", lo=5, hi=30)]
        elif kind == "agentic":
            topic = rng.choice(NOTE_TOPICS)
            text = text or rng.choice(AGENTIC_PROMPTS).format(topic=topic)
            path = next((w.rstrip(".") for w in text.split() if "/" in w), "reports/status.md")
            replies = [self.reply("", [C(ids.next(), "exec", command="echo checking the workspace")], lo=30, hi=150),
                       self.reply("Let me look at the workspace first.", [C(ids.next(), "list_dir", path=".")],
                                  lo=40, hi=200)]
            for step in range(rng.randint(1, 4)):
                replies.append(self.reply("", [C(ids.next(), "exec", command=f"printf 'step {step}: ok\\n'")],
                                          lo=30, hi=240))
            replies.append(self.reply("", [C(ids.next(), "write_file", path=path,
                                             content=f"# {path}\n\n- everything checked\n")], lo=60, hi=300))
            replies.append(self.reply("", [C(ids.next(), "read_file", path=path)], lo=20, hi=120))
            replies.append(self.reply(f"Done: {path} is written and checked.", lo=20, hi=120))
            self.written.append(path)
        elif kind == "read":
            if text is None:
                path = rng.choice(self.written)
                text = rng.choice(READ_PROMPTS).format(path=path)
            else:
                path = next(w.rstrip("?,.") for w in text.split() if "/" in w)
            replies = [self.reply("", [C(ids.next(), "read_file", path=path)], lo=10, hi=40),
                       self.reply(f"{path} says the items were noted on request.", lo=5, hi=40)]
        elif kind == "list":
            text = text or rng.choice(LIST_PROMPTS)
            replies = [self.reply("", [C(ids.next(), "list_dir", path=".")], lo=10, hi=40),
                       self.reply("Your workspace has the nanobot files, memory/ and your notes.", lo=5, hi=40)]
        elif kind == "subagent":
            text = text or rng.choice(SUBAGENT_PROMPTS)
            task = f"{rng.choice(SUBAGENT_TASKS)} (request {self.serial})"
            sub_ids = self.ids()
            replies = [self.reply("", [C(ids.next(), "spawn", task=task, label="helper")], lo=10, hi=40),
                       self.reply("I asked a helper; I'll report back when it is done.", lo=10, hi=30,
                                  wait_subagents=True),
                       self.reply("The helper says: the workspace holds notes and reports, all current.",
                                  lo=20, hi=90)]
            subagents = {task: [
                self.reply("", [C(sub_ids.next(), "list_dir", path=".")], lo=30, hi=120),
                self.reply("The workspace holds the nanobot files, notes and reports.", lo=20, hi=90),
            ]}
            return Draft(kind, text, self.with_error(replies), subagents)
        elif kind == "long":
            text = text or rng.choice(LONG_PROMPTS)
            replies = [self.reply("First, a short plan. " * 3 + "Then the details follow.", lo=60, hi=240)]
        else:
            raise ValueError(kind)
        return Draft(kind, text, self.with_error(replies))

    def fresh(self, channel: str) -> Draft:
        kinds = ["chat", "note", "check", "agentic", "list", "long"]
        weights = [4, 3, 3, 2, 1, 1]
        if self.written:
            kinds.append("read")
            weights.append(2)
        if channel != "cli":
            kinds.append("subagent")
            weights.append(1)
        return self.draft(self.rng.choices(kinds, weights)[0], channel=channel)

    # -- time ---------------------------------------------------------------

    def local(self, ms: int) -> datetime:
        return datetime.fromtimestamp(ms / 1000, self.zone).replace(tzinfo=None)

    def safe(self, start_ms: int, length_ms: int) -> int:
        """The first start >= start_ms whose action (and the idle archives
        after it) stays out of every repeated hour."""
        moved = True
        while moved:
            moved = False
            for w0, w1 in self.windows:
                if start_ms < w1 and start_ms + length_ms + IDLE_TAIL_MS > w0:
                    start_ms = w1 + self.rng.randint(1, 20) * MINUTE_MS
                    moved = True
        return start_ms

    def next_due(self) -> tuple[str, int] | None:
        assert self.d.gateway is not None
        jobs = [j for j in self.d.gateway.cron.list_jobs() if j.state.next_run_at_ms]
        if not jobs:
            return None
        return jobs[0].name, int(jobs[0].state.next_run_at_ms)

    async def crons_before(self, until_ms: int) -> None:
        """Drive every cron run due before *until_ms*."""
        while True:
            due = self.next_due()
            if due is None or due[1] > until_ms:
                return
            await self.d.cron_due(due[0], self.cron_replies(due[0]), label=self.label("cron"), scan_margin_s=60)

    def cron_replies(self, name: str) -> list[Reply]:
        n = self.rng.randint(1, 9)
        if self.rng.random() < 0.6:
            ids = self.ids()
            return self.with_error([
                self.reply("", [C(ids.next(), "exec", command=f"printf '{name}: {n} items ok\\n'")], lo=15, hi=60),
                self.reply(f"{name}: {n} items checked, nothing failed.", lo=10, hi=40),
            ], p=0.08)
        return [self.reply(f"{name}: all {n} checks passed.", lo=10, hi=40)]

    async def start_at(self, gap_ms: int, length_ms: int) -> None:
        """Let time pass *gap_ms* after the last activity (then to a safe
        moment), driving the cron runs due on the way."""
        d = self.d
        start = self.safe(d.last_activity_ms + gap_ms, length_ms)
        await self.crons_before(start + length_ms + 5 * MINUTE_MS)
        start = self.safe(max(start, d.last_activity_ms + 31_000), length_ms)
        await d.after(start)

    # -- actions ------------------------------------------------------------

    def remember(self, log: SessionLog, draft: Draft) -> None:
        log.asked.append((draft.kind, draft.text))
        log.turns += 1

    def new_in(self, log: SessionLog) -> None:
        log.erased.extend(log.asked)
        log.asked = []

    def again(self, log: SessionLog, channel: str) -> Draft:
        """The same prompt as a turn /new erased (fresh answers, ids from call_0 again)."""
        kind, text = self.rng.choice(log.erased[-3:])
        return self.draft(kind, text, channel=channel)

    async def open_chat(self, tab: Any, chat: Chat | None) -> Chat:
        if chat is None:
            chat = Chat(key="", chat_id=await tab.new_chat())
            chat.key = f"websocket:{chat.chat_id}"
            self.chats.append(chat)
        else:
            await tab.attach(chat.chat_id)
        return chat

    def live_chats(self) -> list[Chat]:
        return [c for c in self.chats if not c.deleted]

    async def webui_visit(self) -> None:
        d = self.d
        drafts = [self.fresh("webui") for _ in range(self.rng.choice((1, 1, 2)))]
        await self.start_at(self.gap(), self.length(drafts[:1]))
        chats = self.live_chats()
        chat = None if not chats or self.rng.random() < 0.35 else self.rng.choice(chats)
        tab = await d.webui_tab()
        chat = await self.open_chat(tab, chat)
        for i, draft in enumerate(drafts):
            if i:
                await self.start_at(self.rng.randint(1, 12) * MINUTE_MS, self.length([draft]))
            await d.webui_turn(tab, chat.chat_id, draft.text, draft.replies, subagents=draft.subagents,
                               label=self.label("webui"))
            self.remember(chat, draft)
        await d.webui_close(tab)

    async def webui_new(self, chat: Chat) -> None:
        d = self.d
        await self.start_at(self.gap(), 2 * MINUTE_MS)
        tab = await d.webui_tab()
        await tab.attach(chat.chat_id)
        await d.webui_turn(tab, chat.chat_id, "/new", [], label=self.label("webui-new"), command=True, erases=True)
        self.new_in(chat)
        if self.rng.random() < 0.8:
            draft = self.again(chat, "webui")
            await self.start_at(self.rng.randint(1, 8) * MINUTE_MS, self.length([draft]))
            await d.webui_turn(tab, chat.chat_id, draft.text, draft.replies, subagents=draft.subagents,
                               label=self.label("webui-again"))
            self.remember(chat, draft)
        await d.webui_close(tab)

    async def webui_delete(self, chat: Chat) -> None:
        d = self.d
        await self.start_at(self.gap(), MINUTE_MS)
        tab = await d.webui_tab()
        await d.webui_delete(tab, chat.chat_id)
        chat.deleted = True
        await d.webui_close(tab)

    async def telegram_turn(self, draft: Draft | None = None, *, gap_ms: int | None = None) -> None:
        draft = draft or self.fresh("telegram")
        await self.start_at(self.gap() if gap_ms is None else gap_ms, self.length([draft]))
        await self.d.telegram(draft.text, draft.replies, subagents=draft.subagents, label=self.label("tg"))
        self.remember(self.tg, draft)

    async def telegram_new(self) -> None:
        await self.start_at(self.gap(), 2 * MINUTE_MS)
        await self.d.telegram("/new", label=self.label("tg-new"), kind="new")
        self.new_in(self.tg)
        if self.rng.random() < 0.8:
            await self.telegram_turn(self.again(self.tg, "telegram"), gap_ms=self.rng.randint(1, 8) * MINUTE_MS)

    async def cron_setup(self) -> None:
        name, message = self.rng.choice(CRON_JOBS)
        hour, minute = self.rng.randint(7, 21), self.rng.choice((0, 0, 15, 30, 45, self.rng.randint(1, 59)))
        ids = self.ids()
        replies = [
            self.reply("", [C(ids.next(), "cron", action="add", name=name, message=message,
                              cron_expr=f"{minute} {hour} * * *", tz=self.setting.tz)], lo=15, hi=45),
            self.reply(f"Done: '{name}' runs every day at {hour:02d}:{minute:02d}.", lo=5, hi=25),
        ]
        text = f"Every day at {hour:02d}:{minute:02d}, {message[0].lower()}{message[1:]}"
        draft = Draft("cron-setup", text, replies)
        await self.start_at(self.gap(), self.length([draft]))
        await self.d.telegram(text, replies, label=self.label("tg-cron-setup"))
        self.tg.turns += 1
        self.cron_jobs[name] = message

    async def trigger_setup(self) -> None:
        self.trigger_name = self.rng.choice(TRIGGER_NAMES)
        await self.start_at(self.gap(), MINUTE_MS)
        await self.d.telegram(f"/trigger {self.trigger_name}", label=self.label("tg-trigger-create"), kind="command")

    def trigger_draft(self) -> tuple[str, list[Reply]]:
        self.trigger_fired += 1
        content = self.rng.choice(TRIGGER_EVENTS).format(n=self.rng.randint(10, 99))
        if self.rng.random() < 0.5:
            ids = self.ids()
            replies = [self.reply("", [C(ids.next(), "exec", command="echo noted")], lo=10, hi=40),
                       self.reply(f"Noted: {content}.", lo=5, hi=30)]
        else:
            replies = [self.reply(f"Heads-up: {content}.", lo=5, hi=30)]
        return content, replies

    async def trigger_fire(self) -> None:
        assert self.trigger_name is not None
        content, replies = self.trigger_draft()
        await self.start_at(self.gap(), 5 * MINUTE_MS)
        await self.d.trigger(self.trigger_name, content, replies, label=self.label("trigger"))

    async def cli_session(self) -> None:
        d = self.d
        self.cli_sessions += 1
        entries: list[dict[str, Any]] = []
        plan: list[Draft | str] = [self.fresh("cli") for _ in range(self.rng.randint(1, 3))]
        if self.rng.random() < 0.4:
            plan.insert(self.rng.randint(1, len(plan)), "/new")
        seconds = 0.0
        asked: list[tuple[str, str]] = []
        erased = list(self.cli_log.erased)
        for i, item in enumerate(plan):
            if item == "/new":
                entries.append({"label": self.label("cli-new"), "kind": "new", "text": "/new"})
                erased += self.cli_log.asked + asked
                self.cli_log.asked, asked = [], []
                # the same prompt again, right after /new
                kind, text = self.rng.choice(erased[-3:])
                item = self.draft(kind, text, channel="cli")
                plan[i] = item
            assert isinstance(item, Draft)
            entries.append({"label": self.label("cli"), "text": item.text, "replies": item.replies})
            asked.append((item.kind, item.text))
            seconds += item.seconds()
        if self.rng.random() < 0.5:
            entries.append({"label": self.label("cli-exit"), "kind": "exit", "text": "exit"})
        for entry in entries[1:]:
            entry["gap_s"] = self.rng.randint(45, 600)
            seconds += entry["gap_s"]
        length = int(seconds * 1000) + 2 * MINUTE_MS
        await self.start_at(self.gap(), length)
        entries[0]["at"] = self.local(d.clock.now_ms()).isoformat()
        await d.cli(instance=".nanobot", label=self.label("cli-session"), entries=entries)
        self.cli_log.erased = erased
        self.cli_log.asked += asked

    async def concurrent(self) -> None:
        """A WebUI turn held in flight while something runs in another session."""
        d = self.d
        rng = self.rng
        options = ["telegram"]
        if self.trigger_name:
            options.append("trigger")
        due = self.next_due()
        if due is not None:
            options += ["cron", "cron"]
        side_chats = [c for c in self.live_chats() if c.turns > 0]
        if side_chats:
            options.append("webui")
        side = rng.choice(options)
        draft = self.fresh("webui")
        while draft.kind == "subagent":  # a held turn waits for nothing else
            draft = self.fresh("webui")
        gate = self.label("hold")
        held = draft.replies[0]
        draft.replies[0] = Reply(held.text, held.calls, think=held.think, usage=held.usage, error=held.error,
                                 reasoning=held.reasoning, finish=held.finish, hold=gate)
        lead_ms = rng.randint(20, 240) * 1000
        length = self.length([draft]) + lead_ms + 10 * MINUTE_MS
        if side == "cron":
            assert due is not None
            # start the turn shortly before the job is due
            start = due[1] - lead_ms
            if start < d.last_activity_ms + self.gap() or self.safe(start, length) != start:
                side = "telegram"
            else:
                await d.after(start)
                if d.clock.now_ms() >= due[1] - 5000:
                    side = "telegram"
        if side != "cron":
            await self.start_at(self.gap(), length)
        side_chat = rng.choice(side_chats) if side == "webui" else None
        chats = [c for c in self.live_chats() if c is not side_chat]
        chat = None if not chats or rng.random() < 0.3 else rng.choice(chats)
        tab = await d.webui_tab()
        chat = await self.open_chat(tab, chat)
        tab2 = None
        if side_chat is not None:
            tab2 = await d.webui_tab()
            await tab2.attach(side_chat.chat_id)
        record = await d.webui_start(tab, chat.chat_id, draft.text, draft.replies, label=self.label("webui-held"))
        await d.held(gate)
        if side == "cron":
            assert due is not None
            await d.cron_due(due[0], self.cron_replies(due[0]), label=self.label("cron-during"), during=True)
        else:
            d.meanwhile(lead_ms / 1000)
            if side == "trigger":
                assert self.trigger_name is not None
                content, replies = self.trigger_draft()
                await d.trigger(self.trigger_name, content, replies, label=self.label("trigger-during"), during=True)
            elif side == "telegram":
                other = self.fresh("telegram")
                while other.kind == "subagent":
                    other = self.fresh("telegram")
                await d.telegram(other.text, other.replies, label=self.label("tg-during"), during=True)
                self.remember(self.tg, other)
            else:
                assert tab2 is not None and side_chat is not None
                other = self.fresh("webui")
                while other.kind == "subagent":
                    other = self.fresh("webui")
                await d.webui_turn(tab2, side_chat.chat_id, other.text, other.replies,
                                   label=self.label("webui-during"), during=True)
                self.remember(side_chat, other)
        d.release(gate)
        await d.webui_join(tab, record)
        self.remember(chat, draft)
        await d.webui_close(tab)
        if tab2 is not None:
            await d.webui_close(tab2)

    # -- the timeline -------------------------------------------------------

    def gap(self) -> int:
        """Minutes between two actions: often a few, sometimes hours."""
        minutes = self.rng.choice((self.rng.randint(1, 15), self.rng.randint(5, 60), self.rng.randint(30, 180)))
        return minutes * MINUTE_MS

    @staticmethod
    def length(drafts: list[Draft]) -> int:
        return int(sum(draft.seconds() for draft in drafts) * 1000) + 3 * MINUTE_MS

    async def pick(self) -> None:
        """One action, drawn from what is possible now."""
        rng = self.rng
        if self.followups:
            what, arg = self.followups.pop(0)
            await getattr(self, what)(*arg)
            return
        options: dict[str, float] = {"webui": 5, "telegram": 4, "concurrent": 1.5}
        if self.cli_sessions < 2:
            options["cli"] = 1.5
        if any(c.asked for c in self.live_chats()):
            options["webui_new"] = 1.2
        if self.tg.asked:
            options["telegram_new"] = 1.0
        if len(self.live_chats()) >= 2 or (self.live_chats() and rng.random() < 0.3):
            options["delete"] = 0.6
        if self.trigger_name:
            options["trigger"] = 1.2
        if not self.cron_jobs:
            options["cron_setup"] = 0.8
        if self.trigger_name is None:
            options["trigger_setup"] = 0.6
        what = rng.choices(list(options), list(options.values()))[0]
        if what == "webui":
            await self.webui_visit()
        elif what == "telegram":
            await self.telegram_turn()
        elif what == "concurrent":
            await self.concurrent()
        elif what == "cli":
            await self.cli_session()
        elif what == "webui_new":
            await self.webui_new(rng.choice([c for c in self.live_chats() if c.asked]))
        elif what == "telegram_new":
            await self.telegram_new()
        elif what == "delete":
            await self.webui_delete(rng.choice(self.live_chats()))
        elif what == "trigger":
            await self.trigger_fire()
        elif what == "cron_setup":
            await self.cron_setup()
        elif what == "trigger_setup":
            await self.trigger_setup()

    def morning(self, day_index: int) -> int:
        day = self.setting.first_day + timedelta(days=day_index)
        start = datetime(day.year, day.month, day.day, 7, 0) + timedelta(minutes=self.rng.randrange(0, 150, 5))
        return int(start.replace(tzinfo=self.zone).timestamp() * 1000)

    async def night(self, next_morning_ms: int) -> None:
        """A DST change before the next morning: often an action close to it."""
        d = self.d
        now = d.last_activity_ms
        for change in self.changes:
            ms = int(change.timestamp() * 1000)
            if not now < ms < next_morning_ms or self.rng.random() < 0.3:
                continue
            draft = self.draft(self.rng.choice(("chat", "check", "note")), channel="telegram")
            length = self.length([draft])
            window = next((w for w in self.windows if w[0] <= ms <= w[1]), None)
            if window is None:
                # spring forward: a turn that runs across the gap
                start = ms - int(draft.seconds() * 1000 / 2)
            else:
                start = window[0] - length - IDLE_TAIL_MS - self.rng.randint(1, 40) * MINUTE_MS
            if start > now + 31_000 + 5 * MINUTE_MS:
                await self.telegram_turn(draft, gap_ms=start - now)
            if window is not None and self.rng.random() < 0.6:
                # and one just after the repeated hour
                after = window[1] + self.rng.randint(1, 45) * MINUTE_MS
                if after > d.last_activity_ms + 31_000:
                    await self.telegram_turn(gap_ms=after - d.last_activity_ms)

    async def run(self) -> None:
        d = self.d
        for day_index in range(self.setting.days):
            if day_index:
                morning = self.morning(day_index)
                await self.night(morning)
                await self.crons_before(morning)
                await d.after(max(morning, d.last_activity_ms + 31_000))
            actions = self.rng.randint(3, 7)
            if day_index == 0:
                # the automation is usually set up early
                if self.rng.random() < 0.7:
                    self.followups.append(("cron_setup", ()))
                if self.rng.random() < 0.5:
                    self.followups.append(("trigger_setup", ()))
            for _ in range(actions):
                if self.local(d.clock.now_ms()).hour >= 23 or self.local(d.clock.now_ms()).hour < 6:
                    break
                await self.pick()
            while self.followups:
                await self.pick()
        # a last stretch of quiet: idle compaction archives what is left
        await self.start_at(self.rng.randint(1, 40) * MINUTE_MS, MINUTE_MS)


async def explore(d: Driver) -> dict[str, Any]:
    setting = explore_setting(d.seed)
    if setting.tz != d.tz:
        raise RuntimeError(f"explore seed {d.seed}: the run's zone {d.tz} is not the drawn {setting.tz}")
    seed = d.seed
    secrets: list[str] = []

    def configure(config: Any) -> None:
        secrets.extend(base_config(config, seed=seed, tz=setting.tz))
        secrets.append(telegram_channel(config, seed=seed, allow_from=[TG_USER]))
        secrets.append(webui_channel(config, seed=seed))

    d.write_config(".nanobot", configure)
    await d.after(d.clock.now_ms() + 5 * MINUTE_MS)
    await d.start_gateway(".nanobot")
    explorer = Explorer(d, setting)
    await explorer.run()
    await d.stop_gateway()
    d.notes.append(
        f"explore seed {seed}: {setting.tz}, {setting.first_day} for {setting.days} day(s), "
        f"{explorer.serial} labels, DST changes {[c.isoformat() for c in explorer.changes if _near(c, setting)]}"
    )
    return {"secrets": secrets}


def _near(change: datetime, setting: ExploreSetting) -> bool:
    first = datetime(setting.first_day.year, setting.first_day.month, setting.first_day.day, tzinfo=timezone.utc)
    return first - timedelta(days=1) <= change <= first + timedelta(days=setting.days + 1)
