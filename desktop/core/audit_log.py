"""The audit log as the owner reads it (its newest records, whether its chain holds) and the records the owner's
own changes add."""

from collections.abc import Callable
from dataclasses import dataclass

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.store import audit as sql
from desktop.store.db import Store
from desktop.store.rows import AuditRow


@dataclass(frozen=True)
class ChainCheck:
    records: int
    broken: tuple[int, str] | None  # (seq, what is wrong) of the first record that breaks the chain


class AuditLog:
    def __init__(self, store: Store, wall: Callable[[], float]) -> None:
        self._store, self._wall = store, wall

    def records(self, request_id: str | None = None, limit: int | None = None) -> list[AuditRow]:
        """The newest `limit` records (of one request, if given), oldest first."""
        return sql.records(self._store.conn, request_id, limit)

    def check(self) -> ChainCheck:
        records = sql.records(self._store.conn)
        return ChainCheck(len(records), audit.first_broken(records))

    def record(self, who: Actor, action: str, reason: str) -> None:
        """One record, in a transaction of its own."""
        with self._store.transaction() as conn:
            audit.append(conn, self._wall(), who, action, None, reason)
