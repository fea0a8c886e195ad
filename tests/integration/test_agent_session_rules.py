"""The rules of agent sessions, called on the daemon's real MCP server the way an agent CLI's relay calls it (with the
session token of a running request): bad input to every tool, the setting, rate limits, the loop guard, the depth
rule and the owner's switch, an agent's own session, "ask" mode, waits, and a session's background tasks. A real
daemon object runs with a clock the test moves, and shell agents stand in for the CLIs (whose turns
tests/integration/test_agent_sessions.py drives end to end)."""

import asyncio
import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.daemon import Daemon
from desktop.platform.paths import Home
from tests.ledger_fixture import MovableClock
from tests.live_daemon import live_daemon

Live = tuple[Daemon, MovableClock, httpx.AsyncClient]
CALL_IDS = itertools.count(100)


@pytest.fixture
async def live(tmp_path: Path, agent_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Live]:
    for name, value in agent_env.items():  # Claude Code can run here: the setting may be switched on
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("GEMINI_API_KEY")  # and Gemini CLI cannot
    async with live_daemon(tmp_path / "home") as (daemon, clock, client):
        try:
            switched = await client.post("/api/settings", json={"key": "agent_sessions", "value": "yes"})
            assert switched.status_code == 200, switched.text
            yield daemon, clock, client
        finally:
            for row in (await client.get("/api/requests")).json():
                if row["state"] in ("pending", "approved", "running"):
                    await client.post(f"/api/requests/{row['id']}/cancel", json={})


