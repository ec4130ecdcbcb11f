"""nanobot's own Anthropic and Bedrock providers, answered on the wire.

:class:`harness.provider.ScriptedProvider` replaces a provider class
whole: it hands nanobot an ``LLMResponse``.  That leaves out what a
provider's own code makes of a model's answer -- for extended thinking, the
part nanobot stores: ``AnthropicProvider._parse_response`` turns
``thinking`` content blocks into ``thinking_blocks`` (text and signature,
``reasoning_content`` left empty; it drops ``redacted_thinking`` blocks), and
``BedrockProvider`` turns Converse ``reasoningContent`` blocks into
``thinking_blocks`` *and* a ``reasoning_content`` that joins their texts
(a redacted block becomes ``{"type": "redacted_thinking",
"redactedContentBase64": …}``).

So a scenario may ask for nanobot's real provider classes instead
(:func:`use_sdk_backends`): the factory hook builds

* :class:`ScriptedAnthropicProvider` -- nanobot's ``AnthropicProvider`` whose
  ``AsyncAnthropic`` client (the Anthropic SDK, as nanobot configured it)
  sends its requests to an ``httpx.MockTransport``; the transport answers
  with the Messages API's wire format (a JSON message, or the server-sent
  events of a stream) built from the script's :class:`~harness.provider.Reply`;
* :class:`ScriptedBedrockProvider` -- nanobot's ``BedrockProvider`` with a
  ``bedrock-runtime`` client stand-in whose ``converse`` /
  ``converse_stream`` return what boto3 returns (dicts; ``bytes`` for a
  redacted block; a stream of event dicts).

Everything from the request nanobot builds to the ``LLMResponse`` it parses
-- the SDK's stream accumulation included -- is nanobot's and the SDK's
code.  The script (which turn a call serves, hold gates, the call log) is
the same as for :class:`ScriptedProvider`; the think time passes while the
response streams (before its first content event, and before its last),
so nanobot's streaming callbacks see the same timing.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator
from contextvars import ContextVar
from typing import Any

import httpx
from nanobot.providers.anthropic_provider import AnthropicProvider
from nanobot.providers.base import LLMProvider, LLMResponse
from nanobot.providers.bedrock_provider import BedrockProvider

from . import env
from .provider import CallPlan, Reply, ScriptedProvider, ScriptError, Thought

#: The call being served in this task (the Bedrock client runs in a worker
#: thread: ``asyncio.to_thread`` copies the context).
_PLAN: ContextVar[CallPlan | None] = ContextVar("harness_call_plan", default=None)

#: Whether the factory hook builds the classes of this module for the
#: ``anthropic`` and ``bedrock`` backends (set by a scenario before it
#: starts the gateway).
ENABLED = False


def use_sdk_backends(enabled: bool = True) -> None:
    global ENABLED
    ENABLED = enabled


def signature_of(thought: Thought) -> str:
    """A thinking block's signature: opaque base64, as the API sends it
    (derived from the text, so a generation is deterministic)."""
    seed = (thought.text or "").encode()
    raw = b"\x12\xa0\x02" + b"".join(hashlib.sha512(seed + bytes([i])).digest() for i in range(3))[:180]
    return base64.b64encode(raw).decode("ascii")


async def _serve(provider: LLMProvider, messages: list[dict[str, Any]],
                 call: Callable[[], Awaitable[LLMResponse]]) -> LLMResponse:
    script = ScriptedProvider.SCRIPT
    if script is None:
        raise ScriptError("no script installed")
    plan = await script.begin_call(messages)
    token = _PLAN.set(plan)
    try:
        response = await call()
    finally:
        _PLAN.reset(token)
    script.end_call(provider, plan)
    return response


def _plan() -> CallPlan:
    plan = _PLAN.get()
    if plan is None:
        raise ScriptError("a provider request outside a scripted call")
    return plan


def _thoughts(reply: Reply) -> list[Thought]:
    thoughts = list(reply.thinking)
    if reply.reasoning:
        # a scripted reasoning text is one thinking block of these providers
        thoughts.insert(0, Thought(reply.reasoning))
    return thoughts


def _usage(reply: Reply) -> tuple[int, int, int | None, int | None]:
    # nanobot's logical input is the API's input plus cache reads and writes
    inp, out, cache_read, cache_write = reply.usage or (0, 0, None, None)
    return inp - (cache_read or 0) - (cache_write or 0), out, cache_read, cache_write


class _Pacer:
    """The think time of a reply, spent while its content streams: a little
    before the first content event, the rest before the last."""

    def __init__(self, reply: Reply, events: int) -> None:
        self.first = min(2.0, reply.think / 4)
        self.rest = reply.think - self.first
        self.events = events
        self.seen = 0

    def before_content(self) -> None:
        clock = env.CLOCK
        assert clock is not None
        self.seen += 1
        if self.seen == 1:
            clock.advance(self.first)
        if self.seen == self.events:
            clock.advance(self.rest)

    def finish(self) -> None:
        """A response without content events: its whole think time."""
        clock = env.CLOCK
        assert clock is not None
        if self.events == 0:
            clock.advance(self.first + self.rest)


def _halves(text: str) -> list[str]:
    half = max(1, len(text) // 2)
    return [p for p in (text[:half], text[half:]) if p]


# ---------------------------------------------------------------------------
# Anthropic (Messages API over the SDK's httpx client)
# ---------------------------------------------------------------------------

_ANTHROPIC_ERRORS = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error",
                     529: "overloaded_error"}


def _anthropic_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for thought in _thoughts(reply):
        if thought.redacted is not None:
            blocks.append({"type": "redacted_thinking", "data": base64.b64encode(thought.redacted).decode("ascii")})
        else:
            blocks.append({"type": "thinking", "thinking": thought.text or "", "signature": signature_of(thought)})
    if reply.text:
        blocks.append({"type": "text", "text": reply.text})
    for call in reply.calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name, "input": dict(call.args)})
    return blocks


def _anthropic_stop(reply: Reply) -> str:
    if reply.finish == "length":
        return "max_tokens"
    if reply.finish is not None and reply.finish != "stop":
        raise ScriptError(f"no Anthropic stop_reason for finish {reply.finish!r}")
    return "tool_use" if reply.calls else "end_turn"


def _message_id(plan: CallPlan) -> str:
    return "msg_01" + hashlib.sha256(f"{plan.started_ms}:{plan.label}".encode()).hexdigest()[:22]


def _anthropic_usage(reply: Reply, output: int) -> dict[str, Any]:
    inp, _, cache_read, cache_write = _usage(reply)
    return {"input_tokens": inp, "output_tokens": output, "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write}


def _sse(event: dict[str, Any]) -> bytes:
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _anthropic_stream(plan: CallPlan, model: str, blocks: list[dict[str, Any]]) -> Iterator[tuple[bool, dict[str, Any]]]:
    """(is content, event) of one streamed message."""
    reply = plan.reply
    yield False, {"type": "message_start", "message": {
        "id": _message_id(plan), "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None, "usage": _anthropic_usage(reply, 1)}}
    for index, block in enumerate(blocks):
        kind = block["type"]
        if kind == "thinking":
            yield False, {"type": "content_block_start", "index": index,
                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            for piece in _halves(block["thinking"]):
                yield True, {"type": "content_block_delta", "index": index,
                             "delta": {"type": "thinking_delta", "thinking": piece}}
            yield False, {"type": "content_block_delta", "index": index,
                          "delta": {"type": "signature_delta", "signature": block["signature"]}}
        elif kind == "redacted_thinking":
            yield True, {"type": "content_block_start", "index": index, "content_block": block}
        elif kind == "text":
            yield False, {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}
            for piece in _halves(block["text"]):
                yield True, {"type": "content_block_delta", "index": index,
                             "delta": {"type": "text_delta", "text": piece}}
        elif kind == "tool_use":
            yield False, {"type": "content_block_start", "index": index,
                          "content_block": {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}
            yield True, {"type": "content_block_delta", "index": index,
                         "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}
        yield False, {"type": "content_block_stop", "index": index}
    yield False, {"type": "message_delta", "delta": {"stop_reason": _anthropic_stop(reply), "stop_sequence": None},
                  "usage": {"output_tokens": _usage(reply)[1]}}
    yield False, {"type": "message_stop"}


async def _anthropic_wire(request: httpx.Request) -> httpx.Response:
    plan = _plan()
    reply = plan.reply
    clock = env.CLOCK
    assert clock is not None
    if request.method != "POST" or request.url.path != "/v1/messages":
        raise ScriptError(f"unexpected Anthropic request {request.method} {request.url}")
    body = json.loads(request.content)
    headers = {"request-id": "req_01" + _message_id(plan)[6:]}
    if reply.error is not None:
        clock.advance(reply.think)
        status, _kind, message = reply.error
        return httpx.Response(status, headers=headers, json={
            "type": "error", "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}})
    blocks = _anthropic_blocks(reply)
    if not body.get("stream"):
        clock.advance(reply.think)
        return httpx.Response(200, headers=headers, json={
            "id": _message_id(plan), "type": "message", "role": "assistant", "model": body["model"],
            "content": blocks, "stop_reason": _anthropic_stop(reply), "stop_sequence": None,
            "usage": _anthropic_usage(reply, _usage(reply)[1])})
    events = list(_anthropic_stream(plan, body["model"], blocks))
    pacer = _Pacer(reply, sum(1 for content, _ in events if content))

    async def stream() -> Any:
        for content, event in events:
            if content:
                pacer.before_content()
            yield _sse(event)
        pacer.finish()

    return httpx.Response(200, headers={**headers, "content-type": "text/event-stream"}, content=stream())


class ScriptedAnthropicProvider(AnthropicProvider):
    """nanobot's ``AnthropicProvider``; its SDK client talks to the script."""

    def __init__(self, *, api_key: str | None, api_base: str | None, default_model: str,
                 provider_name: str, extra_headers: dict[str, str] | None = None) -> None:
        super().__init__(api_key=api_key, api_base=api_base, default_model=default_model,
                         extra_headers=extra_headers, provider_name=provider_name)
        # the client nanobot built, on an in-process transport
        self._client = self._client.with_options(
            http_client=httpx.AsyncClient(transport=httpx.MockTransport(_anthropic_wire)))

    async def chat(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                   reasoning_effort=None, tool_choice=None) -> LLMResponse:  # type: ignore[override]
        return await _serve(self, messages, lambda: super(ScriptedAnthropicProvider, self).chat(
            messages, tools, model, max_tokens, temperature, reasoning_effort, tool_choice))

    async def chat_stream(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                          reasoning_effort=None, tool_choice=None, on_content_delta=None,
                          on_thinking_delta=None, on_tool_call_delta=None) -> LLMResponse:  # type: ignore[override]
        return await _serve(self, messages, lambda: super(ScriptedAnthropicProvider, self).chat_stream(
            messages, tools, model, max_tokens, temperature, reasoning_effort, tool_choice,
            on_content_delta=on_content_delta, on_thinking_delta=on_thinking_delta,
            on_tool_call_delta=on_tool_call_delta))


