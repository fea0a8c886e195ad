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

KINDS = ("slack", "feishu")


async def add(chat: Chat, store: Store, secrets: Secrets, kind: str, tokens: dict[str, str], config: dict[str, Any],
              at: float) -> str:
    """Check, store and start; returns what the chat said the tokens are (e.g. the workspace and bot)."""
    if kind not in KINDS:
        raise NotFound(f"there is no connector '{kind[:20]}'; known: {', '.join(KINDS)}")
    try:
        if kind == "slack":
            from desktop.connectors import slack  # each SDK loads only for a daemon that uses it

            said = await slack.check(tokens.get("app_token", ""), tokens.get("bot_token", ""),
                                     config.get("base_url") or slack.DEFAULT_API)
        else:
            feishu = await asyncio.to_thread(importlib.import_module, "desktop.connectors.feishu")
            said = await feishu.check(config.get("app_id") or "", tokens.get("app_secret", ""),
                                      config.get("base_url") or feishu.DEFAULT_DOMAIN)
    except ValueError as error:
        raise Invalid(str(error)) from None
    if kind == "slack":
        secrets.set_chat("slack_app_token", tokens["app_token"])
        secrets.set_chat("slack_bot_token", tokens["bot_token"])
    else:
        secrets.set_chat("feishu_app_secret", tokens["app_secret"])
    with store.transaction() as conn:
        sql.set_connector(conn, kind, {**config, "kind": kind}, at)
    await chat.add(await build(chat, secrets, kind, config))
    return said


async def build(chat: Chat, secrets: Secrets, name: str, config: dict[str, Any]) -> Connector:
    if name == "feishu":
        # lark-oapi imports 11,000 modules (2 s, ~150 MB): only for a daemon that uses it, and off the loop
        feishu = await asyncio.to_thread(importlib.import_module, "desktop.connectors.feishu")
        app_secret = secrets.chat("feishu_app_secret")
        if not app_secret:
            raise Invalid("the feishu app secret is not in the keyring; add the connector again")
        connector: Connector = feishu.FeishuConnector(chat, config["app_id"], app_secret,
                                                      config.get("base_url") or feishu.DEFAULT_DOMAIN)
        return connector
    app_token, bot_token = secrets.chat("slack_app_token"), secrets.chat("slack_bot_token")
    if not app_token or not bot_token:
        raise Invalid(f"the {name} tokens are not in the keyring; add the connector again")
    from desktop.connectors import slack

    return slack.SlackConnector(chat, app_token, bot_token, config.get("base_url") or slack.DEFAULT_API)


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
    return [{"name": name, "channel": config.get("channel"), "people": sql.people(store.conn, name),
             "connected": name in chat.connectors and chat.connectors[name].connected(),
             "problem": problems.get(name)}
            for name, config in sql.connectors(store.conn).items()]
