"""Background tasks (agents reach them through the MCP tools; the owner may start one too), and console pages."""

from pathlib import Path
from typing import Annotated

from fastapi import FastAPI, Query, Request

from desktop import answers as a
from desktop.api import models as m
from desktop.api.actors import actor, owner
from desktop.tasks.background import BackgroundTasks
from desktop.tasks.paging import console_page

Position = Annotated[int, Query(ge=0, le=2**62)]  # a byte offset in an output file (a seek takes at most 2**63 - 1)
Count = Annotated[int, Query(ge=-(2**62), le=2**62)]  # clamped where it is used


def add_tasks(api: FastAPI, tasks: BackgroundTasks) -> None:
    @api.get("/api/tasks")
    async def listing(request: Request, agent: str | None = None) -> list[a.Task]:
        return [m.task_of(view) for view in tasks.listing(actor(request), agent)]

    @api.post("/api/tasks", status_code=201)
    async def start(body: m.NewTask, request: Request) -> a.Task:
        row = tasks.start(owner(request), body.agent, body.command, body.description, body.kind)
        return m.task_of(tasks.view(row))

    @api.get("/api/tasks/{task_id}")
    async def show(task_id: str, request: Request) -> a.Task:
        return m.task_of(tasks.view(tasks.visible(task_id, actor(request))))

    @api.get("/api/tasks/{task_id}/output")
    async def output(
        task_id: str,
        request: Request,
        lines: Count = 2000,
        before: Position | None = None,
        after: Position | None = None,
        plain: bool = False,
        styled: bool = False,
    ) -> a.ConsolePage:
        """The last lines (or the page `before` an offset, or what came `after` one: a live console's next read)."""
        view = tasks.view(tasks.visible(task_id, actor(request)))
        return console_page(Path(view.row.dir) / "output", lines, before, after, plain, styled, view.note)

    @api.post("/api/tasks/{task_id}/stop")
    async def stop(task_id: str, body: m.Empty, request: Request) -> a.Task:
        return m.task_of(tasks.view(await tasks.stop(task_id, actor(request))))
