"""/api/events: what changes, as server-sent events; each caller sees their own requests' (the owner everything),
and the stream ends when the caller's token is revoked or their sign-in to the room ends. A request's or a task's
event carries its row as GET /api/requests/{id} (without timeline) or GET /api/tasks/{id} shows it, under "row"."""

import json
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from sse_starlette import EventSourceResponse
from starlette.types import Scope

from desktop.api import models as m
from desktop.api.actors import actor
from desktop.core.events import Ending, Event, EventBus, Lagged, RequestChanged, Revoked, SignedOut, TaskChanged
from desktop.room.signins import sign_in_key
from desktop.store.rows import RequestRow
from desktop.tasks.background import BackgroundTasks

STREAM: dict[int | str, dict[str, Any]] = {
    200: {
        "description": 'Server-sent events: `hello` first (its data `{"you": name}`), then one per change, named by '
        "its type (request, runtime, task, settings, room, …), its data a JSON object",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def add_events(
    api: FastAPI,
    events: EventBus,
    tasks: BackgroundTasks,
    card: Callable[[RequestRow], dict[str, Any] | None],
    still_allowed: Callable[[Scope], bool],
) -> None:
    """`card`: what the owner's card shows about a session a request's prompt went to (as in the request's row).
    `still_allowed`: whether a stream's caller is still let in, asked once the stream listens for its ending."""

    def render(event: Event) -> dict[str, str]:
        data = event.data()
        if isinstance(event, RequestChanged):
            data["row"] = m.request_of(event.row, None, None, card(event.row)).model_dump(mode="json")
        elif isinstance(event, TaskChanged):
            data["row"] = m.task_of(tasks.view(event.row)).model_dump(mode="json")
        return {"event": event.name(), "data": json.dumps(data)}

    sent = Rendered(render)

    @api.get("/api/events", response_class=EventSourceResponse, responses=STREAM)
    async def stream(request: Request) -> EventSourceResponse:
        who = actor(request)
        browser = getattr(request.state, "sign_in", None)
        ends: set[Ending] = {Revoked(who.name), *([SignedOut(sign_in_key(browser))] if browser else [])}

        async def each() -> AsyncIterator[dict[str, str]]:
            with events.subscribe(ends) as queue:
                if not still_allowed(request.scope):  # revoked or signed out before it listened
                    return
                yield {"event": "hello", "data": json.dumps({"you": who.name})}
                while not isinstance(event := await queue.get(), Ending) or event not in ends:
                    if who.is_owner or event.about() == who.name or isinstance(event, Lagged):
                        yield sent(event)

        return EventSourceResponse(each(), ping=15)


class Rendered:
    """Each event as sent, made once however many streams send it, and kept while the event is (in some stream's
    queue or in hand)."""

    def __init__(self, render: Callable[[Event], dict[str, str]]) -> None:
        self._render = render
        self._made: dict[int, dict[str, str]] = {}  # by the event's id(): its entry goes when the event does

    def __call__(self, event: Event) -> dict[str, str]:
        key = id(event)
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._render(event)
            weakref.finalize(event, self._made.pop, key, None)
        return made
