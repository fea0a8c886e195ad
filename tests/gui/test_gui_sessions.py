"""What the owner sees of the sessions an agent starts, in the real tray app: the approval notification (on a
notification server that speaks the real D-Bus protocol) and card with the session, its group and the accounts line;
the console's list with the prompts indented under the request that sent them, "via agent · <parent title>", the
agent's model as a badge and a group header summing up; the session calls as activity lines in the parent's
timeline. The agent's calls are made on the daemon's MCP server with its running request's session token."""

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run, wait_state


async def start_session(url: str, token: str, arguments: dict[str, Any], call_id: int) -> dict[str, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": "start_session", "arguments": arguments},
    }
    async with httpx.AsyncClient(timeout=60) as client:
        answer = await client.post(
            f"{url}/mcp",
            json=body,
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
        )
    started: dict[str, Any] = json.loads(answer.json()["result"]["content"][0]["text"])
    return started


def test_the_owner_approves_a_session_and_sees_it_under_its_parent(
    desktop: Any, qloop: Any, agent_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    app, server = desktop
    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)

    async def scenario() -> None:
        api = app.api
        assert (await api.post("/api/settings", json={"key": "agent_sessions", "value": "yes"})).status_code == 200
        await api.post("/api/session-groups", json={"name": "Release 2.4"})
        parent = (
            await api.post("/api/requests", json={"agent": "shell", "prompt": "sleep 60 # release checks"})
        ).json()
        await wait_state(app, parent["id"], "running")
        token = app.daemon.principals.turn_token(parent["id"])
        first = asyncio.ensure_future(
            start_session(
                app.daemon.url,
                token,
                {"prompt": "echo hello from S1", "title": "Check deps", "group": "Release 2.4"},
                1,
            )
        )

        await until(lambda: server.shown)
        shown = server.shown[-1]
        assert shown.title.endswith(": an agent wants a session")
        folder = str(app.daemon.home.workspace)
        assert f"S1 · shell in {folder} · Group: Release 2.4: echo hello from S1" in shown.body
        assert "Sessions it starts use this machine's accounts" in shown.body
        card_id = next(r["id"] for r in (await api.get("/api/requests", params={"state": "pending"})).json())
        card = await app.open_card(card_id)
        assert card is not None and "wants a session: <b>Check deps</b>" in card_heading(card)
        assert card.accounts.text().startswith("Sessions it starts use this machine's accounts")
        assert "Group: Release 2.4" in card_texts(card)
        SHOTS.mkdir(parents=True, exist_ok=True)
        card.grab().save(str(SHOTS / "session-approval-card.png"))
        await until(lambda: any(" · S1 · via agent: " in text for text in tray_texts(app)))  # under "Waiting for you"
        server.click(shown, "Approve")
        started = await first
        assert started["session"] == "S1"
        await wait_state(app, started["request"], "done")
        second = await start_session(
            app.daemon.url, token, {"prompt": "sleep 30", "title": "Run the tests", "group": "Release 2.4"}, 2
        )
        await wait_state(app, second["request"], "running")  # no card: this conversation is approved

        console = await app.open_console(("request", parent["id"]))
        parent_row = console.list.row_of(parent["id"])
        await until(lambda: parent_row.childCount() == 1 and parent_row.child(0).childCount() == 2)
        assert console.chosen == ("request", parent["id"]), console.chosen  # a refill moves no selection
        header = parent_row.child(0)
        assert header.text(0) == "Group: Release 2.4 — 1 running"
        rows = [header.child(i).text(0) for i in range(2)]
        assert " · S1 · via agent · sleep 60 # release checks [shell default model] · done" in rows[0]
        assert rows[0].endswith("\necho hello from S1")
        assert rows[1].endswith(
            " · S2 · via agent · sleep 60 # release checks [shell default model] · running\nsleep 30"
        )
        timeline = [console.timeline.item(i).text() for i in range(console.timeline.count())]
        assert any("⇢ session call: start_session → S1" in line for line in timeline)
        console.grab().save(str(SHOTS / "console-sessions.png"))
        await api.post(f"/api/requests/{second['request']}/cancel", json={})
        await api.post(f"/api/requests/{parent['id']}/cancel", json={})

    run(qloop, scenario())


@pytest.mark.parametrize("runtime", ["claude", "codex"])
def test_a_real_agents_session_is_approved_from_the_notification(
    desktop: Any,
    qloop: Any,
    agent_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    fake_model: Any,
    runtime: str,
) -> None:
    """End to end in the tray app: the real CLI's model calls start_session, the owner clicks Approve on the
    notification, the child runs its tool call, and the parent's wait brings its answer back to the model."""
    app, server = desktop
    for name, value in agent_env.items():
        monkeypatch.setenv(name, value)
    (tmp_path / "project").mkdir()

    async def scenario() -> None:
        api = app.api
        await api.post("/api/settings", json={"key": "agent_sessions", "value": "yes"})
        options = {"model": "fake-model"} if runtime == "codex" else {}
        added = await api.post(
            "/api/agents", json={"name": "lead", "runtime": runtime, "folder": str(tmp_path / "project"), **options}
        )
        assert added.status_code == 201, added.text
        child = "TOOL echo child output > child.txt\nSAY the child is done"
        script = f'MCP start_session {json.dumps({"prompt": child, "title": "Child"})}\nMCP wait {{"session": "S1"}}\n'
        parent = (await api.post("/api/requests", json={"agent": "lead", "prompt": script})).json()
        await until(lambda: server.shown, timeout=60)
        shown = server.shown[-1]
        assert f"S1 · {runtime} in {tmp_path / 'project'}" in shown.body
        server.click(shown, "Approve")
        done = await wait_state(app, parent["id"], "done", timeout=120)
        assert (tmp_path / "project" / "child.txt").read_text() == "child output\n"
        sent = json.dumps(fake_model.requests()[-1]["body"])
        assert "the child is done" in sent and '\\"state\\": \\"done\\"' in sent
        assert [t["text"].split(":")[0] for t in done["timeline"] if t["kind"] == "activity"] == [
            "start_session → S1",
            "wait S1",
        ]

    run(qloop, scenario(), timeout=180)


def card_heading(card: Any) -> str:
    from PySide6.QtWidgets import QLabel

    return str(card.findChildren(QLabel)[0].text())


def card_texts(card: Any) -> str:
    from PySide6.QtWidgets import QLabel

    return "\n".join(label.text() for label in card.findChildren(QLabel))


def tray_texts(app: Any) -> list[str]:
    """The texts of the tray menu's entries and of their submenus."""
    texts, menus = [], [app.tray.menu]
    while menus:
        for action in menus.pop().actions():
            texts.append(action.text())
            if action.menu() is not None:
                menus.append(action.menu())
    return texts
