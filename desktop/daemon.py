"""The composition root: builds the store, ledger, scheduler, dispatcher, runtimes and API, and runs them on
whatever asyncio loop it is given (plain asyncio for `cox daemon`, qasync inside the tray app)."""

import asyncio
import contextlib
import gc
import json
import logging
import os
import signal
import time
from collections.abc import Coroutine
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.date import DateTrigger

from desktop.api.app import Services, build
from desktop.api.serving import listening_socket, serve, shut
from desktop.connectors import setup as connectors
from desktop.connectors.owned import ChatSetup
from desktop.connectors.service import Chat
from desktop.console.redact import redact
from desktop.core import settings
from desktop.core.actors import SYSTEM, Actor
from desktop.core.agents import Agents
from desktop.core.audit_log import AuditLog
from desktop.core.clock import Clock, GapDetector, SystemClock
from desktop.core.dispatcher import Dispatcher
from desktop.core.durations import format_duration
from desktop.core.errors import Conflict, Invalid
from desktop.core.events import EventBus, RequestChanged, RoomChanged, RuntimeNews
from desktop.core.ledger import Ledger
from desktop.core.owner_settings import OwnerSettings
from desktop.core.principals import OWNER, Principals
from desktop.core.readiness import Readiness
from desktop.core.states import Action, State
from desktop.platform.credentials import owner_token
from desktop.platform.instance import InstanceLock
from desktop.platform.paths import DEFAULT_PORT, Home
from desktop.platform.secrets import Secrets
from desktop.platform.sleep import power_for_platform
from desktop.reentry import relay_command
from desktop.room.listener import RoomListener, not_of_this_computer
from desktop.room.signins import SignIns
from desktop.runtimes import builtin_runtimes
from desktop.runtimes.base import Event, Runtime, TurnTools
from desktop.sessions import views as session_views
from desktop.sessions.rules import Sessions
from desktop.sessions.watching import Watching
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow, RequestRow, TaskRow
from desktop.tasks.background import BackgroundTasks
from desktop.tasks.continuations import CANCELLED, Continuations
from desktop.tasks.runner import write_atomically
from desktop.tasks.runs import RequestRuns
from desktop.tasks.supervisor import Supervisor

log = logging.getLogger(__name__)
GAP_CHECK_SECONDS = 5.0
TASK_CHECK_SECONDS = 10.0


