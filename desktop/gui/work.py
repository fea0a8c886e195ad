"""Coroutines started from Qt callbacks (a click, a timer): kept until they finish, and cancelled together when
their window or the app goes away."""

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Work:
    def __init__(self) -> None:
        self._running: set[asyncio.Task[Any]] = set()

    def start(self, work: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(work)
        self._running.add(task)
        task.add_done_callback(self._finished)

    def cancel(self) -> None:
        for task in list(self._running):
            task.cancel()

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s failed", task.get_coro(), exc_info=task.exception())
