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
call, so agentic turns take simulated minutes.  A reply with ``hold`` stops
at the start of its call until the driver releases it: the call (and its
turn) stays in flight while the driver lets other things happen, e.g. a cron
job fire in another session (the ``explore`` scenario's concurrent turns).
When more than one turn is in flight, a call belongs to the turn whose
session nanobot bound in the call's request context
(``agent.tools.context.current_request_session_key``).  Every call is logged with the
session the harness was serving; facts.json pairs this log with the rows of
``llm_calls`` (same order, same ``started_at_ms``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from nanobot.agent.tools.context import current_request_session_key
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
class Thought:
    """One extended-thinking block of a reply (nanobot's Anthropic and
    Bedrock providers, harness.sdk_backends): its text, or the opaque bytes
    of a redacted block."""

    text: str | None = None
    redacted: bytes | None = None


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
    #: Name of a gate: the call waits at its start until the driver releases it.
    hold: str | None = None
    #: Extended-thinking blocks (only the providers of harness.sdk_backends
    #: send them; ScriptedProvider refuses them).
    thinking: list[Thought] = field(default_factory=list)


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


@dataclass
class _Turn:
    """One driven turn in flight: its session and what the model will answer."""

    session: SessionRef | None
    label: str
    replies: list[Reply]
    subagents: dict[str, list[Reply]]
    subagents_done: asyncio.Event

    def unused(self) -> bool:
        return bool(self.replies) or any(self.subagents.values())


@dataclass
class CallPlan:
    """One provider call as the script serves it."""

    purpose: str
    reply: Reply
    turn: _Turn | None
    session: SessionRef | None
    label: str
    started_ms: int


class Script:
    """Reply queues and the call log of one worker process."""

    def __init__(self, instance: str) -> None:
        self.instance = instance
        #: Turns in flight, oldest first (one, except while the driver runs a
        #: turn concurrently with a held one).
        self._turns: list[_Turn] = []
        self.calls: list[dict[str, Any]] = []
        self.last_session: SessionRef | None = None
        #: Awaited at the start of every call (the gateway drains its outbound queue).
        self.settle: Callable[[], Awaitable[None]] | None = None
        #: Awaited by a ``wait_subagents`` reply after the subagents' last
        #: replies: until their results have reached the parent's turn.
        self.subagents_delivered: Callable[[], Awaitable[None]] | None = None
        #: hold gates: name -> (reached, released)
        self._gates: dict[str, tuple[asyncio.Event, asyncio.Event]] = {}

    # -- driving ------------------------------------------------------------

    def begin_turn(
        self,
        session: SessionRef | None,
        replies: list[Reply],
        *,
        label: str,
        subagents: dict[str, list[Reply]] | None = None,
        concurrent: bool = False,
    ) -> None:
        """Start serving a turn; ``concurrent``: beside the turns in flight."""
        if concurrent:
            if session is None or any(t.session is not None and t.session.key == session.key for t in self._turns):
                raise ScriptError(f"turn {label!r} would run beside a turn of its own session")
        else:
            for turn in self._turns:
                if turn.unused():
                    raise ScriptError(f"turn {label!r} starts while {turn.label!r} has unused replies")
            self._turns = []
        done = asyncio.Event()
        subs = {task: list(rs) for task, rs in (subagents or {}).items()}
        if not subs:
            done.set()
        self._turns.append(_Turn(session, label, list(replies), subs, done))

    def end_turn(self, label: str | None = None) -> None:
        """Stop serving the turn *label* (default: the only one in flight)."""
        if label is None:
            if len(self._turns) > 1:
                raise ScriptError(f"end_turn without a label while {len(self._turns)} turns are in flight")
            turn = self._turns[0] if self._turns else None
        else:
            turn = next((t for t in self._turns if t.label == label), None)
        if turn is None:
            return
        if turn.unused():
            raise ScriptError(
                f"turn {turn.label!r} ended with unused replies: {len(turn.replies)} main, "
                f"{ {k: len(v) for k, v in turn.subagents.items()} }"
            )
        if turn.session is not None:
            self.last_session = turn.session
        self._turns.remove(turn)

    def _gate(self, name: str) -> tuple[asyncio.Event, asyncio.Event]:
        return self._gates.setdefault(name, (asyncio.Event(), asyncio.Event()))

    async def held(self, name: str, timeout: float = 60.0) -> None:
        """Wait until a call with ``hold=name`` has started and stopped at its gate."""
        await asyncio.wait_for(self._gate(name)[0].wait(), timeout)

    def release(self, name: str) -> None:
        self._gate(name)[1].set()

    # -- answering ----------------------------------------------------------

    def _turn_of_call(self) -> _Turn | None:
        """The turn in flight this call belongs to."""
        if len(self._turns) <= 1:
            return self._turns[0] if self._turns else None
        key = current_request_session_key()
        for turn in self._turns:
            if turn.session is not None and turn.session.key == key:
                return turn
        return None

    def _classify(self, messages: list[dict[str, Any]]) -> tuple[str, Reply | None, _Turn | None]:
        source = current_llm_usage_source()
        system = messages[0].get("content") if messages and messages[0].get("role") == "system" else ""
        system_text = system if isinstance(system, str) else json.dumps(system)
        turn = self._turn_of_call()
        if source == "dream":
            return "archive", None, turn or (self._turns[0] if self._turns else None)
        if system_text.startswith(TITLE_SYSTEM_PREFIX):
            return "title", None, turn
        first_user = next((m for m in messages if m.get("role") == "user"), None)
        if first_user is not None and isinstance(first_user.get("content"), str):
            task = first_user["content"]
            for candidate in self._turns:
                if task in candidate.subagents:
                    queue = candidate.subagents[task]
                    if not queue:
                        raise ScriptError(f"subagent {task[:40]!r} asked for more replies than scripted")
                    return "subagent", queue.pop(0), candidate
        if len(self._turns) > 1 and turn is None:
            raise ScriptError(
                f"a model call of session {current_request_session_key()!r} while "
                f"{[t.label for t in self._turns]} are in flight"
            )
        if turn is None or not turn.replies:
            label = turn.label if turn is not None else ""
            raise ScriptError(
                f"unscripted model call during {label or 'no turn'!r} "
                f"(source={source}, last message={str(messages[-1])[:200]})"
            )
        return "turn", turn.replies.pop(0), turn

    async def begin_call(self, messages: list[dict[str, Any]]) -> CallPlan:
        """The start of one provider call: which turn it serves and what the
        model answers (after the settle, a ``hold`` gate and a subagent wait)."""
        clock = env.CLOCK
        assert clock is not None
        started_ms = clock.now_ms()
        # A real request takes network time during which the event loop
        # delivers what the turn emitted so far (WebUI transcript records are
        # stamped when the channel sends them).  Let that happen before the
        # simulated time of this call passes.
        if self.settle is not None:
            await self.settle()
        purpose, reply, turn = self._classify(messages)
        session = turn.session if turn is not None else None
        label = turn.label if turn is not None else ""
        if purpose == "archive":
            reply = Reply(text=_archive_summary(messages), think=25, usage=(2600, 90, 1024, None))
            session = None
        elif purpose == "title":
            reply = Reply(text=_title_for(messages), think=2, usage=(160, 8, None, None))
            session = session or self.last_session
        assert reply is not None
        if reply.hold is not None:
            # The request is in flight while the driver lets other things
            # happen; its simulated time passes once released.
            reached, released = self._gate(reply.hold)
            reached.set()
            await released.wait()
        if reply.wait_subagents:
            # The parent's request is in flight while its subagents finish; a
            # real request takes long enough for their results to be routed
            # into the running turn before it returns.
            assert turn is not None
            await turn.subagents_done.wait()
            if self.subagents_delivered is not None:
                await self.subagents_delivered()
        return CallPlan(purpose, reply, turn, session, label, started_ms)

    def end_call(self, provider: LLMProvider, plan: CallPlan) -> None:
        """The end of one provider call: the call log."""
        turn = plan.turn
        if plan.purpose == "subagent" and turn is not None and not any(turn.subagents.values()):
            turn.subagents_done.set()
        self.calls.append({
            "instance": self.instance,
            "purpose": plan.purpose,
            "label": plan.label,
            "session": plan.session.as_json() if plan.session else None,
            "started_at_ms": plan.started_ms,
            "recorded": provider._llm_call_observer is not None,
            "provider": provider.provider_name,
            "error": plan.reply.error is not None,
        })

    async def respond(
        self,
        provider: ScriptedProvider,
        messages: list[dict[str, Any]],
        model: str | None,
        on_content_delta: Callable[[str], Awaitable[None]] | None = None,
    ) -> LLMResponse:
        clock = env.CLOCK
        assert clock is not None
        plan = await self.begin_call(messages)
        reply = plan.reply
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
        self.end_call(provider, plan)
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
        "hold": reply.hold,
        "thinking": [[t.text, t.redacted.hex() if t.redacted is not None else None] for t in reply.thinking],
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
        hold=data.get("hold"),
        thinking=[Thought(t, bytes.fromhex(r) if r is not None else None) for t, r in data.get("thinking", [])],
    )


def _response_for(reply: Reply) -> LLMResponse:
    if reply.thinking:
        raise ScriptError("thinking blocks need nanobot's own provider (harness.sdk_backends)")
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


def install_factory_hook(provider_class: type | None = None) -> None:
    """Make nanobot's provider factory build ``provider_class``
    (:class:`ScriptedProvider` by default; `mcp_agent.py` gives its own)."""
    from nanobot.providers import factory

    cls = provider_class or ScriptedProvider

    def _make_provider_core(config, *, preset, model=None):  # mirrors factory._make_provider_core
        setup = factory._resolve_provider_setup(config, preset=preset, model=model)
        if provider_class is None:
            from . import sdk_backends

            sdk = sdk_backends.build(setup, config, preset)
            if sdk is not None:
                sdk.generation = preset.to_generation_settings()
                return sdk
        p = setup.provider_config
        provider = cls(
            api_key=p.api_key if p else None,
            api_base=config.get_api_base(setup.model, preset=preset),
            default_model=setup.model,
            provider_name=setup.provider_name,
        )
        provider.generation = preset.to_generation_settings()
        return provider

    factory._make_provider_core = _make_provider_core  # type: ignore[assignment]

