"""Native notifications with buttons (desktop-notifier: D-Bus on Linux, the Notification Center on macOS, toasts on
Windows). desktop-notifier is loaded with the first notification. A failure — no bus, no server, a server that went
away — is an answer (None), never an exception: the caller falls back (the tray's balloon)."""

import logging
from collections.abc import Callable
from typing import Any

from desktop.resources import resource

log = logging.getLogger(__name__)
Action = Callable[[], None]


class NativeNotifications:
    def __init__(self, app_name: str = "Coxswain") -> None:
        self._app_name = app_name
        self._notifier: Any = None

    async def send(self, title: str, message: str, buttons: list[tuple[str, Action]], on_clicked: Action
                   ) -> str | None:
        """The notification's identifier once it is shown, or None when it could not be."""
        from desktop_notifier import Button, DesktopNotifier, Icon

        if self._notifier is None:
            self._notifier = DesktopNotifier(app_name=self._app_name, app_icon=Icon(path=resource("tray-waiting.svg")))
        try:
            identifier: str = await self._notifier.send(
                title, message, buttons=[Button(label, on_pressed=pressed) for label, pressed in buttons],
                on_clicked=on_clicked)
            # desktop-notifier logs a failure rather than raising it; a notification it knows of was delivered
            shown = identifier in await self._notifier.get_current_notifications()
        except Exception:
            log.info("no native notification", exc_info=True)
            return None
        return identifier if shown else None

    async def withdraw(self, identifier: str) -> None:
        if self._notifier is None:
            return
        try:
            await self._notifier.clear(identifier)
        except Exception:  # the server went away: nothing is shown there any more either
            log.info("could not withdraw notification %s", identifier, exc_info=True)
