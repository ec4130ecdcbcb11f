"""The ``scale`` scenario: a benchmark home of realistic shape, grown to a size.

Issue 30: nanoload's benchmarks need a large home written by nanobot itself,
not only the synthetic ``benches/gen_home.py``.  From a seed and a target
size (``generate.py --size-mb N``) this scenario drives nanobot-ai 0.3.5's
own code, day after simulated day, until the home holds N MB:

* **many WebUI chats, long ones**: each new chat draws how many turns the
  user will spend in it (half of them 15-60, the others 2-10); a visit opens
  an unfinished chat (or a new one) and runs 1-6 turns a few minutes apart,
  so long chats grow over days, pass nanobot's idle compaction again and
  again, and their transcripts rotate into ``.segments/``;
* **big tool results**: turns whose scripted tool calls make nanobot's own
  tools read the user's files -- ``read_file`` windows sized to 50-200 KB,
  ``grep`` over a day's log, ``exec`` of ``tail``/``cat``/``sed -n`` with
  ``max_output_chars`` 50000 -- and multi-step investigations with two or
  three of them.  The files are the user's: logs a service writes into
  ``logs/`` every night (7 kept), Markdown handbooks in English, German,
  Russian and Japanese, CSV exports, a small Python project
  (:class:`Corpus`, placed by the harness).  nanobot keeps a result inline
  only up to ``agents.defaults.maxToolResultChars`` (default 16000; larger
  ones go to ``workspace/.nanobot/tool-results/<session>/<call>.txt`` with a
  1200-character preview in the session): the first gateway run has the
  default, then the user raises it to 200000 and restarts the gateway;
  nanobot's own caps stay (read_file and grep 128000 characters, exec 50000);
* three Telegram chats (users 4242, 5151, 6363), ``/new`` now and then;
* classic CLI sessions (``nanobot agent --classic``) every few days;
* up to three daily cron jobs created by the model's ``cron`` tool, every due
  run driven (run records, ``cron`` llm_usage rows), some reading the
  previous day's log; a local trigger fired several times a day; turns held
  in flight while another session runs (as in ``explore``); subagents;
  retried provider errors; deleted chats; gateway restarts every few days;
* time: actions between about 07:00 and 22:00 local, a drawn gap apart, the
  clock jumping to the next morning; the zone and first day come from
  ``catalog.scale_setting``.

Facts are not computed (``generate.py`` skips facts_worker for ``scale``):
the home is for benchmarks.  The turn shapes and timeline helpers are the
``explore`` scenario's (:class:`Scaler` extends its ``Explorer``).
"""

from __future__ import annotations

import bisect
import json
import os
import random
import re
import sys
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from .catalog import ExploreSetting, scale_setting, zone_transitions
from .driver import Driver
from .explore import CRON_JOBS, MINUTE_MS, Draft, Explorer, Ids, SessionLog
from .provider import Call, Reply
from .scenarios import base_config, telegram_channel, webui_channel

TG_USERS = ("4242", "5151", "6363")
#: maxToolResultChars after the first gateway restart (nanobot's default: 16000)
BIG_RESULT_LIMIT = 200_000
#: nanobot's caps (agent/tools/filesystem.py ReadFileTool._MAX_CHARS,
#: agent/tools/exec_session.py MAX_OUTPUT_CHARS)
READ_MAX_CHARS = 128_000
EXEC_MAX_CHARS = 50_000
KEPT_LOGS = 7
CONTEXT_WINDOW = 1_000_000
#: below nanobot's session cache (SESSION_CACHE_MAX_SIZE 128), see Scaler.room
MAX_SESSIONS = 110
KB = 1024


def C(call_id: str, tool: str, **args: Any) -> Call:
    return Call(call_id, tool, args)


# ---------------------------------------------------------------------------
# the user's files
# ---------------------------------------------------------------------------

