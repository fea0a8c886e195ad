"""The layers of desktop/README.md: every package and top-level module under desktop/ names what of the others it may
import, read with `ast` (imports inside functions and `importlib.import_module("…")` included). Core, console and store
import nothing from Qt or from the layers above; the API reaches no SQL; runtimes and platform do not reach up. A
feature folder (agent sessions, the room) holds modules of several layers: each is checked as the layer it sits in,
and is reached only by what may reach that layer."""

import ast
import sys
from pathlib import Path

import pytest

import desktop

PACKAGE = Path(desktop.__file__).parent
QT = ("PySide6", "shiboken6", "qasync")
WEB = ("fastapi", "starlette", "sse_starlette", "uvicorn", "httpx", "mcp")

# What each part of desktop/ may import of the other parts (its own modules it always may). An entry is a part
# (`core`) or one module of it (`core.visible`).
MAY_IMPORT: dict[str, set[str]] = {
    "console": set(),
    "store": set(),
    "resources": set(),
    "reentry": set(),
    # the API's answers, plain pydantic: the server builds them, the client reads them
    "answers": set(),
    "core": {"store"},
    # the plain records a turn starts from; nothing of core, tasks, api or gui
    "runtimes": {"store.rows"},
    # stated exceptions: notification text is shown as core.visible shows it, the owner's token is made as every
    # token is (core.principals.new_token)
    "platform": {"resources", "core.visible", "core.principals"},
    "tasks": {"answers", "core", "store", "console", "runtimes", "reentry"},
    "mcp": {"core", "console", "tasks"},
    "connectors": {"core", "store", "console", "platform"},
    # the API reaches the store's data through core and tasks; of the store only its plain records
    "api": {"answers", "core", "console", "tasks", "mcp", "connectors", "platform", "resources", "store.rows"},
    "room": {"api", "core", "store"},
    # the typed HTTP client of the daemon's API (the CLI's and the tray's): it finds the daemon and reads its answers
    "client": {"answers", "platform"},
    "daemon": {"api", "connectors", "console", "core", "platform", "reentry", "room", "runtimes", "store", "tasks"},
    "cli": {"client", "console", "core", "daemon", "platform"},
    # the tray app hosts the daemon in its own process; everything else it reaches over the daemon's HTTP API
    "gui": {"client", "core", "console", "platform", "resources", "runtimes", "daemon"},
    "frozen": {"reentry", "tasks.runner", "mcp.relay", "cli", "gui.app"},
}
# Feature folders: where each of their modules sits. A module not named here is checked by the folder's own rule in
# MAY_IMPORT (the room's listener and certificate).
FEATURES: dict[str, dict[str, str]] = {
    "sessions": {
        "sql": "store",
        "views": "core",
        "rules": "core",
        "watching": "tasks",
        "tools": "mcp",
        "routes": "api",
    },
    "room": {"sql": "store", "signins": "core", "routes": "api"},
}
# Third-party packages a part may not import.
LOWER = ("answers", "console", "store", "core", "runtimes", "platform", "tasks")
MAY_NOT = {part: (() if part == "gui" else QT) + (WEB if part in LOWER else ()) for part in MAY_IMPORT}


def parts() -> set[str]:
    """The packages and top-level modules of desktop/."""
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__" and any(p.rglob("*.py"))}
    return folders | {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}


def files(part: str) -> list[Path]:
    """The files `part`'s rule checks: its own (of a feature folder, those FEATURES places in no layer), and the
    modules of feature folders that sit in it."""
    folder = PACKAGE / part
    own = sorted(folder.rglob("*.py")) if folder.is_dir() else [PACKAGE / f"{part}.py"]
    own = [path for path in own if path.stem not in FEATURES.get(part, {})]
    placed = [
        PACKAGE / f / f"{m}.py" for f, modules in FEATURES.items() for m, layer in modules.items() if layer == part
    ]
    return sorted(own + placed)


def layer_of(name: str) -> str | None:
    """The layer a module of a feature folder sits in (`desktop.sessions.sql.add` → store), or None for any other."""
    feature, _, rest = name.removeprefix("desktop.").partition(".")
    if not name.startswith("desktop.") or feature not in FEATURES or not rest:
        return None
    return FEATURES[feature].get(rest.split(".")[0], feature if feature in MAY_IMPORT else None)


def imports(path: Path, source: str | None = None) -> set[str]:
    """Every module name the file imports, anywhere in it: `from a.b import c` counts as `a.b.c`, relative imports are
    made absolute, and so is a constant name given to `importlib.import_module` or `__import__`."""
    package = path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text() if source is None else source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *([base] if base else [])])
            names |= {f"{base}.{alias.name}" for alias in node.names}
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and _dynamic_import(node.func)
        ):
            names.add(node.args[0].value)
    return names


