"""Keeping the computer from idle sleep while agents work, where logind is not (desktop.platform.sleep has Linux):
Windows `SetThreadExecutionState`, macOS `caffeinate`. Not run on the Linux machine the tests run on: written
against the documented interfaces, and covered on Linux by the logind version's tests."""

import contextlib
import os
import subprocess
import sys


class WindowsAwake:
    ES_CONTINUOUS, ES_SYSTEM_REQUIRED = 0x80000000, 0x00000001

    def __init__(self) -> None:
        self.keeping_awake = False

    async def start(self) -> str | None:
        return "sleep notices come from the tray app's window (WM_POWERBROADCAST)"

    async def stop(self) -> None:
        await self.keep_awake(False)

    async def keep_awake(self, wanted: bool) -> None:
        """The flag holds for the thread that set it, so it is always set from the loop's (the main) thread."""
        if wanted == self.keeping_awake or sys.platform != "win32":
            return
        import ctypes

        flags = self.ES_CONTINUOUS | (self.ES_SYSTEM_REQUIRED if wanted else 0)
        ctypes.windll.kernel32.SetThreadExecutionState(flags)
        self.keeping_awake = wanted


class MacAwake:
    def __init__(self) -> None:
        self._caffeinate: subprocess.Popen[bytes] | None = None

    @property
    def keeping_awake(self) -> bool:
        return self._caffeinate is not None

    async def start(self) -> str | None:
        return "sleep notices come from the tray app (NSWorkspace)"

    async def stop(self) -> None:
        await self.keep_awake(False)

    async def keep_awake(self, wanted: bool) -> None:
        """`caffeinate -i` prevents idle sleep while it lives; `-w` ends it with us if we die first."""
        if wanted and self._caffeinate is None:
            self._caffeinate = subprocess.Popen(["/usr/bin/caffeinate", "-i", "-w", str(os.getpid())])
        elif not wanted and self._caffeinate is not None:
            with contextlib.suppress(ProcessLookupError):
                self._caffeinate.terminate()
            self._caffeinate.wait(5)
            self._caffeinate = None
