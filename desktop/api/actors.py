"""Who is calling: LocalSecurity put the actor on the request before any route runs."""

from fastapi import Request

from desktop.core.actors import Actor
from desktop.core.errors import Forbidden


def actor(request: Request) -> Actor:
    found: Actor = request.state.actor
    return found


def owner(request: Request) -> Actor:
    who = actor(request)
    if not who.is_owner:
        raise Forbidden("only the owner can do this")
    return who
