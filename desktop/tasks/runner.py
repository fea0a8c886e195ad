"""The detached task runner: `python -S -I runner.py TASK_DIR COMMAND [ARG ...]`, started in the working folder.

Started by the daemon in a session of its own, it runs COMMAND in a new process group, appends everything the
command prints to TASK_DIR/output and, when the command ends, writes TASK_DIR/exit.json. It does not depend on the
daemon: if the daemon stops or crashes, the command goes on and its outcome is kept. It imports only os, signal,
sys and time (and ctypes on Linux), so the command starts a few milliseconds after the runner does.

Nothing of the command outlives it. On Linux the runner is a child subreaper: whatever the command starts and
leaves behind (`setsid`, a double fork, `nohup … &`) becomes the runner's child, not init's. When the command ends,
or the runner gets SIGTERM (a stop), every process of the tree gets SIGTERM, then SIGKILL after the grace period
(TASK_DIR/stop.json's `grace`, written by whoever stops it); exit.json is written once none is left, naming any
that outlived SIGKILL. Every process also inherits COXSWAIN_TASK=TASK_DIR, so a tree whose runner is gone can
still be found.
"""

import os
import signal
import sys
import time

TASK_MARK = "COXSWAIN_TASK"
GRACE = 5.0  # seconds from SIGTERM to SIGKILL when nobody said otherwise
SURVIVOR_WAIT = 2.0  # how long SIGKILL may take before a process is named as having outlived it
KILL_AGAIN = 0.05  # seconds between rounds of SIGKILL while anything of the tree is left
PR_SET_CHILD_SUBREAPER = 36
WATCHED = {signal.SIGCHLD, signal.SIGTERM}  # on Linux blocked, and taken one at a time with sigtimedwait


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
            if hasattr(signal, "pthread_sigmask"):
                signal.pthread_sigmask(signal.SIG_UNBLOCK, WATCHED)
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


def _become_subreaper() -> bool:
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def descendants(root: int) -> list[int]:
    """The live (not zombie) descendants of `root`, read from /proc."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] != b"Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal_tree(pgid: int, signum: int) -> list[int]:
    """The command's group first, all at once, so no member sees another die before its own signal; then every
    other descendant and its whole group (agent CLIs start their tools in groups of their own; orphans came to us;
    a process that forks on and on keeps its group, which the kernel signals whole). Returns the descendants."""
    found = list(dict.fromkeys([*_children(), *descendants(os.getpid())]))
    own = os.getpgid(0)
    for group in dict.fromkeys([pgid, *(group_of(pid) for pid in found)]):
        if group not in (None, own):
            try:  # noqa: SIM105
                os.killpg(group, signum)
            except OSError:
                pass
    for pid in found:
        try:  # noqa: SIM105
            os.kill(pid, signum)
        except OSError:
            pass
    return found


def _children() -> list[int]:
    """The runner's own children as the kernel lists them at one moment. A process that forks on and on is always
    one of them (each orphan is handed to us), where a scan of /proc, one entry at a time, never sees it."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        return []


def group_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def _grace(task_dir: str) -> float:
    try:
        with open(os.path.join(task_dir, "stop.json"), "rb") as f:
            text = f.read().decode()
        return max(0.0, float(text.split('"grace":', 1)[1].strip(" }\n")))
    except (OSError, ValueError, IndexError):
        return GRACE


def _reap(pid: int) -> tuple[int | None, bool]:
    """Reap every child that ended: the command's exit code once it has, and whether any child is left. No child
    left means nothing of the tree is (we are its subreaper): the kernel says so at once, where a scan of /proc could
    miss a process that forks on."""
    returncode = None
    while True:
        try:
            child, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return returncode, False
        if child == 0:
            return returncode, True
        if child == pid:
            returncode = os.waitstatus_to_exitcode(status)


def _supervise(task_dir: str, pid: int) -> tuple[int, list[int]]:
    """Wait for the command, then end whatever of its tree is left (at once on SIGTERM). Returns the command's exit
    code and the processes that outlived SIGKILL."""
    returncode: int | None = None
    term_at: float | None = None
    kill_at: float | None = None
    grace = GRACE
    while True:
        ended, children = _reap(pid)
        returncode = ended if ended is not None else returncode
        now = time.monotonic()
        if returncode is not None and not children:
            return returncode, []
        if term_at is None and returncode is not None:  # the command ended: what it left behind ends too
            term_at, grace = now, _grace(task_dir)
            _signal_tree(pid, signal.SIGTERM)
        if term_at is not None and kill_at is None and now >= term_at + grace:
            kill_at = now
        if kill_at is not None:  # again and again until none is left: a fork may come between a scan and a kill
            left = _signal_tree(pid, signal.SIGKILL)
            if returncode is not None and now >= kill_at + SURVIVOR_WAIT:
                return returncode, left
        if term_at is None:
            timeout = 3600.0
        elif kill_at is None:
            timeout = term_at + grace - now
        else:
            timeout = KILL_AGAIN
        caught = signal.sigtimedwait(WATCHED, max(0.01, timeout))
        if caught is not None and caught.si_signo == signal.SIGTERM and term_at is None:
            term_at, grace = time.monotonic(), _grace(task_dir)
            _signal_tree(pid, signal.SIGTERM)


def _command_line(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()[:200]
    except OSError:
        return "?"


def main(argv: list[str]) -> int:
    task_dir, command = argv[0], argv[1:]
    started = time.time()
    identity = f'"runner_pid": {os.getpid()}, "started_at": {started!r}'
    write_atomically(os.path.join(task_dir, "runner.json"), f"{{{identity}}}")
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the terminal or session going away must not end the task
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ[TASK_MARK] = task_dir
    output = os.open(os.path.join(task_dir, "output"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    survivors: list[int] = []
    if hasattr(os, "fork"):
        tracked = os.path.isdir("/proc") and hasattr(signal, "sigtimedwait") and _become_subreaper()
        if tracked:  # before the fork: a stop that comes at once is taken up, not fatal to the runner
            signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
        pid = _start(command, output)
        write_atomically(
            os.path.join(task_dir, "runner.json"),
            f'{{{identity}, "pid": {pid}, "pgid": {pid}, "tracked": {str(tracked).lower()}}}',
        )
        if tracked:
            returncode, survivors = _supervise(task_dir, pid)
        else:  # macOS: the process group; the daemon kills it whole after the grace
            signal.signal(signal.SIGTERM, lambda signum, _frame: os.killpg(pid, signum))
            returncode = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    else:  # Windows: no fork; a new process group through subprocess
        import subprocess

        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            creationflags=getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0),
        )
        write_atomically(os.path.join(task_dir, "runner.json"), f'{{{identity}, "pid": {child.pid}}}')
        returncode = child.wait()
    named = ", ".join(f'{{"pid": {p}, "command": {_json_string(_command_line(p))}}}' for p in survivors)
    ended = f'{{"returncode": {returncode}, "ended_at": {time.time()!r}, "survivors": [{named}]}}'
    write_atomically(os.path.join(task_dir, "exit.json"), ended)
    return 0


def _json_string(text: str) -> str:
    escaped = "".join(c if c >= " " and c not in '"\\' else f"\\u{ord(c):04x}" for c in text)  # UTF-8 is JSON
    return f'"{escaped}"'


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
