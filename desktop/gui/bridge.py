"""The one path from the daemon's events to Qt: a task on the shared qasync loop re-emits each event as a signal."""

import asyncio
from typing import Any

from PySide6.QtCore import QObject, Signal

from desktop.core.events import EventBus


class Bridge(QObject):
    received = Signal(dict)  # each event the daemon publishes

    def __init__(self, events: EventBus) -> None:
        super().__init__()
        self._events = events
        self._pump: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._pump = asyncio.ensure_future(self._run())

    def stop(self) -> None:
        if self._pump is not None:
            self._pump.cancel()

    async def _run(self) -> None:
        with self._events.subscribe() as queue:
            while True:
                event: dict[str, Any] = await queue.get()
                self.received.emit(event)
