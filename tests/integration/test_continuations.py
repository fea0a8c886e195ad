"""Background continuations, with the real Claude Code and Codex CLIs against the scripted model: an agent starts a
test run as a background task and ends its turn; the run fails; the agent is woken by a new turn on the same runtime
conversation whose prompt holds the failure, approved with the conversation, and its reply is that turn's result. Also:
tasks ending together wake one turn, a cancelled request's tasks wake nothing, and a restart between a task's end and
its turn drops the turn (said once, never run twice), and a conversation an older database recorded is continued
after the upgrade. The rules without CLIs: tests/unit/test_continuations_rules.py."""

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.daemon_process import DaemonProcess
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_background_tasks import agent_daemon  # noqa: F401 - the fixture (claude and codex)

FAILING_RUN = (
    "sleep 2; echo 'tests/test_login.py::test_login FAILED'; "
    "echo 'E   assert 401 == 200'; echo '==== 1 failed, 3 passed in 0.52s ===='; exit 1"
)


def mcp(tool: str, **arguments: Any) -> str:
    return f"MCP {tool} {json.dumps(arguments)}\n"


def continuations(daemon: DaemonProcess, of: str) -> list[dict[str, Any]]:
    return [r for r in daemon.get("/api/requests").json() if r.get("continuation_of") == of]


def woken(daemon: DaemonProcess, of: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while not (found := continuations(daemon, of)):
        assert time.monotonic() < deadline, f"nothing woke after {of}"
        time.sleep(0.1)
    return found[0]


def test_a_failed_test_run_wakes_its_agent_on_the_same_conversation(
    agent_daemon: DaemonProcess,  # noqa: F811
    fake_model: FakeModelServer,
) -> None:
    daemon = agent_daemon
    row = daemon.request(
        mcp("start_task", command=FAILING_RUN, description="test run") + "SAY started the tests", agent="agent"
    )
    first = daemon.wait_state(row["id"], "done", timeout=90)
    assert first["result"] == "started the tests" and first["conversation_ref"]
    woke = woken(daemon, row["id"])
    done = daemon.wait_state(woke["id"], "done", timeout=120)
    assert done["timeline"][0]["text"] == f"background continuation of {row['id']}: T1 ended, approved"
    assert done["requester"] == first["requester"] and done["agent"] == "agent"
    assert done["prompt"].startswith("Background work you started has ended.\n\nT1 (test run) failed (exit 1) after ")
    assert "tests/test_login.py::test_login FAILED" in done["prompt"] and "assert 401 == 200" in done["prompt"]
    assert done["result"].startswith("Reviewed: T1 (test run) failed (exit 1) after "), "the model's reply"
    assert done["conversation_ref"] == first["conversation_ref"], "the same runtime conversation, continued"
    asked = [r["body"] for r in fake_model.requests() if "Background work you started" in json.dumps(r["body"])]
    assert asked and "started the tests" in json.dumps(asked[-1]), "the model saw the first turn as history"
    shown = daemon.cox("show", woke["id"], check=True).stdout
    assert f"continuation_of: {row['id']}" in shown
    assert daemon.get("/api/tasks/T1").json()["outcome"] == "failed"


def test_tasks_ending_together_wake_one_turn_and_a_cancelled_requests_tasks_none(
    agent_daemon: DaemonProcess,  # noqa: F811
    fake_model: FakeModelServer,
) -> None:
    daemon = agent_daemon
    both = (
        mcp("start_task", command="sleep 2; echo lint clean", description="lint")
        + mcp("start_task", command="sleep 2; echo build ok", description="build")
        + "SAY two started"
    )
    row = daemon.request(both, agent="agent")
    daemon.wait_state(row["id"], "done", timeout=90)
    woke = woken(daemon, row["id"])
    prompt = daemon.wait_state(woke["id"], "done", timeout=120)["prompt"]
    assert prompt.startswith("2 background tasks you started have ended.")
    assert "T1 (lint) finished" in prompt and "T2 (build) finished" in prompt and "build ok" in prompt
    assert len(continuations(daemon, row["id"])) == 1

    cancelled = daemon.request(
        mcp("start_task", command="sleep 60", description="server") + "TOOL sleep 60", agent="agent"
    )
    deadline = time.monotonic() + 60
    while daemon.get("/api/tasks").json()[0]["id"] != "T3":
        assert time.monotonic() < deadline, "the task did not start"
        time.sleep(0.1)
    daemon.post(f"/api/requests/{cancelled['id']}/cancel", {})
    daemon.wait_state(cancelled["id"], "cancelled", timeout=60)
    deadline = time.monotonic() + 30
    while daemon.get("/api/tasks/T3").json()["state"] != "ended":
        assert time.monotonic() < deadline, "the cancel did not stop the task"
        time.sleep(0.1)
    assert continuations(daemon, cancelled["id"]) == []  # (decided as it ended, before its end could be read)


def test_a_restart_between_the_end_and_the_turn_drops_it_once(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str], fake_model: FakeModelServer
) -> None:
    from tests.daemon_process import with_cli_agent

    daemon = with_cli_agent(make_daemon, tmp_path, agent_env, "agent", "claude")
    row = daemon.request(
        mcp("start_task", command="sleep 3; echo quick", description="quick") + "SAY started", agent="agent"
    )
    daemon.wait_state(row["id"], "done", timeout=90)
    deadline = time.monotonic() + 30
    while daemon.get("/api/tasks/T1").json()["state"] != "ended":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    daemon.stop()  # within the two seconds tasks ending together are gathered: the turn was not made yet
    again = make_daemon(daemon.home).start(env=agent_env)
    try:
        dropped = [t["text"] for t in again.show(row["id"])["timeline"] if "dropped" in t["text"]]
        assert dropped == ["continuation for T1 dropped: the daemon restarted before it ran"]
        assert continuations(again, row["id"]) == []  # (decided at the start, before the API answers)
    finally:
        again.stop()
    third = make_daemon(daemon.home).start(env=agent_env)
    try:
        notes = [t["text"] for t in third.show(row["id"])["timeline"] if "dropped" in t["text"]]
        assert notes == dropped, "said once"
    finally:
        third.stop()


