"""The room's own addresses: its page and files, signing in and out from a browser, and for the owner where the
room is reached and one-time sign-in links. Everything else the page does goes through the same API as the CLI."""

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response
from pydantic import Field

from desktop import answers as a
from desktop.api.models import Body, Empty, iso
from desktop.api.security import ROOM_FILES, cookie_name
from desktop.core import events as news
from desktop.core.actors import Actor
from desktop.core.errors import Forbidden
from desktop.core.events import EventBus
from desktop.resources import resource
from desktop.room.signins import SIGN_IN_DAYS, SignIn, SignIns, TooManyAttempts, csrf_for, sign_in_key

TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "text/javascript; charset=utf-8",
    "css": "text/css; charset=utf-8",
    "svg": "image/svg+xml",
}


class TokenSignIn(Body):
    token: str = Field(min_length=1, max_length=200)


class Exchange(Body):
    code: str = Field(min_length=1, max_length=100)


class LinkFor(Body):
    person: str = Field(min_length=1, max_length=64)


def add_room(
    api: FastAPI,
    web: SignIns,
    events: EventBus,
    status: Callable[[], dict[str, Any]],
    actor: Callable[[Request], Actor],
    owner: Callable[[Request], Actor],
) -> None:
    files = {path: (resource("room") / name).read_bytes() for path, name in ROOM_FILES.items()}

    def page_file(path: str) -> Callable[[], Awaitable[Response]]:
        async def serve() -> Response:
            return Response(files[path], media_type=TYPES[ROOM_FILES[path].rsplit(".", 1)[1]])

        return serve

    for path in ROOM_FILES:
        api.add_api_route(path, page_file(path), methods=["GET", "HEAD"], include_in_schema=False)

    @api.exception_handler(TooManyAttempts)
    async def slow_down(_: Request, error: TooManyAttempts) -> JSONResponse:
        return JSONResponse({"error": str(error)}, status_code=429, headers={"Retry-After": str(error.retry_after)})

    def signed_in(request: Request, session: SignIn) -> JSONResponse:
        answer = JSONResponse(
            a.Me(you=session.actor.name, owner=session.actor.is_owner, csrf=session.csrf).model_dump()
        )
        answer.set_cookie(
            cookie_name(request.url.scheme),
            session.session_id,
            max_age=SIGN_IN_DAYS * 86400,
            path="/",
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )
        return answer

    def client(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    @api.post("/room/signin", response_model=a.Me)
    async def sign_in(body: TokenSignIn, request: Request) -> JSONResponse:
        return signed_in(request, web.sign_in(body.token, client(request)))

    @api.post("/room/exchange", response_model=a.Me)
    async def exchange(body: Exchange, request: Request) -> JSONResponse:
        return signed_in(request, web.exchange(body.code, client(request)))

    @api.get("/room/me")
    async def me(request: Request) -> a.Me:
        who, session_id = actor(request), getattr(request.state, "sign_in", None)
        if session_id is None:
            raise Forbidden("this is for the room's page; the CLI signs in with its token")
        return a.Me(you=who.name, owner=who.is_owner, csrf=csrf_for(session_id))

    @api.post("/room/signout", response_model=a.SignedOut)
    async def sign_out(body: Empty, request: Request) -> JSONResponse:
        actor(request)
        session_id = getattr(request.state, "sign_in", None)
        if session_id is not None:
            web.sign_out(session_id)
            events.publish(news.SignedOut(sign_in_key(session_id)))  # its event stream ends
        answer = JSONResponse(a.SignedOut(signed_out=True).model_dump())
        answer.delete_cookie(
            cookie_name(request.url.scheme),
            path="/",
            secure=request.url.scheme == "https",
            httponly=True,
            samesite="strict",
        )
        return answer

    @api.get("/api/room")
    async def room(request: Request) -> a.Room:
        owner(request)
        return a.Room.model_validate(status())

    @api.post("/api/room/link", status_code=201)
    async def link(body: LinkFor, request: Request) -> a.RoomLink:
        code, expires = web.link_code(body.person, owner(request))
        shown = status()
        return a.RoomLink(url=f"{shown['url'] or shown['local_url']}#code={code}", expires_at=iso(expires) or "")
