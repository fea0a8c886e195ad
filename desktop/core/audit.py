"""The audit log: append-only, each record's hash covering its fields and the hash of the record before it."""

import hashlib
import json
import sqlite3
from collections.abc import Iterable

from desktop.core.actors import Actor
from desktop.store import audit as sql
from desktop.store.rows import AuditRow

GENESIS = "0" * 64


def chain_hash(
    prev_hash: str, seq: int, at: float, actor: str, action: str, request_id: str | None, reason: str
) -> str:
    body = json.dumps([prev_hash, seq, repr(at), actor, action, request_id, reason], ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


def append(conn: sqlite3.Connection, at: float, actor: Actor, action: str, request_id: str | None, reason: str) -> None:
    """Add a record inside the caller's transaction."""
    seq, prev = sql.last(conn) or (0, GENESIS)
    who = f"{actor.kind}:{actor.name}"
    digest = chain_hash(prev, seq + 1, at, who, action, request_id, reason)
    sql.insert(conn, AuditRow(seq + 1, at, who, action, request_id, reason, prev, digest))


def first_broken(records: Iterable[AuditRow]) -> tuple[int, str] | None:
    """(seq, what is wrong) for the first record that breaks the chain, or None if it is intact."""
    prev, expected_seq = GENESIS, 1
    for r in records:
        if r.seq != expected_seq:
            return r.seq, f"record {expected_seq} is missing"
        if r.prev_hash != prev:
            return r.seq, "its link to the record before it does not match"
        if chain_hash(r.prev_hash, r.seq, r.at, r.actor, r.action, r.request_id, r.reason) != r.hash:
            return r.seq, "its contents do not match its hash (changed after it was written)"
        prev, expected_seq = r.hash, expected_seq + 1
    return None
