"""Agents start and drive other sessions, with the owner's approval: the real Claude Code and Codex CLIs against the
scripted fake model call the daemon's MCP session tools (`MCP start_session {...}` in a prompt is the model calling
that tool), and the owner answers the cards through the API as the tray or a notification would."""

import json
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import DaemonProcess, with_cli_agent
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_runtime_claude import wait_for


@pytest.fixture(params=["claude", "codex"])
def lead(
    request: pytest.FixtureRequest, make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]
) -> DaemonProcess:
    """A daemon with agent sessions on and an agent `lead` (Claude Code or Codex) in tmp_path/project."""
    daemon = with_cli_agent(make_daemon, tmp_path, agent_env, "lead", request.param)
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


def everything_told(fake_model: FakeModelServer) -> str:
    """What the model was sent on every call, by every session."""
    return json.dumps([r["body"] for r in fake_model.requests()], ensure_ascii=False).replace('\\"', '"')


def children(daemon: DaemonProcess) -> list[dict[str, Any]]:
    return [r for r in daemon.get("/api/requests").json() if r["parent_id"]]


def pending_child(daemon: DaemonProcess) -> dict[str, Any]:
    wait_for(lambda: any(r["state"] == "pending" for r in children(daemon)), timeout=60)
    return next(r for r in children(daemon) if r["state"] == "pending")


def test_a_started_session_runs_after_approval_and_the_parent_waits_for_its_answer(
    lead: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    assert lead.cox("session", "group", "Release 2.4", check=True).stdout.strip() == "groups: Release 2.4"
    child_script = "TOOL echo checked > child-was-here.txt; echo checked\nSAY the child checked the package"
    row = lead.request(
        mcp("start_session", prompt=child_script, title="Check the package", group="Release 2.4")
        + mcp("wait", session="S1", seconds=120),
        agent="lead",
    )

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
        ("S1", "Check the package", "done", row["id"])
    ]
    assert [a["name"] for a in lead.get("/api/agents").json()] == ["lead", "shell"]  # not the owner's agents
    shown = lead.cox("session", "list", check=True).stdout
    assert f"S1 done: Check the package ({card['session']['runtime']} in {tmp_path / 'project'}; via agent · " in shown
    assert "Group: Release 2.4)" in shown


def test_a_denied_start_tells_the_parent_approval_denied(lead: DaemonProcess, fake_model: FakeModelServer) -> None:
    row = lead.request(mcp("start_session", prompt="SAY never runs", title="Rewrite history"), agent="lead")
    card = pending_child(lead)
    assert lead.post(f"/api/requests/{card['id']}/deny", {}).status_code == 200
    lead.wait_state(row["id"], "done", timeout=90)
    assert '"error": "approval_denied"' in results(fake_model) and "denied by owner" in results(fake_model)
    assert lead.show(card["id"])["state"] == "cancelled"
    assert [(s["session"], s["state"]) for s in lead.get("/api/sessions").json()] == [("S1", "archived")]


def test_a_fifth_session_at_work_is_refused_as_busy(lead: DaemonProcess, fake_model: FakeModelServer) -> None:
    starts = "".join(mcp("start_session", runtime="shell", prompt="sleep 60", title=f"worker {n}") for n in range(5))
    row = lead.request(starts, agent="lead")
    lead.post(f"/api/requests/{pending_child(lead)['id']}/approve", {})
    lead.wait_state(row["id"], "done", timeout=90)
    assert '"error": "busy"' in results(fake_model)
    assert "4 sessions are at work already (S1, S2, S3, S4)" in results(fake_model)
    at_work = [(s["session"], s["state"]) for s in lead.get("/api/sessions").json()]
    assert at_work == [(f"S{n}", "running") for n in range(1, 5)]  # the fifth was never made
    for child in children(lead):  # only the first waited for the owner: the conversation is approved
        assert lead.show(child["id"])["timeline"][0]["text"].endswith(", approved") == (child["agent"] != "S1")
        lead.post(f"/api/requests/{child['id']}/cancel", {})


def test_a_started_session_may_start_one_only_after_the_owners_switch(
    lead: DaemonProcess, fake_model: FakeModelServer
) -> None:
    grandchild = mcp("start_session", prompt="SAY the grandchild ran", title="Grandchild") + mcp("wait", session="S2")
    row = lead.request(mcp("start_session", prompt=grandchild, title="Child") + mcp("wait", session="S1"), agent="lead")
    lead.post(f"/api/requests/{pending_child(lead)['id']}/approve", {})
    lead.wait_state(row["id"], "done", timeout=90)
    told = everything_told(fake_model)
    assert '"error": "forbidden"' in told and "may not start or drive sessions unless the owner" in told
    assert [s["may_create_sessions"] for s in lead.get("/api/sessions").json()] == [False]

    assert "may create sessions" in lead.cox("session", "may-create", "S1", "yes", check=True).stdout
    again = lead.request(grandchild, agent="S1")  # the owner's next prompt in the child's own conversation
    card = pending_child(lead)  # S1's conversation has not started a session before: it asks
    assert card["agent"] == "S2" and card["parent_id"] == again["id"] and card["session"]["parent_title"] == "Child"
    lead.post(f"/api/requests/{card['id']}/approve", {})
    assert lead.wait_state(again["id"], "done", timeout=90)["result"] != ""
    assert lead.wait_state(card["id"], "done", timeout=90)["result"] == "the grandchild ran"
    listed = {s["session"]: s for s in lead.get("/api/sessions").json()}
    assert listed["S1"]["may_create_sessions"] and not listed["S2"]["may_create_sessions"]
    assert listed["S2"]["started_by"] == again["id"]