# ---------------------------------------------------------------------------
# Bedrock (Converse API, as boto3's bedrock-runtime client returns it)
# ---------------------------------------------------------------------------


class _ClientError(Exception):
    """What botocore raises for an error answer (``.response`` is what
    nanobot's ``BedrockProvider._handle_error`` reads)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"An error occurred ({code}) when calling the ConverseStream operation: {message}")
        self.response = {"Error": {"Code": code, "Message": message},
                         "ResponseMetadata": {"HTTPStatusCode": status, "HTTPHeaders": {}}}


_BEDROCK_ERRORS = {429: "ThrottlingException", 500: "InternalServerException",
                   503: "ServiceUnavailableException", 529: "ServiceUnavailableException"}


def _bedrock_stop(reply: Reply) -> str:
    if reply.finish == "length":
        return "max_tokens"
    if reply.finish is not None and reply.finish != "stop":
        raise ScriptError(f"no Bedrock stopReason for finish {reply.finish!r}")
    return "tool_use" if reply.calls else "end_turn"


def _bedrock_usage(reply: Reply) -> dict[str, Any]:
    inp, out, cache_read, cache_write = _usage(reply)
    usage: dict[str, Any] = {"inputTokens": inp, "outputTokens": out, "totalTokens": inp + out}
    if cache_read is not None:
        usage["cacheReadInputTokens"] = cache_read
    if cache_write is not None:
        usage["cacheWriteInputTokens"] = cache_write
    return usage


def _bedrock_blocks(reply: Reply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for thought in _thoughts(reply):
        if thought.redacted is not None:
            blocks.append({"reasoningContent": {"redactedContent": thought.redacted}})
        else:
            blocks.append({"reasoningContent": {"reasoningText": {
                "text": thought.text or "", "signature": signature_of(thought)}}})
    if reply.text:
        blocks.append({"text": reply.text})
    for call in reply.calls:
        blocks.append({"toolUse": {"toolUseId": call.id, "name": call.name, "input": dict(call.args)}})
    return blocks


def _bedrock_events(reply: Reply) -> Iterator[tuple[bool, dict[str, Any]]]:
    yield False, {"messageStart": {"role": "assistant"}}
    for index, block in enumerate(_bedrock_blocks(reply)):
        reasoning = block.get("reasoningContent")
        if reasoning is not None and "reasoningText" in reasoning:
            for piece in _halves(reasoning["reasoningText"]["text"]):
                yield True, {"contentBlockDelta": {"contentBlockIndex": index,
                                                   "delta": {"reasoningContent": {"text": piece}}}}
            yield False, {"contentBlockDelta": {"contentBlockIndex": index, "delta": {
                "reasoningContent": {"signature": reasoning["reasoningText"]["signature"]}}}}
        elif reasoning is not None:
            yield True, {"contentBlockDelta": {"contentBlockIndex": index,
                                               "delta": {"reasoningContent": dict(reasoning)}}}
        elif "text" in block:
            for piece in _halves(block["text"]):
                yield True, {"contentBlockDelta": {"contentBlockIndex": index, "delta": {"text": piece}}}
        else:
            tool = block["toolUse"]
            yield False, {"contentBlockStart": {"contentBlockIndex": index, "start": {
                "toolUse": {"toolUseId": tool["toolUseId"], "name": tool["name"]}}}}
            yield True, {"contentBlockDelta": {"contentBlockIndex": index,
                                               "delta": {"toolUse": {"input": json.dumps(tool["input"])}}}}
        yield False, {"contentBlockStop": {"contentBlockIndex": index}}
    yield False, {"messageStop": {"stopReason": _bedrock_stop(reply)}}
    yield False, {"metadata": {"usage": _bedrock_usage(reply),
                               "metrics": {"latencyMs": int(reply.think * 1000)}}}


class _BedrockRuntime:
    """The two calls nanobot makes on boto3's ``bedrock-runtime`` client."""

    @staticmethod
    def _error(reply: Reply) -> None:
        if reply.error is not None:
            clock = env.CLOCK
            assert clock is not None
            clock.advance(reply.think)
            status, _kind, message = reply.error
            raise _ClientError(status, _BEDROCK_ERRORS.get(status, "InternalServerException"), message)

    def converse(self, **kwargs: Any) -> dict[str, Any]:
        reply = _plan().reply
        self._error(reply)
        clock = env.CLOCK
        assert clock is not None
        clock.advance(reply.think)
        return {"output": {"message": {"role": "assistant", "content": _bedrock_blocks(reply)}},
                "stopReason": _bedrock_stop(reply), "usage": _bedrock_usage(reply),
                "metrics": {"latencyMs": int(reply.think * 1000)}}

    def converse_stream(self, **kwargs: Any) -> dict[str, Any]:
        reply = _plan().reply
        self._error(reply)
        events = list(_bedrock_events(reply))
        pacer = _Pacer(reply, sum(1 for content, _ in events if content))

        def stream() -> Iterator[dict[str, Any]]:
            for content, event in events:
                if content:
                    pacer.before_content()
                yield event
            pacer.finish()

        return {"stream": stream(), "ResponseMetadata": {"HTTPStatusCode": 200}}


