"""SQL for the room's sign-ins (the table `web_sessions`, named before "session" was kept for agent sessions) and
one-time sign-in codes. Only hashes of either are stored."""

import sqlite3


def add_sign_in(conn: sqlite3.Connection, id_hash: str, principal: str, at: float, expires_at: float) -> None:
    conn.execute(
        "INSERT INTO web_sessions (id_hash, principal, created_at, expires_at) VALUES (?, ?, ?, ?)",
        (id_hash, principal, at, expires_at),
    )


def signed_in(conn: sqlite3.Connection, id_hash: str, now: float) -> tuple[str, str] | None:
    """Whose sign-in this is (name, kind), if it has not expired and its person is not revoked."""
    row = conn.execute(
        "SELECT p.name, p.kind FROM web_sessions s JOIN principals p ON p.name = s.principal "
        "WHERE s.id_hash = ? AND s.expires_at > ? AND p.revoked_at IS NULL",
        (id_hash, now),
    ).fetchone()
    return (row[0], row[1]) if row else None


def sign_out(conn: sqlite3.Connection, id_hash: str) -> None:
    conn.execute("DELETE FROM web_sessions WHERE id_hash = ?", (id_hash,))


def end_sign_ins_of(conn: sqlite3.Connection, principal: str) -> int:
    conn.execute("DELETE FROM room_codes WHERE principal = ?", (principal,))
    return conn.execute("DELETE FROM web_sessions WHERE principal = ?", (principal,)).rowcount


def add_code(conn: sqlite3.Connection, code_hash: str, principal: str, expires_at: float) -> None:
    conn.execute(
        "INSERT INTO room_codes (code_hash, principal, expires_at) VALUES (?, ?, ?)", (code_hash, principal, expires_at)
    )


def take_code(conn: sqlite3.Connection, code_hash: str, now: float) -> str | None:
    """The code's person, once: the code is gone after this, used or expired."""
    row = conn.execute(
        "DELETE FROM room_codes WHERE code_hash = ? RETURNING principal, expires_at", (code_hash,)
    ).fetchone()
    return row[0] if row and row[1] > now else None


def forget_expired(conn: sqlite3.Connection, now: float) -> None:
    conn.execute("DELETE FROM web_sessions WHERE expires_at <= ?", (now,))
    conn.execute("DELETE FROM room_codes WHERE expires_at <= ?", (now,))
