"""Live test counts from the real output of real test runners (pytest from the Python packages, node:test from
Node, jest, vitest and Playwright from .cache/test-runners, installed by .ci/test-deps), each run through a pipe
without colours, through a pipe with colours forced on, and on a pseudo-terminal."""

import json
import os
import pty
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "testruns"
RUNNERS = Path(__file__).resolve().parent.parent / ".cache" / "test-runners" / "node_modules"
COX = [sys.executable, "-m", "desktop.cli"]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
COMMANDS = {
    "pytest": ([sys.executable, "-m", "pytest", "-p", "no:cacheprovider"], {"plain": ["--color=no"],
                                                                          "colour": ["--color=yes"], "pty": []}),
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


def run(runner: str, mode: str, tmp_path: Path) -> bytes:
    argv, flags = COMMANDS[runner]
    assert Path(argv[0]).exists() or shutil.which(argv[0]), f"{argv[0]} is missing: run .ci/test-deps"
    project = tmp_path / "project"
    shutil.copytree(FIXTURES / FOLDERS.get(runner, runner), project)
    packages = [p.parent for p in project.glob("packages/*/package.json")] or [project]
    for package in packages:
        (package / "node_modules").symlink_to(RUNNERS)
    env = {"PATH": f"{RUNNERS / '.bin'}:{os.environ['PATH']}", "HOME": str(tmp_path), "TERM": "xterm-256color",
           "COLUMNS": "120", "LANG": "C.UTF-8", "PYTHONPATH": "", "TURBO_TELEMETRY_DISABLED": "1", "DO_NOT_TRACK": "1"}
    env.update({"plain": {"NO_COLOR": "1"}, "colour": {"FORCE_COLOR": "1"}, "pty": {}}[mode])
    argv = argv + flags.get(mode, [])
    if mode == "pty":
        return run_on_a_pty(argv, project, env)
    return subprocess.run(argv, cwd=project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=120).stdout


@pytest.mark.parametrize("mode", ["plain", "colour", "pty"])
@pytest.mark.parametrize("runner", sorted(COMMANDS))
def test_counts_and_the_first_failure(runner: str, mode: str, tmp_path: Path) -> None:
    raw = run(runner, mode, tmp_path)
    if mode != "plain":
        assert b"\x1b[" in raw, "the run was meant to be in colour"
    counted = subprocess.run([*COX, "console", "tests"], input=raw, capture_output=True, check=True)
    summary = json.loads(counted.stdout)
    shown = raw.decode(errors="replace")
    expected = EXPECTED.get(runner, (runner, 3, 1, 1))
    assert (summary["runner"], summary["passed"], summary["failed"], summary["skipped"]) == expected, shown
    failure = summary["first_failure"]
    assert re.search("fails[ _]on[ _]purpose", failure["name"])
    failing_line = ANSI.sub("", shown.split("\n")[failure["raw_line"] - 1])
    assert re.search("fails[ _]on[ _]purpose|F", failing_line), failing_line
