"""A fake Feishu on 127.0.0.1 that speaks what lark-oapi uses: the tenant token, the long connection's endpoint
and WebSocket (protobuf frames: events and card actions sent, answers and pings received), and the IM API (send,
reply in thread, patch a card). It can drop the connection and stay unreachable, and answer 429."""

import base64
import itertools
import json
import time
from typing import Any

from aiohttp import WSMsgType, web
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from tests.fakes.chat import FakeChat

APP_ID = "cli_fake"
APP_SECRET = "fake-app-secret"
TENANT_TOKEN = "t-fake-tenant"


def text_of(content: str) -> str:
    """The plain text of a card we were sent."""
    return str(json.loads(content)["elements"][0]["text"]["content"])


def has_buttons(content: str) -> bool:
    return any(element.get("tag") == "action" for element in json.loads(content)["elements"])


class FakeFeishu(FakeChat):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[dict[str, Any]] = []  # sent and replied messages, in order
        self.patches: list[dict[str, Any]] = []
        self.answers: dict[str, dict[str, Any]] = {}  # event id -> the client's answer
        self.rate_limited = 0
        self._ids = itertools.count(1)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/open-apis/auth/v3/tenant_access_token/internal", self._token)
        app.router.add_post("/callback/ws/endpoint", self._endpoint)
        app.router.add_get("/ws", self._socket)
        app.router.add_post("/open-apis/im/v1/messages", self._send)
        app.router.add_post("/open-apis/im/v1/messages/{id}/reply", self._send)
        app.router.add_patch("/open-apis/im/v1/messages/{id}", self._patch)

    # --- what the test does ------------------------------------------------------------------------------------

    def event(self, kind: str, event: dict[str, Any]) -> str:
        """Push one event down the long connection; returns its id (its answer lands in `answers`)."""
        event_id = f"ev{next(self._ids)}"
        body = {
            "schema": "2.0",
            "header": {
                "event_id": event_id,
                "event_type": kind,
                "app_id": APP_ID,
                "create_time": str(int(time.time() * 1000)),
                "token": "",
            },
            "event": event,
        }
        frame = Frame(SeqID=0, LogID=0, service=1, method=1, payload=json.dumps(body).encode())
        for key, value in (
            ("type", "event"),
            ("message_id", event_id),
            ("sum", "1"),
            ("seq", "0"),
            ("trace_id", event_id),
        ):
            header = frame.headers.add()
            header.key, header.value = key, value
        self.on_loop(self.sockets[-1].send_bytes(frame.SerializeToString()))
        return event_id

    def mention(self, user: str, text: str, chat: str = "oc_1") -> str:
        message_id = f"om_in{next(self._ids)}"
        self.event(
            "im.message.receive_v1",
            {
                "sender": {"sender_id": {"open_id": user}, "sender_type": "user"},
                "message": {
                    "message_id": message_id,
                    "chat_id": chat,
                    "chat_type": "group",
                    "message_type": "text",
                    "content": json.dumps({"text": f"@_user_1 {text}"}),
                    "mentions": [{"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "coxswain"}],
                },
            },
        )
        return message_id

    def click(self, user: str, verb: str, request_id: str, message_id: str) -> str:
        return self.event(
            "card.action.trigger",
            {
                "operator": {"open_id": user},
                "action": {"tag": "button", "value": {"request": request_id, "verb": verb}},
                "context": {"open_message_id": message_id, "open_chat_id": "oc_1"},
            },
        )

    def toast(self, event_id: str) -> dict[str, Any]:
        return dict(self.answers[event_id]["toast"])

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
        return web.json_response(
            {
                "code": 0,
                "data": {
                    "URL": f"ws://127.0.0.1:{self.port}/ws?device_id=d{time.time()}&service_id=1",
                    "ClientConfig": {
                        "ReconnectCount": -1,
                        "ReconnectInterval": 1,
                        "ReconnectNonce": 0,
                        "PingInterval": 2,
                    },
                },
            }
        )

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        if self.down:
            raise web.HTTPServiceUnavailable()
        sock = web.WebSocketResponse()
        await sock.prepare(request)
        self.connections += 1
        self.sockets.append(sock)
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
            return web.json_response(
                {"code": 99991400, "msg": "request trigger frequency limit"},
                status=429,
                headers={"x-ogw-ratelimit-reset": "1"},
            )
        return None

    async def _send(self, request: web.Request) -> web.Response:
        """A new message in a chat, or (with a message id in the path) a reply to one, in its thread."""
        refused = self._refused(request)
        if refused:
            return refused
        body, parent = await request.json(), request.match_info.get("id")
        message_id = f"om_{next(self._ids)}"
        self.messages.append(
            {
                "id": message_id,
                "chat": body.get("receive_id"),
                "parent": parent,
                "content": body["content"],
                "type": body["msg_type"],
                "in_thread": body.get("reply_in_thread"),
            }
        )
        return web.json_response({"code": 0, "data": {"message_id": message_id, "root_id": parent}})

    async def _patch(self, request: web.Request) -> web.Response:
        refused = self._refused(request)
        if refused:
            return refused
        body = await request.json()
        self.patches.append({"id": request.match_info["id"], "content": body["content"]})
        return web.json_response({"code": 0, "data": {}})
