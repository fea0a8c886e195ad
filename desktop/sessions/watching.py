"""Watching sessions: what a watched session does — a turn finished, a question, a background task started, finished
or failed (stopped or non-zero counts as failed), everything idle — is news for each conversation watching it (MCP
watch_session), which a background continuation brings to that conversation's newest turn."""

from desktop.core.ledger import Ledger
from desktop.core.states import TERMINAL, Action, State
from desktop.core.visible import one_line
from desktop.sessions import sql as sessions_sql
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.db import Store
from desktop.store.rows import RequestRow, TaskRow
from desktop.tasks.continuations import Continuations, ended_line

TURN_ENDS = (Action.SUCCEED, Action.FAIL, Action.CANCEL, Action.STOP)


class Watching:
    def __init__(self, store: Store, ledger: Ledger, continuations: Continuations) -> None:
        self._store, self._ledger, self._continuations = store, ledger, continuations

    def on_request(self, request: RequestRow, action: Action) -> None:
        """The ledger's listener: a session's turn finished, or asks a question."""
        if sessions_sql.get(self._store.conn, request.agent) is None:
            return
        if action in TURN_ENDS and State(request.state) in TERMINAL and request.started_at is not None:
            said = f": {one_line(request.result, 200)}" if request.result else ""
            self._tell(request.agent, "turn_finished", f"turn {request.id} finished, {request.state}{said}")
        elif action == Action.ASK:
            asked = self._ledger.open_question(request.id)
            if asked is not None:
                self._tell(
                    request.agent,
                    "question",
                    f"{request.id} asks: "
                    f"{one_line(asked.text, 300)} (answer it with answer_question, as the owner says)",
                )

    def on_task(self, what: str, task: TaskRow) -> None:
        """A background task of a session started or ended."""
        if task.agent is None or task.kind not in ("command", "monitor"):
            return
        if sessions_sql.get(self._store.conn, task.agent) is None:
            return
        if what == "started":
            self._tell(
                task.agent, "task_started", f"{task.id} ({task.description or one_line(task.command, 80)}) started"
            )
        else:
            kind = "task_finished" if task.outcome == "completed" and task.exit_code == 0 else "task_failed"
            self._tell(task.agent, kind, ended_line(task))

    def _tell(self, session_id: str, event: str, text: str) -> None:
        conn = self._store.conn
        watchers = sessions_sql.watchers(conn, session_id)
        if not watchers:
            return
        session = sessions_sql.get(conn, session_id)
        title = f" ({one_line(session.title, 60)})" if session is not None else ""
        idle = self._all_idle(session_id) if event != "task_started" else False
        for conversation, events in watchers:
            newest = requests_sql.newest_of_conversation(conn, conversation)
            if newest is None or newest.state == State.CANCELLED:
                continue
            if event in events:
                self._continuations.tell(newest.id, f"{session_id}{title}: {text}")
            if idle and "all_idle" in events:
                self._continuations.tell(newest.id, f"{session_id}{title}: all idle (no turn, no background task)")

    def _all_idle(self, session_id: str) -> bool:
        conn = self._store.conn
        busy = [
            r
            for r in sessions_sql.requests_of(conn, session_id)
            if r.state in (State.PENDING, State.APPROVED, State.RUNNING)
        ]
        tasks = [t for t in tasks_sql.running(conn) if t.agent == session_id and t.kind in ("command", "monitor")]
        return not busy and not tasks and not self._continuations.waking(session_id)  # (its own turn is coming)
