"""The layers of ARCHITECTURE.md: core, console and store import nothing above them and nothing from Qt."""

import ast
import sys
from pathlib import Path

import desktop

PACKAGE = Path(desktop.__file__).parent
FORBIDDEN = {
    "core": ("PySide6", "qasync", "fastapi", "starlette", "uvicorn", "httpx", "desktop.api", "desktop.gui",
             "desktop.daemon", "desktop.runtimes", "desktop.tasks", "desktop.platform"),
    "console": ("PySide6", "qasync", "desktop."),
    "store": ("PySide6", "qasync", "fastapi", "desktop.core", "desktop.api", "desktop.gui", "desktop.daemon"),
    "gui": ("desktop.store",),  # the tray app is a client of the daemon: it never reaches into the store
}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_lower_layers_import_nothing_above_them() -> None:
    checked = 0
    for layer, forbidden in FORBIDDEN.items():
        for path in (PACKAGE / layer).rglob("*.py"):
            checked += 1
            bad = [n for n in imports(path) if n.startswith(forbidden) and not n.startswith(f"desktop.{layer}")]
            assert not bad, f"{path.relative_to(PACKAGE)} imports {bad}"
    assert checked >= 15


def test_the_runner_and_the_mcp_relay_use_only_the_standard_library() -> None:
    for path in (PACKAGE / "runtimes" / "runner.py", PACKAGE / "mcp" / "bridge.py"):
        outside = [n for n in imports(path) if n.split(".")[0] not in sys.stdlib_module_names]
        assert not outside, f"{path.name} imports {outside}"
