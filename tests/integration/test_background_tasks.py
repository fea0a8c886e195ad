"""Background tasks: started by the owner (`cox task …`) or by an agent through the MCP server (the real Claude Code
and Codex CLIs against the scripted fake model), followed through the console pipeline, stopped, timed out,
re-attached after a daemon restart, listed for an hour, read page by page."""

import json
import os
import signal
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import psutil
import pytest

from tests.daemon_process import DaemonProcess, with_cli_agent
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_runtime_claude import wait_for


def task(daemon: DaemonProcess, task_id: str) -> dict[str, Any]:
    found: dict[str, Any] = daemon.get(f"/api/tasks/{task_id}").json()
    return found


def start(daemon: DaemonProcess, command: str, **extra: str) -> dict[str, Any]:
    answer = daemon.post("/api/tasks", {"agent": "shell", "command": command, **extra})
    assert answer.status_code == 201, answer.text
    started: dict[str, Any] = answer.json()
    return started


def ended(daemon: DaemonProcess, task_id: str, timeout: float = 20) -> dict[str, Any]:
    wait_for(lambda: task(daemon, task_id)["state"] == "ended", timeout)
    return task(daemon, task_id)


def test_the_owner_starts_reads_and_stops_tasks(daemon: DaemonProcess) -> None:
    events: list[dict[str, Any]] = []
    listening = threading.Thread(target=collect_events, args=(daemon, events, 6), daemon=True)
    listening.start()
    time.sleep(0.3)
    done = daemon.cox(
        "task",
        "start",
        "--agent",
        "shell",
        "--description",
        "unit tests",
        "echo collecting; echo '4 passed, 1 failed, 2 skipped in 0.2s'; exit 1",
        check=True,
    )
    first = done.stdout.strip()
    server = start(daemon, "echo serving on :3000; sleep 60", kind="monitor", description="dev server")
    fine = start(daemon, "echo fine")
    assert ended(daemon, first)["status"] == "failed (exit 1)"
    assert ended(daemon, fine["id"])["status"] == "completed"
    assert task(daemon, first)["tests"] == {
        "runner": "pytest",
        "passed": 4,
        "failed": 1,
        "skipped": 2,
        "first_failure": None,
    }
    wait_for(lambda: daemon.get(f"/api/tasks/{server['id']}/output").json()["lines"] == ["serving on :3000"])
    listed = daemon.cox("task", "list", check=True).stdout
    assert "running" in listed and "dev server" in listed and "4✓ 1✗ 2○" in listed
    assert [a["state"] for a in daemon.get("/api/agents").json()] == ["background_only"]

    stopping = daemon.cox("task", "stop", server["id"], check=True).stdout
    assert stopping.strip() in (f"{server['id']}: Stopping…", f"{server['id']}: stopped")
    assert ended(daemon, server["id"])["status"] == "stopped"
    assert [a["state"] for a in daemon.get("/api/agents").json()] == ["idle"]
    listening.join(10)
    seen = {(e["type"], e["id"]) for e in events}
    assert seen == {
        ("task_started", first),
        ("task_started", server["id"]),
        ("task_started", fine["id"]),
        ("task_failed", first),
        ("task_finished", fine["id"]),
        ("task_failed", server["id"]),
    }
    assert next(e for e in events if e["id"] == server["id"] and e["type"] == "task_failed")["outcome"] == "stopped"


def collect_events(daemon: DaemonProcess, events: list[dict[str, Any]], count: int) -> None:
    with httpx.stream(
        "GET", f"{daemon.url}/api/events", headers={"Authorization": f"Bearer {daemon.token}"}, timeout=30
    ) as response:
        for line in response.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if str(event.get("type", "")).startswith("task_"):
                    events.append(event)
                    if len(events) >= count:
                        return


def test_a_clean_exit_is_finished_and_nothing_else(daemon: DaemonProcess) -> None:
    row = start(daemon, "echo ok")
    assert ended(daemon, row["id"])["status"] == "completed"
    assert task(daemon, row["id"])["exit_code"] == 0


