"""Live test counts from the real output of real test runners (pytest from the Python packages, node:test from
Node, jest, vitest and Playwright from .cache/test-runners, installed by .ci/test-deps), each run through a pipe
without colours, through a pipe with colours forced on, and on a pseudo-terminal; the first failure's raw line is
where its report begins, the line the console's "First failure" finds with `failure_heading`."""

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from desktop.console.testruns import failure_heading

FIXTURES = Path(__file__).parents[1] / "fixtures" / "testruns"
RUNNERS = Path(__file__).resolve().parents[2] / ".cache" / "test-runners" / "node_modules"
COX = [sys.executable, "-m", "desktop.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
PYTEST = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"]
PYTEST_COLOURS = {"plain": ["--color=no"], "colour": ["--color=yes"], "pty": []}
COMMANDS = {
    "pytest": (PYTEST, PYTEST_COLOURS),
    "jest": ([str(RUNNERS / ".bin" / "jest"), "--ci"], {}),
    "vitest": ([str(RUNNERS / ".bin" / "vitest"), "run"], {}),
    "playwright": ([str(RUNNERS / ".bin" / "playwright"), "test"], {}),
    # node:test writes TAP into a pipe; its coloured reporter is spec
    "node:test": (["node", "--test"], {"colour": ["--test-reporter=spec"]}),
    # a monorepo of two vitest packages (3 passed, 1 failed, 1 skipped; 2 passed), each line prefixed by its package
    "turbo": ([str(RUNNERS / ".bin" / "turbo"), "run", "test", "--continue"], {}),
    # on a terminal pnpm -r draws a dashboard that hides its packages' output; append-only (its way in a pipe) shows it
    "pnpm -r": ([str(RUNNERS / ".bin" / "pnpm"), "--reporter=append-only", "-r", "--no-bail", "test"], {}),
    "turbo through pnpm": ([str(RUNNERS / ".bin" / "pnpm"), "--reporter=append-only", "test"], {}),
}
FOLDERS = {"node:test": "nodetest", "pnpm -r": "turbo", "turbo through pnpm": "turbo"}
EXPECTED = {name: ("vitest", 5, 1, 1) for name in ("turbo", "pnpm -r", "turbo through pnpm")}


def run_on_a_pty(argv: list[str], cwd: Path, env: dict[str, str]) -> bytes:
    main, child = pty.openpty()
    process = subprocess.Popen(argv, cwd=cwd, env=env, stdin=child, stdout=child, stderr=child, close_fds=True)
    os.close(child)
    output = bytearray()
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child side is closed
            break
        if not data:
            break
        output += data
    os.close(main)
    process.wait(timeout=120)
    return bytes(output)


def run_in(
    folder: str, argv: list[str], mode: str, tmp_path: Path, env: dict[str, str] | None = None, runners: Path = RUNNERS
) -> bytes:
    """`argv` in a copy of the fixture `folder` ("plain": a pipe and NO_COLOR, "colour": a pipe and FORCE_COLOR,
    "pty": a pseudo-terminal), with the `runners` (a node_modules) as its own, its output and error output as one."""
    assert Path(argv[0]).exists() or shutil.which(argv[0]), f"{argv[0]} is missing: run .ci/test-deps"
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / folder, project)
    packages = [p.parent for p in project.glob("packages/*/package.json")] or [project]
    for package in packages:
        (package / "node_modules").symlink_to(runners)
    environment = {
        "PATH": f"{runners / '.bin'}:{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "TERM": "xterm-256color",
        "COLUMNS": "120",
        "LANG": "C.UTF-8",
        "PYTHONPATH": "",
        "TURBO_TELEMETRY_DISABLED": "1",
        "DO_NOT_TRACK": "1",
        **(env or {}),
    }
    environment.update({"plain": {"NO_COLOR": "1"}, "colour": {"FORCE_COLOR": "1"}, "pty": {}}[mode])
    if mode == "pty":
        return run_on_a_pty(argv, project, environment)
    return subprocess.run(
        argv, cwd=project, env=environment, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120
    ).stdout


def counted(raw: bytes, mode: str) -> dict[str, Any]:
    """What `cox console tests` reads in the output, after checking a coloured run was in colour."""
    if mode != "plain":
        assert b"\x1b[" in raw, "the run was meant to be in colour"
    summary: dict[str, Any] = json.loads(
        subprocess.run([*COX, "console", "tests"], input=raw, capture_output=True, check=True).stdout
    )
    return summary


def report_line(raw: bytes, summary: dict[str, Any]) -> str:
    """The first failure's raw line as a person reads it, checked to be the one the console's "First failure"
    finds (the first line that `failure_heading` matches)."""
    failure = summary["first_failure"]
    lines = [ANSI.sub("", line).rstrip("\r").split("\r")[-1] for line in raw.decode(errors="replace").split("\n")]
    line: str = lines[failure["raw_line"] - 1]
    heading = failure_heading(failure["name"])
    assert heading.search(line), (failure, line)
    assert next(found for found in lines if heading.search(found)) == line, "an earlier line looks like its report"
    return line


@pytest.mark.parametrize("mode", ["plain", "colour", "pty"])
@pytest.mark.parametrize("runner", sorted(COMMANDS))
def test_counts_and_the_first_failure(runner: str, mode: str, tmp_path: Path) -> None:
    argv, flags = COMMANDS[runner]
    raw = run_in(FOLDERS.get(runner, runner), argv + flags.get(mode, []), mode, tmp_path)
    summary = counted(raw, mode)
    expected = EXPECTED.get(runner, (runner, 3, 1, 1))
    assert (summary["runner"], summary["passed"], summary["failed"], summary["skipped"]) == expected, raw.decode()
    assert re.search("fails[ _]on[ _]purpose", summary["first_failure"]["name"])
    assert re.search("fails[ _]on[ _]purpose", report_line(raw, summary))
