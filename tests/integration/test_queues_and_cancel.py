"""Queues, cancel, retry, revoke and references against a real daemon process and real shell commands."""

import asyncio
import json
import time
from pathlib import Path

import httpx
import psutil

from tests.daemon_process import DaemonProcess

STAMP = 'echo "{name} start $(date +%s.%N)" >> {log}; sleep {secs}; echo "{name} end $(date +%s.%N)" >> {log}'


def test_thousand_concurrent_creates_get_every_number_once(daemon: DaemonProcess) -> None:
    async def create_all() -> list[str]:
        limits = httpx.Limits(max_connections=100)
        async with httpx.AsyncClient(
            base_url=daemon.url, limits=limits, timeout=120, headers={"Authorization": f"Bearer {daemon.token}"}
        ) as client:
            daemon.post("/api/settings", {"key": "approval_ttl", "value": "1h"})
            token = daemon.add_person("load")
            answers = await asyncio.gather(
                *(
                    client.post(
                        "/api/requests",
                        json={"agent": "shell", "prompt": f"true {i}"},
                        headers={"Authorization": f"Bearer {token}"},
                    )
                    for i in range(1000)
                )
            )
            assert {a.status_code for a in answers} == {201}
            return [a.json()["id"] for a in answers]

    created = asyncio.run(create_all())
    numbers = sorted(int(i.split("-")[1]) for i in created)
    assert numbers == list(range(1, 1001))
    assert len(set(created)) == 1000 and any(i.endswith("-1000") for i in created)


def test_one_request_at_a_time_per_agent_agents_in_parallel(daemon: DaemonProcess, tmp_path: Path) -> None:
    log = tmp_path / "runs.log"
    for agent in ("alpha", "beta"):
        daemon.add_agent(agent, tmp_path / agent)
    token = daemon.add_person("sarah")
    order: list[tuple[str, str]] = []
    for n in range(3):
        for agent in ("alpha", "beta"):
            # 1 s each: a busy machine may take a few tenths to start the second agent's command
            row = daemon.request(STAMP.format(name=f"{agent}{n}", log=log, secs=1.0), agent, token)
            order.append((agent, row["id"]))
    for _, request_id in reversed(order):  # approval order is the queue order, not creation order
        assert daemon.post(f"/api/requests/{request_id}/approve").status_code == 200
    for _, request_id in order:
        daemon.wait_state(request_id, "done", timeout=30)
    runs: dict[str, dict[str, float]] = {}
    for line in log.read_text().splitlines():
        name, edge, at = line.split()
        runs.setdefault(name, {})[edge] = float(at)
    for agent in ("alpha", "beta"):
        spans = sorted((runs[f"{agent}{n}"]["start"], runs[f"{agent}{n}"]["end"], n) for n in range(3))
        assert [n for *_, n in spans] == [2, 1, 0], "approval order"
        assert all(spans[i][1] <= spans[i + 1][0] for i in range(2)), f"{agent} ran two at once: {spans}"
    overlap = min(runs["alpha2"]["end"], runs["beta2"]["end"]) - max(runs["alpha2"]["start"], runs["beta2"]["start"])
    assert overlap > 0.2, "different agents run in parallel"


