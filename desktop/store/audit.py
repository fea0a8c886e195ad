"""SQL for the append-only audit table."""

import sqlite3

from desktop.store.rows import AuditRow


def last(conn: sqlite3.Connection) -> tuple[int, str] | None:
    row = conn.execute("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").fetchone()
    return (int(row[0]), str(row[1])) if row else None


def insert(conn: sqlite3.Connection, record: AuditRow) -> None:
    conn.execute(
        "INSERT INTO audit (seq, at, actor, action, request_id, reason, prev_hash, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (
            record.seq,
            record.at,
            record.actor,
            record.action,
            record.request_id,
            record.reason,
            record.prev_hash,
            record.hash,
        ),
    )


def records(conn: sqlite3.Connection, request_id: str | None = None, limit: int | None = None) -> list[AuditRow]:
    sql, params = "SELECT * FROM audit", []
    if request_id:
        sql += " WHERE request_id = ?"
        params.append(request_id)
    sql += " ORDER BY seq"
    if limit:
        sql = f"SELECT * FROM ({sql.replace('ORDER BY seq', 'ORDER BY seq DESC')} LIMIT {int(limit)}) ORDER BY seq"
    return [AuditRow(**dict(r)) for r in conn.execute(sql, params)]
