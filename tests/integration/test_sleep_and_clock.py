"""Sleep, wake and wall-clock jumps on a real daemon object (real SQLite, real runner) with a clock the test moves."""

import asyncio
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from desktop.daemon import Daemon
from desktop.platform.paths import Home
from tests.fakes.dbus import FakeLogind, private_bus, serve, until
from tests.ledger_fixture import MovableClock


@pytest.fixture
async def live(tmp_path: Path) -> AsyncIterator[tuple[Daemon, MovableClock, httpx.AsyncClient, str]]:
    clock = MovableClock(start=time.time())
    daemon = Daemon(Home(tmp_path / "home"), port=0, clock=clock)
    await daemon.start()
    owner = (tmp_path / "home" / "owner.token").read_text().strip()
    client = httpx.AsyncClient(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"})
    sarah = (await client.post("/api/people", json={"name": "sarah"})).json()["token"]
    try:
        yield daemon, clock, client, sarah
    finally:
        await client.aclose()
        await daemon.stop()


async def wait_state(client: httpx.AsyncClient, request_id: str, state: str) -> dict[str, object]:
    for _ in range(3000):
        row: dict[str, object] = (await client.get(f"/api/requests/{request_id}")).json()
        if row["state"] == state:
            return row
        await asyncio.sleep(0.02)
    raise AssertionError(f"{request_id} never became {state}: {row}")


async def test_wake_records_the_gap_expires_first_and_follows_running_work(live) -> None:  # type: ignore[no-untyped-def]
    daemon, clock, client, sarah = live
    running = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 1; echo awake"})).json()
    await wait_state(client, running["id"], "running")
    waiting = (
        await client.post(
            "/api/requests", json={"agent": "shell", "prompt": "true"}, headers={"Authorization": f"Bearer {sarah}"}
        )
    ).json()
    await daemon.suspend()
    parked = (await client.post("/api/requests", json={"agent": "shell", "prompt": "true"})).json()
    clock.advance(25 * 3600, sleeping=True)
    assert (await client.get(f"/api/requests/{parked['id']}")).json()["state"] == "approved", "nothing starts asleep"
    await daemon.resume()
    assert (await client.get(f"/api/requests/{waiting['id']}")).json()["state"] == "expired"
    done = await wait_state(client, running["id"], "done")
    texts = [t["text"] for t in done["timeline"]]  # type: ignore[union-attr]
    assert texts[2].startswith("interrupted: the machine slept or its clock jumped")
    assert texts[3] == "resumed: checked after the gap; the command is still running"
    assert texts[4] == "done" and len(texts) == 5, "a gap, never a duplicate"
    await wait_state(client, parked["id"], "done")


async def test_a_wall_clock_jump_is_noticed_without_any_signal(live) -> None:  # type: ignore[no-untyped-def]
    daemon, clock, client, sarah = live
    waiting = (
        await client.post(
            "/api/requests", json={"agent": "shell", "prompt": "true"}, headers={"Authorization": f"Bearer {sarah}"}
        )
    ).json()
    clock.advance(3, sleeping=False)
    await daemon.check_clock()
    assert (await client.get(f"/api/requests/{waiting['id']}")).json()["state"] == "pending", "no gap, no expiry"
    clock.advance(24 * 3600 + 60, sleeping=True)
    await daemon.check_clock()
    expired = (await client.get(f"/api/requests/{waiting['id']}")).json()
    assert expired["state"] == "expired"
    assert (await client.post(f"/api/requests/{waiting['id']}/approve", json={})).status_code == 409


async def test_a_wake_during_a_resume_backoff_resumes_once(
    tmp_path: Path, agent_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import json
    import os
    import signal

    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)
    clock = MovableClock(start=time.time())
    daemon = Daemon(Home(tmp_path / "home"), port=0, clock=clock)
    await daemon.start()
    owner = (tmp_path / "home" / "owner.token").read_text().strip()
    marker = tmp_path / "steps"
    try:
        async with httpx.AsyncClient(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"}) as client:
            await client.post("/api/agents", json={"name": "claude", "runtime": "claude", "folder": str(tmp_path)})
            row = (
                await client.post(
                    "/api/requests",
                    json={
                        "agent": "claude",
                        "prompt": f"TOOL echo one >> {marker}; sleep 30\nTOOL echo two >> {marker}",
                    },
                )
            ).json()
            runner = tmp_path / "home" / "tasks" / f"{row['id']}.1" / "runner.json"
            transcripts = Path(agent_env["CLAUDE_CONFIG_DIR"]) / "projects"

            def tool_call_written() -> bool:  # the CLI writes its session as it goes; a resume replays what it wrote
                return any('"tool_use"' in p.read_text(errors="replace") for p in transcripts.rglob("*.jsonl"))

            for _ in range(1000):
                if (
                    marker.exists()
                    and runner.exists()
                    and "pgid" in json.loads(runner.read_text())
                    and tool_call_written()
                ):
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError("the first tool call never started, or the CLI never wrote it down")
            os.killpg(json.loads(runner.read_text())["pgid"], signal.SIGKILL)
            for _ in range(500):  # the daemon has seen the death and waits out the backoff
                timeline = (await client.get(f"/api/requests/{row['id']}")).json()["timeline"]
                if any(t["kind"] == "interrupted" for t in timeline):
                    break
                await asyncio.sleep(0.02)
            await daemon.suspend()
            await daemon.resume()
            done = await wait_state(client, row["id"], "done")
    finally:
        await daemon.stop()
    assert marker.read_text() == "one\ntwo\n"
    assert sorted(p.name for p in (tmp_path / "home" / "tasks").iterdir() if p.is_dir()) == [
        f"{row['id']}.1",
        f"{row['id']}.2",
    ], "one resume"
    assert [t["kind"] for t in done["timeline"]].count("resumed") == 1  # type: ignore[union-attr]


@pytest.fixture
async def logind(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeLogind]:
    """A fake systemd-logind on a private bus that the daemon takes for the system bus."""
    with private_bus() as address:
        monkeypatch.setenv("DBUS_SYSTEM_BUS_ADDRESS", address)
        fake = FakeLogind()
        bus = await serve(address, "org.freedesktop.login1", "/org/freedesktop/login1", fake)
        try:
            yield fake
        finally:
            bus.disconnect()


async def test_logind_sleep_holds_a_delay_lock_checkpoints_then_lets_go(logind: FakeLogind, live) -> None:  # type: ignore[no-untyped-def]
    _daemon, clock, client, sarah = live
    await until(lambda: len(logind.held("sleep", "delay")) == 1)
    assert logind.held("sleep", "delay")[0].who == "Coxswain"
    running = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 4; echo awake"})).json()
    await wait_state(client, running["id"], "running")
    waiting = (
        await client.post(
            "/api/requests", json={"agent": "shell", "prompt": "true"}, headers={"Authorization": f"Bearer {sarah}"}
        )
    ).json()

    logind.PrepareForSleep(True)
    await until(lambda: not logind.held("sleep", "delay"))  # checkpointed, then released: the machine may sleep
    parked = (await client.post("/api/requests", json={"agent": "shell", "prompt": "true"})).json()
    clock.advance(25 * 3600, sleeping=True)
    assert (await client.get(f"/api/requests/{parked['id']}")).json()["state"] == "approved", "nothing starts asleep"

    logind.PrepareForSleep(False)
    await wait_state(client, waiting["id"], "expired")  # its day passed asleep: expired before anything ran
    await until(lambda: len(logind.held("sleep", "delay")) == 1)  # ready for the next sleep
    done = await wait_state(client, running["id"], "done")
    texts = [t["text"] for t in done["timeline"]]  # type: ignore[union-attr]
    assert texts[2].startswith("interrupted: the machine slept or its clock jumped")
    assert texts[3].startswith("resumed: checked after the gap") and texts[4] == "done" and len(texts) == 5
    await wait_state(client, parked["id"], "done")


async def test_keep_awake_holds_the_idle_lock_only_while_a_request_runs(logind: FakeLogind, live) -> None:  # type: ignore[no-untyped-def]
    _daemon, _clock, client, _sarah = live
    await until(lambda: len(logind.held("sleep", "delay")) == 1)
    quick = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 1"})).json()
    await wait_state(client, quick["id"], "done")
    assert not logind.locks_for("idle:sleep"), "the setting is off by default"

    await client.post("/api/settings", json={"key": "keep_awake", "value": "yes"})
    working = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 2"})).json()
    await until(lambda: len(logind.held("idle:sleep", "block")) == 1)
    assert (await client.get(f"/api/requests/{working['id']}")).json()["state"] == "running"
    await wait_state(client, working["id"], "done")
    await until(lambda: not logind.held("idle:sleep", "block"))
    assert len(logind.locks_for("idle:sleep")) == 1, "one lock for the whole run"


async def test_keep_awake_holds_while_a_background_task_runs(logind: FakeLogind, live) -> None:  # type: ignore[no-untyped-def]
    """A dev server or a test run an agent left running keeps the computer awake, not only a turn."""
    _daemon, _clock, client, _sarah = live
    await client.post("/api/settings", json={"key": "keep_awake", "value": "yes"})
    started = (await client.post("/api/tasks", json={"agent": "shell", "command": "sleep 600"})).json()
    await until(lambda: len(logind.held("idle:sleep", "block")) == 1)
    await client.post(f"/api/tasks/{started['id']}/stop", json={})
    await until(lambda: not logind.held("idle:sleep", "block"))
