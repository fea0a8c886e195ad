"""The owner's chat connectors: add one (its tokens checked, then kept in the keyring), say who is who, remove."""

from collections.abc import Callable

from fastapi import FastAPI, Request
from pydantic import Field

from desktop import answers as a
from desktop.api.models import Body, Empty
from desktop.connectors.owned import ChatSetup
from desktop.core.actors import Actor


class NewConnector(Body):
    kind: str = Field(min_length=1, max_length=20)
    app_token: str = Field(default="", max_length=500)  # Slack
    bot_token: str = Field(default="", max_length=500)  # Slack
    app_id: str = Field(default="", max_length=100)  # Feishu
    app_secret: str = Field(default="", max_length=500)  # Feishu
    channel: str | None = Field(default=None, max_length=100)  # where threads of requests from elsewhere go
    base_url: str | None = Field(default=None, max_length=300)


class ChatPersonChange(Body):
    chat_user: str = Field(min_length=1, max_length=100)
    person: str | None = Field(default=None, max_length=64)  # None: forget this chat user


def add_chat(api: FastAPI, chat: ChatSetup, owner: Callable[[Request], Actor]) -> None:
    @api.get("/api/connectors")
    async def connectors(request: Request) -> list[a.Connector]:
        owner(request)
        return [a.Connector.model_validate(shown) for shown in chat.listing()]

    @api.post("/api/connectors", status_code=201)
    async def add(body: NewConnector, request: Request) -> a.Connected:
        who = owner(request)
        tokens = {"app_token": body.app_token, "bot_token": body.bot_token, "app_secret": body.app_secret}
        config = {
            "channel": body.channel,
            "base_url": body.base_url,
            **({"app_id": body.app_id} if body.app_id else {}),
        }
        return a.Connected(name=body.kind, connected_to=await chat.add(body.kind, tokens, config, who))

    @api.post("/api/connectors/{name}/people")
    async def map_person(name: str, body: ChatPersonChange, request: Request) -> a.ChatPerson:
        chat.map_person(name, body.chat_user, body.person, owner(request))
        return a.ChatPerson(chat_user=body.chat_user, person=body.person)

    @api.post("/api/connectors/{name}/remove")
    async def remove(name: str, body: Empty, request: Request) -> a.Removed:
        await chat.remove(name, owner(request))
        return a.Removed(removed=name)
