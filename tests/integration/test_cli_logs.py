"""`cox logs`: a request's console lines as the daemon renders them (redacted, repeats folded, escapes gone; colours
only on a terminal that asked), following with -f; `--raw` the bytes it printed, redacted."""

import os
import pty
import select
import subprocess
import time
from pathlib import Path

from desktop.cli.logs import shown
from tests.daemon_process import COX, DaemonProcess

# the token is put together by the shell, so only the request's output holds it whole (not its prompt)
SECRET = "ghp_aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5"
PRINT_SECRET = 'a=ghp_aB3dE5gH7jK9mN1pQ3sT5; echo "token ${a}vW7yZ9bC1dF3hJ5 here"'
NOISY = (
    "printf 'plain \\033[31mred\\033[0m \\033]0;evil title\\007done\\n'; "
    "printf 'c1 \\302\\233 here\\n'; "
    "printf 'loading 10%%\\rloading 100%%\\n'; "
    "for i in 1 2 3; do echo same; done; " + PRINT_SECRET
)


def test_logs_prints_console_lines_redacted_folded_and_without_escapes(daemon: DaemonProcess) -> None:
    request = daemon.request(NOISY)
    daemon.wait_state(request["id"], "done")
    printed = daemon.cox("logs", request["id"], check=True).stdout
    assert printed == ("plain red done\nc1 ⟨U+009B⟩ here\nloading 100%\nsame  ×3\ntoken [redacted] here\n")
    assert SECRET not in printed and "\x1b" not in printed and "evil title" not in printed


def test_logs_raw_prints_the_bytes_redacted(daemon: DaemonProcess) -> None:
    request = daemon.request(NOISY)
    daemon.wait_state(request["id"], "done")
    env = {k: v for k, v in os.environ.items() if k != "COX_TOKEN"}
    done = subprocess.run(
        [*COX, "--home", str(daemon.home), "logs", "--raw", request["id"]], capture_output=True, env=env, timeout=60
    )  # bytes: a carriage return stays one
    assert done.returncode == 0, done.stderr
    printed = done.stdout.decode()
    assert printed == daemon.get(f"/api/requests/{request['id']}/output").json()["text"]
    assert "\x1b[31mred\x1b[0m" in printed and "\x1b]0;evil title\x07" in printed
    assert "loading 10%\rloading 100%\n" in printed and "same\nsame\nsame\n" in printed
    assert "token [redacted] here\n" in printed and SECRET not in printed


def _follow(daemon: DaemonProcess, gate: Path, *options: str) -> tuple[str, str]:
    """What `cox logs -f` printed before the request went on, and after it ended."""
    script = f"echo first; while [ ! -e {gate} ]; do sleep 0.05; done; {PRINT_SECRET}; printf tail"
    request = daemon.request(script)
    env = {k: v for k, v in os.environ.items() if k != "COX_TOKEN"}
    follower = subprocess.Popen(
        [*COX, "--home", str(daemon.home), "logs", "-f", *options, request["id"]],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert follower.stdout is not None
        before = follower.stdout.readline().decode()  # printed while the request still runs
        assert daemon.show(request["id"])["state"] == "running"
        gate.touch()
        after, errors = follower.communicate(timeout=60)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    assert follower.returncode == 0, errors
    return before, after.decode()


def test_logs_follow_prints_lines_as_they_come_until_the_request_ends(daemon: DaemonProcess, tmp_path: Path) -> None:
    before, after = _follow(daemon, tmp_path / "go")
    assert before == "first\n"
    assert after == "token [redacted] here\ntail\n", "the unfinished last line too, once the request ended"
    assert SECRET not in before + after


def test_logs_raw_follow_prints_the_bytes_until_the_request_ends(daemon: DaemonProcess, tmp_path: Path) -> None:
    before, after = _follow(daemon, tmp_path / "go", "--raw")
    assert before == "first\n"
    assert after == "token [redacted] here\ntail"
    assert SECRET not in before + after


def test_colours_only_on_a_terminal_that_asked_for_them(daemon: DaemonProcess) -> None:
    request = daemon.request("printf 'plain \\033[31mred\\033[0m\\n'")
    daemon.wait_state(request["id"], "done")
    assert daemon.cox("logs", "--colour", request["id"], check=True).stdout == "plain red\n"  # a pipe: no colours
    assert _on_a_terminal(daemon, "logs", "--colour", request["id"]) == "plain \x1b[31mred\x1b[0m\x1b[0m\r\n"
    assert _on_a_terminal(daemon, "logs", request["id"]) == "plain red\r\n"


def _on_a_terminal(daemon: DaemonProcess, *args: str) -> str:
    main, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k != "COX_TOKEN"}
    cox = subprocess.Popen([*COX, "--home", str(daemon.home), *args], stdout=terminal, stderr=subprocess.PIPE, env=env)
    os.close(terminal)
    read, deadline = b"", time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if select.select([main], [], [], 1)[0]:
                try:
                    chunk = os.read(main, 4096)
                except OSError:  # the terminal's other end closed: cox has ended
                    break
                if not chunk:
                    break
                read += chunk
        assert cox.wait(timeout=60) == 0
    finally:
        os.close(main)
        if cox.poll() is None:
            cox.kill()
            cox.wait()
    return read.decode()


def test_a_console_line_shows_nothing_a_terminal_would_act_on() -> None:
    """What the daemon lets through (colour codes, a C1 control) is shown, never acted on."""
    assert shown("a \x1b[1mbold\x1b[0m \x1b]2;title\x07 \x9b2J", colours=False) == "a bold ␛]2;title␇ ⟨U+009B⟩2J"
    assert shown("a \x1b[1mbold\x1b[0m \x1b[2J", colours=True) == "a \x1b[1mbold\x1b[0m ␛[2J\x1b[0m"
    assert shown("no codes", colours=True) == "no codes"
