"""The daemon's answers, each shape once: the API builds its answers as these (desktop/api/models.py fills them from
the store's rows) and /openapi.json describes them; the client (desktop/client/) reads the answers as these. Plain
pydantic, nothing of desktop, so the CLI and the tray load no server code with them.

Fields are declared in the order the daemon sends them (so `dump` gives back its JSON as it came). A field the shape
does not know is left out, never refused: a newer daemon's extra field reaches no client, and a dict the API validates
into an answer (a session's view, a connector's listing) never sends more than the answer names."""

from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


class Shape(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)  # built when first used

    def dump(self) -> dict[str, Any]:
        """As JSON, the way the daemon sent it."""
        return self.model_dump(mode="json")


# --- requests -------------------------------------------------------------------------------------------------------


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
    retry_of: str | None
    references: list[str]
    # a daemon older than schema 10 (still running after an upgrade of `cox`) says `session_ref`
    conversation_ref: str | None = Field(None, validation_alias=AliasChoices("conversation_ref", "session_ref"))
    progress: float | None
    result: str | None
    exit_code: int | None
    cancel_requested: bool
    created_at: str
    expires_at: str | None
    approved_at: str | None
    started_at: str | None
    ended_at: str | None
    timeline: list[TimelineEntry] | None = None  # only when one request is asked for
    question: Question | None = None  # the open question the agent waits on
    parent_id: str | None = None  # the request whose agent sent this prompt to a session
    via_model: str | None = None  # that agent's model (the prompt's badge)
    session: dict[str, Any] | None = None  # the session it was sent to (desktop.sessions.views.card)
    denied: bool = False  # cancelled by the owner's Deny: shown as "denied"
    continuation_of: str | None = None  # a background continuation: woken by tasks this request's turn started


class Output(Shape):
    """Raw output (redacted, whole lines) from a byte offset: `cox logs --raw`."""

    text: str
    offset: int
    state: str


class ConsolePage(Shape):
    """A request's or a task's console lines, with the cursors for the page before and for what comes after."""

    lines: list[str]  # console lines, colours as SGR codes; a repeated line ends in "  ×N"
    before: int | None  # pass as ?before= for the page before this one
    older_not_loaded: bool
    pending: str
    end: int  # pass as ?after= for the lines that come next
    more: bool = False  # (with ?after=) more lines are there already: ask again at once
    note: str | None  # e.g. why output stops here (a pipe into tail)
    styled: list[list[dict[str, Any]]] | None = None  # (with ?styled=true) each line as styled runs, for a web page


# --- agents, tasks, people ------------------------------------------------------------------------------------------


class Agent(Shape):
    name: str
    runtime: str
    folder: str
    options: dict[str, Any]
    status: str  # "ready", or what is missing ("not installed", "no API key")
    state: str = "idle"  # running_turn | background_only (answered, tasks still running) | idle


class Paused(Shape):
    agents_paused: str  # "yes" or "no"


class Removed(Shape):
    removed: str


class TestCounts(Shape):
    """The tests a task's output shows run, as the console counts them."""

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
    command: str  # redacted, at most 2,000 characters
    state: str  # running | stopping | ended
    status: str  # what a person reads: "running", "Stopping…", "completed", "failed (exit 2)", …
    started_at: str
    last_output_at: str | None
    ended_at: str | None
    outcome: str | None  # completed | failed | stopped | unknown
    exit_code: int | None
    stop_reason: str | None
    quiet_minutes: int | None  # "no output for N min"
    quiet: bool
    tail_pipe: bool
    tests: TestCounts | None


class Health(Shape):
    status: str
    you: str


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
    cancelled: list[str]  # their requests that had not started yet


# --- settings, secrets, audit ---------------------------------------------------------------------------------------


class SecretList(Shape):
    stored: list[str]  # the provider keys in the keyring
    known: list[str]
    problem: str | None  # why secrets cannot be kept here


class SecretStored(Shape):
    stored: str


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


# --- agent sessions, chat, the room ---------------------------------------------------------------------------------


class Session(Shape):
    """A session as the owner's list shows it (desktop.sessions.views.view); `result` and `question` only
    where there is one."""

    session: str
    title: str
    state: str
    runtime: str | None
    folder: str | None
    model: str | None
    permission_mode: str | None
    effort: str | None
    group: str | None
    started_by: str | None
    parent_title: str | None
    may_create_sessions: bool
    latest_request: str | None
    result: str | None = None  # the latest request's, once it ended
    question: dict[str, Any] | None = None  # what the agent asks (text, options, instruction)
    archived: bool


class Connector(Shape):
    name: str
    channel: str | None
    people: dict[str, str]  # chat user -> person
    connected: bool
    problem: str | None  # why it could not start


class Connected(Shape):
    name: str
    connected_to: str  # what the chat said the tokens are


class ChatPerson(Shape):
    chat_user: str
    person: str | None


class Room(Shape):
    local_url: str  # the room on this computer
    url: str | None  # where others reach it (room_address), if it is served there
    fingerprint: str | None  # of the room's HTTPS certificate
    problem: str | None  # why it is not served at room_address
    address: str  # the room_address setting


class RoomLink(Shape):
    url: str  # the room's address with the one-time code after '#': never sent to a server or kept in a log
    expires_at: str


class Me(Shape):
    """Who a browser signed in to the room is."""

    you: str
    owner: bool
    csrf: str


class SignedOut(Shape):
    signed_out: bool
