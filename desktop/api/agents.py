"""Agents (their readiness and state, adding, changing, removing, pausing them all) and people (who may call)."""

from collections.abc import Callable

from fastapi import FastAPI, Request

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
    async def listing(request: Request) -> list[m.AgentOut]:
        who, rows, states = actor(request), agents.listing(), tasks.agent_states()
        shown = [
            m.AgentOut.of(a, status, states.get(a.name, "idle"))
            for a, status in zip(rows, readiness.of(rows), strict=True)
        ]
        if not who.is_owner:
            for agent in shown:
                agent.options = {k: v for k, v in agent.options.items() if k not in OWNER_ONLY_OPTIONS}
        return shown

    @api.get("/api/runtimes")
    async def runtimes() -> dict[str, list[str]]:
        return agents.runtimes()

    @api.post("/api/agents/pause")
    async def pause(body: m.Empty, request: Request) -> m.AgentsPaused:
        """Nothing new starts on any agent until they are resumed (what runs goes on)."""
        owner_settings.change("agents_paused", "yes", owner(request))
        return m.AgentsPaused(agents_paused="yes")

    @api.post("/api/agents/resume")
    async def resume(body: m.Empty, request: Request) -> m.AgentsPaused:
        owner_settings.change("agents_paused", "no", owner(request))
        return m.AgentsPaused(agents_paused="no")

    @api.post("/api/agents", status_code=201)
    async def add(body: m.NewAgent, request: Request) -> m.AgentOut:
        added = agents.add(body.name, body.runtime, body.folder, actor(request), body.options())
        readiness.forget()
        return m.AgentOut.of(added, readiness.of([added])[0])

    @api.post("/api/agents/{name}/change")
    async def change(name: str, body: m.AgentSetup, request: Request) -> m.AgentOut:
        changed = agents.change(name, body.runtime, body.folder, actor(request), body.options())
        readiness.forget()
        kick()
        return m.AgentOut.of(changed, readiness.of([changed])[0])

    @api.post("/api/agents/{name}/remove")
    async def remove(name: str, body: m.Empty, request: Request) -> m.Removed:
        agents.remove(name, actor(request))
        readiness.forget()
        return m.Removed(removed=name)


def add_people(api: FastAPI, principals: Principals, events: EventBus) -> None:
    @api.get("/api/health")
    async def health(request: Request) -> m.Health:
        return m.Health(status="ok", you=actor(request).name)

    @api.get("/api/people")
    async def listing(request: Request) -> list[m.PrincipalOut]:
        owner(request)
        return [m.PrincipalOut.of(p) for p in principals.listing()]

    @api.post("/api/people", status_code=201)
    async def add(body: m.NewPrincipal, request: Request) -> m.NewToken:
        token = principals.add(body.name, body.kind, actor(request))
        return m.NewToken(name=body.name, kind=body.kind, token=token)

    @api.post("/api/people/{name}/revoke")
    async def revoke(name: str, body: m.Empty, request: Request) -> m.Revoked:
        cancelled = principals.revoke(name, actor(request))
        events.publish(Revoked(name))  # their open event streams end now
        return m.Revoked(name=name, cancelled=cancelled)
