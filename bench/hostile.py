"""The daemon under hostile task output: `python -m bench.hostile`.

Starts a real daemon, measures /api/health latency and the daemon's memory while idle (the baseline), then again
while five background tasks write what a console must survive: 100 MB without a newline, a million identical
lines, 20 MB of random bytes (invalid UTF-8), an unterminated OSC sequence followed by 5 MB, and 200,000 carriage
returns. Prints both side by side, and how long the daemon took to follow all of it."""

import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from bench.ledger import pct
from tests.daemon_process import DaemonProcess

HOSTILE = [
    "head -c 100000000 /dev/zero | tr '\\0' 'x'",
    "yes 'the same line' | head -n 1000000",
    "head -c 20000000 /dev/urandom",
    "printf 'start \\033]0;never ends'; head -c 5000000 /dev/zero | tr '\\0' 'y'",
    "i=0; while [ $i -lt 200000 ]; do printf '\\rprogress %d' $i; i=$((i+1)); done",
]


def sample(daemon: DaemonProcess, process: psutil.Process, until: threading.Event) -> tuple[list[float], int]:
    """Health latencies (ms) and the largest RSS seen, every 20 ms until `until` is set."""
    latencies, peak = [], process.memory_info().rss
    while not until.is_set():
        started = time.perf_counter()
        assert daemon.get("/api/health").status_code == 200
        latencies.append((time.perf_counter() - started) * 1000)
        peak = max(peak, process.memory_info().rss)
        time.sleep(0.02)
    return latencies, peak


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        daemon = DaemonProcess(Path(tmp) / "home").start()
        try:
            assert daemon.proc is not None
            process = psutil.Process(daemon.proc.pid)
            idle_done = threading.Event()
            threading.Timer(3.0, idle_done.set).start()
            idle, idle_rss = sample(daemon, process, idle_done)

            started = time.perf_counter()
            ids = [daemon.post("/api/tasks", {"agent": "shell", "command": c}).json()["id"] for c in HOSTILE]
            flooded = threading.Event()

            def watch() -> None:
                while any(daemon.get(f"/api/tasks/{i}").json()["state"] != "ended" for i in ids):
                    time.sleep(0.2)
                flooded.set()

            threading.Thread(target=watch, daemon=True).start()
            busy, busy_rss = sample(daemon, process, flooded)
            followed = time.perf_counter() - started
        finally:
            daemon.stop()
    print("daemon under hostile task output (125 MB of it, five tasks at once)")
    print(f"  {'':<22}{'health p50':>12}{'health p99':>12}{'health max':>12}{'RSS':>10}")
    for name, values, rss in (("idle (baseline)", idle, idle_rss), ("under the flood", busy, busy_rss)):
        print(
            f"  {name:<22}{pct(values, 50):>9.1f} ms{pct(values, 99):>9.1f} ms{max(values):>9.1f} ms"
            f"{rss / 1e6:>7.0f} MB"
        )
    print(f"  all five followed to their end in {followed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
