"""The owner's API under reads: `python -m bench.api [--baseline SOURCE_TREE]`.

Starts a real daemon (temporary home, a private GNOME Keyring holding one provider key, four agents, 300 requests
queued behind paused agents) and times 200 GET /api/agents and 200 GET /api/requests?limit=200, one after another on
a kept-alive connection. With --baseline, a daemon from that source tree (e.g. a `git worktree` of the commit before
a change) is measured the same way in the same run, first."""

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.ledger import pct
from tests.secret_service import private_secret_service

ROOT = Path(__file__).resolve().parent.parent
CALLS = 200
REQUESTS = 300


@contextlib.contextmanager
def daemon(source: Path, home: Path, env: dict[str, str]) -> Iterator[httpx.Client]:
    """A `cox daemon` run from `source`, as a client speaking as its owner."""
    home.mkdir(parents=True)
    with open(home / "daemon.out", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "desktop.cli", "--home", str(home), "daemon", "--port", "0"],
            cwd=source,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **env},
        )
        try:
            deadline = time.monotonic() + 60
            while not (home / "daemon.json").exists():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((home / "daemon.out").read_text())
                time.sleep(0.05)
            url = json.loads((home / "daemon.json").read_text())["url"]
            token = (home / "owner.token").read_text().strip()
            with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as client:
                yield client
        finally:
            proc.terminate()
            proc.wait(30)


def prepare(client: httpx.Client, folder: Path) -> None:
    folder.mkdir()
    for answer in (
        client.post("/api/agents/pause", json={}),
        client.post("/api/secrets", json={"name": "anthropic_api_key", "value": "sk-bench"}),
        *(
            client.post("/api/agents", json={"name": runtime, "runtime": runtime, "folder": str(folder)})
            for runtime in ("claude", "codex", "gemini")
        ),
    ):
        answer.raise_for_status()
    for n in range(REQUESTS):
        client.post("/api/requests", json={"agent": "shell", "prompt": f"echo {n}"}).raise_for_status()


def timed(client: httpx.Client, path: str) -> list[float]:
    took = []
    for _ in range(CALLS):
        start = time.perf_counter()
        client.get(path).raise_for_status()
        took.append((time.perf_counter() - start) * 1000)
    return took


def measure(source: Path, work: Path, env: dict[str, str]) -> dict[str, list[float]]:
    with daemon(source, work / "home", env) as client:
        prepare(client, work / "project")
        return {path: timed(client, path) for path in ("/api/agents", "/api/requests?limit=200")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, help="a source tree to measure first, for comparison")
    args = parser.parse_args()
    runs = [("baseline", args.baseline)] if args.baseline else []
    with private_secret_service() as env, tempfile.TemporaryDirectory() as folder:
        results = {
            name: measure(source.resolve(), Path(folder) / name, env) for name, source in [*runs, ("this tree", ROOT)]
        }
    for name, paths in results.items():
        for path, took in paths.items():
            print(
                f"{name:10} {path:26} {CALLS} calls: {sum(took):7.0f} ms in all, median {pct(took, 50):6.2f} ms, "
                f"p95 {pct(took, 95):6.2f} ms"
            )


if __name__ == "__main__":
    main()
