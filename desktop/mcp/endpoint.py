"""`/mcp` in the daemon's HTTP server. The MCP SDK costs about 0.4 s to import and 27 MB, and only agent sessions
use it, so the server is built before the first agent CLI turn starts (the import on a thread), never while a CLI
waits for its handshake. Its session
manager then runs in one task of its own until the daemon stops."""

import asyncio
import importlib
from contextvars import ContextVar
from typing import Any

from starlette.responses import JSONResponse

from desktop.core.actors import Actor
from desktop.core.events import EventBus
from desktop.core.ledger import Ledger
from desktop.sessions.rules import Sessions
from desktop.tasks.background import BackgroundTasks

CALLER: ContextVar[Actor] = ContextVar("caller")  # set for each HTTP call; the tools act as this agent


class McpEndpoint:
    """The ASGI handler of `/mcp`: the security middleware has checked the token; the caller is its agent."""

    def __init__(self, ledger: Ledger, tasks: BackgroundTasks, events: EventBus, sessions: Sessions) -> None:
        self._parts = ledger, tasks, events, sessions
        self._ready = asyncio.Event()
        self._stopping = asyncio.Event()
        self._serving: asyncio.Task[None] | None = None
        self._sessions: Any = None

    async def close(self) -> None:
        self._stopping.set()
        if self._serving is not None:
            await asyncio.wait_for(self._serving, 5)

    async def _serve(self) -> None:
        """Build the server, then keep its session manager running until `close()`."""
        try:
            server = await asyncio.to_thread(importlib.import_module, "desktop.mcp.server")
            sessions = server.session_manager(*self._parts)
            async with sessions.run():
                self._sessions = sessions
                self._ready.set()
                await self._stopping.wait()
        finally:
            self._sessions = None
            self._ready.set()  # calls waiting now are answered: 503 if the server could not start

    async def ready(self) -> bool:
        """Start the server if it is not up yet; True once it serves, False if it could not start."""
        if self._serving is None and not self._stopping.is_set():
            self._serving = asyncio.create_task(self._serve(), name="mcp")
        await self._ready.wait()
        return self._sessions is not None

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not await self.ready():
            await JSONResponse({"error": "the MCP server is not running"}, status_code=503)(scope, receive, send)
            return
        CALLER.set(scope["state"]["actor"])
        await self._sessions.handle_request(scope, receive, send)
