"""A fake Feishu on 127.0.0.1 that speaks what lark-oapi uses: the tenant token, the long connection's endpoint
and WebSocket (protobuf frames: events and card actions sent, answers and pings received), and the IM API (send,
reply in thread, patch a card). It can drop the connection and stay unreachable, and answer 429."""

import asyncio
import base64
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

APP_ID = "cli_fake"
APP_SECRET = "fake-app-secret"
TENANT_TOKEN = "t-fake-tenant"


def text_of(content: str) -> str:
    """The plain text of a card we were sent."""
    return str(json.loads(content)["elements"][0]["text"]["content"])


def has_buttons(content: str) -> bool:
    return any(element.get("tag") == "action" for element in json.loads(content)["elements"])


@dataclass
class FakeFeishu:
    port: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)  # sent and replied messages, in order
    patches: list[dict[str, Any]] = field(default_factory=list)
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)  # event id -> the client's answer
    rate_limited: int = 0
    down: bool = False
    connections: int = 0

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._sockets: list[web.WebSocketResponse] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def start(self) -> "FakeFeishu":
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
        return f"http://127.0.0.1:{self.port}"

    async def _serve(self) -> None:
        app = web.Application()
        app.router.add_post("/open-apis/auth/v3/tenant_access_token/internal", self._token)
        app.router.add_post("/callback/ws/endpoint", self._endpoint)
        app.router.add_get("/ws", self._socket)
        app.router.add_post("/open-apis/im/v1/messages", self._create)
        app.router.add_post("/open-apis/im/v1/messages/{id}/reply", self._reply)
        app.router.add_patch("/open-apis/im/v1/messages/{id}", self._patch)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    # --- what the test does ------------------------------------------------------------------------------------

    def event(self, kind: str, event: dict[str, Any]) -> str:
        """Push one event down the long connection; returns its id (its answer lands in `answers`)."""
        event_id = f"ev{next(self._ids)}"
        body = {"schema": "2.0", "header": {"event_id": event_id, "event_type": kind, "app_id": APP_ID,
                                            "create_time": str(int(time.time() * 1000)), "token": ""},
                "event": event}
        frame = Frame(SeqID=0, LogID=0, service=1, method=1, payload=json.dumps(body).encode())
        for key, value in (("type", "event"), ("message_id", event_id), ("sum", "1"), ("seq", "0"),
                           ("trace_id", event_id)):
            header = frame.headers.add()
            header.key, header.value = key, value
        asyncio.run_coroutine_threadsafe(self._sockets[-1].send_bytes(frame.SerializeToString()), self.loop).result(10)
        return event_id

    def mention(self, user: str, text: str, chat: str = "oc_1") -> str:
        message_id = f"om_in{next(self._ids)}"
        self.event("im.message.receive_v1", {
            "sender": {"sender_id": {"open_id": user}, "sender_type": "user"},
            "message": {"message_id": message_id, "chat_id": chat, "chat_type": "group", "message_type": "text",
                        "content": json.dumps({"text": f"@_user_1 {text}"}),
                        "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "coxswain"}]}})
        return message_id

    def click(self, user: str, verb: str, request_id: str, message_id: str) -> str:
        return self.event("card.action.trigger", {
            "operator": {"open_id": user}, "action": {"tag": "button", "value": {"request": request_id, "verb": verb}},
            "context": {"open_message_id": message_id, "open_chat_id": "oc_1"}})

    def toast(self, event_id: str) -> dict[str, Any]:
        return dict(self.answers[event_id]["toast"])

    def drop(self) -> None:
        self.down = True
        for sock in list(self._sockets):
            asyncio.run_coroutine_threadsafe(sock.close(), self.loop).result(10)
        self._sockets.clear()

    def restore(self) -> None:
        self.down = False

    def connected(self) -> bool:
        return any(not sock.closed for sock in self._sockets)

    def wait(self, check: Any, timeout: float = 30, what: str = "the fake Feishu") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {self.messages} {self.patches}")
            time.sleep(0.05)

    def thread(self, parent: str) -> list[str]:
        return [text_of(m["content"]) for m in self.messages if m.get("parent") == parent]

    # --- the protocol ----------------------------------------------------------------------------------------

    async def _token(self, request: web.Request) -> web.Response:
        if self.down:
            return web.json_response({"code": 1, "msg": "unavailable"}, status=503)
        body = await request.json()
        if (body.get("app_id"), body.get("app_secret")) != (APP_ID, APP_SECRET):
            return web.json_response({"code": 10014, "msg": "app secret invalid"})
        return web.json_response({"code": 0, "msg": "ok", "tenant_access_token": TENANT_TOKEN, "expire": 7200})

    async def _endpoint(self, request: web.Request) -> web.Response:
        if self.down:
            return web.json_response({"code": 1, "msg": "system busy"}, status=503)
        body = await request.json()
        if (body.get("AppID"), body.get("AppSecret")) != (APP_ID, APP_SECRET):
            return web.json_response({"code": 514, "msg": "auth failed"})
        return web.json_response({"code": 0, "data": {
            "URL": f"ws://127.0.0.1:{self.port}/ws?device_id=d{time.time()}&service_id=1",
            "ClientConfig": {"ReconnectCount": -1, "ReconnectInterval": 1, "ReconnectNonce": 0, "PingInterval": 2}}})

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        if self.down:
            raise web.HTTPServiceUnavailable()
        sock = web.WebSocketResponse()
        await sock.prepare(request)
        self.connections += 1
        self._sockets.append(sock)
        async for message in sock:
            if message.type != WSMsgType.BINARY:
                continue
            frame = Frame()
            frame.ParseFromString(message.data)
            headers = {h.key: h.value for h in frame.headers}
            if frame.method == 0 and headers.get("type") == "ping":
                pong = Frame(SeqID=0, LogID=0, service=frame.service, method=0)
                header = pong.headers.add()
                header.key, header.value = "type", "pong"
                await sock.send_bytes(pong.SerializeToString())
            elif frame.method == 1:
                answer = json.loads(frame.payload)
                data = answer.get("data")
                self.answers[headers["message_id"]] = json.loads(base64.b64decode(data)) if data else {}
        return sock

    def _refused(self, request: web.Request) -> web.Response | None:
        if self.down:
            return web.json_response({"code": 1, "msg": "unavailable"}, status=503)
        if request.headers.get("Authorization") != f"Bearer {TENANT_TOKEN}":
            return web.json_response({"code": 99991663, "msg": "invalid tenant token"}, status=400)
        if self.rate_limited > 0:
            self.rate_limited -= 1
            return web.json_response({"code": 99991400, "msg": "request trigger frequency limit"}, status=429,
                                     headers={"x-ogw-ratelimit-reset": "1"})
        return None

    async def _create(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused:
            return refused
        body = await request.json()
        message_id = f"om_{next(self._ids)}"
        self.messages.append({"id": message_id, "chat": body["receive_id"], "parent": None,
                              "content": body["content"], "type": body["msg_type"]})
        return web.json_response({"code": 0, "data": {"message_id": message_id, "chat_id": body["receive_id"]}})

    async def _reply(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused:
            return refused
        body = await request.json()
        message_id = f"om_{next(self._ids)}"
        self.messages.append({"id": message_id, "parent": request.match_info["id"], "content": body["content"],
                              "type": body["msg_type"], "in_thread": body.get("reply_in_thread")})
        return web.json_response({"code": 0, "data": {"message_id": message_id, "root_id": request.match_info["id"]}})

    async def _patch(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused:
            return refused
        body = await request.json()
        self.patches.append({"id": request.match_info["id"], "content": body["content"]})
        return web.json_response({"code": 0, "data": {}})
