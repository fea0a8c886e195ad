"""A fake Slack on 127.0.0.1 that speaks what slack_sdk uses: the Web API (`auth.test`, `apps.connections.open`,
`chat.postMessage`, `chat.update`, `chat.postEphemeral`) and a Socket Mode WebSocket (hello, envelopes, acks).
It can drop the socket and stay unreachable for a while, and answer 429 with Retry-After."""

import itertools
import json
import time
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.chat import FakeChat

APP_TOKEN = "xapp-1-A1-000-fake"
BOT_TOKEN = "xoxb-000-fake"
BOT_USER = "UBOT"


class FakeSlack(FakeChat):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[dict[str, Any]] = []  # chat.postMessage, in order
        self.updates: list[dict[str, Any]] = []  # chat.update
        self.ephemeral: list[dict[str, Any]] = []
        self.acks: list[str] = []  # envelope ids the client acknowledged
        self.rate_limited = 0  # answer the next N chat.postMessage calls with 429
        self._ts = itertools.count(1)
        self._envelopes = itertools.count(1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_get("/link/", self._socket)

    # --- what the test does ------------------------------------------------------------------------------------

    def send(self, kind: str, payload: dict[str, Any]) -> str:
        """Deliver an envelope (events_api, slash_commands, interactive) to the connected client."""
        envelope = f"env-{next(self._envelopes)}"
        message = json.dumps(
            {"envelope_id": envelope, "type": kind, "payload": payload, "accepts_response_payload": False}
        )
        self.on_loop(self.sockets[-1].send_str(message))
        return envelope

    def mention(self, user: str, text: str, channel: str = "C1") -> str:
        """Someone writes `@coxswain <text>` in a channel; returns the message's ts."""
        ts = self._next_ts()
        self.send(
            "events_api",
            {
                "type": "event_callback",
                "event_id": f"Ev{ts}",
                "event": {
                    "type": "app_mention",
                    "user": user,
                    "text": f"<@{BOT_USER}> {text}",
                    "ts": ts,
                    "channel": channel,
                },
            },
        )
        return ts

    def click(self, user: str, action: str, request_id: str, message_ts: str, channel: str = "C1") -> str:
        return self.send(
            "interactive",
            {
                "type": "block_actions",
                "user": {"id": user},
                "channel": {"id": channel},
                "message": {"ts": message_ts},
                "actions": [{"action_id": action, "value": request_id}],
            },
        )

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
                return web.json_response(
                    {"ok": False, "error": "ratelimited"}, status=429, headers={"Retry-After": "1"}
                )
            ts = self._next_ts()
            self.messages.append({**body, "ts": ts})
            return web.json_response({"ok": True, "channel": body.get("channel"), "ts": ts})
        if method == "chat.update":
            self.updates.append(body)
            return web.json_response({"ok": True, "channel": body.get("channel"), "ts": body.get("ts")})
        if method == "chat.getPermalink":
            return web.json_response(
                {
                    "ok": True,
                    "channel": body.get("channel"),
                    "permalink": f"https://acme.slack.com/archives/{body.get('channel')}/p"
                    f"{str(body.get('message_ts')).replace('.', '')}",
                }
            )
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
        self.sockets.append(sock)
        await sock.send_str(json.dumps({"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A1"}}))
        async for message in sock:
            if message.type == WSMsgType.TEXT:
                data = json.loads(message.data)
                if "envelope_id" in data:
                    self.acks.append(data["envelope_id"])
        return sock
