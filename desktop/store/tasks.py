"""SQL for background tasks (for now: the process of a running request)."""

import sqlite3

from desktop.store.rows import TaskRow


def add(conn: sqlite3.Connection, task_id: str, request_id: str | None, kind: str, folder: str, at: float) -> None:
    conn.execute(
        "INSERT INTO tasks (id, request_id, kind, dir, started_at) VALUES (?, ?, ?, ?, ?)",
        (task_id, request_id, kind, folder, at),
    )


def finish(conn: sqlite3.Connection, task_id: str, at: float, exit_code: int | None, outcome: str) -> None:
    conn.execute(
        "UPDATE tasks SET ended_at = ?, exit_code = ?, outcome = ? WHERE id = ? AND ended_at IS NULL",
        (at, exit_code, outcome, task_id),
    )


def for_request(conn: sqlite3.Connection, request_id: str) -> list[TaskRow]:
    rows = conn.execute("SELECT * FROM tasks WHERE request_id = ? ORDER BY started_at", (request_id,))
    return [TaskRow(**dict(r)) for r in rows]

