"""The owner's agents: a name, a runtime, a working folder, options."""

import os
from collections.abc import Callable, Collection
from pathlib import Path

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import Conflict, Forbidden, Invalid
from desktop.core.principals import check_name
from desktop.store import directory
from desktop.store.db import Store
from desktop.store.rows import AgentRow


class Agents:
    def __init__(self, store: Store, runtimes: Collection[str], wall: Callable[[], float]) -> None:
        self._store, self._runtimes, self._wall = store, runtimes, wall

    def add(self, name: str, runtime: str, folder: str, actor: Actor) -> AgentRow:
        if not actor.is_owner:
            raise Forbidden("only the owner can add agents")
        check_name(name, "agent")
        if runtime not in self._runtimes:
            raise Invalid(f"'{runtime[:40]}' is not a runtime; available: {', '.join(sorted(self._runtimes))}")
        path = Path(folder).expanduser()
        if not path.is_absolute():
            raise Invalid(f"the folder must be an absolute path, not '{folder[:200]}'")
        if not path.is_dir() or not os.access(path, os.R_OK | os.X_OK):
            raise Invalid(f"the folder {path} does not exist or cannot be opened")
        now = self._wall()
        with self._store.transaction() as conn:
            if directory.agent(conn, name) is not None:
                raise Conflict(f"there is an agent '{name}' already")
            directory.add_agent(conn, name, runtime, str(path), {}, now)
            audit.append(conn, now, actor, "add_agent", None, f"added agent {name} ({runtime}) in {path}")
        row = directory.agent(self._store.conn, name)
        assert row is not None
        return row

    def listing(self) -> list[AgentRow]:
        return directory.agents(self._store.conn)
