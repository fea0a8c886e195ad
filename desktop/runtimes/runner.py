"""The detached task runner: `python -m desktop.runtimes.runner TASK_DIR`.

Started by the daemon in a session of its own, it runs the command described in TASK_DIR/spec.json in a new process
group, appends everything the command prints to TASK_DIR/output and, when the command ends, writes TASK_DIR/exit.json.
It does not depend on the daemon: if the daemon stops or crashes, the command goes on and its outcome is kept.
Standard library only, so it starts fast.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def write_json(path: Path, value: dict[str, object]) -> None:
    """Write atomically: a reader sees the old file or the whole new one, never half of it."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w") as f:
        json.dump(value, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)


def main(argv: list[str]) -> int:
    task_dir = Path(argv[0])
    spec = json.loads((task_dir / "spec.json").read_text())
    state: dict[str, object] = {"runner_pid": os.getpid(), "started_at": time.time()}
    write_json(task_dir / "runner.json", state)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with open(task_dir / "output", "ab", buffering=0) as out:
            child = subprocess.Popen(
                spec["argv"], cwd=spec["cwd"], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                process_group=0,
            )
    except OSError as error:
        write_json(task_dir / "exit.json", {"returncode": None, "error": f"could not start: {error}",
                                            "ended_at": time.time()})
        return 1

    def forward(signum: int, _frame: object) -> None:
        os.killpg(child.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    write_json(task_dir / "runner.json", {**state, "pid": child.pid, "pgid": child.pid})
    returncode = child.wait()
    write_json(task_dir / "exit.json", {"returncode": returncode, "ended_at": time.time()})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
