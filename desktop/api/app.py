"""The local HTTP API. Handlers are thin: each calls one service method of the core."""

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse

from desktop.api import models as m
from desktop.api.chat import add_chat
from desktop.api.room import add_room
from desktop.api.security import MCP_PATH, LocalSecurity
from desktop.api.sessions import add_sessions
from desktop.connectors.service import Chat
from desktop.console import sgr
from desktop.console.redact import redact
from desktop.console.stream import folded
from desktop.core import audit, session_views, settings
from desktop.core.actors import Actor
from desktop.core.agents import Agents
from desktop.core.errors import Conflict, CoxError, Forbidden, Invalid, NotFound
from desktop.core.events import EventBus
from desktop.core.ledger import Ledger
from desktop.core.principals import Principals
from desktop.core.sessions import SessionError, Sessions
from desktop.core.websessions import WebSessions, session_key
from desktop.mcp.endpoint import McpEndpoint
from desktop.platform.secrets import SECRETS, Secrets, SecretStoreError
from desktop.store import audit as audit_sql
from desktop.store import requests as requests_sql
from desktop.store.db import Store
from desktop.store.rows import AgentRow, QuestionRow, RequestRow, TimelineRow
from desktop.tasks.background import BackgroundTasks
from desktop.tasks.paging import Page, output_page, output_since

log = logging.getLogger(__name__)
OUTPUT_CHUNK = 256 * 1024
STATUS = {Invalid: 400, Forbidden: 403, NotFound: 404, Conflict: 409}
OWNER_ONLY_OPTIONS = ("env", "args")  # an agent's environment and extra CLI arguments: the owner's business
Position = Annotated[int, Query(ge=0, le=2**62)]  # a byte offset in an output file (a seek takes at most 2**63 - 1)
Count = Annotated[int, Query(ge=-2**62, le=2**62)]  # clamped where it is used


@dataclass(frozen=True)
class Services:
    store: Store
    ledger: Ledger
    principals: Principals
    agents: Agents
    events: EventBus
    output_path: Callable[[str], Path | None]
    wall: Callable[[], float]
    agent_statuses: Callable[[list[AgentRow]], list[str]]
    secrets: Secrets
    tasks: BackgroundTasks
    kick: Callable[[], None]  # look at the agents' queues again
    setting_changed: Callable[[str], None]  # the owner changed this setting (it is stored and published)
    web: WebSessions
    room_status: Callable[[], dict[str, Any]]  # where the room is reached (see desktop/room/listener.py)
    chat: Chat
    chat_problems: dict[str, str]  # connectors that could not start, and why
    sessions: Sessions
    check_setting: Callable[[str, str], None]  # refuses a value the daemon cannot act on now (in words)


