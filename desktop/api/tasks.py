"""Background tasks (agents reach them through the MCP tools; the owner may start one too), and console pages."""

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request

from desktop.api import models as m
from desktop.api.actors import actor, owner
from desktop.tasks import paging
from desktop.tasks.background import BackgroundTasks

Position = Annotated[int, Query(ge=0, le=2**62)]  # a byte offset in an output file (a seek takes at most 2**63 - 1)
Count = Annotated[int, Query(ge=-(2**62), le=2**62)]  # clamped where it is used


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
    async def output(
        task_id: str,
        request: Request,
        lines: Count = 2000,
        before: Position | None = None,
        after: Position | None = None,
        plain: bool = False,
        styled: bool = False,
    ) -> m.TaskOutput:
        """The last lines (or the page `before` an offset, or what came `after` one: a live console's next read)."""
        view = tasks.view(tasks.visible(task_id, actor(request)))
        return console_page(Path(view.row.dir) / "output", lines, before, after, plain, styled, view.note)

    @api.post("/api/tasks/{task_id}/stop")
    async def stop(task_id: str, body: m.Empty, request: Request) -> m.TaskOut:
        return m.TaskOut.of(tasks.view(await tasks.stop(task_id, actor(request))))


def console_page(
    output: Path | None, lines: int, before: int | None, after: int | None, plain: bool, styled: bool, note: str | None
) -> m.TaskOutput:
    """A console page of a request or a task (desktop/tasks/paging.py builds it, for the MCP tools too)."""
    return m.TaskOutput(**asdict(paging.console_page(output, lines, before, after, plain, styled, note)))
