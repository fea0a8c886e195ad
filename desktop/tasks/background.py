"""Background tasks: commands and monitors an agent (through the MCP server) or the owner left running. Each runs
under the detached runner, so it outlives a daemon restart; the daemon follows its output through the console
pipeline (test counts, last output time), stops it on request or at the timeout, and lists it for an hour after
it ended (at most 20 per agent)."""

import asyncio
import contextlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from desktop.console.redact import redact
from desktop.console.stream import ConsoleStream
from desktop.core.actors import SYSTEM, Actor
from desktop.core.errors import Conflict, Forbidden, Invalid, NotFound
from desktop.core.events import EventBus, TaskChanged
from desktop.core.ledger import Ledger
from desktop.core.settings import current
from desktop.core.states import State
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store import tasks as sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow, TaskRow
from desktop.tasks.follower import Follower
from desktop.tasks.supervisor import Exit, Supervisor

log = logging.getLogger(__name__)
KINDS = ("command", "monitor")
KEEP_ENDED_SECONDS = 3600
KEEP_ENDED_PER_AGENT = 20
MAX_COMMAND = 2000
FOLLOW_SECONDS = 0.25
QUIET_NOTICE_SECONDS = 60
# `npm test 2>&1 | tail -40`: nothing shows until the command ends; `tail -f` and `head` stream
TAIL_PIPE = re.compile(r"\|\s*tail(?![^|;&]*\s-[A-Za-z]*[fF])(?:\s|$)")
TAIL_PIPE_NOTE = (
    "This command pipes its output into `tail`, which prints only when the command ends: the rest "
    "arrives then. To watch it as it runs, log to a file (`… > test.log 2>&1`) and follow that."
)
TIMED_OUT = "stopped: it ran longer than the background task timeout"  # the stop reason the daemon gives it


def timed_out(row: TaskRow) -> bool:
    """The daemon stopped it at the timeout: a stop no one asked for (the owner's Stop, its agent's or the cancel of
    its request is one they did)."""
    return row.outcome == "stopped" and (row.stop_reason or "").startswith(TIMED_OUT)


@dataclass
class _Follow:
    """What the daemon keeps in memory about a running task it follows."""

    stream: ConsoleStream = field(default_factory=lambda: ConsoleStream(lines=False))  # for its test counts
    output: Follower = field(init=False)
    last_output_at: float | None = None
    quiet_seconds: float = 0.0
    output_since_tick: bool = False
    old_output: int = 0  # after a restart: the output there was before (read again, it is not new output)


@dataclass(frozen=True)
class TaskView:
    row: TaskRow
    state: str  # running | stopping | ended
    quiet_minutes: int | None  # "no output for N min" (from 1 minute on)
    quiet: bool  # no output for `quiet_after` or longer
    tail_pipe: bool
    tests: dict[str, object] | None

    @property
    def note(self) -> str | None:
        """What to say under a running task's output: why it stops there, if it pipes into `tail`."""
        return TAIL_PIPE_NOTE if self.tail_pipe and self.state != "ended" else None


def task_status(view: TaskView) -> str:
    row = view.row
    if view.state == "stopping":
        return "Stopping…"
    if view.state == "running":
        return f"running, no output for {view.quiet_minutes} min" if view.quiet_minutes else "running"
    if row.outcome == "failed":
        return f"failed (exit {row.exit_code})"
    return {"unknown": "ended, result unknown"}.get(row.outcome or "unknown", row.outcome or "ended")


