from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_env import offline_env
from tests.daemon_process import DaemonProcess, with_cli_agent
from tests.fake_model.server import FakeModelServer

pytest_plugins = ["tests.gui_fixture"]  # the tray app on the qasync loop


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



@pytest.fixture
def fake_model(tmp_path: Path) -> Iterator[FakeModelServer]:
    import threading

    server = FakeModelServer(tmp_path / "model-requests.jsonl")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def agent_env(tmp_path: Path, fake_model: FakeModelServer) -> dict[str, str]:
    """The environment a daemon needs to drive the real agent CLIs against the fake model, offline."""
    return offline_env(tmp_path, f"http://127.0.0.1:{fake_model.port}")


@pytest.fixture
def secret_service() -> Iterator[dict[str, str]]:
    """A private D-Bus session bus with an unlocked GNOME Keyring on it: the real Secret Service backend."""
    import contextlib
    import os
    import shutil
    import signal
    import subprocess
    import tempfile
    import time

    # a short folder: the keyring's control socket path must fit in a UNIX socket address (108 bytes)
    home = Path(tempfile.mkdtemp(prefix="kr"))
    bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    address, bus_pid = bus[0], int(bus[1])
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address, "HOME": str(home)}
    keyring_daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                      env=env)
    assert keyring_daemon.stdin is not None
    keyring_daemon.stdin.write(b"test-keyring-password")
    keyring_daemon.stdin.close()
    try:
        deadline = time.monotonic() + 20

        def serving() -> bool:  # the keyring file is written, and the Secret Service is on the bus (not always both)
            owned = subprocess.run(["dbus-send", "--session", "--print-reply", "--dest=org.freedesktop.DBus",
                                    "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner",
                                    "string:org.freedesktop.secrets"], env=env, capture_output=True, text=True)
            return (home / ".local" / "share" / "keyrings" / "login.keyring").exists() and "true" in owned.stdout

        while not serving():
            if keyring_daemon.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"GNOME Keyring did not start: {keyring_daemon.stderr.read()!r}")  # type: ignore[union-attr]
            time.sleep(0.05)
        yield {"DBUS_SESSION_BUS_ADDRESS": address}
    finally:
        keyring_daemon.terminate()
        keyring_daemon.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.kill(bus_pid, signal.SIGTERM)
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def claude_daemon(make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]) -> DaemonProcess:
    """A daemon with a Claude Code agent `claude` working in tmp_path/project."""
    return with_cli_agent(make_daemon, tmp_path, agent_env, "claude", "claude")
