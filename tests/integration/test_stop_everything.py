"""A state that says cancelled or stopped means nothing of that work still runs: descendants that ignore SIGTERM,
start a session of their own, double-fork or `nohup … &` are ended too, and a cancelled request's background tasks
with it. A turn that cannot start fails its request and the agent's queue goes on; a request the daemon marked
running but whose command never began is run after a restart."""

import json
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from desktop.platform.paths import Home
from tests.daemon_process import DaemonProcess, with_cli_agent
from tests.integration.test_background_tasks import ended, start, task
from tests.integration.test_runtime_claude import wait_for

# Each records its PID, then waits for ever ignoring SIGTERM (ignored signals stay ignored across exec, so its
# `sleep` ignores it too).
STUB = "trap '' TERM; echo $$ >> {pids}; while :; do sleep 1; done\n"
ESCAPES = {
    "child": "sh {stub}",
    "setsid": "setsid sh {stub} & sleep 300",
    "double fork": "(sh {stub} &); sleep 300",
    "nohup": "nohup sh {stub} >/dev/null 2>&1 & sleep 300",
}


def stub(tmp_path: Path) -> tuple[Path, Path]:
    pids = tmp_path / "pids"
    script = tmp_path / "stub.sh"
    script.write_text(STUB.format(pids=pids))
    return script, pids


def alive(pids: Path) -> list[int]:
    found = []
    for pid in (int(line) for line in pids.read_text().split()):
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                found.append(pid)
        except psutil.NoSuchProcess:
            pass
    return found


@pytest.fixture
def kill_stubs(tmp_path: Path) -> Any:
    """Whatever a failing test leaves behind is ended by PID."""
    yield
    pids = tmp_path / "pids"
    if pids.exists():
        for pid in alive(pids):
            psutil.Process(pid).kill()


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_cancel_ends_every_descendant_before_it_says_cancelled(
    daemon: DaemonProcess, tmp_path: Path, escape: str, kill_stubs: None
) -> None:
    script, pids = stub(tmp_path)
    daemon.post("/api/settings", {"key": "cancel_grace", "value": "1s"})
    row = daemon.request(ESCAPES[escape].format(stub=script))
    wait_for(lambda: pids.exists() and pids.read_text().strip() != "")
    daemon.post(f"/api/requests/{row['id']}/cancel")
    cancelled = daemon.wait_state(row["id"], "cancelled", timeout=15)
    assert alive(pids) == [], f"{escape}: still running although the request says cancelled"
    assert cancelled["timeline"][-1]["text"] == "cancelled at a safe point"


@pytest.mark.parametrize("escape", sorted(ESCAPES))
def test_stopping_a_task_ends_its_whole_tree(
    daemon: DaemonProcess, tmp_path: Path, escape: str, kill_stubs: None
) -> None:
    script, pids = stub(tmp_path)
    daemon.post("/api/settings", {"key": "stop_grace", "value": "1s"})
    started = start(daemon, ESCAPES[escape].format(stub=script))
    wait_for(lambda: pids.exists() and pids.read_text().strip() != "")
    daemon.post(f"/api/tasks/{started['id']}/stop", {})
    assert ended(daemon, started["id"])["status"] == "stopped"
    assert alive(pids) == [], f"{escape}: still running although the task says stopped"


HOPPER = """import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
os.setsid()
beat, hops = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND), 0
while True:  # a new PID all the time: no list of processes is ever up to date (ps does not see it at all)
    if os.fork():
        os._exit(0)
    hops += 1
    if hops % 100 == 0:
        os.write(beat, b".")
"""


def still_hopping(beats: Path) -> bool:
    """Whether a hopper still beats: its file grows within a second (a scan of processes never sees it)."""
    before = beats.stat().st_size
    deadline = time.monotonic() + 1.0
    while time.monotonic() < deadline:
        if beats.stat().st_size != before:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["cancel", "stop"])
def test_a_process_that_forks_on_and_on_is_ended_too(daemon: DaemonProcess, tmp_path: Path, how: str) -> None:
    script, beats = tmp_path / "hop.py", tmp_path / "beats"
    script.write_text(HOPPER)
    daemon.post("/api/settings", {"key": "cancel_grace", "value": "1s"})
    daemon.post("/api/settings", {"key": "stop_grace", "value": "1s"})
    command = f"{sys.executable} {script} {beats} & {sys.executable} {script} {beats} & sleep 300"
    if how == "cancel":
        row = daemon.request(command)
        wait_for(lambda: beats.exists() and still_hopping(beats))
        daemon.post(f"/api/requests/{row['id']}/cancel")
        daemon.wait_state(row["id"], "cancelled", timeout=20)
    else:
        task_id = start(daemon, command)["id"]
        wait_for(lambda: beats.exists() and still_hopping(beats))
        daemon.post(f"/api/tasks/{task_id}/stop", {})
        assert ended(daemon, task_id)["status"] == "stopped"
    assert not still_hopping(beats), f"{how}: it forks on although the state says it ended"