EN_WORDS = (
    "backup", "snapshot", "retention", "volume", "replica", "cluster", "latency", "queue", "worker",
    "scheduler", "request", "timeout", "certificate", "rotation", "deployment", "rollback", "index",
    "migration", "partition", "throughput", "alert", "threshold", "dashboard", "pipeline", "artifact",
    "container", "kernel", "firmware", "router", "gateway", "tunnel", "credential", "policy", "audit",
    "storage", "bucket", "checksum", "restore", "failover", "heartbeat", "the", "a", "every", "after",
    "before", "when", "should", "must", "never", "always", "daily", "weekly", "nightly", "manual",
    "automatic", "primary", "secondary", "stale", "healthy", "degraded", "pending", "verified",
)
DE_WORDS = (
    "Sicherung", "Prüfsumme", "Wiederherstellung", "Größe", "Schlüssel", "Überwachung", "Zugriff",
    "täglich", "wöchentlich", "nächtlich", "Änderung", "Lösung", "Störung", "Verfügbarkeit", "für",
    "über", "während", "müssen", "können", "Datenträger", "Festplatte", "Netzwerk", "Benutzer",
    "Gerät", "Zertifikat", "Aufbewahrung", "Protokoll", "Warteschlange", "der", "die", "das", "und",
    "nicht", "immer", "nie", "wenn", "danach", "zuerst", "Dienst", "Konfiguration", "Ausfall",
)
RU_WORDS = (
    "резервная", "копия", "снимок", "хранение", "сервер", "кластер", "задержка", "очередь",
    "запрос", "сертификат", "развёртывание", "откат", "миграция", "раздел", "оповещение", "порог",
    "панель", "контейнер", "ядро", "маршрутизатор", "политика", "аудит", "хранилище",
    "восстановление", "ежедневно", "еженедельно", "всегда", "никогда", "после", "перед", "если",
    "нужно", "проверено", "основной", "резервный", "устаревший", "здоровый", "и", "в", "на",
)
JA_PHRASES = (
    "バックアップは毎晩実行されます", "設定ファイルを確認してください", "ディスク容量が不足しています",
    "証明書の有効期限が近づいています", "サーバーを再起動しました", "ログを定期的に確認します",
    "復元手順は以下の通りです", "ネットワークの遅延が発生しました", "ユーザーの権限を変更しました",
    "監視ダッシュボードを更新しました", "データベースの移行が完了しました", "キューが詰まっています",
    "障害の原因を調査中です", "パッチを適用してください", "スナップショットを三つ保持します",
    "夜間のジョブが失敗しました", "暗号化キーを更新しました", "アラートのしきい値を見直します",
)
USERS = ("anna", "tom", "jörg.müller", "søren", "zoë", "李娜", "ólafur", "priya", "mateo", "chen.wei")
SERVICES = ("api", "worker", "scheduler", "backup", "auth", "billing", "mailer", "search")
ROUTES = ("/v1/orders", "/v1/users/me", "/v1/search", "/v1/invoices", "/healthz", "/v1/export",
          "/v1/files/upload", "/v1/sessions")
ERRORS = (
    'upstream "db-primary" timed out after 3000ms',
    "connection reset by peer (pool=\"main\", attempt=3)",
    'certificate for "mail.example.org" expires in 6 days',
    "disk usage on /var/lib/backup at 91%",
    'job "nightly-export" exited with status 137',
    "rate limit exceeded for client \"mobile-app\"",
    "checksum mismatch in snapshot 2026.11 (expected 9f3a…, got 1c07…)",
)


def _sentence(rng: random.Random, words: tuple[str, ...], lo: int, hi: int) -> str:
    text = " ".join(rng.choice(words) for _ in range(rng.randint(lo, hi)))
    return text[0].upper() + text[1:] + rng.choice((".", ".", ".", "!", "?"))


def doc_lines(rng: random.Random, lang: str, n_lines: int) -> list[str]:
    """A Markdown handbook: headings, paragraphs, bullets, a table now and then."""
    lines: list[str] = []
    section = 0
    while len(lines) < n_lines:
        section += 1
        if lang == "ja":
            heading = f"## {section}. " + rng.choice(JA_PHRASES)
        elif lang == "ru":
            heading = f"## {section}. " + _sentence(rng, RU_WORDS, 2, 4).rstrip(".!?")
        elif lang == "de":
            heading = f"## {section}. " + _sentence(rng, DE_WORDS, 2, 4).rstrip(".!?")
        else:
            heading = f"## {section}. " + _sentence(rng, EN_WORDS, 2, 4).rstrip(".!?")
        lines += [heading, ""]
        for _ in range(rng.randint(3, 9)):
            if lang == "ja":
                para = "".join(rng.choice(JA_PHRASES) + "。" for _ in range(rng.randint(2, 7)))
            else:
                words = {"ru": RU_WORDS, "de": DE_WORDS}.get(lang, EN_WORDS)
                para = " ".join(_sentence(rng, words, 5, 16) for _ in range(rng.randint(1, 4)))
            if rng.random() < 0.3:
                para = "- " + para
            lines.append(para)
            if rng.random() < 0.1:
                lines += ["", "| host | size | status |", "|---|---|---|"]
                lines += [f"| srv-{rng.randint(1, 40):02d} | {rng.randint(1, 900)} GB | "
                          f"{rng.choice(('ok', 'warn', 'fail'))} |" for _ in range(rng.randint(2, 8))]
            lines.append("")
    return lines[:n_lines]


