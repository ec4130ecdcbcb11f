"""The harness timeline: the user's actions against nanobot, in simulated time.

Runs inside the main worker process (``python -m harness.main_worker``).  A
scenario is an async function receiving a :class:`Driver`; every method is
one thing a user (or time) does:

* ``write_config`` -- ``nanobot.config.loader.save_config`` of a ``Config``;
* ``start_gateway`` / ``stop_gateway`` -- :class:`harness.gateway.Gateway`;
* ``webui_*`` -- a browser tab on the WebSocket channel;
* ``telegram`` -- an update into the offline Telegram channel;
* ``cron_due`` -- time reaches a job's next run and the cron timer fires;
* ``trigger`` -- ``LocalTriggerStore.enqueue`` (what ``nanobot trigger`` does);
* ``cli`` -- a ``nanobot agent --classic`` subprocess (harness.cli_worker).

Each driven turn is logged (session, simulated start/end, the session's
message count before/after, WebUI turn id, cron/trigger run id, whether a
later ``/new`` erased it or the chat was deleted); facts.py derives
``secondary_only`` and the ``llm_calls`` sessions from this log.  Every
action first checks that it starts more than 30 s after the previous
activity ended, so turns never overlap and every llm call's session is
unambiguous -- except where a scenario asks for concurrency explicitly: a
WebUI turn started with :meth:`Driver.webui_start` runs until one of its
model calls stops at a ``hold`` gate; while it is held, ``during=True``
actions (a Telegram turn, a cron job, a trigger, a turn in another WebUI
chat) run beside it in other sessions, each waiting only for its own
session; :meth:`Driver.release` lets the held call finish and
:meth:`Driver.webui_join` waits for the held turn's end.  nanobot runs
turns of one session one after another and turns of different sessions
concurrently, so the calls of each turn stay attributable (by session).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from . import env
from . import gateway as gw
from . import provider as prov
from .provider import Reply, SessionRef
from .webui import WebUITab

MIN_GAP_MS = 30_000


class Driver:
    def __init__(self, spec: dict[str, Any], clock: env.Clock) -> None:
        self.spec = spec
        self.seed: int = spec["seed"]
        self.tz: str = spec["tz"]
        self.clock = clock
        self.home = Path(os.environ["HOME"])
        self.stamper = env.MtimeStamper(self.home)
        self.turns: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []
        self.instances: dict[str, dict[str, Any]] = {}
        self.gateway: gw.Gateway | None = None
        self.gateway_instance = ""
        self.workspace = ""
        self._tabs: list[WebUITab] = []
        self.script: prov.Script | None = None
        self.last_activity_ms = clock.now_ms()
        self.cli_runs = 0
        self.notes: list[str] = []
        self.scans: list[dict[str, Any]] = []
        self._scan_anchor_ms = 0
        #: turn_end waits of turns begun with webui_start, by label
        self._pending_ends: dict[str, asyncio.Task[dict[str, Any]]] = {}

    # -- time ---------------------------------------------------------------

    async def after(self, utc_ms: int) -> None:
        """Let time pass until *utc_ms*, or a little later: at least 31 s
        after the last activity, which idle scans on the way may have moved."""
        while True:
            if self.gateway is not None:
                await self._run_idle_scans(utc_ms)
            target = max(utc_ms, self.last_activity_ms + MIN_GAP_MS + 1000, self.clock.now_ms())
            if target == utc_ms or self.gateway is None:
                self.clock.move_to_ms(target)
                return
            utc_ms = target  # scans may be due up to the later moment too

    async def at(self, local: str) -> None:
        """Let time pass until a local wall time (never within 30 s of the last activity).

        While a gateway runs, time passing includes its idle-session scans
        (see :meth:`_run_idle_scans`).
        """
        target = env.local_to_utc_ms(datetime.fromisoformat(local), self.clock.zone)
        if self.gateway is not None:
            await self._run_idle_scans(target)
        if target < self.last_activity_ms + MIN_GAP_MS:
            raise RuntimeError(
                f"{local} is less than 30 s after the previous activity "
                f"({datetime.fromtimestamp(self.last_activity_ms / 1000, self.clock.zone)})"
            )
        self.clock.move_to_ms(target)

    # -- idle compaction ----------------------------------------------------

    def _local_naive(self, utc_ms: int) -> datetime:
        return datetime.fromtimestamp(utc_ms / 1000, self.clock.zone).replace(tzinfo=None)

    def _next_scan(self, limit_ms: int) -> int | None:
        """First scan time <= limit at which nanobot's idle scan would act."""
        assert self.gateway is not None
        agent = self.gateway.agent
        ac = agent.auto_compact
        if ac._ttl <= 0:
            return None
        earliest = max(self.clock.now_ms(), self.last_activity_ms + MIN_GAP_MS)
        steps = -(-(earliest - self._scan_anchor_ms) // 60_000)
        first = self._scan_anchor_ms + steps * 60_000
        best: int | None = None
        for info in agent.sessions.list_sessions():
            key = info.get("key", "")
            if not key or ac._is_internal_session(key) or key in ac._archiving:
                continue
            t = first
            while t <= limit_ms and (best is None or t < best):
                if ac._is_expired(info.get("updated_at"), self._local_naive(t)):
                    # nanobot asks this only once the session is expired
                    if ac._has_unarchived_messages(key):
                        best = t
                    break
                t += 60_000
        return best

    async def _run_idle_scans(self, limit_ms: int) -> None:
        """Emulate the gateway's once-a-minute idle-session scan up to *limit_ms*.

        nanobot's agent loop calls ``_check_expired_sessions_if_due`` when its
        inbound queue has been quiet for a second, at most once per
        ``idleCompactCheckIntervalSeconds`` (60) of monotonic time.  The
        harness disables that real-time trigger and runs the same method on a
        60 s grid of simulated time (anchored one second after gateway start),
        between driven actions and never within 30 s after one.
        """
        assert self.gateway is not None
        while True:
            due = self._next_scan(limit_ms)
            if due is None:
                return
            self.clock.move_to_ms(due)
            agent = self.gateway.agent
            self.script.begin_turn(None, [], label=f"idle-scan@{self._local_naive(due).isoformat()}")
            agent._next_idle_compact_check_at = 0.0
            agent._check_expired_sessions_if_due()
            agent._next_idle_compact_check_at = float("inf")
            await self.gateway.quiesce()
            self.script.end_turn()
            self.scans.append({"at_ms": due, "end_ms": self.clock.now_ms()})
            self._activity_done()

    def _activity_done(self) -> None:
        self.last_activity_ms = self.clock.now_ms()
        self.stamper.stamp()

    # -- instances ----------------------------------------------------------

    def write_config(self, instance: str, configure: Callable[[Any], None]) -> Path:
        """Create ``~/<instance>/config.json`` with nanobot's own ``save_config``."""
        from nanobot.config.loader import save_config
        from nanobot.config.schema import Config

        config = Config()
        configure(config)
        path = self.home / instance / "config.json"
        save_config(config, path)
        self.instances[instance] = {"config": str(path), "workspace": str(config.workspace_path)}
        self._activity_done()
        return path

    def _load_config(self, instance: str) -> Any:
        from nanobot.cli.runtime_config import _load_runtime_config

        return _load_runtime_config(self.instances[instance]["config"], None)

    # -- gateway ------------------------------------------------------------

    async def start_gateway(self, instance: str = ".nanobot") -> gw.Gateway:
        if self.gateway is not None:
            raise RuntimeError("one gateway at a time")
        config = self._load_config(instance)
        # config.json keeps its port; the run listens on a free loopback port.
        config.channels.websocket["port"] = gw.free_port()
        self.script = prov.Script(instance)
        prov.ScriptedProvider.SCRIPT = self.script
        gateway = gw.Gateway(config, Path(self.instances[instance]["config"]))
        gateway.build()
        self.script.settle = gateway.drain_outbound
        self.script.subagents_delivered = gateway.subagents_delivered
        # Idle-session scans run on the harness clock (see _run_idle_scans).
        gateway.agent._next_idle_compact_check_at = float("inf")
        self._scan_anchor_ms = self.clock.now_ms() + 1000
        await gateway.start()
        self.gateway = gateway
        self.gateway_instance = instance
        self.workspace = str(config.workspace_path)
        await gateway.quiesce()
        self._activity_done()
        return gateway

    async def stop_gateway(self) -> None:
        assert self.gateway is not None and self.script is not None
        for tab in list(self._tabs):
            await tab.close()
        self._tabs = []
        await self.gateway.shutdown()
        # The gateway process ends here: its long-lived llm_usage connection
        # is closed as at interpreter exit (SQLite checkpoints the WAL).
        import nanobot.llm_usage as llm_usage

        for store in llm_usage._STORES.values():
            store.close()
        self.calls.extend(self.script.calls)
        self.gateway = None
        self.script = None
        prov.ScriptedProvider.SCRIPT = None
        self._activity_done()

    def _ref(self, key: str) -> SessionRef:
        return SessionRef(self.gateway_instance, self.workspace, key)

    def _session_len(self, key: str) -> int:
        """Messages nanobot holds for *key* (without creating or caching it)."""
        assert self.gateway is not None
        session = self.gateway.sessions.get_cached(key) or self.gateway.sessions.read_session_snapshot(key)
        return len(session.messages) if session is not None else 0

    def _begin(self, kind: str, key: str, label: str, replies: list[Reply],
               subagents: dict[str, list[Reply]] | None = None, *, concurrent: bool = False,
               **extra: Any) -> dict[str, Any]:
        assert self.script is not None
        self.script.begin_turn(self._ref(key), replies, label=label, subagents=subagents, concurrent=concurrent)
        record = {
            "label": label,
            "kind": kind,
            "instance": self.gateway_instance,
            "workspace": self.workspace,
            "key": key,
            "start_ms": self.clock.now_ms(),
            "before": self._session_len(key),
            "erased": False,
            **extra,
        }
        return record

    async def _finish(self, record: dict[str, Any], *, during: bool = False) -> dict[str, Any]:
        """Close a driven turn once nanobot is idle (``during``: once its own
        session is idle; another turn is held in flight)."""
        assert self.gateway is not None and self.script is not None
        if during:
            await self.gateway.session_quiesce(record["key"])
        else:
            await self.gateway.quiesce()
        self.script.end_turn(record["label"])
        record["end_ms"] = self.clock.now_ms()
        record["after"] = self._session_len(record["key"])
        self.turns.append(record)
        self._activity_done()
        return record

    def _erase_session(self, key: str, *, deleted: bool = False) -> None:
        for record in self.turns:
            if record["key"] == key and record["instance"] == self.gateway_instance and record["workspace"] == self.workspace:
                record["erased"] = True
                if deleted:
                    record["deleted"] = True

    # -- concurrency --------------------------------------------------------

    async def held(self, gate: str) -> None:
        """Wait until a model call with ``hold=gate`` is in flight, stopped at its gate."""
        assert self.script is not None
        await self.script.held(gate)
        assert self.gateway is not None
        await self.gateway.drain_outbound()

    def release(self, gate: str) -> None:
        """Let the held call go on (its think time passes from now)."""
        assert self.script is not None
        self.script.release(gate)

    def meanwhile(self, seconds: float) -> None:
        """Time passing while a held turn is in flight (no idle scans: nanobot is busy)."""
        self.clock.advance(seconds)

    # -- WebUI --------------------------------------------------------------

    async def webui_tab(self) -> WebUITab:
        assert self.gateway is not None
        ws_config = self.gateway.channels.channels["websocket"].config
        tab = WebUITab(self.gateway.websocket_port, secret=ws_config.token_issue_secret)
        await tab.open()
        self._tabs.append(tab)
        await self._sidebar(tab)
        return tab

    async def _sidebar(self, tab: WebUITab) -> None:
        # Files were just stamped, so the index nanobot builds records the
        # simulated mtimes of the session and transcript files it lists.
        assert self.gateway is not None
        self.stamper.stamp()
        await tab.refresh_sidebar()
        await self.gateway.quiesce()
        self.stamper.stamp()

    async def webui_close(self, tab: WebUITab) -> None:
        await tab.close()
        self._tabs.remove(tab)
        assert self.gateway is not None
        await self.gateway.quiesce()

    async def webui_turn(self, tab: WebUITab, chat_id: str, text: str, replies: list[Reply], *,
                         label: str, subagents: dict[str, list[Reply]] | None = None,
                         command: bool = False, erases: bool = False,
                         during: bool = False, webui: bool = True) -> dict[str, Any]:
        """Send one prompt; wait for ``turn_end`` (a command's reply: its ``message``).

        ``erases``: the command clears the session (``/new``).  ``during``:
        the turn runs beside a held one (another chat, another tab).
        ``webui=False``: *tab* is another client of the WebSocket channel
        (its messages are not in the WebUI transcript)."""
        key = f"websocket:{chat_id}"
        record = self._begin("webui" if webui else "websocket", key, label, replies, subagents,
                             concurrent=during, chat_id=chat_id, text=text)
        record["turn_id"] = await tab.send_message(chat_id, text, webui=webui)
        if command:
            await tab.expect("message", chat_id=chat_id)
        else:
            await tab.wait_turn_end(chat_id)
        record = await self._finish(record, during=during)
        if erases:
            self._erase_session(key)
            record["erased"] = True
        if not during:
            await self._sidebar(tab)
        return record

    async def webui_start(self, tab: WebUITab, chat_id: str, text: str, replies: list[Reply], *,
                          label: str, subagents: dict[str, list[Reply]] | None = None) -> dict[str, Any]:
        """Send one prompt and return while the turn runs (see :meth:`webui_join`)."""
        key = f"websocket:{chat_id}"
        record = self._begin("webui", key, label, replies, subagents, chat_id=chat_id, text=text)
        record["turn_id"] = await tab.send_message(chat_id, text)
        self._pending_ends[label] = asyncio.create_task(tab.wait_turn_end(chat_id, timeout=120.0))
        return record

    async def webui_join(self, tab: WebUITab, record: dict[str, Any]) -> dict[str, Any]:
        """Wait for the ``turn_end`` of a turn begun with :meth:`webui_start`."""
        await self._pending_ends.pop(record["label"])
        record = await self._finish(record)
        await self._sidebar(tab)
        return record

    async def webui_delete(self, tab: WebUITab, chat_id: str) -> None:
        """Delete a chat from the sidebar: the bundle's ``session.delete`` request.

        nanobot deletes the session file and the WebUI transcript; the
        chat's turns survive in no store (their llm_calls keep no session)."""
        assert self.gateway is not None
        key = f"websocket:{chat_id}"
        result = await tab.request("session.delete", {"key": key})
        if not result.get("deleted"):
            raise RuntimeError(f"WebUI did not delete {key}: {result}")
        await self.gateway.quiesce()
        self._erase_session(key, deleted=True)
        self._activity_done()
        await self._sidebar(tab)

    # -- Telegram -----------------------------------------------------------

    async def telegram(self, text: str, replies: list[Reply] | None = None, *, label: str,
                       sender: str = "4242", chat: str | None = None, kind: str = "turn",
                       subagents: dict[str, list[Reply]] | None = None,
                       during: bool = False) -> dict[str, Any]:
        assert self.gateway is not None
        chat = chat or sender
        key = f"telegram:{chat}"
        record = self._begin(kind, key, label, replies or [], subagents, concurrent=during,
                             text=text, sender=sender)
        sent_before = len(self.gateway.telegram.sent)
        await self.gateway.telegram.receive(sender, chat, text)
        record = await self._finish(record, during=during)
        record["replies_sent"] = [m.content for m in self.gateway.telegram.sent[sent_before:]]
        if kind == "new":
            self._erase_session(key)
            record["erased"] = True
        return record

    # -- cron & triggers ----------------------------------------------------

    async def cron_due(self, job_name: str, replies: list[Reply], *, label: str,
                       during: bool = False, scan_margin_s: int = 0, allow_late: bool = False) -> dict[str, Any]:
        """Time reaches the job's next run and the cron timer fires
        (``during``: while a held turn is in flight, in another session).

        ``scan_margin_s``: idle scans run only up to that long before the due
        time (a scan due later waits until after the run), so a scan's
        archive call never ends too close to the run.  ``allow_late``: when
        the previous activity ended less than 30 s before the due time (or
        after it), the timer fires then, late, instead of failing (the
        ``scale`` scenario, which computes no facts)."""
        assert self.gateway is not None
        cron = self.gateway.cron
        job = next(j for j in cron.list_jobs() if j.name == job_name)
        due = job.state.next_run_at_ms
        if due is not None and not during:
            await self._run_idle_scans(due - scan_margin_s * 1000)
        late = False
        if due is None or (not during and due < self.last_activity_ms + MIN_GAP_MS) or due <= self.clock.now_ms():
            if due is None or not allow_late:
                raise RuntimeError(f"cron job {job_name} is due at {due}, too close to the last activity")
            late = True
        if due > self.clock.now_ms():
            self.clock.move_to_ms(due)
        # nanobot keeps the last 20 runs (CronService._MAX_RUN_HISTORY): a
        # new run shows as a longer history or a new last run id
        def last_run(j: Any) -> tuple[int, str | None]:
            history = j.state.run_history
            return len(history), history[-1].run_id if history else None

        runs_before = last_run(job)
        record = self._begin("cron", job.payload.session_key, label, replies, concurrent=during, job_id=job.id,
                             scheduled_local=self.clock.now_local().isoformat())
        cron._arm_timer()  # the timer's sleep ends: the job is due now
        for _ in range(3000):
            await asyncio.sleep(0.01)
            current = cron.get_job(job.id)
            if current is not None and last_run(current) != runs_before:
                break
        else:
            raise RuntimeError(f"cron job {job_name} did not run")
        record = await self._finish(record, during=during)
        current = cron.get_job(job.id)
        assert current is not None
        record["run_id"] = current.state.run_history[-1].run_id
        record["status"] = current.state.run_history[-1].status
        if late:
            record["late"] = True
        return record

    async def trigger(self, trigger_name: str, content: str, replies: list[Reply], *, label: str,
                      during: bool = False) -> dict[str, Any]:
        """``nanobot trigger <id> <message>``: enqueue a delivery for the gateway
        (``during``: while a held turn is in flight, in another session)."""
        from nanobot.triggers.local_store import LocalTriggerStore

        assert self.gateway is not None
        store = LocalTriggerStore(Path(self.workspace))  # the CLI command's own store object
        trigger = next(t for t in store.list_triggers() if t.name == trigger_name)
        record = self._begin("trigger", trigger.session_key, label, replies, concurrent=during,
                             trigger_id=trigger.id)
        delivery = store.enqueue(trigger.id, content)
        record["run_id"] = delivery.id
        if during:
            await self.gateway.trigger_queue_empty()
        return await self._finish(record, during=during)

    # -- classic CLI --------------------------------------------------------

    async def cli(self, *, instance: str, label: str, entries: list[dict[str, Any]],
                  workspace_arg: str | None = None, config_arg: bool = False) -> dict[str, Any]:
        """Run one ``nanobot agent --classic`` session in a subprocess."""
        from nanobot.config.loader import load_config

        self.cli_runs += 1
        worker = f"cli{self.cli_runs}"
        cfg_path = Path(self.instances[instance]["config"])
        config = load_config(cfg_path)
        workspace = str(Path(workspace_arg).expanduser()) if workspace_arg else str(config.workspace_path)
        first = entries[0]
        start = env.local_to_utc_ms(datetime.fromisoformat(first["at"]), self.clock.zone)
        if self.gateway is not None:
            await self._run_idle_scans(start)
        if start < self.last_activity_ms + MIN_GAP_MS:
            raise RuntimeError(f"CLI session {label} starts too early")
        jentries = []
        for entry in entries:
            item = {
                "label": entry["label"],
                "kind": entry.get("kind", "turn"),
                "text": entry["text"],
                "replies": [prov.reply_to_json(r) for r in entry.get("replies", [])],
            }
            if "at" in entry:
                item["at_ms"] = env.local_to_utc_ms(datetime.fromisoformat(entry["at"]), self.clock.zone)
            else:
                item["gap_s"] = entry.get("gap_s", 60)
            jentries.append(item)
        spec = {
            "seed": self.seed,
            "worker": worker,
            "tz": self.tz,
            "start_ms": start,
            "instance": instance,
            "workspace": workspace,
            "sessions_root": str(cfg_path.parent / "sessions"),
            "session_key": "cli:direct",
            "workspace_arg": workspace_arg,
            "config_arg": str(cfg_path) if config_arg else None,
            "entries": jentries,
        }
        spec_path = env.WORK_DIR / f"{worker}.spec.json"
        result_path = env.WORK_DIR / f"{worker}.result.json"
        env.write_json(spec_path, spec)
        self.clock.move_to_ms(start)
        self.stamper.stamp()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "harness.cli_worker", str(spec_path), str(result_path),
            cwd=str(Path(__file__).resolve().parent.parent),
            env=dict(os.environ),
            stderr=asyncio.subprocess.PIPE,
        )
        _, stderr = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"CLI worker {worker} failed:\n{stderr.decode(errors='replace')}")
        if stderr.strip():
            self.notes.append(f"{worker} stderr: {stderr.decode(errors='replace').strip()}")
        result = json.loads(result_path.read_text(encoding="utf-8"))
        self.clock.move_to_ms(result["end_ms"])
        self.calls.extend(result["calls"])
        erased_from = None
        for turn in result["turns"]:
            turn.update({
                "instance": instance,
                "workspace": workspace,
                "key": "cli:direct",
                "source": "cli",
                "erased": False,
            })
        for index, turn in enumerate(result["turns"]):
            if turn["kind"] == "new":
                erased_from = index
        if erased_from is not None:
            for turn in result["turns"][: erased_from + 1]:
                turn["erased"] = True
        # a /new in a later CLI session of the same workspace erases earlier ones too
        if erased_from is not None:
            for record in self.turns:
                if record.get("key") == "cli:direct" and record["instance"] == instance and record["workspace"] == workspace:
                    record["erased"] = True
        for turn in result["turns"]:
            turn["kind"] = {"turn": "cli", "new": "cli_new", "exit": "cli_exit", "command": "cli_command"}[turn["kind"]]
        self.turns.extend(result["turns"])
        self._activity_done()
        return result

    # -- output -------------------------------------------------------------

    def result(self) -> dict[str, Any]:
        return {
            "turns": self.turns,
            "calls": self.calls,
            "instances": self.instances,
            "end_ms": self.clock.now_ms(),
            "notes": self.notes,
            "scans": self.scans,
        }