def build(services: Services, hosts: Iterable[str] = ()) -> tuple[FastAPI, LocalSecurity, McpEndpoint]:
    s = services
    api = FastAPI(title="Coxswain", version="1", docs_url=None, redoc_url=None)

    def actor(request: Request) -> Actor:
        found: Actor = request.state.actor
        return found

    def change_setting(key: str, value: str, who: Actor) -> None:
        if who.is_owner:
            s.check_setting(key, value)
        settings.change(s.store, key, value, who, s.wall())
        s.events.publish({"type": "settings", "key": key, "value": value})
        s.setting_changed(key)

    def request_out(row: RequestRow, timeline: list[TimelineRow] | None = None,
                    question: QuestionRow | None = None) -> m.RequestOut:
        return m.RequestOut.of(row, timeline, question, session_views.card(s.store.conn, row))

    def owner(request: Request) -> Actor:
        who = actor(request)
        if not who.is_owner:
            raise Forbidden("only the owner can do this")
        return who

    @api.exception_handler(CoxError)
    async def domain_error(_: Request, error: CoxError) -> JSONResponse:
        status = next((code for kind, code in STATUS.items() if isinstance(error, kind)), 400)
        if isinstance(error, SessionError):
            status = {"forbidden": 403, "not_found": 404, "busy": 409}.get(error.code, 400)
        return JSONResponse({"error": str(error)}, status_code=status)

    @api.exception_handler(RequestValidationError)
    async def bad_body(_: Request, error: RequestValidationError) -> JSONResponse:
        # never echo what was sent: it may be a token or a secret
        detail = [{k: v for k, v in e.items() if k not in ("input", "ctx", "url")} for e in error.errors()]
        return JSONResponse({"error": describe(error.errors()), "detail": json.loads(json.dumps(detail, default=str))},
                            status_code=422)

    @api.exception_handler(SecretStoreError)
    async def no_keyring(_: Request, error: SecretStoreError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=400)

    @api.exception_handler(Exception)
    async def crash(_: Request, error: Exception) -> JSONResponse:
        log.exception("internal error")
        return JSONResponse({"error": "internal error; the daemon log has the details"}, status_code=500)

    @api.get("/api/health")
    async def health(request: Request) -> dict[str, str]:
        return {"status": "ok", "you": actor(request).name}

    @api.get("/api/agents")
    async def list_agents(request: Request) -> list[m.AgentOut]:
        who, agents, states = actor(request), s.agents.listing(), s.tasks.agent_states()
        shown = [m.AgentOut.of(a, status, states.get(a.name, "idle"))
                 for a, status in zip(agents, s.agent_statuses(agents), strict=True)]
        if not who.is_owner:
            for agent in shown:
                agent.options = {k: v for k, v in agent.options.items() if k not in OWNER_ONLY_OPTIONS}
        return shown

    @api.get("/api/runtimes")
    async def list_runtimes() -> dict[str, list[str]]:
        return s.agents.runtimes()

    @api.post("/api/agents/pause")
    async def pause_agents(body: m.Empty, request: Request) -> dict[str, str]:
        """Nothing new starts on any agent until they are resumed (what runs goes on)."""
        change_setting("agents_paused", "yes", owner(request))
        return {"agents_paused": "yes"}

    @api.post("/api/agents/resume")
    async def resume_agents(body: m.Empty, request: Request) -> dict[str, str]:
        change_setting("agents_paused", "no", owner(request))
        return {"agents_paused": "no"}

    @api.post("/api/agents", status_code=201)
    async def add_agent(body: m.NewAgent, request: Request) -> m.AgentOut:
        added = s.agents.add(body.name, body.runtime, body.folder, actor(request), body.options())
        return m.AgentOut.of(added, s.agent_statuses([added])[0])

    @api.post("/api/agents/{name}/change")
    async def change_agent(name: str, body: m.AgentSetup, request: Request) -> m.AgentOut:
        changed = s.agents.change(name, body.runtime, body.folder, actor(request), body.options())
        s.kick()
        return m.AgentOut.of(changed, s.agent_statuses([changed])[0])

    @api.post("/api/agents/{name}/remove")
    async def remove_agent(name: str, body: m.Empty, request: Request) -> dict[str, str]:
        s.agents.remove(name, actor(request))
        return {"removed": name}

    @api.get("/api/people")
    async def list_people(request: Request) -> list[m.PrincipalOut]:
        owner(request)
        return [m.PrincipalOut.of(p) for p in s.principals.listing()]

    @api.post("/api/people", status_code=201)
    async def add_person(body: m.NewPrincipal, request: Request) -> m.NewToken:
        token = s.principals.add(body.name, body.kind, actor(request))
        return m.NewToken(name=body.name, kind=body.kind, token=token)

    @api.post("/api/people/{name}/revoke")
    async def revoke(name: str, body: m.Empty, request: Request) -> m.Revoked:
        cancelled = s.principals.revoke(name, actor(request))
        s.events.publish({"type": "revoked", "name": name})  # their open event streams end now
        return m.Revoked(name=name, cancelled=cancelled)

    @api.post("/api/requests", status_code=201)
    async def create(body: m.NewRequest, request: Request) -> m.RequestOut:
        return request_out(s.ledger.create(actor(request), body.agent, body.prompt))

    @api.get("/api/requests")
    async def listing(request: Request, state: str | None = None, limit: Count = 500) -> list[m.RequestOut]:
        return [request_out(r) for r in s.ledger.listing(actor(request), state, max(1, min(limit, 100_000)))]

    @api.get("/api/requests/{request_id}")
    async def show(request_id: str, request: Request) -> m.RequestOut:
        row = s.ledger.visible(request_id, actor(request))
        return request_out(row, requests_sql.timeline(s.store.conn, row.id), s.ledger.open_question(row.id))

    @api.post("/api/requests/{request_id}/answer")
    async def answer(request_id: str, body: m.Answer, request: Request) -> m.QuestionOut:
        return m.QuestionOut.of(s.ledger.answer(request_id, actor(request), body.text))


    @api.post("/api/requests/{request_id}/approve")
    async def approve(request_id: str, body: m.Empty, request: Request) -> m.RequestOut:
        return request_out(s.ledger.approve(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/deny")
    async def deny(request_id: str, body: m.Empty, request: Request) -> m.RequestOut:
        return request_out(s.ledger.deny(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/cancel")
    async def cancel(request_id: str, body: m.Empty, request: Request) -> m.RequestOut:
        return request_out(s.ledger.cancel(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/retry", status_code=201)
    async def retry(request_id: str, body: m.Empty, request: Request) -> m.RequestOut:
        return request_out(s.ledger.retry(request_id, actor(request)))

    @api.get("/api/requests/{request_id}/output")
    async def output(request_id: str, request: Request, offset: Position = 0) -> m.Output:
        row = s.ledger.visible(request_id, actor(request))
        path = s.output_path(row.id)
        data = b""
        if path is not None and path.exists():
            with open(path, "rb") as f:
                f.seek(max(0, offset))
                data = f.read(OUTPUT_CHUNK)
        if len(data) == OUTPUT_CHUNK and b"\n" in data:  # whole lines only: a secret is never cut in two
            data = data[:data.rindex(b"\n") + 1]
        return m.Output(text=redact(data.decode("utf-8", "replace")), offset=max(0, offset) + len(data),
                        state=row.state)

    @api.get("/api/requests/{request_id}/console")
    async def request_console(request_id: str, request: Request, lines: Count = 2000, before: Position | None = None,
                              after: Position | None = None, styled: bool = False) -> m.TaskOutput:
        """The request's own output as console pages, like a task's (the room's console reads it this way)."""
        row = s.ledger.visible(request_id, actor(request))
        return console_page(s.output_path(row.id), lines, before, after, False, styled, None)

    # --- background tasks (agents reach them through the MCP tools) ------------------------------------------

    @api.get("/api/tasks")
    async def list_tasks(request: Request, agent: str | None = None) -> list[m.TaskOut]:
        return [m.TaskOut.of(view) for view in s.tasks.listing(actor(request), agent)]

    @api.post("/api/tasks", status_code=201)
    async def start_task(body: m.NewTask, request: Request) -> m.TaskOut:
        row = s.tasks.start(owner(request), body.agent, body.command, body.description, body.kind)
        return m.TaskOut.of(s.tasks.view(row))

    @api.get("/api/tasks/{task_id}")
    async def show_task(task_id: str, request: Request) -> m.TaskOut:
        return m.TaskOut.of(s.tasks.view(s.tasks.visible(task_id, actor(request))))

    @api.get("/api/tasks/{task_id}/output")
    async def task_output(task_id: str, request: Request, lines: Count = 2000, before: Position | None = None,
                          after: Position | None = None, plain: bool = False, styled: bool = False) -> m.TaskOutput:
        """The last lines (or the page `before` an offset, or what came `after` one: a live console's next read)."""
        view = s.tasks.view(s.tasks.visible(task_id, actor(request)))
        return console_page(Path(view.row.dir) / "output", lines, before, after, plain, styled, view.note)

    @api.post("/api/tasks/{task_id}/stop")
    async def stop_task(task_id: str, body: m.Empty, request: Request) -> m.TaskOut:
        return m.TaskOut.of(s.tasks.view(await s.tasks.stop(task_id, actor(request))))

    @api.get("/api/secrets")
    async def list_secrets(request: Request) -> dict[str, Any]:
        owner(request)
        return {"stored": s.secrets.stored(), "known": list(SECRETS), "problem": s.secrets.problem()}

    @api.post("/api/secrets")
    async def set_secret(body: m.SecretValue, request: Request) -> dict[str, str]:
        who = owner(request)
        s.secrets.set(body.name, body.value)
        with s.store.transaction() as conn:
            audit.append(conn, s.wall(), who, "set_secret", None, f"stored {body.name} in the keyring")
        return {"stored": body.name}

    @api.get("/api/settings")
    async def get_settings() -> dict[str, str]:
        return settings.effective(s.store)

    @api.post("/api/settings")
    async def set_setting(body: m.SettingChange, request: Request) -> dict[str, str]:
        change_setting(body.key, body.value, actor(request))
        return settings.effective(s.store)

    @api.get("/api/audit")
    async def audit_log(request: Request, request_id: str | None = None, limit: Count = 1000) -> list[m.AuditEntry]:
        owner(request)
        ref = s.ledger.resolve(request_id) if request_id else None
        return [m.AuditEntry(seq=r.seq, at=m.iso(r.at) or "", actor=r.actor, action=r.action,
                             request_id=r.request_id, reason=r.reason, hash=r.hash)
                for r in audit_sql.records(s.store.conn, ref, max(1, min(limit, 100_000)))]

    @api.get("/api/audit/verify")
    async def verify(request: Request) -> m.AuditCheck:
        owner(request)
        records = audit_sql.records(s.store.conn)
        broken = audit.first_broken(records)
        if broken is None:
            return m.AuditCheck(intact=True, records=len(records))
        return m.AuditCheck(intact=False, records=len(records), first_bad=broken[0], problem=broken[1])

    @api.get("/api/events")
    async def events(request: Request) -> EventSourceResponse:
        who = actor(request)
        browser = getattr(request.state, "browser_session", None)
        ended_by = {("revoked", who.name), ("signed_out", session_key(browser) if browser else None)}

        async def stream() -> AsyncIterator[dict[str, str]]:
            with s.events.subscribe() as queue:
                yield {"event": "hello", "data": json.dumps({"you": who.name})}
                while True:
                    event = await queue.get()
                    if (event.get("type"), event.get("name")) in ended_by:
                        return
                    if who.is_owner or event.get("requester") == who.name or event.get("type") == "lagged":
                        yield {"event": str(event.get("type", "event")), "data": json.dumps(event)}

        return EventSourceResponse(stream(), ping=15)

    add_room(api, s.web, s.events, s.room_status, actor, owner)
    add_chat(api, s.chat, s.store, s.secrets, s.chat_problems, s.wall, owner)
    add_sessions(api, s.sessions, actor, owner)
    mcp = McpEndpoint(s.ledger, s.tasks, s.events, s.sessions)

    async def routed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await (mcp if scope["type"] == "http" and scope["path"] == MCP_PATH else api)(scope, receive, send)

    security = LocalSecurity(routed, s.principals.authenticate, s.web.actor, hosts)
    return api, security, mcp


def console_page(output: Path | None, lines: int, before: int | None, after: int | None, plain: bool, styled: bool,
                 note: str | None) -> m.TaskOutput:
    """The last lines of a console (or the page `before` an offset, or what came `after` one: a live console's next
    read); `styled`: each line also as styled runs, for a web page."""
    lines = max(1, min(lines, 2000))
    if output is None:  # nothing started yet
        page = Page([], None, False, "", after or 0)
    elif after is not None:
        page = output_since(output, after, lines)
    else:
        page = output_page(output, lines, before, not plain)
    shown = [folded(text, count) for text, count in page.lines]
    return m.TaskOutput(lines=shown, styled=[sgr.styled(line) for line in shown] if styled else None,
                        before=page.before, older_not_loaded=page.older_not_loaded, pending=page.pending, end=page.end,
                        more=page.more, note=note if before is None else None)


def describe(errors: Any) -> str:
    """One sentence for the first thing wrong with a body."""
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    if first.get("type") == "json_invalid":
        return "the body is not valid JSON"
    if first.get("type") == "extra_forbidden":
        return f"unknown field '{where}'"
    if first.get("type") == "missing":
        return f"'{where}' is missing" if where else "a JSON body is needed"
    return f"{where or 'body'}: {first.get('msg', 'invalid')}"


