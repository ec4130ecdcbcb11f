"""A WebUI browser tab, reduced to the frames the bundled WebUI sends.

What nanobot 0.3.5's bundled WebUI (``nanobot/web/dist/assets/index-*.js``)
does, and therefore what :class:`WebUITab` does:

* ``GET /webui/bootstrap`` (with ``X-Nanobot-Auth: <tokenIssueSecret>`` when the
  channel has a secret, as the bundle does after the user entered it) returns
  a one-time ``token`` and ``ws_path``;
* open ``ws://host:port<ws_path>?token=<token>`` (no ``client_id``: the server
  assigns ``anon-…``) and read the ``ready`` event;
* ``GET /api/sessions`` with the bootstrap ``api_token`` (the sidebar: on load
  and after each turn; nanobot rebuilds ``.webui_session_index.json``);
* ``{"type": "new_chat"}`` -> ``attached`` with a fresh ``chat_id``;
  ``{"type": "attach", "chat_id": …}`` to reopen a chat;
* ``{"type": "message", "chat_id", "content", "turn_id": <crypto.randomUUID()>,
  "webui": true}`` to send a prompt (``sendMessage`` in the bundle); another
  client of the channel sends ``{"type": "message", "chat_id", "content"}``;
* wait for the ``turn_end`` event of that chat;
* ``{"type": "webui_request", "request_id", "action": "session.delete",
  "payload": {"key": …}}`` to delete a chat from the sidebar
  (``requestMutation`` in the bundle).

The socket is served by nanobot's own WebSocket channel; nothing here writes
files.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from websockets.asyncio.client import ClientConnection, connect


class WebUITab:
    def __init__(self, port: int, secret: str = "") -> None:
        self.port = port
        self.secret = secret
        self.ws: ClientConnection | None = None
        self.events: list[dict[str, Any]] = []
        self._queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def _get_json(self, path: str, headers: dict[str, str]) -> Any:
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
        lines = [f"GET {path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Accept: application/json"]
        lines += [f"{k}: {v}" for k, v in headers.items()]
        writer.write(("\r\n".join(lines) + "\r\nConnection: close\r\n\r\n").encode("ascii"))
        await writer.drain()
        raw = await reader.read()
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        if b" 200 " not in status:
            raise RuntimeError(f"bootstrap failed: {status!r} {body[:200]!r}")
        if b"transfer-encoding: chunked" in head.lower():
            body = _dechunk(body)
        return json.loads(body)

    async def _bootstrap(self) -> dict[str, Any]:
        return await self._get_json("/webui/bootstrap", {"X-Nanobot-Auth": self.secret} if self.secret else {})

    async def refresh_sidebar(self) -> list[dict[str, Any]]:
        """``GET /api/sessions`` as the sidebar does (nanobot rebuilds its session index)."""
        payload = await self._get_json("/api/sessions", {"Authorization": f"Bearer {self.api_token}"})
        return list(payload.get("sessions", []))

    async def open(self) -> None:
        boot = await self._bootstrap()
        self.api_token = boot["api_token"]
        url = f"ws://127.0.0.1:{self.port}{boot['ws_path']}?token={boot['token']}"
        self.ws = await connect(url, max_size=None, open_timeout=10)
        self._reader = asyncio.create_task(self._read())
        ready = await self.expect("ready")
        self.default_chat_id = ready["chat_id"]

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for raw in self.ws:
                event = json.loads(raw)
                self.events.append(event)
                await self._queue.put(event)
        except Exception:
            pass

    async def expect(self, name: str, *, chat_id: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        async def _wait() -> dict[str, Any]:
            while True:
                event = await self._queue.get()
                if event.get("event") == "error":
                    raise RuntimeError(f"WebUI error event: {event}")
                if event.get("event") == name and (chat_id is None or event.get("chat_id") == chat_id):
                    return event
        return await asyncio.wait_for(_wait(), timeout)

    async def send(self, frame: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps(frame))

    async def new_chat(self) -> str:
        await self.send({"type": "new_chat"})
        attached = await self.expect("attached")
        return str(attached["chat_id"])

    async def attach(self, chat_id: str) -> None:
        await self.send({"type": "attach", "chat_id": chat_id})
        await self.expect("attached", chat_id=chat_id)

    async def send_message(self, chat_id: str, content: str, *, webui: bool = True) -> str | None:
        """A prompt as the bundle sends it; ``webui=False``: as another client
        of nanobot's WebSocket channel sends one (no ``webui`` flag, no turn
        id), whose messages nanobot keeps out of the WebUI transcript
        (``webui/inbound_commands.py``, ``append_user_message``)."""
        if not webui:
            await self.send({"type": "message", "chat_id": chat_id, "content": content})
            return None
        turn_id = str(uuid.uuid4())  # the bundle uses crypto.randomUUID()
        await self.send({
            "type": "message",
            "chat_id": chat_id,
            "content": content,
            "turn_id": turn_id,
            "webui": True,
        })
        return turn_id

    async def request(self, action: str, payload: dict[str, Any], timeout: float = 30.0) -> dict[str, Any]:
        """A WebUI mutation as the bundle's ``requestMutation`` sends it
        (``{"type": "webui_request", "request_id", "action", "payload"}``);
        returns the ``webui_response`` result."""
        request_id = str(uuid.uuid4())  # the bundle uses crypto.randomUUID()
        await self.send({"type": "webui_request", "request_id": request_id, "action": action, "payload": payload})
        while True:
            event = await self.expect("webui_response", timeout=timeout)
            if event.get("request_id") == request_id:
                break
        if not event.get("ok"):
            raise RuntimeError(f"WebUI request {action} failed: {event}")
        return dict(event.get("result") or {})

    async def wait_turn_end(self, chat_id: str, timeout: float = 60.0) -> dict[str, Any]:
        return await self.expect("turn_end", chat_id=chat_id, timeout=timeout)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.wait([self._reader], timeout=5)


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.strip() or b"0", 16)
        if size == 0:
            break
        out += rest[:size]
        body = rest[size + 2:]
    return out
