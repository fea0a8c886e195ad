"""Agents start and drive other sessions, with the owner's approval: the real Claude Code and Codex CLIs against the
scripted fake model call the daemon's MCP session tools (`MCP start_session {...}` in a prompt is the model calling
that tool), and the owner answers the cards through the API as the tray or a notification would."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import DaemonProcess
from tests.fake_model.server import FakeModelServer
from tests.test_runtime_claude import wait_for

OPTIONS = {"claude": {}, "codex": {"model": "fake-model"}}  # see tests/test_questions.py


@pytest.fixture(params=sorted(OPTIONS))
def lead(request: pytest.FixtureRequest, make_daemon: type[DaemonProcess], tmp_path: Path,
         agent_env: dict[str, str]) -> DaemonProcess:
    """A daemon with agent sessions on and an agent `lead` (Claude Code or Codex) in tmp_path/project."""
    daemon = make_daemon(tmp_path / "home").start(env=agent_env)
    (tmp_path / "project").mkdir()
    answer = daemon.post("/api/agents", {"name": "lead", "runtime": request.param,
                                         "folder": str(tmp_path / "project"), **OPTIONS[request.param]})
    assert answer.status_code == 201, answer.text
    switch(daemon, "yes")
    return daemon


def switch(daemon: DaemonProcess, value: str) -> None:
    answer = daemon.post("/api/settings", {"key": "agent_sessions", "value": value})
    assert answer.status_code == 200, answer.text


def mcp(tool: str, **arguments: Any) -> str:
    """A script line: the fake model calls this tool of Coxswain's MCP server."""
    return f"MCP {tool} {json.dumps(arguments)}\n"


def results(fake_model: FakeModelServer) -> str:
    """Everything the model was sent on the last call (its tool results among it)."""
    return json.dumps(fake_model.requests()[-1]["body"], ensure_ascii=False).replace('\\"', '"')


def children(daemon: DaemonProcess) -> list[dict[str, Any]]:
    return [r for r in daemon.get("/api/requests").json() if r["parent_id"]]


def pending_child(daemon: DaemonProcess) -> dict[str, Any]:
    wait_for(lambda: any(r["state"] == "pending" for r in children(daemon)), timeout=60)
    return next(r for r in children(daemon) if r["state"] == "pending")


def test_a_started_session_runs_after_approval_and_the_parent_waits_for_its_answer(
        lead: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path) -> None:
    lead.post("/api/session-groups", {"name": "Release 2.4"})
    child_script = "TOOL echo checked > child-was-here.txt; echo checked\nSAY the child checked the package"
    row = lead.request(mcp("start_session", prompt=child_script, title="Check the package", group="Release 2.4")
                       + mcp("wait", session="S1", seconds=120), agent="lead")

    card = pending_child(lead)
    assert card["agent"] == "S1" and card["parent_id"] == row["id"]
    assert card["session"]["group"] == "Release 2.4" and card["session"]["folder"] == str(tmp_path / "project")
    assert card["session"]["runtime"] == lead.get("/api/agents").json()[0]["runtime"]
    assert "use this machine's accounts" in card["session"]["accounts"]
    assert card["prompt"] == child_script  # the child gets the prompt, nothing of its parent
    assert lead.post(f"/api/requests/{card['id']}/approve", {}).status_code == 200

    child = lead.wait_state(card["id"], "done", timeout=90)
    assert child["result"] == "the child checked the package"
    assert (tmp_path / "project" / "child-was-here.txt").read_text() == "checked\n"
    assert child["via_model"]  # the badge: the model of the agent that sent it
    assert f"requested by {row['id']}" in child["timeline"][0]["text"]
    parent = lead.wait_state(row["id"], "done", timeout=90)
    assert '"state": "done"' in results(fake_model) and "the child checked the package" in results(fake_model)
    activity = [t["text"] for t in parent["timeline"] if t["kind"] == "activity"]
    assert activity[0].startswith("start_session → S1") and activity[1].startswith("wait S1: done")
    listed = lead.get("/api/sessions").json()
    assert [(s["session"], s["title"], s["state"], s["started_by"]) for s in listed] == [
        ("S1", "Check the package", "done", row["id"])]
    assert [a["name"] for a in lead.get("/api/agents").json()] == ["lead", "shell"]  # sessions are not the owner's agents
