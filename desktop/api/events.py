"""/api/events: what changes, as server-sent events; each caller sees their own requests' (the owner everything),
and the stream ends when the caller's token is revoked or their sign-in to the room ends. A request's or a task's
event carries its row as GET /api/requests/{id} (without timeline) or GET /api/tasks/{id} shows it, under "row"."""

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from fastapi import FastAPI, Request
from sse_starlette import EventSourceResponse

from desktop.api import models as m
from desktop.api.actors import actor
from desktop.core.events import Event, EventBus, Lagged, RequestChanged, Revoked, SignedOut, TaskChanged
from desktop.core.signins import sign_in_key
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
    api: FastAPI, events: EventBus, tasks: BackgroundTasks, card: Callable[[RequestRow], dict[str, Any] | None]
) -> None:
    """`card`: what the owner's card shows about a session a request's prompt went to (as in the request's row)."""

    def sent(event: Event) -> dict[str, str]:
        data = event.data()
        if isinstance(event, RequestChanged):
            data["row"] = m.RequestOut.of(event.row, None, None, card(event.row)).model_dump(mode="json")
        elif isinstance(event, TaskChanged):
            data["row"] = m.TaskOut.of(tasks.view(event.row)).model_dump(mode="json")
        return {"event": event.name(), "data": json.dumps(data)}

    @api.get("/api/events", response_class=EventSourceResponse, responses=STREAM)
    async def stream(request: Request) -> EventSourceResponse:
        who = actor(request)
        browser = getattr(request.state, "sign_in", None)
        signed_in_as = sign_in_key(browser) if browser else None

        endings: set[Event] = {Revoked(who.name), *([SignedOut(signed_in_as)] if signed_in_as else [])}

        def ends(event: Event) -> bool:
            return stream_ends(event, endings, events)

        async def each() -> AsyncIterator[dict[str, str]]:
            with events.subscribe() as queue:
                yield {"event": "hello", "data": json.dumps({"you": who.name})}
                while True:
                    event = await queue.get()
                    if ends(event):
                        return
                    if who.is_owner or event.about() == who.name or isinstance(event, Lagged):
                        yield sent(event)

        return EventSourceResponse(each(), ping=15)


def stream_ends(event: Event, endings: set[Event], events: EventBus) -> bool:
    """Whether a caller's stream ends at `event`: their revocation or sign-out, or a lag (which may have dropped
    that ending from their queue) after one."""
    if isinstance(event, Lagged):
        return not endings.isdisjoint(events.endings)
    return isinstance(event, Revoked | SignedOut) and event in endings
