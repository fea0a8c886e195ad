"""A background continuation in the chat, as people in the channel read it: no thread of its own, but replies in the
thread of the request it continues (up a chain of continuations), saying what ended and, on what it says after,
which request it is. The daemon's chat side (desktop.connectors) in this process on a real SQLite ledger, the real
Continuations making the turn from tasks that ended, and the official slack_sdk / Feishu SDK against the fake chats."""

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from desktop.connectors.feishu import FeishuConnector
from desktop.connectors.service import Chat
from desktop.connectors.slack import SlackConnector
from desktop.core.ledger import Ledger
from desktop.store import chat as chat_sql
from desktop.store.db import Store
from desktop.store.rows import RequestRow
from desktop.tasks.continuations import Continuations
from tests.fakes.feishu import APP_ID, APP_SECRET, FakeFeishu, text_of
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.ledger_fixture import OWNER, SARAH, MovableClock, make_ledger
from tests.unit.test_continuations_rules import ended_task, settled


async def until(check: Callable[[], Any], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.05)


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    server = await asyncio.to_thread(lambda: FakeSlack().start())
    yield server
    await asyncio.to_thread(server.stop)


async def chat_on(store: Store, ledger: Ledger, connector: Callable[[Chat], Any], name: str) -> Chat:
    """The daemon's chat side with one connector whose default channel is C9, hearing the ledger."""
    with store.transaction() as conn:
        chat_sql.set_connector(conn, name, {"channel": "C9"}, 0.0)
    chat = Chat(store, ledger, time.time)
    ledger.listeners.append(chat.on_change)
    await chat.add(connector(chat))
    return chat


async def woken(store: Store, ledger: Ledger, folder: Path, origin: RequestRow, task_id: str) -> RequestRow:
    """The task `origin`'s turn started failed: the turn Continuations makes of it."""
    continuations = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)
    continuations.task_ended(ended_task(store, folder, task_id, origin.id, 2, "collected 4 items\n1 failed\n"))
    await settled(continuations)
    [made] = [r for r in ledger.listing(OWNER) if r.continuation_of == origin.id]
    return made


def ran(ledger: Ledger, request_id: str, result: str) -> None:
    ledger.dispatch(request_id)
    ledger.finish(request_id, 0, result)


async def test_a_continuation_replies_in_its_origins_thread_along_a_chain(tmp_path: Path, slack: FakeSlack) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    chat = await chat_on(store, ledger, lambda c: SlackConnector(c, APP_TOKEN, BOT_TOKEN, slack.url), "slack")
    try:
        origin = ledger.approve(ledger.create(SARAH, "api", "run the unit tests in the background").id, OWNER)
        await until(lambda: slack.messages, "the origin's thread")
        root = slack.messages[0]
        assert root["channel"] == "C9" and root["text"].startswith(f"{origin.id} · api · run the unit tests")
        ran(ledger, origin.id, "Started T1 (unit tests); I will look when it ends.")

        first = await woken(store, ledger, tmp_path, origin, "T1")
        ran(ledger, first.id, "test_login failed: the token <b>expired</b>; fixed in auth.py")
        await until(lambda: any(t.startswith(f"{first.id}: Done.") for t in slack.thread(root["ts"])), "its result")
        second = await woken(store, ledger, tmp_path, first, "T2")  # the first's own task: a chain
        await until(lambda: any(f"{second.id} · api reviews" in t for t in slack.thread(root["ts"])), "the chain")

        assert [m for m in slack.messages if m.get("thread_ts") is None] == [root], "no thread of their own"
        assert slack.thread(root["ts"])[1:] == [  # after the origin's start and its result
            "Started on agent api",
            "Done.\nStarted T1 (unit tests); I will look when it ends.\n"
            f"The whole console: `cox logs {origin.id}` or the room.",
            f"Background continuation of {origin.id}: T1 (unit tests) failed (exit 2) after 1 min 04 s.\n"
            f"{first.id} · api reviews it for sarah.",
            f"{first.id}: Started on agent api",
            f"{first.id}: Done.\ntest_login failed: the token &lt;b&gt;expired&lt;/b&gt;; fixed in auth.py\n"
            f"The whole console: `cox logs {first.id}` or the room.",
            f"Background continuation of {first.id}: T2 (unit tests) failed (exit 2) after 1 min 04 s.\n"
            f"{second.id} · api reviews it for sarah.",
        ]
    finally:
        await chat.close()


async def test_a_continuation_made_while_the_chat_is_away_still_lands_in_its_origins_thread(
    tmp_path: Path, slack: FakeSlack
) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    chat = await chat_on(store, ledger, lambda c: SlackConnector(c, APP_TOKEN, BOT_TOKEN, slack.url), "slack")
    try:
        await until(slack.connected, "the socket")
        await asyncio.to_thread(slack.drop)  # offline before the origin's thread was posted
        origin = ledger.create(OWNER, "api", "start the dev server")
        ran(ledger, origin.id, "Started T1.")
        first = await woken(store, ledger, tmp_path, origin, "T1")
        await asyncio.to_thread(slack.restore)
        await until(lambda: any(m["text"].startswith("Background continuation") for m in slack.messages), "all")
        [root] = [m for m in slack.messages if m.get("thread_ts") is None]
        assert root["text"].startswith(f"{origin.id} · api · start the dev server")
        told = slack.thread(root["ts"])[-1]
        assert told.startswith(f"Background continuation of {origin.id}: T1 (unit tests) failed (exit 2)")
        ran(ledger, first.id, "The server died: port 5173 is taken.")
        await until(lambda: slack.thread(root["ts"])[-1].startswith(f"{first.id}: Done."), "its result in the thread")
    finally:
        await chat.close()


async def test_a_continuation_of_a_request_with_no_thread_opens_none(tmp_path: Path, slack: FakeSlack) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    origin = ledger.create(OWNER, "api", "made before the chat was connected")
    chat = await chat_on(store, ledger, lambda c: SlackConnector(c, APP_TOKEN, BOT_TOKEN, slack.url), "slack")
    try:
        ran(ledger, origin.id, "Started T1.")
        first = await woken(store, ledger, tmp_path, origin, "T1")
        later = ledger.create(OWNER, "api", "echo after")  # the outbox is in order: this one's comes after
        await until(lambda: slack.messages, "the later request's thread")
        assert [m["text"].split(" · ")[0] for m in slack.messages] == [later.id]
        assert chat_sql.thread(store.conn, "slack", first.id) is None
    finally:
        await chat.close()


async def test_feishu_replies_in_the_origins_thread(tmp_path: Path) -> None:
    feishu = await asyncio.to_thread(lambda: FakeFeishu().start())
    store, ledger = make_ledger(tmp_path, MovableClock())
    chat = await chat_on(store, ledger, lambda c: FeishuConnector(c, APP_ID, APP_SECRET, feishu.url), "feishu")
    try:
        origin = ledger.create(OWNER, "api", "run the unit tests in the background")
        ran(ledger, origin.id, "Started T1.")
        first = await woken(store, ledger, tmp_path, origin, "T1")
        await until(lambda: any("Background continuation" in text_of(m["content"]) for m in feishu.messages), "it")
        [root] = [m for m in feishu.messages if m["parent"] is None]
        assert root["chat"] == "C9" and text_of(root["content"]).startswith(f"{origin.id} · api · run the unit")
        assert feishu.thread(root["id"])[-1] == (
            f"Background continuation of {origin.id}: T1 (unit tests) failed (exit 2) after 1 min 04 s.\n"
            f"{first.id} · api reviews it for owner."
        )
    finally:
        await chat.close()
        await asyncio.to_thread(feishu.stop)