def csv_lines(rng: random.Random, n_lines: int, start: date) -> list[str]:
    lines = ["date,host,cpu_pct,mem_pct,disk_pct,net_in_mb,net_out_mb,note"]
    for i in range(n_lines - 1):
        day = start + timedelta(days=i // 24)
        note = rng.choice(("", "", "", "reboot", "\"backup, nightly\"", "patch \"2026-11\""))
        lines.append(f"{day.isoformat()}T{i % 24:02d}:00,srv-{rng.randint(1, 40):02d},{rng.uniform(0, 100):.1f},"
                     f"{rng.uniform(5, 99):.1f},{rng.uniform(10, 95):.1f},{rng.uniform(0, 5000):.2f},"
                     f"{rng.uniform(0, 5000):.2f},{note}")
    return lines


def code_lines(rng: random.Random, n_funcs: int, module: str) -> list[str]:
    lines = ['"""' + module + ': helpers of the home-server tools."""', "", "import json", "import os", ""]
    for i in range(n_funcs):
        name = f"{rng.choice(('check', 'load', 'rotate', 'verify', 'export', 'sync'))}_{rng.choice(EN_WORDS[:40])}_{i}"
        lines += [
            "",
            f"def {name}(path: str, limit: int = {rng.randint(1, 500)}) -> dict:",
            f'    """{_sentence(rng, EN_WORDS, 4, 10)}"""',
            "    result = {\"path\": path, \"items\": []}",
            "    with open(path, encoding=\"utf-8\") as handle:",
            "        for n, line in enumerate(handle):",
            "            if n >= limit:",
            "                break",
            f"            if \"{rng.choice(('error', 'warn', 'timeout', 'fail'))}\" in line:",
            "                result[\"items\"].append(json.loads(line))",
            f"    os.environ.setdefault(\"{rng.choice(('BACKUP_DIR', 'LOG_DIR', 'EXPORT_DIR'))}\", \"/srv/data\")",
            "    return result",
        ]
    return lines


def log_lines(rng: random.Random, day: date, zone: Any, n_lines: int) -> list[str]:
    """One day of a JSON-lines service log (what the user's service writes)."""
    start = datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(timezone.utc)
    stamps = sorted(rng.randrange(86_400_000) for _ in range(n_lines))
    lines = []
    for ms in stamps:
        t = start + timedelta(milliseconds=ms)
        level = rng.choices(("debug", "info", "warn", "error"), (2, 14, 3, 1))[0]
        record: dict[str, Any] = {
            "ts": t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z",
            "level": level,
            "svc": rng.choice(SERVICES),
            "req": f"{rng.getrandbits(48):012x}",
            "route": rng.choice(ROUTES),
            "status": 200 if level in ("debug", "info") else rng.choice((429, 500, 502, 503, 504)),
            "ms": int(rng.expovariate(1 / 120)) + 1,
            "user": rng.choice(USERS),
        }
        if level in ("warn", "error"):
            record["msg"] = rng.choice(ERRORS)
            if level == "error" and rng.random() < 0.5:
                record["trace"] = [f"  at {rng.choice(SERVICES)}.{rng.choice(EN_WORDS[:40])}"
                                   f"({rng.choice(SERVICES)}.py:{rng.randint(10, 900)})"
                                   for _ in range(rng.randint(2, 6))]
        else:
            record["msg"] = f"request completed in {record['ms']} ms"
        lines.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return lines


@dataclass
class FileInfo:
    lines: list[str]
    #: per line (1-based number n): characters of "n| line" plus the newline,
    #: and its UTF-8 bytes once JSON-encoded (as the session line holds it)
    chars: list[int]
    cum_bytes: list[int]

    @property
    def ratio(self) -> float:
        return self.cum_bytes[-1] / max(1, sum(self.chars))


class Corpus:
    """The files the user keeps in the workspace (placed by the harness, as the
    user's own programs would write them; nanobot only reads them)."""

    def __init__(self, workspace: Path, rng: random.Random, zone: Any) -> None:
        self.ws = workspace
        self.rng = rng
        self.zone = zone
        self.files: dict[str, FileInfo] = {}
        self.logs: list[str] = []

    def write(self, rel: str, lines: list[str]) -> None:
        path = self.ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        chars, cum, total = [], [], 0
        for n, line in enumerate(lines, start=1):
            numbered = f"{n}| {line}\n"
            chars.append(len(numbered))
            total += len(json.dumps(numbered, ensure_ascii=False).encode("utf-8")) - 2
            cum.append(total)
        self.files[rel] = FileInfo(lines, chars, cum)

    def remove(self, rel: str) -> None:
        (self.ws / rel).unlink(missing_ok=True)
        self.files.pop(rel, None)

    def place(self, first_day: date) -> None:
        rng = self.rng
        for lang, n in (("en", 2600), ("de", 2400), ("ru", 2400), ("ja", 3400)):
            self.write(f"docs/handbook-{lang}.md", doc_lines(rng, lang, n))
        self.write("docs/runbook.md", doc_lines(rng, "en", 1200))
        for i in range(2):
            self.write(f"data/metrics-{i + 1}.csv", csv_lines(rng, rng.randint(3000, 5000), first_day))
        for name in ("backup", "rotate", "export", "monitor"):
            self.write(f"src/homeops/{name}.py", code_lines(rng, rng.randint(40, 90), name))
        for back in range(3, 0, -1):
            self.rotate(first_day - timedelta(days=back - 1))

    def rotate(self, today: date) -> None:
        """Midnight: the service closes yesterday's log; only the last 7 are kept."""
        day = today - timedelta(days=1)
        rel = f"logs/app-{day.isoformat()}.jsonl"
        if rel in self.files:
            return
        self.write(rel, log_lines(self.rng, day, self.zone, self.rng.randint(1800, 3200)))
        self.logs.append(rel)
        while len(self.logs) > KEPT_LOGS:
            self.remove(self.logs.pop(0))

    def readable(self) -> list[str]:
        return [rel for rel in self.files if not rel.endswith(".py")]

    def window(self, rel: str, target: int) -> tuple[int, int]:
        """(offset, limit) of a read_file call whose result is about *target*
        bytes once JSON-encoded (within nanobot's 128000-character cap)."""
        info = self.files[rel]
        n = len(info.lines)
        avg = info.cum_bytes[-1] / n
        need = max(1, int(target / avg))
        offset = self.rng.randint(1, max(1, n - int(need * 1.1)))
        base = info.cum_bytes[offset - 2] if offset > 1 else 0
        end = bisect.bisect_left(info.cum_bytes, base + target, lo=offset - 1)
        end = min(max(end + 1, offset), n)
        chars = 0
        for i in range(offset - 1, end):
            chars += info.chars[i]
            if chars > READ_MAX_CHARS - 200:
                end = i
                break
        return offset, max(1, end - offset + 1)

    def pick_for(self, target: int) -> str:
        """A readable file in which a window of *target* bytes fits the cap."""
        fits = [rel for rel in self.readable()
                if self.files[rel].ratio * (READ_MAX_CHARS - 2000) >= target
                and self.files[rel].cum_bytes[-1] >= target * 1.2]
        return self.rng.choice(fits or self.readable())


# ---------------------------------------------------------------------------
# answers
# ---------------------------------------------------------------------------

FINDINGS = (
    "the nightly backup finished but took {n} minutes longer than usual",
    "{n} requests to /v1/export hit the 3 s upstream timeout",
    "the certificate for mail.example.org needs renewing within {n} days",
    "disk usage on the backup volume grew by {n} % this week",
    "the scheduler retried the export job {n} times before it succeeded",
    "error rates are flat apart from a spike of {n} 502s around midnight",
    "{n} users hit the rate limit, almost all from the mobile app",
)
ADVICE = (
    "raise the upstream timeout or add a read replica",
    "rotate the certificate now rather than waiting for the alert",
    "prune snapshots older than 30 days to get the volume below 80 %",
    "move the export job out of the backup window",
    "add an alert on the p95 latency of /v1/search",
    "keep an eye on it for another day before changing anything",
)


def answer(rng: random.Random, subject: str) -> str:
    """A Markdown answer of a few hundred to a few thousand characters."""
    parts = [f"I went through {subject}. In short:"]
    for _ in range(rng.randint(2, 7)):
        parts.append("- " + rng.choice(FINDINGS).format(n=rng.randint(2, 97)))
    parts.append("")
    parts.append("What I would do: " + "; ".join(rng.sample(ADVICE, rng.randint(1, 3))) + ".")
    if rng.random() < 0.4:
        parts.append("")
        parts.append("| item | count | trend |\n|---|---|---|")
        parts += [f"| {rng.choice(ROUTES)} | {rng.randint(1, 900)} | {rng.choice(('up', 'down', 'flat'))} |"
                  for _ in range(rng.randint(2, 6))]
    if rng.random() < 0.3:
        parts.append("")
        parts.append(" ".join(_sentence(rng, EN_WORDS, 6, 14) for _ in range(rng.randint(3, 12))))
    return "\n".join(parts)


BIG_READ_PROMPTS = (
    "Read {path} and tell me what stands out.",
    "Go through {path} and summarize the part you read.",
    "What does {path} say? Give me the gist.",
    "Skim {path} and list anything I should act on.",
)
GREP_PROMPTS = (
    "Find the errors in the log of {day} and explain them.",
    "Which requests failed on {day}, and why?",
    "Look for warnings in the log of {day} and group them.",
)
EXEC_PROMPTS = (
    "Show me the end of {path}.",
    "Print {path} for me, I want to see it raw.",
    "Dump the middle of {path}.",
)
INVESTIGATE_PROMPTS = (
    "Something was off on {day}. Investigate the logs and the runbook and write a short incident note.",
    "Compare the log of {day} with the handbook and tell me what we should change.",
    "Prepare an incident report for {day} in reports/ and tell me the key points.",
)
DAY_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


def _path_in(text: str) -> str | None:
    return next((w.rstrip("?,.") for w in text.split() if "/" in w), None)


# ---------------------------------------------------------------------------
# the timeline
# ---------------------------------------------------------------------------


class Scaler(Explorer):
    def __init__(self, d: Driver, setting: ExploreSetting, target_bytes: int) -> None:
        super().__init__(d, setting)
        self.rng = random.Random(f"scale-timeline:{d.seed}")
        self.target = target_bytes
        self.corpus = Corpus(Path(d.workspace), random.Random(f"scale-corpus:{d.seed}"), self.zone)
        # the run may reach into the next year: its repeated hours too
        self.add_repeated_hours(zone_transitions(setting.tz, setting.first_day.year + 1))
        self.tg_logs = {user: SessionLog(f"telegram:{user}") for user in TG_USERS}
        self.tg = self.tg_logs[TG_USERS[0]]
        #: turns the user will spend in each WebUI chat, by chat id
        self.plan: dict[str, int] = {}
        #: the cron jobs' local minutes of the day
        self.cron_times: list[int] = []
        #: cron runs that fired late (their action overran), for the notes
        self.late_crons: list[str] = []
        self.day = 0
        self.next_restart = 0
        self.restarts = 0
        self.started = time.monotonic()
        self.actions = 0
        self.size = 0
        self.kinds: dict[str, int] = {}

    # -- drawing ------------------------------------------------------------

    def usage(self) -> tuple[int, int, int | None, int | None] | None:
        rng = self.rng
        if rng.random() < 0.05:
            return None
        inp = rng.randint(2_000, 160_000)
        read = rng.choice((None, 0, inp // 4, inp // 2, (inp * 3) // 4))
        write = rng.choice((None, None, 0, 512, 4096))
        if write:  # cached tokens are part of the input (nanobot rejects more)
            write = min(write, inp - (read or 0))
        return inp, rng.randint(12, 1_800), read, write

    def ids(self) -> Ids:
        """Mostly unique ``toolu_…`` ids (Anthropic's): nanobot drops a result
        whose id the session already answered, and big results should stay."""
        return Ids(self.rng, reuse=self.rng.random() < 0.05)

    def fresh(self, channel: str) -> Draft:
        kinds = {"chat": 2.0, "note": 1.0, "check": 1.0, "agentic": 1.0, "list": 0.4, "long": 1.0,
                 "big_read": 4.0, "big_grep": 2.0, "big_exec": 2.0, "investigate": 2.0}
        if channel == "telegram":
            kinds.update(chat=4.0, check=3.0, big_read=1.5, big_grep=1.0, big_exec=1.0, investigate=0.5)
        if self.written:
            kinds["read"] = 1.0
        if channel != "cli":
            kinds["subagent"] = 0.5
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return self.draft(kind, channel=channel)

    def draft(self, kind: str, text: str | None = None, *, channel: str) -> Draft:
        if kind == "big_read":
            return self.big_read(text)
        if kind == "big_grep":
            return self.big_grep(text)
        if kind == "big_exec":
            return self.big_exec(text)
        if kind == "investigate":
            return self.investigate(text)
        return super().draft(kind, text, channel=channel)

    def target_bytes(self) -> int:
        return self.rng.randint(50 * KB, 200 * KB)

    def read_call(self, ids: Any, path: str | None = None) -> tuple[Call, str]:
        corpus = self.corpus
        target = self.target_bytes()
        if path is None or path not in corpus.files:
            path = corpus.pick_for(target)
        offset, limit = corpus.window(path, target)
        args: dict[str, Any] = {"path": path, "offset": offset, "limit": limit}
        return C(ids.next(), "read_file", **args), path

    def grep_call(self, ids: Any, day: str) -> Call:
        rng = self.rng
        pattern = rng.choice(('"level":"error"', '"level":"(warn|error)"', '"status":50[0-9]', "timed out"))
        ctx = rng.randint(1, 5)
        return C(ids.next(), "grep", pattern=pattern, path="logs", glob=f"app-{day}.jsonl",
                 context_before=ctx, context_after=ctx, head_limit=rng.choice((50, 100, 150, 250)))

    def exec_call(self, ids: Any, path: str) -> Call:
        rng = self.rng
        n = len(self.corpus.files[path].lines) if path in self.corpus.files else 1000
        form = rng.choice(("tail", "cat", "sed"))
        if form == "tail":
            command = f"tail -n {rng.randint(300, 1500)} {path}"
        elif form == "cat":
            command = f"cat {path}"
        else:
            a = rng.randint(1, max(1, n - 400))
            command = f"sed -n '{a},{a + rng.randint(250, 1200)}p' {path}"
        return C(ids.next(), "exec", command=command, max_output_chars=EXEC_MAX_CHARS)

    def log_day(self, text: str | None) -> str:
        if text is not None and (m := DAY_RE.search(text)):
            return m.group(0)
        return self.rng.choice(self.corpus.logs)[len("logs/app-"):-len(".jsonl")]

    def big_read(self, text: str | None) -> Draft:
        ids = self.ids()
        call, path = self.read_call(ids, _path_in(text) if text else None)
        text = text or self.rng.choice(BIG_READ_PROMPTS).format(path=path)
        replies = [self.reply("", [call], lo=15, hi=90),
                   self.reply(answer(self.rng, path), lo=30, hi=240)]
        return Draft("big_read", text, self.with_error(replies, p=0.05))

    def big_grep(self, text: str | None) -> Draft:
        ids = self.ids()
        day = self.log_day(text)
        text = text or self.rng.choice(GREP_PROMPTS).format(day=day)
        replies = [self.reply("Let me search the log.", [self.grep_call(ids, day)], lo=10, hi=60),
                   self.reply(answer(self.rng, f"the log of {day}"), lo=30, hi=200)]
        return Draft("big_grep", text, self.with_error(replies, p=0.05))

    def big_exec(self, text: str | None) -> Draft:
        ids = self.ids()
        path = _path_in(text) if text else None
        if path is None or path not in self.corpus.files:
            path = self.rng.choice([p for p in self.corpus.files if not p.startswith("src/")])
        text = text or self.rng.choice(EXEC_PROMPTS).format(path=path)
        replies = [self.reply("", [self.exec_call(ids, path)], lo=10, hi=60),
                   self.reply(answer(self.rng, path), lo=20, hi=180)]
        return Draft("big_exec", text, self.with_error(replies, p=0.05))

    def investigate(self, text: str | None) -> Draft:
        """An agentic turn of 5-9 calls, two to four of them with big results."""
        rng = self.rng
        ids = self.ids()
        day = self.log_day(text)
        text = text or rng.choice(INVESTIGATE_PROMPTS).format(day=day)
        log = f"logs/app-{day}.jsonl"
        replies = [self.reply("Let me look at the logs first.", [C(ids.next(), "list_dir", path="logs")],
                              lo=20, hi=90),
                   self.reply("", [self.grep_call(ids, day)], lo=20, hi=120)]
        if rng.random() < 0.5:
            replies.append(self.reply("", [self.exec_call(ids, log)], lo=20, hi=120))
        if rng.random() < 0.4:
            # two reads in one step (nanobot runs them concurrently)
            first, _ = self.read_call(ids, log)
            second, _ = self.read_call(ids, rng.choice(("docs/runbook.md", "docs/handbook-en.md",
                                                         "docs/handbook-de.md")))
            replies.append(self.reply("Reading the log and the runbook side by side.", [first, second],
                                      lo=30, hi=150))
        else:
            call, _ = self.read_call(ids, log)
            replies.append(self.reply("", [call], lo=30, hi=150))
        for step in range(rng.randint(0, 2)):
            replies.append(self.reply("", [C(ids.next(), "exec", command=f"wc -l {log}")], lo=10, hi=60))
        report = f"reports/incident-{day}.md"
        replies.append(self.reply("", [C(ids.next(), "write_file", path=report,
                                         content=f"# Incident {day}\n\n{answer(rng, log)}\n")], lo=60, hi=300))
        replies.append(self.reply(f"I wrote {report}.\n\n" + answer(rng, f"the log of {day}"), lo=30, hi=240))
        self.written.append(report)
        return Draft("investigate", text, self.with_error(replies, p=0.06))

    def next_due(self) -> tuple[str, int] | None:
        """The job due first (several daily jobs run)."""
        assert self.d.gateway is not None
        jobs = [j for j in self.d.gateway.cron.list_jobs() if j.state.next_run_at_ms]
        if not jobs:
            return None
        job = min(jobs, key=lambda j: (j.state.next_run_at_ms, j.name))
        return job.name, int(job.state.next_run_at_ms)

    async def crons_before(self, until_ms: int) -> None:
        """Explorer's, with idle scans kept 10 minutes clear of a due run
        (with many sessions one scan may archive several, 25 s each); a run
        due while the previous action was still going fires late."""
        while True:
            due = self.next_due()
            if due is None or due[1] > until_ms:
                return
            previous = self.d.turns[-1]["label"] if self.d.turns else ""
            record = await self.d.cron_due(due[0], self.cron_replies(due[0]), label=self.label("cron"),
                                           scan_margin_s=600, allow_late=True)
            if record.get("late"):
                self.late_crons.append(f"{record['label']} after {previous}")

    def cron_replies(self, name: str) -> list[Reply]:
        if self.rng.random() < 0.35 and self.corpus.logs:
            ids = self.ids()
            day = self.corpus.logs[-1][len("logs/app-"):-len(".jsonl")]
            return self.with_error([
                self.reply("", [self.grep_call(ids, day)], lo=15, hi=60),
                self.reply(f"{name}: " + answer(self.rng, f"the log of {day}"), lo=20, hi=120),
            ], p=0.05)
        return super().cron_replies(name)

    # -- actions ------------------------------------------------------------

    def session_count(self) -> int:
        assert self.d.gateway is not None
        return sum(1 for _ in self.d.gateway.sessions.sessions_dir.glob("*.jsonl"))

    def room(self) -> bool:
        """Whether a new session may start.  nanobot caches 128 sessions; its
        idle scan (run on the harness clock, as the gateway runs it) loads
        every expired session it does not hold, so beyond the cache each scan
        would parse every session file again."""
        return self.session_count() < MAX_SESSIONS

    def fresh_small(self, channel: str) -> Draft:
        kinds = {"chat": 4.0, "check": 2.0, "note": 1.5, "list": 0.5, "long": 1.0}
        if self.written:
            kinds["read"] = 1.0
        kind = self.rng.choices(list(kinds), list(kinds.values()))[0]
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        return self.draft(kind, channel=channel)

    async def webui_visit(self, *, quick: bool = False) -> None:
        """A visit to a long chat (or a new one), or ``quick``: a new chat
        for one to three small questions."""
        d = self.d
        rng = self.rng
        room = self.room()
        if quick and room:
            chat = None
            drafts = [self.fresh_small("webui") for _ in range(rng.randint(1, 3))]
        else:
            open_chats = [c for c in self.live_chats() if c.turns < self.plan.get(c.chat_id, 0)]
            chat = rng.choice(open_chats) if open_chats and (rng.random() < 0.75 or not room) else None
            if chat is None and not room:
                # no room for another session: the user goes on in an old chat
                chat = rng.choice(self.live_chats())
                self.plan[chat.chat_id] = max(self.plan.get(chat.chat_id, 0), chat.turns) + rng.randint(5, 20)
            want = rng.choice((1, 2, 2, 3, 3, 4, 5, 6))
            if chat is not None:
                want = min(want, self.plan[chat.chat_id] - chat.turns)
            drafts = [self.fresh("webui") for _ in range(want)]
        await self.start_at(self.gap(), self.length(drafts[:1]))
        tab = await d.webui_tab()
        chat = await self.open_chat(tab, chat)
        if chat.chat_id not in self.plan:
            if quick:
                self.plan[chat.chat_id] = len(drafts)
            else:
                self.plan[chat.chat_id] = rng.randint(15, 60) if rng.random() < 0.5 else rng.randint(2, 10)
        for i, draft in enumerate(drafts):
            if i:
                await self.start_at(rng.randint(1, 12) * MINUTE_MS, self.length([draft]))
            await d.webui_turn(tab, chat.chat_id, draft.text, draft.replies, subagents=draft.subagents,
                               label=self.label("webui"))
            self.remember(chat, draft)
        await d.webui_close(tab)

    async def tg_turn(self, user: str, draft: Draft | None = None, *, gap_ms: int | None = None) -> None:
        draft = draft or self.fresh("telegram")
        await self.start_at(self.gap() if gap_ms is None else gap_ms, self.length([draft]))
        await self.d.telegram(draft.text, draft.replies, subagents=draft.subagents, sender=user,
                              label=self.label("tg"))
        self.remember(self.tg_logs[user], draft)

    async def tg_new(self, user: str) -> None:
        log = self.tg_logs[user]
        await self.start_at(self.gap(), 2 * MINUTE_MS)
        await self.d.telegram("/new", sender=user, label=self.label("tg-new"), kind="new")
        self.new_in(log)
        if self.rng.random() < 0.8:
            await self.tg_turn(user, self.again(log, "telegram"), gap_ms=self.rng.randint(1, 8) * MINUTE_MS)

    async def restart(self) -> None:
        """The user restarts the gateway (the first time after raising
        maxToolResultChars in config.json)."""
        from nanobot.config.loader import load_config, save_config

        d = self.d
        # a job due while the gateway is down would run unscripted at start
        await self.crons_before(d.clock.now_ms() + 10 * MINUTE_MS)
        await d.stop_gateway()
        if self.restarts == 0:
            path = Path(d.instances[".nanobot"]["config"])
            config = load_config(path)
            config.agents.defaults.max_tool_result_chars = BIG_RESULT_LIMIT
            save_config(config, path)
            d.notes.append(f"scale: maxToolResultChars {BIG_RESULT_LIMIT} from {self.local(d.clock.now_ms())}")
        await d.after(d.clock.now_ms() + self.rng.randint(1, 4) * MINUTE_MS)
        await d.start_gateway(".nanobot")
        self.restarts += 1

    async def pick(self) -> None:
        rng = self.rng
        if self.followups:
            what, arg = self.followups.pop(0)
            await getattr(self, what)(*arg)
            return
        options: dict[str, float] = {"webui": 7.0, "telegram": 3.0}
        if self.room():
            options.update(quick=2.0, concurrent=0.5)
        if self.cli_sessions < self.day // 3 + 1:
            options["cli"] = 0.5
        if any(c.asked for c in self.live_chats()):
            options["webui_new"] = 0.3
        if any(log.asked for log in self.tg_logs.values()):
            options["telegram_new"] = 0.25
        done = [c for c in self.live_chats() if c.turns >= self.plan.get(c.chat_id, 0) and c.turns <= 10]
        if done:
            options["delete"] = 0.15
        if self.trigger_name:
            options["trigger"] = 1.5
        if len(self.cron_jobs) < 3:
            options["cron_setup"] = 0.6
        if self.trigger_name is None:
            options["trigger_setup"] = 0.6
        what = rng.choices(list(options), list(options.values()))[0]
        if what == "webui":
            await self.webui_visit()
        elif what == "quick":
            await self.webui_visit(quick=True)
        elif what == "telegram":
            await self.tg_turn(rng.choices(TG_USERS, (5, 2, 1))[0])
        elif what == "concurrent":
            await self.concurrent()
        elif what == "cli":
            await self.cli_session()
        elif what == "webui_new":
            await self.webui_new(rng.choice([c for c in self.live_chats() if c.asked]))
        elif what == "telegram_new":
            await self.tg_new(rng.choice([u for u, log in self.tg_logs.items() if log.asked]))
        elif what == "delete":
            await self.webui_delete(rng.choice(done))
        elif what == "trigger":
            await self.trigger_fire()
        elif what == "cron_setup":
            await self.cron_setup()
        elif what == "trigger_setup":
            await self.trigger_setup()

    async def cron_setup(self) -> None:
        """Explorer's, with a job name not taken yet (several jobs run daily)."""
        rng = self.rng
        name, message = rng.choice([job for job in CRON_JOBS if job[0] not in self.cron_jobs])
        while True:  # at least 30 minutes from the other jobs (a run must end before the next is due)
            hour, minute = rng.randint(7, 21), rng.choice((0, 0, 15, 30, 45, rng.randint(1, 59)))
            if all(abs(hour * 60 + minute - t) >= 30 for t in self.cron_times):
                break
        self.cron_times.append(hour * 60 + minute)
        ids = self.ids()
        replies = [
            self.reply("", [C(ids.next(), "cron", action="add", name=name, message=message,
                              cron_expr=f"{minute} {hour} * * *", tz=self.setting.tz)], lo=15, hi=45),
            self.reply(f"Done: '{name}' runs every day at {hour:02d}:{minute:02d}.", lo=5, hi=25),
        ]
        text = f"Every day at {hour:02d}:{minute:02d}, {message[0].lower()}{message[1:]}"
        await self.start_at(self.gap(), self.length([Draft("cron-setup", text, replies)]))
        await self.d.telegram(text, replies, label=self.label("tg-cron-setup"))
        self.tg.turns += 1
        self.cron_jobs[name] = message

    # -- size and progress --------------------------------------------------

    def home_bytes(self) -> int:
        """The files' bytes, without what the end of the run removes: SQLite's
        WAL (up to ~4 MB until llm_usage's connection closes) and runtime
        checkpoints of turns in flight."""
        total = 0
        for dirpath, _dirnames, filenames in os.walk(self.d.home):
            for name in filenames:
                if name.endswith(("-wal", "-shm", ".checkpoint.json")):
                    continue
                total += os.lstat(os.path.join(dirpath, name)).st_size
        return total

    def progress(self, force: bool = False) -> None:
        self.actions += 1
        self.size = self.home_bytes()
        if force or self.actions % 10 == 0:
            print(f"[scale] {self.local(self.d.clock.now_ms()).isoformat(timespec='minutes')} "
                  f"day {self.day + 1}: {self.size / 1e6:.1f} / {self.target / 1e6:.0f} MB after "
                  f"{self.actions} actions, {time.monotonic() - self.started:.0f} s",
                  file=sys.stderr, flush=True)

    async def run(self) -> None:
        d = self.d
        rng = self.rng
        self.next_restart = rng.randint(1, 2)
        # the automation is set up early
        self.followups += [("cron_setup", ()), ("trigger_setup", ())]
        while self.size < self.target and self.day < self.setting.days:
            if self.day:
                morning = self.morning(self.day)
                await self.crons_before(morning)
                await d.after(max(morning, d.last_activity_ms + 31_000))
                self.corpus.rotate(self.local(d.clock.now_ms()).date())
                d.stamper.stamp()
                if self.day >= self.next_restart:
                    await self.restart()
                    self.next_restart = self.day + rng.randint(3, 8)
            for _ in range(rng.randint(6, 14)):
                now = self.local(d.clock.now_ms())
                if now.hour >= 22 or now.hour < 6:
                    break
                await self.pick()
                self.progress()
                if self.size >= self.target:
                    break
            while self.followups and self.size < self.target:
                await self.pick()
                self.progress()
            self.day += 1
        # a last stretch of quiet: idle compaction archives what is left
        await self.start_at(rng.randint(20, 40) * MINUTE_MS, MINUTE_MS)
        self.progress(force=True)


async def scale(d: Driver) -> dict[str, Any]:
    setting = scale_setting(d.seed)
    if setting.tz != d.tz:
        raise RuntimeError(f"scale seed {d.seed}: the run's zone {d.tz} is not the drawn {setting.tz}")
    seed = d.seed
    target = int(float(d.spec.get("size_mb") or 20) * 1_000_000)
    secrets: list[str] = []

    def configure(config: Any) -> None:
        secrets.extend(base_config(config, seed=seed, tz=setting.tz))
        # Sonnet 4.5's 1M-token context: without tiktoken's vocabulary (no
        # network) nanobot counts a prompt's UTF-8 bytes as tokens, and its
        # default 200000 cannot hold a turn with two or three big results
        config.agents.defaults.context_window_tokens = CONTEXT_WINDOW
        # the user's own tools on the user's files (base_config allows echo/printf)
        config.tools.exec.allow_patterns = [
            "echo .*", "printf .*", r"(cat|tail|head|wc|sed -n|grep) [^|;&<>`$]*",
        ]
        secrets.append(telegram_channel(config, seed=seed, allow_from=list(TG_USERS)))
        secrets.append(webui_channel(config, seed=seed))

    d.write_config(".nanobot", configure)
    await d.after(d.clock.now_ms() + 5 * MINUTE_MS)
    await d.start_gateway(".nanobot")
    scaler = Scaler(d, setting, target)
    scaler.corpus.place(setting.first_day)
    d.stamper.stamp()
    await scaler.run()
    await d.stop_gateway()
    d.notes.append(
        f"scale seed {seed}: {setting.tz}, {setting.first_day} + {scaler.day} day(s), "
        f"{scaler.actions} actions, {scaler.restarts} gateway restarts, turn kinds {sorted(scaler.kinds.items())}, "
        f"late cron runs {scaler.late_crons}"
    )
    return {"secrets": secrets, "scale": {"days": scaler.day, "actions": scaler.actions,
                                          "restarts": scaler.restarts, "kinds": scaler.kinds,
                                          "late_cron_runs": scaler.late_crons}}
