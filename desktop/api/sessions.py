"""Sessions agents started, for the owner (and each person, those of their own requests): the list, the owner's
"may create sessions" switch per session, and the session groups agents may name."""

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from pydantic import Field

from desktop.api.models import Body
from desktop.core.actors import Actor
from desktop.core.sessions import Sessions


class SessionChange(Body):
    may_create_sessions: bool


class NewGroup(Body):
    name: str = Field(min_length=1, max_length=80)


def add_sessions(api: FastAPI, sessions: Sessions, actor: Callable[[Request], Actor],
                 owner: Callable[[Request], Actor]) -> None:
    @api.get("/api/sessions")
    async def listing(request: Request) -> list[dict[str, Any]]:
        who = actor(request)
        return sessions.owner_listing(None if who.is_owner else who.name)

    @api.post("/api/sessions/{session_id}")
    async def change(session_id: str, body: SessionChange, request: Request) -> dict[str, Any]:
        row = sessions.set_may_create(session_id, body.may_create_sessions, owner(request))
        return sessions.shown(row.id)

    @api.get("/api/session-groups")
    async def groups() -> list[str]:
        return sessions.groups()

    @api.post("/api/session-groups", status_code=201)
    async def add_group(body: NewGroup, request: Request) -> list[str]:
        return sessions.add_group(body.name, owner(request))