def test_a_childs_question_is_relayed_to_the_parent_for_the_owner(
    lead: DaemonProcess, fake_model: FakeModelServer
) -> None:
    child = "ASK Which registry shall I publish to?\nSAY published"
    row = lead.request(mcp("start_session", prompt=child, title="Publish") + mcp("wait", session="S1"), agent="lead")
    card = pending_child(lead)
    lead.post(f"/api/requests/{card['id']}/approve", {})
    parent = lead.wait_state(row["id"], "done", timeout=90)
    told = results(fake_model)
    assert '"state": "asking"' in told and "Which registry shall I publish to?" in told
    assert "bring it to the owner" in told and "answer_question only as they say" in told
    assert any(t["text"].startswith("S1 asks: Which registry") for t in parent["timeline"])
    assert lead.show(card["id"])["question"]["question"] == "Which registry shall I publish to?"  # it waits there
    lead.cox("answer", card["id"], "the", "internal", "one", check=True)
    assert lead.wait_state(card["id"], "done", timeout=90)["result"] == "published"


def test_switching_sessions_off_closes_them_at_once(lead: DaemonProcess, fake_model: FakeModelServer) -> None:
    row = lead.request(mcp("start_session", prompt="SAY never runs") + mcp("list_sessions"), agent="lead")
    card = pending_child(lead)
    switch(lead, "no")
    lead.wait_state(row["id"], "done", timeout=90)
    assert lead.show(card["id"])["state"] == "cancelled"
    assert "agent sessions were switched off" in lead.show(card["id"])["result"]
    assert json.dumps(fake_model.requests()[-1]["body"]).count("not_enabled") >= 2  # the start, then the list


def test_the_approval_is_remembered_across_a_daemon_restart(
    lead: DaemonProcess, make_daemon: type[DaemonProcess], agent_env: dict[str, str]
) -> None:
    script = (
        mcp("start_session", runtime="shell", prompt="echo first", title="first")
        + mcp("wait", session="S1")
        + "TOOL sleep 8\n"
        + mcp("start_session", runtime="shell", prompt="echo second", title="second")
        + mcp("wait", session="S2")
    )
    row = lead.request(script, agent="lead")
    lead.post(f"/api/requests/{pending_child(lead)['id']}/approve", {})
    wait_for(lambda: any(r["agent"] == "S1" and r["state"] == "done" for r in children(lead)), timeout=60)
    lead.stop()
    again = make_daemon(lead.home).start(env=agent_env)
    again.wait_state(row["id"], "done", timeout=120)
    second = next(r for r in children(again) if r["agent"] == "S2")
    assert again.show(second["id"])["timeline"][0]["text"].endswith(", approved")  # no second card
    assert again.wait_state(second["id"], "done", timeout=30)["result"] == "second"


def test_the_next_prompt_continues_the_same_conversation(lead: DaemonProcess, fake_model: FakeModelServer) -> None:
    script = (
        mcp("start_session", prompt="SAY the first answer", title="Two turns")
        + mcp("wait", session="S1")
        + mcp("send_prompt", session="S1", prompt="TOOL echo second turn\nSAY the second answer")
        + mcp("wait", session="S1")
        + mcp("read_session", session="S1")
    )
    row = lead.request(script, agent="lead")
    lead.post(f"/api/requests/{pending_child(lead)['id']}/approve", {})  # the send_prompt needs no second card
    parent = lead.wait_state(row["id"], "done", timeout=120)
    first, second = sorted(children(lead), key=lambda r: r["id"])
    assert (first["result"], second["result"]) == ("the first answer", "the second answer")
    conversation = first["conversation_ref"]
    assert conversation and second["conversation_ref"] == conversation  # the same runtime conversation
    last_of_child = [r["body"] for r in fake_model.requests() if "the second answer" in json.dumps(r["body"])][-1]
    assert "SAY the first answer" in json.dumps(last_of_child)  # the model saw the first turn as history
    told = results(fake_model)
    assert '"prompts": [' in told and "the second answer" in told
    assert [t["text"].split(":")[0] for t in parent["timeline"] if t["kind"] == "activity"] == [
        "start_session → S1",
        "wait S1",
        "send_prompt S1",
        "wait S1",
        "read_session S1",
    ]
