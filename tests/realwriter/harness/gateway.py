"""nanobot's gateway, wired the way ``cli/gateway_runtime.py::_run_gateway`` does.

:class:`Gateway` builds the same objects in the same order as nanobot 0.3.5's
foreground gateway -- ``MessageBus``, provider snapshot with the
``record_llm_call`` observer installed by ``_observe_provider`` (also on every
snapshot the runtime reloads), ``SessionManager``, ``CronService`` (workspace
store), ``LocalTriggerStore``, ``TurnDeliveryFactory`` with the WebUI route
policy, ``RecoveryCoordinator``, ``AgentLoop.from_config``,
``WebuiTurnCoordinator``, the message tool's channel-delivery callback, the
cron callback (bound jobs -> ``run_bound_cron_job``), ``ChannelManager`` --
and runs the same tasks: cron, recovery scan, agent loop, channels, the local
trigger queue.

Left out (they write nothing nanoload reads, or need a terminal/network):
the health HTTP server, browser opening, the WebUI dev server, the
config-file watcher, the process-lease files of ``GatewayRuntime`` and the
local-client monitor.  The WebSocket channel listens on a free loopback port
chosen at run time (config.json keeps the default port).

Telegram: the ``telegram`` channel package's runtime module is replaced by
:class:`TelegramChannel`, a minimal offline ``BaseChannel`` subclass; the
harness injects updates through ``BaseChannel._handle_message`` and reads
replies from ``sent``.  Its manifest dependencies are treated as installed so
the manager never runs pip.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import types
from pathlib import Path
from typing import Any, cast

from nanobot.bus.events import OutboundMessage
from nanobot.channels.base import BaseChannel


class TelegramChannel(BaseChannel):
    """Offline stand-in for nanobot's Telegram runtime (no network)."""

    name = "telegram"
    display_name = "Telegram"

    def __init__(self, config: Any, bus: Any) -> None:
        super().__init__(config, bus)
        self.sent: list[OutboundMessage] = []
        self._stopped = asyncio.Event()
        self._next_message_id = 1000

    async def start(self) -> None:
        self._running = True
        await self._stopped.wait()

    async def stop(self) -> None:
        self._running = False
        self._stopped.set()

    async def send(self, msg: OutboundMessage) -> None:
        self.sent.append(msg)

    async def receive(self, sender_id: str, chat_id: str, text: str, *, is_dm: bool = True) -> None:
        """A Telegram update arrives: hand it to nanobot like the real runtime."""
        self._next_message_id += 1
        await self._handle_message(
            sender_id=sender_id,
            chat_id=chat_id,
            content=text,
            metadata={"message_id": self._next_message_id, "is_group": not is_dm},
            is_dm=is_dm,
        )


