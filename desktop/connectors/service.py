"""The chat side of the daemon: which request has a thread where, what each thread is still to be told (a durable
outbox, posted in order, each message once), and what people do from the chat (ask, approve, deny).
The ledger's listener only writes to the outbox; posting runs on its own task per connector, waits while the chat
is out of reach, and backs off on errors and rate limits, so the ledger is never held up by a chat. A background
continuation has no thread of its own: it is told as replies in the thread of the request it continues."""

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import replace
from typing import Any, Protocol

from desktop.connectors.notes import Note, notes
from desktop.core.actors import Actor
from desktop.core.errors import CoxError
from desktop.core.ledger import Ledger
from desktop.core.states import Action
from desktop.store import chat as sql
from desktop.store import requests as requests_sql
from desktop.store.chat import Outgoing, Thread
from desktop.store.db import Store
from desktop.store.rows import RequestRow

log = logging.getLogger(__name__)
ORIGIN: ContextVar[tuple[str, str, str] | None] = ContextVar("chat_origin", default=None)  # connector, channel, msg
BACKOFF = (1.0, 2.0, 5.0, 10.0, 30.0, 60.0)


class ChatUnavailable(Exception):
    """The chat did not take a message now (no network, an error, a rate limit): it is tried again later."""

    def __init__(self, why: str, retry_after: float | None = None) -> None:
        super().__init__(why)
        self.retry_after = retry_after


class Connector(Protocol):
    name: str

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def connected(self) -> bool: ...

    async def deliver(self, item: Outgoing, thread: Thread) -> dict[str, str | None]:
        """Post one outbox message; returns the thread references it made (`thread`, `approval`)."""


