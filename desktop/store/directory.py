"""SQL for who may send requests (principals), the agents, and the owner's settings."""

import json
import sqlite3

from desktop.store.rows import AgentRow, PrincipalRow


def add_principal(conn: sqlite3.Connection, name: str, kind: str, token_hash: str | None, at: float) -> None:
    conn.execute(
        "INSERT INTO principals (name, kind, token_hash, created_at) VALUES (?, ?, ?, ?)", (name, kind, token_hash, at)
    )


def principal(conn: sqlite3.Connection, name: str) -> PrincipalRow | None:
    row = conn.execute("SELECT * FROM principals WHERE name = ?", (name,)).fetchone()
    return PrincipalRow(**dict(row)) if row else None


def principal_by_token_hash(conn: sqlite3.Connection, token_hash: str) -> PrincipalRow | None:
    row = conn.execute("SELECT * FROM principals WHERE token_hash = ?", (token_hash,)).fetchone()
    return PrincipalRow(**dict(row)) if row else None


def principals(conn: sqlite3.Connection) -> list[PrincipalRow]:
    return [PrincipalRow(**dict(r)) for r in conn.execute("SELECT * FROM principals ORDER BY created_at")]


def revoke_principal(conn: sqlite3.Connection, name: str, at: float) -> None:
    conn.execute("UPDATE principals SET revoked_at = ?, token_hash = NULL WHERE name = ?", (at, name))


def add_agent(
    conn: sqlite3.Connection, name: str, runtime: str, folder: str, options: dict[str, object], at: float
) -> None:
    """A new agent, or one of a removed agent's name (its old requests keep pointing at the name)."""
    conn.execute(
        "INSERT INTO agents (name, runtime, folder, options, created_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET runtime = excluded.runtime, folder = excluded.folder, "
        "options = excluded.options, created_at = excluded.created_at, removed_at = NULL",
        (name, runtime, folder, json.dumps(options), at),
    )


def change_agent(conn: sqlite3.Connection, name: str, runtime: str, folder: str, options: dict[str, object]) -> None:
    conn.execute(
        "UPDATE agents SET runtime = ?, folder = ?, options = ? WHERE name = ?",
        (runtime, folder, json.dumps(options), name),
    )


def remove_agent(conn: sqlite3.Connection, name: str, at: float) -> None:
    conn.execute("UPDATE agents SET removed_at = ? WHERE name = ?", (at, name))


def agent(conn: sqlite3.Connection, name: str) -> AgentRow | None:
    row = conn.execute("SELECT * FROM agents WHERE name = ? AND removed_at IS NULL", (name,)).fetchone()
    return AgentRow.of(row) if row else None


def agents(conn: sqlite3.Connection) -> list[AgentRow]:
    """The owner's agents (sessions agents started run as hidden agents, not listed here)."""
    return [
        AgentRow.of(r)
        for r in conn.execute(
            "SELECT * FROM agents WHERE removed_at IS NULL AND name NOT IN (SELECT id FROM sessions) ORDER BY name"
        )
    ]


def settings(conn: sqlite3.Connection) -> dict[str, str]:
    return {r[0]: r[1] for r in conn.execute("SELECT key, value FROM settings")}


def set_setting(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute(
        "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ?", (key, value, value)
    )


def add_turn_token(conn: sqlite3.Connection, token_hash: str, request_id: str, at: float) -> None:
    conn.execute(
        "INSERT INTO session_tokens (token_hash, request_id, created_at) VALUES (?, ?, ?)", (token_hash, request_id, at)
    )


def running_request_of(conn: sqlite3.Connection, token_hash: str) -> tuple[str, str] | None:
    """(request id, agent) of the token's request while it runs; a turn's token is worth nothing after."""
    row = conn.execute(
        "SELECT r.id, r.agent FROM session_tokens t JOIN requests r ON r.id = t.request_id "
        "WHERE t.token_hash = ? AND r.state = 'running'",
        (token_hash,),
    ).fetchone()
    return None if row is None else (row[0], row[1])
