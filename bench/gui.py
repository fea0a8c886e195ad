"""The tray app's own costs: `python -m bench.gui [--baseline SOURCE_TREE]` (offscreen Qt; about three minutes).

1. Process start to its icon shown, for a bare PySide6 tray icon, and to the daemon answering GET /api/health for the
   tray app (median of 5, started in turns).
2. A headless daemon (`cox daemon`) from exec to answering GET /api/health: CPU seconds of its process (median of 5).
3. Idle RSS and CPU of the tray app with its daemon after 30 s of nothing, beside the bare tray icon.
4. Time to open the console on a task whose log is 5 MB, against opening it on a 10-line log (median of 5).
5. Event-loop stalls (max and p99 lateness of a 10 ms ticker) while a task prints 5,000 lines/s for 10 s into an
   open, following console, against the same 10 s with nothing running.
Beside 1-3, the stack's own floor with nothing of Coxswain: a tray icon whose qasync loop serves one FastAPI route
through uvicorn (start, RSS), and the same route served headless (CPU): what no change inside Coxswain can go below.
With --baseline, the app from that source tree (e.g. `git worktree add /tmp/before 8cdbac2`) is measured the same way
in the same run, in turns with this tree, and each figure is printed beside it as a ratio. Every program runs from
cached bytecode (in .cache/bench-pyc, warmed by one uncounted start), as an installed app would."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil

ROOT = Path(__file__).resolve().parent.parent
TARGETS = {
    "start": "daemon answering within 3x the bare tray's start",
    "cpu": "headless daemon start under 0.4 s CPU",
    "rss": "idle tray app with its daemon at most 90 MB",
    "open": "console open under 150 ms",
    "stall": "loop stall at 5,000 lines/s at most 20 ms",
}
FLOORED = "tray + FastAPI, no Coxswain"  # see FLOOR
BARE_TRAY = """
import sys
from PySide6.QtWidgets import QApplication, QSystemTrayIcon
from PySide6.QtGui import QIcon
app = QApplication(sys.argv)
tray = QSystemTrayIcon(QIcon(sys.argv[1]))
tray.show()
print("running", flush=True)
app.exec()
"""
# The stack's own floor, nothing of Coxswain: FastAPI answering one route from uvicorn, on the tray icon's qasync loop
# ("tray") or on plain asyncio ("headless"). It writes daemon.json and owner.token as the daemon does, for `ready`.
FLOOR = """
import asyncio, json, socket, sys
from pathlib import Path
home = Path(sys.argv[2])
home.mkdir(parents=True)
if sys.argv[1] == "tray":
    import qasync
    from PySide6.QtGui import QIcon
    from PySide6.QtWidgets import QApplication, QSystemTrayIcon
    app = QApplication(sys.argv[:1])
    tray = QSystemTrayIcon(QIcon(sys.argv[3]))
    tray.show()
    loop = qasync.QEventLoop(app)
else:
    loop = asyncio.new_event_loop()
asyncio.set_event_loop(loop)
import uvicorn
from fastapi import FastAPI
api = FastAPI()
@api.get("/api/health")
def health() -> dict[str, bool]:
    return {"ok": True}
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen()
(home / "owner.token").write_text("floor")
server = uvicorn.Server(uvicorn.Config(api, log_level="warning", lifespan="off"))
async def serve() -> None:
    serving = asyncio.ensure_future(server.serve([sock]))
    while not server.started:
        await asyncio.sleep(0.001)
    (home / "daemon.json").write_text(json.dumps({"url": f"http://127.0.0.1:{sock.getsockname()[1]}"}))
    await serving
