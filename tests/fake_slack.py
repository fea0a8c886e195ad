"""A fake Slack on 127.0.0.1 that speaks what slack_sdk uses: the Web API (`auth.test`, `apps.connections.open`,
`chat.postMessage`, `chat.update`, `chat.postEphemeral`) and a Socket Mode WebSocket (hello, envelopes, acks).
It can drop the socket and stay unreachable for a while, and answer 429 with Retry-After."""

import asyncio
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

APP_TOKEN = "xapp-1-A1-000-fake"
BOT_TOKEN = "xoxb-000-fake"
BOT_USER = "UBOT"


@dataclass
class FakeSlack:
    port: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)  # chat.postMessage, in order
    updates: list[dict[str, Any]] = field(default_factory=list)  # chat.update
    ephemeral: list[dict[str, Any]] = field(default_factory=list)
    acks: list[str] = field(default_factory=list)  # envelope ids the client acknowledged
    rate_limited: int = 0  # answer the next N chat.postMessage calls with 429
    down: bool = False  # no API answers, no socket: the laptop is offline
    connections: int = 0

    def __post_init__(self) -> None:
        self._ts = itertools.count(1)
        self._envelopes = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self._lock = threading.Lock()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    # --- running ---------------------------------------------------------------------------------------------

    def start(self) -> "FakeSlack":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        return self

    def stop(self) -> None:
        self.drop()  # a client still connected would hold the server's shutdown up
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    # --- what the test does ------------------------------------------------------------------------------------

    def send(self, kind: str, payload: dict[str, Any]) -> str:
        """Deliver an envelope (events_api, slash_commands, interactive) to the connected client."""
        envelope = f"env-{next(self._envelopes)}"
        message = json.dumps({"envelope_id": envelope, "type": kind, "payload": payload,
                              "accepts_response_payload": False})
        asyncio.run_coroutine_threadsafe(self._sockets[-1].send_str(message), self.loop).result(10)
        return envelope

    def mention(self, user: str, text: str, channel: str = "C1") -> str:
        """Someone writes `@coxswain <text>` in a channel; returns the message's ts."""
        ts = self._next_ts()
        self.send("events_api", {"type": "event_callback", "event_id": f"Ev{ts}", "event": {
            "type": "app_mention", "user": user, "text": f"<@{BOT_USER}> {text}", "ts": ts, "channel": channel}})
        return ts

    def click(self, user: str, action: str, request_id: str, message_ts: str, channel: str = "C1") -> str:
        return self.send("interactive", {"type": "block_actions", "user": {"id": user}, "channel": {"id": channel},
                                         "message": {"ts": message_ts},
                                         "actions": [{"action_id": action, "value": request_id}]})

    def drop(self) -> None:
        """The laptop goes offline: the socket breaks and nothing answers until `restore`."""
        self.down = True
        for sock in list(self._sockets):
            asyncio.run_coroutine_threadsafe(sock.close(), self.loop).result(10)
        self._sockets.clear()

    def restore(self) -> None:
        self.down = False

    def connected(self) -> bool:
        return any(not sock.closed for sock in self._sockets)

    def wait(self, check: Any, timeout: float = 30, what: str = "the fake Slack") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: messages={self.messages} updates={self.updates}")
            time.sleep(0.05)

    def thread(self, ts: str) -> list[str]:
        """The texts posted in the thread under `ts`, in order."""
        return [m["text"] for m in self.messages if m.get("thread_ts") == ts]

    # --- the protocol ----------------------------------------------------------------------------------------

    def _next_ts(self) -> str:
        return f"1700000000.{next(self._ts):06d}"

    async def _api(self, request: web.Request) -> web.Response:
        if self.down:
            return web.json_response({"ok": False, "error": "service_unavailable"}, status=503)
        method = request.match_info["method"]
        if request.content_type == "application/json":
            body = await request.json()
        else:
            body = {**request.query, **(await request.post())}
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or body.get("token", "")
        if method == "apps.connections.open":
            if token != APP_TOKEN:
                return web.json_response({"ok": False, "error": "invalid_auth"})
            return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/link/?ticket={time.time()}"})
        if token != BOT_TOKEN:
            return web.json_response({"ok": False, "error": "invalid_auth"})
        if method == "auth.test":
            return web.json_response({"ok": True, "team": "Acme", "user": "coxswain", "user_id": BOT_USER})
        if method == "chat.postMessage":
            if self.rate_limited > 0:
                self.rate_limited -= 1
                return web.json_response({"ok": False, "error": "ratelimited"}, status=429,
                                         headers={"Retry-After": "1"})
            ts = self._next_ts()
            self.messages.append({**body, "ts": ts})
            return web.json_response({"ok": True, "channel": body.get("channel"), "ts": ts})
        if method == "chat.update":
            self.updates.append(body)
            return web.json_response({"ok": True, "channel": body.get("channel"), "ts": body.get("ts")})
        if method == "chat.getPermalink":
            return web.json_response({"ok": True, "channel": body.get("channel"), "permalink":
                                      f"https://acme.slack.com/archives/{body.get('channel')}/p"
                                      f"{str(body.get('message_ts')).replace('.', '')}"})
        if method == "chat.postEphemeral":
            self.ephemeral.append(body)
            return web.json_response({"ok": True, "message_ts": self._next_ts()})
        return web.json_response({"ok": False, "error": "unknown_method"}, status=404)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        if self.down:
            raise web.HTTPServiceUnavailable()
        sock = web.WebSocketResponse(autoping=True)
        await sock.prepare(request)
        self.connections += 1
        self._sockets.append(sock)
        await sock.send_str(json.dumps({"type": "hello", "num_connections": 1,
                                        "connection_info": {"app_id": "A1"}}))
        async for message in sock:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    self.acks.append(data["envelope_id"])
        return sock