class Daemon:
    def __init__(
        self, home: Home, host: str = "127.0.0.1", port: int = DEFAULT_PORT, clock: Clock | None = None
    ) -> None:
        self.home, self.host, self.port = home, host, port
        self.clock = clock or SystemClock()
        self.runtimes: dict[str, Runtime] = builtin_runtimes()
        self.events = EventBus()
        self.url = ""
        self._lock = InstanceLock(home.lock)
        self._suspended_at: float | None = None
        self._awake_since = 0.0  # the end of the last sleep or clock jump: a turn's longest time counts from there
        self.sleep = power_for_platform(self.suspend, self.resume)
        self._background: set[asyncio.Task[None]] = set()
        self.chat_problems: dict[str, str] = {}
        self._mcp_built = asyncio.Event()

    async def start(self) -> None:
        self._lock.acquire()
        self.home.root.mkdir(parents=True, exist_ok=True, mode=0o700)
        wall = self.clock.wall
        self.store = Store(self.home.database, self.home.backups)
        self.ledger = Ledger(self.store, wall)
        self.principals = Principals(self.store, self.ledger, wall)
        self.principals.set_owner_token(owner_token(self.home.owner_token))
        self.agents = Agents(
            self.store,
            {name: r.permission_modes for name, r in self.runtimes.items()},
            wall,
            {name: r.efforts for name, r in self.runtimes.items()},
        )
        self._add_builtin_agent()
        self.ledger.listeners.append(self._on_change)
        self.chat = Chat(self.store, self.ledger, wall)
        self.ledger.listeners.append(self.chat.on_change)

        # Overdue approvals expire before anything could run them.
        self.ledger.expire_overdue()
        self.secrets = Secrets()
        supervisor = Supervisor()
        self.runs = RequestRuns(
            self.store,
            self.ledger,
            supervisor,
            self.runtimes,
            self.home.tasks,
            wall,
            on_finished=lambda: self.dispatcher.kick(),
            turn_tools=self._turn_tools,
            on_event=self._on_runtime_event,
            environment=lambda: {**os.environ, **self.secrets.environment()},
            tools_ready=self._tools_ready,
            stop_tasks=lambda request_id: self.tasks.stop_all_of(request_id, CANCELLED),
        )
        self.readiness = Readiness(self.runs.agent_statuses, self.clock.mono)
        self.dispatcher = Dispatcher(self.store, self.ledger, self.runs.launch)
        down_since = self._last_heartbeat()
        if down_since is not None:
            self.runs.interrupt_running(f"the daemon was not running since {_clock_time(down_since)}")
        self.continuations = Continuations(self.store, self.ledger, self._resumable)
        self.ledger.listeners.append(self.continuations.on_change)
        self.watching = Watching(self.store, self.ledger, self.continuations)
        self.ledger.listeners.append(self.watching.on_request)
        self.continuations.drop_stale()  # before the tasks that ended while it was down are found: those wake
        self.tasks = BackgroundTasks(
            self.store,
            self.ledger,
            supervisor,
            self.home.tasks,
            self.events,
            wall,
            self.clock.mono,
            environment=self.runs.agent_env,
            on_change=self._task_changed,
        )
        self.tasks.reattach()
        await self.runs.reattach("the daemon restarted")
        self.sessions = Sessions(
            self.store, self.ledger, self.events, self.agents, self._runtime_missing, wall, self.clock.mono
        )

        self.scheduler = AsyncIOScheduler(event_loop=asyncio.get_running_loop(), timezone=UTC)
        self._gaps = GapDetector(self.clock)
        self.scheduler.add_job(
            self.check_clock, "interval", seconds=GAP_CHECK_SECONDS, id="tick", coalesce=True, misfire_grace_time=None
        )
        self.scheduler.add_job(
            self.check_turns, "interval", seconds=TASK_CHECK_SECONDS, id="turns", coalesce=True, misfire_grace_time=None
        )
        self.scheduler.add_job(
            self.tasks.tick, "interval", seconds=TASK_CHECK_SECONDS, id="tasks", coalesce=True, misfire_grace_time=None
        )
        for request in requests_sql.in_states(self.store.conn, (State.PENDING,)):
            self._schedule_expiry(request)
        self.scheduler.start()
        self._beat()
        self.dispatcher.kick()
        await self._serve()
        not_listening = await self.sleep.start()
        if not_listening:
            log.info("%s; a jump of the wall clock is taken for a sleep", not_listening)
        await self._keep_awake_while_working()
        # What the start made (the web framework's and pydantic's objects, in the tray Qt's too) lives as long as the
        # daemon, and every full collection walked it all again with the loop held: 19 ms in `cox daemon`, 30-37 ms
        # in the tray (the console stalled). After one collection it is set aside; a collection walks what came after,
        # until `stop` gives it back (a daemon stopped in a process that goes on, as in the tests, is then collected).
        gc.collect()
        gc.freeze()

    async def _serve(self) -> None:
        wall = self.clock.wall
        audit = AuditLog(self.store, wall)
        owner_settings = OwnerSettings(
            self.store,
            self.events,
            audit,
            wall,
            check=self._check_setting,
            changed=self._setting_changed,
            keep_secret=self.secrets.set,
            secret_kept=self.readiness.forget,
        )
        services = Services(
            self.ledger,
            self.principals,
            self.agents,
            self.events,
            self.runs.output_path,
            lambda row: session_views.card(self.store.conn, row),
            self.readiness,
            self.secrets,
            owner_settings,
            audit,
            self.tasks,
            kick=lambda: self.dispatcher.kick(),
            web=SignIns(self.store, self.principals, wall, self.clock.mono),
            room_status=lambda: self.room.status(),
            chat=ChatSetup(self.chat, self.store, self.secrets, self.chat_problems, wall),
            sessions=self.sessions,
        )
        _, security, mcp = build(services)
        self._mcp = mcp
        self._mcp_built.set()
        sock = listening_socket(self.host, self.port)
        self.port = sock.getsockname()[1]
        security.allow_port(self.port)
        self._server, self._serving = await serve(security, sock)
        shown_host = f"[{self.host}]" if ":" in self.host else self.host
        self.url = f"http://{shown_host}:{self.port}"
        write_atomically(
            str(self.home.daemon_json),
            json.dumps({"pid": os.getpid(), "url": self.url, "started_at": self.clock.wall()}),
        )
        log.info("listening on %s", self.url)
        self.room = RoomListener(security, self.store, self.home.root, self.url)
        await self.room.apply()
        self.chat_problems.update(await connectors.start_all(self.chat, self.store, self.secrets))

    async def stop(self) -> None:
        """Stop serving and following; commands go on under their runners and are re-attached at the next start."""
        await self.room.close()
        await self.chat.close()
        await shut(self._server, self._serving)
        await self.sleep.stop()
        self.scheduler.shutdown(wait=False)
        with contextlib.suppress(Exception):
            await self._mcp.close()
        await self.runs.close()
        await self.tasks.close()
        self.continuations.close()
        self._beat()
        with contextlib.suppress(FileNotFoundError):
            self.home.daemon_json.unlink()
        self.store.close()
        self._lock.release()
        gc.unfreeze()

    # --- sleep and wake -----------------------------------------------------------------------------------

    async def suspend(self) -> None:
        """The machine is about to sleep: start nothing new, note when."""
        self._suspended_at = self.clock.wall()
        self.dispatcher.paused = True
        self._beat()

    async def resume(self) -> None:
        since = self._suspended_at if self._suspended_at is not None else self.clock.wall()
        self._suspended_at = None
        self.dispatcher.paused = False
        await self._after_gap(since, self.clock.wall())

    async def _after_gap(self, since: float, until: float) -> None:
        self._awake_since = until  # a turn's longest time counts from here, not across the sleep
        self.runs.interrupt_running(
            f"the machine slept or its clock jumped ({_clock_time(since)} to {_clock_time(until)})"
        )
        self.ledger.expire_overdue()
        self.scheduler.wakeup()
        self._gaps = GapDetector(self.clock)
        await self.runs.recheck("checked after the gap")
        self.dispatcher.kick()

    def _setting_changed(self, key: str) -> None:
        if key == "agents_paused":
            self.dispatcher.kick()
        elif key == "keep_awake":
            self._check_keep_awake()
        elif key.startswith("room_"):
            self._in_background(self._move_room())
        elif key == "agent_sessions":
            self.sessions.switched()

    def _check_setting(self, key: str, value: str) -> None:
        """Agent sessions need an agent CLI that can run here (the shell agent cannot call tools); the room's
        address must be one of this computer's now."""
        if key == "room_address":
            settings.validate(key, value)  # a wildcard, or no address at all, is said as such
            problem = not_of_this_computer(value)
            if problem is not None:
                raise Invalid(f"room_address: {problem}")
        if key == "agent_sessions" and value.strip().lower() == "yes":
            clis = [AgentRow("", name, "", {}, 0.0) for name in self.runtimes if name != "shell"]
            if "ready" not in self.readiness.of(clis):  # one read of the keyring for all of them
                raise Conflict(
                    "agent sessions need an agent CLI that can run here (Claude Code, Codex, Gemini CLI "
                    "or Copilot CLI, installed and signed in); none is yet"
                )

    def _resumable(self, agent: str) -> bool:
        """Whether the agent's runtime continues a session (a background continuation's turn needs one)."""
        row = directory.agent(self.store.conn, agent)
        runtime = self.runtimes.get(row.runtime) if row is not None else None
        return runtime is not None and runtime.resumable

    def _runtime_missing(self, runtime: str, options: dict[str, Any]) -> str | None:
        found = self.runtimes.get(runtime)
        if found is None:
            return "unknown runtime"
        return found.missing(self.runs.agent_env(AgentRow("", runtime, "", options, 0.0)))

    async def _move_room(self) -> None:
        await self.room.apply()
        self.events.publish(RoomChanged(self.room.status()))

    def _check_keep_awake(self) -> None:
        self._in_background(self._keep_awake_while_working())

    def _in_background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _task_changed(self, what: str, task: TaskRow) -> None:
        if what == "ended":
            self.continuations.task_ended(task)
        self.watching.on_task(what, task)
        self._check_keep_awake()

    async def _keep_awake_while_working(self) -> None:
        """The idle-sleep lock is held exactly while a request or a background task runs and the owner wants the
        computer kept awake."""
        working = bool(
            requests_sql.in_states(self.store.conn, (State.RUNNING,))
            or any(t.kind in ("command", "monitor") for t in tasks_sql.running(self.store.conn))
        )
        await self.sleep.keep_awake(working and settings.current(self.store.conn, "keep_awake") == 1)

    async def check_turns(self) -> None:
        """Every 10 s: a turn that has run longer than `max_turn` (its process's start: a resumed turn counts afresh)
        is cancelled at its next safe point, the reason on its timeline."""
        longest = settings.current(self.store.conn, "max_turn")
        if not longest:
            return
        for request in requests_sql.in_states(self.store.conn, (State.RUNNING,)):
            turns = tasks_sql.turns(self.store.conn, request.id)
            if request.cancel_requested or not turns or self.ledger.open_question(request.id) is not None:
                continue  # (a turn waiting on a person's answer is not running long)
            since = max(turns[-1].started_at, self._awake_since)  # asleep, a turn does not run
            if self.clock.wall() - since < longest:
                continue
            self.ledger.note(
                request.id,
                f"ran longer than the longest turn ({format_duration(longest)}): cancelled at its next safe point",
            )
            self.ledger.cancel(request.id, SYSTEM, trusted=True)

    async def check_clock(self) -> None:
        """Every few seconds: keep the heartbeat, and treat a wall-clock gap like a wake from sleep."""
        gap = self._gaps.check()
        self._beat()
        if gap is not None and self._suspended_at is None:
            await self._after_gap(gap.started, gap.ended)

    def _beat(self) -> None:
        with contextlib.suppress(OSError):
            self.home.heartbeat.write_text(repr(self.clock.wall()))

    def _last_heartbeat(self) -> float | None:
        try:
            return float(self.home.heartbeat.read_text())
        except (OSError, ValueError):
            return None

    # --- reacting to the ledger ---------------------------------------------------------------------------

    def _on_change(self, request: RequestRow, action: Action) -> None:
        asked = self.ledger.open_question(request.id) if action == Action.ASK else None
        self.events.publish(RequestChanged(request, action.value, asked.text if asked else None))
        if request.state == State.PENDING and action == Action.CREATE:
            self._schedule_expiry(request)
        elif action in (Action.APPROVE, Action.DENY, Action.CANCEL, Action.REVOKE, Action.EXPIRE):
            with contextlib.suppress(Exception):
                self.scheduler.remove_job(f"expire {request.id}")
        if request.state == State.APPROVED:
            self.dispatcher.kick()
        if action in (Action.DISPATCH, Action.RESUME, Action.SUCCEED, Action.FAIL, Action.STOP, Action.INTERRUPT):
            self._check_keep_awake()
        if action == Action.CANCEL and request.state == State.RUNNING:
            self.runs.cancel_soon(request, asking=self.ledger.open_question(request.id) is not None)
            self.ledger.withdraw_questions(request.id, "the request was cancelled")

    async def _tools_ready(self) -> None:
        """The agent CLIs' MCP server is up (built at the first turn that needs it, before the CLI starts)."""
        await self._mcp_built.wait()
        await self._mcp.ready()

    def _on_runtime_event(self, request: RequestRow, event: Event) -> None:
        self.events.publish(
            RuntimeNews(request.id, event.kind, redact(event.text[:2000]), event.value, request.requester)
        )

    def _turn_tools(self, request_id: str, task_dir: Path) -> TurnTools:
        """The MCP relay for one turn, with a token good for this running request only (in a file only we can read)."""
        token_file = task_dir / "turn.token"
        descriptor = os.open(token_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as f:
            f.write(self.principals.turn_token(request_id))
        relay = relay_command()
        return TurnTools(relay[0], [*relay[1:], str(self.home.daemon_json), str(token_file)])

    def _schedule_expiry(self, request: RequestRow, at: float | None = None) -> None:
        assert request.expires_at is not None
        self.scheduler.add_job(
            self._expire,
            DateTrigger(datetime.fromtimestamp(at or request.expires_at, UTC)),
            args=[request.id],
            id=f"expire {request.id}",
            replace_existing=True,
            misfire_grace_time=None,
        )

    async def _expire(self, request_id: str) -> None:
        """A coroutine, so that APScheduler runs it on the loop: a plain function it would run on a worker thread,
        where the ledger's write and the event it publishes do not belong."""
        row = requests_sql.get(self.store.conn, request_id)
        if row is None or row.state != State.PENDING:
            return
        if row.expires_at is not None and row.expires_at <= self.clock.wall():
            self.ledger.expire(row.id)
        else:  # the timer fired early by the ledger's clock: look again in a second
            self._schedule_expiry(row, at=time.time() + 1)

    def _add_builtin_agent(self) -> None:
        """A fresh installation gets the built-in shell agent, so it works before anything else is set up."""
        if not self.agents.listing():
            self.home.workspace.mkdir(exist_ok=True)
            self.agents.add("shell", "shell", str(self.home.workspace), Actor(OWNER, "owner"))


def _clock_time(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


async def run(home: Home, host: str, port: int) -> None:
    """`cox daemon`: run until SIGTERM or SIGINT."""
    daemon = Daemon(home, host, port)
    await daemon.start()
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    print(f"Coxswain daemon listening on {daemon.url} (home {home.root})", flush=True)
    await stopping.wait()
    await daemon.stop()
