"""An agent asks the person behind its request a question and waits; the answer reaches the model. Driven with the
real agent CLIs against the scripted fake model: Claude through its own AskUserQuestion (routed to Coxswain's MCP
server by `--permission-prompt-tool`), Codex, Gemini and Copilot through the MCP server's `ask_question` tool."""

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import CLI_OPTIONS, DaemonProcess, with_cli_agent
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_runtime_claude import wait_for


@pytest.fixture(params=sorted(CLI_OPTIONS))
def asking_daemon(
    request: pytest.FixtureRequest, make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]
) -> DaemonProcess:
    return with_cli_agent(make_daemon, tmp_path, agent_env, "agent", request.param)


def open_question(daemon: DaemonProcess, request_id: str) -> dict[str, Any]:
    wait_for(lambda: daemon.show(request_id)["question"] is not None, timeout=60)
    question: dict[str, Any] = daemon.show(request_id)["question"]
    return question


def test_the_answer_reaches_the_model(asking_daemon: DaemonProcess, fake_model: FakeModelServer) -> None:
    row = asking_daemon.request("ASK Shall I deploy to staging?", agent="agent")
    question = open_question(asking_daemon, row["id"])
    assert question["question"] == "Shall I deploy to staging?" and question["options"] == ["Yes", "No"]
    shown = asking_daemon.cox("show", row["id"], check=True).stdout
    assert "question: Shall I deploy to staging?  [Yes / No]" in shown

    answered = asking_daemon.cox("answer", row["id"], "No,", "wait", "for", "the", "release", check=True)
    assert "→ No, wait for the release" in answered.stdout
    done = asking_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["question"] is None
    assert "wait for the release" in done["result"]  # the model's last tool result holds the answer
    timeline = [t["text"] for t in done["timeline"]]
    assert "question: Shall I deploy to staging? (Yes / No)" in timeline
    assert "answered by owner: No, wait for the release" in timeline
    last_call = json.dumps([r["body"] for r in fake_model.requests() if r["method"] == "POST"][-1])
    assert "wait for the release" in last_call


def test_a_cancel_withdraws_the_question_and_stops(asking_daemon: DaemonProcess, tmp_path: Path) -> None:
    row = asking_daemon.request("ASK Shall I go on?\nTOOL echo went on > went-on.txt", agent="agent")
    open_question(asking_daemon, row["id"])
    asking_daemon.post(f"/api/requests/{row['id']}/cancel", {})
    ended = asking_daemon.wait_state(row["id"], "cancelled", timeout=60)
    timeline = [t["text"] for t in ended["timeline"]]
    assert "question withdrawn: the request was cancelled" in timeline
    assert not (tmp_path / "project" / "went-on.txt").exists()  # the tool call after the question never ran


def test_the_turn_token_reaches_its_own_turn_only(claude_daemon: DaemonProcess) -> None:
    sam = claude_daemon.add_person("sam")
    row = claude_daemon.request("ASK Which branch?", agent="claude")
    open_question(claude_daemon, row["id"])
    token_file = claude_daemon.home / "tasks" / f"{row['id']}.1" / "turn.token"
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text()
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    mcp_headers = {"Accept": "application/json, text/event-stream"}

    tools = claude_daemon.post("/mcp", listing, token=token, headers=mcp_headers)
    assert tools.status_code == 200 and "start_task" in tools.text
    for path in ("/api/requests", f"/api/requests/{row['id']}", "/api/health", "/api/agents", "/api/tasks"):
        refused = claude_daemon.get(path, token=token)
        assert refused.status_code == 403 and "its own turn" in refused.json()["error"]
    refused = claude_daemon.post(f"/api/requests/{row['id']}/answer", {"text": "main"}, token=token)
    assert refused.status_code == 403
    assert claude_daemon.post(f"/api/requests/{row['id']}/answer", {"text": "main"}, token=sam).status_code == 403
    assert claude_daemon.post(f"/api/requests/{row['id']}/answer", {"text": " "}).status_code == 400
    assert claude_daemon.post(f"/api/requests/{row['id']}/answer", {"answer": "main"}).status_code == 422

    assert claude_daemon.post(f"/api/requests/{row['id']}/answer", {"text": "main"}).status_code == 200
    claude_daemon.wait_state(row["id"], "done", timeout=60)
    ended = claude_daemon.post("/mcp", listing, token=token, headers=mcp_headers)
    assert ended.status_code == 401, "a session token is worth nothing once its request ends"
    late = claude_daemon.post(f"/api/requests/{row['id']}/answer", {"text": "main"})
    assert late.status_code == 409 and "done" in late.json()["error"]


def test_a_question_outlives_a_daemon_restart(claude_daemon: DaemonProcess, fake_model: FakeModelServer) -> None:
    row = claude_daemon.request("ASK Which branch?", agent="claude")
    open_question(claude_daemon, row["id"])
    claude_daemon.stop(signal.SIGKILL)
    claude_daemon.start(env=claude_daemon.env)  # on another port: the MCP server finds it through daemon.json
    assert claude_daemon.show(row["id"])["question"]["question"] == "Which branch?"
    claude_daemon.cox("answer", row["id"], "release-2.4", check=True)
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert "release-2.4" in done["result"]
    assert not (claude_daemon.home / "tasks" / f"{row['id']}.2").exists(), "the same turn went on"


def test_two_questions_in_one_call_are_asked_in_turn(claude_daemon: DaemonProcess) -> None:
    row = claude_daemon.request("ASK Which branch? || Which environment?", agent="claude")
    assert open_question(claude_daemon, row["id"])["question"] == "Which branch?"
    claude_daemon.cox("answer", row["id"], "main", check=True)
    wait_for(lambda: (claude_daemon.show(row["id"])["question"] or {}).get("question") == "Which environment?")
    claude_daemon.cox("answer", row["id"], "staging", check=True)
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert '"Which branch?"="main"' in done["result"] and '"Which environment?"="staging"' in done["result"]
