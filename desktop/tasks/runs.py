"""Runs approved requests: starts the agent's command under a runner, follows its output and its end (also across a
daemon restart), and writes the outcome to the ledger. A request's work never starts a second time from scratch:
when an agent CLI dies mid-turn, the same conversation is resumed under the same request."""

import asyncio
import logging
import os
import shlex
import shutil
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import psutil

from desktop.console.redact import redact
from desktop.core.ledger import Ledger
from desktop.core.settings import current
from desktop.core.states import State
from desktop.reentry import relay_command
from desktop.runtimes.base import Event, Launch, Parser, Runtime, TurnTools, context_block, readable_error
from desktop.sessions import sql as sessions_sql
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow, RequestRow, TaskRow
from desktop.tasks.background import MAX_COMMAND
from desktop.tasks.follower import EVENTS_PER_TICK, Follower, Lines
from desktop.tasks.supervisor import Exit, Supervisor, tail

log = logging.getLogger(__name__)
MAX_RESUMES = 3
MAX_EVENT_LINE = 16 << 20  # an unfinished line longer than this is not an event; it is dropped, not kept growing
TAIL_SECONDS = 0.05
WORK_POLL = 0.2  # seconds between looks, while a cancel waits for what runs under the CLI to end
CLI_PROCESSES = ("node", "codex", "gemini", "copilot")  # what an agent CLI runs of its own (Codex: a native binary)


@dataclass
class _Run:
    request_id: str
    task_id: str
    task_dir: Path
    runtime: Runtime
    parser: Parser
    output: Follower = field(init=False)  # its runtime's events, read from its output file
    result: Event | None = None
    said: str = ""  # what the model last said: a turn that ends without a result is reported in these words
    errors: list[str] = field(default_factory=list)
    fatal: str | None = None  # an error that retrying will not mend: the run is stopped and the request fails
    tools_at_work: int = 0  # tool calls started and not yet finished
    interrupted: bool = False


