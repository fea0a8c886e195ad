"""Sessions agents started, for the owner (and each person, those of their own requests): the list, the owner's
"may create sessions" switch per session, and the session groups agents may name."""

from collections.abc import Callable

from fastapi import FastAPI, Request
from pydantic import Field

from desktop import answers as a
from desktop.api.models import Body
from desktop.core.actors import Actor
from desktop.sessions.rules import Sessions


class SessionChange(Body):
    may_create_sessions: bool


class NewGroup(Body):
    name: str = Field(min_length=1, max_length=80)


def add_sessions(
    api: FastAPI, sessions: Sessions, actor: Callable[[Request], Actor], owner: Callable[[Request], Actor]
) -> None:
    @api.get("/api/sessions", response_model_exclude_unset=True)
    async def listing(request: Request) -> list[a.Session]:
        who = actor(request)
        shown = sessions.owner_listing(None if who.is_owner else who.name)
        return [a.Session.model_validate(session) for session in shown]

    @api.post("/api/sessions/{session_id}", response_model_exclude_unset=True)
    async def change(session_id: str, body: SessionChange, request: Request) -> a.Session:
        row = sessions.set_may_create(session_id, body.may_create_sessions, owner(request))
        return a.Session.model_validate(sessions.shown(row.id))

    @api.get("/api/session-groups")
    async def groups() -> list[str]:
        return sessions.groups()

    @api.post("/api/session-groups", status_code=201)
    async def add_group(body: NewGroup, request: Request) -> list[str]:
        return sessions.add_group(body.name, owner(request))
