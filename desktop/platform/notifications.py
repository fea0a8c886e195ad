"""Native notifications with buttons (desktop-notifier: D-Bus on Linux, the Notification Center on macOS, toasts on
Windows). desktop-notifier is loaded with the first notification. A failure — no bus, no server, a server that went
away — is an answer (None), never an exception: the caller falls back (the tray's balloon).

Title and message are plain text, shown as they are (desktop.core.visible). A freedesktop notification server that
says it renders body markup gets the message with that markup escaped (`&`, `<`, `>`); the summary is never markup."""

import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from desktop.core.visible import markup, visible
from desktop.resources import resource

log = logging.getLogger(__name__)
Action = Callable[[], None]


class NativeNotifications:
    def __init__(self, app_name: str = "Coxswain") -> None:
        self._app_name = app_name
        self._notifier: Any = None
        self._markup: bool | None = None  # the server renders body markup (known after the first notification)

    async def send(
        self, title: str, message: str, buttons: list[tuple[str, Action]], on_clicked: Action, icon: Path | None = None
    ) -> str | None:
        """The notification's identifier once it is shown, or None when it could not be. `icon`: a picture file (a
        freedesktop server gets its file: URI as the app_icon), else the app's own."""
        from desktop_notifier import Button, DesktopNotifier, Icon

        if self._notifier is None:
            self._notifier = DesktopNotifier(app_name=self._app_name, app_icon=Icon(path=resource("tray-idle.svg")))
        try:
            if self._markup is None:
                self._markup = await _renders_markup()
            identifier: str = await self._notifier.send(
                visible(title),
                markup(message) if self._markup else visible(message),
                buttons=[Button(label, on_pressed=pressed) for label, pressed in buttons],
                on_clicked=on_clicked,
                icon=Icon(path=icon) if icon is not None else None,
            )
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


async def _renders_markup() -> bool:
    """Whether the freedesktop notification server says it renders markup in a body ("body-markup")."""
    if not sys.platform.startswith("linux"):
        return False
    from dbus_fast.aio import MessageBus

    bus = await MessageBus().connect()
    try:
        introspection = await bus.introspect("org.freedesktop.Notifications", "/org/freedesktop/Notifications")
        server = bus.get_proxy_object(
            "org.freedesktop.Notifications", "/org/freedesktop/Notifications", introspection
        ).get_interface("org.freedesktop.Notifications")
        capabilities: list[str] = await server.call_get_capabilities()  # type: ignore[attr-defined]
    finally:
        bus.disconnect()
    return "body-markup" in capabilities