def test_bad_input_gets_a_sentence(daemon: DaemonProcess) -> None:
    assert daemon.post("/api/tasks", {"agent": "nobody", "command": "true"}).status_code == 404
    assert daemon.post("/api/tasks", {"agent": "shell", "command": "true", "kind": "daemon"}).status_code == 422
    assert daemon.post("/api/tasks", {"agent": "shell", "command": "  "}).status_code == 400
    assert daemon.get("/api/tasks/T99").status_code == 404
    sam = daemon.add_person("sam")
    refused = daemon.post("/api/tasks", {"agent": "shell", "command": "true"}, token=sam)
    assert refused.status_code == 403


def test_tasks_outlive_a_daemon_restart(make_daemon: type[DaemonProcess], tmp_path: Path) -> None:
    daemon = make_daemon(tmp_path / "home").start()
    alive = start(daemon, "sleep 30")
    quick = start(daemon, "sleep 1; exit 3")
    lost = start(daemon, "sleep 30")
    wait_for(lambda: (daemon.home / "tasks" / lost["id"] / "runner.json").exists())
    daemon.stop(signal.SIGKILL)
    info = json.loads((daemon.home / "tasks" / lost["id"] / "runner.json").read_text())
    os.kill(info["runner_pid"], signal.SIGKILL)  # the runner is gone without a word
    os.killpg(info["pgid"], signal.SIGKILL)
    time.sleep(1.5)
    daemon.start()
    assert task(daemon, alive["id"])["state"] == "running"
    assert task(daemon, alive["id"])["started_at"] == alive["started_at"], "the original start time is kept"
    assert ended(daemon, quick["id"])["status"] == "failed (exit 3)"
    assert ended(daemon, lost["id"])["status"] == "ended, result unknown"
    daemon.post(f"/api/tasks/{alive['id']}/stop", {})
    assert ended(daemon, alive["id"])["status"] == "stopped"


def test_a_restart_keeps_a_quiet_tasks_last_output_and_quiet_time(
    make_daemon: type[DaemonProcess], tmp_path: Path
) -> None:
    """Read again from the start after a restart, old output is not new: "no output for 7 min" comes back."""
    daemon = make_daemon(tmp_path / "home").start()
    row = start(daemon, "echo ready; sleep 600")
    wait_for(lambda: task(daemon, row["id"])["last_output_at"] is not None)
    daemon.stop()
    output = daemon.home / "tasks" / row["id"] / "output"
    seven_minutes_ago = time.time() - 7 * 60
    os.utime(output, (seven_minutes_ago, seven_minutes_ago))  # as if the daemon had been down for seven minutes
    daemon.start()
    try:
        shown = task(daemon, row["id"])
        assert shown["status"] == "running, no output for 7 min" and shown["quiet_minutes"] == 7
        last = datetime.fromisoformat(shown["last_output_at"]).timestamp()
        assert abs(last - seven_minutes_ago) < 2, shown["last_output_at"]
    finally:
        daemon.post(f"/api/tasks/{row['id']}/stop", {})
        ended(daemon, row["id"])


def test_output_pages_back_and_stops_at_five_megabytes(daemon: DaemonProcess) -> None:
    row = start(daemon, "seq 1 5000")
    ended(daemon, row["id"])
    last = daemon.get(f"/api/tasks/{row['id']}/output").json()
    assert len(last["lines"]) == 2000 and last["lines"][-1] == "5000" and last["lines"][0] == "3001"
    before = daemon.get(f"/api/tasks/{row['id']}/output?before={last['before']}").json()
    assert before["lines"][0] == "1001" and before["lines"][-1] == "3000"
    first = daemon.get(f"/api/tasks/{row['id']}/output?before={before['before']}").json()
    assert first["lines"][0] == "1" and first["lines"][-1] == "1000" and first["before"] is None
    shown = daemon.cox("task", "output", row["id"], "--lines", "2", check=True).stdout.splitlines()
    assert shown[0].startswith("… older: cox task output") and shown[1:] == ["4999", "5000"]

    big = start(daemon, "seq 1 1500000")  # about 10 MB
    ended(daemon, big["id"], timeout=60)
    cursor, pages = None, 0
    while True:
        page = daemon.get(f"/api/tasks/{big['id']}/output" + (f"?before={cursor}" if cursor else "")).json()
        pages += 1
        if page["older_not_loaded"] or page["before"] is None:
            break
        cursor = page["before"]
    assert page["older_not_loaded"] and 5 <= pages <= 400