def test_a_finished_command_leaves_nothing_behind(daemon: DaemonProcess, tmp_path: Path, kill_stubs: None) -> None:
    script, pids = stub(tmp_path)
    row = daemon.request(f"setsid sh {script} & (sh {script} &); sleep 0.5; echo finished")
    done = daemon.wait_state(row["id"], "done", timeout=30)
    assert done["result"].endswith("finished")
    assert len(pids.read_text().split()) == 2 and alive(pids) == []


def mcp_call(daemon: DaemonProcess, token: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    answer = daemon.post(
        "/mcp", body, headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    )
    assert answer.status_code == 200, answer.text
    result: dict[str, Any] = json.loads(answer.json()["result"]["content"][0]["text"])
    return result


def test_cancel_ends_the_turn_and_the_background_tasks_it_started(
    daemon: DaemonProcess, tmp_path: Path, kill_stubs: None
) -> None:
    script, pids = stub(tmp_path)
    daemon.post("/api/settings", {"key": "stop_grace", "value": "1s"})
    row = daemon.request("sleep 300")
    daemon.wait_state(row["id"], "running")
    token = (daemon.home / "tasks" / f"{row['id']}.1" / "turn.token").read_text()
    started = mcp_call(daemon, token, "start_task", {"command": f"sh {script}", "description": "dev server"})
    wait_for(lambda: pids.exists() and pids.read_text().strip() != "")
    runner = json.loads((daemon.home / "tasks" / f"{row['id']}.1" / "runner.json").read_text())

    daemon.post(f"/api/requests/{row['id']}/cancel")
    cancelled = daemon.wait_state(row["id"], "cancelled", timeout=15)
    assert not psutil.pid_exists(runner["pid"]) or psutil.Process(runner["pid"]).status() == psutil.STATUS_ZOMBIE
    assert alive(pids) == [], "the background task still runs although its request says cancelled"
    task_id = started.get("id") or started.get("task", {}).get("id")
    assert task(daemon, str(task_id))["status"] == "stopped"
    notes = [entry["text"] for entry in cancelled["timeline"]]
    assert any(text.startswith("stopped with the request: ") and f"{task_id} (dev server)" in text for text in notes)
    after = daemon.post(
        "/mcp",
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        headers={"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"},
    )
    assert after.status_code == 401, "the turn's token ended with the turn"


def test_a_turn_that_cannot_start_fails_and_the_queue_goes_on(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]
) -> None:
    daemon = with_cli_agent(make_daemon, tmp_path, agent_env, "gemini", "gemini")
    settings = Path(agent_env["HOME"]) / ".gemini" / "settings.json"
    kept = settings.read_text()
    settings.unlink()
    settings.mkdir()  # Gemini's settings cannot be read: its turn cannot be set up
    first = daemon.request("SAY hello", agent="gemini")
    failed = daemon.wait_state(first["id"], "failed", timeout=15)
    assert failed["timeline"][-1]["text"].startswith("failed: the turn could not start: "), failed["timeline"]
    settings.rmdir()
    settings.write_text(kept)
    second = daemon.request("SAY hello again", agent="gemini")
    assert daemon.wait_state(second["id"], "done", "failed", timeout=60)["state"] == "done"


def dispatch_offline(home: Path, prompt: str) -> str:
    """What a daemon killed right after marking a request running leaves on disk: the request running, no runner."""
    from desktop.core.actors import Actor
    from desktop.core.ledger import Ledger
    from desktop.store.db import Store

    store = Store(Home(home).database, Home(home).backups)
    ledger = Ledger(store, time.time)
    row = ledger.create(Actor("owner", "owner"), "shell", prompt)
    ledger.dispatch(row.id)
    store.conn.close()
    return row.id


@pytest.mark.parametrize("left", ["no task row", "a task folder but no runner"])
def test_approved_work_whose_command_never_started_runs_after_a_crash(
    daemon: DaemonProcess, tmp_path: Path, left: str
) -> None:
    marker = tmp_path / "ran"
    daemon.stop(signal.SIGKILL)
    request_id = dispatch_offline(daemon.home, f"echo once >> {marker}")
    if left != "no task row":
        task_dir = daemon.home / "tasks" / f"{request_id}.1"
        task_dir.mkdir(parents=True)
        (task_dir / "spec.json").write_text(json.dumps({"argv": ["sh"], "cwd": "/"}))
        with sqlite3.connect(Home(daemon.home).database) as conn:
            conn.execute(
                "INSERT INTO tasks (id, request_id, kind, dir, started_at, agent, description, command) "
                "VALUES (?, ?, 'request', ?, ?, 'shell', '', '')",
                (f"{request_id}.1", request_id, str(task_dir), time.time()),
            )
    daemon.start()
    done = daemon.wait_state(request_id, "done", "failed", timeout=20)
    assert done["state"] == "done", done
    assert marker.read_text() == "once\n"
    assert any("the command had not started, starting it now" in entry["text"] for entry in done["timeline"])
