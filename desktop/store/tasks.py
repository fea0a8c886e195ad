"""SQL for tasks: a request's agent process, and the commands and monitors left running in the background."""

import sqlite3

from desktop.store.rows import TaskRow


def add(conn: sqlite3.Connection, fields: dict[str, object]) -> None:
    names = ", ".join(fields)
    conn.execute(f"INSERT INTO tasks ({names}) VALUES ({', '.join('?' * len(fields))})", tuple(fields.values()))


def finish(conn: sqlite3.Connection, task_id: str, at: float, exit_code: int | None, outcome: str) -> None:
    conn.execute(
        "UPDATE tasks SET ended_at = ?, exit_code = ?, outcome = ? WHERE id = ? AND ended_at IS NULL",
        (at, exit_code, outcome, task_id),
    )


def turns(conn: sqlite3.Connection, request_id: str) -> list[TaskRow]:
    """The agent processes of a request's turns, first attempt first (not the background tasks it started)."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE request_id = ? AND kind = 'request' ORDER BY started_at, rowid", (request_id,)
    )
    return [TaskRow(**dict(r)) for r in rows]


def not_woken(conn: sqlite3.Connection) -> list[TaskRow]:
    """Commands and monitors that ended and have not woken their agent yet (nor been told why not)."""
    rows = conn.execute(
        "SELECT * FROM tasks WHERE kind IN ('command', 'monitor') AND ended_at IS NOT NULL "
        "AND woke IS NULL ORDER BY ended_at, rowid"
    )
    return [TaskRow(**dict(r)) for r in rows]


def next_background_number(conn: sqlite3.Connection) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(CAST(SUBSTR(id, 2) AS INTEGER)), 0) + 1 FROM tasks WHERE kind IN ('command', 'monitor')"
    ).fetchone()
    return int(row[0])


def get(conn: sqlite3.Connection, task_id: str) -> TaskRow | None:
    row = conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone()
    return None if row is None else TaskRow(**dict(row))


def background(conn: sqlite3.Connection, agent: str | None = None) -> list[TaskRow]:
    """Commands and monitors, and the agent processes of running requests, newest first (of one agent, or all)."""
    query = "SELECT * FROM tasks WHERE (kind IN ('command', 'monitor') OR kind = 'request' AND ended_at IS NULL)" + (
        " AND agent = ?" if agent else ""
    )
    newest_first = " ORDER BY started_at DESC, CAST(SUBSTR(id, 2) AS INTEGER) DESC"
    rows = conn.execute(query + newest_first, (agent,) if agent else ())
    return [TaskRow(**dict(r)) for r in rows]


def running(conn: sqlite3.Connection) -> list[TaskRow]:
    rows = conn.execute("SELECT * FROM tasks WHERE ended_at IS NULL ORDER BY started_at")
    return [TaskRow(**dict(r)) for r in rows]


def update(conn: sqlite3.Connection, task_id: str, fields: dict[str, object]) -> None:
    allowed = {"last_output_at", "stopping_at", "stop_reason", "tests", "woke"}
    assert set(fields) <= allowed, set(fields) - allowed
    sets = ", ".join(f"{name} = ?" for name in fields)
    conn.execute(f"UPDATE tasks SET {sets} WHERE id = ?", (*fields.values(), task_id))
