"""Starts detached runners, waits for them (also ones started by an earlier daemon), stops them by process group."""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from desktop.reentry import runner_command
from desktop.tasks.runner import TASK_MARK, group_of, write_atomically

RUNNER = runner_command()
TAIL_BYTES = 64 * 1024
RUNNER_SLACK = 5.0  # past the grace, how long the runner may take to end the tree before the daemon does it


@dataclass(frozen=True)
class Exit:
    returncode: int | None  # None: the outcome is unknown
    error: str | None = None
    survivors: tuple[str, ...] = ()  # processes of the command that outlived SIGKILL


class Supervisor:
    def __init__(self, runner: list[str] = RUNNER) -> None:
        self._runner = runner
        self._children: dict[Path, subprocess.Popen[bytes]] = {}

    def start(self, task_dir: Path, argv: list[str], cwd: str, env: dict[str, str]) -> None:
        """Launch the command under a runner; returns as soon as the runner process exists."""
        if (task_dir / "spec.json").exists():
            raise FileExistsError(f"{task_dir} was started before; a task never starts twice")
        task_dir.mkdir(parents=True, exist_ok=True)
        (task_dir / "spec.json").write_text(json.dumps({"argv": argv, "cwd": cwd}))  # a record for people
        self._children[task_dir] = subprocess.Popen(
            [*self._runner, str(task_dir), *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )

    def runner(self, task_dir: Path) -> psutil.Process | None:
        """The live runner of `task_dir`, or None. Checked by its command line, so a reused PID never fools it."""
        child = self._children.get(task_dir)
        candidates: list[int] = [child.pid] if child else []
        with contextlib.suppress(OSError, ValueError):
            candidates.append(int(json.loads((task_dir / "runner.json").read_text())["runner_pid"]))
        for pid in candidates:
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                if str(task_dir) in process.cmdline() and process.status() != psutil.STATUS_ZOMBIE:
                    return process
        if child is None:  # started by an earlier daemon that died before the runner said who it is
            for process in psutil.process_iter(["cmdline"]):
                if str(task_dir) in (process.info["cmdline"] or []):
                    return process
        return None

    async def wait(self, task_dir: Path) -> Exit:
        """Wait until the runner ends, then read how the command ended."""
        child = self._children.get(task_dir)
        process = self.runner(task_dir)
        if process is not None:
            await _exited(process.pid)
        if child is not None:
            if child.poll() is None:  # reaps it when it has exited, as it normally has by now
                await asyncio.to_thread(child.wait)
            del self._children[task_dir]
        return read_exit(task_dir)

    def signal_group(self, task_dir: Path, signum: int) -> bool:
        """Signal the command's process group, then the command's descendants outside it (agent CLIs start their
        tool commands in process groups of their own). The group goes first, all at once, so no member sees another
        die before its own signal arrives."""
        try:
            pgid = int(_runner_record(task_dir)["pgid"])
        except (KeyError, TypeError, ValueError):
            return False
        outside: list[psutil.Process] = []
        with contextlib.suppress(psutil.Error):  # collected first: once the command dies its tree is gone
            outside = [p for p in psutil.Process(pgid).children(recursive=True) if group_of(p.pid) != pgid]
        try:
            os.killpg(pgid, signum)
        except OSError:
            return False
        for process in outside:
            with contextlib.suppress(psutil.Error):
                process.send_signal(signum)
        return True

    def runs_besides(self, task_dir: Path, own: Callable[[psutil.Process], bool]) -> bool:
        """Whether a process runs under the command that is not one of its `own` (a tool call an agent CLI runs)."""
        try:
            command = psutil.Process(int(_runner_record(task_dir)["pid"]))
            under = command.children(recursive=True)
        except (KeyError, TypeError, ValueError, psutil.Error):
            return False
        for process in under:
            with contextlib.suppress(psutil.Error):
                if process.status() != psutil.STATUS_ZOMBIE and not own(process):
                    return True
        return False

    async def stop(self, task_dir: Path, grace: float) -> None:
        """End the command and everything it started: SIGTERM, SIGKILL after `grace` seconds. The runner does it
        (it finds every descendant, also those that left the group); this returns once the runner has ended. Where
        the runner cannot (it is gone, or cannot see descendants), it is done from here."""
        with contextlib.suppress(OSError):  # a folder gone: nothing reads it
            write_atomically(str(task_dir / "stop.json"), json.dumps({"grace": grace}))
        runner = self.runner(task_dir)
        if runner is None:
            await self.end_orphans(task_dir, grace)
            return
        tracked = _runner_record(task_dir).get("tracked") is True
        with contextlib.suppress(psutil.Error):
            runner.terminate()
        if not tracked:
            self.signal_group(task_dir, signal.SIGTERM)
        try:  # the runner ends once nothing of the command is left
            await asyncio.wait_for(_exited(runner.pid), grace + (RUNNER_SLACK if tracked else 0))
        except TimeoutError:
            self.signal_group(task_dir, signal.SIGKILL)
            await self.end_orphans(task_dir, 0)

    async def end_orphans(self, task_dir: Path, grace: float) -> list[str]:
        """End every process that carries this task's mark in its environment (what a runner that is gone left
        behind): SIGTERM, SIGKILL after `grace`. Returns the command lines of those it found."""
        marked = _marked(task_dir)
        for process in marked:
            with contextlib.suppress(psutil.Error):
                process.terminate()
        _, alive = await asyncio.to_thread(psutil.wait_procs, marked, grace)
        for process in alive:  # its whole group: a process that forks on keeps it
            group = group_of(process.pid)
            if group is not None and group != group_of(os.getpid()):
                with contextlib.suppress(OSError):
                    os.killpg(group, signal.SIGKILL)
            with contextlib.suppress(psutil.Error):
                process.kill()
        return [_described(process) for process in marked]


def _marked(task_dir: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if process.environ().get(TASK_MARK) == str(task_dir):
                found.append(process)
    return found


def _described(process: psutil.Process) -> str:
    try:
        return f"{process.pid} ({' '.join(process.cmdline())[:200]})"
    except psutil.Error:
        return str(process.pid)


def _runner_record(task_dir: Path) -> dict[str, Any]:
    try:
        record = json.loads((task_dir / "runner.json").read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def read_exit(task_dir: Path) -> Exit:
    try:
        recorded = json.loads((task_dir / "exit.json").read_text())
    except (OSError, ValueError):
        return Exit(None, "interrupted; outcome unknown")
    survivors = tuple(f"{s.get('pid')} ({s.get('command')})" for s in recorded.get("survivors") or [])
    return Exit(recorded.get("returncode"), survivors=survivors)


def tail(task_dir: Path, lines: int = 20) -> str:
    """The last lines the command printed, as text."""
    path = task_dir / "output"
    try:
        with open(path, "rb") as f:
            f.seek(max(0, path.stat().st_size - TAIL_BYTES))
            data = f.read()
    except OSError:
        return ""
    return "\n".join(data.decode("utf-8", "replace").splitlines()[-lines:])


async def _exited(pid: int) -> None:
    """Resolve when process `pid` has ended: a pidfd where the OS has them, polling elsewhere."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        while True:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    return
            except psutil.NoSuchProcess:
                return
            await asyncio.sleep(0.1)
    loop = asyncio.get_running_loop()
    done = loop.create_future()

    def exited() -> None:
        if not done.done():
            done.set_result(None)

    loop.add_reader(fd, exited)
    try:
        await done
    finally:
        loop.remove_reader(fd)
        os.close(fd)
