"""The owner's agents: a name, a runtime, a working folder, options."""

import os
import re
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import Conflict, Forbidden, Invalid, NotFound
from desktop.core.principals import check_name
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow

ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
SESSION_NAME = re.compile(r"S[0-9]+")


class Agents:
    def __init__(
        self,
        store: Store,
        runtimes: Mapping[str, tuple[str, ...]],
        wall: Callable[[], float],
        efforts: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        """`runtimes`: each runtime's name and the permission modes it accepts; `efforts`: the effort levels of
        those that have them."""
        self._store, self._runtimes, self._wall = store, runtimes, wall
        self._efforts = efforts or {}

    def add(
        self, name: str, runtime: str, folder: str, actor: Actor, options: Mapping[str, Any] | None = None
    ) -> AgentRow:
        if not actor.is_owner:
            raise Forbidden("only the owner can add agents")
        check_name(name, "agent")
        if SESSION_NAME.fullmatch(name):
            raise Invalid(f"'{name}' is kept for sessions agents start (S1, S2, …); choose another name")
        path, checked = self.check(runtime, folder, options)
        now = self._wall()
        with self._store.transaction() as conn:
            if directory.agent(conn, name) is not None:
                raise Conflict(f"there is an agent '{name}' already")
            directory.add_agent(conn, name, runtime, str(path), checked, now)
            audit.append(conn, now, actor, "add_agent", None, f"added agent {name} ({runtime}) in {path}")
        row = directory.agent(self._store.conn, name)
        assert row is not None
        return row

    def change(
        self, name: str, runtime: str, folder: str, actor: Actor, options: Mapping[str, Any] | None = None
    ) -> AgentRow:
        """A new runtime, folder or options; what is queued runs with them, what runs now is left alone."""
        if not actor.is_owner:
            raise Forbidden("only the owner can change agents")
        path, checked = self.check(runtime, folder, options)
        now = self._wall()
        with self._store.transaction() as conn:
            self._existing(conn, name)
            running = requests_sql.first_of_agent(conn, name, ("running",))
            if running:
                raise Conflict(f"{running} is running on {name}: change it once that has ended")
            directory.change_agent(conn, name, runtime, str(path), checked)
            audit.append(conn, now, actor, "change_agent", None, f"agent {name} is now {runtime} in {path}")
        return self._existing(self._store.conn, name)

    def remove(self, name: str, actor: Actor) -> None:
        """Gone from the list and from new requests; its past requests keep its name."""
        if not actor.is_owner:
            raise Forbidden("only the owner can remove agents")
        now = self._wall()
        with self._store.transaction() as conn:
            self._existing(conn, name)
            busy = requests_sql.first_of_agent(conn, name, ("pending", "approved", "running"))
            if busy:
                raise Conflict(f"{busy} is still waiting or running on {name}: cancel it or let it end first")
            directory.remove_agent(conn, name, now)
            audit.append(conn, now, actor, "remove_agent", None, f"removed agent {name}")

    @staticmethod
    def _existing(conn: sqlite3.Connection, name: str) -> AgentRow:
        row = directory.agent(conn, name)
        if row is None:
            raise NotFound(f"there is no agent '{name[:40]}'")
        return row

    def check(self, runtime: str, folder: str, options: Mapping[str, Any] | None) -> tuple[Path, dict[str, Any]]:
        """The folder as a path and the options as kept, or Invalid saying what is wrong."""
        if runtime not in self._runtimes:
            raise Invalid(f"'{runtime[:40]}' is not a runtime; available: {', '.join(sorted(self._runtimes))}")
        path = Path(folder).expanduser()
        if not path.is_absolute():
            raise Invalid(f"the folder must be an absolute path, not '{folder[:200]}'")
        if not path.is_dir() or not os.access(path, os.R_OK | os.X_OK):
            raise Invalid(f"the folder {path} does not exist or cannot be opened")
        return path, self._options(runtime, dict(options or {}))

    def _options(self, runtime: str, options: dict[str, Any]) -> dict[str, Any]:
        modes = self._runtimes[runtime]
        mode = options.get("permission_mode")
        if mode and mode not in modes:
            allowed = ", ".join(modes) or "none (this runtime has no permission modes)"
            raise Invalid(f"'{mode}' is not a permission mode of {runtime}; use one of: {allowed}")
        effort = options.get("effort")
        if effort and effort not in self._efforts.get(runtime, ()):
            allowed = ", ".join(self._efforts.get(runtime, ())) or f"none ({runtime} has no effort setting)"
            raise Invalid(f"'{str(effort)[:20]}' is not an effort level of {runtime}; use one of: {allowed}")
        if options.get("sessions") not in (None, "", "once", "ask"):
            raise Invalid(
                "sessions: 'once' (the owner approves a conversation's first session) or 'ask' (every "
                "session action waits for the owner)"
            )
        for key in options.get("env") or {}:
            if not ENV_NAME.fullmatch(key):
                raise Invalid(f"'{key[:40]}' is not an environment variable name")
            if SECRET_NAME.search(key):
                raise Invalid(
                    f"{key} looks like a secret; keep it in the keyring (cox secret set) instead of the agent's options"
                )
        return {key: value for key, value in options.items() if value not in (None, "", [], {})}

    def runtimes(self) -> dict[str, list[str]]:
        """Each runtime an agent can have, with its permission modes."""
        return {name: list(modes) for name, modes in sorted(self._runtimes.items())}

    def listing(self) -> list[AgentRow]:
        return directory.agents(self._store.conn)
