"""The API's request and response bodies. Unknown fields are refused, never ignored."""

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from desktop.core.ledger import MAX_PROMPT_CHARS
from desktop.core.visible import has_nul
from desktop.store.rows import AgentRow, PrincipalRow, QuestionRow, RequestRow, TimelineRow
from desktop.tasks.background import TaskView, task_status


def _runnable(what: str) -> AfterValidator:
    """Text that reaches a program (its argv, a shell's command line) cannot hold a NUL byte: it would end there."""

    def check(text: str) -> str:
        if has_nul(text):
            raise PydanticCustomError("nul_byte", f"the {what} holds a NUL byte, which cannot be passed to a program")
        return text

    return AfterValidator(check)


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Empty(Body):
    pass


class NewRequest(Body):
    agent: str = Field(min_length=1, max_length=64)
    prompt: Annotated[str, _runnable("prompt")] = Field(min_length=1, max_length=MAX_PROMPT_CHARS)


class AgentSetup(Body):
    runtime: str = Field(min_length=1, max_length=32)
    folder: Annotated[str, _runnable("folder")] = Field(min_length=1, max_length=4096)
    model: str | None = Field(default=None, max_length=200)
    permission_mode: str | None = Field(default=None, max_length=64)
    args: list[Annotated[str, _runnable("argument"), Field(max_length=4096)]] = Field(
        default_factory=list, max_length=64
    )
    env: dict[
        Annotated[str, _runnable("variable name")], Annotated[str, _runnable("variable"), Field(max_length=4096)]
    ] = Field(default_factory=dict, max_length=64)
    effort: str | None = Field(default=None, max_length=16)
    sessions: str | None = Field(default=None, max_length=8)  # "once" (default) or "ask"

    def options(self) -> dict[str, Any]:
        return self.model_dump(include={"model", "permission_mode", "args", "env", "effort", "sessions"})


class NewAgent(AgentSetup):
    name: str = Field(min_length=1, max_length=64)


class NewPrincipal(Body):
    name: str = Field(min_length=1, max_length=64)
    kind: Literal["person", "machine"] = "person"


class SecretValue(Body):
    name: str = Field(min_length=1, max_length=64)
    value: str = Field(min_length=1, max_length=8192)


class SettingChange(Body):
    key: str = Field(min_length=1, max_length=64)
    value: str = Field(max_length=256)


class NewQuestion(Body):
    question: str = Field(min_length=1, max_length=4000)
    options: list[Annotated[str, Field(max_length=200)]] = Field(default_factory=list, max_length=10)


class Answer(Body):
    text: str = Field(min_length=1, max_length=4000)


def iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")


class TimelineEntry(BaseModel):
    at: str
    kind: str
    state: str
    text: str

    @classmethod
    def of(cls, row: TimelineRow) -> "TimelineEntry":
        return cls(at=iso(row.at) or "", kind=row.kind, state=row.state, text=row.text)


class QuestionOut(BaseModel):
    id: int
    request_id: str
    question: str
    options: list[str]
    asked_at: str
    answer: str | None
    answered_by: str | None
    answered_at: str | None
    withdrawn: bool

    @classmethod
    def of(cls, row: QuestionRow) -> "QuestionOut":
        return cls(
            id=row.id,
            request_id=row.request_id,
            question=row.text,
            options=row.options,
            asked_at=iso(row.asked_at) or "",
            answer=row.answer or None,
            answered_by=row.answered_by,
            answered_at=iso(row.answered_at),
            withdrawn=row.answered_at is not None and not row.answer,
        )


