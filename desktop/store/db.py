"""The SQLite file: WAL, full sync, a schema version, and a backup before every migration."""

import contextlib
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from desktop.store.schema import MIGRATIONS


class Store:
    """One connection, used from the daemon's event loop thread only; every write runs in `transaction()`."""

    def __init__(self, path: Path, backups: Path, migrations: list[str] = MIGRATIONS) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=FULL")  # an acknowledged request survives a power cut too
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=5000")
        self._migrate(migrations, backups)

    @property
    def version(self) -> int:
        return int(self.conn.execute("PRAGMA user_version").fetchone()[0])

    def _migrate(self, migrations: list[str], backups: Path) -> None:
        current = self.version
        if current > len(migrations):
            raise RuntimeError(
                f"{self.path} has schema version {current}, newer than this Coxswain knows ({len(migrations)}); "
                "install a newer Coxswain"
            )
        if 0 < current < len(migrations):  # one copy of the database as this start found it (a new one has nothing)
            self.backup(backups / f"coxswain-v{current}-{time.strftime('%Y%m%dT%H%M%S')}.db")
        for version in range(current + 1, len(migrations) + 1):
            with self.transaction() as conn:
                for statement in _statements(migrations[version - 1]):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={version}")

    def backup(self, target: Path) -> Path:
        target.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.closing(sqlite3.connect(target)) as copy:
            self.conn.backup(copy)
        return target

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.conn
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()


def _statements(script: str) -> Iterator[str]:
    """Split a migration into statements, keeping trigger bodies (which contain `;`) whole."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer.strip()
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]}")
