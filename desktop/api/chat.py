"""The owner's chat connectors: add one (its tokens checked, then kept in the keyring), say who is who, remove."""

from collections.abc import Callable

from fastapi import FastAPI, Request
from pydantic import BaseModel, Field

from desktop.api.models import Body, Empty, Removed
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


class ChatPerson(Body):
    chat_user: str = Field(min_length=1, max_length=100)
    person: str | None = Field(default=None, max_length=64)  # None: forget this chat user


class ConnectorOut(BaseModel):
    name: str
    channel: str | None
    people: dict[str, str]  # chat user -> person
    connected: bool
    problem: str | None  # why it could not start


class Connected(BaseModel):
    name: str
    connected_to: str  # what the chat said the tokens are


class ChatPersonOut(BaseModel):
    chat_user: str
    person: str | None


def add_chat(api: FastAPI, chat: ChatSetup, owner: Callable[[Request], Actor]) -> None:
    @api.get("/api/connectors")
    async def connectors(request: Request) -> list[ConnectorOut]:
        owner(request)
        return [ConnectorOut.model_validate(shown) for shown in chat.listing()]

    @api.post("/api/connectors", status_code=201)
    async def add(body: NewConnector, request: Request) -> Connected:
        who = owner(request)
        tokens = {"app_token": body.app_token, "bot_token": body.bot_token, "app_secret": body.app_secret}
        config = {
            "channel": body.channel,
            "base_url": body.base_url,
            **({"app_id": body.app_id} if body.app_id else {}),
        }
        return Connected(name=body.kind, connected_to=await chat.add(body.kind, tokens, config, who))

    @api.post("/api/connectors/{name}/people")
    async def map_person(name: str, body: ChatPerson, request: Request) -> ChatPersonOut:
        chat.map_person(name, body.chat_user, body.person, owner(request))
        return ChatPersonOut(chat_user=body.chat_user, person=body.person)

    @api.post("/api/connectors/{name}/remove")
    async def remove(name: str, body: Empty, request: Request) -> Removed:
        await chat.remove(name, owner(request))
        return Removed(removed=name)
