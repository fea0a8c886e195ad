"""/api/events: what changes, as server-sent events; each caller sees their own requests' (the owner everything),
and the stream ends when the caller's token is revoked or their browser session signs out."""

import json
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from sse_starlette import EventSourceResponse

from desktop.api.actors import actor
from desktop.core.events import EventBus
from desktop.core.websessions import session_key

STREAM: dict[int | str, dict[str, Any]] = {200: {
    "description": "Server-sent events: `hello` first (its data `{\"you\": name}`), then one per change, named by "
                   "its type (request, runtime, task, settings, room, …), its data a JSON object",
    "content": {"text/event-stream": {"schema": {"type": "string"}}}}}


def add_events(api: FastAPI, events: EventBus) -> None:
    @api.get("/api/events", response_class=EventSourceResponse, responses=STREAM)
    async def stream(request: Request) -> EventSourceResponse:
        who = actor(request)
        browser = getattr(request.state, "browser_session", None)
        ended_by = {("revoked", who.name), ("signed_out", session_key(browser) if browser else None)}

        async def each() -> AsyncIterator[dict[str, str]]:
            with events.subscribe() as queue:
                yield {"event": "hello", "data": json.dumps({"you": who.name})}
                while True:
                    event = await queue.get()
                    if (event.get("type"), event.get("name")) in ended_by:
                        return
                    if who.is_owner or event.get("requester") == who.name or event.get("type") == "lagged":
                        yield {"event": str(event.get("type", "event")), "data": json.dumps(event)}

        return EventSourceResponse(each(), ping=15)
