"""Runs approved requests: starts the agent's command under a runner, follows it to its end (also across a daemon
restart) and writes the outcome to the ledger. A request's command never starts a second time."""

import asyncio
import json
import logging
import os
import signal
from collections.abc import Callable
from pathlib import Path

from desktop.core.ledger import Ledger
from desktop.core.settings import current
from desktop.core.states import State
from desktop.runtimes.base import Runtime
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.db import Store
from desktop.store.rows import RequestRow
from desktop.tasks.supervisor import Exit, Supervisor, tail

log = logging.getLogger(__name__)


class RequestRuns:
    def __init__(self, store: Store, ledger: Ledger, supervisor: Supervisor, runtimes: dict[str, Runtime],
                 tasks_dir: Path, wall: Callable[[], float], on_finished: Callable[[], None]) -> None:
        self._store, self._ledger, self._supervisor = store, ledger, supervisor
        self._runtimes, self._tasks_dir, self._wall = runtimes, tasks_dir, wall
        self._on_finished = on_finished
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._stops: set[asyncio.Task[None]] = set()

    async def launch(self, request: RequestRow) -> None:
        """The dispatcher's launcher: `request` is already `running` in the ledger."""
        agent = directory.agent(self._store.conn, request.agent)
        runtime = self._runtimes.get(agent.runtime) if agent else None
        if agent is None or runtime is None:
            self._ledger.finish(request.id, None, "", failure=f"agent {request.agent} has no usable runtime")
            self._on_finished()
            return
        attempt = len(tasks_sql.for_request(self._store.conn, request.id)) + 1
        task_id = f"{request.id}.{attempt}"
        task_dir = self._tasks_dir / task_id
        task_dir.mkdir(parents=True)
        references = self._write_references(request, task_dir)
        launch = runtime.launch(request, agent, references)
        with self._store.transaction() as conn:
            tasks_sql.add(conn, task_id, request.id, "request", str(task_dir), self._wall())
        try:
            self._supervisor.start(task_dir, launch.argv, agent.folder, {**os.environ, **launch.env})
        except OSError as error:
            self._end(request.id, task_id, task_dir, Exit(None, f"could not start the runner: {error}"))
            return
        self._follow(request.id, task_id, task_dir)

    async def cancel(self, request: RequestRow) -> None:
        """For the shell agent the safe point is now: stop the command's process group."""
        task = self._current_task(request.id)
        if task is not None:
            await self._supervisor.stop(Path(task.dir), current(self._store.conn, "cancel_grace"))

    async def reattach(self, why: str) -> None:
        """Take up every running request nobody is following: follow it if its runner lives, finish it if its
        command ended, fail it if the runner is gone without a word. Never start it again."""
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            if request.id in self._watchers:
                continue
            task = self._current_task(request.id)
            if task is None:
                self._ledger.finish(request.id, None, "", failure="interrupted; outcome unknown")
                continue
            task_dir = Path(task.dir)
            if self._supervisor.runner(task_dir) is None:
                self._end(request.id, task.id, task_dir, await self._supervisor.wait(task_dir))
                continue
            self._ledger.resume(request.id, f"{why}; the command was still running, following it again")
            self._follow(request.id, task.id, task_dir)
            if request.cancel_requested:
                stop = asyncio.create_task(self.cancel(request))
                self._stops.add(stop)
                stop.add_done_callback(self._stops.discard)

    async def recheck(self, why: str) -> None:
        """After sleep or a clock jump: close the gap in the timeline of each request whose command still runs,
        and take up any that nobody follows."""
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            task = self._current_task(request.id)
            if request.id in self._watchers and task and self._supervisor.runner(Path(task.dir)) is not None:
                self._ledger.resume(request.id, f"{why}; the command is still running")
        await self.reattach(why)

    def interrupt_running(self, why: str) -> None:
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            self._ledger.interrupt(request.id, why)

    def output_path(self, request_id: str) -> Path | None:
        task = self._current_task(request_id)
        return Path(task.dir) / "output" if task else None

    async def close(self) -> None:
        """Stop following (the commands go on under their runners)."""
        for watcher in list(self._watchers.values()):
            watcher.cancel()
        await asyncio.gather(*self._watchers.values(), return_exceptions=True)

    def _follow(self, request_id: str, task_id: str, task_dir: Path) -> None:
        async def follow() -> None:
            outcome = await self._supervisor.wait(task_dir)
            self._watchers.pop(request_id, None)
            self._end(request_id, task_id, task_dir, outcome)

        self._watchers[request_id] = asyncio.create_task(follow(), name=f"follow {request_id}")

    def _end(self, request_id: str, task_id: str, task_dir: Path, outcome: Exit) -> None:
        code = outcome.returncode
        with self._store.transaction() as conn:
            tasks_sql.finish(conn, task_id, self._wall(), code, "unknown" if code is None else
                             "completed" if code == 0 else "failed")
        failure = outcome.error
        if failure is None and code is not None and code < 0:
            failure = f"killed by {signal.Signals(-code).name}"
        self._ledger.finish(request_id, code, tail(task_dir), failure=failure)
        self._on_finished()

    def _current_task(self, request_id: str) -> tasks_sql.TaskRow | None:
        tasks = tasks_sql.for_request(self._store.conn, request_id)
        return tasks[-1] if tasks else None

    def _write_references(self, request: RequestRow, task_dir: Path) -> Path | None:
        if not request.refs:
            return None
        context = []
        for ref in request.refs:
            row = requests_sql.get(self._store.conn, ref)
            if row is not None:
                context.append({"id": row.id, "prompt": row.prompt, "state": row.state, "result": row.result})
        path = task_dir / "references.json"
        path.write_text(json.dumps(context, indent=2))
        return path
