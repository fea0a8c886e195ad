"""SQL for the sessions agents start, the owner's session groups and the conversations allowed to start them."""

import json
import sqlite3

from desktop.store.rows import RequestRow, SessionRow


def next_id(conn: sqlite3.Connection) -> str:
    """`S<n>`, one past the highest yet, skipping any name an agent has already."""
    highest = conn.execute("SELECT MAX(CAST(SUBSTR(id, 2) AS INTEGER)) FROM sessions").fetchone()[0] or 0
    number = int(highest) + 1
    while conn.execute("SELECT 1 FROM agents WHERE name = ?", (f"S{number}",)).fetchone():
        number += 1
    return f"S{number}"


def add(
    conn: sqlite3.Connection,
    session_id: str,
    title: str,
    group: str | None,
    parent_request: str,
    conversation: str,
    at: float,
) -> None:
    conn.execute(
        "INSERT INTO sessions (id, title, group_name, parent_request, conversation, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (session_id, title, group, parent_request, conversation, at),
    )


def get(conn: sqlite3.Connection, session_id: str) -> SessionRow | None:
    row = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
    return SessionRow.of(row) if row else None


def listing(conn: sqlite3.Connection, requester: str | None = None, archived: bool = False) -> list[SessionRow]:
    """Sessions (of the conversations `requester` stands behind, if given), oldest first."""
    sql = (
        "SELECT s.* FROM sessions s JOIN requests p ON p.id = s.parent_request WHERE (? OR s.archived_at IS NULL)"
        " AND (? IS NULL OR p.requester = ?) ORDER BY s.created_at, s.id"
    )
    return [SessionRow.of(r) for r in conn.execute(sql, (archived, requester, requester))]


def set_may_create(conn: sqlite3.Connection, session_id: str, allowed: bool) -> None:
    conn.execute("UPDATE sessions SET may_create = ? WHERE id = ?", (int(allowed), session_id))


def archive(conn: sqlite3.Connection, session_id: str, at: float) -> None:
    conn.execute("UPDATE sessions SET archived_at = ? WHERE id = ? AND archived_at IS NULL", (at, session_id))


def requests_of(conn: sqlite3.Connection, session_id: str) -> list[RequestRow]:
    rows = conn.execute("SELECT * FROM requests WHERE agent = ? ORDER BY created_at, id", (session_id,))
    return [RequestRow.of(r) for r in rows]


def last_conversation_ref(conn: sqlite3.Connection, session_id: str, before: str) -> str | None:
    """The runtime conversation the session's earlier prompts ran in: the next prompt continues it."""
    row = conn.execute(
        "SELECT conversation_ref FROM requests WHERE agent = ? AND id != ? AND conversation_ref IS NOT NULL "
        "ORDER BY created_at DESC, id DESC LIMIT 1",
        (session_id, before),
    ).fetchone()
    return str(row[0]) if row else None


def with_prompts(conn: sqlite3.Connection, states: tuple[str, ...]) -> list[str]:
    """Sessions with a prompt in one of `states` (approved and running: at work; running: running now)."""
    marks = ", ".join("?" * len(states))
    rows = conn.execute(
        f"SELECT DISTINCT s.id FROM sessions s JOIN requests r ON r.agent = s.id "
        f"WHERE r.state IN ({marks}) ORDER BY s.id",
        states,
    )
    return [r[0] for r in rows]


def add_group(conn: sqlite3.Connection, name: str, at: float) -> None:
    conn.execute("INSERT INTO session_groups (name, created_at) VALUES (?, ?)", (name, at))


def groups(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT name FROM session_groups ORDER BY name")]


def conversation(conn: sqlite3.Connection, key: str) -> tuple[float | None, int]:
    """(when the owner let this conversation start sessions, or None; agent prompts since a person last said yes)."""
    row = conn.execute("SELECT approved_at, agent_prompts FROM conversations WHERE key = ?", (key,)).fetchone()
    return (None, 0) if row is None else (row[0], int(row[1]))


def approve_conversation(conn: sqlite3.Connection, key: str, at: float, by: str) -> None:
    """The owner said yes: the conversation may start sessions, and its loop guard counts from zero again."""
    conn.execute(
        "INSERT INTO conversations (key, approved_at, approved_by, agent_prompts) VALUES (?, ?, ?, 0) "
        "ON CONFLICT (key) DO UPDATE SET approved_at = COALESCE(approved_at, excluded.approved_at), "
        "approved_by = COALESCE(approved_by, excluded.approved_by), agent_prompts = 0",
        (key, at, by),
    )


def count_agent_prompt(conn: sqlite3.Connection, key: str) -> None:
    conn.execute(
        "INSERT INTO conversations (key, agent_prompts) VALUES (?, 1) "
        "ON CONFLICT (key) DO UPDATE SET agent_prompts = agent_prompts + 1",
        (key,),
    )


def watch(conn: sqlite3.Connection, conversation: str, session_id: str, events: list[str], at: float) -> None:
    conn.execute(
        "INSERT INTO watches (conversation, session, events, created_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (conversation, session) DO UPDATE SET events = excluded.events",
        (conversation, session_id, json.dumps(events), at),
    )


def unwatch(conn: sqlite3.Connection, conversation: str, session_id: str) -> bool:
    return (
        conn.execute("DELETE FROM watches WHERE conversation = ? AND session = ?", (conversation, session_id)).rowcount
        > 0
    )


def watchers(conn: sqlite3.Connection, session_id: str) -> list[tuple[str, list[str]]]:
    """(conversation, the kinds of news it wants) of each conversation watching the session."""
    rows = conn.execute("SELECT conversation, events FROM watches WHERE session = ? ORDER BY created_at", (session_id,))
    return [(str(r[0]), list(json.loads(r[1]))) for r in rows]
