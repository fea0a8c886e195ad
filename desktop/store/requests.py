"""SQL for requests, their daily ID counters and their timelines."""

import json
import sqlite3
from typing import Any

from desktop.store.rows import RequestRow, TimelineRow

_CHANGEABLE = frozenset(
    {
        "state",
        "updated_at",
        "expires_at",
        "approved_at",
        "queue_seq",
        "started_at",
        "ended_at",
        "conversation_ref",
        "progress",
        "result",
        "exit_code",
        "cancel_requested",
        "denied",
    }
)


def next_number(conn: sqlite3.Connection, owner: str, day: str) -> int:
    """The next number of the day for this owner; call inside the transaction that inserts the request."""
    row = conn.execute(
        "INSERT INTO id_counters (owner, day, last) VALUES (?, ?, 1) "
        "ON CONFLICT (owner, day) DO UPDATE SET last = last + 1 RETURNING last",
        (owner, day),
    ).fetchone()
    return int(row[0])


def next_queue_seq(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT COALESCE(MAX(queue_seq), 0) + 1 FROM requests").fetchone()[0])


def insert(conn: sqlite3.Connection, fields: dict[str, Any]) -> None:
    values = dict(fields, refs=json.dumps(fields.get("refs", [])))
    columns = ", ".join(values)
    conn.execute(f"INSERT INTO requests ({columns}) VALUES ({', '.join('?' * len(values))})", tuple(values.values()))


def update(conn: sqlite3.Connection, request_id: str, expect_state: str, fields: dict[str, Any]) -> None:
    unknown = set(fields) - _CHANGEABLE
    if unknown:
        raise ValueError(f"not changeable: {sorted(unknown)}")
    assignments = ", ".join(f"{name} = ?" for name in fields)
    changed = conn.execute(
        f"UPDATE requests SET {assignments} WHERE id = ? AND state = ?",
        (*fields.values(), request_id, expect_state),
    ).rowcount
    if changed != 1:
        raise RuntimeError(f"{request_id} changed under us (expected state {expect_state})")


def add_timeline(conn: sqlite3.Connection, request_id: str, at: float, kind: str, state: str, text: str) -> None:
    conn.execute(
        "INSERT INTO timeline (request_id, at, kind, state, text) VALUES (?, ?, ?, ?, ?)",
        (request_id, at, kind, state, text),
    )


def get(conn: sqlite3.Connection, request_id: str) -> RequestRow | None:
    row = conn.execute("SELECT * FROM requests WHERE id = ?", (request_id,)).fetchone()
    return RequestRow.of(row) if row else None


def conversation_idle_since(conn: sqlite3.Connection, request_id: str) -> float | None:
    """Since when the conversation `request_id` belongs to has had no turn running or queued: the end of its last
    turn (None while one runs or waits to). A conversation is a request with the continuations that followed it, or
    every prompt of one agent session."""
    row = conn.execute(
        """
        WITH RECURSIVE up(id, parent) AS (
            SELECT id, continuation_of FROM requests WHERE id = :id
            UNION SELECT r.id, r.continuation_of FROM requests r JOIN up ON r.id = up.parent),
        down(id) AS (
            SELECT id FROM up WHERE parent IS NULL
            UNION SELECT r.id FROM requests r JOIN down ON r.continuation_of = down.id)
        SELECT MAX(state IN ('running', 'approved')), MAX(COALESCE(ended_at, started_at, created_at))
        FROM requests WHERE id IN (SELECT id FROM down)
           OR agent IN (SELECT s.id FROM sessions s JOIN requests r ON r.agent = s.id WHERE r.id = :id)
        """,
        {"id": request_id},
    ).fetchone()
    busy, last = row
    return None if busy or last is None else float(last)


def chain_root(conn: sqlite3.Connection, request_id: str) -> str:
    """The first request of the chain of continuations `request_id` is in (itself when it continues none)."""
    row = conn.execute(
        """
        WITH RECURSIVE up(id, parent) AS (
            SELECT id, continuation_of FROM requests WHERE id = ?
            UNION SELECT r.id, r.continuation_of FROM requests r JOIN up ON r.id = up.parent)
        SELECT id FROM up WHERE parent IS NULL""",
        (request_id,),
    ).fetchone()
    return str(row[0]) if row else request_id


def newest_of_conversation(conn: sqlite3.Connection, conversation: str) -> RequestRow | None:
    """The latest request of a conversation: a session's newest prompt (or continuation), or the newest of a chain
    of continuations given its first request."""
    row = conn.execute(
        """
        WITH RECURSIVE down(id) AS (
            SELECT id FROM requests WHERE id = :key
            UNION SELECT r.id FROM requests r JOIN down ON r.continuation_of = down.id)
        SELECT * FROM requests WHERE id IN (SELECT id FROM down) OR agent = :key
        ORDER BY created_at DESC, id DESC LIMIT 1""",
        {"key": conversation},
    ).fetchone()
    return None if row is None else RequestRow.of(row)


def conversation_rows(conn: sqlite3.Connection, first: str) -> list[RequestRow]:
    """Every request of the conversation whose first request is `first`: it and every continuation after it."""
    rows = conn.execute(
        """
        WITH RECURSIVE down(id) AS (
            SELECT id FROM requests WHERE id = ?
            UNION SELECT r.id FROM requests r JOIN down ON r.continuation_of = down.id)
        SELECT * FROM requests WHERE id IN (SELECT id FROM down) ORDER BY created_at""",
        (first,),
    )
    return [RequestRow.of(r) for r in rows]


def continuations_of(conn: sqlite3.Connection, request_id: str) -> list[RequestRow]:
    rows = conn.execute("SELECT * FROM requests WHERE continuation_of = ? ORDER BY created_at", (request_id,))
    return [RequestRow.of(r) for r in rows]


def listing(
    conn: sqlite3.Connection, *, state: str | None = None, requester: str | None = None, limit: int = 500
) -> list[RequestRow]:
    where, params = [], []
    if state:
        where.append("state = ?")
        params.append(state)
    if requester:
        where.append("requester = ?")
        params.append(requester)
    clause = f"WHERE {' AND '.join(where)}" if where else ""
    rows = conn.execute(
        f"SELECT * FROM requests {clause} ORDER BY created_at DESC, id DESC LIMIT ?", (*params, limit)
    ).fetchall()
    return [RequestRow.of(r) for r in rows]


def in_states(conn: sqlite3.Connection, states: tuple[str, ...], requester: str | None = None) -> list[RequestRow]:
    marks = ", ".join("?" * len(states))
    sql, params = f"SELECT * FROM requests WHERE state IN ({marks})", list(states)
    if requester is not None:
        sql += " AND requester = ?"
        params.append(requester)
    return [RequestRow.of(r) for r in conn.execute(sql + " ORDER BY created_at", params)]


def overdue_pending(conn: sqlite3.Connection, now: float) -> list[str]:
    rows = conn.execute(
        "SELECT id FROM requests WHERE state = 'pending' AND expires_at <= ? ORDER BY expires_at", (now,)
    )
    return [r[0] for r in rows]


def next_in_queue(conn: sqlite3.Connection, agent: str) -> RequestRow | None:
    row = conn.execute(
        "SELECT * FROM requests WHERE agent = ? AND state = 'approved' ORDER BY queue_seq LIMIT 1", (agent,)
    ).fetchone()
    return RequestRow.of(row) if row else None


def agents_with_work(conn: sqlite3.Connection) -> list[tuple[str, bool]]:
    """(agent, has a running request) for every agent with approved requests waiting."""
    rows = conn.execute(
        "SELECT agent, EXISTS (SELECT 1 FROM requests r WHERE r.agent = q.agent AND r.state = 'running') "
        "FROM requests q WHERE state = 'approved' GROUP BY agent"
    )
    return [(r[0], bool(r[1])) for r in rows]


def timeline(conn: sqlite3.Connection, request_id: str) -> list[TimelineRow]:
    rows = conn.execute("SELECT * FROM timeline WHERE request_id = ? ORDER BY id", (request_id,))
    return [TimelineRow(**dict(r)) for r in rows]


def last_timeline(conn: sqlite3.Connection, request_id: str) -> TimelineRow | None:
    row = conn.execute("SELECT * FROM timeline WHERE request_id = ? ORDER BY id DESC LIMIT 1", (request_id,)).fetchone()
    return TimelineRow(**dict(row)) if row else None


def first_of_agent(conn: sqlite3.Connection, agent: str, states: tuple[str, ...]) -> str | None:
    """The ID of the agent's first request in one of `states`, if any."""
    row = conn.execute(
        f"SELECT id FROM requests WHERE agent = ? AND state IN ({','.join('?' * len(states))}) ORDER BY id LIMIT 1",
        (agent, *states),
    ).fetchone()
    return str(row[0]) if row else None


def by_call_key(conn: sqlite3.Connection, call_key: str) -> RequestRow | None:
    row = conn.execute("SELECT * FROM requests WHERE call_key = ?", (call_key,)).fetchone()
    return RequestRow.of(row) if row else None