@pytest.fixture(params=["claude", "codex"])
def agent_daemon(
    request: pytest.FixtureRequest, make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]
) -> DaemonProcess:
    return with_cli_agent(make_daemon, tmp_path, agent_env, "agent", request.param)


def test_an_agent_starts_reads_and_stops_a_task_through_mcp(
    agent_daemon: DaemonProcess, fake_model: FakeModelServer
) -> None:
    script = (
        'MCP start_task {"command": "echo dev server up; sleep 60", "description": "dev server"}\n'
        "TOOL sleep 1\n"
        'MCP read_task_output {"task_id": "T1"}\n'
        "MCP list_tasks {}\n"
    )
    row = agent_daemon.request(script, agent="agent")
    agent_daemon.wait_state(row["id"], "done", timeout=60)
    assert task(agent_daemon, "T1")["request_id"] == row["id"]
    assert task(agent_daemon, "T1")["state"] == "running", "a task outlives the turn that started it"
    results = json.dumps(fake_model.requests()[-1]["body"], ensure_ascii=False)
    assert "agent agent: running_turn" in results  # list_tasks, asked during the turn
    assert "dev server up" in results and "T1 · running" in results and '\\"description\\": \\"dev server\\"' in results
    assert [a["state"] for a in agent_daemon.get("/api/agents").json() if a["name"] == "agent"] == ["background_only"]
    stop = agent_daemon.request('MCP stop_task {"task_id": "T1"}', agent="agent")
    agent_daemon.wait_state(stop["id"], "done", timeout=60)
    assert ended(agent_daemon, "T1")["status"] == "stopped"
    assert [a["state"] for a in agent_daemon.get("/api/agents").json() if a["name"] == "agent"] == ["idle"]


def test_an_agent_sees_and_stops_only_its_own_tasks(agent_daemon: DaemonProcess, fake_model: FakeModelServer) -> None:
    shell_task = start(agent_daemon, "sleep 60")
    row = agent_daemon.request(f'MCP stop_task {{"task_id": "{shell_task["id"]}"}}', agent="agent")
    agent_daemon.wait_state(row["id"], "done", timeout=60)
    assert "own agent" in json.dumps(fake_model.requests()[-1]["body"])
    assert task(agent_daemon, shell_task["id"])["state"] == "running"
    agent_daemon.post(f"/api/tasks/{shell_task['id']}/stop", {})


def test_a_running_requests_agent_process_is_listed(daemon: DaemonProcess) -> None:
    row = daemon.request("echo working; sleep 30")
    wait_for(lambda: any(t["kind"] == "request" for t in daemon.get("/api/tasks").json()))
    [listed] = [t for t in daemon.get("/api/tasks").json() if t["kind"] == "request"]
    assert listed["request_id"] == row["id"] and listed["description"] == f"{row['id']}: echo working; sleep 30"
    assert listed["command"].startswith("/bin/sh -c") and listed["status"] == "running"
    refused = daemon.post(f"/api/tasks/{listed['id']}/stop", {})
    assert refused.status_code == 409 and f"cox cancel {row['id']}" in refused.json()["error"]
    daemon.post(f"/api/requests/{row['id']}/cancel", {})
    daemon.wait_state(row["id"], "cancelled")
    assert not any(t["kind"] == "request" for t in daemon.get("/api/tasks").json())