class ScriptedBedrockProvider(BedrockProvider):
    """nanobot's ``BedrockProvider`` with a scripted ``bedrock-runtime`` client."""

    def __init__(self, *, api_key: str | None, api_base: str | None, default_model: str,
                 provider_name: str, region: str | None = None, profile: str | None = None,
                 extra_body: dict[str, Any] | None = None) -> None:
        super().__init__(api_key=api_key, api_base=api_base, default_model=default_model, region=region,
                         profile=profile, extra_body=extra_body, client=_BedrockRuntime(),
                         provider_name=provider_name)

    async def chat(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                   reasoning_effort=None, tool_choice=None) -> LLMResponse:  # type: ignore[override]
        return await _serve(self, messages, lambda: super(ScriptedBedrockProvider, self).chat(
            messages, tools, model, max_tokens, temperature, reasoning_effort, tool_choice))

    async def chat_stream(self, messages, tools=None, model=None, max_tokens=4096, temperature=0.7,
                          reasoning_effort=None, tool_choice=None, on_content_delta=None,
                          on_thinking_delta=None, on_tool_call_delta=None) -> LLMResponse:  # type: ignore[override]
        return await _serve(self, messages, lambda: super(ScriptedBedrockProvider, self).chat_stream(
            messages, tools, model, max_tokens, temperature, reasoning_effort, tool_choice,
            on_content_delta=on_content_delta, on_thinking_delta=on_thinking_delta,
            on_tool_call_delta=on_tool_call_delta))


def build(setup: Any, config: Any, preset: Any) -> LLMProvider | None:
    """The provider of this module for a resolved setup, or None (the
    backend is not one of these, or they are not in use)."""
    if not ENABLED:
        return None
    from nanobot.providers import factory

    p = setup.provider_config
    if setup.backend == "anthropic":
        return ScriptedAnthropicProvider(
            api_key=p.api_key if p else None,
            api_base=config.get_api_base(setup.model, preset=preset),
            default_model=setup.model,
            extra_headers=factory._provider_extra_headers(setup.spec, p),
            provider_name=setup.provider_name,
        )
    if setup.backend == "bedrock":
        return ScriptedBedrockProvider(
            api_key=p.api_key if p else None,
            api_base=p.api_base if p else None,
            default_model=setup.model,
            region=getattr(p, "region", None) if p else None,
            profile=getattr(p, "profile", None) if p else None,
            extra_body=p.extra_body if p else None,
            provider_name=setup.provider_name,
        )
    return None
