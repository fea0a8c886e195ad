"""Adding a chat connector: its tokens are checked against the chat, kept in the OS keyring, and the connector is
started; its settings (channel, API address) go to the database. Also what the owner sees of each connector."""

import asyncio
import importlib
from typing import Any

from desktop.connectors.service import Chat, Connector
from desktop.core.errors import Invalid, NotFound
from desktop.platform.secrets import Secrets
from desktop.store import chat as sql
from desktop.store.db import Store

SECRET_NAMES = {
    "slack": {"app_token": "slack_app_token", "bot_token": "slack_bot_token"},  # field -> keyring name
    "feishu": {"app_secret": "feishu_app_secret"},
}


async def _sdk(kind: str) -> Any:
    """The connector's module, loaded only for a daemon that uses it and off the loop (lark-oapi imports 11,000
    modules: 2 s, ~150 MB)."""
    return await asyncio.to_thread(importlib.import_module, f"desktop.connectors.{kind}")


async def add(
    chat: Chat, store: Store, secrets: Secrets, kind: str, tokens: dict[str, str], config: dict[str, Any], at: float
) -> str:
    """Check, store and start; returns what the chat said the tokens are (e.g. the workspace and bot)."""
    if kind not in SECRET_NAMES:
        raise NotFound(f"there is no connector '{kind[:20]}'; known: {', '.join(SECRET_NAMES)}")
    try:
        said: str = await (await _sdk(kind)).check(tokens, config)
    except ValueError as error:
        raise Invalid(str(error)) from None
    for field, name in SECRET_NAMES[kind].items():
        secrets.set_chat(name, tokens[field])
    with store.transaction() as conn:
        sql.set_connector(conn, kind, {**config, "kind": kind}, at)
    await chat.add(await build(chat, secrets, kind, config))
    return said


async def build(chat: Chat, secrets: Secrets, name: str, config: dict[str, Any]) -> Connector:
    tokens = {field: secrets.chat(key) for field, key in SECRET_NAMES[name].items()}
    if not all(tokens.values()):
        raise Invalid(f"the {name} secrets are not in the keyring; add the connector again")
    connector: Connector = (await _sdk(name)).make(chat, tokens, config)
    return connector


async def start_all(chat: Chat, store: Store, secrets: Secrets) -> dict[str, str]:
    """Start every configured connector; returns the problems of those that could not start."""
    problems = {}
    for name, config in sql.connectors(store.conn).items():
        try:
            await chat.add(await build(chat, secrets, name, config))
        except Exception as error:  # a keyring that fails, tokens gone: said, the daemon goes on
            problems[name] = str(error)
    return problems


def listing(chat: Chat, store: Store, problems: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "channel": config.get("channel"),
            "people": sql.people(store.conn, name),
            "connected": name in chat.connectors and chat.connectors[name].connected(),
            "problem": problems.get(name),
        }
        for name, config in sql.connectors(store.conn).items()
    ]