def test_a_conversation_an_older_database_recorded_is_continued_after_the_upgrade(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str], fake_model: FakeModelServer
) -> None:
    """Schema 9 kept the runtime's conversation in `session_ref` (and its timeline line as kind `session`); version 10
    renames both, and the end of a task started before the upgrade wakes a turn on the conversation recorded there."""
    from tests.daemon_process import with_cli_agent

    go = tmp_path / "go"
    daemon = with_cli_agent(make_daemon, tmp_path, agent_env, "agent", "codex")
    build = f"until [ -e {go} ]; do sleep 0.1; done; echo built"
    row = daemon.request(mcp("start_task", command=build, description="build") + "SAY the build is on", agent="agent")
    first = daemon.wait_state(row["id"], "done", timeout=90)
    assert first["conversation_ref"]
    daemon.stop()  # the build runs on under its runner
    with sqlite3.connect(daemon.home / "coxswain.db") as db:  # the database as version 9 left it
        db.execute("ALTER TABLE requests RENAME COLUMN conversation_ref TO session_ref")
        db.execute(
            "UPDATE timeline SET kind = 'session', text = 'session ' || substr(text, 14) WHERE kind = 'conversation'"
        )
        db.execute("PRAGMA user_version = 9")
    db.close()
    upgraded = make_daemon(daemon.home).start(env=agent_env)
    try:
        shown = upgraded.show(row["id"])
        assert shown["conversation_ref"] == first["conversation_ref"]
        assert [t["text"] for t in shown["timeline"] if t["kind"] == "conversation"] == [
            f"session {first['conversation_ref']}"  # the line as it was written
        ]
        go.touch()
        done = upgraded.wait_state(woken(upgraded, row["id"])["id"], "done", timeout=120)
        assert done["result"].startswith("Reviewed: T1 (build) finished"), "the model's reply"
        assert done["conversation_ref"] == first["conversation_ref"], "the conversation from before, continued"
        asked = [r["body"] for r in fake_model.requests() if "Background work you started" in json.dumps(r["body"])]
        assert asked and "the build is on" in json.dumps(asked[-1]), "the model saw the first turn as history"
    finally:
        upgraded.stop()
    assert any(p.name.startswith("coxswain-v9-") for p in (daemon.home / "backups").iterdir())


