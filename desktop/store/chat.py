"""SQL for the chat connectors: their settings (no secrets: those are in the keyring), who a chat user is here,
each request's thread, and the outbox of thread messages, posted in order and marked once posted."""

import json
import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Thread:
    connector: str
    request_id: str
    channel: str
    origin: str | None  # the chat message the request came from (the thread hangs under it), if any
    thread: str | None  # the thread's first message of ours, once posted
    approval: str | None  # the message with the Approve/Deny buttons, while it has them


@dataclass(frozen=True)
class Outgoing:
    seq: int
    connector: str
    request_id: str
    kind: str
    body: dict[str, Any]


def connectors(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    return {name: json.loads(config) for name, config in conn.execute("SELECT name, config FROM connectors")}


def set_connector(conn: sqlite3.Connection, name: str, config: dict[str, Any], at: float) -> None:
    conn.execute(
        "INSERT INTO connectors (name, config, added_at) VALUES (?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET config = excluded.config",
        (name, json.dumps(config), at),
    )


def remove_connector(conn: sqlite3.Connection, name: str) -> None:
    conn.execute("DELETE FROM connectors WHERE name = ?", (name,))
    conn.execute("DELETE FROM chat_outbox WHERE connector = ? AND posted_at IS NULL", (name,))


def person(conn: sqlite3.Connection, connector: str, chat_user: str) -> str | None:
    row = conn.execute(
        "SELECT c.principal FROM chat_people c JOIN principals p ON p.name = c.principal "
        "WHERE c.connector = ? AND c.chat_user = ? AND p.revoked_at IS NULL",
        (connector, chat_user),
    ).fetchone()
    return row[0] if row else None


def people(conn: sqlite3.Connection, connector: str) -> dict[str, str]:
    return dict(
        conn.execute(
            "SELECT chat_user, principal FROM chat_people WHERE connector = ? ORDER BY chat_user", (connector,)
        ).fetchall()
    )


def map_person(conn: sqlite3.Connection, connector: str, chat_user: str, principal: str | None) -> None:
    if principal is None:
        conn.execute("DELETE FROM chat_people WHERE connector = ? AND chat_user = ?", (connector, chat_user))
    else:
        conn.execute(
            "INSERT INTO chat_people (connector, chat_user, principal) VALUES (?, ?, ?) "
            "ON CONFLICT DO UPDATE SET principal = excluded.principal",
            (connector, chat_user, principal),
        )


def thread(conn: sqlite3.Connection, connector: str, request_id: str) -> Thread | None:
    row = conn.execute(
        "SELECT * FROM chat_threads WHERE connector = ? AND request_id = ?", (connector, request_id)
    ).fetchone()
    return Thread(**dict(row)) if row else None


def add_thread(conn: sqlite3.Connection, connector: str, request_id: str, channel: str, origin: str | None) -> None:
    conn.execute(
        "INSERT OR IGNORE INTO chat_threads (connector, request_id, channel, origin) VALUES (?, ?, ?, ?)",
        (connector, request_id, channel, origin),
    )


def set_thread(conn: sqlite3.Connection, connector: str, request_id: str, **refs: str | None) -> None:
    for column, value in refs.items():
        assert column in ("thread", "approval")
        conn.execute(
            f"UPDATE chat_threads SET {column} = ? WHERE connector = ? AND request_id = ?",
            (value, connector, request_id),
        )


def add_outgoing(
    conn: sqlite3.Connection, connector: str, request_id: str, kind: str, body: dict[str, Any], at: float
) -> None:
    conn.execute(
        "INSERT INTO chat_outbox (connector, request_id, kind, body, created_at) VALUES (?, ?, ?, ?, ?)",
        (connector, request_id, kind, json.dumps(body), at),
    )


def next_outgoing(conn: sqlite3.Connection, connector: str) -> Outgoing | None:
    row = conn.execute(
        "SELECT seq, connector, request_id, kind, body FROM chat_outbox "
        "WHERE connector = ? AND posted_at IS NULL ORDER BY seq LIMIT 1",
        (connector,),
    ).fetchone()
    return None if row is None else Outgoing(row[0], row[1], row[2], row[3], json.loads(row[4]))


def posted(conn: sqlite3.Connection, seq: int, at: float) -> None:
    conn.execute("UPDATE chat_outbox SET posted_at = ? WHERE seq = ?", (at, seq))


def has_origin(conn: sqlite3.Connection, connector: str, message: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM chat_threads WHERE connector = ? AND origin = ?", (connector, message)).fetchone()
        is not None
    )
