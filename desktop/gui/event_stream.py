"""The tray app follows the daemon's event stream like every other client: each event is re-emitted as a Qt signal
(its JSON object, "type" its name). After a (re)connection "hello" comes first: what was missed must be read again."""

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QObject, Signal

if TYPE_CHECKING:  # (the client is loaded after the tray icon shows)
    from desktop.client.transport import AsyncClient

log = logging.getLogger(__name__)
RETRY_SECONDS = 1.0
SILENT_SECONDS = 45.0  # the daemon says something (a ping) every 15 s: a stream silent this long is dead


class EventStream(QObject):
    received = Signal(dict)  # each event: {"type": name, ...its data}

    def __init__(self, client: "AsyncClient") -> None:
        super().__init__()
        self._client = client
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pump: asyncio.Task[None] | None = None
        self._stopped = False
        self.following = asyncio.Event()  # set at the first "hello": from then on, no change is missed

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._follow()

    def stop(self) -> None:
        self._stopped = True
        if self._pump is not None:
            self._pump.cancel()

    def _follow(self) -> None:
        if self._stopped or self._loop is None:
            return
        self._pump = self._loop.create_task(self._run())
        self._pump.add_done_callback(self._ended)

    def _ended(self, pump: "asyncio.Task[None]") -> None:
        """The stream ended (the daemon restarting, a dropped connection, Qt running a step outside the loop):
        follow again a moment later."""
        if not self._stopped and not pump.cancelled() and self._loop is not None:
            self._loop.call_later(RETRY_SECONDS, self._follow)

    async def _run(self) -> None:
        import httpx  # (loaded with the client, after the tray icon shows)
        from httpx_sse import aconnect_sse

        from desktop.client.api import EVENTS

        silent = httpx.Timeout(10.0, read=SILENT_SECONDS, pool=None)
        try:
            async with aconnect_sse(self._client.http, "GET", EVENTS, timeout=silent) as source:
                async for event in source.aiter_sse():
                    data: dict[str, Any] = json.loads(event.data) if event.data else {}
                    data["type"] = event.event
                    if event.event == "hello":
                        self.following.set()
                    self.received.emit(data)
        except Exception as error:
            log.warning("the event stream ended (%r); following again", error)