async def test_a_timeout_counts_from_the_last_turn_and_the_agent_reports_it(
    tmp_path: Path, agent_env: dict[str, str], fake_model: FakeModelServer, monkeypatch: Any
) -> None:
    """Real Claude Code on a daemon whose clock the test moves: a dev server outlives its turn; a quick build it
    started too ends and wakes a turn, which starts the timeout again; when it runs out the server is stopped and
    the agent is told in a continuation."""
    import asyncio

    import httpx

    from tests.live_daemon import live_daemon

    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)

    async def state_of(client: httpx.AsyncClient, path: str, state: str) -> dict[str, Any]:
        for _ in range(3000):
            row: dict[str, Any] = (await client.get(path)).json()
            if row["state"] == state:
                return row
            await asyncio.sleep(0.05)
        raise AssertionError(f"{path} never became {state}: {row}")

    async with live_daemon(tmp_path / "home") as (daemon, clock, client):
        await client.post("/api/settings", json={"key": "task_timeout", "value": "15m"})
        await client.post("/api/agents", json={"name": "claude", "runtime": "claude", "folder": str(tmp_path)})
        row = (
            await client.post(
                "/api/requests",
                json={
                    "agent": "claude",
                    "prompt": (
                        mcp("start_task", command="sleep 600", description="dev server")
                        + mcp("start_task", command="sleep 3; echo built", description="build")
                        + "SAY both started"
                    ),
                },
            )
        ).json()
        await state_of(client, f"/api/requests/{row['id']}", "done")
        clock.advance(14 * 60)
        await daemon.tasks.tick()
        build = await state_of(client, "/api/tasks/T2", "ended")
        assert build["outcome"] == "completed"
        for _ in range(3000):  # the build's end wakes a turn of the conversation
            woke = [r for r in (await client.get("/api/requests")).json() if r["continuation_of"] == row["id"]]
            if woke:
                break
            await asyncio.sleep(0.05)
        await state_of(client, f"/api/requests/{woke[0]['id']}", "done")
        clock.advance(14 * 60)  # 28 minutes after the first turn, 14 after the last: the server runs on
        await daemon.tasks.tick()
        assert (await client.get("/api/tasks/T1")).json()["state"] == "running"
        clock.advance(2 * 60)
        await daemon.tasks.tick()
        server = await state_of(client, "/api/tasks/T1", "ended")
        assert server["outcome"] == "stopped" and "timeout (15 min)" in server["stop_reason"]
        for _ in range(3000):
            told = [
                r
                for r in (await client.get("/api/requests")).json()  # linked to the turn that started it
                if r["continuation_of"] == row["id"] and r["id"] != woke[0]["id"]
            ]
            if told:
                break
            await asyncio.sleep(0.05)
        reported = await state_of(client, f"/api/requests/{told[0]['id']}", "done")
        assert reported["prompt"].startswith("Background work you started has ended.\n\nT1 (dev server) was stopped (")
        assert "timeout (15 min)" in reported["prompt"]
        assert reported["result"].startswith("Reviewed: T1 (dev server) was stopped")


def test_a_runaway_chain_of_continuations_waits_for_the_owner(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str], fake_model: FakeModelServer
) -> None:
    """Real Claude Code whose every continuation starts another task: ten continuations run on their own, the
    eleventh waits for the owner's approval (a loop guard), and runs once approved."""
    from desktop.tasks.continuations import LOOP_LIMIT
    from tests.daemon_process import with_cli_agent

    daemon = with_cli_agent(make_daemon, tmp_path, agent_env, "agent", "claude")
    again = mcp("start_task", command="echo again", description="again")
    row = daemon.request(
        mcp("start_task", command="echo once", description="once") + f"AGAIN {again}SAY started", agent="agent"
    )
    deadline = time.monotonic() + 600
    while len(links := chain_of(daemon, row["id"])) <= LOOP_LIMIT or links[-1]["state"] != "pending":
        assert time.monotonic() < deadline, [(r["id"], r["state"]) for r in links]
        time.sleep(0.2)
    assert [r["state"] for r in links[:LOOP_LIMIT]] == ["done"] * LOOP_LIMIT
    guarded = daemon.show(links[LOOP_LIMIT]["id"])
    assert any(
        f"waits for the owner: {LOOP_LIMIT} background continuations in a row" in t["text"] for t in guarded["timeline"]
    )
    daemon.post(f"/api/requests/{guarded['id']}/approve", {})
    assert daemon.wait_state(guarded["id"], "done", timeout=120)["result"].startswith("Reviewed: T")


def chain_of(daemon: DaemonProcess, first: str) -> list[dict[str, Any]]:
    """The continuations in a row after `first`: each woken by a task its predecessor's turn started."""
    rows = daemon.get("/api/requests", params={"limit": 500}).json()
    found, current = [], first
    while following := [r for r in rows if r.get("continuation_of") == current]:
        found.append(following[0])
        current = following[0]["id"]
    return found
