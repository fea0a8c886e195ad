"""Kill the daemon with SIGKILL at random moments while requests are created, approved, run and cancelled;
restart it each time; then check the invariants. `python -m bench.crash --rounds 500` (the test suite runs 50).

Invariants: no acknowledged request lost (nor its approval or cancel), no ID reused or skipped, no request's
command ran twice, the audit chain intact, nothing left running, and no request failed "outcome unknown" whose
command never began (approved work is run, not dropped)."""

import argparse
import asyncio
import random
import signal
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from tests.daemon_process import DaemonProcess


@dataclass
class Acknowledged:
    created: dict[str, str] = field(default_factory=dict)  # id -> marker its command appends
    approved: set[str] = field(default_factory=set)
    cancelled: set[str] = field(default_factory=set)


async def _workload(
    daemon: DaemonProcess, person: str, log: Path, seen: Acknowledged, rng: random.Random, kill_after: float
) -> None:
    assert daemon.proc is not None
    loop = asyncio.get_running_loop()
    loop.call_later(kill_after, daemon.proc.send_signal, signal.SIGKILL)
    owner = {"Authorization": f"Bearer {daemon.token}"}
    theirs = {"Authorization": f"Bearer {person}"}
    async with httpx.AsyncClient(base_url=daemon.url, timeout=5) as client:

        async def worker() -> None:
            while True:
                marker = uuid.uuid4().hex
                roll = rng.random()
                try:
                    if roll < 0.45 or not seen.created:
                        agent = rng.choice(["a1", "a2"])
                        answer = await client.post(
                            "/api/requests",
                            headers=rng.choice([owner, theirs]),
                            json={"agent": agent, "prompt": f"echo {marker} >> {log}; sleep 0.0{rng.randint(0, 5)}"},
                        )
                        if answer.status_code == 201:
                            seen.created[answer.json()["id"]] = marker
                    elif roll < 0.8:
                        target = rng.choice(list(seen.created))
                        answer = await client.post(f"/api/requests/{target}/approve", headers=owner, json={})
                        if answer.status_code == 200:
                            seen.approved.add(target)
                    else:
                        target = rng.choice(list(seen.created))
                        answer = await client.post(f"/api/requests/{target}/cancel", headers=owner, json={})
                        if answer.status_code == 200:
                            seen.cancelled.add(target)
                except httpx.TransportError:
                    return

        await asyncio.gather(*(worker() for _ in range(4)))


def run_rounds(rounds: int, folder: Path, seed: int = 7) -> dict[str, int]:
    rng = random.Random(seed)
    log = folder / "ran.log"
    log.touch()
    daemon = DaemonProcess(folder / "home").start()
    try:
        for agent in ("a1", "a2"):
            daemon.add_agent(agent, folder / agent)
        daemon.post("/api/settings", {"key": "approval_ttl", "value": "1h"})
        person = daemon.add_person("crash")
        seen = Acknowledged()
        for _ in range(rounds):
            asyncio.run(_workload(daemon, person, log, seen, rng, rng.uniform(0.05, 0.5)))
            daemon.stop(signal.SIGKILL)
            daemon.start()
        return _check(daemon, seen, log)
    finally:
        daemon.stop()
        daemon.kill_runners()


def _check(daemon: DaemonProcess, seen: Acknowledged, log: Path) -> dict[str, int]:
    """Wait until the queues drain (failing only if they stop moving), then check the invariants."""
    left, last_move = None, time.monotonic()
    while True:
        open_work = [
            r["id"]
            for state in ("approved", "running")
            for r in daemon.get("/api/requests", params={"state": state, "limit": 100_000}).json()
        ]
        if not open_work:
            break
        if left is None or len(open_work) < left:
            left, last_move = len(open_work), time.monotonic()
        assert time.monotonic() - last_move < 30, f"queues stopped moving with {len(open_work)} left: {open_work[:10]}"
        time.sleep(0.5)
    rows = {r["id"]: r for r in daemon.get("/api/requests", params={"limit": 100_000}).json()}
    lost = set(seen.created) - set(rows)
    assert not lost, f"acknowledged requests lost: {sorted(lost)}"
    for request_id, marker in seen.created.items():
        assert marker in rows[request_id]["prompt"], f"{request_id} is not the request that was acknowledged"
    numbers = sorted(int(i.split("-")[1]) for i in rows)
    assert numbers == list(range(1, len(numbers) + 1)), "an ID was skipped or reused"
    for request_id in seen.approved:
        assert rows[request_id]["state"] not in ("pending", "expired"), f"approval of {request_id} lost"
    for request_id in seen.cancelled:
        assert rows[request_id]["state"] == "cancelled", f"cancel of {request_id} lost: {rows[request_id]['state']}"
    runs = Counter(log.read_text().split())
    twice = [m for m, n in runs.items() if n > 1]
    assert not twice, f"commands ran twice: {twice}"
    for request_id, row in rows.items():
        if row["state"] == "done":
            assert runs[seen.created.get(request_id, "?")] == 1 or request_id not in seen.created
    unknown = [
        request_id
        for request_id, row in rows.items()
        if row["state"] == "failed" and "outcome unknown" in daemon.show(request_id)["timeline"][-1]["text"]
    ]
    never_began = [r for r in unknown if not (daemon.home / "tasks" / f"{r}.1" / "runner.json").exists()]
    assert not never_began, f"failed 'outcome unknown' although their command never began: {never_began}"
    verify = daemon.get("/api/audit/verify").json()
    assert verify["intact"], verify
    states = Counter(r["state"] for r in rows.values())
    return {
        "requests": len(rows),
        "acknowledged": len(seen.created),
        "commands_run": sum(runs.values()),
        "audit_records": verify["records"],
        "outcome_unknown": len(unknown),
        **states,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        figures = run_rounds(args.rounds, Path(folder), args.seed)
    print(f"{args.rounds} SIGKILLs in {time.monotonic() - started:.0f} s; invariants held")
    for key, value in figures.items():
        print(f"  {key:>14}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
