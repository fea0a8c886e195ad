"""The request ledger. `_write` is the one function that changes a request: it checks the transition table and
writes the request, a timeline entry and an audit record in one SQLite transaction."""

import logging
import sqlite3
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any

from desktop.core import audit, ids
from desktop.core.actors import SYSTEM, Actor
from desktop.core.durations import format_duration
from desktop.core.errors import Conflict, Forbidden, Invalid, NotFound
from desktop.core.settings import current
from desktop.core.states import TERMINAL, Action, State, next_state
from desktop.core.visible import has_nul
from desktop.store import directory
from desktop.store import questions as questions_sql
from desktop.store import requests as sql
from desktop.store.db import Store
from desktop.store.rows import QuestionRow, RequestRow, TimelineRow

log = logging.getLogger(__name__)
MAX_PROMPT_CHARS = 100_000
Listener = Callable[[RequestRow, Action], None]
Also = Callable[[sqlite3.Connection, float], object]  # more to write in the same transaction


class Ledger:
    def __init__(self, store: Store, wall: Callable[[], float], owner: str = "owner") -> None:
        self._store, self._wall, self.owner = store, wall, owner
        self.listeners: list[Listener] = []

    # --- reading -------------------------------------------------------------------------------------------

    def today(self) -> date:
        return datetime.fromtimestamp(self._wall(), UTC).date()

    def resolve(self, text: str) -> str:
        return ids.normalize(text, self.today())

    def get(self, request_id: str) -> RequestRow:
        full = self.resolve(request_id)
        row = sql.get(self._store.conn, full)
        if row is None:
            raise NotFound(f"there is no request {full}")
        return row

    def visible(self, request_id: str, actor: Actor) -> RequestRow:
        """The request, if `actor` may see it: the owner sees all, others only their own."""
        row = self.get(request_id)
        if not actor.is_owner and row.requester != actor.name:
            raise Forbidden(f"{row.id} was requested by someone else; you can only see and cancel your own requests")
        return row

    def listing(self, actor: Actor, state: str | None = None, limit: int = 500) -> list[RequestRow]:
        if state is not None and state not in State.__members__.values():
            raise Invalid(f"'{state[:20]}' is not a state; states are {', '.join(s.value for s in State)}")
        return sql.listing(self._store.conn, state=state, requester=None if actor.is_owner else actor.name, limit=limit)

    # --- the requester's and the owner's actions ----------------------------------------------------------

    def create(self, actor: Actor, agent: str, prompt: str, retry_of: str | None = None) -> RequestRow:
        check_prompt(prompt)
        if directory.agent(self._store.conn, agent) is None:
            raise NotFound(f"there is no agent '{agent[:40]}'; `cox agent list` shows the agents")
        refs = ids.mentions(prompt, self.today())
        for ref in refs:
            self.visible(ref, actor)  # unknown or someone else's: an error now, not a silent drop
        text = f"requested by {actor.name}" + (f" (retry of {retry_of})" if retry_of else "")
        return self._create(actor, actor.name, agent, prompt, refs, actor.is_owner, text, {"retry_of": retry_of})

    def create_for_agent(
        self,
        caller: Actor,
        parent: RequestRow,
        agent: str,
        prompt: str,
        via_model: str,
        approved: bool,
        prepare: Also | None = None,
        call_key: str | None = None,
    ) -> RequestRow:
        """A prompt an agent sends to a session, requested by its running request `parent` on behalf of the same
        person. `prepare` writes the session itself, in the same transaction, before the request."""
        check_prompt(prompt)
        refs = ids.mentions(prompt, self.today())
        principal = directory.principal(self._store.conn, parent.requester)
        behind = Actor(parent.requester, principal.kind if principal else "person")
        for ref in refs:
            self.visible(ref, behind)
        text = f"requested by {parent.id} ({caller.name} · {via_model}) for {parent.requester}"
        return self._create(
            caller,
            parent.requester,
            agent,
            prompt,
            refs,
            approved,
            text,
            {"parent_id": parent.id, "via_model": via_model, "call_key": call_key},
            prepare,
        )

    def create_continuation(
        self, origin: RequestRow, prompt: str, about: str, approved: bool, also: Also | None = None
    ) -> RequestRow:
        """A background continuation: the next turn of `origin`'s conversation, woken by what `about` names, for the
        same person; approved with the conversation unless a loop guard wants the owner. `also` writes in the same
        transaction (the tasks marked as having woken it: a restart never makes it twice)."""
        text = f"background continuation of {origin.id}: {about}"
        return self._create(
            SYSTEM, origin.requester, origin.agent, prompt, [], approved, text, {"continuation_of": origin.id}, also
        )

    def _create(
        self,
        actor: Actor,
        requester: str,
        agent: str,
        prompt: str,
        refs: list[str],
        approved: bool,
        text: str,
        extra: dict[str, Any],
        prepare: Also | None = None,
    ) -> RequestRow:
        now = self._wall()
        fields: dict[str, Any] = {
            "owner": self.owner,
            "agent": agent,
            "requester": requester,
            "prompt": prompt,
            "created_at": now,
            "updated_at": now,
            "refs": refs,
            **extra,
            "state": State.APPROVED if approved else State.PENDING,
        }
        if approved:
            fields["approved_at"] = now
        else:
            fields["expires_at"] = now + current(self._store.conn, "approval_ttl")
        return self._write(
            None, Action.CREATE, actor, fields=fields, text=text + (", approved" if approved else ""), also=prepare
        )

    def approve(self, request_id: str, actor: Actor) -> RequestRow:
        self._owner_only(actor, "approve requests")
        return self._write(request_id, Action.APPROVE, actor, text=f"approved by {actor.name}")

    def deny(self, request_id: str, actor: Actor) -> RequestRow:
        self._owner_only(actor, "deny requests")
        reason = f"denied by {actor.name}"
        return self._write(request_id, Action.DENY, actor, fields={"result": reason, "denied": 1}, text=reason)

    def cancel(self, request_id: str, actor: Actor, trusted: bool = False, why: str | None = None) -> RequestRow:
        """`trusted`: the caller checked who may (an agent stopping a session's turn), not the requester rule."""
        row = self.get(request_id) if trusted else self.visible(request_id, actor)
        if row.state == State.RUNNING:
            if row.cancel_requested:
                return row
            return self._write(
                row.id,
                Action.CANCEL,
                actor,
                fields={"cancel_requested": 1},
                text=f"cancel requested by {actor.name}; stops at the next safe point",
                kind="cancel_requested",
            )
        reason = why or f"cancelled by {actor.name}"
        return self._write(row.id, Action.CANCEL, actor, fields={"result": reason}, text=reason)

    def retry(self, request_id: str, actor: Actor) -> RequestRow:
        old = self.visible(request_id, actor)
        if old.state not in (State.FAILED, State.CANCELLED, State.EXPIRED, State.DONE):
            raise Conflict(f"{old.id} is {old.state}; only a finished, failed, cancelled or expired request is retried")
        if old.continuation_of is not None:  # the same turn again, in the same conversation
            text = f"background continuation of {old.continuation_of}: retry of {old.id} by {actor.name}"
            return self._create(
                actor,
                old.requester,
                old.agent,
                old.prompt,
                [],
                actor.is_owner,
                text,
                {"continuation_of": old.continuation_of, "retry_of": old.id},
            )
        return self.create(actor, old.agent, old.prompt, retry_of=old.id)

    def revoke_requests_of(self, name: str, actor: Actor) -> list[str]:
        """Cancel everything of `name` not yet running; what is running finishes."""
        self._owner_only(actor, "revoke people")
        waiting = sql.in_states(self._store.conn, (State.PENDING, State.APPROVED), requester=name)
        for row in waiting:
            self._write(
                row.id,
                Action.REVOKE,
                actor,
                fields={"result": "requester revoked"},
                text="cancelled: requester revoked",
            )
        return [row.id for row in waiting]

    # --- the daemon's actions -----------------------------------------------------------------------------

    def expire(self, request_id: str) -> RequestRow:
        ttl = format_duration(current(self._store.conn, "approval_ttl"))
        reason = f"expired: not approved in time (approval TTL {ttl})"
        return self._write(request_id, Action.EXPIRE, SYSTEM, fields={"result": reason}, text=reason)

    def expire_overdue(self) -> list[str]:
        overdue = sql.overdue_pending(self._store.conn, self._wall())
        for request_id in overdue:
            self.expire(request_id)
        return overdue

    def dispatch(self, request_id: str) -> RequestRow:
        row = self.get(request_id)
        return self._write(row.id, Action.DISPATCH, SYSTEM, text=f"started on agent {row.agent}")

    def finish(self, request_id: str, exit_code: int | None, result: str, *, failure: str | None = None) -> RequestRow:
        """End a running request: cancelled if a cancel was asked for, else done on exit 0, else failed."""
        row = self.get(request_id)
        fields: dict[str, Any] = {"exit_code": exit_code, "result": result}
        if row.cancel_requested:
            return self._write(row.id, Action.STOP, SYSTEM, fields=fields, text="cancelled at a safe point")
        if exit_code == 0 and failure is None:
            return self._write(row.id, Action.SUCCEED, SYSTEM, fields=fields, text="done")
        why = failure or f"exit code {exit_code}"
        return self._write(row.id, Action.FAIL, SYSTEM, fields=fields, text=f"failed: {why}")

    def interrupt(self, request_id: str, why: str) -> RequestRow:
        return self._write(request_id, Action.INTERRUPT, SYSTEM, text=f"interrupted: {why}", kind="interrupted")

    def resume(self, request_id: str, why: str) -> RequestRow:
        return self._write(request_id, Action.RESUME, SYSTEM, text=f"resumed: {why}", kind="resumed")

    def record_conversation(self, request_id: str, conversation_ref: str) -> RequestRow:
        return self._write(
            request_id,
            Action.CONVERSATION,
            SYSTEM,
            fields={"conversation_ref": conversation_ref},
            text=f"conversation {conversation_ref}",
            kind="conversation",
        )

    def note(self, request_id: str, text: str, kind: str = "note", actor: Actor = SYSTEM) -> None:
        """A line on the request's timeline, in whatever state it is (it changes nothing of the request)."""
        row, now = self.get(request_id), self._wall()
        with self._store.transaction() as conn:
            sql.add_timeline(conn, row.id, now, kind, row.state, text)
            audit.append(conn, now, actor, kind, row.id, text)

    def record_progress(self, request_id: str, percent: float) -> RequestRow:
        return self._write(
            request_id,
            Action.PROGRESS,
            SYSTEM,
            fields={"progress": percent},
            text=f"progress {percent:.0f}%",
            kind="progress",
        )

    # --- questions from the agent ----------------------------------------------------------------------------

    def ask(
        self,
        request_id: str,
        agent: Actor,
        text: str,
        options: list[str],
        call_key: str | None = None,
        owner_only: bool = False,
    ) -> QuestionRow:
        """The running agent asks the people behind the request; its turn waits for the answer. The same call
        (`call_key`), made again after a daemon restart, gets the question it asked the first time."""
        if not text.strip():
            raise Invalid("the question is empty")
        if call_key is not None and (known := questions_sql.by_call_key(self._store.conn, call_key)) is not None:
            return known
        asked: list[int] = []
        shown = text.strip() + (f" ({' / '.join(options)})" if options else "")
        self._write(
            request_id,
            Action.ASK,
            agent,
            text=f"question: {shown}",
            kind="question",
            also=lambda conn, now: asked.append(
                questions_sql.add(conn, request_id, now, text, options, call_key, owner_only)
            ),
        )
        return self.question(asked[0])

    def answer(self, request_id: str, actor: Actor, text: str, trusted: bool = False) -> QuestionRow:
        """The requester or the owner answers the request's oldest open question (`trusted`: an agent answering a
        session's question; the caller checked it may). Only the owner answers a question asked for the owner."""
        row = self.get(request_id) if trusted else self.visible(request_id, actor)
        if not text.strip():
            raise Invalid("the answer is empty")
        waiting = questions_sql.open_for(self._store.conn, row.id)
        if row.state == State.RUNNING and not waiting:
            raise Conflict(f"{row.id} has no open question")
        if waiting and waiting[0].owner_only and not actor.is_owner:
            raise Forbidden(f"{row.id} asks for the owner's leave; only the owner answers it")
        question = waiting[0].id if waiting else 0
        self._write(
            row.id,
            Action.ANSWER,
            actor,
            text=f"answered by {actor.name}: {text.strip()}",
            kind="answer",
            also=_closing(question, text.strip(), actor.name),
        )
        return self.question(question)

    def withdraw_questions(self, request_id: str, why: str) -> None:
        """Open questions of a turn that ended or broke off are closed: a resumed turn asks again if it must."""
        for question in questions_sql.open_for(self._store.conn, request_id):
            self._write(
                request_id,
                Action.ANSWER,
                SYSTEM,
                text=f"question withdrawn: {why}",
                kind="answer",
                also=_closing(question.id, "", SYSTEM.name),
            )

    def question(self, question_id: int) -> QuestionRow:
        found = questions_sql.get(self._store.conn, question_id)
        if found is None:
            raise NotFound(f"there is no question {question_id}")
        return found

    def open_question(self, request_id: str) -> QuestionRow | None:
        waiting = questions_sql.open_for(self._store.conn, request_id)
        return waiting[0] if waiting else None

    def timeline(self, request_id: str) -> list[TimelineRow]:
        return sql.timeline(self._store.conn, request_id)

    # --- the one writer -----------------------------------------------------------------------------------

    def _write(
        self,
        request_id: str | None,
        action: Action,
        actor: Actor,
        *,
        fields: dict[str, Any] | None = None,
        text: str,
        kind: str = "state",
        also: Also | None = None,
    ) -> RequestRow:
        fields = dict(fields or {})
        now = self._wall()
        try:
            with self._store.transaction() as conn:
                if action == Action.CREATE:
                    if also is not None:  # what the new request needs to exist first (a session's agent)
                        also(conn, now)
                        also = None
                    request_id = self._insert(conn, fields, now)
                    new_state = State(fields["state"])
                else:
                    assert request_id is not None
                    request_id = self.resolve(request_id)
                    row = sql.get(conn, request_id)
                    if row is None:
                        raise NotFound(f"there is no request {request_id}")
                    overdue = row.expires_at is not None and row.expires_at <= now
                    if row.state == State.PENDING and action != Action.EXPIRE and overdue:
                        raise _Overdue
                    new_state = next_state(row.id, State(row.state), action)
                    fields.update(state=new_state.value, updated_at=now)
                    if action == Action.APPROVE:
                        fields.update(approved_at=now, queue_seq=sql.next_queue_seq(conn))
                    elif action == Action.DISPATCH:
                        fields["started_at"] = now
                    elif new_state in TERMINAL:
                        fields["ended_at"] = now
                    sql.update(conn, row.id, row.state, fields)
                if also is not None:
                    also(conn, now)
                sql.add_timeline(conn, request_id, now, kind, new_state.value, text)
                audit.append(conn, now, actor, action.value, request_id, text)
        except _Overdue:
            assert request_id is not None
            self.expire(request_id)
            raise Conflict(
                f"{request_id} expired before it was answered; it cannot be {action.value}d now. "
                "The requester can retry it"
            ) from None
        written = sql.get(self._store.conn, request_id)
        assert written is not None
        for listener in self.listeners:
            try:
                listener(written, action)
            except Exception:  # the change is committed; a listener's trouble must not undo the answer
                log.exception("listener failed on %s %s", written.id, action.value)
        return written

    def _insert(self, conn: sqlite3.Connection, fields: dict[str, Any], now: float) -> str:
        day = datetime.fromtimestamp(now, UTC).date()
        request_id = ids.format_id(day, sql.next_number(conn, self.owner, day.isoformat()))
        if fields["state"] == State.APPROVED:
            fields["queue_seq"] = sql.next_queue_seq(conn)
        sql.insert(conn, {"id": request_id, **fields})
        return request_id

    @staticmethod
    def _owner_only(actor: Actor, what: str) -> None:
        if not actor.is_owner:
            raise Forbidden(f"only the owner can {what}")


def check_prompt(prompt: str) -> None:
    if not prompt.strip():
        raise Invalid("the prompt is empty; say what the agent should do")
    if len(prompt) > MAX_PROMPT_CHARS:
        raise Invalid(f"the prompt is {len(prompt):,} characters; the limit is {MAX_PROMPT_CHARS:,}")
    if has_nul(prompt):
        raise Invalid("the prompt holds a NUL byte, which cannot be passed to a program")


def _closing(question_id: int, answer: str, by: str) -> Also:
    return lambda conn, now: questions_sql.close(conn, question_id, answer, now, by)


class _Overdue(Exception):
    """A pending request was touched after its approval deadline: it expires instead."""