class RequestOut(BaseModel):
    id: str
    state: str
    agent: str
    requester: str
    prompt: str
    retry_of: str | None
    references: list[str]
    conversation_ref: str | None
    progress: float | None
    result: str | None
    exit_code: int | None
    cancel_requested: bool
    created_at: str
    expires_at: str | None
    approved_at: str | None
    started_at: str | None
    ended_at: str | None
    timeline: list[TimelineEntry] | None = None
    question: QuestionOut | None = None  # the open question the agent waits on
    parent_id: str | None = None  # the request whose agent sent this prompt to a session
    via_model: str | None = None  # that agent's model (the prompt's badge)
    session: dict[str, Any] | None = None  # the session it was sent to (desktop.core.session_views.card)
    denied: bool = False  # cancelled by the owner's Deny: shown as "denied"
    continuation_of: str | None = None  # a background continuation: woken by tasks this request's turn started

    @classmethod
    def of(
        cls,
        row: RequestRow,
        timeline: list[TimelineRow] | None = None,
        question: QuestionRow | None = None,
        session: dict[str, Any] | None = None,
    ) -> "RequestOut":
        return cls(
            parent_id=row.parent_id,
            via_model=row.via_model,
            session=session,
            denied=row.denied,
            continuation_of=row.continuation_of,
            id=row.id,
            state=row.state,
            agent=row.agent,
            requester=row.requester,
            prompt=row.prompt,
            retry_of=row.retry_of,
            references=row.refs,
            conversation_ref=row.conversation_ref,
            progress=row.progress,
            result=row.result,
            exit_code=row.exit_code,
            cancel_requested=row.cancel_requested,
            created_at=iso(row.created_at) or "",
            expires_at=iso(row.expires_at),
            approved_at=iso(row.approved_at),
            started_at=iso(row.started_at),
            ended_at=iso(row.ended_at),
            timeline=None if timeline is None else [TimelineEntry.of(t) for t in timeline],
            question=None if question is None else QuestionOut.of(question),
        )


class AgentOut(BaseModel):
    name: str
    runtime: str
    folder: str
    options: dict[str, Any]
    status: str  # "ready", or what is missing ("not installed", "no API key")
    state: str = "idle"  # running_turn | background_only (answered, tasks still running) | idle

    @classmethod
    def of(cls, row: AgentRow, status: str, state: str = "idle") -> "AgentOut":
        return cls(
            name=row.name, runtime=row.runtime, folder=row.folder, options=row.options, status=status, state=state
        )


class NewTask(Body):
    agent: str = Field(min_length=1, max_length=64)
    command: Annotated[str, _runnable("command")] = Field(min_length=1, max_length=100_000)
    description: str = Field(default="", max_length=500)
    kind: Literal["command", "monitor"] = "command"


class SessionTask(Body):
    command: Annotated[str, _runnable("command")] = Field(min_length=1, max_length=100_000)
    description: str = Field(default="", max_length=500)
    kind: Literal["command", "monitor"] = "command"


class TaskOut(BaseModel):
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
    tests: dict[str, Any] | None

    @classmethod
    def of(cls, view: TaskView) -> "TaskOut":
        row = view.row
        return cls(
            id=row.id,
            kind=row.kind,
            agent=row.agent,
            request_id=row.request_id,
            description=row.description,
            command=row.command,
            state=view.state,
            status=task_status(view),
            started_at=iso(row.started_at) or "",
            last_output_at=iso(row.last_output_at),
            ended_at=iso(row.ended_at),
            outcome=row.outcome,
            exit_code=row.exit_code,
            stop_reason=row.stop_reason,
            quiet_minutes=view.quiet_minutes,
            quiet=view.quiet,
            tail_pipe=view.tail_pipe,
            tests=view.tests,
        )


class TaskOutput(BaseModel):
    lines: list[str]  # console lines, colours as SGR codes; a repeated line ends in "  ×N"
    before: int | None  # pass as ?before= for the page before this one
    older_not_loaded: bool
    pending: str
    end: int  # pass as ?after= for the lines that come next
    more: bool = False  # (with ?after=) more lines are there already: ask again at once
    note: str | None  # e.g. why output stops here (a pipe into tail)
    styled: list[list[dict[str, Any]]] | None = None  # (with ?styled=true) each line as styled runs, for a web page


class PrincipalOut(BaseModel):
    name: str
    kind: str
    created_at: str
    revoked_at: str | None

    @classmethod
    def of(cls, row: PrincipalRow) -> "PrincipalOut":
        return cls(name=row.name, kind=row.kind, created_at=iso(row.created_at) or "", revoked_at=iso(row.revoked_at))


class NewToken(BaseModel):
    name: str
    kind: str
    token: str


class Revoked(BaseModel):
    name: str
    cancelled: list[str]


class AuditEntry(BaseModel):
    seq: int
    at: str
    actor: str
    action: str
    request_id: str | None
    reason: str
    hash: str


class AuditCheck(BaseModel):
    intact: bool
    records: int
    first_bad: int | None = None
    problem: str | None = None


class Output(BaseModel):
    text: str
    offset: int
    state: str


class Health(BaseModel):
    status: str
    you: str


class AgentsPaused(BaseModel):
    agents_paused: str  # "yes" or "no"


class Removed(BaseModel):
    removed: str


class SecretsOut(BaseModel):
    stored: list[str]  # the provider keys in the keyring
    known: list[str]
    problem: str | None  # why secrets cannot be kept here


class SecretStored(BaseModel):
    stored: str