def _dynamic_import(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("import_module", "__import__")


def forbidden(part: str, path: Path, source: str | None = None) -> list[str]:
    """What of `path`'s imports the layer `part` may not make (a feature folder's module: the layer it sits in)."""
    entries = (part, *MAY_IMPORT[part])
    allowed = [f"desktop.{entry}" for entry in entries]

    def outside(name: str) -> bool:
        if (layer := layer_of(name)) is not None:
            return layer not in entries
        if name.removeprefix("desktop.") in FEATURES:  # the folder itself (its __init__ only says what it holds)
            return False
        return name.startswith("desktop.") and not any(name == a or name.startswith(a + ".") for a in allowed)

    return [name for name in sorted(imports(path, source)) if name.split(".")[0] in MAY_NOT[part] or outside(name)]


def test_every_part_of_the_package_has_its_rule() -> None:
    assert parts() == set(MAY_IMPORT) | set(FEATURES), (
        "give each package under desktop/ its line in MAY_IMPORT, or FEATURES for a feature folder (and the README)"
    )
    for feature, modules in FEATURES.items():
        there = {p.stem for p in (PACKAGE / feature).glob("*.py") if p.name != "__init__.py"}
        unplaced = there - set(modules) if feature not in MAY_IMPORT else set()
        assert not unplaced, f"say which layer desktop/{feature}/{sorted(unplaced)} sits in (FEATURES)"
        assert set(modules) <= there, f"desktop/{feature} has no {sorted(set(modules) - there)}: drop it from FEATURES"
        assert set(modules.values()) <= set(MAY_IMPORT), f"{feature}: a layer that has no rule"


@pytest.mark.parametrize("part", sorted(MAY_IMPORT))
def test_a_part_imports_only_what_its_layer_allows(part: str) -> None:
    found = files(part)
    assert found and all(path.exists() for path in found), f"desktop/{part} is gone: drop its rule"
    bad = {str(path.relative_to(PACKAGE.parent)): names for path in found if (names := forbidden(part, path))}
    assert not bad, (
        f"{part} may import {sorted(MAY_IMPORT[part]) or 'nothing'} of desktop and none of {MAY_NOT[part]}, but: {bad}"
    )


def test_the_reader_sees_every_kind_of_import() -> None:
    source = (
        "import desktop.gui.app\nfrom desktop import daemon\nfrom .store import rows\n"
        "def late():\n    from PySide6.QtCore import QObject\n    importlib.import_module('desktop.api.app')\n"
    )
    path = PACKAGE / "core" / "example.py"
    assert imports(path, source) == {
        "desktop.gui.app",
        "desktop.daemon",
        "desktop.core.store.rows",
        "PySide6.QtCore.QObject",
        "desktop.api.app",
    }
    assert forbidden("core", path, source) == [
        "PySide6.QtCore.QObject",
        "desktop.api.app",
        "desktop.daemon",
        "desktop.gui.app",
    ]


def test_a_feature_folders_module_is_reached_as_its_layer_is() -> None:
    source = (
        "from desktop.sessions import sql, views, routes\nfrom desktop.sessions.watching import Watching\n"
        "import desktop.sessions\n"
    )
    path = PACKAGE / "core" / "example.py"
    assert forbidden("core", path, source) == ["desktop.sessions.routes", "desktop.sessions.watching.Watching"]
    assert forbidden("api", PACKAGE / "api" / "example.py", source) == ["desktop.sessions.sql"], "the API has no SQL"
    assert PACKAGE / "sessions" / "sql.py" in files("store") and PACKAGE / "sessions" / "sql.py" not in files("core")
    assert forbidden("store", PACKAGE / "sessions" / "sql.py", "from desktop.sessions import views") == [
        "desktop.sessions.views"
    ]


def test_the_runner_and_the_mcp_relay_use_only_the_standard_library() -> None:
    for path in (PACKAGE / "tasks" / "runner.py", PACKAGE / "mcp" / "relay.py"):
        outside = [n for n in imports(path) if n.split(".")[0] not in sys.stdlib_module_names]
        assert not outside, f"{path.name} imports {outside}"


def test_a_feature_folders_init_imports_nothing_and_its_modules_sit_in_it() -> None:
    """Importing any module of a feature folder runs its __init__, so that imports nothing (it would reach every layer
    the folder spans, unchecked); and what FEATURES does not place is not hidden in a subfolder."""
    for feature in FEATURES:
        folder = PACKAGE / feature
        assert imports(folder / "__init__.py") == set(), f"desktop/{feature}/__init__.py imports"
        if feature not in MAY_IMPORT:
            nested = sorted(str(p.relative_to(folder)) for p in folder.rglob("*.py") if p.parent != folder)
            assert nested == [], f"desktop/{feature}: {nested} sit in no layer"
