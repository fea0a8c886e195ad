"""What the fake chats share: an aiohttp server on 127.0.0.1 with its own loop on a thread, the WebSockets its
clients hold, and going offline (`drop`: sockets broken, nothing answers) and back (`restore`)."""

import asyncio
import threading
import time
from typing import Any

from aiohttp import web


class FakeChat:
    def __init__(self) -> None:
        self.port = 0
        self.down = False
        self.connections = 0
        self.sockets: list[web.WebSocketResponse] = []
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    def routes(self, app: web.Application) -> None:
        raise NotImplementedError

    def start(self) -> Any:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._serve(), self.loop).result(10)
        return self

    def stop(self) -> None:
        self.drop()  # a client still connected would hold the server's shutdown up
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)

    async def _serve(self) -> None:
        app = web.Application()
        self.routes(app)
        self._runner = web.AppRunner(app, shutdown_timeout=2)  # a client that reconnected must not hold stop() up
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def on_loop(self, work: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(work, self.loop).result(10)

    def drop(self) -> None:
        """The laptop goes offline: the socket breaks and nothing answers until `restore`."""
        self.down = True
        for sock in list(self.sockets):
            self.on_loop(sock.close())
        self.sockets.clear()

    def restore(self) -> None:
        self.down = False

    def connected(self) -> bool:
        return any(not sock.closed for sock in self.sockets)

    def wait(self, check: Any, timeout: float = 30, what: str = "the fake chat") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}: {vars(self)}")
            time.sleep(0.05)