async def call(
    client: httpx.AsyncClient, token: str, tool: str, arguments: dict[str, Any], call_id: int | None = None
) -> tuple[bool, Any]:
    """(flagged as an error, the JSON answer) of one tool call; each has its own JSON-RPC id, as a CLI's do."""
    body = {
        "jsonrpc": "2.0",
        "id": next(CALL_IDS) if call_id is None else call_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    answer = await client.post(
        "/mcp", json=body, headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    )
    assert answer.status_code == 200, answer.text
    result = answer.json()["result"]
    text = result["content"][0]["text"]
    try:
        return bool(result.get("isError")), json.loads(text)
    except ValueError:
        return bool(result.get("isError")), text


async def code(client: httpx.AsyncClient, token: str, tool: str, arguments: dict[str, Any]) -> str:
    flagged, answer = await call(client, token, tool, arguments)
    assert flagged and isinstance(answer, dict), answer
    return str(answer["error"])


async def running(
    daemon: Daemon,
    client: httpx.AsyncClient,
    command: str = "sleep 600",
    agent: str = "shell",
    headers: dict[str, str] | None = None,
) -> tuple[str, str]:
    """(a running request of `agent`, the session token its agent would hold)."""
    row = (await client.post("/api/requests", json={"agent": agent, "prompt": command}, headers=headers)).json()
    if row["state"] == "pending":
        await client.post(f"/api/requests/{row['id']}/approve", json={})
    await state(client, row["id"], "running")
    return row["id"], daemon.principals.turn_token(row["id"])


async def state(client: httpx.AsyncClient, request_id: str, *states: str) -> dict[str, Any]:
    for _ in range(1500):
        row: dict[str, Any] = (await client.get(f"/api/requests/{request_id}")).json()
        if row["state"] in states:
            return row
        await asyncio.sleep(0.02)
    raise AssertionError(f"{request_id} never became {states}: {row['state']}")


async def approved_start(
    client: httpx.AsyncClient, token: str, arguments: dict[str, Any], call_id: int | None = None
) -> dict[str, Any]:
    """start_session, with the owner approving its card as it comes."""
    started = asyncio.ensure_future(call(client, token, "start_session", arguments, call_id))
    while not started.done():
        for row in (await client.get("/api/requests", params={"state": "pending"})).json():
            if row["parent_id"]:
                await client.post(f"/api/requests/{row['id']}/approve", json={})
        await asyncio.sleep(0.02)
    flagged, answer = started.result()
    assert not flagged, answer
    return dict(answer)


async def test_every_tool_answers_bad_input_with_its_code(live: Live) -> None:
    daemon, clock, client = live
    _, token = await running(daemon, client)
    await client.post("/api/session-groups", json={"name": "Release 2.4"})
    started = await approved_start(client, token, {"prompt": "true", "title": "quick"})
    assert started["session"] == "S1" and started["runtime"] == "shell"  # it follows the calling session
    bad: list[tuple[str, dict[str, Any], str]] = [
        ("read_session", {}, "invalid_input"),
        ("read_session", {"session": 5}, "invalid_input"),
        ("read_session", {"session": "S99"}, "not_found"),
        ("read_session", {"session": "x" * 10_000}, "not_found"),
        ("start_session", {}, "invalid_input"),
        ("start_session", {"prompt": 5}, "invalid_input"),
        ("start_session", {"prompt": "   "}, "invalid_input"),
        ("start_session", {"prompt": "x" * 100_001}, "invalid_input"),
        ("start_session", {"prompt": "hi", "runtime": "nope"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "folder": "relative/path"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "folder": "/no/such/folder"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "runtime": "claude", "permission_mode": "yolo"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "runtime": "claude", "effort": "extreme"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "runtime": "shell", "effort": "high"}, "invalid_input"),
        ("start_session", {"prompt": "hi", "group": "Release 9"}, "not_found"),
        ("start_session", {"prompt": "hi", "runtime": "gemini"}, "runtime_unavailable"),
        ("start_session", {"prompt": "hi", "title": ["a"]}, "invalid_input"),
        ("send_prompt", {"session": "S99", "prompt": "x"}, "not_found"),
        ("send_prompt", {"session": "S1"}, "invalid_input"),
        ("send_prompt", {"session": ["S1"], "prompt": "x"}, "invalid_input"),
        ("send_prompt", {"session": "S1", "prompt": "x" * 100_001}, "invalid_input"),
        ("send_prompt", {"session": "S1", "prompt": "x", "effort": "max"}, "invalid_input"),
        ("wait", {"session": "S99"}, "not_found"),
        ("wait", {"session": "S1", "seconds": "soon"}, "invalid_input"),
        ("wait", {"session": "S1", "seconds": -1}, "invalid_input"),
        ("wait", {}, "invalid_input"),
        ("answer_question", {"session": "S1", "answer": "yes"}, "no_active_turn"),
        ("answer_question", {"session": "S1"}, "invalid_input"),
        ("answer_question", {"session": "S42", "answer": "yes"}, "not_found"),
        ("stop_turn", {"session": "S99"}, "not_found"),
        ("stop_turn", {"session": None}, "invalid_input"),
        ("archive_session", {"session": 3}, "invalid_input"),
        ("archive_session", {"session": "S7"}, "not_found"),
    ]
    await state(client, started["request"], "done")
    assert await code(client, token, "stop_turn", {"session": "S1"}) == "no_active_turn"
    for tool, arguments, expected in bad:
        clock.advance(7)  # within the 10 changes a minute
        assert (tool, await code(client, token, tool, arguments)) == (tool, expected), arguments
    _, words = await call(client, token, "start_session", {"prompt": "x" * 100_001})
    assert "the limit is 100,000" in words["message"] and "x" * 100 not in words["message"]
    _, words = await call(client, token, "start_session", {"prompt": 5})
    assert words["message"].startswith("start_session cannot take these arguments: prompt:")
    _, words = await call(client, token, "start_session", {"prompt": "hi", "runtime": "gemini"})
    assert words["message"] == "gemini cannot run here: no API key"
    assert (await client.get("/api/health")).status_code == 200
    assert [s["session"] for s in (await client.get("/api/sessions")).json()] == ["S1"]  # nothing else was made
    _, read = await call(client, token, "read_session", {"session": "s1"})
    assert read["prompts"][0]["state"] == "done" and read["may_create_sessions"] is False


async def test_switched_off_every_tool_says_not_enabled_and_waits_end(live: Live) -> None:
    daemon, _, client = live
    _, token = await running(daemon, client)
    await approved_start(client, token, {"prompt": "sleep 600"})
    waiting = asyncio.ensure_future(call(client, token, "wait", {"session": "S1"}))
    await asyncio.sleep(0.3)
    assert not waiting.done()
    assert (await client.post("/api/settings", json={"key": "agent_sessions", "value": "no"})).status_code == 200
    flagged, answer = await asyncio.wait_for(waiting, 5)
    assert flagged and answer["error"] == "not_enabled"
    for tool, arguments in [
        ("list_sessions", {}),
        ("read_session", {"session": "S1"}),
        ("start_session", {"prompt": "hi"}),
        ("send_prompt", {"session": "S1", "prompt": "x"}),
        ("wait", {"session": "S1"}),
        ("answer_question", {"session": "S1", "answer": "x"}),
        ("stop_turn", {"session": "S1"}),
        ("archive_session", {"session": "S1"}),
    ]:
        assert await code(client, token, tool, arguments) == "not_enabled", tool


async def test_sessions_cannot_be_switched_on_without_an_agent_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no agent CLI on it
    daemon = Daemon(Home(tmp_path / "home"), port=0)
    await daemon.start()
    try:
        owner = (tmp_path / "home" / "owner.token").read_text().strip()
        async with httpx.AsyncClient(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"}) as client:
            refused = await client.post("/api/settings", json={"key": "agent_sessions", "value": "yes"})
            assert refused.status_code == 409 and "need an agent CLI that can run here" in refused.json()["error"]
            assert (await client.get("/api/settings")).json()["agent_sessions"] == "no"
            for wrong in ("1m", "61m", "soon"):
                answer = await client.post("/api/settings", json={"key": "session_wait_max", "value": wrong})
                assert answer.status_code == 400, wrong
    finally:
        await daemon.stop()


async def test_rate_limits_then_the_loop_guard_asks_the_owner(live: Live) -> None:
    daemon, clock, client = live
    _, token = await running(daemon, client)
    await approved_start(client, token, {"prompt": "true"})  # change 1; the owner's yes restarts the guard
    for n in range(9):
        flagged, answer = await call(client, token, "send_prompt", {"session": "S1", "prompt": f"echo {n}"})
        assert not flagged and answer["state"] in ("queued", "running", "done"), answer
    flagged, answer = await call(client, token, "send_prompt", {"session": "S1", "prompt": "echo one too many"})
    assert flagged and answer["error"] == "rate_limited" and "10 session changes a minute" in answer["message"]
    for _ in range(50):  # 10 calls so far (a refused call does not count)
        assert not (await call(client, token, "list_sessions", {}))[0]
    assert await code(client, token, "list_sessions", {}) == "rate_limited"
    clock.advance(61)
    assert not (await call(client, token, "list_sessions", {}))[0]

    for batch in range(3):  # 9 agent prompts so far; 30 in a row go through, then the next one asks the owner
        for _ in range(10 if batch < 2 else 1):
            flagged, answer = await call(client, token, "send_prompt", {"session": "S1", "prompt": "true"})
            assert not flagged, answer
        clock.advance(61)
    prompts = [r for r in (await client.get("/api/requests")).json() if r["agent"] == "S1"]
    assert len(prompts) == 31 and all(r["state"] != "pending" for r in prompts)
    guarded = asyncio.ensure_future(call(client, token, "send_prompt", {"session": "S1", "prompt": "true"}))
    for _ in range(500):
        waiting = [r for r in (await client.get("/api/requests", params={"state": "pending"})).json()]
        if waiting:
            break
        await asyncio.sleep(0.02)
    assert len(waiting) == 1 and waiting[0]["agent"] == "S1"
    assert not guarded.done()
    await client.post(f"/api/requests/{waiting[0]['id']}/approve", json={})
    assert not (await guarded)[0]
    flagged, answer = await call(client, token, "send_prompt", {"session": "S1", "prompt": "true"})
    assert not flagged and answer["state"] != "waiting for the owner's approval"  # counted from zero again


async def test_a_session_acts_on_others_only_with_the_owners_switch_and_never_on_itself(live: Live) -> None:
    daemon, _, client = live
    parent, token = await running(daemon, client)
    started = await approved_start(client, token, {"prompt": "sleep 600", "title": "child"})
    await state(client, started["request"], "running")
    child_token = daemon.principals.turn_token(started["request"])
    forbidden = await call(client, child_token, "start_session", {"prompt": "true"})
    assert forbidden[1]["error"] == "forbidden" and "may create sessions" in forbidden[1]["message"]
    assert await code(client, child_token, "stop_turn", {"session": "S1"}) == "forbidden"
    refused = await client.post(
        "/api/sessions/S1", json={"may_create_sessions": True}, headers={"Authorization": f"Bearer {child_token}"}
    )
    assert refused.status_code in (401, 403)  # an agent cannot switch it on for itself
    assert (await client.post("/api/sessions/S1", json={"may_create_sessions": True})).json()["may_create_sessions"]

    _, own = await call(client, child_token, "send_prompt", {"session": "S1", "prompt": "true"})
    assert own["error"] == "forbidden" and "its own session" in own["message"]
    assert await code(client, child_token, "archive_session", {"session": "S1"}) == "forbidden"
    grandchild = await approved_start(client, child_token, {"prompt": "true", "title": "grandchild"})
    assert grandchild["session"] == "S2"
    listed = {s["session"]: s for s in (await client.get("/api/sessions")).json()}
    assert listed["S1"]["may_create_sessions"] and listed["S1"]["started_by"] == parent
    assert not listed["S2"]["may_create_sessions"] and listed["S2"]["started_by"] == started["request"]
    _, seen = await call(client, token, "list_sessions", {})
    assert [(s["session"], s["may_create_sessions"]) for s in seen["sessions"]] == [("S1", True), ("S2", False)]


async def test_ask_mode_asks_the_owner_before_every_change(live: Live) -> None:
    daemon, _, client = live
    agent = (await client.get("/api/agents")).json()[0]
    answer = await client.post(
        "/api/agents/shell/change", json={"runtime": "shell", "folder": agent["folder"], "sessions": "ask"}
    )
    assert answer.status_code == 200, answer.text
    sarah = (await client.post("/api/people", json={"name": "sarah"})).json()["token"]
    as_sarah = {"Authorization": f"Bearer {sarah}"}
    parent, token = await running(daemon, client, headers=as_sarah)
    await approved_start(client, token, {"prompt": "sleep 600"})
    sent = asyncio.ensure_future(call(client, token, "send_prompt", {"session": "S1", "prompt": "true"}))
    await asyncio.sleep(0.3)
    waiting = (await client.get("/api/requests", params={"state": "pending"})).json()
    assert len(waiting) == 1 and not sent.done()  # an approved conversation still asks, in "ask" mode
    await client.post(f"/api/requests/{waiting[0]['id']}/deny", json={})
    assert (await sent)[1]["error"] == "approval_denied"

    stopping = asyncio.ensure_future(call(client, token, "stop_turn", {"session": "S1"}))
    for _ in range(500):
        question = (await client.get(f"/api/requests/{parent}")).json()["question"]
        if question:
            break
        await asyncio.sleep(0.02)
    assert question["question"].startswith("shell wants to stop the turn of S1") and question["options"] == [
        "Allow",
        "Deny",
    ]
    refused = await client.post(f"/api/requests/{parent}/answer", json={"text": "Allow"}, headers=as_sarah)
    assert refused.status_code == 403 and "only the owner" in refused.json()["error"]
    await client.post(f"/api/requests/{parent}/answer", json={"text": "Deny"})
    assert (await stopping)[1]["error"] == "approval_denied"
    assert (await client.get("/api/sessions")).json()[0]["state"] == "running"

    stopping = asyncio.ensure_future(call(client, token, "stop_turn", {"session": "S1"}, call_id=2))
    for _ in range(500):
        if (await client.get(f"/api/requests/{parent}")).json()["question"]:
            break
        await asyncio.sleep(0.02)
    await client.post(f"/api/requests/{parent}/answer", json={"text": "Allow"})
    assert not (await stopping)[0]
    for _ in range(500):
        if (await client.get("/api/sessions")).json()[0]["state"] == "cancelled":
            break
        await asyncio.sleep(0.02)
    assert (await client.get("/api/sessions")).json()[0]["state"] == "cancelled"


async def test_wait_returns_what_is_there_and_lasts_at_most_the_setting(live: Live) -> None:
    daemon, clock, client = live
    _, token = await running(daemon, client)
    await approved_start(client, token, {"prompt": "sleep 600"})
    flagged, answer = await call(client, token, "wait", {"session": "S1", "seconds": 0.2})
    assert not flagged and answer["timed_out"] and answer["state"] == "running" and answer["waited_seconds"] < 5
    assert (await client.post("/api/settings", json={"key": "session_wait_max", "value": "2m"})).status_code == 200
    waiting = asyncio.ensure_future(call(client, token, "wait", {"session": "S1", "seconds": 3600}))
    await asyncio.sleep(0.3)
    clock.advance(121)
    await client.post("/api/requests", json={"agent": "shell", "prompt": "true"})  # any event: the wait looks again
    flagged, answer = await asyncio.wait_for(waiting, 5)
    assert answer["timed_out"] and "at most 2 min" in answer["note"] and answer["waited_seconds"] >= 120

    quick = await approved_start(client, token, {"prompt": "echo quick", "title": "quick"})
    flagged, answer = await call(client, token, "wait", {"session": quick["session"], "seconds": 30})
    assert not answer["timed_out"] and answer["state"] == "done" and answer["result"] == "quick"


async def test_a_sessions_background_tasks_are_read_by_who_may_see_it(live: Live) -> None:
    daemon, _, client = live
    _, token = await running(daemon, client)
    started = await approved_start(client, token, {"prompt": "sleep 600"})
    await state(client, started["request"], "running")
    child_token = daemon.principals.turn_token(started["request"])
    flagged, task = await call(client, child_token, "start_task", {"command": "echo from the child; sleep 60"})
    assert not flagged, task
    for _ in range(200):
        flagged, shown = await call(client, token, "read_task_output", {"task_id": task["id"]})
        if "from the child" in shown:
            break
        await asyncio.sleep(0.05)
    assert "from the child" in shown

    tom = (await client.post("/api/people", json={"name": "tom"})).json()["token"]
    folder = (await client.get("/api/agents")).json()[0]["folder"]
    await client.post("/api/agents", json={"name": "other", "runtime": "shell", "folder": folder})
    _, stranger = await running(daemon, client, agent="other", headers={"Authorization": f"Bearer {tom}"})
    _, refused = await call(client, stranger, "read_task_output", {"task_id": task["id"]})
    assert "from the child" not in str(refused)
    assert await code(client, stranger, "read_session", {"session": "S1"}) == "not_found"
    await client.post(f"/api/tasks/{task['id']}/stop", json={})


async def test_the_same_call_made_twice_starts_one_session(live: Live) -> None:
    daemon, _, client = live
    _, token = await running(daemon, client)
    first = await approved_start(client, token, {"prompt": "true"}, call_id=7)
    again = await approved_start(client, token, {"prompt": "true"}, call_id=7)  # the relay, after a restart
    assert again["session"] == first["session"] == "S1" and again["request"] == first["request"]
    other = await approved_start(client, token, {"prompt": "true"}, call_id=8)
    assert other["session"] == "S2"


async def test_at_most_four_sessions_run_at_once_whoever_sends_the_prompts(live: Live) -> None:
    daemon, clock, client = live
    _, token = await running(daemon, client)
    for n in range(5):
        done = await approved_start(client, token, {"prompt": "true", "title": f"worker {n + 1}"})
        await state(client, done["request"], "done")
        clock.advance(13)  # within the 10 changes a minute
    sent = [
        (await client.post("/api/requests", json={"agent": f"S{n}", "prompt": "sleep 600"})).json() for n in range(1, 6)
    ]  # the owner's own prompts to five idle sessions
    for row in sent[:4]:
        await state(client, row["id"], "running")
    await asyncio.sleep(0.5)
    assert (await client.get(f"/api/requests/{sent[4]['id']}")).json()["state"] == "approved"  # waits its turn
    assert await code(client, token, "start_session", {"prompt": "true"}) == "busy"
    await client.post(f"/api/requests/{sent[0]['id']}/cancel", json={})
    await state(client, sent[4]["id"], "running")
