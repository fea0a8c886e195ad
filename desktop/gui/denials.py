"""Deny with a way back: the owner's Deny (tray, card, console, notification) reaches the daemon only after a few
seconds, and Undo (or Approve) in that time takes it back. Quitting sends what waits at once: a Deny is never lost."""

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from desktop.core.ids import short_form
from desktop.gui.notices import Notice

UNDO_SECONDS = 6.0


class Denials:
    def __init__(self, send: Callable[[str], Awaitable[None]], changed: Callable[[str, str], None],
                 seconds: float = UNDO_SECONDS) -> None:
        """`send(id)` denies through the API; `changed(id, what)` tells the windows a Deny began ("denied"), was taken
        back ("undone") or is being sent ("final")."""
        self._send, self._changed, self.seconds = send, changed, seconds
        self._waiting: dict[str, asyncio.TimerHandle] = {}
        self.sent: set[str] = set()  # the Denies that went to the daemon (too late to undo)
        self._sending: set[asyncio.Task[None]] = set()

    def deny(self, request_id: str) -> None:
        if request_id in self._waiting:
            return
        loop = asyncio.get_running_loop()
        self._waiting[request_id] = loop.call_later(self.seconds, self._final, request_id)
        self._changed(request_id, "denied")

    def undo(self, request_id: str) -> bool:
        """Take a Deny back (True) if it has not reached the daemon yet."""
        handle = self._waiting.pop(request_id, None)
        if handle is None:
            return False
        handle.cancel()
        self._changed(request_id, "undone")
        return True

    def waiting(self, request_id: str) -> bool:
        return request_id in self._waiting

    async def flush(self) -> None:
        """Send every Deny still waiting, now (the app is quitting)."""
        for request_id in list(self._waiting):
            self._waiting.pop(request_id).cancel()
            self.sent.add(request_id)
            self._changed(request_id, "final")
            await self._send(request_id)
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def _final(self, request_id: str) -> None:
        self._waiting.pop(request_id, None)
        self.sent.add(request_id)
        self._changed(request_id, "final")
        task = asyncio.ensure_future(self._send(request_id))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)


def denied_notice(request_id: str, seconds: float) -> Notice:
    """What the owner is shown at once: the Deny, with Undo until it is final."""
    short = short_form(request_id, datetime.now(UTC).date())
    return Notice("denied", f"Denied {short}", f"It is final in {seconds:.0f} s: Undo takes it back.", request_id)
