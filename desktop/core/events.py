"""In-process publish/subscribe of domain events; the API stream and the GUI bridge subscribe."""

import asyncio
import contextlib
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

Event = dict[str, Any]
T = TypeVar("T")


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self._queues: set[asyncio.Queue[Event]] = set()
        self._size = queue_size

    def publish(self, event: Event) -> None:
        for queue in list(self._queues):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:  # a stalled reader: tell it, rather than grow without bound
                queue.get_nowait()
                queue.put_nowait({"type": "lagged"})

    @contextlib.contextmanager
    def subscribe(self) -> Iterator["asyncio.Queue[Event]"]:
        queue: asyncio.Queue[Event] = asyncio.Queue(self._size)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            self._queues.discard(queue)

    async def until(self, found: Callable[[], T | None], left: Callable[[], float | None] = lambda: None) -> T | None:
        """`found()` now and after every event until it gives something; None once `left()` seconds run out.
        Subscribed before the first look, so nothing slips between a look and the wait."""
        with self.subscribe() as queue:
            while (value := found()) is None:
                seconds = left()
                if seconds is not None and seconds <= 0:
                    return None
                try:
                    await asyncio.wait_for(queue.get(), seconds)
                except TimeoutError:
                    return found()
            return value
