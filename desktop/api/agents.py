"""Agents (their readiness and state, adding, changing, removing, pausing them all) and people (who may call)."""

from collections.abc import Callable

from fastapi import FastAPI, Request

from desktop import answers as a
from desktop.api import models as m
from desktop.api.actors import actor, owner
from desktop.core.agents import Agents
from desktop.core.events import EventBus, Revoked
from desktop.core.owner_settings import OwnerSettings
from desktop.core.principals import Principals
from desktop.core.readiness import Readiness
from desktop.tasks.background import BackgroundTasks

OWNER_ONLY_OPTIONS = ("env", "args")  # an agent's environment and extra CLI arguments: the owner's business


def add_agents(
    api: FastAPI,
    agents: Agents,
    readiness: Readiness,
    tasks: BackgroundTasks,
    owner_settings: OwnerSettings,
    kick: Callable[[], None],
) -> None:
    """`kick`: look at the agents' queues again."""

    @api.get("/api/agents")
    async def listing(request: Request) -> list[a.Agent]:
        who, rows, states = actor(request), agents.listing(), tasks.agent_states()
        hidden = () if who.is_owner else OWNER_ONLY_OPTIONS
        return [
            m.agent_of(row, status, states.get(row.name, "idle"), hidden)
            for row, status in zip(rows, readiness.of(rows), strict=True)
        ]

    @api.get("/api/runtimes")
    async def runtimes() -> dict[str, list[str]]:
        return agents.runtimes()

    @api.post("/api/agents/pause")
    async def pause(body: m.Empty, request: Request) -> a.Paused:
        """Nothing new starts on any agent until they are resumed (what runs goes on)."""
        owner_settings.change("agents_paused", "yes", owner(request))
        return a.Paused(agents_paused="yes")

    @api.post("/api/agents/resume")
    async def resume(body: m.Empty, request: Request) -> a.Paused:
        owner_settings.change("agents_paused", "no", owner(request))
        return a.Paused(agents_paused="no")

    @api.post("/api/agents", status_code=201)
    async def add(body: m.NewAgent, request: Request) -> a.Agent:
        added = agents.add(body.name, body.runtime, body.folder, actor(request), body.options())
        readiness.forget()
        return m.agent_of(added, readiness.of([added])[0])

    @api.post("/api/agents/{name}/change")
    async def change(name: str, body: m.AgentSetup, request: Request) -> a.Agent:
        changed = agents.change(name, body.runtime, body.folder, actor(request), body.options())
        readiness.forget()
        kick()
        return m.agent_of(changed, readiness.of([changed])[0])

    @api.post("/api/agents/{name}/remove")
    async def remove(name: str, body: m.Empty, request: Request) -> a.Removed:
        agents.remove(name, actor(request))
        readiness.forget()
        return a.Removed(removed=name)


def add_people(api: FastAPI, principals: Principals, events: EventBus) -> None:
    @api.get("/api/health")
    async def health(request: Request) -> a.Health:
        return a.Health(status="ok", you=actor(request).name)

    @api.get("/api/people")
    async def listing(request: Request) -> list[a.Principal]:
        owner(request)
        return [m.principal_of(p) for p in principals.listing()]

    @api.post("/api/people", status_code=201)
    async def add(body: m.NewPrincipal, request: Request) -> a.NewToken:
        token = principals.add(body.name, body.kind, actor(request))
        return a.NewToken(name=body.name, kind=body.kind, token=token)

    @api.post("/api/people/{name}/revoke")
    async def revoke(name: str, body: m.Empty, request: Request) -> a.Revoked:
        cancelled = principals.revoke(name, actor(request))
        events.publish(Revoked(name))  # their open event streams end now
        return a.Revoked(name=name, cancelled=cancelled)
