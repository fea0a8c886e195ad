"""How Coxswain starts its own helper processes — the detached runner and the MCP relay — from source (this Python
with `-S -I` and the module's file: the standard library only, up in tens of milliseconds) or from the frozen bundle
(the bundle's own program with a flag; no Python needed on the machine). `desktop/frozen.py` reads the flags."""

import sys
from pathlib import Path

RUNNER_FLAG = "--coxswain-runner"
RELAY_FLAG = "--coxswain-mcp-relay"
_HERE = Path(__file__).resolve().parent


def frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def runner_command() -> list[str]:
    """The runner's argv, to be followed by the task folder and the command."""
    if frozen():
        return [sys.executable, RUNNER_FLAG]
    return [sys.executable, "-S", "-I", str(_HERE / "tasks" / "runner.py")]


def relay_command() -> list[str]:
    """The MCP relay's argv, to be followed by the daemon.json path and the token file."""
    if frozen():
        return [sys.executable, RELAY_FLAG]
    return [sys.executable, "-S", "-I", str(_HERE / "mcp" / "relay.py")]
