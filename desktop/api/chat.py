"""The owner's chat connectors: add one (its tokens checked, then kept in the keyring), say who is who, remove."""

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from pydantic import Field

from desktop.api.models import Body, Empty
from desktop.connectors import setup
from desktop.connectors.service import Chat
from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import NotFound
from desktop.core.principals import check_name
from desktop.platform.secrets import Secrets
from desktop.store import chat as sql
from desktop.store import directory
from desktop.store.db import Store


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


def add_chat(api: FastAPI, chat: Chat, store: Store, secrets: Secrets, problems: dict[str, str],
             wall: Callable[[], float], owner: Callable[[Request], Actor]) -> None:
    @api.get("/api/connectors")
    async def connectors(request: Request) -> list[dict[str, Any]]:
        owner(request)
        return setup.listing(chat, store, problems)

    @api.post("/api/connectors", status_code=201)
    async def add(body: NewConnector, request: Request) -> dict[str, str]:
        who = owner(request)
        tokens = {"app_token": body.app_token, "bot_token": body.bot_token, "app_secret": body.app_secret}
        config = {"channel": body.channel, "base_url": body.base_url, **({"app_id": body.app_id} if body.app_id
                                                                          else {})}
        said = await setup.add(chat, store, secrets, body.kind, tokens, config, wall())
        problems.pop(body.kind, None)
        with store.transaction() as conn:
            audit.append(conn, wall(), who, "add_connector", None, f"connected {body.kind} ({said})")
        return {"name": body.kind, "connected_to": said}

    @api.post("/api/connectors/{name}/people")
    async def map_person(name: str, body: ChatPerson, request: Request) -> dict[str, str | None]:
        who = owner(request)
        if name not in sql.connectors(store.conn):
            raise NotFound(f"there is no connector '{name[:20]}'")
        if body.person is not None:
            check_name(body.person, "person")
            row = directory.principal(store.conn, body.person)
            if row is None or row.revoked_at is not None or row.kind not in ("person", "owner"):
                raise NotFound(f"there is no person '{body.person}'")
        with store.transaction() as conn:
            sql.map_person(conn, name, body.chat_user, body.person)
            audit.append(conn, wall(), who, "map_chat_user", None,
                         f"{name} user {body.chat_user} is {body.person or 'nobody now'}")
        return {"chat_user": body.chat_user, "person": body.person}

    @api.post("/api/connectors/{name}/remove")
    async def remove(name: str, body: Empty, request: Request) -> dict[str, str]:
        who = owner(request)
        await chat.remove(name)
        with store.transaction() as conn:
            sql.remove_connector(conn, name)
            audit.append(conn, wall(), who, "remove_connector", None, f"removed {name}")
        return {"removed": name}
