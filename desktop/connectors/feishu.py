"""Feishu / Lark, with the official lark-oapi SDK: its long connection (a WebSocket the laptop opens; no public
address) brings mentions of the bot and card button clicks; each request's thread is posted with the IM API
(replies in a thread, cards patched when answered). Every message is a card of plain text, so nothing a prompt or
a result says is read as a mention or markup. The app secret comes from the OS keyring.

The SDK's long-connection client runs its own event loop and blocks: it gets a thread of its own, and what it
receives is handed to the daemon's loop."""

import asyncio
import contextlib
import json
import logging
import re
import threading
from typing import Any

import httpx
import lark_oapi as lark
import lark_oapi.ws.client as lark_ws
from lark_oapi.api.im.v1 import (
    CreateMessageRequest,
    CreateMessageRequestBody,
    PatchMessageRequest,
    PatchMessageRequestBody,
    ReplyMessageRequest,
    ReplyMessageRequestBody,
)
from lark_oapi.event.callback.model.p2_card_action_trigger import P2CardActionTrigger, P2CardActionTriggerResponse

from desktop.connectors.service import Chat, ChatUnavailable
from desktop.core.visible import visible
from desktop.store.chat import Outgoing, Thread

log = logging.getLogger(__name__)
DEFAULT_DOMAIN = lark.FEISHU_DOMAIN
MENTION = re.compile(r"@_user_\d+\s*")


async def check(tokens: dict[str, str], config: dict[str, Any]) -> str:
    """The app's tenant token can be had with these credentials, or an error in words."""
    app_id, app_secret = config.get("app_id") or "", tokens.get("app_secret", "")
    domain = config.get("base_url") or DEFAULT_DOMAIN
    if not app_id or not app_secret:
        raise ValueError("Feishu wants the app's App ID (cli_…) and App Secret")
    try:
        async with httpx.AsyncClient(timeout=15) as web:
            answer = (
                await web.post(
                    f"{domain}/open-apis/auth/v3/tenant_access_token/internal",
                    json={"app_id": app_id, "app_secret": app_secret},
                )
            ).json()
    except (httpx.HTTPError, ValueError) as error:
        raise ValueError(f"Feishu cannot be reached: {error}") from None
    if answer.get("code") != 0:
        raise ValueError(f"Feishu refused the app's credentials: {answer.get('msg', answer.get('code'))}")
    return f"app {app_id}"


def card(text: str, request_id: str | None = None) -> str:
    """A card of plain text, made visible; with `request_id`, Approve and Deny buttons under it."""
    elements: list[dict[str, Any]] = [{"tag": "div", "text": {"tag": "plain_text", "content": visible(text)}}]
    if request_id is not None:
        elements.append(
            {
                "tag": "action",
                "actions": [
                    {
                        "tag": "button",
                        "type": "primary",
                        "text": {"tag": "plain_text", "content": "Approve"},
                        "value": {"request": request_id, "verb": "approve"},
                    },
                    {
                        "tag": "button",
                        "type": "danger",
                        "text": {"tag": "plain_text", "content": "Deny"},
                        "value": {"request": request_id, "verb": "deny"},
                    },
                ],
            }
        )
    return json.dumps({"config": {"wide_screen_mode": True}, "elements": elements})


def make(chat: Chat, tokens: dict[str, str], config: dict[str, Any]) -> "FeishuConnector":
    return FeishuConnector(chat, config["app_id"], tokens["app_secret"], config.get("base_url") or DEFAULT_DOMAIN)


