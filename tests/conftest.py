from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import DaemonProcess
from tests.fake_model.server import FakeModelServer


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


CODEX_CONFIG = """model = "gpt-5.5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "{url}/v1"
env_key = "OPENAI_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"""
GEMINI_SETTINGS = """{"security": {"auth": {"selectedType": "gemini-api-key"}},
 "privacy": {"usageStatisticsEnabled": false},
 "general": {"disableAutoUpdate": true, "disableUpdateNag": true}}"""
AGENT_CLIS = Path(__file__).resolve().parent.parent / ".cache" / "agent-clis" / "node_modules" / ".bin"


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
    import os

    folder = os.environ.get("COXSWAIN_AGENT_CLIS", str(AGENT_CLIS))
    assert Path(folder, "claude").exists(), f"the agent CLIs are not installed in {folder}; run .ci/run"
    url = f"http://127.0.0.1:{fake_model.port}"
    codex_home = tmp_path / "codex-home"
    codex_home.mkdir()
    (codex_home / "config.toml").write_text(CODEX_CONFIG.format(url=url))
    user_home = tmp_path / "user-home"
    (user_home / ".gemini").mkdir(parents=True)
    (user_home / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    return {
        "HOME": str(user_home),
        "COPILOT_OFFLINE": "true", "COPILOT_PROVIDER_TYPE": "openai", "COPILOT_PROVIDER_BASE_URL": f"{url}/v1",
        "COPILOT_PROVIDER_API_KEY": "fake-provider-key", "COPILOT_MODEL": "gpt-5.5",
        "GOOGLE_GEMINI_BASE_URL": url, "GEMINI_API_KEY": "fake-key",
        "CODEX_HOME": str(codex_home), "OPENAI_API_KEY": "fake-key",
        "PATH": f"{folder}:{os.environ['PATH']}",
        "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "fake-key",
        "CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config"),
        "NO_PROXY": "127.0.0.1,localhost", "HTTPS_PROXY": "", "HTTP_PROXY": "",
    }


@pytest.fixture
def secret_service(tmp_path: Path) -> Iterator[dict[str, str]]:
    """A private D-Bus session bus with an unlocked GNOME Keyring on it: the real Secret Service backend."""
    import contextlib
    import os
    import signal
    import subprocess
    import time

    bus = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    address, bus_pid = bus[0], int(bus[1])
    (tmp_path / "keyring-home").mkdir()
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address, "HOME": str(tmp_path / "keyring-home")}
    keyring_daemon = subprocess.Popen(["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
                                      stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                      env=env)
    assert keyring_daemon.stdin is not None
    keyring_daemon.stdin.write(b"test-keyring-password")
    keyring_daemon.stdin.close()
    deadline = time.monotonic() + 10
    while not (tmp_path / "keyring-home" / ".local" / "share" / "keyrings" / "login.keyring").exists():
        assert time.monotonic() < deadline, "GNOME Keyring did not start"
        time.sleep(0.05)
    try:
        yield {"DBUS_SESSION_BUS_ADDRESS": address}
    finally:
        keyring_daemon.terminate()
        keyring_daemon.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.kill(bus_pid, signal.SIGTERM)
