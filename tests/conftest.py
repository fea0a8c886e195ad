from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import DaemonProcess


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    process = DaemonProcess(tmp_path / "home").start()
    try:
        yield process
    finally:
        process.stop()
        process.kill_runners()


@pytest.fixture
def make_daemon(tmp_path: Path) -> Iterator["type[DaemonProcess]"]:
    """For tests that stop and restart daemons themselves; everything they started is ended afterwards."""
    started: list[DaemonProcess] = []

    class Tracked(DaemonProcess):
        def start(self, *args, **kwargs):  # type: ignore[no-untyped-def]
            started.append(self)
            return super().start(*args, **kwargs)

    yield Tracked
    for process in started:
        process.stop()
        process.kill_runners()