class FeishuConnector:
    name = "feishu"

    def __init__(self, chat: Chat, app_id: str, app_secret: str, domain: str = DEFAULT_DOMAIN) -> None:
        self._chat = chat
        self.api = (
            lark.Client.builder()
            .app_id(app_id)
            .app_secret(app_secret)
            .domain(domain)
            .log_level(lark.LogLevel.WARNING)
            .build()
        )
        events = (
            lark.EventDispatcherHandler.builder("", "")
            .register_p2_im_message_receive_v1(self._message)
            .register_p2_card_action_trigger(self._clicked)
            .build()
        )
        self.socket = lark.ws.Client(
            app_id, app_secret, event_handler=events, domain=domain, log_level=lark.LogLevel.WARNING
        )
        self._thread: threading.Thread | None = None
        self._socket_loop: asyncio.AbstractEventLoop | None = None
        self._daemon_loop: asyncio.AbstractEventLoop | None = None

    async def start(self) -> None:
        self._daemon_loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run_socket, name="feishu long connection", daemon=True)
        self._thread.start()

    def _run_socket(self) -> None:
        self._socket_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._socket_loop)
        lark_ws.loop = self._socket_loop  # the SDK keeps its loop in a module global, taken at import
        with contextlib.suppress(Exception):  # stopping the loop ends start() with an error: that is the end
            self.socket.start()

    async def close(self) -> None:
        loop, thread = self._socket_loop, self._thread
        if loop is not None and thread is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.socket._disconnect(), loop).result(5)
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join, 5)

    def connected(self) -> bool:
        return self.socket._conn is not None  # the SDK says so nowhere else

    # --- from Feishu (on the SDK's thread) -------------------------------------------------------------------

    def _on_daemon(self, work: Any, timeout: float = 10) -> Any:
        assert self._daemon_loop is not None
        return asyncio.run_coroutine_threadsafe(work, self._daemon_loop).result(timeout)

    def _message(self, data: lark.im.v1.P2ImMessageReceiveV1) -> None:
        event = data.event
        if event is None or event.message is None or event.sender is None or event.message.message_type != "text":
            return
        text = MENTION.sub("", json.loads(event.message.content or "{}").get("text", ""))
        user = event.sender.sender_id.open_id if event.sender.sender_id else ""
        self._on_daemon(self._ask(user or "", event.message.chat_id or "", event.message.message_id or "", text))

    async def _ask(self, user: str, chat: str, message: str, text: str) -> None:
        refusal = self._chat.ask(self.name, user, chat, message, text)
        if refusal:
            with contextlib.suppress(ChatUnavailable):
                await self._reply(message, refusal)

    def _clicked(self, data: P2CardActionTrigger) -> P2CardActionTriggerResponse:
        event = data.event
        value = (event.action.value if event and event.action else None) or {}
        user = event.operator.open_id if event and event.operator else ""
        if value.get("verb") not in ("approve", "deny") or not value.get("request"):
            return P2CardActionTriggerResponse({})
        refusal = self._on_daemon(self._answer(user or "", value["request"], value["verb"]))
        return P2CardActionTriggerResponse(
            {"toast": {"type": "warning" if refusal else "success", "content": refusal or "Done"}}
        )

    async def _answer(self, user: str, request_id: str, verb: str) -> str | None:
        return self._chat.answer(self.name, user, request_id, verb)

    # --- to Feishu -----------------------------------------------------------------------------------------

    async def deliver(self, item: Outgoing, thread: Thread) -> dict[str, str | None]:
        text, buttons = item.body["text"], item.body.get("buttons")
        if item.kind == "answered":
            if thread.approval is None:
                return {}
            request = (
                PatchMessageRequest.builder()
                .message_id(thread.approval)
                .request_body(PatchMessageRequestBody.builder().content(card(text)).build())
                .build()
            )
            self._checked(await self.api.im.v1.message.apatch(request))
            return {"approval": None}
        content = card(text, item.request_id if buttons else None)
        parent = thread.thread or thread.origin
        if parent is not None:
            posted = await self._reply(parent, content=content)
        else:
            request = (
                CreateMessageRequest.builder()
                .receive_id_type("chat_id")
                .request_body(
                    CreateMessageRequestBody.builder()
                    .receive_id(thread.channel)
                    .msg_type("interactive")
                    .content(content)
                    .build()
                )
                .build()
            )
            posted = self._checked(await self.api.im.v1.message.acreate(request)).data.message_id
        refs: dict[str, str | None] = {}
        if item.kind == "open":
            refs["thread"] = parent or posted
            if buttons:
                refs["approval"] = posted
        return refs

    async def _reply(self, parent: str, text: str = "", content: str | None = None) -> str:
        request = (
            ReplyMessageRequest.builder()
            .message_id(parent)
            .request_body(
                ReplyMessageRequestBody.builder()
                .msg_type("interactive")
                .content(content or card(text))
                .reply_in_thread(True)
                .build()
            )
            .build()
        )
        return str(self._checked(await self.api.im.v1.message.areply(request)).data.message_id)

    @staticmethod
    def _checked(response: Any) -> Any:
        if response.success():
            return response
        raw = response.raw
        status = raw.status_code if raw is not None else 0
        headers = raw.headers if raw is not None else {}
        wait = headers.get("Retry-After") or headers.get("x-ogw-ratelimit-reset")
        raise ChatUnavailable(
            f"Feishu answered {status} {response.code} {response.msg}", float(wait) if wait and status == 429 else None
        )
