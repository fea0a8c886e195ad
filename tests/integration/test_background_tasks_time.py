"""Background tasks over time, on a real daemon object with a clock the test moves: the timeout, quiet tasks (time
asleep does not count), and how long ended tasks stay listed."""

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.core.actors import Actor
from desktop.daemon import Daemon
from tests.ledger_fixture import MovableClock
from tests.live_daemon import live_daemon

Live = tuple[Daemon, MovableClock, httpx.AsyncClient]


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[Live]:
    async with live_daemon(tmp_path / "home") as (daemon, clock, client):
        try:
            yield daemon, clock, client
        finally:
            for row in (await client.get("/api/tasks")).json():
                await client.post(f"/api/tasks/{row['id']}/stop", json={})


async def until(client: httpx.AsyncClient, task_id: str, field: str, value: object) -> dict[str, Any]:
    for _ in range(1000):
        row: dict[str, Any] = (await client.get(f"/api/tasks/{task_id}")).json()
        if row[field] == value:
            return row
        await asyncio.sleep(0.02)
    raise AssertionError(f"{task_id}: {field} never became {value!r}: {row}")


async def start(client: httpx.AsyncClient, command: str, token: str | None = None) -> dict[str, Any]:
    """Started by the owner, or (with a session token) by the agent through the MCP tool, as its CLI would."""
    if token is None:
        answer = await client.post("/api/tasks", json={"agent": "shell", "command": command})
        assert answer.status_code == 201, answer.text
        started: dict[str, Any] = answer.json()
        return started
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "start_task", "arguments": {"command": command}},
    }
    answer = await client.post(
        "/mcp", json=call, headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    )
    assert answer.status_code == 200, answer.text
    started = json.loads(answer.json()["result"]["content"][0]["text"])
    return started


async def test_the_timeout_counts_from_the_conversations_last_turn_and_tells_the_request(live: Live) -> None:
    """An agent's task is timed from when its conversation's last turn ended, not from its own start: while a turn
    runs it does not run out. An owner's own task is timed from its start."""
    daemon, clock, client = live
    assert (await client.post("/api/settings", json={"key": "task_timeout", "value": "7m"})).status_code == 400
    assert (await client.post("/api/settings", json={"key": "task_timeout", "value": "11h"})).status_code == 400
    assert (await client.post("/api/settings", json={"key": "task_timeout", "value": "15m"})).status_code == 200
    request = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 2"})).json()
    while (await client.get(f"/api/requests/{request['id']}")).json()["state"] != "running":
        await asyncio.sleep(0.02)
    token = daemon.principals.turn_token(request["id"])  # what its agent session would hold
    mine = await start(client, "sleep 600", token)
    other = await start(client, "sleep 600")
    clock.advance(20 * 60)  # the turn that started it still runs: no timeout for its task
    await daemon.tasks.tick()
    assert (await client.get(f"/api/tasks/{mine['id']}")).json()["state"] == "running"
    assert (await until(client, other["id"], "state", "ended"))["status"] == "stopped", "the owner's: from its start"
    while (await client.get(f"/api/requests/{request['id']}")).json()["state"] != "done":
        await asyncio.sleep(0.02)
    clock.advance(14 * 60)  # fourteen minutes after the turn ended
    await daemon.tasks.tick()
    assert (await client.get(f"/api/tasks/{mine['id']}")).json()["state"] == "running"
    clock.advance(61)
    await daemon.tasks.tick()
    stopped = await until(client, mine["id"], "state", "ended")
    assert stopped["status"] == "stopped" and "timeout (15 min)" in stopped["stop_reason"]
    timeline = [t["text"] for t in (await client.get(f"/api/requests/{request['id']}")).json()["timeline"]]
    assert any(f"background task {mine['id']}" in t and "timeout (15 min)" in t for t in timeline)


async def test_no_limit_means_no_limit(live: Live) -> None:
    daemon, clock, client = live
    await client.post("/api/settings", json={"key": "task_timeout", "value": "0"})
    row = await start(client, "sleep 600")
    clock.advance(11 * 3600)
    await daemon.tasks.tick()
    assert (await client.get(f"/api/tasks/{row['id']}")).json()["state"] == "running"


