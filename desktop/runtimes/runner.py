"""The detached task runner: `python -S -I runner.py TASK_DIR COMMAND [ARG ...]`, started in the working folder.

Started by the daemon in a session of its own, it runs COMMAND in a new process group, appends everything the
command prints to TASK_DIR/output and, when the command ends, writes TASK_DIR/exit.json. It does not depend on the
daemon: if the daemon stops or crashes, the command goes on and its outcome is kept. It imports only os, signal,
sys and time, so the command starts a few milliseconds after the runner does.
"""

import os
import signal
import sys
import time


def write_atomically(path: str, text: str) -> None:
    """A reader sees the old file or the whole new one, never half of it."""
    partial = path + ".partial"
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(partial, path)


def _start(command: list[str], output: int) -> int:
    """Fork and exec `command` in a process group of its own; returns its PID."""
    devnull = os.open(os.devnull, os.O_RDONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.setpgid(0, 0)
            os.dup2(devnull, 0)
            os.dup2(output, 1)
            os.dup2(output, 2)
            for signum in (signal.SIGHUP, signal.SIGINT):
                signal.signal(signum, signal.SIG_DFL)
            os.execvp(command[0], command)
        except OSError as error:
            os.write(2, f"could not start {command[0]}: {error.strerror}\n".encode())
        os._exit(127)
    try:  # noqa: SIM105 - contextlib would add to the start-up this module avoids
        os.setpgid(pid, pid)  # from both sides, so the group exists whichever runs first
    except OSError:
        pass
    os.close(devnull)
    return pid


def main(argv: list[str]) -> int:
    task_dir, command = argv[0], argv[1:]
    started = time.time()
    identity = f'"runner_pid": {os.getpid()}, "started_at": {started!r}'
    write_atomically(os.path.join(task_dir, "runner.json"), f"{{{identity}}}")
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal or session going away must not end the task
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    output = os.open(os.path.join(task_dir, "output"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    if hasattr(os, "fork"):
        pid = _start(command, output)
        signal.signal(signal.SIGTERM, lambda signum, _frame: os.killpg(pid, signum))
        write_atomically(os.path.join(task_dir, "runner.json"),
                         f'{{{identity}, "pid": {pid}, "pgid": {pid}}}')
        returncode = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    else:  # Windows: no fork; a new process group through subprocess
        import subprocess

        child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=output, stderr=output,
                                 creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0))
        write_atomically(os.path.join(task_dir, "runner.json"),
                         f'{{{identity}, "pid": {child.pid}}}')
        returncode = child.wait()
    ended = f'{{"returncode": {returncode}, "ended_at": {time.time()!r}}}'
    write_atomically(os.path.join(task_dir, "exit.json"), ended)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