loop.run_until_complete(serve())
"""
Program = Callable[[Path], subprocess.Popen[str]]


def environment() -> dict[str, str]:
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "QT_LOGGING_RULES": "qt.qpa.*=false;qt.core.qobject.connect=false",
        "PYTHONPYCACHEPREFIX": str(ROOT / ".cache" / "bench-pyc"),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def bare_tray(home: Path) -> subprocess.Popen[str]:
    icon = ROOT / "resources" / "tray-idle.svg"
    return subprocess.Popen(
        [sys.executable, "-c", BARE_TRAY, str(icon)],
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def floor(kind: str) -> Program:
    icon = ROOT / "resources" / "tray-idle.svg"
    return lambda home: subprocess.Popen(
        [sys.executable, "-c", FLOOR, kind, str(home), str(icon)],
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def tray_app(tree: Path) -> Program:
    return lambda home: subprocess.Popen(
        [sys.executable, "-m", "desktop.gui.app", "--port", "0", "--home", str(home)],
        cwd=tree,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def headless(tree: Path) -> Program:
    return lambda home: subprocess.Popen(
        [sys.executable, "-m", "desktop.cli", "--home", str(home), "daemon", "--port", "0"],
        cwd=tree,
        env=environment(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def ready(process: subprocess.Popen[str], home: Path | None) -> float:
    """Seconds until the bare tray says it runs (home None) or the daemon in `home` answers GET /api/health."""
    begin = time.perf_counter()
    if home is None:
        assert process.stdout is not None
        if "running" not in process.stdout.readline():
            raise RuntimeError("the bare tray icon did not start")
        return time.perf_counter() - begin
    deadline = begin + 120
    while time.perf_counter() < deadline and process.poll() is None:
        try:
            url = json.loads((home / "daemon.json").read_text())["url"]
            token = (home / "owner.token").read_text().strip()
            if httpx.get(f"{url}/api/health", headers={"Authorization": f"Bearer {token}"}).status_code == 200:
                return time.perf_counter() - begin
        except (OSError, ValueError, KeyError, httpx.HTTPError):
            pass
        time.sleep(0.005)
    raise RuntimeError(f"{process.args!r} did not answer")


def stop(process: subprocess.Popen[str]) -> None:
    process.terminate()
    process.wait(30)


def start_times(programs: dict[str, Program], tmp: Path, rounds: int = 5) -> dict[str, tuple[float, float]]:
    """Each program started `rounds` times in turns, after one uncounted start: median seconds to ready and CPU
    seconds its process had used by then."""
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in programs}
    for i in range(rounds + 1):
        for name, program in programs.items():
            home = tmp / f"{name}-{i}"
            process = program(home)
            took = ready(process, None if name == "bare tray" else home)
            cpu = sum(psutil.Process(process.pid).cpu_times()[:2])
            stop(process)
            if i:
                seen[name].append((took, cpu))
    return {
        name: (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
        for name, values in seen.items()
    }


def idle(programs: dict[str, Program], tmp: Path) -> dict[str, tuple[float, float]]:
    """RSS (MB) and CPU (seconds) of each program over 30 s of nothing, all running side by side."""
    processes = {}
    for name, program in programs.items():
        processes[name] = program(tmp / f"idle-{name}")
        ready(processes[name], None if name == "bare tray" else tmp / f"idle-{name}")
    watched = {name: psutil.Process(p.pid) for name, p in processes.items()}
    before = {name: sum(w.cpu_times()[:2]) for name, w in watched.items()}
    time.sleep(30)
    found = {name: (w.memory_info().rss / 2**20, sum(w.cpu_times()[:2]) - before[name]) for name, w in watched.items()}
    for process in processes.values():
        stop(process)
    return found


def in_app(tree: Path) -> dict[str, float]:
    """The console figures of the tray app from `tree`, measured in a process of its own (bench/gui_console.py)."""
    script = ROOT / "bench" / "gui_console.py"
    runner = f"import runpy; runpy.run_path({str(script)!r}, run_name='__main__')"
    out = subprocess.run(
        [sys.executable, "-c", runner], cwd=tree, env=environment(), capture_output=True, text=True, timeout=600
    )
    if out.returncode:
        raise RuntimeError(f"the console figures of {tree} failed:\n{out.stderr[-3000:]}")
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def row(label: str, values: dict[str, float], unit: str, scale: float = 1.0, against: float | None = None) -> None:
    """One figure per tree; with two trees, this tree's over the baseline's; with `against`, each over it."""
    digits = 2 if unit == "s" else 1
    shown = "   ".join(
        f"{name} {v * scale:7.{digits}f} {unit}" + (f" ({v / against:.1f}x)" if against else "")
        for name, v in values.items()
    )
    ratio = ""
    if len(values) == 2:
        base, this = values.values()
        ratio = f"   this/baseline {this / base:.2f}"
    print(f"   {label:30} {shown}{ratio}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, help="a source tree to measure in the same run, for comparison")
    args = parser.parse_args()
    trees = {**({"baseline": args.baseline.resolve()} if args.baseline else {}), "this tree": ROOT}
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        print("1. process start to the icon (bare tray) / to the daemon answering (tray app), median of 5")
        starts = start_times(
            {"bare tray": bare_tray, FLOORED: floor("tray"), **{n: tray_app(t) for n, t in trees.items()}},
            tmp / "start",
        )
        bare = starts["bare tray"][0]
        print(f"   {'bare tray icon':30} {bare * 1000:7.0f} ms")
        row(FLOORED, {"floor": starts[FLOORED][0]}, "ms", 1000, against=bare)
        row("tray app, daemon answers", {n: starts[n][0] for n in trees}, "ms", 1000, against=bare)
        print("2. headless daemon: exec to answering, CPU of its process, median of 5")
        daemons = start_times(
            {FLOORED: floor("headless"), **{n: headless(t) for n, t in trees.items()}}, tmp / "daemon"
        )
        row("CPU, FastAPI answering alone", {"floor": daemons[FLOORED][1]}, "s")
        row("CPU", {n: daemons[n][1] for n in trees}, "s")
        row("wall", {n: daemons[n][0] for n in trees}, "s")
        print("3. idle after 30 s: RSS, and CPU used in those 30 s")
        rest = idle(
            {"bare tray": bare_tray, FLOORED: floor("tray"), **{n: tray_app(t) for n, t in trees.items()}}, tmp / "idle"
        )
        print(f"   {'bare tray icon RSS':30} {rest['bare tray'][0]:7.1f} MB")
        row(f"{FLOORED} RSS", {"floor": rest[FLOORED][0]}, "MB", against=rest["bare tray"][0])
        row("tray app RSS", {n: rest[n][0] for n in trees}, "MB", against=rest["bare tray"][0])
        row("tray app CPU", {n: rest[n][1] / 30 * 100 for n in trees}, "%")
        print("4. open the console on a task, median of 5; 5. loop lateness of a 10 ms ticker over 10 s")
        consoles = {name: in_app(tree) for name, tree in trees.items()}
        for key, label, unit in (
            ("open_small", "open, 10-line log", "ms"),
            ("open_big", "open, 5 MB log", "ms"),
            ("idle_max", "stall, nothing running: max", "ms"),
            ("flood_max", "stall, 5,000 lines/s: max", "ms"),
            ("flood_p99", "stall, 5,000 lines/s: p99", "ms"),
            ("flood_lines", "lines shown in those 10 s", ""),
        ):
            row(label, {n: consoles[n][key] for n in trees}, unit)
    print("targets: " + "; ".join(TARGETS.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
