"""An agent turn never fails because the daemon's MCP server is still loading: the server is up before the agent
CLI starts, however long loading takes (under load it took tens of seconds, and Codex gives up on a handshake)."""

import asyncio
import importlib
import time
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

from tests.live_daemon import live_daemon

LOADING_SECONDS = 4.0


def slow_import(name: str) -> ModuleType:
    time.sleep(LOADING_SECONDS)  # a busy machine: the MCP SDK's import takes a while (on a thread of its own)
    return importlib.import_module(name)


async def test_a_slow_mcp_server_does_not_fail_the_first_codex_turn(
    tmp_path: Path, agent_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr("desktop.mcp.endpoint.importlib", SimpleNamespace(import_module=slow_import))
    (tmp_path / "project").mkdir()
    async with live_daemon(tmp_path / "home") as (_, _, client):
        # Codex waits 2 s for its MCP servers here, less than the loading takes
        added = await client.post(
            "/api/agents",
            json={
                "name": "codex",
                "runtime": "codex",
                "folder": str(tmp_path / "project"),
                "args": ["-c", "mcp_servers.coxswain.startup_timeout_sec=2"],
            },
        )
        assert added.status_code == 201, added.text
        row = (await client.post("/api/requests", json={"agent": "codex", "prompt": "TOOL echo hi"})).json()
        for _ in range(1200):
            row = (await client.get(f"/api/requests/{row['id']}")).json()
            if row["state"] in ("done", "failed"):
                break
            await asyncio.sleep(0.05)
        assert row["state"] == "done", row["timeline"][-1]["text"]
        assert row["result"] == "finished; last output: hi"
