"""The tray app in the test's own process, on the qasync loop over pytest-qt's QApplication (offscreen), with a real
daemon and a fake notification server on a private session bus. `qloop` is the one place a test puts asyncio on
Qt's loop, as the app does."""

import asyncio
import contextlib
import os
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import kill_runners

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHOTS = Path(__file__).parent.parent / ".cache" / "screenshots"  # the README shows copies from resources/


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    import qasync

    qapp.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        loop.run_until_complete(asyncio.sleep(0))
        loop.close()
        asyncio.set_event_loop(None)


def run(loop: asyncio.AbstractEventLoop, work: Coroutine[Any, Any, Any], timeout: float = 90) -> Any:
    """Run the loop until `work` is done. Not qasync's run_until_complete: that processes Qt's events once more
    after the loop stopped, so a socket read or a timer then runs a step with no running loop (uvicorn's and
    httpx's streams break on it). What is still queued runs at the next `run`, on the running loop."""
    done = asyncio.ensure_future(asyncio.wait_for(work, timeout), loop=loop)
    done.add_done_callback(lambda _: loop.stop())
    loop.run_forever()
    return done.result()


@contextlib.contextmanager
def running_app(loop: asyncio.AbstractEventLoop, tmp_path: Path, clock: Any = None) -> Iterator[Any]:
    """A TrayApp started in this process for the environment the test set up, stopped afterwards."""
    from desktop.gui.app import TrayApp
    from desktop.platform.paths import Home

    with keyring_from_environment():
        app = TrayApp(Home(tmp_path / "home"), port=0, clock=clock)
        run(loop, app.start())
        try:
            yield app
        finally:
            run(loop, app.stop())
            kill_runners(tmp_path / "home")


@pytest.fixture
def desktop(qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """(the running TrayApp, the fake notification server on its session bus)."""
    from tests.fakes.dbus import FakeNotifications, private_bus, serve

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    with private_bus() as address:
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        server = FakeNotifications()
        bus = run(qloop, serve(address, "org.freedesktop.Notifications", "/org/freedesktop/Notifications", server))
        try:
            with running_app(qloop, tmp_path) as app:
                yield app, server
        finally:
            bus.disconnect()


@pytest.fixture
def desktop_with_keyring(
    qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_service: dict[str, str]
) -> Iterator[Any]:
    """The running TrayApp on a session bus with a real, unlocked GNOME Keyring."""
    for name, value in secret_service.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    with running_app(qloop, tmp_path) as app:
        yield app


@pytest.fixture
def desktop_without_bus(
    qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Any]:
    """The running TrayApp on a desktop with no session bus at all."""
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus-here")
    with running_app(qloop, tmp_path) as app:
        yield app


@contextlib.contextmanager
def keyring_from_environment() -> Iterator[None]:
    """The keyring library picks its backend once per process, from a list of usable backends it also makes only
    once: make both again for this test's environment (a Secret Service absent for an earlier test in this worker
    may be there now), and give the next test in this process back the backend it had."""
    import keyring
    import keyring.backend
    import keyring.core

    before = keyring.get_keyring()
    with contextlib.suppress(KeyError):  # (not made yet)
        keyring.backend.get_all_keyring.reset()  # type: ignore[attr-defined]
    keyring.core.init_backend()
    try:
        yield
    finally:
        keyring.set_keyring(before)


async def person(app: Any, name: str) -> dict[str, str]:
    """Headers that speak as a new teammate."""
    token = (await app.api.post("/api/people", json={"name": name})).json()["token"]
    return {"Authorization": f"Bearer {token}"}


async def wait_state(app: Any, request_id: str, state: str, timeout: float = 30) -> dict[str, Any]:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        row: dict[str, Any] = (await app.api.get(f"/api/requests/{request_id}")).json()
        if row["state"] == state:
            return row
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{request_id} never became {state}: {row['state']}")
        await asyncio.sleep(0.05)
