"""Every endpoint of the daemon's API, once: each function is a typed Call that either transport runs
(`Client(...).call(api.agents())`, `await AsyncClient(...).call(api.agents())`)."""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, TypeVar

from desktop.client import shapes as s
from desktop.client.call import Call, many, one, params, path, text_map, word_lists, words

T = TypeVar("T")

EVENTS = path("events")  # server-sent events: what changed, as it happens
Verb = Literal["approve", "deny", "cancel", "retry"]


@dataclass(frozen=True)
class AgentSetup:
    runtime: str
    folder: str
    model: str | None = None
    permission_mode: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    effort: str | None = None
    sessions: str | None = None  # "once" or "ask"


@dataclass(frozen=True)
class ChatSetup:
    kind: str  # slack | feishu
    app_token: str = ""  # Slack
    bot_token: str = ""  # Slack
    app_id: str = ""  # Feishu
    app_secret: str = ""  # Feishu
    channel: str | None = None  # where threads of requests sent from elsewhere go
    base_url: str | None = None


def _get(where: str, parse: Callable[[Any], T], **query: str | int | bool | None) -> Call[T]:
    return Call("GET", where, parse, params(**query))


def _post(where: str, parse: Callable[[Any], T], body: dict[str, Any] | None = None) -> Call[T]:
    return Call("POST", where, parse, body={} if body is None else body)


# --- requests -------------------------------------------------------------------------------------------------------


def requests(state: str | None = None, limit: int | None = None) -> Call[list[s.Request]]:
    return _get(path("requests"), many(s.Request), state=state, limit=limit)


def request(request_id: str) -> Call[s.Request]:
    """One request, with its timeline and the question it waits on."""
    return _get(path("requests", request_id), one(s.Request))


def send(agent: str, prompt: str) -> Call[s.Request]:
    return _post(path("requests"), one(s.Request), {"agent": agent, "prompt": prompt})


def act(request_id: str, verb: Verb) -> Call[s.Request]:
    """Approve, deny or cancel a request (the answer is the request now), or retry it (the answer is the new one)."""
    return _post(path("requests", request_id, verb), one(s.Request))


def answer(request_id: str, text: str) -> Call[s.Question]:
    return _post(path("requests", request_id, "answer"), one(s.Question), {"text": text})


def output(request_id: str, offset: int = 0) -> Call[s.Output]:
    """The request's raw output (redacted, whole lines) from byte `offset`."""
    return _get(path("requests", request_id, "output"), one(s.Output), offset=offset)


def console(
    request_id: str,
    lines: int | None = None,
    before: int | None = None,
    after: int | None = None,
    styled: bool | None = None,
) -> Call[s.ConsolePage]:
    """The request's console: its last `lines`, the page `before` a cursor, or what came `after` one."""
    return _get(
        path("requests", request_id, "console"),
        one(s.ConsolePage),
        lines=lines,
        before=before,
        after=after,
        styled=styled,
    )


# --- background tasks -----------------------------------------------------------------------------------------------


def tasks(agent: str | None = None) -> Call[list[s.Task]]:
    return _get(path("tasks"), many(s.Task), agent=agent)


def task(task_id: str) -> Call[s.Task]:
    return _get(path("tasks", task_id), one(s.Task))


def start_task(
    agent: str, command: str, description: str = "", kind: Literal["command", "monitor"] = "command"
) -> Call[s.Task]:
    return _post(
        path("tasks"), one(s.Task), {"agent": agent, "command": command, "description": description, "kind": kind}
    )


def task_console(
    task_id: str,
    lines: int | None = None,
    before: int | None = None,
    after: int | None = None,
    plain: bool | None = None,
    styled: bool | None = None,
) -> Call[s.ConsolePage]:
    return _get(
        path("tasks", task_id, "output"),
        one(s.ConsolePage),
        lines=lines,
        before=before,
        after=after,
        plain=plain,
        styled=styled,
    )


