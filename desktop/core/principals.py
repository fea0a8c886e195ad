"""People and machines who may send requests, and their tokens (256-bit; only a hash is stored)."""

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import Conflict, Forbidden, Invalid, NotFound
from desktop.core.ledger import Ledger
from desktop.room import sql as sign_ins_sql
from desktop.store import directory
from desktop.store.db import Store
from desktop.store.rows import PrincipalRow

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
OWNER = "owner"


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str, what: str) -> str:
    if not NAME.fullmatch(name):
        raise Invalid(
            f"'{name[:40]}' is not a valid {what} name: use letters, digits, '.', '_' or '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return name


class Principals:
    def __init__(self, store: Store, ledger: Ledger, wall: Callable[[], float]) -> None:
        self._store, self._ledger, self._wall = store, ledger, wall

    def set_owner_token(self, token: str) -> None:
        """The owner's token lives in a file only the owner can read; the database keeps its hash."""
        with self._store.transaction() as conn:
            if directory.principal(conn, OWNER) is None:
                directory.add_principal(conn, OWNER, "owner", token_hash(token), self._wall())
            else:
                conn.execute("UPDATE principals SET token_hash = ? WHERE name = ?", (token_hash(token), OWNER))

    def authenticate(self, token: str) -> Actor | None:
        digest = token_hash(token)
        row = directory.principal_by_token_hash(self._store.conn, digest)
        if row is None:
            running = directory.running_request_of(self._store.conn, digest)
            return None if running is None else Actor(running[1], "agent", request_id=running[0], turn_key=digest[:16])
        if row.token_hash is None or row.revoked_at is not None:
            return None
        if not hmac.compare_digest(row.token_hash, digest):
            return None
        return Actor(row.name, row.kind)

    def turn_token(self, request_id: str) -> str:
        """A token for the agent running `request_id` in this turn; it is refused once the request stops running."""
        token = new_token()
        with self._store.transaction() as conn:
            directory.add_turn_token(conn, token_hash(token), request_id, self._wall())
        return token

    def add(self, name: str, kind: str, actor: Actor) -> str:
        """Register a person or machine; returns its token, which is shown once and never stored."""
        if not actor.is_owner:
            raise Forbidden("only the owner can add people and machines")
        check_name(name, kind)
        if kind not in ("person", "machine"):
            raise Invalid(f"'{kind}' is not a kind of principal; use person or machine")
        token, now = new_token(), self._wall()
        with self._store.transaction() as conn:
            if directory.principal(conn, name) is not None:
                raise Conflict(f"'{name}' exists already; names are never reused")
            directory.add_principal(conn, name, kind, token_hash(token), now)
            audit.append(conn, now, actor, f"add_{kind}", None, f"added {kind} {name}")
        return token

    def revoke(self, name: str, actor: Actor) -> list[str]:
        """The token stops working at once; everything of theirs not yet running is cancelled."""
        if not actor.is_owner:
            raise Forbidden("only the owner can revoke people and machines")
        row = directory.principal(self._store.conn, name)
        if row is None or row.kind == "owner":
            raise NotFound(f"there is no person or machine '{name[:40]}'")
        if row.revoked_at is None:
            now = self._wall()
            with self._store.transaction() as conn:
                directory.revoke_principal(conn, name, now)
                sign_ins_sql.end_sign_ins_of(conn, name)
                audit.append(conn, now, actor, "revoke", None, f"revoked {row.kind} {name}")
        return self._ledger.revoke_requests_of(name, actor)

    def listing(self) -> list[PrincipalRow]:
        return [p for p in directory.principals(self._store.conn) if p.kind != "owner"]