def install_telegram_stub() -> None:
    module = types.ModuleType("nanobot.channels.telegram.runtime")
    module.TelegramChannel = TelegramChannel  # type: ignore[attr-defined]
    sys.modules["nanobot.channels.telegram.runtime"] = module

    import nanobot.optional_features as optional_features

    original = optional_features.ensure_enabled_channel_dependencies

    def ensure_enabled_channel_dependencies(enabled_names, plugins, **kwargs):  # type: ignore[no-untyped-def]
        # The telegram SDK is replaced by the offline stub above.
        return original(set(enabled_names) - {"telegram"}, plugins, **kwargs)

    optional_features.ensure_enabled_channel_dependencies = ensure_enabled_channel_dependencies


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Gateway:
    """One running nanobot gateway (in this process's event loop)."""

    def __init__(self, config: Any, config_path: Path) -> None:
        self.config = config
        self.config_path = config_path
        self.tasks: list[asyncio.Task[Any]] = []

    def build(self) -> None:
        """Construct everything exactly as ``_run_gateway`` does."""
        from nanobot.agent.hooks import create_file_edit_activity_hook
        from nanobot.agent.loop import AgentLoop
        from nanobot.agent.model_presets import load_model_preset_catalog
        from nanobot.agent.tools.mcp import MCPProvider
        from nanobot.agent.tools.message import MessageTool
        from nanobot.agent.tools.registry import ToolRegistry
        from nanobot.agent.turn_delivery import TurnDeliveryFactory
        from nanobot.bus.queue import MessageBus
        from nanobot.channels.manager import ChannelManager
        from nanobot.cli.gateway_runtime import (
            _advance_dream_cursor_if_behind,
            _MCPReadinessHook,
        )
        from nanobot.cli.runtime_config import _migrate_cron_store
        from nanobot.config.paths import is_default_workspace
        from nanobot.cron.bound_runner import run_bound_cron_job
        from nanobot.cron.service import CronJobSkippedError, CronService
        from nanobot.cron.session_turns import is_bound_cron_job
        from nanobot.llm_usage import record_llm_call
        from nanobot.providers.factory import (
            ProviderSnapshot,
            build_provider_snapshot,
            load_provider_snapshot,
        )
        from nanobot.providers.fallback_provider import FallbackProvider
        from nanobot.providers.image_generation import image_gen_provider_configs
        from nanobot.session.keys import session_key_for_channel
        from nanobot.session.manager import SessionManager
        from nanobot.session.recovery import RecoveryCoordinator
        from nanobot.session.webui_turns import (
            WebuiTurnCoordinator,
            WebuiTurnRoutePolicy,
            build_webui_fallback_model_observer,
        )
        from nanobot.triggers.local_store import LocalTriggerStore
        from nanobot.utils.helpers import sync_workspace_templates

        config = self.config
        sync_workspace_templates(config.workspace_path)
        bus = MessageBus()
        fallback_model_observer = build_webui_fallback_model_observer(bus)

        def _observe_provider(snapshot: ProviderSnapshot) -> ProviderSnapshot:
            snapshot.provider.set_llm_call_observer(record_llm_call)
            if isinstance(snapshot.provider, FallbackProvider):
                snapshot.provider.set_fallback_model_observer(fallback_model_observer)
            return snapshot

        def _load_gateway_provider_snapshot(*args: Any, **kwargs: Any) -> ProviderSnapshot:
            return _observe_provider(load_provider_snapshot(*args, **kwargs))

        provider_snapshot = _observe_provider(build_provider_snapshot(config))
        session_manager = SessionManager(config.workspace_path)
        if is_default_workspace(config.workspace_path):
            _migrate_cron_store(config)
        cron = CronService(config.workspace_path / "cron" / "jobs.json")
        trigger_store = LocalTriggerStore(config.workspace_path)
        turn_delivery_factory = TurnDeliveryFactory(
            bus, route_policy=WebuiTurnRoutePolicy(session_manager),
        )
        tools = ToolRegistry()
        mcp_provider = MCPProvider.from_config(config, tools)
        recovery = RecoveryCoordinator(
            sessions=session_manager, bus=bus,
            unified_session=config.agents.defaults.unified_session,
        )
        agent = AgentLoop.from_config(
            config, bus,
            provider=provider_snapshot.provider,
            model=provider_snapshot.model,
            context_window_tokens=provider_snapshot.context_window_tokens,
            cron_service=cron,
            session_manager=session_manager,
            image_generation_provider_configs=image_gen_provider_configs(config),
            provider_snapshot_loader=_load_gateway_provider_snapshot,
            preset_catalog_loader=load_model_preset_catalog,
            turn_delivery_factory=turn_delivery_factory,
            provider_signature=provider_snapshot.signature,
            local_trigger_store=trigger_store,
            hooks=[_MCPReadinessHook(mcp_provider)],
            hook_factories=[create_file_edit_activity_hook],
            tool_registry=tools,
            recovery_admission=recovery,
        )

        def _schedule_webui_background(awaitable: Any) -> None:
            agent.schedule_background(awaitable)

        webui_turn_coordinator = WebuiTurnCoordinator(
            bus=bus, sessions=session_manager,
            schedule_background=_schedule_webui_background, recovery=recovery,
        )

        def _channel_session_key(channel: str, chat_id: str) -> str:
            return session_key_for_channel(
                channel, chat_id, unified_session=config.agents.defaults.unified_session,
            )

        async def _deliver_to_channel(
            msg: OutboundMessage, *, record: bool = False, session_key: str | None = None,
        ) -> None:
            metadata = dict(msg.metadata or {})
            record = record or bool(metadata.pop("_record_channel_delivery", False))
            if metadata != (msg.metadata or {}):
                msg = OutboundMessage(
                    channel=msg.channel, chat_id=msg.chat_id, content=msg.content,
                    reply_to=msg.reply_to, media=msg.media, metadata=metadata, buttons=msg.buttons,
                )
            if record and msg.channel != "cli" and msg.content.strip():
                key = session_key or _channel_session_key(msg.channel, msg.chat_id)
                session = session_manager.get_or_create(key)
                extra: dict[str, Any] = {"_channel_delivery": True}
                if msg.media:
                    extra["media"] = list(msg.media)
                session.add_message("assistant", msg.content, **extra)
                session_manager.save(session)
            await bus.publish_outbound(msg)

        message_tool = agent.tools.get("message")
        if isinstance(message_tool, MessageTool):
            message_tool.set_send_callback(_deliver_to_channel)

        async def on_cron_job(job: Any) -> Any:
            # Dream and heartbeat are disabled in the harness config.
            if is_bound_cron_job(job):
                return await run_bound_cron_job(job, agent=agent, cron=cron)
            raise CronJobSkippedError("unbound agent cron job must be recreated from a chat session")

        cron.on_job = on_cron_job

        channels = ChannelManager(
            config, bus,
            session_manager=session_manager,
            cron_service=cron,
            local_trigger_store=trigger_store,
            webui_runtime_model_name=lambda: agent.model.strip() or None,
            webui_refresh_runtime_config=lambda: agent.refresh_runtime_config(),
            webui_cron_pending_job_ids=agent.pending_cron_job_ids_for_session,
            webui_local_trigger_pending_ids=agent.pending_local_trigger_ids_for_session,
            webui_static_dist=True,
            webui_runtime_surface="browser",
            webui_runtime_capabilities=None,
            webui_mcp_runtime_status=mcp_provider.runtime_status,
            webui_mcp_reload=mcp_provider.reload,
            webui_skill_state_action=None,
            webui_recovery_action=recovery.handle_action,
            config_path=Path(self.config_path),
        )

        dream_cfg = config.agents.defaults.dream
        if dream_cfg.enabled or config.gateway.heartbeat.enabled:
            raise RuntimeError("the harness config keeps Dream and heartbeat disabled")
        _advance_dream_cursor_if_behind(agent.context.memory)
        cron.remove_system_job("dream")
        cron.remove_system_job("heartbeat")

        self.bus = bus
        self.agent = agent
        self.sessions = session_manager
        self.cron = cron
        self.trigger_store = trigger_store
        self.channels = channels
        self.recovery = recovery
        self.mcp_provider = mcp_provider
        self.webui_turn_coordinator = webui_turn_coordinator
        self._disconnect = webui_turn_coordinator.subscribe()

    @property
    def telegram(self) -> TelegramChannel:
        return cast(TelegramChannel, self.channels.channels["telegram"])

    @property
    def websocket_port(self) -> int:
        return int(self.channels.channels["websocket"].config.port)

    async def start(self) -> None:
        """The startup half of ``_run_gateway``'s ``run()``."""
        from nanobot.triggers.local_runner import run_local_trigger_queue

        await self.cron.start()
        self.agent.runtime_resolver.invalidate()
        await self.recovery.scan()

        async def _run_agent() -> None:
            try:
                await self.mcp_provider.connect()
                await self.agent.run()
            finally:
                await self.mcp_provider.aclose()

        self.tasks = [
            asyncio.create_task(_run_agent(), name="nanobot-agent-loop"),
            asyncio.create_task(self.channels.start_all(), name="nanobot-channels"),
            asyncio.create_task(
                run_local_trigger_queue(
                    store=self.trigger_store,
                    submit_turn=self.agent.submit_local_trigger_turn,
                    is_channel_enabled=lambda name: self.channels.get_channel(name) is not None,
                ),
                name="nanobot-local-triggers",
            ),
        ]
        for _ in range(400):
            if all(channel.is_running for channel in self.channels.channels.values()):
                return
            await asyncio.sleep(0.01)
        raise RuntimeError("gateway channels did not start")

    def busy(self) -> bool:
        agent = self.agent
        if agent._pending_queues or agent._background_tasks:
            return True
        if any(not t.done() for ts in agent._active_tasks.values() for t in ts):
            return True
        if agent.subagents.get_running_count():
            return True
        if self.bus.inbound_size or self.bus.outbound_size or self.bus._pending:
            return True
        if self.channels._outbound_tasks:
            return True
        if self.cron._active_executions:
            return True
        for queue_dir in (self.trigger_store.inbox_dir, self.trigger_store.processing_dir):
            if queue_dir.is_dir() and any(queue_dir.iterdir()):
                return True
        return False

    def session_busy(self, key: str) -> bool:
        """nanobot still works on *key* (its turn task, pending messages, outbound)."""
        agent = self.agent
        if key in agent._pending_queues:
            return True
        if any(not t.done() for t in agent._active_tasks.get(key, ())):
            return True
        return bool(self.bus.inbound_size or self.bus.outbound_size or self.bus._pending
                    or self.channels._outbound_tasks)

    async def session_quiesce(self, key: str, *, settle: int = 8) -> None:
        """Wait until nanobot has no work in flight for *key* (other sessions may be busy)."""
        quiet = 0
        for _ in range(3000):
            await asyncio.sleep(0.01)
            quiet = 0 if self.session_busy(key) else quiet + 1
            if quiet >= settle:
                return
        raise RuntimeError(f"session {key} did not become idle")

    async def trigger_queue_empty(self) -> None:
        """Wait until the local trigger runner has taken and finished every delivery."""
        for _ in range(3000):
            await asyncio.sleep(0.01)
            if not any(d.is_dir() and any(d.iterdir())
                       for d in (self.trigger_store.inbox_dir, self.trigger_store.processing_dir)):
                return
        raise RuntimeError("local trigger deliveries were not processed")

    async def drain_outbound(self) -> None:
        """Let the channels deliver everything already published (no clock change)."""
        quiet = 0
        for _ in range(2000):
            busy = bool(
                self.bus.outbound_size or self.bus._pending or self.channels._outbound_tasks
            )
            quiet = 0 if busy else quiet + 1
            if quiet >= 3:
                return
            await asyncio.sleep(0.002)
        raise RuntimeError("outbound queue did not drain")

    async def subagents_delivered(self) -> None:
        """Wait until finished subagents' announcements left the inbound queue."""
        quiet = 0
        for _ in range(2000):
            busy = bool(self.agent.subagents.get_running_count() or self.bus.inbound_size)
            quiet = 0 if busy else quiet + 1
            if quiet >= 3:
                return
            await asyncio.sleep(0.002)
        raise RuntimeError("subagent results were not delivered")

    async def quiesce(self, *, settle: int = 8) -> None:
        """Wait until nanobot has no work in flight (turns, background, outbound)."""
        quiet = 0
        for _ in range(3000):
            await asyncio.sleep(0.01)
            quiet = 0 if self.busy() else quiet + 1
            if quiet >= settle:
                return
        raise RuntimeError("gateway did not become idle")

    async def shutdown(self) -> None:
        """The ``finally`` half of ``_run_gateway``'s ``run()``."""
        from nanobot.cli.gateway_runtime import _close_gateway_runtime

        self.cron.stop()
        self.agent.preserve_inflight_turns_on_shutdown()
        self.agent.stop()
        await _close_gateway_runtime(self.agent, self.mcp_provider, self.channels, self.tasks, None)
        await self.bus.drain()
        self.agent.sessions.flush_all()
        self._disconnect()
