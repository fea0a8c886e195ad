"""Sessions agents start and drive (the MCP tools `start_session`, `send_prompt`, `wait`, …). A session is an
ordinary conversation the owner can open, follow, answer and stop: it runs as a hidden agent of its own (`S1`), and
each prompt sent to it is a request in the ledger, requested by the calling agent's request for the same person.

Every rule the owner set is applied here, in this order: the setting, who calls (a running request's agent), the
rate limits, the depth rule and "may create sessions", the arguments, the cap, then the approval (a conversation's
first prompt, every prompt in "ask" mode, and the prompt after 30 with no person involved wait for the owner)."""

from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from desktop.core import audit
from desktop.core.actors import SYSTEM, Actor
from desktop.core.agents import Agents
from desktop.core.dispatcher import MAX_SESSIONS_RUNNING as MAX_AT_WORK
from desktop.core.errors import CoxError, Invalid
from desktop.core.events import EventBus, SessionCalled, SessionChanged
from desktop.core.ledger import Ledger
from desktop.core.settings import current
from desktop.core.states import Action, State
from desktop.sessions import sql
from desktop.sessions.views import latest_state, short, view
from desktop.store import directory
from desktop.store import requests as requests_sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow, RequestRow, SessionRow

CALLS_PER_MINUTE = 60
CHANGES_PER_MINUTE = 10
LOOP_GUARD = 30  # agent prompts in a row with no person involved; the next one asks the owner
SETTLED = ("done", "failed", "cancelled", "expired", "asking", "idle", "archived")


WATCHABLE = ("task_started", "task_finished", "task_failed", "turn_finished", "question", "all_idle")
DEFAULT_WATCH = ("task_failed", "turn_finished")  # not commands that ended well: name task_finished for those


class SessionError(CoxError):
    """A refusal with a stable code: not_enabled, approval_denied, forbidden, busy, rate_limited, not_found,
    runtime_unavailable, no_active_turn, invalid_input."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Caller:
    """The agent calling a tool: its running request, its agent, and its own session if an agent started it."""

    actor: Actor
    request: RequestRow
    agent: AgentRow
    session: SessionRow | None
    call_key: str | None = None  # this tool call, the same when the relay repeats it after a daemon restart

    @property
    def conversation(self) -> str:
        """What the owner's approval belongs to: the session when the caller is one, else its request."""
        return self.session.id if self.session else self.request.id

    @property
    def asks_always(self) -> bool:
        return self.agent.options.get("sessions") == "ask"

    @property
    def model(self) -> str:
        """The badge on the prompts this agent sends."""
        return str(self.agent.options.get("model") or f"{self.agent.runtime} default model")