class Chat:
    def __init__(self, store: Store, ledger: Ledger, wall: Callable[[], float]) -> None:
        self._store, self._ledger, self._wall = store, ledger, wall
        self.connectors: dict[str, Connector] = {}
        self._wake: dict[str, asyncio.Event] = {}
        self._senders: dict[str, asyncio.Task[None]] = {}
        self._quarter: dict[str, int] = {}  # the last progress step told, per request

    # --- running ---------------------------------------------------------------------------------------------

    async def add(self, connector: Connector) -> None:
        await self.remove(connector.name)
        self.connectors[connector.name] = connector
        self._wake[connector.name] = asyncio.Event()
        self._senders[connector.name] = asyncio.create_task(self._send(connector), name=f"chat {connector.name}")

    async def remove(self, name: str) -> None:
        connector = self.connectors.pop(name, None)
        sender = self._senders.pop(name, None)
        if sender is not None:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await sender
        if connector is not None:
            await connector.close()

    async def close(self) -> None:
        for name in list(self.connectors):
            await self.remove(name)

    async def _send(self, connector: Connector) -> None:
        await connector.start()  # (it keeps trying until the chat answers)
        failures = 0
        while True:
            item = sql.next_outgoing(self._store.conn, connector.name)
            if item is None:
                self._wake[connector.name].clear()
                await self._wake[connector.name].wait()
                continue
            if not connector.connected():  # what happens meanwhile is posted, in order, once it is back
                await asyncio.sleep(0.5)
                continue
            thread = sql.thread(self._store.conn, connector.name, item.request_id)
            if thread is None:  # its thread is gone (the connector was removed and added again)
                self._posted(item, None, {})
                continue
            if thread.thread is None and thread.origin is None:  # a continuation's, made before its origin's posted
                thread = self._under_origin(thread)
            try:
                refs = await connector.deliver(item, thread)
            except Exception as error:  # ChatUnavailable, or a surprise: the message waits, the sender goes on
                retry_after = error.retry_after if isinstance(error, ChatUnavailable) else None
                wait = retry_after or BACKOFF[min(failures, len(BACKOFF) - 1)]
                failures += 1
                log.log(
                    logging.WARNING if isinstance(error, ChatUnavailable) else logging.ERROR,
                    "%s: %s; trying again in %.0f s",
                    connector.name,
                    error,
                    wait,
                    exc_info=not isinstance(error, ChatUnavailable),
                )
                await asyncio.sleep(wait)
                continue
            failures = 0
            self._posted(item, thread, refs)

    def _posted(self, item: Outgoing, thread: Thread | None, refs: dict[str, str | None]) -> None:
        with self._store.transaction() as conn:
            if thread is not None and refs:
                sql.set_thread(conn, item.connector, item.request_id, **refs)
            sql.posted(conn, item.seq, self._wall())

    # --- what the threads are told ---------------------------------------------------------------------------

    def on_change(self, request: RequestRow, action: Action) -> None:
        """The ledger's listener: the change's messages go to the outbox of each connector with a thread for it."""
        conn = self._store.conn
        if not self.connectors or (
            action != Action.CREATE
            and not any(  # most changes: no thread anywhere
                sql.thread(conn, name, request.id) for name in self.connectors
            )
        ):
            return
        question = self._ledger.open_question(request.id) if action == Action.ASK else None
        step = self._progress_step(request) if action == Action.PROGRESS else False
        found = notes(
            request, action, requests_sql.last_timeline(conn, request.id), question.text if question else None, step
        )
        if not found:
            return
        with self._store.transaction() as conn:
            for name in self.connectors:
                if action == Action.CREATE:
                    self._open_thread(conn, name, request)
                if sql.thread(conn, name, request.id) is None:
                    continue
                old = sql.thread(conn, name, request.retry_of) if request.retry_of else None
                for note in found:
                    body = _body(note)
                    if note.kind == "open" and old is not None and old.thread is not None:
                        body["retry_of"] = {"channel": old.channel, "thread": old.thread}  # linked in the message
                    sql.add_outgoing(conn, name, request.id, note.kind, body, self._wall())
        for name in self.connectors:
            self._wake[name].set()

    def _open_thread(self, conn: Any, name: str, request: RequestRow) -> None:
        origin = ORIGIN.get()
        config = sql.connectors(conn).get(name, {})
        if origin is not None and origin[0] == name:
            sql.add_thread(conn, name, request.id, origin[1], origin[2])
        elif request.retry_of and (old := sql.thread(conn, name, request.retry_of)) is not None:
            sql.add_thread(conn, name, request.id, old.channel, None)
        elif request.continuation_of:  # in its origin's thread, or nowhere: alone it would say nothing to anyone
            if (above := self._origin_thread(conn, name, request)) is not None:
                sql.add_thread(conn, name, request.id, above.channel, above.thread or above.origin)
        elif config.get("channel"):
            sql.add_thread(conn, name, request.id, config["channel"], None)

    def _origin_thread(self, conn: Any, name: str, request: RequestRow) -> Thread | None:
        """The thread of the request a continuation continues, following `continuation_of` up the chain."""
        for _ in range(100):
            if request.continuation_of is None:
                return None
            if (found := sql.thread(conn, name, request.continuation_of)) is not None:
                return found
            if (above := requests_sql.get(conn, request.continuation_of)) is None:
                return None
            request = above
        return None

    def _under_origin(self, thread: Thread) -> Thread:
        """A continuation's thread whose origin's was not posted when it was made: under the origin's, now posted (the
        outbox is in order)."""
        request = requests_sql.get(self._store.conn, thread.request_id)
        above = self._origin_thread(self._store.conn, thread.connector, request) if request else None
        if above is None or (above.thread or above.origin) is None:
            return thread
        return replace(thread, origin=above.thread or above.origin)

    def _progress_step(self, request: RequestRow) -> bool:
        """Progress is told in quarters, each once."""
        quarter = int((request.progress or 0) // 25)
        if quarter <= self._quarter.get(request.id, 0):
            return False
        self._quarter[request.id] = quarter
        return True

    # --- what people do from the chat ---------------------------------------------------------------------------

    def who(self, connector: str, chat_user: str) -> str | None:
        return sql.person(self._store.conn, connector, chat_user)

    def ask(self, connector: str, chat_user: str, channel: str, message: str, text: str) -> str | None:
        """A request from a chat message ("<agent> <prompt>"); None when it was made (its thread says so), else
        the refusal to say to that person. Nothing is queued for someone the owner has not named."""
        name = self.who(connector, chat_user)
        if name is None:
            return (
                "Sorry, I don't know who you are here yet, so nothing was queued. The owner can add you with "
                f"`cox connector map {connector} {chat_user} <your name>`."
            )
        if sql.has_origin(self._store.conn, connector, message):
            return None  # the chat delivered the same message again
        agent, _, prompt = text.strip().partition(" ")
        if not agent or not prompt.strip():
            return "Say which agent and what it should do, like `@coxswain api fix the flaky test`."
        kind = "owner" if name == self._ledger.owner else "person"
        with _origin((connector, channel, message)):
            try:
                self._ledger.create(Actor(name, kind), agent, prompt.strip())
            except CoxError as error:
                return f"Nothing was queued: {error}."
        return None

    def answer(self, connector: str, chat_user: str, request_id: str, verb: str) -> str | None:
        """An Approve or Deny click; None if it counted, else what to tell the person who clicked."""
        if self.who(connector, chat_user) != self._ledger.owner:
            return f"Only the owner can {verb} {request_id}; your click was not counted."
        owner = Actor(self._ledger.owner, "owner")
        try:
            (self._ledger.approve if verb == "approve" else self._ledger.deny)(request_id, owner)
        except CoxError as error:
            return str(error)
        return None


@contextlib.contextmanager
def _origin(origin: tuple[str, str, str]) -> Iterator[None]:
    token = ORIGIN.set(origin)
    try:
        yield
    finally:
        ORIGIN.reset(token)


def _body(note: Note) -> dict[str, Any]:
    return {"text": note.text, "buttons": note.buttons}
