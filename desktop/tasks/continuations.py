"""Background continuations: when a command or monitor an agent started ends, the agent is woken with a new turn on the
same runtime session that tells it what ended (how, exit code, duration, test counts and first failure, the last lines
of its console, all redacted) and asks it to review the result and reply. That turn is a request of its own
(`continuation_of` the request whose turn started the tasks), for the same person, approved with the conversation.

Tasks that end within GATHER seconds of each other wake one turn. A chain of LOOP_LIMIT continuations in a row waits
for the owner's approval. A task whose request was cancelled wakes nothing; nor does the shell agent, which has no
session to continue (a line on the timeline says what ended). A task marks what it woke in the same transaction that
makes the turn, so a restart never makes one twice; one that ended before a restart and woke nothing is dropped, said
on the timeline."""

import asyncio
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

from desktop.console.redact import redact
from desktop.core.actors import SYSTEM
from desktop.core.durations import how_long
from desktop.core.ledger import Ledger
from desktop.core.states import Action, State
from desktop.store import requests as requests_sql
from desktop.store import tasks as sql
from desktop.store.db import Store
from desktop.store.rows import RequestRow, TaskRow
from desktop.tasks.paging import output_page

GATHER = 2.0  # seconds: tasks ending this close together wake one turn
LOOP_LIMIT = 10  # continuations in a row before the next one asks the owner
TAIL_LINES = 30  # of each task's console, in the prompt
TAIL_CHARS = 3000
CANCELLED = "request cancelled"  # the stop reason of a task whose request was cancelled (desktop.daemon)


class Continuations:
    def __init__(self, store: Store, ledger: Ledger, resumable: Callable[[str], bool], wall: Callable[[], float],
                 gather: float = GATHER) -> None:
        """`resumable(agent)`: whether the agent's runtime can continue a session (the shell agent cannot)."""
        self._store, self._ledger, self._resumable, self._wall, self.gather = store, ledger, resumable, wall, gather
        self._gathering: dict[str, list[str]] = {}  # origin request ID -> the tasks that ended, waiting to wake it
        self._news: dict[str, list[str]] = {}  # origin request ID -> what watched sessions did, waiting to wake it
        self._timers: dict[str, asyncio.TimerHandle] = {}

    def drop_stale(self) -> None:
        """At start, before any task is followed again: tasks that ended before the restart and woke nothing are not
        woken now (the conversation has moved on, or the owner restarted on purpose); their requests say so."""
        stale: dict[str, list[TaskRow]] = {}
        for task in sql.not_woken(self._store.conn):
            stale.setdefault(task.request_id or "", []).append(task)
        for origin, tasks in stale.items():
            names = ", ".join(t.id for t in tasks)
            self._mark(tasks, "dropped: the daemon restarted before it woke its agent")
            if origin:
                self._ledger.note(origin, f"continuation for {names} dropped: the daemon restarted before it ran")

    def task_ended(self, task: TaskRow) -> None:
        """A command or monitor ended: wake the agent whose turn started it, with others ending about now."""
        if task.kind not in ("command", "monitor"):
            return
        if task.request_id is None:  # the owner's own task: no conversation to continue
            self._mark([task], "no agent to wake: started by the owner")
            return
        origin = self._ledger.get(task.request_id)
        if task.stop_reason == CANCELLED or origin.state == State.CANCELLED:
            self._mark([task], f"not woken: {origin.id} was cancelled")
            return
        self._gathering.setdefault(origin.id, []).append(task.id)
        self._soon(origin.id)

    def tell(self, origin_id: str, news: str) -> None:
        """What a session the conversation of `origin_id` watches did ('S1 (Checks): turn R-08 finished: done'): it
        wakes that conversation, with whatever else ends about now."""
        self._news.setdefault(origin_id, []).append(news)
        self._soon(origin_id)

    def _soon(self, origin_id: str) -> None:
        if origin_id not in self._timers:
            self._timers[origin_id] = asyncio.get_running_loop().call_later(self.gather, self._wake, origin_id)

    def on_change(self, request: RequestRow, action: Action) -> None:
        """A cancelled request's continuations do not run: those waiting to be made, and those queued."""
        if request.state != State.CANCELLED or action not in (Action.CANCEL, Action.DENY, Action.REVOKE):
            return
        gathered = self._gathering.pop(request.id, [])
        self._news.pop(request.id, None)
        timer = self._timers.pop(request.id, None)
        if timer is not None:
            timer.cancel()
        self._mark([t for t in (sql.get(self._store.conn, i) for i in gathered) if t], f"not woken: {request.id} "
                   "was cancelled")
        for child in requests_sql.continuations_of(self._store.conn, request.id):
            if child.state in (State.PENDING, State.APPROVED):
                self._ledger.cancel(child.id, SYSTEM, trusted=True, why=f"{request.id} was cancelled")

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()

    def _wake(self, origin_id: str) -> None:
        self._timers.pop(origin_id, None)
        tasks = [t for t in (sql.get(self._store.conn, i) for i in self._gathering.pop(origin_id, [])) if t]
        news = self._news.pop(origin_id, [])
        origin = self._ledger.get(origin_id)
        if not tasks and not news:
            return
        told = "; ".join([*(ended_line(t) for t in tasks), *news])
        if not self._resumable(origin.agent):
            self._mark(tasks, "a timeline note: its agent has no session to continue")
            self._ledger.note(origin.id, f"{told} (the {origin.agent} agent has no session to continue)")
            return
        depth = self._depth(origin)
        approved = depth < LOOP_LIMIT
        prompt = continuation_prompt(tasks, news)
        about = "; ".join([*([f"{', '.join(t.id for t in tasks)} ended"] if tasks else []),
                           *sorted({line.split(" ", 1)[0] for line in news})])  # the sessions' IDs

        def claim(conn: sqlite3.Connection, _now: float) -> None:  # in the turn's own transaction: never twice
            for task in tasks:
                sql.update(conn, task.id, {"woke": "waking"})

        made = self._ledger.create_continuation(origin, prompt, about, approved, also=claim)
        self._mark(tasks, made.id)
        if not approved:
            self._ledger.note(made.id, f"waits for the owner: {depth} background continuations in a row")

    def _depth(self, request: RequestRow) -> int:
        """How many continuations in a row led to this request's turn (the loop guard's count)."""
        depth, row = 0, request
        while row.continuation_of is not None and depth <= LOOP_LIMIT:
            depth += 1
            row = self._ledger.get(row.continuation_of)
        return depth

    def _mark(self, tasks: list[TaskRow], woke: str) -> None:
        with self._store.transaction() as conn:
            for task in tasks:
                sql.update(conn, task.id, {"woke": woke})