class Sessions:
    def __init__(
        self,
        store: Store,
        ledger: Ledger,
        events: EventBus,
        agents: Agents,
        missing: Callable[[str, dict[str, Any]], str | None],
        wall: Callable[[], float],
        mono: Callable[[], float],
    ) -> None:
        """`missing(runtime, options)`: what stops that runtime from working here, or None."""
        self._store, self._ledger, self._events, self._agents = store, ledger, events, agents
        self._missing, self._wall, self._mono = missing, wall, mono
        self._calls: dict[str, deque[float]] = {}
        self._changes: dict[str, deque[float]] = {}
        ledger.listeners.append(self._on_change)

    # --- the one way in ------------------------------------------------------------------------------------

    async def call(
        self,
        actor: Actor,
        tool: str,
        change: bool,
        work: Callable[[Caller], Awaitable[dict[str, Any]]],
        about: str = "",
        call_key: str | None = None,
    ) -> dict[str, Any]:
        """Run one tool call under the rules; the caller's timeline gets a line saying what it did."""
        request_id = actor.request_id
        try:
            self._enabled()
            caller = replace(self._caller(actor), call_key=call_key)
            self._limit(caller, change)
            answer = await work(caller)
        except SessionError as error:
            self._activity(request_id, actor, f"{tool}{about}: refused ({error.code}): {error}")
            raise
        except Invalid as error:
            self._activity(request_id, actor, f"{tool}{about}: refused (invalid_input): {error}")
            raise SessionError("invalid_input", str(error)) from None
        target = about or (f" → {answer['session']}" if "session" in answer else "")
        outcome = f": {answer['state']}" if "state" in answer else ""
        self._activity(request_id, actor, f"{tool}{target}{outcome}")
        return answer

    # --- reading -------------------------------------------------------------------------------------------

    def listing(self, caller: Caller) -> dict[str, Any]:
        rows = sql.listing(self._store.conn, caller.request.requester)
        return {"sessions": [view(self._store.conn, row, now=self._wall()) for row in rows]}

    def read(self, caller: Caller, session_id: str) -> dict[str, Any]:
        return view(self._store.conn, self._target(caller, session_id, acting=False), detail=True, now=self._wall())

    async def wait(self, caller: Caller, session_id: str, seconds: float | None) -> dict[str, Any]:
        """Until the session's latest prompt ends or asks, or the time is up: then what is there."""
        session = self._target(caller, session_id, acting=False)
        longest = current(self._store.conn, "session_wait_max")
        if seconds is not None and seconds < 0:
            raise SessionError("invalid_input", "seconds must be 0 or more")
        wanted = longest if seconds is None else seconds
        began = self._mono()

        def settled() -> str | None:
            self._enabled()
            self._still_running(caller)
            state = latest_state(self._store.conn, session)[0]
            return state if state in SETTLED else None

        deadline = began + min(wanted, longest)
        found = await self._events.until(settled, lambda: deadline - self._mono())
        answer = view(self._store.conn, sql.get(self._store.conn, session.id) or session, detail=False)
        answer.update(waited_seconds=round(self._mono() - began, 1), timed_out=found is None)
        if wanted > longest:
            answer["note"] = (
                f"a single wait lasts at most {longest // 60} min (the owner's setting); "
                "call wait again to go on waiting"
            )
        return answer

    async def watch(self, caller: Caller, session_id: str, events: list[str] | None) -> dict[str, Any]:
        """From now on (and after a restart) the calling conversation is woken by what the session does."""
        session = self._target(caller, session_id, acting=False)
        if caller.session is not None and caller.session.id == session.id:
            raise SessionError("forbidden", f"{session.id} is this session itself")
        chosen = list(dict.fromkeys(events)) if events else list(DEFAULT_WATCH)
        unknown = [e for e in chosen if e not in WATCHABLE]
        if unknown or not chosen:
            raise SessionError("invalid_input", f"events are among {', '.join(WATCHABLE)}, not {unknown[:3]}")
        with self._store.transaction() as conn:
            sql.watch(conn, self.conversation_of(caller), session.id, chosen, self._wall())
        return {
            "session": session.id,
            "watching": chosen,
            "note": "each is told in a new turn of this conversation; unwatch_session stops it",
        }

    async def unwatch(self, caller: Caller, session_id: str) -> dict[str, Any]:
        session = self._target(caller, session_id, acting=False)
        with self._store.transaction() as conn:
            was = sql.unwatch(conn, self.conversation_of(caller), session.id)
        return {"session": session.id, "watching": [], "was_watching": was}

    def conversation_of(self, caller: Caller) -> str:
        """A watch belongs to the caller's conversation: its session, or its chain of continuations' first request."""
        return caller.session.id if caller.session else requests_sql.chain_root(self._store.conn, caller.request.id)

    def readable(self, actor: Actor, agent_name: str) -> bool:
        """May this agent read the background tasks of `agent_name`: a session it can see."""
        try:
            self._enabled()
            self._target(self._caller(actor), agent_name, acting=False)
        except SessionError:
            return False
        return True

    # --- changing ------------------------------------------------------------------------------------------

    async def start(self, caller: Caller, arguments: Mapping[str, Any]) -> dict[str, Any]:
        self._may_drive(caller)
        prompt = str(arguments.get("prompt") or "")
        known = self._sent_already(caller)
        if known is None:
            runtime, folder, options = self._settings_for(caller, arguments)
            title = short(str(arguments.get("title") or prompt), 80)
            group = arguments.get("group")
            if group is not None and group not in sql.groups(self._store.conn):
                raise SessionError(
                    "not_found",
                    f"there is no session group '{str(group)[:60]}'; the owner makes groups (cox session group NAME)",
                )
            self._room_for(None)
        session_id = known.agent if known else sql.next_id(self._store.conn)

        def prepare(conn: Any, now: float) -> None:
            directory.add_agent(conn, session_id, runtime, folder, options, now)
            sql.add(conn, session_id, title, group, caller.request.id, caller.conversation, now)

        try:
            row = await self._prompt(caller, session_id, prompt, prepare)
        except SessionError as error:
            if error.code == "approval_denied":  # a session never started is put away
                with self._store.transaction() as conn:
                    sql.archive(conn, session_id, self._wall())
            raise
        session = self._session(session_id)
        agent = directory.agent(self._store.conn, session_id)
        return {
            "session": session_id,
            "request": row.id,
            "title": session.title,
            "runtime": agent.runtime if agent else None,
            "folder": agent.folder if agent else None,
            "state": latest_state(self._store.conn, session)[0],
        }

    async def send(self, caller: Caller, session_id: str, prompt: str, changes: Mapping[str, Any]) -> dict[str, Any]:
        session = self._target(caller, session_id, acting=True)
        agent = directory.agent(self._store.conn, session.id)
        assert agent is not None
        options = {**agent.options, **{k: v for k, v in changes.items() if v is not None}}
        _, options = self._agents.check(agent.runtime, agent.folder, options)
        self._room_for(session.id)

        def prepare(conn: Any, now: float) -> None:
            if options != agent.options:
                directory.change_agent(conn, agent.name, agent.runtime, agent.folder, options)

        row = await self._prompt(caller, session.id, prompt, prepare)
        return {"session": session.id, "request": row.id, "state": latest_state(self._store.conn, session)[0]}

    async def answer(self, caller: Caller, session_id: str, text: str) -> dict[str, Any]:
        session = self._target(caller, session_id, acting=True)
        state, latest = latest_state(self._store.conn, session)
        if state != "asking" or latest is None:
            raise SessionError("no_active_turn", f"{session.id} is not waiting for an answer (it is {state})")
        if not text.strip():
            raise SessionError("invalid_input", "the answer is empty")
        await self._owner_leave(caller, f"answer {session.id}'s question with: {short(text, 200)}")
        self._ledger.answer(latest.id, caller.actor, text, trusted=True)
        return {"session": session.id, "request": latest.id, "state": latest_state(self._store.conn, session)[0]}

    async def stop(self, caller: Caller, session_id: str) -> dict[str, Any]:
        session = self._target(caller, session_id, acting=True)
        unfinished = self._unfinished(session.id)
        if not unfinished:
            raise SessionError("no_active_turn", f"{session.id} has no turn running or waiting")
        await self._owner_leave(caller, f"stop the turn of {session.id} ({session.title})")
        for row in unfinished:
            self._ledger.cancel(row.id, caller.actor, trusted=True)
        return {"session": session.id, "state": latest_state(self._store.conn, session)[0]}

    async def archive(self, caller: Caller, session_id: str) -> dict[str, Any]:
        session = self._target(caller, session_id, acting=True)
        await self._owner_leave(caller, f"archive {session.id} ({session.title}), stopping what it does")
        for row in self._unfinished(session.id):
            self._ledger.cancel(row.id, caller.actor, trusted=True)
        with self._store.transaction() as conn:
            sql.archive(conn, session.id, self._wall())
            audit.append(conn, self._wall(), caller.actor, "archive_session", None, f"archived {session.id}")
        return {"session": session.id, "state": "archived"}

    # --- the owner -----------------------------------------------------------------------------------------

    def set_may_create(self, session_id: str, allowed: bool, actor: Actor) -> SessionRow:
        if not actor.is_owner:
            raise SessionError("forbidden", "only the owner can let a session start sessions")
        session = self._session(session_id.strip().upper())
        with self._store.transaction() as conn:
            sql.set_may_create(conn, session.id, allowed)
            audit.append(
                conn,
                self._wall(),
                actor,
                "session_may_create",
                None,
                f"{session.id} may {'now' if allowed else 'no longer'} create sessions",
            )
        self._events.publish(SessionChanged(session.id))
        return self._session(session.id)

    def add_group(self, name: str, actor: Actor) -> list[str]:
        if not actor.is_owner:
            raise SessionError("forbidden", "only the owner makes session groups")
        name = name.strip()
        if not name or len(name) > 80 or not name.isprintable():
            raise SessionError("invalid_input", "a group's name is 1 to 80 printable characters")
        if name in sql.groups(self._store.conn):
            return sql.groups(self._store.conn)
        with self._store.transaction() as conn:
            sql.add_group(conn, name, self._wall())
            audit.append(conn, self._wall(), actor, "add_session_group", None, f"added session group {name}")
        return sql.groups(self._store.conn)

    def owner_listing(self, requester: str | None = None) -> list[dict[str, Any]]:
        """Every session (of `requester`'s requests, if given), archived ones too."""
        rows = sql.listing(self._store.conn, requester, archived=True)
        return [{**view(self._store.conn, row), "archived": row.archived_at is not None} for row in rows]

    def shown(self, session_id: str) -> dict[str, Any]:
        """One session as the owner's list shows it."""
        session = self._session(session_id.strip().upper())
        return {**view(self._store.conn, session), "archived": session.archived_at is not None}

    def groups(self) -> list[str]:
        return sql.groups(self._store.conn)

    def switched(self) -> None:
        """The setting changed: when off, prompts still waiting for the owner's approval are cancelled, and every
        wait of a tool call ends (they look at the setting on each event, and this publishes one)."""
        if current(self._store.conn, "agent_sessions"):
            return
        for row in requests_sql.in_states(self._store.conn, (State.PENDING,)):
            if row.parent_id is not None:
                self._ledger.cancel(row.id, SYSTEM, trusted=True, why="cancelled: agent sessions were switched off")

    # --- rules ---------------------------------------------------------------------------------------------

    def _enabled(self) -> None:
        if not current(self._store.conn, "agent_sessions"):
            raise SessionError(
                "not_enabled",
                "agent sessions are switched off; the owner can switch them on in Settings (agent_sessions)",
            )

    def _caller(self, actor: Actor) -> Caller:
        request = requests_sql.get(self._store.conn, actor.request_id or "")
        if actor.kind != "agent" or request is None or request.state != State.RUNNING:
            raise SessionError("forbidden", "only an agent's running turn can use sessions")
        agent = directory.agent(self._store.conn, request.agent)
        if agent is None:
            raise SessionError("not_found", f"the agent {request.agent} is gone")
        return Caller(actor, request, agent, sql.get(self._store.conn, agent.name))

    def _limit(self, caller: Caller, change: bool) -> None:
        now = self._mono()
        windows = [(self._calls, CALLS_PER_MINUTE, "session calls")]
        if change:
            windows.append((self._changes, CHANGES_PER_MINUTE, "session changes"))
        for kept, most, what in windows:
            times = kept.setdefault(caller.conversation, deque())
            while times and times[0] <= now - 60:
                times.popleft()
            if len(times) >= most:
                wait = int(times[0] + 60 - now) + 1
                raise SessionError("rate_limited", f"{most} {what} a minute is the limit; try again in {wait} s")
        for kept, _, _ in windows:
            kept[caller.conversation].append(now)

    def _may_drive(self, caller: Caller) -> None:
        if caller.session is not None and not caller.session.may_create:
            raise SessionError(
                "forbidden",
                f"{caller.session.id} was started by an agent, so it may not start or "
                "drive sessions unless the owner switches on 'may create sessions' "
                f"for {caller.session.id}",
            )

    def _target(self, caller: Caller, session_id: str, acting: bool) -> SessionRow:
        session = sql.get(self._store.conn, session_id.strip().upper())
        parent = requests_sql.get(self._store.conn, session.parent_request) if session else None
        if session is None or parent is None or parent.requester != caller.request.requester:
            raise SessionError("not_found", f"there is no session '{session_id[:40]}' (list_sessions shows them)")
        if acting:
            if caller.session is not None and caller.session.id == session.id:
                raise SessionError(
                    "forbidden", f"{session.id} is this session itself; an agent cannot act on its own session"
                )
            self._may_drive(caller)
            if session.archived_at is not None:
                raise SessionError("invalid_input", f"{session.id} is archived")
        return session

    def _settings_for(self, caller: Caller, arguments: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
        """Runtime, folder and options of a new session: what was given, else what the calling session has (its
        model, permission mode and effort only when the runtime is the same)."""
        runtime = str(arguments.get("runtime") or caller.agent.runtime)
        same = runtime == caller.agent.runtime
        inherited = {k: v for k, v in caller.agent.options.items() if same or k == "sessions"}
        given = {k: arguments[k] for k in ("model", "permission_mode", "effort") if arguments.get(k) is not None}
        path, options = self._agents.check(
            runtime, str(arguments.get("folder") or caller.agent.folder), {**inherited, **given}
        )
        missing = self._missing(runtime, options)
        if missing:
            raise SessionError("runtime_unavailable", f"{runtime} cannot run here: {missing}")
        return runtime, str(path), options

    def _room_for(self, session_id: str | None) -> None:
        working = sql.with_prompts(self._store.conn, ("approved", "running"))
        if session_id not in working and len(working) >= MAX_AT_WORK:
            raise SessionError(
                "busy",
                f"{MAX_AT_WORK} sessions are at work already ({', '.join(working)}); wait for "
                "one to finish, then try again",
            )

    async def _prompt(
        self, caller: Caller, session_id: str, prompt: str, prepare: Callable[[Any, float], None]
    ) -> RequestRow:
        """The prompt as a request: approved at once when the owner already let this conversation use sessions,
        else a card waiting for the owner, and this call waits for the answer (a no is `approval_denied`). The same
        call made again (after a daemon restart) finds the request it made the first time."""
        row = self._sent_already(caller)
        if row is None:
            approved_at, prompts = sql.conversation(self._store.conn, caller.conversation)
            approved = approved_at is not None and not caller.asks_always and prompts < LOOP_GUARD

            def also(conn: Any, now: float) -> None:
                prepare(conn, now)
                sql.count_agent_prompt(conn, caller.conversation)

            row = self._ledger.create_for_agent(
                caller.actor, caller.request, session_id, prompt, caller.model, approved, also, caller.call_key
            )
        if row.state != State.PENDING:
            return row

        def decided() -> RequestRow | None:
            self._enabled()
            self._still_running(caller)
            found = requests_sql.get(self._store.conn, row.id)
            return None if found is None or found.state == State.PENDING else found

        decision = await self._events.until(decided)
        assert decision is not None
        if decision.state in (State.CANCELLED, State.EXPIRED):
            raise SessionError(
                "approval_denied", f"the owner did not approve the prompt to {session_id}: {decision.result}"
            )
        return decision

    async def _owner_leave(self, caller: Caller, what: str) -> None:
        """In "ask" mode, a change other than a prompt waits for the owner's Allow, asked on the caller's request."""
        if not caller.asks_always:
            return
        asked = self._ledger.ask(
            caller.request.id,
            caller.actor,
            f"{caller.agent.name} wants to {what}. Allow it?",
            ["Allow", "Deny"],
            owner_only=True,
        )

        def answered() -> str | None:
            self._enabled()
            question = self._ledger.question(asked.id)
            return None if question.answered_at is None else question.answer or ""

        answer = await self._events.until(answered)
        if not (answer or "").strip().lower().startswith(("allow", "yes")):
            raise SessionError("approval_denied", f"the owner did not allow it ({answer or 'withdrawn'})")

    def _sent_already(self, caller: Caller) -> RequestRow | None:
        return requests_sql.by_call_key(self._store.conn, caller.call_key) if caller.call_key else None

    def _still_running(self, caller: Caller) -> None:
        row = requests_sql.get(self._store.conn, caller.request.id)
        if row is None or row.state != State.RUNNING or row.cancel_requested:
            raise SessionError("no_active_turn", f"{caller.request.id}'s turn ended")

    # --- reacting to the ledger ----------------------------------------------------------------------------

    def _on_change(self, request: RequestRow, action: Action) -> None:
        if request.parent_id is None:
            return
        if action == Action.APPROVE:
            parent = requests_sql.get(self._store.conn, request.parent_id)
            if parent is not None:
                key = parent.agent if sql.get(self._store.conn, parent.agent) else parent.id
                with self._store.transaction() as conn:
                    sql.approve_conversation(conn, key, self._wall(), self._ledger.owner)
        elif action == Action.ASK:
            asked = self._ledger.open_question(request.id)
            if asked is not None:
                self._activity(
                    request.parent_id,
                    SYSTEM,
                    f"{request.agent} asks: {short(asked.text, 300)} (relayed by wait and read_session)",
                )

    def _activity(self, request_id: str | None, actor: Actor, text: str) -> None:
        if request_id and requests_sql.get(self._store.conn, request_id) is not None:
            self._ledger.note(request_id, text[:2000], kind="activity", actor=actor)
            self._events.publish(SessionCalled(request_id))

    def _session(self, session_id: str) -> SessionRow:
        session = sql.get(self._store.conn, session_id)
        if session is None:
            raise SessionError("not_found", f"there is no session '{session_id[:40]}'")
        return session

    def _unfinished(self, session_id: str) -> list[RequestRow]:
        return [
            row
            for row in sql.requests_of(self._store.conn, session_id)
            if row.state in (State.PENDING, State.APPROVED, State.RUNNING)
        ]
