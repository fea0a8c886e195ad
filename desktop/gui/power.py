"""Sleep and wake notices where logind is not (the daemon listens to logind itself on Linux): Windows sends
WM_POWERBROADCAST to top-level windows (a hidden one of ours; message-only windows get none), macOS posts to
NSWorkspace's notification center. Both call the daemon's suspend()/resume(); everywhere the daemon's clock-gap
check catches what these miss. Not run on the Linux machine the tests run on: written against the documented
interfaces (desktop/platform/README.md says what was checked)."""

import sys
from collections.abc import Callable, Coroutine
from typing import Any

from PySide6.QtCore import QAbstractNativeEventFilter, QCoreApplication
from PySide6.QtWidgets import QWidget

from desktop.gui.work import Work

WM_POWERBROADCAST, PBT_APMSUSPEND, PBT_APMRESUMESUSPEND, PBT_APMRESUMEAUTOMATIC = 0x0218, 0x0004, 0x0007, 0x0012
Hook = Callable[[], Coroutine[Any, Any, None]]


class WindowsPowerEvents(QAbstractNativeEventFilter):
    def __init__(self, on_sleep: Hook, on_wake: Hook) -> None:
        super().__init__()
        self._on_sleep, self._on_wake, self._work = on_sleep, on_wake, Work()
        self._asleep = False
        self._window = QWidget()  # hidden, but a real top-level window: it gets the broadcast
        self._window.winId()
        app = QCoreApplication.instance()
        assert app is not None
        app.installNativeEventFilter(self)

    def nativeEventFilter(self, event_type: Any, message: Any) -> tuple[bool, int]:
        if bytes(event_type) == b"windows_generic_MSG":
            from ctypes import wintypes  # type: ignore[attr-defined, unused-ignore]

            msg = wintypes.MSG.from_address(int(message))
            if msg.message == WM_POWERBROADCAST:
                if msg.wParam == PBT_APMSUSPEND and not self._asleep:
                    self._asleep = True
                    self._work.start(self._on_sleep())
                elif msg.wParam in (PBT_APMRESUMEAUTOMATIC, PBT_APMRESUMESUSPEND) and self._asleep:
                    self._asleep = False  # both may come for one wake: the first one counts
                    self._work.start(self._on_wake())
        return False, 0


class MacPowerEvents:
    def __init__(self, on_sleep: Hook, on_wake: Hook) -> None:
        from AppKit import (  # type: ignore[import-not-found, unused-ignore]
            NSWorkspace,
            NSWorkspaceDidWakeNotification,
            NSWorkspaceWillSleepNotification,
        )

        self._work = Work()
        center = NSWorkspace.sharedWorkspace().notificationCenter()
        self._observers = [
            center.addObserverForName_object_queue_usingBlock_(
                NSWorkspaceWillSleepNotification, None, None, lambda _: self._work.start(on_sleep())
            ),
            center.addObserverForName_object_queue_usingBlock_(
                NSWorkspaceDidWakeNotification, None, None, lambda _: self._work.start(on_wake())
            ),
        ]


def watch_power(on_sleep: Hook, on_wake: Hook) -> object | None:
    """The platform's sleep and wake notices wired to the hooks (None on Linux: the daemon has logind)."""
    if sys.platform == "win32":
        return WindowsPowerEvents(on_sleep, on_wake)
    if sys.platform == "darwin":
        return MacPowerEvents(on_sleep, on_wake)
    return None
