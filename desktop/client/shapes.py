"""The daemon's answers as typed values. Fields are declared in the order the daemon sends them (so `dump` gives back
its JSON as it came); a field a newer daemon adds is kept, not refused. Light on purpose: the CLI and the tray import
this, never the server's models (they pull in the store and the task machinery)."""

from typing import Any

from pydantic import BaseModel, ConfigDict


class Shape(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)  # built when first used

    def dump(self) -> dict[str, Any]:
        """As JSON, the way the daemon sent it."""
        return self.model_dump(mode="json")


class TimelineEntry(Shape):
    at: str
    kind: str
    state: str
    text: str


class Question(Shape):
    id: int
    request_id: str
    question: str
    options: list[str]
    asked_at: str
    answer: str | None
    answered_by: str | None
    answered_at: str | None
    withdrawn: bool


class Request(Shape):
    id: str
    state: str
    agent: str
    requester: str
    prompt: str
    retry_of: str | None = None
    references: list[str] = []
    conversation_ref: str | None = None
    progress: float | None = None
    result: str | None = None
    exit_code: int | None = None
    cancel_requested: bool = False
    created_at: str = ""
    expires_at: str | None = None
    approved_at: str | None = None
    started_at: str | None = None
    ended_at: str | None = None
    timeline: list[TimelineEntry] | None = None  # only when one request is asked for
    question: Question | None = None  # the open question the agent waits on
    parent_id: str | None = None  # the request whose agent sent this prompt to a session
    via_model: str | None = None
    session: dict[str, Any] | None = None  # the session it was sent to (desktop.core.session_views.card)
    denied: bool = False  # cancelled by the owner's Deny
    continuation_of: str | None = None


class Output(Shape):
    """Raw output bytes (redacted) from an offset: `cox logs --raw`."""

    text: str
    offset: int
    state: str


class ConsolePage(Shape):
    """Console lines (colours as SGR codes; a repeated line ends in "  ×N"), with the cursors for the page `before`
    and for what comes `after` (`end`)."""

    lines: list[str]
    before: int | None
    older_not_loaded: bool
    pending: str
    end: int
    more: bool = False
    note: str | None = None
    styled: list[list[dict[str, Any]]] | None = None


class Agent(Shape):
    name: str
    runtime: str
    folder: str
    options: dict[str, Any]
    status: str  # "ready", or what is missing
    state: str = "idle"  # running_turn | background_only | idle


class TestCounts(Shape):
    runner: str | None = None
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    first_failure: dict[str, Any] | None = None


class Task(Shape):
    id: str
    kind: str
    agent: str | None
    request_id: str | None
    description: str
    command: str
    state: str  # running | stopping | ended
    status: str  # what a person reads
    started_at: str
    last_output_at: str | None
    ended_at: str | None
    outcome: str | None
    exit_code: int | None
    stop_reason: str | None
    quiet_minutes: int | None
    quiet: bool
    tail_pipe: bool
    tests: TestCounts | None


class Principal(Shape):
    name: str
    kind: str
    created_at: str
    revoked_at: str | None


class NewToken(Shape):
    name: str
    kind: str
    token: str


class Revoked(Shape):
    name: str
    cancelled: list[str]


class Removed(Shape):
    removed: str


class Paused(Shape):
    agents_paused: str


class AuditEntry(Shape):
    seq: int
    at: str
    actor: str
    action: str
    request_id: str | None
    reason: str
    hash: str


class AuditCheck(Shape):
    intact: bool
    records: int
    first_bad: int | None = None
    problem: str | None = None


class SecretList(Shape):
    stored: list[str]
    known: list[str]
    problem: str | None


class SecretStored(Shape):
    stored: str


class Connector(Shape):
    name: str
    channel: str | None
    people: dict[str, str]  # chat user → person
    connected: bool
    problem: str | None


class Connected(Shape):
    name: str
    connected_to: str


class ChatPerson(Shape):
    chat_user: str
    person: str | None


class Session(Shape):
    session: str
    title: str
    state: str
    runtime: str | None = None
    folder: str | None = None
    model: str | None = None
    permission_mode: str | None = None
    effort: str | None = None
    group: str | None = None
    started_by: str | None = None
    parent_title: str | None = None
    may_create_sessions: bool = False
    latest_request: str | None = None
    archived: bool = False


class Room(Shape):
    local_url: str
    url: str | None  # on the network, when served there
    fingerprint: str | None
    problem: str | None
    address: str | None = None


class RoomLink(Shape):
    url: str
    expires_at: str


class Health(Shape):
    status: str
    you: str
