"""One sequential queue per agent: at most one running request each, started in approval order; agents run in
parallel, except that at most 4 sessions agents started run at once. The queue is the database (approved requests
ordered by `queue_seq`), so it survives restarts."""

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from desktop.core.ledger import Ledger
from desktop.core.settings import current
from desktop.sessions import sql as sessions_sql
from desktop.store import requests as sql
from desktop.store.db import Store
from desktop.store.rows import RequestRow

log = logging.getLogger(__name__)
MAX_SESSIONS_RUNNING = 4  # sessions agents started, running at once (desktop.sessions.rules refuses a fifth start)
Launcher = Callable[[RequestRow], Coroutine[Any, Any, None]]


class Dispatcher:
    def __init__(self, store: Store, ledger: Ledger, launch: Launcher) -> None:
        self._store, self._ledger, self._launch = store, ledger, launch
        self._scheduled = False
        self._launches: set[asyncio.Task[None]] = set()
        self.paused = False  # while the machine sleeps

    def kick(self) -> None:
        """Look at the queues soon; many kicks in one loop iteration make one pass."""
        if not self._scheduled:
            self._scheduled = True
            asyncio.get_running_loop().call_soon(self._pass)

    def _pass(self) -> None:
        self._scheduled = False
        if self.paused or current(self._store.conn, "agents_paused"):  # asleep, or the owner paused all agents
            return
        sessions_running: int | None = None  # counted when a session has work, not on every pass
        for agent, busy in sql.agents_with_work(self._store.conn):
            if busy:
                continue
            if sessions_sql.get(self._store.conn, agent) is not None:
                if sessions_running is None:
                    sessions_running = len(sessions_sql.with_prompts(self._store.conn, ("running",)))
                if sessions_running >= MAX_SESSIONS_RUNNING:  # its prompt waits for one of them to end
                    continue
                sessions_running += 1
            waiting = sql.next_in_queue(self._store.conn, agent)
            if waiting is None:
                continue
            running = self._ledger.dispatch(waiting.id)
            task = asyncio.create_task(self._launch(running), name=f"launch {running.id}")
            self._launches.add(task)
            task.add_done_callback(self._launches.discard)