def ended_line(task: TaskRow) -> str:
    """'T3 (npm test) failed (exit 1) after 2 min 04 s'."""
    how = {"completed": "finished", "failed": f"failed (exit {task.exit_code})", "stopped": "was stopped",
           "unknown": "ended, result unknown"}.get(task.outcome or "unknown", "ended")
    if task.outcome == "stopped" and task.stop_reason:
        how = f"was stopped ({task.stop_reason})"
    took = f" after {how_long((task.ended_at or task.started_at) - task.started_at)}"
    what = f" ({task.description})" if task.description else ""
    return redact(f"{task.id}{what} {how}{took}")


def continuation_prompt(tasks: list[TaskRow], news: list[str] | None = None) -> str:
    """What the woken turn is told: each task, how it ended, its tests and the last lines of its console; what the
    sessions it watches did."""
    parts = [] if not tasks else ["Background work you started has ended." if len(tasks) == 1 else
                                  f"{len(tasks)} background tasks you started have ended."]
    if news:
        parts += ["News from the sessions you watch (unwatch_session stops it):", *(f"- {line}" for line in news)]
    for task in tasks:
        parts.append(f"\n{ended_line(task)}.\nCommand: {redact(task.command)}")
        tests = json.loads(task.tests) if task.tests else None
        if tests and (tests.get("passed") or tests.get("failed") or tests.get("skipped")):
            line = (f"Tests ({tests.get('runner')}): {tests.get('passed')} passed, {tests.get('failed')} failed, "
                    f"{tests.get('skipped')} skipped")
            failure = tests.get("first_failure")
            parts.append(line + (f"; first failure: {failure['name']}" if failure else ""))
        tail = _tail(task)
        if tail:
            parts.append(f"The last lines of its console:\n```\n{tail}\n```")
    parts.append("\nReview the result and reply to the person who asked: what happened, and what, if anything, "
                  "should be done next.")
    return "\n".join(parts).replace("\x00", "␀")


def _tail(task: TaskRow) -> str:
    page = output_page(Path(task.dir) / "output", TAIL_LINES, colours=False)
    lines = [line for line, _ in page.lines] + ([page.pending] if page.pending else [])
    text = "\n".join(lines).replace("```", "'''")
    return text[-TAIL_CHARS:]

