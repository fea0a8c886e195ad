"""The console figures of `python -m bench.gui`, for the tray app of the source tree this runs in (its working folder):
the loop's lateness with nothing running and while a task prints 5,000 lines/s into a console opened on it (first, as
a person opens it on a running task), then console open times on a 10-line and a 5 MB log. Prints them as one JSON
line. Reads the daemon over HTTP only, so that it measures the app of any tree alike."""

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
FLOOD = (
    "i=0; while [ $i -lt 50 ]; do seq $((i*1000)) $((i*1000+999)) | sed 's/^/\\x1b[32mok\\x1b[0m line /'; "
    "i=$((i+1)); sleep 0.2; done"
)  # 5,000 lines a second for 10 s
FIVE_MB = "[print(str(i).zfill(6), 'log line ' * 8) for i in range(65000)]"


async def task(api: httpx.AsyncClient, command: str, wait: bool = True) -> str:
    answer = await api.post("/api/tasks", json={"agent": "shell", "command": command})
    answer.raise_for_status()
    task_id: str = answer.json()["id"]
    while wait and (await api.get(f"/api/tasks/{task_id}")).json()["state"] != "ended":
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


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


async def measure(home: Path) -> dict[str, float]:
    from desktop.gui.app import TrayApp
    from desktop.platform.paths import Home

    app: Any = TrayApp(Home(home), port=0)
    await app.start()
    token = (home / "owner.token").read_text().strip()
    figures: dict[str, float] = {}
    async with httpx.AsyncClient(
        base_url=app.daemon.url, headers={"Authorization": f"Bearer {token}"}, timeout=60
    ) as api:
        try:
            quiet = await lateness(10)
            flood = await task(api, FLOOD, wait=False)
            console = await app.open_console(("task", flood))
            shown = console.view.lines_shown
            busy = await lateness(10)
            figures.update(
                idle_max=max(quiet),
                flood_max=max(busy),
                flood_p99=p99(busy),
                flood_lines=console.view.lines_shown - shown,
            )
            console.close()
            while (await api.get(f"/api/tasks/{flood}")).json()["state"] != "ended":
                await asyncio.sleep(0.05)
            for name, command in (("open_small", "seq 1 10"), ("open_big", f'{sys.executable} -c "{FIVE_MB}"')):
                task_id = await task(api, command)
                opens = []
                for _ in range(5):
                    begin = time.perf_counter()
                    console = await app.open_console(("task", task_id))
                    console.repaint()
                    opens.append((time.perf_counter() - begin) * 1000)
                    console.close()
                    console.chosen = None
                figures[name] = statistics.median(opens)
        finally:
            await app.stop()
    return figures


def main() -> int:
    import qasync  # type: ignore[import-untyped]
    from PySide6.QtWidgets import QApplication

    qt = QApplication([sys.argv[0]])
    qt.setQuitOnLastWindowClosed(False)
    loop = qasync.QEventLoop(qt)
    asyncio.set_event_loop(loop)
    with loop, tempfile.TemporaryDirectory() as folder:
        figures = loop.run_until_complete(measure(Path(folder) / "app"))
    print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