class BackgroundTasks:
    def __init__(
        self,
        store: Store,
        ledger: Ledger,
        supervisor: Supervisor,
        tasks_dir: Path,
        events: EventBus,
        wall: Callable[[], float],
        mono: Callable[[], float],
        environment: Callable[[AgentRow], dict[str, str]],
        on_change: Callable[[str, TaskRow], None] = lambda _what, _task: None,
    ) -> None:
        """`on_change("started" | "ended", task)`: a command or monitor started or ended, its row written."""
        self._store, self._ledger, self._supervisor, self._tasks_dir = store, ledger, supervisor, tasks_dir
        self._on_change = on_change
        self._events, self._wall, self._mono, self._environment = events, wall, mono, environment
        self._follows: dict[str, _Follow] = {}
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._stopping: dict[str, asyncio.Future[None]] = {}  # by task
        self._last_tick = mono()

    # --- starting and stopping ---------------------------------------------------------------------------

    def start(
        self, actor: Actor, agent_name: str, command: str, description: str = "", kind: str = "command"
    ) -> TaskRow:
        """Run `command` in the agent's folder under a runner; the owner for any agent, an agent for its own."""
        agent = directory.agent(self._store.conn, agent_name)
        if agent is None:
            raise NotFound(f"there is no agent '{agent_name[:40]}'")
        self._may_touch(actor, agent.name)
        if kind not in KINDS:
            raise Invalid(f"'{kind[:20]}' is not a kind of task; use {' or '.join(KINDS)}")
        if not command.strip():
            raise Invalid("the command is empty")
        now = self._wall()
        with self._store.transaction() as conn:
            task_id = f"T{sql.next_background_number(conn)}"
            task_dir = self._tasks_dir / task_id
            sql.add(
                conn,
                {
                    "id": task_id,
                    "request_id": actor.request_id,
                    "kind": kind,
                    "dir": str(task_dir),
                    "started_at": now,
                    "agent": agent.name,
                    "description": redact(description.strip())[:500],
                    "command": redact(command)[:MAX_COMMAND],
                },
            )
        try:
            self._supervisor.start(task_dir, ["/bin/sh", "-c", command], agent.folder, self._environment(agent))
        except OSError as error:  # the agent hears it from the tool at once: nothing to wake it for later
            with self._store.transaction() as conn:
                sql.update(conn, task_id, {"woke": "not woken: it could not start"})
            self._ended(task_id, Exit(None, f"could not start: {error.strerror or error}"))
            raise Invalid(f"could not start the task: {error.strerror or error}") from None
        self._follow(task_id)
        row = self.get(task_id)
        self._publish("task_started", row)
        self._on_change("started", row)
        return row

    async def stop(self, task_id: str, actor: Actor, reason: str | None = None) -> TaskRow:
        """SIGTERM to the task's process group, SIGKILL after `stop_grace`; it shows as stopping until it ended."""
        row = self.get(task_id)
        self._may_touch(actor, row.agent or "")
        if row.kind == "request":
            raise Conflict(
                f"{row.id} is the agent process of {row.request_id}: cancel the request instead "
                f"(cox cancel {row.request_id})"
            )
        if row.ended_at is not None:
            return row
        if row.stopping_at is None:
            with self._store.transaction() as conn:
                sql.update(
                    conn, row.id, {"stopping_at": self._wall(), "stop_reason": reason or f"stopped by {actor.name}"}
                )
        if row.id not in self._stopping:
            grace = current(self._store.conn, "stop_grace")
            stopping = self._stopping[row.id] = asyncio.ensure_future(self._supervisor.stop(Path(row.dir), grace))
            stopping.add_done_callback(lambda _: self._stopping.pop(row.id, None))
        return self.get(task_id)

    async def stop_all_of(self, request_id: str, reason: str) -> list[str]:
        """Stop every background task `request_id` started and wait until each has ended; returns them named
        ("T3 (npm test)")."""
        rows = [row for row in sql.running(self._store.conn) if row.request_id == request_id and row.kind in KINDS]
        for row in rows:
            await self.stop(row.id, SYSTEM, reason)
        waits = [w for row in rows for w in (self._stopping.get(row.id), self._watchers.get(row.id)) if w is not None]
        await asyncio.gather(*(asyncio.shield(w) for w in waits), return_exceptions=True)
        return [f"{row.id} ({row.description or row.command[:60]})" for row in rows]

    # --- reading ------------------------------------------------------------------------------------------

    def get(self, task_id: str) -> TaskRow:
        row = sql.get(self._store.conn, task_id)
        if row is None:
            raise NotFound(f"there is no task {task_id[:40]}")
        return row

    def visible(self, task_id: str, actor: Actor) -> TaskRow:
        """A task its reader may see: the owner, its agent, or the person whose request started it."""
        row = self.get(task_id)
        if not self._requested_by(row, actor):
            self._may_touch(actor, row.agent or "")
        return row

    def _requested_by(self, row: TaskRow, actor: Actor) -> bool:
        if actor.kind != "person" or row.request_id is None:
            return False
        request = requests_sql.get(self._store.conn, row.request_id)
        return request is not None and request.requester == actor.name

    def listing(self, actor: Actor, agent: str | None = None) -> list[TaskView]:
        """Running tasks, and those that ended in the last hour (the newest 20 of each agent)."""
        if actor.kind == "agent":
            agent = actor.name
        elif not actor.is_owner and actor.kind != "person":
            raise Forbidden("only the owner, the agents and the people whose requests started them see tasks")
        now, kept = self._wall(), dict[str, int]()
        quiet_after = current(self._store.conn, "quiet_after")
        views = []
        for row in sql.background(self._store.conn, agent):
            if actor.kind == "person" and not self._requested_by(row, actor):
                continue
            if row.ended_at is not None:
                kept[row.agent or ""] = kept.get(row.agent or "", 0) + 1
                if now - row.ended_at > KEEP_ENDED_SECONDS or kept[row.agent or ""] > KEEP_ENDED_PER_AGENT:
                    continue
            views.append(self.view(row, quiet_after))
        return views

    def view(self, row: TaskRow, quiet_after: int | None = None) -> TaskView:
        """The task as people see it: what the follower knows now, over what the database last heard."""
        follow = self._follows.get(row.id)
        state = "ended" if row.ended_at is not None else "stopping" if row.stopping_at is not None else "running"
        quiet_seconds = follow.quiet_seconds if follow and state != "ended" else 0.0
        if quiet_after is None:
            quiet_after = current(self._store.conn, "quiet_after")
        tests = follow.stream.tests.summary() if follow else json.loads(row.tests) if row.tests else None
        if tests is not None and tests.get("runner") is None:
            tests = None
        if follow and follow.last_output_at:
            row = replace(row, last_output_at=follow.last_output_at)
        return TaskView(
            row,
            state,
            int(quiet_seconds // 60) if quiet_seconds >= QUIET_NOTICE_SECONDS else None,
            quiet_seconds >= quiet_after,
            bool(TAIL_PIPE.search(row.command)),
            tests,
        )

    def agent_states(self) -> dict[str, str]:
        """running_turn (a request runs on it) or background_only (it answered; tasks run on); absent: idle."""
        states = dict.fromkeys(
            (row.agent or "" for row in sql.running(self._store.conn) if row.kind in KINDS), "background_only"
        )
        states.update(
            dict.fromkeys((r.agent for r in requests_sql.in_states(self._store.conn, (State.RUNNING,))), "running_turn")
        )
        return states

    # --- following ----------------------------------------------------------------------------------------

    def reattach(self) -> None:
        """At start: follow every task whose runner lives; end the others as their runner recorded, or unknown."""
        for row in sql.running(self._store.conn):
            if row.kind not in KINDS or row.id in self._watchers:
                continue
            self._follow(row.id, again=True)  # its output is read again from the start: test counts over all of it

    async def tick(self) -> None:
        """Every 10 s: quiet time (awake time only: the monotonic clock stands still while the machine sleeps),
        the timeout, and what the followers learnt (last output, test counts) written down."""
        now = self._mono()
        elapsed, self._last_tick = min(now - self._last_tick, 15.0), now
        timeout = current(self._store.conn, "task_timeout")
        for task_id, follow in list(self._follows.items()):
            follow.quiet_seconds = 0.0 if follow.output_since_tick else follow.quiet_seconds + elapsed
            follow.output_since_tick = False
            row = sql.get(self._store.conn, task_id)
            if row is None:
                continue
            self._save(row, follow)
            idle_since = self._idle_since(row)
            if timeout and row.stopping_at is None and idle_since is not None and self._wall() - idle_since >= timeout:
                await self._time_out(row, timeout)

    def _idle_since(self, row: TaskRow) -> float | None:
        """Since when nothing but background tasks keeps the task's conversation going: its timeout counts from there
        and starts again whenever a turn of the conversation runs (None: one runs or is queued now). An owner's own
        task counts from its start."""
        if row.request_id is None:
            return row.started_at
        since = requests_sql.conversation_idle_since(self._store.conn, row.request_id)
        return None if since is None else max(since, row.started_at)

    async def close(self) -> None:
        for watcher in self._watchers.values():
            watcher.cancel()
        await asyncio.gather(*self._watchers.values(), return_exceptions=True)

    def _follow(self, task_id: str, again: bool = False) -> None:
        """Read the task's output as it comes, until it ends. `again` (after a restart): its last output and quiet
        time come from its output file, not from reading it again now."""
        follow = self._follows[task_id] = _Follow()
        task_dir = Path(self.get(task_id).dir)
        follow.output = Follower(task_dir / "output", lambda data: self._heard(follow, data))
        if again:
            with contextlib.suppress(OSError):
                found = (task_dir / "output").stat()
                follow.old_output, follow.last_output_at = found.st_size, found.st_mtime
                follow.quiet_seconds = max(0.0, self._wall() - found.st_mtime)

        async def watch() -> None:
            outcome = await follow.output.until(self._supervisor.wait(task_dir), FOLLOW_SECONDS)
            follow.stream.finish()
            self._watchers.pop(task_id, None)
            self._ended(task_id, outcome)

        self._watchers[task_id] = asyncio.create_task(watch(), name=f"follow {task_id}")

    def _heard(self, follow: _Follow, data: bytes) -> None:
        """New output: through the task's pipeline (its test counts), and its time noted unless it is old output
        read again."""
        follow.stream.feed(data)
        if follow.output.offset > follow.old_output:
            follow.last_output_at, follow.output_since_tick = self._wall(), True

    def _save(self, row: TaskRow, follow: _Follow) -> None:
        """Write down what the follower learnt, if the database does not have it yet."""
        tests = json.dumps(follow.stream.tests.summary())
        if tests != row.tests or follow.last_output_at != row.last_output_at:
            with self._store.transaction() as conn:
                sql.update(conn, row.id, {"tests": tests, "last_output_at": follow.last_output_at})

    def _ended(self, task_id: str, outcome: Exit) -> None:
        follow = self._follows.pop(task_id, None)
        row = sql.get(self._store.conn, task_id)
        if row is None or row.ended_at is not None:
            return
        if follow is not None:
            self._save(row, follow)
        code = outcome.returncode
        how = (
            "stopped"
            if row.stopping_at is not None
            else "unknown"
            if code is None
            else "completed"
            if code == 0
            else "failed"
        )
        with self._store.transaction() as conn:
            sql.finish(conn, task_id, self._wall(), code, how)
        if outcome.survivors and row.request_id:
            self._ledger.note(
                row.request_id, f"background task {row.id}: still running after SIGKILL: {', '.join(outcome.survivors)}"
            )
        ended = self.get(task_id)
        self._publish("task_finished" if how == "completed" else "task_failed", ended)
        self._on_change("ended", ended)

    async def _time_out(self, row: TaskRow, timeout: int) -> None:
        hours = f"{timeout / 3600:g} h" if timeout >= 3600 else f"{timeout // 60} min"
        why = f"{TIMED_OUT} ({hours})"
        await self.stop(row.id, SYSTEM, why)
        if row.request_id:
            self._ledger.note(row.request_id, f"background task {row.id} ({row.description or row.command[:60]}) {why}")

    def _publish(self, kind: str, row: TaskRow) -> None:
        self._events.publish(TaskChanged(row, kind, timed_out(row)))

    @staticmethod
    def _may_touch(actor: Actor, agent: str) -> None:
        if actor.is_owner or actor.kind == "system" or (actor.kind == "agent" and actor.name == agent):
            return
        raise Forbidden("background tasks are the owner's and their own agent's to start, read and stop")