def test_cancel_pending_approved_and_running(daemon: DaemonProcess, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    token = daemon.add_person("sarah")
    pending = daemon.request(f"touch {marker}", token=token)
    assert daemon.post(f"/api/requests/{pending['id']}/cancel", token=token).json()["state"] == "cancelled"

    running = daemon.request(f"sleep 60 & echo $! > {tmp_path}/bg.pid; sleep 60")
    daemon.wait_state(running["id"], "running")
    queued = daemon.request(f"touch {marker}")
    assert daemon.show(queued["id"])["state"] == "approved"
    assert daemon.post(f"/api/requests/{queued['id']}/cancel").json()["state"] == "cancelled"

    while not (tmp_path / "bg.pid").exists():
        time.sleep(0.02)
    background = int((tmp_path / "bg.pid").read_text())
    asked = time.monotonic()
    flagged = daemon.post(f"/api/requests/{running['id']}/cancel").json()
    assert flagged["state"] == "running" and flagged["cancel_requested"]
    ended = daemon.wait_state(running["id"], "cancelled", timeout=10)
    assert time.monotonic() - asked < 3
    assert "cancelled at a safe point" in ended["timeline"][-1]["text"]
    assert not psutil.pid_exists(background) or psutil.Process(background).status() == psutil.STATUS_ZOMBIE
    time.sleep(0.3)
    assert not marker.exists(), "cancelled requests never run"


def test_a_command_that_ignores_sigterm_is_killed_after_the_grace(daemon: DaemonProcess) -> None:
    daemon.post("/api/settings", {"key": "cancel_grace", "value": "1s"})
    row = daemon.request("trap '' TERM; sleep 60")
    daemon.wait_state(row["id"], "running")
    time.sleep(0.2)
    asked = time.monotonic()
    daemon.post(f"/api/requests/{row['id']}/cancel")
    ended = daemon.wait_state(row["id"], "cancelled", timeout=10)
    assert 0.9 < time.monotonic() - asked < 5
    assert ended["exit_code"] == -9


def test_revoke_cancels_waiting_work_lets_running_finish_and_ends_the_token(
    daemon: DaemonProcess, tmp_path: Path
) -> None:
    token = daemon.add_person("sam")
    running = daemon.request(f"sleep 1; echo finished > {tmp_path}/out", token=token)
    daemon.post(f"/api/requests/{running['id']}/approve")
    daemon.wait_state(running["id"], "running")
    queued = daemon.request("true", token=token)
    daemon.post(f"/api/requests/{queued['id']}/approve")
    waiting = daemon.request("true", token=token)
    revoked = daemon.post("/api/people/sam/revoke").json()
    assert sorted(revoked["cancelled"]) == sorted([queued["id"], waiting["id"]])
    assert daemon.get("/api/requests", token=token).status_code == 401
    for request_id in (queued["id"], waiting["id"]):
        row = daemon.show(request_id)
        assert row["state"] == "cancelled" and row["result"] == "requester revoked"
    assert daemon.wait_state(running["id"], "done")["result"] == ""
    assert (tmp_path / "out").read_text() == "finished\n"
    people = daemon.get("/api/people").json()
    assert people[0]["name"] == "sam" and people[0]["revoked_at"]


def test_references_reach_the_shell_agent(daemon: DaemonProcess, tmp_path: Path) -> None:
    first = daemon.request("echo the answer is 42")
    daemon.wait_state(first["id"], "done")
    short = "R-" + first["id"].split("-")[1]
    second = daemon.request(f'cat "$COX_REFERENCES" > {tmp_path}/refs.json # about {short}')
    assert second["references"] == [first["id"]]
    daemon.wait_state(second["id"], "done")
    context = json.loads((tmp_path / "refs.json").read_text())
    assert context == [
        {"id": first["id"], "prompt": "echo the answer is 42", "state": "done", "result": "the answer is 42"}
    ]
    unknown = daemon.post("/api/requests", {"agent": "shell", "prompt": "see R-77"})
    assert unknown.status_code == 404 and "no request" in unknown.json()["error"]
    assert len(daemon.get("/api/requests").json()) == 2


def test_failure_keeps_exit_code_and_last_lines(daemon: DaemonProcess) -> None:
    row = daemon.request("for i in $(seq 1 50); do echo line $i; done; echo oops >&2; exit 7")
    failed = daemon.wait_state(row["id"], "failed")
    assert failed["exit_code"] == 7
    assert failed["result"].splitlines() == [f"line {i}" for i in range(32, 51)] + ["oops"]
    assert failed["timeline"][-1]["text"] == "failed: exit code 7"


def test_event_stream_reports_changes(daemon: DaemonProcess) -> None:
    seen: list[dict[str, object]] = []
    with daemon.http.stream("GET", "/api/events", timeout=10) as stream:
        lines = stream.iter_lines()
        assert next(lines).startswith("event: hello")
        row = daemon.request("true")
        for line in lines:
            if line.startswith("data:") and '"request"' in line:
                seen.append(json.loads(line[5:]))
                if seen[-1]["state"] == "done":
                    break
    assert [(e["id"], e["state"]) for e in seen] == [
        (row["id"], "approved"),
        (row["id"], "running"),
        (row["id"], "done"),
    ]
