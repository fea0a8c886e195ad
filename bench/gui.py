"""The tray app's own costs: `python -m bench.gui` (offscreen Qt; about two minutes).

1. Process start to tray icon shown (the app prints its "running" line right after), median of 5, against a bare
   PySide6 tray icon started the same way.
2. Idle RSS and CPU of the tray app with its daemon after 30 s of nothing, against the bare tray icon.
3. Time to open the console on a task whose log is 5 MB, against opening it on a 10-line log (median of 5).
4. Event-loop stalls (max and p99 lateness of a 10 ms ticker) while a task prints 5,000 lines/s for 10 s into an
   open, following console, against the same 10 s with nothing running.
Targets: start under 1 s, idle RSS under 120 MB, open under 150 ms, stalls under 50 ms."""

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from bench.ledger import pct

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
os.environ.setdefault("QT_LOGGING_RULES", "qt.qpa.*=false;qt.core.qobject.connect=false")
BARE_TRAY = """
import sys, time
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from PySide6.QtGui import QIcon
from PySide6.QtCore import QTimer
app = QApplication(sys.argv)
tray = QSystemTrayIcon(QIcon(sys.argv[1]))
tray.show()
print("running", flush=True)
app.exec()
"""
FLOOD = "i=0; while [ $i -lt 50 ]; do seq $((i*1000)) $((i*1000+999)) | sed 's/^/\\x1b[32mok\\x1b[0m line /'; " \
        "i=$((i+1)); sleep 0.2; done"  # 5,000 lines a second for 10 s


def started(argv: list[str], env: dict[str, str]) -> tuple[float, float, subprocess.Popen[str]]:
    """Seconds from the process start to its icon shown ("starting" or "running" line) and to it running, and the
    process (still running)."""
    begin = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    shown = None
    for line in process.stdout:
        if "starting" in line.lower() or "running" in line.lower():
            shown = shown or time.perf_counter() - begin
        if "running" in line.lower():
            return shown, time.perf_counter() - begin, process
    raise RuntimeError(f"{argv} ended without saying it runs")


def start_times(programs: dict[str, Callable[[int], list[str]]], env: dict[str, str], rounds: int = 5) -> None:
    """Each program started `rounds` times, in turns (argv for round i); medians printed."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in programs}
    for i in range(rounds):
        for name, argv in programs.items():
            shown, running, process = started(argv(i), env)
            times[name].append((shown, running))
            stop(process)
    for name, values in times.items():
        print(f"   {name:16} {statistics.median(v[0] for v in values) * 1000:6.0f} ms   "
              f"{statistics.median(v[1] for v in values) * 1000:6.0f} ms")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(30)


def start_and_idle(tmp: Path) -> None:
    from desktop.resources import resource

    env = {**os.environ}
    app = [sys.executable, "-m", "desktop.gui.app", "--port", "0", "--home"]
    bare = [sys.executable, "-c", BARE_TRAY, str(resource("tray-idle.svg"))]
    print("1. process start to tray icon shown, and to the daemon answering (median of 5)")
    start_times({"bare tray icon": lambda i: bare, "Coxswain": lambda i: [*app, str(tmp / f"start{i}")]}, env)

    processes = {name: started(argv, env)[2] for name, argv in (("bare tray icon", bare),
                                                                 ("Coxswain", [*app, str(tmp / "idle")]))}
    watched = {name: psutil.Process(p.pid) for name, p in processes.items()}
    cpu_before = {name: sum(w.cpu_times()[:2]) for name, w in watched.items()}
    time.sleep(30)
    print("2. idle after 30 s: RSS and CPU time used in those 30 s")
    for name, process in watched.items():
        rss = process.memory_info().rss / 2**20
        cpu = sum(process.cpu_times()[:2]) - cpu_before[name]
        print(f"   {name:16} {rss:6.0f} MB   {cpu * 1000:5.0f} ms CPU ({cpu / 30 * 100:.2f} %)")
    for process in processes.values():
        stop(process)


async def in_app(tmp: Path) -> None:
    from desktop.gui.app import TrayApp
    from desktop.platform.paths import Home

    app = TrayApp(Home(tmp / "app"), port=0)
    await app.start()
    try:
        small = await task(app, "seq 1 10")
        five_mb = "[print(str(i).zfill(6), 'log line ' * 8) for i in range(65000)]"
        big = await task(app, f'{sys.executable} -c "{five_mb}"')
        size = (tmp / "app" / "tasks" / big / "output").stat().st_size
        print(f"3. open the console on a task (median of 5; the big log is {size / 2**20:.1f} MB)")
        for name, task_id in (("10-line log", small), ("5 MB log", big)):
            opens = []
            for _ in range(5):
                begin = time.perf_counter()
                console = await app.open_console(("task", task_id))
                console.repaint()
                opens.append((time.perf_counter() - begin) * 1000)
                console.close()
                console.chosen = None
            print(f"   {name:16} {statistics.median(opens):6.0f} ms")

        print("4. event-loop lateness of a 10 ms ticker over 10 s (the daemon shares the loop)")
        print(f"   {'nothing running':28} {report(await lateness(10))}")
        flood = await task(app, FLOOD, wait=False)
        console = await app.open_console(("task", flood))
        lines_before = console.view.lines_shown
        print(f"   {'5,000 lines/s into a console':28} {report(await lateness(10))}"
              f"   ({console.view.lines_shown - lines_before} lines shown meanwhile)")
    finally:
        await app.stop()


async def task(app: Any, command: str, wait: bool = True) -> str:
    task_id: str = (await app.api.post("/api/tasks", json={"agent": "shell", "command": command})).json()["id"]
    while wait and (await app.api.get(f"/api/tasks/{task_id}")).json()["state"] != "ended":
        await asyncio.sleep(0.05)
    return task_id


async def lateness(seconds: float) -> list[float]:
    late, tick = [], 0.01
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        before = time.perf_counter()
        await asyncio.sleep(tick)
        late.append((time.perf_counter() - before - tick) * 1000)
    return late


def report(late: list[float]) -> str:
    return f"max {max(late):5.1f} ms   p99 {pct(late, 99):5.1f} ms"


def main() -> int:
    import qasync  # type: ignore[import-untyped]
    from PySide6.QtWidgets import QApplication

    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        start_and_idle(tmp)
        qt = QApplication([sys.argv[0]])
        qt.setQuitOnLastWindowClosed(False)
        loop = qasync.QEventLoop(qt)
        asyncio.set_event_loop(loop)
        with loop:
            loop.run_until_complete(in_app(tmp))
    print("targets: start under 1 s, idle RSS under 120 MB, open under 150 ms, stalls under 50 ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
