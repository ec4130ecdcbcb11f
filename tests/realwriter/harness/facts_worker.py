"""facts.json: what nanobot's own readers say a generated home holds.

``python -m harness.facts_worker SPEC.json RESULT.json FACTS.json``, run by
generate.py in a fresh process with ``HOME`` at the fixed generation path,
which by then holds a *private copy* of the home (the fixture has already
been snapshotted: constructing nanobot objects may create lock files).

Readers used (all nanobot 0.3.5):

* sessions: ``SessionManager(workspace, sessions_root=<instance>/sessions)``
  per namespace -> ``list_sessions()`` / ``read_session_snapshot()``;
* WebUI transcripts: ``webui.transcript.read_transcript_lines``;
* usage: ``llm_usage.store.LLMUsageStore`` (its read connection);
* memory: ``agent.memory.MemoryStore``;
* CLI history: ``cli.terminal.SafeFileHistory.load_history_strings``;
* cron / trigger run records: ``cron.service.CronService`` /
  ``triggers.local_store.LocalTriggerStore`` locate them; the records are
  JSON documents nanobot writes and never reads back, so they are loaded with
  ``json``.

Plus the harness log from the main worker (RESULT.json): which session each
driven turn and each model call belonged to, each turn's session message
range, WebUI turn ids, cron/trigger run ids, what ``/new`` erased.  UTC values
come from the harness clock: a naive local timestamp interpreted in the
run's zone.  nanoload is never run here.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from . import env


def utc_text(local_text: str, zone: ZoneInfo) -> str:
    local = datetime.fromisoformat(local_text)
    ms = env.local_to_utc_ms(local.replace(microsecond=0), zone)
    instant = datetime.fromtimestamp(ms / 1000, timezone.utc).replace(microsecond=local.microsecond)
    text = instant.strftime("%Y-%m-%dT%H:%M:%S")
    if instant.microsecond:
        text += f".{instant.microsecond:06d}".rstrip("0")
    return text + "Z"


def content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part.get("text") for part in content
            if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text")
            and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


class Facts:
    def __init__(self, spec: dict[str, Any], log: dict[str, Any]) -> None:
        self.spec = spec
        self.log = log
        self.home = Path(os.environ["HOME"])
        self.zone = ZoneInfo(spec["tz"])
        self.notes: list[str] = []

    # -- layout -------------------------------------------------------------

    def instances(self) -> list[str]:
        return sorted(
            p.name for p in self.home.iterdir()
            if p.is_dir() and p.name.startswith(".nanobot") and (p / "config.json").is_file()
        )

    def use_instance(self, instance: str) -> None:
        from nanobot.config.loader import set_config_path

        set_config_path(self.home / instance / "config.json")

    def namespaces(self, instance: str) -> list[tuple[str, str]]:
        """(namespace id, workspace text) for every session namespace."""
        root = self.home / instance / "sessions"
        out = []
        if root.is_dir():
            for ns in sorted(root.iterdir()):
                marker = ns / ".workspace"
                if ns.is_dir() and marker.is_file():
                    out.append((ns.name, marker.read_text(encoding="utf-8").rstrip("\n")))
        return out

    def namespace_of(self, workspace: str) -> str:
        return (Path(workspace) / ".nanobot" / "workspace-id").read_text(encoding="utf-8").strip()

    # -- sessions -----------------------------------------------------------

    def read_sessions(self) -> list[dict[str, Any]]:
        from nanobot.session.history_visibility import _has_hidden_history_marker
        from nanobot.session.manager import SessionManager

        self.session_messages: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        out = []
        for instance in self.instances():
            self.use_instance(instance)
            for ns, workspace in self.namespaces(instance):
                manager = SessionManager(Path(workspace), sessions_root=self.home / instance / "sessions")
                if manager.sessions_dir.name != ns:
                    raise RuntimeError(f"namespace {ns} resolved to {manager.sessions_dir}")
                keys = sorted(info["key"] for info in manager.list_sessions())
                for key in keys:
                    session = manager.read_session_snapshot(key)
                    assert session is not None
                    self.session_messages[(instance, ns, key)] = session.messages
                    messages = []
                    for index, m in enumerate(session.messages):
                        role = m.get("role")
                        message = {
                            "index": index,
                            "role": role,
                            "timestamp": m.get("timestamp"),
                            "utc": utc_text(m["timestamp"], self.zone),
                            "hidden": role == "user" and _has_hidden_history_marker(m),
                            "text": content_text(m.get("content")),
                            "tool_calls": [tc.get("id") for tc in (m.get("tool_calls") or [])] if role == "assistant" else [],
                            "tool_call_id": m.get("tool_call_id") if role == "tool" else None,
                        }
                        # the model's reasoning, as nanobot stored it
                        for field in ("reasoning_content", "thinking_blocks"):
                            if role == "assistant" and field in m:
                                message[field] = m[field]
                        messages.append(message)
                    out.append({
                        "instance": instance,
                        "namespace": ns,
                        "key": key,
                        "workspace": workspace,
                        "messages": messages,
                    })
        return out

    # -- harness turns ------------------------------------------------------

    def turn_messages(self, turn: dict[str, Any]) -> list[dict[str, Any]] | None:
        """The session messages a driven turn left, or None if /new erased them."""
        ns = self.namespace_of(turn["workspace"])
        messages = self.session_messages.get((turn["instance"], ns, turn["key"]), [])
        if turn.get("source") == "cli" and turn["kind"] == "cli":
            return self.cli_turn_messages(turn, messages)
        if turn.get("erased"):
            return None
        return messages[turn["before"]:turn["after"]]

    def cli_turn_messages(self, turn: dict[str, Any], messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """A CLI turn's messages where the session file holds them now, found
        by its user message (its text at the second the harness clock typed
        it), or None.  What the CLI process wrote is not always what stays:
        the gateway caches a session its idle scan archived (``cli:direct``
        too) and a later save of its stale copy writes the session back over
        the CLI's, restoring turns a /new erased and dropping later ones
        (explore seeds 14, 30, 41, 60)."""
        from nanobot.runtime_context import public_history_message

        stamp = datetime.fromtimestamp(turn["start_ms"] / 1000, self.zone).replace(tzinfo=None)
        stamp_text = stamp.isoformat(timespec="seconds")
        for i, m in enumerate(messages):
            if (m.get("role") == "user" and str(m.get("timestamp") or "")[:19] == stamp_text
                    and content_text(public_history_message(m).get("content")) == turn["text"]):
                return messages[i:i + turn["after"] - turn["before"]]
        return None

    @staticmethod
    def session_rows(messages: list[dict[str, Any]]) -> Counter[tuple[str, str | None]]:
        from nanobot.runtime_context import public_history_message

        rows: Counter[tuple[str, str | None]] = Counter()
        for m in messages:
            role = m.get("role")
            if role == "user":
                rows[("user", content_text(public_history_message(m).get("content")))] += 1
            elif role == "assistant":
                text = content_text(m.get("content"))
                if text:
                    rows[("assistant", text)] += 1
                for tc in m.get("tool_calls") or []:
                    rows[("tool_use", tc.get("id"))] += 1
            elif role == "tool":
                rows[("tool_result", m.get("tool_call_id"))] += 1
        return rows

    def _secondary(self, rows: list[tuple[str, str | None]], counterparts: Counter[tuple[str, str | None]],
                   base: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        left = Counter(counterparts)
        for kind, value in rows:
            if left[(kind, value)] > 0:
                left[(kind, value)] -= 1
                continue
            tool = kind in ("tool_use", "tool_result")
            out.append({**base, "kind": kind, "call_id": value if tool else None, "text": None if tool else value})
        return out

    # -- WebUI transcripts --------------------------------------------------

    @staticmethod
    def transcript_rows(record: dict[str, Any]) -> list[tuple[str, str | None]]:
        """FACTS.md's mapping of one WebUI transcript record to chat rows."""
        event = record.get("event")
        text = record.get("text")
        rows: list[tuple[str, str | None]] = []
        if event == "user":
            rows.append(("user", text))
        elif event == "message":
            if not record.get("kind") and isinstance(text, str) and text:
                rows.append(("assistant", text))
        elif event == "stream_end":
            if record.get("merge_next") is not True and isinstance(text, str) and text:
                rows.append(("assistant", text))
        for tool_event in record.get("tool_events") or []:
            phase = tool_event.get("phase")
            if phase == "start":
                rows.append(("tool_use", tool_event.get("call_id")))
            elif phase in ("end", "error"):
                rows.append(("tool_result", tool_event.get("call_id")))
        return rows

    def webui(self) -> tuple[list[dict[str, Any]], list[tuple[str, int]], dict[str, Any]]:
        from nanobot.webui.transcript import read_transcript_lines, webui_transcript_path

        secondary: list[dict[str, Any]] = []
        instants: list[tuple[str, int]] = []
        summary: dict[str, Any] = {}
        turns = [t for t in self.log["turns"] if t["kind"] in ("webui", "websocket")]
        by_turn_id = {t["turn_id"]: t for t in turns if t["turn_id"] is not None}

        def driven(record: dict[str, Any], key: str) -> dict[str, Any] | None:
            """The driven turn a record belongs to: by its turn id; a record
            without one (nanobot's reply to another WebSocket client's
            command) by the time of a turn of that client in its chat."""
            if record.get("turn_id") is not None:
                return by_turn_id.get(record["turn_id"])
            at = int(record["created_at_ms"])
            return next((t for t in turns if t["kind"] == "websocket" and t["key"] == key
                         and t["start_ms"] <= at <= t["end_ms"]), None)
        for instance in self.instances():
            self.use_instance(instance)
            keys = sorted({t["key"] for t in turns if t["instance"] == instance})
            expected = {webui_transcript_path(k).resolve() for k in keys}
            webui_dir = self.home / instance / "webui"
            on_disk = {p.resolve() for p in webui_dir.glob("*.jsonl")} if webui_dir.is_dir() else set()
            if on_disk - expected:
                raise RuntimeError(f"transcripts of unknown sessions: {sorted(on_disk - expected)}")
            for key in keys:
                records = read_transcript_lines(key)
                ns = self.namespace_of(next(t["workspace"] for t in turns if t["key"] == key))
                summary[key] = Counter(r.get("event") for r in records)
                grouped: dict[str, list[dict[str, Any]]] = {}
                for record in records:
                    instants.append((instance, int(record["created_at_ms"])))
                    rows = self.transcript_rows(record)
                    if not rows:
                        continue
                    turn = driven(record, key)
                    if turn is None:
                        raise RuntimeError(f"transcript row without a driven turn: {record}")
                    grouped.setdefault(turn["label"], []).append(record)
                by_label = {t["label"]: t for t in turns}
                for label, recs in grouped.items():
                    turn = by_label[label]
                    rows = [row for rec in recs for row in self.transcript_rows(rec)]
                    kept = self.turn_messages(turn)
                    counterparts = self.session_rows(kept) if kept is not None else Counter()
                    secondary += self._secondary(rows, counterparts, {
                        "instance": instance, "namespace": ns, "key": key,
                        "source": "nanobot.webui_transcript",
                    })
        return secondary, instants, {k: dict(v) for k, v in summary.items()}

    # -- cron / trigger run records -----------------------------------------

    def run_records(self) -> tuple[list[dict[str, Any]], list[tuple[str, int]]]:
        from nanobot.cron.service import CronService
        from nanobot.triggers.local_store import LocalTriggerStore

        secondary: list[dict[str, Any]] = []
        instants: list[tuple[str, int]] = []
        by_run = {t["run_id"]: t for t in self.log["turns"] if t.get("run_id")}
        for instance in self.instances():
            self.use_instance(instance)
            for ns, workspace in self.namespaces(instance):
                ws = Path(workspace)
                cron_runs = CronService(ws / "cron" / "jobs.json").store_path.parent / "runs"
                trigger_runs = LocalTriggerStore(ws).runs_dir
                for source, runs_dir in (("nanobot.cron_run", cron_runs), ("nanobot.trigger_run", trigger_runs)):
                    if not runs_dir.is_dir():
                        continue
                    for path in sorted(runs_dir.glob("*.json")):
                        record = json.loads(path.read_text(encoding="utf-8"))
                        for field in ("updated_at_ms", "created_at_ms"):
                            if isinstance(record.get(field), int):
                                instants.append((instance, record[field]))
                        if source == "nanobot.cron_run":
                            user = f"Scheduled cron job triggered: {record['job_name']}\n\n{record['prompt_vars']['message']}"
                        else:
                            name = record.get("trigger_name") or record["trigger_id"]
                            user = f"Local trigger received: {name}\n\n{record['content']}"
                        rows: list[tuple[str, str | None]] = [("user", user)]
                        if isinstance(record.get("response"), str):
                            rows.append(("assistant", record["response"]))
                        turn = by_run.get(record["run_id"])
                        if turn is None:
                            raise RuntimeError(f"run record {path} has no driven turn")
                        kept = self.turn_messages(turn)
                        counterparts = self.session_rows(kept) if kept is not None else Counter()
                        secondary += self._secondary(rows, counterparts, {
                            "instance": instance, "namespace": ns, "key": record["session_key"],
                            "source": source,
                        })
        return secondary, instants

    # -- CLI history --------------------------------------------------------

    def cli_history(self) -> tuple[list[dict[str, Any]], list[str]]:
        from nanobot.cli.terminal import SafeFileHistory
        from nanobot.config.paths import get_cli_history_path

        path = get_cli_history_path()
        entries = list(reversed(list(SafeFileHistory(str(path)).load_history_strings()))) if path.exists() else []
        typed = []
        for turn in sorted((t for t in self.log["turns"] if t.get("source") == "cli"), key=lambda t: t["start_ms"]):
            # prompt_toolkit's Buffer.append_to_history stores an entry only
            # when it differs from the last one in the history: the same
            # prompt typed twice in a row is one entry
            if typed and typed[-1]["text"] == turn["text"]:
                continue
            typed.append(turn)
        if [t["text"] for t in typed] != entries:
            raise RuntimeError(f"CLI history {entries} does not match the typed entries {[t['text'] for t in typed]}")
        instance = path.parent.parent.name
        secondary = []
        for turn, text in zip(typed, entries, strict=True):
            if turn["kind"] in ("cli_new", "cli_exit"):
                kept = None
            else:
                kept = self.turn_messages(turn)
            counterparts = self.session_rows(kept) if kept is not None else Counter()
            secondary += self._secondary([("user", text)], counterparts, {
                "instance": instance, "namespace": None, "key": None, "source": "nanobot.cli_history",
            })
        return secondary, entries

    # -- usage --------------------------------------------------------------

    def usage(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[tuple[str, int]]]:
        from nanobot.llm_usage.store import LLMUsageStore

        totals, calls, instants = [], [], []
        harness_calls = [c for c in self.log["calls"] if c["recorded"]]
        turns = {t["label"]: t for t in self.log["turns"]}
        for instance in self.instances():
            path = self.home / instance / "llm_usage.sqlite3"
            if not path.exists():
                # The instance never ran a gateway (classic CLI turns are not
                # recorded): no usage database, no calls.
                if any(c["instance"] == instance for c in harness_calls):
                    raise RuntimeError(f"{instance}: calls recorded but no llm_usage.sqlite3")
                totals.append({"instance": instance, "calls": 0, "input_tokens": 0, "output_tokens": 0,
                               "total_tokens": 0, "cache_read_tokens": 0, "cache_write_tokens": 0})
                continue
            store = LLMUsageStore(path)
            conn = store._read_connection()
            rows = [dict(r) for r in conn.execute("SELECT * FROM llm_calls ORDER BY id")]
            conn.close()
            mine = [c for c in harness_calls if c["instance"] == instance]
            if len(mine) != len(rows):
                raise RuntimeError(f"{instance}: {len(rows)} llm_calls rows, harness made {len(mine)} calls")
            sums = {k: 0 for k in ("input_tokens", "output_tokens", "total_tokens", "cache_read_tokens", "cache_write_tokens")}
            for row, call in zip(rows, mine, strict=True):
                if row["started_at_ms"] != call["started_at_ms"]:
                    raise RuntimeError(f"llm_calls row {row['id']} started {row['started_at_ms']}, harness {call}")
                for k in sums:
                    sums[k] += row[k] or 0
                instants.append((instance, row["started_at_ms"]))
                calls.append({
                    "instance": instance,
                    "id": row["id"],
                    "started_at_ms": row["started_at_ms"],
                    "session": self.call_session(call, turns),
                    "purpose": call["purpose"],
                    "label": call["label"],
                    "source": row["source"],
                    "finish_reason": row["finish_reason"],
                    "error_status_code": row["error_status_code"],
                })
            totals.append({"instance": instance, "calls": len(rows), **sums})
        return totals, calls, instants

    def call_session(self, call: dict[str, Any], turns: dict[str, dict[str, Any]]) -> dict[str, str] | None:
        if call["purpose"] == "archive" or call["session"] is None:
            return None
        turn = turns[call["label"]]
        gone = self.turn_messages(turn) is None if turn["kind"] == "cli" else turn.get("erased")
        if turn.get("deleted") or (gone and turn["kind"] not in ("webui", "cron", "trigger")):
            # The turn's user message survives in no store (a WebUI turn keeps
            # its transcript copy unless the chat was deleted, cron/trigger
            # turns their run records).
            return None
        return {"namespace": self.namespace_of(call["session"]["workspace"]), "key": call["session"]["key"]}

    # -- memory -------------------------------------------------------------

    def memory(self) -> list[dict[str, Any]]:
        from nanobot.agent.memory import MemoryStore

        out = []
        for instance in self.instances():
            self.use_instance(instance)
            for ns, workspace in self.namespaces(instance):
                store = MemoryStore(Path(workspace))
                entries = store.read_unprocessed_history(0)
                out.append({
                    "instance": instance,
                    "namespace": ns,
                    "workspace": workspace,
                    "history": [
                        {k: e.get(k) for k in ("cursor", "timestamp", "session_key", "content")}
                        for e in entries
                    ],
                })
        return out

    # -- offsets ------------------------------------------------------------

    def evidence_days(self) -> set[tuple[str, str]]:
        """The local days on which a true-UTC time can be paired with a local
        one (docs/design.md "Time", V005): a session user message on disk
        at the start of a driven turn that made a recorded model call or
        left a WebUI or run-record copy.  On any other day the offset is the
        nearest evidence day's, whatever the zone did in between."""
        called = {c["label"] for c in self.log["calls"] if c["recorded"] and c["purpose"] == "turn"}
        starts = set()
        for t in self.log["turns"]:
            if t["label"] in called or t["kind"] in ("webui", "cron", "trigger"):
                local = datetime.fromtimestamp(t["start_ms"] / 1000, self.zone).replace(tzinfo=None)
                starts.add((t["instance"], t["key"], local.isoformat(timespec="seconds")))
        days = set()
        for (instance, _ns, key), messages in self.session_messages.items():
            for m in messages:
                stamp = str(m.get("timestamp") or "")[:19]
                if m.get("role") == "user" and (instance, key, stamp) in starts:
                    days.add((instance, stamp[:10]))
        return days

    def offsets(self, instants: list[tuple[str, int]]) -> list[dict[str, Any]]:
        days = sorted({(inst, datetime.fromtimestamp(ms / 1000, self.zone).date()) for inst, ms in instants})
        evidence = self.evidence_days()
        out = []
        for instance, day in days:
            start = datetime(day.year, day.month, day.day, tzinfo=self.zone)
            next_midnight = start + timedelta(days=1)  # wall-clock arithmetic
            day_end_utc = next_midnight.astimezone(timezone.utc) - timedelta(seconds=1)
            first = start.utcoffset()
            last = day_end_utc.astimezone(self.zone).utcoffset()
            assert first is not None and last is not None
            entry: dict[str, Any] = {"instance": instance, "day": day.isoformat(),
                                     "offset_minutes": int(last.total_seconds() // 60),
                                     "evidence": (instance, day.isoformat()) in evidence}
            if first != last:
                # first local time of the new offset: scan the day's UTC minutes
                t = start.astimezone(timezone.utc)
                while t.astimezone(self.zone).utcoffset() == first:
                    t += timedelta(minutes=1)
                entry["from_local"] = t.astimezone(self.zone).replace(tzinfo=None).isoformat()
            out.append(entry)
        return out

    # -- all ----------------------------------------------------------------

    def build(self) -> dict[str, Any]:
        import nanobot

        sessions = self.read_sessions()
        web_secondary, web_instants, web_summary = self.webui()
        run_secondary, run_instants = self.run_records()
        cli_secondary, cli_entries = self.cli_history()
        llm_usage, llm_calls, call_instants = self.usage()
        instants = [*web_instants, *run_instants, *call_instants]
        evidence = {inst for inst, _ in instants}
        facts = {
            "format": 1,
            "generator": {
                "scenario": self.spec["scenario"],
                "seed": self.spec["seed"],
                "nanobot": nanobot.__version__,
                "tz": self.spec["tz"],
            },
            "archive": self.spec.get("archive"),
            "exit_code": 0,
            "instances": [{"instance": i, "offset_evidence": i in evidence} for i in self.instances()],
            "sessions": sessions,
            "secondary_only": web_secondary + run_secondary + cli_secondary,
            "llm_usage": llm_usage,
            "llm_calls": llm_calls,
            "offsets": self.offsets(instants),
            "secrets": self.log["secrets"],
            # -- additions beyond FACTS.md format 1 --
            "memory": self.memory(),
            "cli_history": cli_entries,
            "webui_transcript_events": web_summary,
            "turns": [
                {k: t.get(k) for k in ("label", "kind", "instance", "key", "erased", "run_id", "turn_id")}
                | {"start_utc": datetime.fromtimestamp(t["start_ms"] / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "end_utc": datetime.fromtimestamp(t["end_ms"] / 1000, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                   "namespace": self.namespace_of(t["workspace"])}
                | ({"erased": self.turn_messages(t) is None} if t["kind"] == "cli" else {})
                for t in self.log["turns"]
            ],
        }
        return facts


def main(spec_path: str, log_path: str, facts_path: str) -> None:
    spec = json.loads(Path(spec_path).read_text(encoding="utf-8"))
    log = json.loads(Path(log_path).read_text(encoding="utf-8"))
    os.environ["TZ"] = spec["tz"]
    import time

    time.tzset()
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    facts = Facts(spec, log).build()
    env.write_json(Path(facts_path), facts)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