def test_hostile_output_leaves_the_daemon_small_and_answering(daemon: DaemonProcess) -> None:
    """100 MB without a newline, a million identical lines, invalid UTF-8, an unterminated OSC, a \\r storm."""
    process = psutil.Process(daemon.proc.pid if daemon.proc else 0)
    before = process.memory_info().rss
    commands = [
        "head -c 100000000 /dev/zero | tr '\\0' 'x'",
        "yes 'the same line' | head -n 1000000",
        "head -c 20000000 /dev/urandom",
        "printf 'start \\033]0;never ends'; head -c 5000000 /dev/zero | tr '\\0' 'y'",
        "i=0; while [ $i -lt 200000 ]; do printf '\\rprogress %d' $i; i=$((i+1)); done",
    ]
    rows = [start(daemon, command) for command in commands]
    slowest, peak = 0.0, before
    while any(task(daemon, row["id"])["state"] != "ended" for row in rows):
        asked = time.monotonic()
        assert daemon.get("/api/health").status_code == 200
        slowest = max(slowest, time.monotonic() - asked)
        peak = max(peak, process.memory_info().rss)
        time.sleep(0.1)
    print(
        f"daemon RSS {before / 1e6:.0f} MB before, {peak / 1e6:.0f} MB at most; slowest health answer "
        f"{slowest * 1000:.0f} ms"
    )
    assert peak - before < 150e6, f"the daemon grew by {(peak - before) / 1e6:.0f} MB"
    assert [task(daemon, row["id"])["status"] for row in rows] == ["completed"] * 5
    same = daemon.get(f"/api/tasks/{rows[1]['id']}/output").json()
    folded = int(same["lines"][0].rsplit("×", 1)[1])  # as many as the 5 MB a console loads hold, in one line
    assert same["lines"][0].startswith("the same line  ×") and folded > 300_000 and same["older_not_loaded"]
    shown = [daemon.get(f"/api/tasks/{row['id']}/output").json() for row in rows]
    assert [[*page["lines"], page["pending"]] for page in (shown[0], shown[3], shown[4])] == [
        ["x" * 4000 + "…"],  # the 100 MB line (no newline: still the unfinished one), cut
        ["start "],  # an unterminated OSC swallows the rest of its line, as on a terminal
        ["progress 199999"],
    ]


def test_a_pipe_into_tail_is_marked_while_it_runs(daemon: DaemonProcess) -> None:
    piped = start(daemon, "seq 1 100 | tail -5; sleep 30")
    follows = start(daemon, "touch log; tail -f log")
    heads = start(daemon, "seq 1 100 | head -3; sleep 30")
    shown = daemon.get(f"/api/tasks/{piped['id']}/output").json()
    assert piped["tail_pipe"] and "prints only when the command ends" in shown["note"]
    assert not follows["tail_pipe"] and not heads["tail_pipe"]
    assert daemon.get(f"/api/tasks/{heads['id']}/output").json()["note"] is None
    assert "── This command pipes its output into `tail`" in daemon.cox("task", "output", piped["id"]).stdout
    for row in (piped, follows, heads):
        daemon.post(f"/api/tasks/{row['id']}/stop", {})


def test_what_an_agent_prints_is_redacted_wherever_it_is_shown(daemon: DaemonProcess) -> None:
    row = daemon.request("echo deploying with API_TOKEN=f00ba5c0$(echo ffee1234); echo done")  # not in the prompt
    done = daemon.wait_state(row["id"], "done")
    assert "f00ba5c0ffee1234" not in json.dumps(done) and "API_TOKEN=[redacted]" in done["result"]
    assert "API_TOKEN=[redacted]" in daemon.cox("logs", row["id"], check=True).stdout
    failed = daemon.request("echo using gh$(echo p_A1b2C3d4E5A1b2C3d4E5A1b2C3d4E5f6G7h8); exit 3")
    assert "ghp_" not in json.dumps(daemon.wait_state(failed["id"], "failed"))


def test_bad_tool_input_gets_a_sentence_not_a_crash(claude_daemon: DaemonProcess, fake_model: FakeModelServer) -> None:
    script = (
        'MCP read_task_output {"task_id": "T99"}\n'
        'MCP start_task {"command": "   "}\n'
        'MCP start_task {"command": 5, "monitor": "sometimes"}\n'
        'MCP ask_question {"question": ""}\n'
        "MCP stop_task {}\n"
    )
    row = claude_daemon.request(script, agent="claude")
    claude_daemon.wait_state(row["id"], "done", timeout=60)
    sent = json.dumps(fake_model.requests()[-1]["body"])
    for sentence in ("there is no task T99", "the command is empty", "The question was not asked"):
        assert sentence in sent
    assert sent.count('"is_error": true') >= 2  # wrong types and a missing argument: the SDK's own refusals
    assert claude_daemon.get("/api/tasks").json() == []