def stop_task(task_id: str) -> Call[s.Task]:
    return _post(path("tasks", task_id, "stop"), one(s.Task))


# --- agents and people ----------------------------------------------------------------------------------------------


def agents() -> Call[list[s.Agent]]:
    return _get(path("agents"), many(s.Agent))


def runtimes() -> Call[dict[str, list[str]]]:
    return _get(path("runtimes"), word_lists)


def add_agent(name: str, setup: AgentSetup) -> Call[s.Agent]:
    return _post(path("agents"), one(s.Agent), {"name": name, **asdict(setup)})


def change_agent(name: str, setup: AgentSetup) -> Call[s.Agent]:
    return _post(path("agents", name, "change"), one(s.Agent), asdict(setup))


def remove_agent(name: str) -> Call[s.Removed]:
    return _post(path("agents", name, "remove"), one(s.Removed))


def pause(paused: bool = True) -> Call[s.Paused]:
    """Nothing new starts on any agent (what runs goes on); `paused=False` resumes them."""
    return _post(path("agents", "pause" if paused else "resume"), one(s.Paused))


def people() -> Call[list[s.Principal]]:
    return _get(path("people"), many(s.Principal))


def add_person(name: str, machine: bool = False) -> Call[s.NewToken]:
    return _post(path("people"), one(s.NewToken), {"name": name, "kind": "machine" if machine else "person"})


def revoke(name: str) -> Call[s.Revoked]:
    return _post(path("people", name, "revoke"), one(s.Revoked))


# --- the room, chat connectors, sessions ----------------------------------------------------------------------------


def room() -> Call[s.Room]:
    return _get(path("room"), one(s.Room))


def room_link(person: str) -> Call[s.RoomLink]:
    return _post(path("room", "link"), one(s.RoomLink), {"person": person})


def connectors() -> Call[list[s.Connector]]:
    return _get(path("connectors"), many(s.Connector))


def add_connector(setup: ChatSetup) -> Call[s.Connected]:
    return _post(path("connectors"), one(s.Connected), asdict(setup))


def map_chat_user(kind: str, chat_user: str, person: str | None) -> Call[s.ChatPerson]:
    """Say which person a chat user is; `person=None` forgets the chat user."""
    return _post(path("connectors", kind, "people"), one(s.ChatPerson), {"chat_user": chat_user, "person": person})


def remove_connector(kind: str) -> Call[s.Removed]:
    return _post(path("connectors", kind, "remove"), one(s.Removed))


def sessions() -> Call[list[s.Session]]:
    return _get(path("sessions"), many(s.Session))


def change_session(session_id: str, may_create_sessions: bool) -> Call[s.Session]:
    return _post(path("sessions", session_id), one(s.Session), {"may_create_sessions": may_create_sessions})


def session_groups() -> Call[list[str]]:
    return _get(path("session-groups"), words)


def add_session_group(name: str) -> Call[list[str]]:
    return _post(path("session-groups"), words, {"name": name})


# --- settings, secrets, audit, health -------------------------------------------------------------------------------


def settings() -> Call[dict[str, str]]:
    return _get(path("settings"), text_map)


def change_setting(key: str, value: str) -> Call[dict[str, str]]:
    """The answer is every setting as it is now."""
    return _post(path("settings"), text_map, {"key": key, "value": value})


def secrets() -> Call[s.SecretList]:
    return _get(path("secrets"), one(s.SecretList))


def set_secret(name: str, value: str) -> Call[s.SecretStored]:
    return _post(path("secrets"), one(s.SecretStored), {"name": name, "value": value})


def audit(request_id: str | None = None, limit: int | None = None) -> Call[list[s.AuditEntry]]:
    return _get(path("audit"), many(s.AuditEntry), request_id=request_id, limit=limit)


def verify_audit() -> Call[s.AuditCheck]:
    return _get(path("audit", "verify"), one(s.AuditCheck))


def health() -> Call[s.Health]:
    return _get(path("health"), one(s.Health))
