"""An in-process ledger over a real SQLite file, with a wall clock the test moves."""

import time
from pathlib import Path

from desktop.core.actors import Actor
from desktop.core.ledger import Ledger
from desktop.store import directory
from desktop.store.db import Store

OWNER = Actor("owner", "owner")
SARAH = Actor("sarah", "person")


class MovableClock:
    def __init__(self, start: float = 1_788_652_800.0) -> None:  # 2026-09-06 00:00:00 UTC
        self.now = start
        self.monotonic = 1000.0

    def wall(self) -> float:
        return self.now

    def mono(self) -> float:
        return self.monotonic

    def advance(self, seconds: float, *, sleeping: bool = False) -> None:
        """Time passes; while `sleeping`, the monotonic clock stands still (as it does in a real suspend)."""
        self.now += seconds
        if not sleeping:
            self.monotonic += seconds


def make_ledger(folder: Path, clock: MovableClock) -> tuple[Store, Ledger]:
    store = Store(folder / "coxswain.db", folder / "backups")
    with store.transaction() as conn:
        directory.add_agent(conn, "api", "shell", str(folder), {}, time.time())
        directory.add_principal(conn, "owner", "owner", "h-owner", time.time())
        directory.add_principal(conn, "sarah", "person", "h-sarah", time.time())
    return store, Ledger(store, clock.wall)
