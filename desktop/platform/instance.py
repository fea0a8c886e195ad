"""One daemon per home folder: an OS file lock, released by the OS even when the process is killed."""

import sys
from pathlib import Path
from typing import IO


class AlreadyRunning(Exception):
    pass


class InstanceLock:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._file: IO[str] | None = None

    def acquire(self) -> None:
        self._path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self._path, "a+")  # noqa: SIM115 - held open for as long as the daemon runs
        try:
            if sys.platform == "win32":
                import msvcrt

                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise AlreadyRunning(f"a Coxswain daemon is already running for {self._path.parent}") from None
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


# The Windows installer refuses to install or uninstall while this exists (installer.nsi reads the name from
# packaging/build.py, which reads it here).
RUNNING_MUTEX = "Local\\CoxswainTrayApp"


def hold_running_mutex() -> object | None:
    """On Windows, a named mutex that lives as long as the tray app: how the installer knows it runs."""
    if sys.platform != "win32":
        return None
    import ctypes

    handle: object = ctypes.windll.kernel32.CreateMutexW(None, False, RUNNING_MUTEX)
    return handle