async def test_quiet_tasks_count_awake_time_only(live: Live) -> None:
    daemon, clock, client = live
    await client.post("/api/settings", json={"key": "quiet_after", "value": "3m"})
    await client.post("/api/settings", json={"key": "task_timeout", "value": "0"})  # the night would end it
    row = await start(client, "echo started; sleep 600")
    await until(client, row["id"], "last_output_at", (await until_output(client, row["id"])))
    await daemon.tasks.tick()
    for _ in range(6):  # one minute awake, checked every 10 s
        clock.advance(10)
        await daemon.tasks.tick()
    shown = (await client.get(f"/api/tasks/{row['id']}")).json()
    assert shown["status"] == "running, no output for 1 min" and not shown["quiet"]
    clock.advance(8 * 3600, sleeping=True)  # a night asleep
    await daemon.tasks.tick()
    assert (await client.get(f"/api/tasks/{row['id']}")).json()["quiet_minutes"] == 1
    for _ in range(12):
        clock.advance(10)
        await daemon.tasks.tick()
    shown = (await client.get(f"/api/tasks/{row['id']}")).json()
    assert shown["quiet_minutes"] == 3 and shown["quiet"]


async def until_output(client: httpx.AsyncClient, task_id: str) -> str:
    for _ in range(1000):
        row = (await client.get(f"/api/tasks/{task_id}")).json()
        if row["last_output_at"]:
            return str(row["last_output_at"])
        await asyncio.sleep(0.02)
    raise AssertionError("no output")


async def test_ended_tasks_stay_listed_for_an_hour_twenty_per_agent(live: Live) -> None:
    _, clock, client = live
    quick = [await start(client, f"echo {n}") for n in range(22)]
    for row in quick:
        await until(client, row["id"], "state", "ended")
    listed = [row["id"] for row in (await client.get("/api/tasks")).json()]
    assert listed == [row["id"] for row in reversed(quick)][:20]
    clock.advance(3599)
    assert len((await client.get("/api/tasks")).json()) == 20
    clock.advance(2)
    assert (await client.get("/api/tasks")).json() == []


async def test_a_turn_longer_than_max_turn_is_cancelled_with_the_reason(live: Live) -> None:
    daemon, clock, client = live
    assert (await client.post("/api/settings", json={"key": "max_turn", "value": "4m"})).status_code == 400
    assert (await client.post("/api/settings", json={"key": "max_turn", "value": "25h"})).status_code == 400
    assert (await client.post("/api/settings", json={"key": "max_turn", "value": "5m"})).status_code == 200
    request = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 600"})).json()
    while (await client.get(f"/api/requests/{request['id']}")).json()["state"] != "running":
        await asyncio.sleep(0.02)
    clock.advance(4 * 60)
    await daemon.check_turns()
    assert (await client.get(f"/api/requests/{request['id']}")).json()["state"] == "running"
    daemon.ledger.ask(request["id"], Actor("shell", "agent", request["id"]), "Deploy?", ["Yes", "No"])
    clock.advance(61)
    await daemon.check_turns()  # a turn waiting on a person's answer is not running long
    waiting = (await client.get(f"/api/requests/{request['id']}")).json()
    assert waiting["state"] == "running" and not waiting["cancel_requested"]
    await client.post(f"/api/requests/{request['id']}/answer", json={"text": "Yes"})
    await daemon.check_turns()
    await daemon.check_turns()  # (once is enough: said once)
    for _ in range(500):
        row = (await client.get(f"/api/requests/{request['id']}")).json()
        if row["state"] == "cancelled":
            break
        await asyncio.sleep(0.02)
    assert row["state"] == "cancelled"
    said = [t["text"] for t in row["timeline"] if "longest turn" in t["text"]]
    assert said == ["ran longer than the longest turn (5m): cancelled at its next safe point"]

    await client.post("/api/settings", json={"key": "max_turn", "value": "0"})
    again = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 600"})).json()
    while (await client.get(f"/api/requests/{again['id']}")).json()["state"] != "running":
        await asyncio.sleep(0.02)
    clock.advance(30 * 3600)
    await daemon.check_turns()
    assert (await client.get(f"/api/requests/{again['id']}")).json()["state"] == "running", "0: no limit"
    await client.post(f"/api/requests/{again['id']}/cancel", json={})
