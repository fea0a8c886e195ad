"""Slack, with the official slack_sdk in Socket Mode (the laptop needs no public address): mentions of the bot and
the `/coxswain` command become requests, the Approve/Deny buttons answer them, and each request's thread is posted
with the Web API. The app token (xapp-…) and bot token (xoxb-…) come from the OS keyring."""

import contextlib
import logging
import re
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.async_client import AsyncBaseSocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient

from desktop.connectors.service import Chat, ChatUnavailable
from desktop.core.visible import visible
from desktop.store.chat import Outgoing, Thread

log = logging.getLogger(__name__)
MENTION = re.compile(r"<@[A-Z0-9]+>")
DEFAULT_API = "https://slack.com/api/"


def escaped(text: str) -> str:
    """Slack's control characters: nothing a prompt or a result says can ping a channel or forge a link."""
    return visible(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


async def check(tokens: dict[str, str], config: dict[str, Any]) -> str:
    """The workspace and bot the tokens belong to, or an error in words (a token of the wrong kind, revoked, …)."""
    app_token, bot_token = tokens.get("app_token", ""), tokens.get("bot_token", "")
    base_url = config.get("base_url") or DEFAULT_API
    if not app_token.startswith("xapp-") or not bot_token.startswith("xoxb-"):
        raise ValueError("Slack wants an app-level token (xapp-…, with connections:write) and a bot token (xoxb-…)")
    web = AsyncWebClient(token=bot_token, base_url=base_url)
    try:
        who = await web.auth_test()
        await web.apps_connections_open(app_token=app_token)
    except SlackApiError as error:
        raise ValueError(f"Slack refused the tokens: {error.response.get('error', error)}") from None
    except aiohttp.ClientError as error:
        raise ValueError(f"Slack cannot be reached: {error}") from None
    return f"{who.get('team', '?')} as {who.get('user', '?')}"


def make(chat: Chat, tokens: dict[str, str], config: dict[str, Any]) -> "SlackConnector":
    return SlackConnector(chat, tokens["app_token"], tokens["bot_token"], config.get("base_url") or DEFAULT_API)


class SlackConnector:
    name = "slack"

    def __init__(self, chat: Chat, app_token: str, bot_token: str, base_url: str = DEFAULT_API) -> None:
        self._chat = chat
        self.web = AsyncWebClient(token=bot_token, base_url=base_url)
        self.socket = SocketModeClient(app_token=app_token, web_client=self.web, ping_interval=2)
        self.socket.socket_mode_request_listeners.append(self._received)
        self._seen: dict[str, None] = {}  # envelopes already handled (Slack may send one again)

    async def start(self) -> None:
        await self.socket.connect()  # type: ignore[no-untyped-call]

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.socket.close()  # type: ignore[no-untyped-call]

    def connected(self) -> bool:
        session = self.socket.current_session
        return session is not None and not session.closed and not self.socket.closed

    # --- from Slack ----------------------------------------------------------------------------------------

    async def _received(self, client: AsyncBaseSocketModeClient, request: SocketModeRequest) -> None:
        await client.send_socket_mode_response(SocketModeResponse(envelope_id=request.envelope_id))
        if request.envelope_id in self._seen:
            return
        self._seen[request.envelope_id] = None
        if len(self._seen) > 1000:
            self._seen.pop(next(iter(self._seen)))
        try:
            await self._handle(request.type, request.payload)
        except Exception:  # a strange payload must not stop the connection
            log.exception("slack: could not handle a %s message", request.type)

    async def _handle(self, kind: str, payload: dict[str, Any]) -> None:
        if kind == "events_api" and payload.get("event", {}).get("type") == "app_mention":
            event = payload["event"]
            text = MENTION.sub("", event.get("text", ""), count=1)
            await self._ask(event["user"], event["channel"], event["ts"], text)
        elif kind == "slash_commands":
            posted = await self.web.chat_postMessage(
                channel=payload["channel_id"], text=f"<@{payload['user_id']}>: {escaped(payload['text'])}"
            )
            await self._ask(payload["user_id"], payload["channel_id"], str(posted["ts"]), payload.get("text", ""))
        elif kind == "interactive" and payload.get("type") == "block_actions":
            user, channel = payload["user"]["id"], payload["channel"]["id"]
            for action in payload.get("actions", []):
                if action.get("action_id") in ("approve", "deny"):
                    refusal = self._chat.answer(self.name, user, action["value"], action["action_id"])
                    if refusal:
                        await self.web.chat_postEphemeral(
                            channel=channel,
                            user=user,
                            text=escaped(refusal),
                            thread_ts=payload.get("message", {}).get("ts"),
                        )

    async def _ask(self, user: str, channel: str, ts: str, text: str) -> None:
        refusal = self._chat.ask(self.name, user, channel, ts, text)
        if refusal:
            await self.web.chat_postMessage(channel=channel, thread_ts=ts, text=escaped(refusal))

    # --- to Slack ------------------------------------------------------------------------------------------

    async def deliver(self, item: Outgoing, thread: Thread) -> dict[str, str | None]:
        text = escaped(item.body["text"])
        try:
            if item.body.get("retry_of"):
                old = item.body["retry_of"]
                link = await self.web.chat_getPermalink(channel=old["channel"], message_ts=old["thread"])
                text += f"\n<{link['permalink']}|The thread of the request it retries>"
            if item.kind == "answered":
                if thread.approval is None:
                    return {}
                await self.web.chat_update(channel=thread.channel, ts=thread.approval, text=text, blocks=[])
                return {"approval": None}
            blocks = _buttons(item.request_id, text) if item.body.get("buttons") else None
            posted = await self.web.chat_postMessage(
                channel=thread.channel,
                text=text,
                blocks=blocks,
                thread_ts=thread.thread or thread.origin,
                unfurl_links=False,
            )
        except SlackApiError as error:
            status, data = error.response.status_code, error.response.data
            retry = float(error.response.headers.get("Retry-After", 0) or 0) if status == 429 else None
            said = data.get("error", "") if isinstance(data, dict) else str(data)[:100]
            raise ChatUnavailable(f"Slack answered {status} {said}", retry) from None
        except (aiohttp.ClientError, TimeoutError) as error:
            raise ChatUnavailable(f"Slack cannot be reached: {error}") from None
        refs: dict[str, str | None] = {}
        if item.kind == "open":
            refs["thread"] = thread.origin or str(posted["ts"])
            if blocks:
                refs["approval"] = str(posted["ts"])
        return refs


def _buttons(request_id: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": text}},
        {
            "type": "actions",
            "block_id": f"answer {request_id}",
            "elements": [
                {
                    "type": "button",
                    "action_id": "approve",
                    "value": request_id,
                    "style": "primary",
                    "text": {"type": "plain_text", "text": "Approve"},
                },
                {
                    "type": "button",
                    "action_id": "deny",
                    "value": request_id,
                    "style": "danger",
                    "text": {"type": "plain_text", "text": "Deny"},
                },
            ],
        },
    ]
