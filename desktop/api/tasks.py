"""Background tasks (agents reach them through the MCP tools; the owner may start one too), and console pages."""

from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request

from desktop.api import models as m
from desktop.api.actors import actor, owner
from desktop.console import sgr
from desktop.console.stream import folded
from desktop.tasks.background import BackgroundTasks
from desktop.tasks.paging import Page, output_page, output_since

Position = Annotated[int, Query(ge=0, le=2**62)]  # a byte offset in an output file (a seek takes at most 2**63 - 1)
Count = Annotated[int, Query(ge=-2**62, le=2**62)]  # clamped where it is used


def add_tasks(api: FastAPI, tasks: BackgroundTasks) -> None:
    @api.get("/api/tasks")
    async def listing(request: Request, agent: str | None = None) -> list[m.TaskOut]:
        return [m.TaskOut.of(view) for view in tasks.listing(actor(request), agent)]

    @api.post("/api/tasks", status_code=201)
    async def start(body: m.NewTask, request: Request) -> m.TaskOut:
        row = tasks.start(owner(request), body.agent, body.command, body.description, body.kind)
        return m.TaskOut.of(tasks.view(row))

    @api.get("/api/tasks/{task_id}")
    async def show(task_id: str, request: Request) -> m.TaskOut:
        return m.TaskOut.of(tasks.view(tasks.visible(task_id, actor(request))))

    @api.get("/api/tasks/{task_id}/output")
    async def output(task_id: str, request: Request, lines: Count = 2000, before: Position | None = None,
                     after: Position | None = None, plain: bool = False, styled: bool = False) -> m.TaskOutput:
        """The last lines (or the page `before` an offset, or what came `after` one: a live console's next read)."""
        view = tasks.view(tasks.visible(task_id, actor(request)))
        return console_page(Path(view.row.dir) / "output", lines, before, after, plain, styled, view.note)

    @api.post("/api/tasks/{task_id}/stop")
    async def stop(task_id: str, body: m.Empty, request: Request) -> m.TaskOut:
        return m.TaskOut.of(tasks.view(await tasks.stop(task_id, actor(request))))


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
