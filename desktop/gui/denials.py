"""Deny with a way back: the owner's Deny (tray, card, console, notification) reaches the daemon only after a few
seconds, and Undo (or Approve) in that time takes it back. A request answered elsewhere meanwhile drops the Deny; one
that would expire first is denied at once; quitting sends what waits at once: a Deny is never lost or late."""

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from desktop.core.ids import short_form
from desktop.gui.notices import Notice

UNDO_SECONDS = 6.0
log = logging.getLogger(__name__)


class Denials:
    def __init__(
        self, send: Callable[[str], Awaitable[None]], changed: Callable[[str, str], None], seconds: float = UNDO_SECONDS
    ) -> None:
        """`send(id)` denies through the API; `changed(id, what)` tells the windows a Deny began ("denied"), was taken
        back ("undone"), is being sent ("final") or was dropped because the request was answered anyway ("dropped")."""
        self._send, self._changed, self.seconds = send, changed, seconds
        self._waiting: dict[str, asyncio.TimerHandle] = {}
        self.sent: set[str] = set()  # the Denies that went to the daemon (too late to undo)
        self._sending: set[asyncio.Task[None]] = set()

    def deny(self, request_id: str, seconds_left: float | None = None) -> None:
        """Deny in a few seconds, or at once when the request's approval would run out before (`seconds_left`)."""
        if request_id in self._waiting:
            return
        if seconds_left is not None and seconds_left <= self.seconds + 1:
            self._final(request_id)
            return
        self._waiting[request_id] = asyncio.get_running_loop().call_later(self.seconds, self._final, request_id)
        self._changed(request_id, "denied")

    def undo(self, request_id: str) -> bool:
        """Take a Deny back (True) if it has not reached the daemon yet."""
        if not self._cancel(request_id):
            return False
        self._changed(request_id, "undone")
        return True

    def drop(self, request_id: str) -> None:
        """The request was answered elsewhere (approved, cancelled, expired): a Deny waiting for it has no work."""
        if self._cancel(request_id):
            self._changed(request_id, "dropped")

    def waiting(self, request_id: str) -> bool:
        return request_id in self._waiting

    def waiting_ids(self) -> list[str]:
        return list(self._waiting)

    async def flush(self) -> None:
        """Send every Deny still waiting, now (the app is quitting)."""
        for request_id in list(self._waiting):
            self._cancel(request_id)
            self._final(request_id)
        if self._sending:
            await asyncio.gather(*self._sending, return_exceptions=True)

    def _cancel(self, request_id: str) -> bool:
        handle = self._waiting.pop(request_id, None)
        if handle is not None:
            handle.cancel()
        return handle is not None

    def _final(self, request_id: str) -> None:
        self._waiting.pop(request_id, None)
        self.sent.add(request_id)
        self._changed(request_id, "final")
        task = asyncio.ensure_future(self._send(request_id))
        self._sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: "asyncio.Task[None]") -> None:
        self._sending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a Deny did not reach the daemon", exc_info=task.exception())


def denied_notice(request_id: str, seconds: float) -> Notice:
    """What the owner is shown at once: the Deny, with Undo until it is final."""
    short = short_form(request_id, datetime.now(UTC).date())
    return Notice("denied", f"Denied {short}", f"It is final in {seconds:.0f} s: Undo takes it back.", request_id)
