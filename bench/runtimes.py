"""The daemon's own overhead per agent turn, for each real agent CLI against the fake model: `python -m bench.runtimes`.

For each runtime it runs a one-tool-call turn (a) through the daemon and (b) as the CLI alone with the same command
line, five times each (--rounds), and prints medians of:
  start -> first model request: from the request's creation (or the CLI's start) to its first call at the fake model
  exit -> final state:          from the CLI's exit to the request showing done (daemon only)
The daemon's overhead is (a)'s start latency minus (b)'s, plus exit -> final state. Target: under 100 ms a turn.
Both (a) and (b) start Coxswain's MCP relay (desktop/mcp/relay.py) with the CLI, as every turn does; the CLIs wait
for it before their first model call (it is standard library only, so that costs a few tens of milliseconds)."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

from desktop.reentry import relay_command
from desktop.runtimes import builtin_runtimes
from desktop.runtimes.base import TurnTools
from desktop.store.rows import AgentRow, RequestRow
from tests.agent_env import offline_env
from tests.daemon_process import DaemonProcess
from tests.fakes.model.server import FakeModelServer

RUNTIMES = {"claude": {}, "codex": {}, "gemini": {"model": "gemini-2.5-pro"}, "copilot": {}}
PROMPT = "TOOL true"
ROUNDS = 5


def first_call_after(model: FakeModelServer, since: float) -> float:
    calls = [r["at"] for r in model.requests() if r["method"] == "POST" and r["at"] >= since]
    return float(min(calls))


def through_daemon(daemon: DaemonProcess, model: FakeModelServer, agent: str) -> tuple[float, float]:
    started = time.time()
    row = daemon.request(PROMPT, agent=agent)
    done = daemon.wait_state(row["id"], "done", timeout=120)
    exited = json.loads((daemon.home / "tasks" / f"{row['id']}.1" / "exit.json").read_text())["ended_at"]
    final = datetime.fromisoformat(done["ended_at"]).timestamp()
    return first_call_after(model, started) - started, final - exited


def holding_a_turn(daemon: DaemonProcess) -> str:
    """A turn token for the CLI run alone: only an agent in a running turn is let in at the MCP server, so a shell
    request sleeps for the whole run and lends it its token."""
    row = daemon.request("sleep 3600")
    daemon.wait_state(row["id"], "running")
    return (daemon.home / "tasks" / f"{row['id']}.1" / "turn.token").read_text()


def alone(
    model: FakeModelServer,
    daemon: DaemonProcess,
    runtime: str,
    options: dict[str, str],
    env: dict[str, str],
    folder: Path,
    token: str,
) -> float:
    agent = AgentRow("bench", runtime, str(folder), dict(options), 0.0)
    request = RequestRow(
        "R20260101-01",
        "owner",
        "bench",
        "owner",
        PROMPT,
        "running",
        0,
        0,
        None,
        None,
        None,
        None,
        None,
        None,
        [],
        None,
        None,
        None,
        None,
        False,
    )
    task_dir = Path(tempfile.mkdtemp(dir=folder))
    (task_dir / "turn.token").write_text(token)  # the same MCP relay and server answer; no tool of theirs is called
    relay = relay_command()
    tools = TurnTools(relay[0], [*relay[1:], str(daemon.home / "daemon.json"), str(task_dir / "turn.token")])
    launch = builtin_runtimes()[runtime].launch(request, agent, [], task_dir, env, tools)
    started = time.time()
    subprocess.run(
        launch.argv,
        cwd=folder,
        env={**env, **launch.env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=120,
        check=True,
    )
    return first_call_after(model, started) - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("runtimes", nargs="*", metavar="RUNTIME", help=f"some of {', '.join(RUNTIMES)} (default: all)")
    args = parser.parse_args()
    unknown = set(args.runtimes) - set(RUNTIMES)
    if unknown:
        parser.error(f"unknown runtime {', '.join(sorted(unknown))}; choose from {', '.join(RUNTIMES)}")
    args.runtimes = args.runtimes or list(RUNTIMES)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        model = FakeModelServer(folder / "model.jsonl")
        threading.Thread(target=model.serve_forever, daemon=True).start()
        env = {**os.environ, **offline_env(folder, f"http://127.0.0.1:{model.port}")}
        (folder / "work").mkdir()
        daemon = DaemonProcess(folder / "home").start(env=env)
        try:
            token = holding_a_turn(daemon)
            for runtime in args.runtimes:
                options = RUNTIMES[runtime]
                daemon.post(
                    "/api/agents", {"name": runtime, "runtime": runtime, "folder": str(folder / "work"), **options}
                )
                through = [through_daemon(daemon, model, runtime) for _ in range(args.rounds)]
                direct = [
                    alone(model, daemon, runtime, options, env, folder / "work", token) for _ in range(args.rounds)
                ]
                start_d = statistics.median(t[0] for t in through) * 1000
                end_d = statistics.median(t[1] for t in through) * 1000
                start_a = statistics.median(direct) * 1000
                rows.append((runtime, start_d, start_a, end_d, start_d - start_a + end_d))
        finally:
            daemon.stop()
            daemon.kill_runners()
            model.shutdown()
    print(f"per-turn daemon overhead with the real agent CLIs (medians of {args.rounds}; target < 100 ms)")
    print(
        f"  {'runtime':<8} {'start->1st call via daemon':>27} {'CLI alone':>10} {'exit->final state':>18} "
        f"{'overhead':>9}"
    )
    for runtime, start_d, start_a, end_d, overhead in rows:
        print(f"  {runtime:<8} {start_d:>24.0f} ms {start_a:>7.0f} ms {end_d:>15.0f} ms {overhead:>6.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
