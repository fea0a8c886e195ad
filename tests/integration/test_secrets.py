"""Provider keys live in the OS keyring (the real Secret Service, GNOME Keyring on a private bus) and reach the
agent CLI only through its environment."""

import subprocess
import sys

import pytest

from tests.daemon_process import COX, DaemonProcess
from tests.fakes.model.server import FakeModelServer

SECRET = "sk-ant-test-7f3a9c2e51"


def test_secret_set_from_stdin_reaches_claude_only_through_its_environment(
    make_daemon: type[DaemonProcess],
    tmp_path,
    agent_env: dict[str, str],  # type: ignore[no-untyped-def]
    secret_service: dict[str, str],
    fake_model: FakeModelServer,
) -> None:
    env = {**agent_env, **secret_service, "ANTHROPIC_API_KEY": ""}
    daemon = make_daemon(tmp_path / "home").start(env=env)
    daemon.post("/api/agents", {"name": "claude", "runtime": "claude", "folder": str(tmp_path)})
    assert {a["name"]: a["status"] for a in daemon.get("/api/agents").json()}["claude"] == "claude: no API key"
    stored = subprocess.run(
        [*COX, "--home", str(daemon.home), "secret", "set", "anthropic_api_key"],
        input=SECRET + "\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert stored.returncode == 0, stored.stderr
    assert SECRET not in stored.stdout + stored.stderr, "never echoed"
    assert "anthropic_api_key    stored" in daemon.cox("secret", "list", check=True).stdout
    assert {a["name"]: a["status"] for a in daemon.get("/api/agents").json()}["claude"] == "ready"
    row = daemon.request("SAY keyed", agent="claude")
    assert daemon.wait_state(row["id"], "done", timeout=60)["result"] == "keyed"
    keys = {r["headers"].get("x-api-key") for r in fake_model.requests() if r["method"] == "POST"}
    assert keys == {SECRET}
    spec = (daemon.home / "tasks" / f"{row['id']}.1" / "spec.json").read_text()
    assert SECRET not in spec
    daemon.stop()
    for path in daemon.home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the secret leaked into {path}"


def test_no_keyring_is_a_clear_error_not_a_plaintext_file(daemon: DaemonProcess) -> None:
    refused = subprocess.run(
        [*COX, "--home", str(daemon.home), "secret", "set", "openai_api_key"],
        input="sk-x\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert refused.returncode == 1 and "no secure keyring is available" in refused.stderr
    assert "sk-x" not in refused.stderr
    unknown = daemon.post("/api/secrets", {"name": "aws_secret", "value": "abc"})
    assert unknown.status_code == 400 and "abc" not in unknown.text
    too_long = daemon.post("/api/secrets", {"name": "openai_api_key", "value": "Q" * 9000})
    assert too_long.status_code == 422 and "QQQQ" not in too_long.text, "a refused secret is not echoed back"
    assert sys.platform.startswith("linux")


def test_a_keyring_whose_session_bus_went_away_fails_in_words(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Secret Service backend with no session bus raises its own errors, not the keyring's: they are failures
    like any other (an agent's turn then starts without the keys, and saying so), never a crash."""
    from keyring.backends import SecretService

    from desktop.platform.secrets import Secrets, SecretStoreError

    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    secrets = Secrets(SecretService.Keyring())
    assert secrets.environment() == {}
    with pytest.raises(SecretStoreError, match="the keyring failed"):
        secrets.set("anthropic_api_key", "sk-ant-something")