class RequestRuns:
    def __init__(
        self,
        store: Store,
        ledger: Ledger,
        supervisor: Supervisor,
        runtimes: dict[str, Runtime],
        tasks_dir: Path,
        wall: Callable[[], float],
        on_finished: Callable[[], None],
        turn_tools: Callable[[str, Path], TurnTools],
        on_event: Callable[[RequestRow, Event], None] = lambda request, event: None,
        environment: Callable[[], dict[str, str]] = lambda: dict(os.environ),
        tools_ready: Callable[[], Awaitable[None]] = lambda: asyncio.sleep(0),
        stop_tasks: Callable[[str], Awaitable[list[str]]] = lambda request_id: asyncio.sleep(0, []),
    ) -> None:
        """`tools_ready`: waits until the MCP server the agent CLIs call is up. `stop_tasks(request_id)`: ends the
        background tasks a request started and returns what it stopped."""
        self._store, self._ledger, self._supervisor = store, ledger, supervisor
        self._runtimes, self._tasks_dir, self._wall = runtimes, tasks_dir, wall
        self._on_finished, self._on_event, self._environment = on_finished, on_event, environment
        self._turn_tools, self._tools_ready, self._stop_tasks = turn_tools, tools_ready, stop_tasks
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._runs: dict[str, _Run] = {}  # the runs followed now, by request
        self._resuming: set[str] = set()  # requests waiting out a resume's backoff
        self._background: set[asyncio.Task[None]] = set()

    # --- starting -----------------------------------------------------------------------------------------

    async def launch(self, request: RequestRow) -> None:
        """The dispatcher's launcher: `request` is already `running` in the ledger."""
        await self._start(request, resuming=False)

    async def _start(self, request: RequestRow, resuming: bool) -> None:
        """Start a turn; whatever keeps it from starting fails the request with the reason, so the queue goes on."""
        try:
            await self._start_turn(request, resuming)
        except Exception as error:
            log.exception("%s: the turn could not start", request.id)
            self._fail(request.id, f"the turn could not start: {error}")

    async def _start_turn(self, request: RequestRow, resuming: bool) -> None:
        agent = directory.agent(self._store.conn, request.agent)
        runtime = self._runtimes.get(agent.runtime) if agent else None
        if agent is None or runtime is None:
            return self._fail(request.id, f"agent {request.agent} has no usable runtime")
        env = self.agent_env(agent)
        missing = runtime.missing(env)
        if missing:
            return self._fail(request.id, f"{runtime.name}: {missing}")
        if runtime.resumable:  # an agent CLI: the MCP server it calls must be up before its first call
            await self._tools_ready()
        attempt = self._attempts(request.id) + 1
        task_id = f"{request.id}.{attempt}"
        task_dir = self._tasks_dir / task_id
        if task_dir.exists():  # a start the daemon did not get to record before it stopped: nothing of it ran
            shutil.rmtree(task_dir)
        task_dir.mkdir(parents=True)
        launch: Launch | None
        tools = self._turn_tools(request.id, task_dir)
        if resuming:
            launch = runtime.resume(request, agent, task_dir, env, tools)
            if launch is None:
                return self._fail(request.id, f"{runtime.name} cannot resume this request (no conversation)")
        else:
            launch = self._first_launch(request, agent, runtime, task_dir, env, tools)
        if launch.conversation_ref and launch.conversation_ref != request.conversation_ref:
            self._ledger.record_conversation(request.id, launch.conversation_ref)
        with self._store.transaction() as conn:
            tasks_sql.add(
                conn,
                {
                    "id": task_id,
                    "request_id": request.id,
                    "kind": "request",
                    "dir": str(task_dir),
                    "started_at": self._wall(),
                    "agent": agent.name,
                    "description": redact(f"{request.id}: {request.prompt.strip().splitlines()[0]}")[:500],
                    "command": redact(shlex.join(launch.argv))[:MAX_COMMAND],
                },
            )
        run = self._run(request.id, task_id, task_dir, runtime)
        try:
            self._supervisor.start(task_dir, launch.argv, agent.folder, {**env, **launch.env})
        except (OSError, ValueError) as error:  # ValueError: an argument holds a NUL byte
            why = getattr(error, "strerror", None) or error
            await self._end(run, Exit(None, f"could not start {launch.argv[0]}: {why}"))
            return None
        self._follow(run)
        return None

    def _first_launch(
        self,
        request: RequestRow,
        agent: AgentRow,
        runtime: Runtime,
        task_dir: Path,
        env: dict[str, str],
        tools: TurnTools,
    ) -> Launch:
        """A new turn; in a session an agent started, the next prompt continues the runtime's conversation of the
        ones before it (a runtime that cannot resume starts afresh in the same folder)."""
        references = self._references(request)
        if request.continuation_of is not None and runtime.resumable:  # the next turn of the same conversation
            origin = self._ledger.get(request.continuation_of)
            if origin.conversation_ref is not None:
                carried_on = replace(request, conversation_ref=origin.conversation_ref)
                launch = runtime.resume(carried_on, agent, task_dir, env, tools, request.prompt)
                if launch is not None:
                    return launch
        if sessions_sql.get(self._store.conn, agent.name) is not None:
            previous = sessions_sql.last_conversation_ref(self._store.conn, agent.name, request.id)
            if previous is not None and runtime.resumable:
                prompt = context_block(references) + request.prompt
                carried_on = replace(request, conversation_ref=previous)
                launch = runtime.resume(carried_on, agent, task_dir, env, tools, prompt)
                if launch is not None:
                    return launch
        return runtime.launch(request, agent, references, task_dir, env, tools)

    # --- cancel, restart, sleep ---------------------------------------------------------------------------

    async def cancel(self, request: RequestRow, asking: bool = False) -> None:
        """Stop at the runtime's next safe point, and end the background tasks the request started. The shell
        agent's safe point is now; so is a turn `asking` a question (it waits on Coxswain's own tool, nothing else is
        at work), and a model call in flight (the CLIs that cannot be told to stop before the next tool are
        interrupted at once while no tool runs, else as soon as the tool finishes)."""
        self._spawn(self._stop_tasks(request.id))
        task = self._current_task(request.id)
        if task is None:
            return
        runtime = self._runtime_of(request)
        if runtime is not None and runtime.cancel_mode == "hook":
            self._cancel_flag(request.id).touch()  # the runtime's hook reads it before the next tool call
            return
        run = self._runs.get(request.id)
        if runtime is not None and runtime.cancel_mode == "after_tool" and run is not None:
            if asking or not self._tool_at_work(run):
                self._interrupt(run)
            else:  # `_apply` interrupts it when the CLI says the tool call ended, or this when its processes did
                self._spawn(self._interrupt_when_idle(run))
            return
        await self._supervisor.stop(Path(task.dir), current(self._store.conn, "cancel_grace"))

    def _tool_at_work(self, run: _Run) -> bool:
        """The CLI said a tool call started and has not said it finished, or (Codex says nothing of a command until
        it ended) a process runs under the CLI that is not the CLI itself or Coxswain's MCP relay."""
        run.output.catch_up()
        relay = relay_command()[-1]

        def own(process: psutil.Process) -> bool:
            return process.name().startswith(CLI_PROCESSES) or relay in process.cmdline()

        return run.tools_at_work > 0 or self._supervisor.runs_besides(run.task_dir, own)

    async def _interrupt_when_idle(self, run: _Run) -> None:
        """A process of the tool call can outlive the CLI's word that it ended (a command's shell still exiting, or
        one it left behind): waiting for the next "ended" would let the next tool call run. Look until none is left."""
        while not run.interrupted and self._runs.get(run.request_id) is run:
            await asyncio.sleep(WORK_POLL)
            if not self._tool_at_work(run):
                self._interrupt(run)

    def _interrupt(self, run: _Run) -> None:
        """Stop the turn at its safe point: the CLI and everything under it (a single SIGINT, as at a terminal, is
        not enough: Copilot took it for "cancel this model call" and went on to the next tool)."""
        if run.interrupted:
            return
        run.interrupted = True
        self._spawn(self._supervisor.stop(run.task_dir, current(self._store.conn, "cancel_grace")))

    def cancel_soon(self, request: RequestRow, asking: bool = False) -> None:
        self._spawn(self.cancel(request, asking))

    async def reattach(self, why: str) -> None:
        """Take up every running request nobody follows: follow it if its runner lives, finish (or resume) it if
        its command ended, start it if its command never began. A shell command that began never starts again."""
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            if request.id in self._watchers or request.id in self._resuming:
                continue
            task = self._current_task(request.id)
            runtime = self._runtime_of(request)
            if runtime is None:
                self._fail(request.id, "interrupted; outcome unknown")
                continue
            if task is None or self._never_started(task):  # the daemon stopped before its runner began: run it
                if task is not None:
                    with self._store.transaction() as conn:
                        tasks_sql.finish(conn, task.id, self._wall(), None, "never started")
                self._ledger.note(request.id, f"{why}; the command had not started, starting it now")
                await self._start(request, resuming=False)
                continue
            run = self._run(request.id, task.id, Path(task.dir), runtime)
            if self._supervisor.runner(run.task_dir) is None:  # it ended unfollowed: read what it wrote, then end it
                await self._follow(run)
                continue
            self._ledger.resume(request.id, f"{why}; the command was still running, following it again")
            self._follow(run)
            if request.cancel_requested:
                self.cancel_soon(request)

    async def recheck(self, why: str) -> None:
        """After sleep or a clock jump: close the gap in the timeline of each request whose command still runs,
        and take up any that nobody follows."""
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            task = self._current_task(request.id)
            if request.id in self._watchers and task and self._supervisor.runner(Path(task.dir)) is not None:
                self._ledger.resume(request.id, f"{why}; the command is still running")
        await self.reattach(why)

    def _never_started(self, task: TaskRow) -> bool:
        """The runner writes runner.json before it starts the command: without it, and with no runner alive,
        nothing of the command can have run."""
        task_dir = Path(task.dir)
        return not (task_dir / "runner.json").exists() and self._supervisor.runner(task_dir) is None

    def interrupt_running(self, why: str) -> None:
        for request in requests_sql.in_states(self._store.conn, (State.RUNNING,)):
            self._ledger.interrupt(request.id, why)

    def agent_statuses(self, agents: list[AgentRow]) -> list[str]:
        """For each agent "ready", or what stops its runtime from working ("claude: not installed")."""
        base = self._environment()  # one read of the keyring for the whole list
        statuses = []
        for agent in agents:
            runtime = self._runtimes.get(agent.runtime)
            missing = runtime.missing(self.agent_env(agent, base)) if runtime else "unknown runtime"
            statuses.append(f"{agent.runtime}: {missing}" if missing else "ready")
        return statuses

    def agent_env(self, agent: AgentRow, base: dict[str, str] | None = None) -> dict[str, str]:
        extra = agent.options.get("env")
        variables = {str(k): str(v) for k, v in extra.items()} if isinstance(extra, dict) else {}
        return {**(self._environment() if base is None else base), **variables}

    def output_path(self, request_id: str) -> Path | None:
        task = self._current_task(request_id)
        return Path(task.dir) / "output" if task else None

    async def close(self) -> None:
        """Stop following (the commands go on under their runners)."""
        pending = [*self._watchers.values(), *self._background]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)

    # --- following ----------------------------------------------------------------------------------------

    def _run(self, request_id: str, task_id: str, task_dir: Path, runtime: Runtime) -> _Run:
        run, lines = _Run(request_id, task_id, task_dir, runtime, runtime.parser()), Lines(MAX_EVENT_LINE)
        run.output = Follower(task_dir / "output", lambda data: self._parse(run, lines.feed(data)), EVENTS_PER_TICK)
        return run

    def _follow(self, run: _Run) -> "asyncio.Task[None]":
        async def follow() -> None:
            outcome = await run.output.until(self._supervisor.wait(run.task_dir), TAIL_SECONDS)
            self._watchers.pop(run.request_id, None)
            self._runs.pop(run.request_id, None)
            await self._end(run, outcome)

        self._runs[run.request_id] = run
        watcher = self._watchers[run.request_id] = asyncio.create_task(follow(), name=f"follow {run.request_id}")
        return watcher

    def _parse(self, run: _Run, lines: list[str]) -> None:
        """Feed the lines the command wrote to the runtime's parser."""
        for line in lines:
            for event in run.parser.feed(line):
                self._apply(run, event)

    def _apply(self, run: _Run, event: Event) -> None:
        row = requests_sql.get(self._store.conn, run.request_id)
        if row is None or row.state != State.RUNNING:
            return
        if event.kind == "conversation" and event.text and event.text != row.conversation_ref:
            self._ledger.record_conversation(row.id, event.text)
        elif event.kind == "progress" and event.value is not None and event.value != row.progress:
            self._ledger.record_progress(row.id, event.value)
        elif event.kind == "result":
            run.result = event
        elif event.kind == "text" and event.text.strip():
            run.said = event.text
        elif event.kind == "tool_started":
            run.tools_at_work += 1
        elif event.kind == "error":
            run.errors.append(event.text)
            if event.data.get("fatal") and run.fatal is None:
                run.fatal = event.text
                self._supervisor.signal_group(run.task_dir, signal.SIGTERM)
        elif event.kind == "tool_finished":
            run.tools_at_work = max(0, run.tools_at_work - 1)
            if row.cancel_requested and run.runtime.cancel_mode == "after_tool":
                self._interrupt(run)  # the safe point: between two tool calls
        self._on_event(row, event)

    # --- ending -------------------------------------------------------------------------------------------

    async def _end(self, run: _Run, outcome: Exit) -> None:
        code = outcome.returncode
        with self._store.transaction() as conn:
            tasks_sql.finish(
                conn,
                run.task_id,
                self._wall(),
                code,
                "unknown" if code is None else "completed" if code == 0 else "failed",
            )
        row = requests_sql.get(self._store.conn, run.request_id)
        if row is None or row.state != State.RUNNING:
            return
        if outcome.survivors:
            self._ledger.note(row.id, f"still running after SIGKILL: {', '.join(outcome.survivors)}")
        self._ledger.withdraw_questions(row.id, "the turn ended before it was answered")
        why = outcome.error or (f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else None)
        if row.cancel_requested:
            await self._cancelled(row.id, code, self._words(run) or "cancelled before the agent finished its turn")
            return
        if run.fatal is not None:
            fatal = readable_error(run.fatal)
            self._finish(row.id, code, fatal, failure=fatal)
        elif run.result is not None:
            reason = run.result.text or (run.errors[-1] if run.errors else "the agent reported an error")
            failure = readable_error(reason) if run.result.is_error else None
            self._finish(row.id, 0 if failure is None else code, failure or run.result.text, failure=failure)
        elif run.runtime.resumable and row.conversation_ref and (attempts := self._attempts(row.id)) <= MAX_RESUMES:
            self._ledger.interrupt(
                row.id, f"the {run.runtime.name} process ended mid-turn ({why or f'exit code {code}'})"
            )
            self._resuming.add(row.id)
            self._spawn(self._resume_later(row.id, 2 ** (attempts - 1)))
            return
        elif not run.runtime.resumable:  # the shell agent: its exit code is the outcome
            self._finish(row.id, code, tail(run.task_dir), failure=why)
        else:
            detail = readable_error(run.errors[-1]) if run.errors else why or f"exit code {code}"
            failure = f"{run.runtime.name} ended without finishing its turn: {detail}"
            self._finish(row.id, code, run.said, failure=failure)
        self._on_finished()

    async def _cancelled(self, request_id: str, code: int | None, result: str) -> None:
        """Cancelled, once nothing of the request runs: its background tasks are ended first and named."""
        stopped = await self._stop_tasks(request_id)
        if stopped:
            self._ledger.note(request_id, f"stopped with the request: {', '.join(stopped)}")
        row = requests_sql.get(self._store.conn, request_id)
        if row is not None and row.state == State.RUNNING:
            self._finish(request_id, code, result)
            self._on_finished()

    def _attempts(self, request_id: str) -> int:
        return len(tasks_sql.turns(self._store.conn, request_id))

    async def _resume_later(self, request_id: str, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
        finally:
            self._resuming.discard(request_id)
        row = requests_sql.get(self._store.conn, request_id)
        if row is None or row.state != State.RUNNING:
            return
        if row.cancel_requested:
            await self._cancelled(row.id, None, "cancelled before the agent finished its turn")
            return
        dead = self._current_task(row.id)
        left = await self._supervisor.end_orphans(Path(dead.dir), 0) if dead else []
        if left:  # its runner is gone too, or it would have ended them
            self._ledger.note(row.id, f"ended what the interrupted attempt left running: {', '.join(left)}")
        self._ledger.resume(row.id, f"continuing conversation {row.conversation_ref}")
        await self._start(row, resuming=True)

    @staticmethod
    def _words(run: _Run) -> str:
        """What a person reads of a turn that ended without its result: what the agent said last (an agent CLI's
        raw output is an event stream), or what the shell command printed last."""
        if run.result is not None:
            return run.result.text
        return run.said if run.runtime.resumable else tail(run.task_dir)

    def _finish(self, request_id: str, exit_code: int | None, result: str, failure: str | None = None) -> None:
        """The ledger's finish, with what the agent printed redacted: results and reasons are shown everywhere."""
        self._ledger.finish(request_id, exit_code, redact(result), failure=None if failure is None else redact(failure))

    def _fail(self, request_id: str, why: str) -> None:
        self._finish(request_id, None, "", failure=why)
        self._on_finished()

    # --- helpers ------------------------------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _runtime_of(self, request: RequestRow) -> Runtime | None:
        agent = directory.agent(self._store.conn, request.agent)
        return self._runtimes.get(agent.runtime) if agent else None

    def _cancel_flag(self, request_id: str) -> Path:
        return self._tasks_dir / f"{request_id}.cancel"

    def _current_task(self, request_id: str) -> TaskRow | None:
        """The request's latest turn (never one of the background tasks it started)."""
        turns = tasks_sql.turns(self._store.conn, request_id)
        return turns[-1] if turns else None

    def _references(self, request: RequestRow) -> list[dict[str, Any]]:
        context = []
        for ref in request.refs:
            row = requests_sql.get(self._store.conn, ref)
            if row is not None:
                context.append({"id": row.id, "prompt": row.prompt, "state": row.state, "result": row.result})
        return context
