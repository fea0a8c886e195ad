"""SQL for the questions agents ask."""

import json
import sqlite3

from desktop.store.rows import QuestionRow


def add(
    conn: sqlite3.Connection,
    request_id: str,
    at: float,
    text: str,
    options: list[str],
    call_key: str | None = None,
    owner_only: bool = False,
) -> int:
    cursor = conn.execute(
        "INSERT INTO questions (request_id, asked_at, text, options, call_key, owner_only) VALUES (?, ?, ?, ?, ?, ?)",
        (request_id, at, text, json.dumps(options), call_key, int(owner_only)),
    )
    return int(cursor.lastrowid or 0)


def by_call_key(conn: sqlite3.Connection, call_key: str) -> QuestionRow | None:
    row = conn.execute("SELECT * FROM questions WHERE call_key = ?", (call_key,)).fetchone()
    return None if row is None else QuestionRow.of(row)


def get(conn: sqlite3.Connection, question_id: int) -> QuestionRow | None:
    row = conn.execute("SELECT * FROM questions WHERE id = ?", (question_id,)).fetchone()
    return None if row is None else QuestionRow.of(row)


def open_for(conn: sqlite3.Connection, request_id: str) -> list[QuestionRow]:
    rows = conn.execute(
        "SELECT * FROM questions WHERE request_id = ? AND answered_at IS NULL ORDER BY id", (request_id,)
    )
    return [QuestionRow.of(r) for r in rows]


def close(conn: sqlite3.Connection, question_id: int, answer: str, at: float, by: str) -> None:
    conn.execute(
        "UPDATE questions SET answer = ?, answered_at = ?, answered_by = ? WHERE id = ? AND answered_at IS NULL",
        (answer, at, by, question_id),
    )
