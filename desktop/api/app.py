"""The local HTTP API: one router per resource (each a thin layer over core services), the errors as JSON, and in
front of it all the MCP endpoint and LocalSecurity."""

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from desktop.api.actors import actor, owner
from desktop.api.agents import add_agents, add_people
from desktop.api.chat import add_chat
from desktop.api.events import add_events
from desktop.api.requests import add_requests
from desktop.api.security import MCP_PATH, LocalSecurity
from desktop.api.settings import add_settings
from desktop.api.tasks import add_tasks
from desktop.connectors.owned import ChatSetup
from desktop.core.agents import Agents
from desktop.core.audit_log import AuditLog
from desktop.core.errors import Conflict, CoxError, Forbidden, Invalid, NotFound
from desktop.core.events import EventBus
from desktop.core.ledger import Ledger
from desktop.core.owner_settings import OwnerSettings
from desktop.core.principals import Principals
from desktop.core.readiness import Readiness
from desktop.mcp.endpoint import McpEndpoint
from desktop.platform.secrets import Secrets, SecretStoreError
from desktop.room.routes import add_room
from desktop.room.signins import SignIns
from desktop.sessions.routes import add_sessions
from desktop.sessions.rules import SessionError, Sessions
from desktop.store.rows import RequestRow
from desktop.tasks.background import BackgroundTasks

log = logging.getLogger(__name__)
STATUS = {Invalid: 400, Forbidden: 403, NotFound: 404, Conflict: 409}


@dataclass(frozen=True)
class Services:
    ledger: Ledger
    principals: Principals
    agents: Agents
    events: EventBus
    output_path: Callable[[str], Path | None]
    session_card: Callable[[RequestRow], dict[str, Any] | None]  # desktop.sessions.views.card
    readiness: Readiness
    secrets: Secrets
    owner_settings: OwnerSettings
    audit: AuditLog
    tasks: BackgroundTasks
    kick: Callable[[], None]  # look at the agents' queues again
    web: SignIns
    room_status: Callable[[], dict[str, Any]]  # where the room is reached (see desktop/room/listener.py)
    chat: ChatSetup
    sessions: Sessions


def build(services: Services, hosts: Iterable[str] = ()) -> tuple[FastAPI, LocalSecurity, McpEndpoint]:
    s = services
    api = FastAPI(title="Coxswain", version="1", docs_url=None, redoc_url=None)

    async def routed(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await (mcp if scope["type"] == "http" and scope["path"] == MCP_PATH else api)(scope, receive, send)

    security = LocalSecurity(routed, s.principals.authenticate, s.web.actor, hosts)
    add_errors(api)
    add_people(api, s.principals, s.events)
    add_agents(api, s.agents, s.readiness, s.tasks, s.owner_settings, s.kick)
    add_requests(api, s.ledger, s.output_path, s.session_card)
    add_tasks(api, s.tasks)
    add_settings(api, s.owner_settings, s.secrets, s.audit, s.ledger)
    add_events(api, s.events, s.tasks, s.session_card, security.still_allowed)
    add_room(api, s.web, s.events, s.room_status, actor, owner)
    add_chat(api, s.chat, owner)
    add_sessions(api, s.sessions, actor, owner)
    mcp = McpEndpoint(s.ledger, s.tasks, s.events, s.sessions)
    return api, security, mcp


def add_errors(api: FastAPI) -> None:
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
        return JSONResponse(
            {"error": describe(error.errors()), "detail": json.loads(json.dumps(detail, default=str))}, status_code=422
        )

    @api.exception_handler(SecretStoreError)
    async def no_keyring(_: Request, error: SecretStoreError) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=400)

    @api.exception_handler(Exception)
    async def crash(_: Request, error: Exception) -> JSONResponse:
        log.exception("internal error")
        return JSONResponse({"error": "internal error; the daemon log has the details"}, status_code=500)


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
