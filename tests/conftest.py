from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_env import offline_env
from tests.daemon_process import DaemonProcess, with_cli_agent
from tests.fakes.model.server import FakeModelServer
from tests.secret_service import private_secret_service

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
    with private_secret_service() as env:
        yield env


@pytest.fixture
def claude_daemon(make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]) -> DaemonProcess:
    """A daemon with a Claude Code agent `claude` working in tmp_path/project."""
    return with_cli_agent(make_daemon, tmp_path, agent_env, "claude", "claude")
