"""Requests: create, list, show, answer, approve, deny, cancel, retry, and their output."""

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

from desktop import answers as a
from desktop.api import models as m
from desktop.api.actors import actor
from desktop.api.tasks import Count, Position
from desktop.core.ledger import Ledger
from desktop.core.states import TERMINAL
from desktop.store.rows import QuestionRow, RequestRow, TimelineRow
from desktop.tasks.paging import console_page, raw_since

OUTPUT_CHUNK = 256 * 1024


def add_requests(
    api: FastAPI,
    ledger: Ledger,
    output_path: Callable[[str], Path | None],
    card: Callable[[RequestRow], dict[str, Any] | None],
) -> None:
    """`card`: for a prompt an agent sent to a session, what the owner's card shows about that session."""

    def out(
        row: RequestRow, timeline: list[TimelineRow] | None = None, question: QuestionRow | None = None
    ) -> a.Request:
        return m.request_of(row, timeline, question, card(row))

    @api.post("/api/requests", status_code=201)
    async def create(body: m.NewRequest, request: Request) -> a.Request:
        return out(ledger.create(actor(request), body.agent, body.prompt))

    @api.get("/api/requests")
    async def listing(request: Request, state: str | None = None, limit: Count = 500) -> list[a.Request]:
        return [out(r) for r in ledger.listing(actor(request), state, max(1, min(limit, 100_000)))]

    @api.get("/api/requests/{request_id}")
    async def show(request_id: str, request: Request) -> a.Request:
        row = ledger.visible(request_id, actor(request))
        return out(row, ledger.timeline(row.id), ledger.open_question(row.id))

    @api.post("/api/requests/{request_id}/answer")
    async def answer(request_id: str, body: m.Answer, request: Request) -> a.Question:
        return m.question_of(ledger.answer(request_id, actor(request), body.text))

    @api.post("/api/requests/{request_id}/approve")
    async def approve(request_id: str, body: m.Empty, request: Request) -> a.Request:
        return out(ledger.approve(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/deny")
    async def deny(request_id: str, body: m.Empty, request: Request) -> a.Request:
        return out(ledger.deny(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/cancel")
    async def cancel(request_id: str, body: m.Empty, request: Request) -> a.Request:
        return out(ledger.cancel(request_id, actor(request)))

    @api.post("/api/requests/{request_id}/retry", status_code=201)
    async def retry(request_id: str, body: m.Empty, request: Request) -> a.Request:
        return out(ledger.retry(request_id, actor(request)))

    @api.get("/api/requests/{request_id}/output")
    async def output(request_id: str, request: Request, offset: Position = 0) -> a.Output:
        row = ledger.visible(request_id, actor(request))
        text, offset = raw_since(output_path(row.id), offset, OUTPUT_CHUNK, row.state in TERMINAL)
        return a.Output(text=text, offset=offset, state=row.state)

    @api.get("/api/requests/{request_id}/console")
    async def console(
        request_id: str,
        request: Request,
        lines: Count = 2000,
        before: Position | None = None,
        after: Position | None = None,
        styled: bool = False,
    ) -> a.ConsolePage:
        """The request's own output as console pages, like a task's (the room's console reads it this way)."""
        row = ledger.visible(request_id, actor(request))
        return console_page(output_path(row.id), lines, before, after, False, styled, None)
