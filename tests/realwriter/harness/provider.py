"""The only replaced part of nanobot: a scripted LLM backend.

:class:`ScriptedProvider` subclasses nanobot's own ``LLMProvider``
(providers/base.py) and is returned by nanobot's provider factory (the
harness swaps ``nanobot.providers.factory._make_provider_core`` for a
function that runs nanobot's own provider-setup validation and then builds
this class).  Everything around the call -- retries, streaming fallbacks,
the llm_usage observer, usage estimation -- is nanobot's.

Each call takes its reply from the :class:`Script` of the worker process:

* the reply queue of the turn the harness is currently driving;
* a subagent's own queue when the request is a subagent run (recognised by
  its task text);
* a generated title for the WebUI title request, a generated summary for the
  memory-archive request (source ``dream``).

Each reply advances the harness clock by its ``think`` seconds inside the
call, so agentic turns take simulated minutes.  Every call is logged with the
session the harness was serving; facts.json pairs this log with the rows of
``llm_calls`` (same order, same ``started_at_ms``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nanobot.llm_usage.context import current_llm_usage_source
from nanobot.providers.base import LLMProvider, LLMResponse, LLMUsage, ToolCallRequest

from . import env

TITLE_SYSTEM_PREFIX = "You write short, neutral chat titles."


@dataclass
class Call:
    """One tool call the scripted model asks for."""

    id: str
    name: str
    args: dict[str, Any]


@dataclass
class Reply:
    """One scripted model response (one physical provider call)."""

    text: str = ""
    calls: list[Call] = field(default_factory=list)
    think: float = 45.0
    #: (input, output, cache_read, cache_write); ``None``: no usage reported,
    #: nanobot then estimates it.
    usage: tuple[int, int, int | None, int | None] | None = (1800, 120, None, None)
    #: (status code, error kind, message): a provider error nanobot retries.
    error: tuple[int, str, str] | None = None
    reasoning: str | None = None
    #: Before answering, wait until every subagent of this turn has finished.
    wait_subagents: bool = False
    #: finish_reason override, e.g. "length" for a truncated answer nanobot continues.
    finish: str | None = None


@dataclass
class SessionRef:
    """A session as the harness knows it while driving a turn."""

    instance: str
    workspace: str
    key: str

    def as_json(self) -> dict[str, str]:
        return {"instance": self.instance, "workspace": self.workspace, "key": self.key}


class ScriptError(RuntimeError):
    pass


class Script:
    """Reply queues and the call log of one worker process."""

    def __init__(self, instance: str) -> None:
        self.instance = instance
        self.session: SessionRef | None = None
        self.label = ""
        self._replies: list[Reply] = []
        self._subagents: dict[str, list[Reply]] = {}
        self._subagents_done = asyncio.Event()
        self.calls: list[dict[str, Any]] = []
        self.last_session: SessionRef | None = None
        #: Awaited at the start of every call (the gateway drains its outbound queue).
        self.settle: Callable[[], Awaitable[None]] | None = None
        #: Awaited by a ``wait_subagents`` reply after the subagents' last
        #: replies: until their results have reached the parent's turn.
        self.subagents_delivered: Callable[[], Awaitable[None]] | None = None

    # -- driving ------------------------------------------------------------

    def begin_turn(
        self,
        session: SessionRef | None,
        replies: list[Reply],
        *,
        label: str,
        subagents: dict[str, list[Reply]] | None = None,
    ) -> None:
        if self._replies or any(self._subagents.values()):
            raise ScriptError(f"turn {label!r} starts while {self.label!r} has unused replies")
        self.session = session
        self.label = label
        self._replies = list(replies)
        self._subagents = {task: list(rs) for task, rs in (subagents or {}).items()}
        self._subagents_done = asyncio.Event()
        if not self._subagents:
            self._subagents_done.set()

    def end_turn(self) -> None:
        if self._replies or any(self._subagents.values()):
            raise ScriptError(
                f"turn {self.label!r} ended with unused replies: {len(self._replies)} main, "
                f"{ {k: len(v) for k, v in self._subagents.items()} }"
            )
        if self.session is not None:
            self.last_session = self.session
        self.session = None
        self.label = ""

    # -- answering ----------------------------------------------------------

    def _classify(self, messages: list[dict[str, Any]]) -> tuple[str, Reply | None]:
        source = current_llm_usage_source()
        system = messages[0].get("content") if messages and messages[0].get("role") == "system" else ""
        system_text = system if isinstance(system, str) else json.dumps(system)
        if source == "dream":
            return "archive", None
        if system_text.startswith(TITLE_SYSTEM_PREFIX):
            return "title", None
        first_user = next((m for m in messages if m.get("role") == "user"), None)
        if first_user is not None and isinstance(first_user.get("content"), str):
            task = first_user["content"]
            if task in self._subagents:
                queue = self._subagents[task]
                if not queue:
                    raise ScriptError(f"subagent {task[:40]!r} asked for more replies than scripted")
                return "subagent", queue.pop(0)
        if not self._replies:
            raise ScriptError(
                f"unscripted model call during {self.label or 'no turn'!r} "
                f"(source={source}, last message={str(messages[-1])[:200]})"
            )
        return "turn", self._replies.pop(0)

    async def respond(
        self,
        provider: ScriptedProvider,
        messages: list[dict[str, Any]],
        model: str | None,
        on_content_delta: Callable[[str], Awaitable[None]] | None = None,
    ) -> LLMResponse:
        clock = env.CLOCK
        assert clock is not None
        started_ms = clock.now_ms()
        # A real request takes network time during which the event loop
        # delivers what the turn emitted so far (WebUI transcript records are
        # stamped when the channel sends them).  Let that happen before the
        # simulated time of this call passes.
        if self.settle is not None:
            await self.settle()
        purpose, reply = self._classify(messages)
        session = self.session
        if purpose == "archive":
            reply = Reply(text=_archive_summary(messages), think=25, usage=(2600, 90, 1024, None))
            session = None
        elif purpose == "title":
            reply = Reply(text=_title_for(messages), think=2, usage=(160, 8, None, None))
            session = self.session or self.last_session
        assert reply is not None
        if reply.wait_subagents:
            # The parent's request is in flight while its subagents finish; a
            # real request takes long enough for their results to be routed
            # into the running turn before it returns.
            await self._subagents_done.wait()
            if self.subagents_delivered is not None:
                await self.subagents_delivered()
        # Time passes inside the call; stream the text in two deltas.
        if on_content_delta is not None and reply.text and reply.error is None:
            clock.advance(min(2.0, reply.think / 4))
            half = max(1, len(reply.text) // 2)
            await on_content_delta(reply.text[:half])
            clock.advance(reply.think - min(2.0, reply.think / 4))
            await on_content_delta(reply.text[half:])
        else:
            clock.advance(reply.think)
        response = _response_for(reply)
        if purpose == "subagent" and not any(self._subagents.values()):
            self._subagents_done.set()
        self.calls.append({
            "instance": self.instance,
            "purpose": purpose,
            "label": self.label,
            "session": session.as_json() if session else None,
            "started_at_ms": started_ms,
            "recorded": provider._llm_call_observer is not None,
            "provider": provider.provider_name,
            "error": reply.error is not None,
        })
        return response


def reply_to_json(reply: Reply) -> dict[str, Any]:
    return {
        "text": reply.text,
        "calls": [[c.id, c.name, c.args] for c in reply.calls],
        "think": reply.think,
        "usage": list(reply.usage) if reply.usage is not None else None,
        "error": list(reply.error) if reply.error is not None else None,
        "reasoning": reply.reasoning,
        "wait_subagents": reply.wait_subagents,
        "finish": reply.finish,
    }


def reply_from_json(data: dict[str, Any]) -> Reply:
    return Reply(
        text=data["text"],
        calls=[Call(i, n, a) for i, n, a in data["calls"]],
        think=data["think"],
        usage=tuple(data["usage"]) if data["usage"] is not None else None,  # type: ignore[arg-type]
        error=tuple(data["error"]) if data["error"] is not None else None,  # type: ignore[arg-type]
        reasoning=data["reasoning"],
        wait_subagents=data["wait_subagents"],
        finish=data.get("finish"),
    )


def _response_for(reply: Reply) -> LLMResponse:
    if reply.error is not None:
        status, kind, message = reply.error
        return LLMResponse(
            content=f"Error: {message}",
            finish_reason="error",
            error_status_code=status,
            error_kind=kind,
        )
    usage = None
    if reply.usage is not None:
        inp, out, cache_read, cache_write = reply.usage
        usage = LLMUsage.reported(
            input_tokens=inp,
            output_tokens=out,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
        )
    return LLMResponse(
        content=reply.text,
        tool_calls=[ToolCallRequest(id=c.id, name=c.name, arguments=dict(c.args)) for c in reply.calls],
        finish_reason=reply.finish or ("tool_calls" if reply.calls else "stop"),
        usage=usage,
        reasoning_content=reply.reasoning,
    )


def _title_for(messages: list[dict[str, Any]]) -> str:
    prompt = str(messages[-1].get("content") or "")
    user = prompt.split("User: ", 1)[-1].split("\n", 1)[0]
    words = [w.strip(".,!?:;\"'") for w in user.split()][:5]
    return " ".join(w for w in words if w).capitalize() or "New chat"


def _archive_summary(_messages: list[dict[str, Any]]) -> str:
    return (
        "User and assistant worked through the tasks in this conversation; "
        "the open points were resolved and nothing is pending."
    )


class ScriptedProvider(LLMProvider):
    """nanobot ``LLMProvider`` whose answers come from the harness script."""

    SCRIPT: Script | None = None

    def __init__(self, *, api_key: str | None, api_base: str | None, default_model: str, provider_name: str):
        super().__init__(api_key=api_key, api_base=api_base, provider_name=provider_name)
        self.default_model = default_model

    def get_default_model(self) -> str:
        return self.default_model

    def _script(self) -> Script:
        if ScriptedProvider.SCRIPT is None:
            raise ScriptError("no script installed")
        return ScriptedProvider.SCRIPT

    async def chat(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                   reasoning_effort=None, tool_choice=None) -> LLMResponse:  # type: ignore[override]
        return await self._script().respond(self, messages, model)

    async def chat_stream(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                          reasoning_effort=None, tool_choice=None, on_content_delta=None,
                          on_thinking_delta=None, on_tool_call_delta=None) -> LLMResponse:  # type: ignore[override]
        return await self._script().respond(self, messages, model, on_content_delta)


def install_nanobot_hooks() -> None:
    """Swap the LLM backend and clock the runner's telemetry."""
    import nanobot.agent.runner

    env.clock_perf_counter_in(nanobot.agent.runner)
    install_factory_hook()


def install_factory_hook() -> None:
    """Make nanobot's provider factory build :class:`ScriptedProvider`."""
    from nanobot.providers import factory

    def _make_provider_core(config, *, preset, model=None):  # mirrors factory._make_provider_core
        setup = factory._resolve_provider_setup(config, preset=preset, model=model)
        p = setup.provider_config
        provider = ScriptedProvider(
            api_key=p.api_key if p else None,
            api_base=config.get_api_base(setup.model, preset=preset),
            default_model=setup.model,
            provider_name=setup.provider_name,
        )
        provider.generation = preset.to_generation_settings()
        return provider

    factory._make_provider_core = _make_provider_core  # type: ignore[assignment]

