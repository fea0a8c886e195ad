"""/api/agents says whether each agent can run here without reading the keyring on every call: what it found is
kept until a provider key is stored, an agent changes, or a minute has passed (a CLI installed outside)."""

import os
import stat
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import keyring.backend
import pytest

from desktop.daemon import Daemon
from tests.ledger_fixture import MovableClock
from tests.live_daemon import live_daemon

Live = tuple[Daemon, MovableClock, httpx.AsyncClient]


class CountingKeyring(keyring.backend.KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.kept: dict[str, str] = {}
        self.reads = 0

    def get_password(self, service: str, username: str) -> str | None:
        self.reads += 1
        return self.kept.get(username)

    def set_password(self, service: str, username: str, password: str) -> None:
        self.kept[username] = password

    def delete_password(self, service: str, username: str) -> None:
        self.kept.pop(username, None)


@pytest.fixture
async def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[tuple[Live, CountingKeyring]]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    cli = tmp_path / "bin" / "claude"  # installed, as far as a look on the agent's PATH goes
    cli.parent.mkdir()
    cli.write_text("#!/bin/sh\n")
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    async with live_daemon(tmp_path / "home") as (daemon, clock, client):
        counting = CountingKeyring()
        monkeypatch.setattr(daemon.secrets, "_backend", counting)
        monkeypatch.setattr(daemon.secrets, "problem", lambda: None)  # taken for a secure one
        (tmp_path / "project").mkdir()
        added = await client.post(
            "/api/agents",
            json={
                "name": "claude",
                "runtime": "claude",
                "folder": str(tmp_path / "project"),
                "env": {"PATH": f"{cli.parent}{os.pathsep}/usr/bin:/bin"},
            },
        )
        assert added.status_code == 201, added.text
        yield (daemon, clock, client), counting


async def statuses(client: httpx.AsyncClient) -> dict[str, str]:
    answer = await client.get("/api/agents")
    assert answer.status_code == 200, answer.text
    return {agent["name"]: agent["status"] for agent in answer.json()}


async def test_the_keyring_is_read_once_for_many_lists_and_again_when_a_key_is_stored(
    live: tuple[Live, CountingKeyring],
) -> None:
    (_, _, client), counting = live
    counting.reads = 0
    for _ in range(10):
        assert await statuses(client) == {"shell": "ready", "claude": "claude: no API key"}
    assert counting.reads <= 4  # one look at the four provider keys, not one per call (40)

    stored = await client.post("/api/secrets", json={"name": "anthropic_api_key", "value": "sk-test"})
    assert stored.status_code == 200, stored.text
    assert (await statuses(client))["claude"] == "ready"


async def test_a_key_stored_outside_coxswain_is_seen_within_a_minute(live: tuple[Live, CountingKeyring]) -> None:
    (_, clock, client), counting = live
    assert (await statuses(client))["claude"] == "claude: no API key"
    counting.kept["anthropic_api_key"] = "sk-from-another-tool"
    clock.advance(30)
    assert (await statuses(client))["claude"] == "claude: no API key"
    clock.advance(31)
    assert (await statuses(client))["claude"] == "ready"


async def test_an_agent_changed_is_judged_afresh(live: tuple[Live, CountingKeyring], tmp_path: Path) -> None:
    (_, _, client), _ = live
    assert (await statuses(client))["claude"] == "claude: no API key"
    changed = await client.post(
        "/api/agents/claude/change",
        json={"runtime": "claude", "folder": str(tmp_path / "project"), "env": {"PATH": "/nonexistent"}},
    )
    assert changed.status_code == 200 and changed.json()["status"] == "claude: not installed", changed.text
    assert (await statuses(client))["claude"] == "claude: not installed"
