"""Signing in to the room from a browser: a person's token, or a one-time code from a link the owner shared, is
exchanged for a sign-in (the web's "session": the word is kept here for the cookie's id alone, `session_id`). The
id lives only in an HttpOnly cookie (the database keeps its hash); its CSRF token is derived from the id, so nothing
else is stored. Revoking a person ends their sign-ins at once."""

import hashlib
import hmac
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.errors import Forbidden, NotFound
from desktop.core.principals import Principals, token_hash
from desktop.room import sql
from desktop.store import directory
from desktop.store.db import Store

SIGN_IN_DAYS = 14
CODE_MINUTES = 15
FAILURES_PER_CLIENT = 5  # failed sign-ins a client may make in FAILURE_WINDOW seconds
FAILURES_IN_ALL = 30  # failed sign-ins from all clients together in the window
FAILURE_WINDOW = 60.0


class TooManyAttempts(Exception):
    def __init__(self, retry_after: int) -> None:
        super().__init__(f"too many failed sign-ins; try again in {retry_after} s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class SignIn:
    session_id: str  # goes into the cookie, never anywhere else
    csrf: str
    actor: Actor


def csrf_for(session_id: str) -> str:
    return hashlib.sha256(b"coxswain-csrf:" + session_id.encode()).hexdigest()[:32]


def sign_in_key(session_id: str) -> str:
    """A sign-in's name in events: says which one, reveals nothing of its id."""
    return token_hash(session_id)[:16]


def csrf_matches(session_id: str, sent: str) -> bool:
    return hmac.compare_digest(csrf_for(session_id), sent)


class SignInLimiter:
    """Failed sign-ins per client address, and for everyone together, in a sliding window."""

    def __init__(self, mono: Callable[[], float]) -> None:
        self._mono = mono
        self._failures: dict[str, deque[float]] = {}
        self._all: deque[float] = deque()

    def check(self, client: str) -> None:
        now = self._mono()
        for times in (self._failures.get(client, deque()), self._all):
            while times and times[0] <= now - FAILURE_WINDOW:
                times.popleft()
        mine = self._failures.get(client, deque())
        full = [
            times for times, limit in ((mine, FAILURES_PER_CLIENT), (self._all, FAILURES_IN_ALL)) if len(times) >= limit
        ]
        if full:
            raise TooManyAttempts(max(1, int(max(times[0] for times in full) + FAILURE_WINDOW - now) + 1))

    def failed(self, client: str) -> None:
        now = self._mono()
        self._failures.setdefault(client, deque()).append(now)
        self._all.append(now)
        if len(self._failures) > 10_000:  # a flood of addresses cannot grow this without bound
            self._failures = {k: v for k, v in self._failures.items() if v and v[-1] > now - FAILURE_WINDOW}


class SignIns:
    def __init__(
        self, store: Store, principals: Principals, wall: Callable[[], float], mono: Callable[[], float]
    ) -> None:
        self._store, self._principals, self._wall = store, principals, wall
        self.limiter = SignInLimiter(mono)

    def sign_in(self, token: str, client: str) -> SignIn:
        self.limiter.check(client)
        actor = self._principals.authenticate(token) if token else None
        if actor is None or actor.kind not in ("owner", "person"):
            self.limiter.failed(client)
            raise Forbidden("that token is not valid (it may have been revoked)")
        return self._open(actor, "signed in to the room with a token")

    def exchange(self, code: str, client: str) -> SignIn:
        self.limiter.check(client)
        now = self._wall()
        with self._store.transaction() as conn:
            name = sql.take_code(conn, token_hash(code), now) if code else None
        row = directory.principal(self._store.conn, name) if name else None
        if row is None or row.revoked_at is not None:
            self.limiter.failed(client)
            raise Forbidden("this sign-in link is not valid: it was used already, it expired, or it was withdrawn")
        return self._open(Actor(row.name, row.kind), "signed in to the room with a one-time link")

    def link_code(self, name: str, actor: Actor) -> tuple[str, float]:
        """A one-time code for `name` (a person, or the owner), good for CODE_MINUTES; shown once, stored hashed."""
        if not actor.is_owner:
            raise Forbidden("only the owner can make sign-in links")
        row = directory.principal(self._store.conn, name)
        if row is None or row.revoked_at is not None or row.kind not in ("owner", "person"):
            raise NotFound(f"there is no person '{name[:40]}' (links are for people and the owner)")
        code, now = secrets.token_urlsafe(24), self._wall()
        expires = now + CODE_MINUTES * 60
        with self._store.transaction() as conn:
            sql.forget_expired(conn, now)
            sql.add_code(conn, token_hash(code), name, expires)
            audit.append(conn, now, actor, "room_link", None, f"made a one-time room sign-in link for {name}")
        return code, expires

    def actor(self, session_id: str) -> Actor | None:
        if not session_id or len(session_id) > 200:
            return None
        found = sql.signed_in(self._store.conn, token_hash(session_id), self._wall())
        return Actor(*found) if found else None

    def sign_out(self, session_id: str) -> None:
        with self._store.transaction() as conn:
            sql.sign_out(conn, token_hash(session_id))

    def _open(self, actor: Actor, reason: str) -> SignIn:
        session_id, now = secrets.token_urlsafe(32), self._wall()
        with self._store.transaction() as conn:
            sql.forget_expired(conn, now)
            sql.add_sign_in(conn, token_hash(session_id), actor.name, now, now + SIGN_IN_DAYS * 86400)
            audit.append(conn, now, actor, "room_sign_in", None, reason)
        return SignIn(session_id, csrf_for(session_id), actor)
