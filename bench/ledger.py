"""Ledger benchmark against a real daemon process: `python -m bench.ledger`.

Prints create latency (p50/p99) over the API next to the same create done in-process (the store's own cost),
concurrent create throughput, create+approve+finish throughput with the shell agent running `true` next to running
`true` directly, and approve-to-process-start latency next to starting the same command directly."""

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from desktop.core.actors import Actor
from desktop.core.ledger import Ledger
from desktop.store import directory
from desktop.store.db import Store
from tests.daemon_process import DaemonProcess


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def in_process_create_ms(folder: Path, n: int) -> list[float]:
    store = Store(folder / "baseline.db", folder / "b")
    with store.transaction() as conn:
        directory.add_agent(conn, "shell", "shell", str(folder), {}, time.time())
        directory.add_principal(conn, "bench", "person", "h", time.time())
    ledger, who = Ledger(store, time.time), Actor("bench", "person")
    times = []
    for i in range(n):
        started = time.perf_counter()
        ledger.create(who, "shell", f"true {i}")
        times.append((time.perf_counter() - started) * 1000)
    return times


def api_create_ms(daemon: DaemonProcess, token: str, n: int) -> list[float]:
    times = []
    with httpx.Client(base_url=daemon.url, headers={"Authorization": f"Bearer {token}"}) as client:
        for i in range(n):
            started = time.perf_counter()
            assert client.post("/api/requests", json={"agent": "shell", "prompt": f"true {i}"}).status_code == 201
            times.append((time.perf_counter() - started) * 1000)
    return times


async def concurrent_creates(daemon: DaemonProcess, token: str, n: int, concurrency: int) -> float:
    async with httpx.AsyncClient(
        base_url=daemon.url,
        headers={"Authorization": f"Bearer {token}"},
        limits=httpx.Limits(max_connections=concurrency),
    ) as client:
        gate = asyncio.Semaphore(concurrency)

        async def one(i: int) -> None:
            async with gate:
                answer = await client.post("/api/requests", json={"agent": "shell", "prompt": f"true {i}"})
                assert answer.status_code == 201

        started = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.perf_counter() - started)


def run_to_done(daemon: DaemonProcess, agents: list[str], n: int) -> float:
    started = time.perf_counter()
    ids = [daemon.request("true", agent=agents[i % len(agents)])["id"] for i in range(n)]
    last = ids[-len(agents) :]
    for request_id in last:
        daemon.wait_state(request_id, "done", timeout=300)
    assert all(
        r["state"] == "done"
        for r in daemon.get("/api/requests", params={"limit": 100_000}).json()
        if r["id"] in set(ids)
    )
    return n / (time.perf_counter() - started)


def direct_true_rate(n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        subprocess.run(["/bin/sh", "-c", "true"], check=True)
    return n / (time.perf_counter() - started)


def approve_to_start_ms(daemon: DaemonProcess, token: str, folder: Path, n: int) -> list[float]:
    times = []
    for i in range(n):
        stamp = folder / f"start{i}"
        row = daemon.request(f"date +%s.%N > {stamp}", token=token)
        approved_at = time.time()
        daemon.post(f"/api/requests/{row['id']}/approve")
        daemon.wait_state(row["id"], "done")
        times.append((float(stamp.read_text()) - approved_at) * 1000)
    return times


def direct_start_ms(folder: Path, n: int) -> list[float]:
    times = []
    for i in range(n):
        stamp = folder / f"direct{i}"
        started = time.time()
        subprocess.run(["/bin/sh", "-c", f"date +%s.%N > {stamp}"], check=True)
        times.append((float(stamp.read_text()) - started) * 1000)
    return times


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        daemon = DaemonProcess(folder / "home").start()
        try:
            for name in ("w1", "w2", "w3", "w4"):
                daemon.add_agent(name, folder / name)
            token = daemon.add_person("bench")
            api_create_ms(daemon, token, 50)  # warm up
            api = api_create_ms(daemon, token, 1000)
            local = in_process_create_ms(folder, 1000)
            rate = asyncio.run(concurrent_creates(daemon, token, 2000, 16))
            one_agent = run_to_done(daemon, ["shell"], 100)
            four_agents = run_to_done(daemon, ["w1", "w2", "w3", "w4"], 200)
            direct = direct_true_rate(100)
            start = approve_to_start_ms(daemon, token, folder, 50)
            direct_start = direct_start_ms(folder, 50)
        finally:
            daemon.stop()
            daemon.kill_runners()
    print("ledger benchmark (real daemon process, SQLite WAL synchronous=FULL)")
    print(
        f"  create latency over the API   p50 {pct(api, 50):6.2f} ms  p99 {pct(api, 99):6.2f} ms   (target p99 < 20 ms)"
    )
    print(f"  baseline: in-process create   p50 {pct(local, 50):6.2f} ms  p99 {pct(local, 99):6.2f} ms")
    print(f"  creates, 16 concurrent        {rate:7.0f} /s                     (target >= 300 /s)")
    print(f"  create+run+done `true`, 1 agent   {one_agent:6.1f} /s")
    print(f"  create+run+done `true`, 4 agents  {four_agents:6.1f} /s")
    print(f"  baseline: `sh -c true` directly   {direct:6.1f} /s")
    print(
        f"  approve to process start      p50 {pct(start, 50):6.2f} ms  p99 {pct(start, 99):6.2f} ms   (target < 50 ms)"
    )
    print(f"  baseline: start directly      p50 {pct(direct_start, 50):6.2f} ms  p99 {pct(direct_start, 99):6.2f} ms")
    print(f"  mean API create {statistics.mean(api):.2f} ms over {len(api)} requests")
    return 0


if __name__ == "__main__":
    sys.exit(main())
