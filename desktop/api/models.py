"""The API's request bodies (unknown fields are refused, never ignored), and its answers (desktop/answers.py) made
from the store's rows."""

from collections.abc import Collection
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from desktop import answers as a
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


class NewTask(Body):
    agent: str = Field(min_length=1, max_length=64)
    command: Annotated[str, _runnable("command")] = Field(min_length=1, max_length=100_000)
    description: str = Field(default="", max_length=500)
    kind: Literal["command", "monitor"] = "command"


class SessionTask(Body):
    command: Annotated[str, _runnable("command")] = Field(min_length=1, max_length=100_000)
    description: str = Field(default="", max_length=500)
    kind: Literal["command", "monitor"] = "command"


def iso(at: float | None) -> str | None:
    return None if at is None else datetime.fromtimestamp(at, UTC).isoformat(timespec="milliseconds")


def timeline_of(row: TimelineRow) -> a.TimelineEntry:
    return a.TimelineEntry(at=iso(row.at) or "", kind=row.kind, state=row.state, text=row.text)


def question_of(row: QuestionRow) -> a.Question:
    return a.Question(
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


def request_of(
    row: RequestRow,
    timeline: list[TimelineRow] | None = None,
    question: QuestionRow | None = None,
    session: dict[str, Any] | None = None,
) -> a.Request:
    return a.Request(
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
        timeline=None if timeline is None else [timeline_of(t) for t in timeline],
        question=None if question is None else question_of(question),
        parent_id=row.parent_id,
        via_model=row.via_model,
        session=session,
        denied=row.denied,
        continuation_of=row.continuation_of,
    )


def agent_of(row: AgentRow, status: str, state: str = "idle", hidden: Collection[str] = ()) -> a.Agent:
    """`hidden`: options left out (those only the owner sees)."""
    options = {k: v for k, v in row.options.items() if k not in hidden}
    return a.Agent(name=row.name, runtime=row.runtime, folder=row.folder, options=options, status=status, state=state)


def task_of(view: TaskView) -> a.Task:
    row = view.row
    return a.Task(
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
        tests=None if view.tests is None else a.TestCounts.model_validate(view.tests),
    )


def principal_of(row: PrincipalRow) -> a.Principal:
    return a.Principal(
        name=row.name, kind=row.kind, created_at=iso(row.created_at) or "", revoked_at=iso(row.revoked_at)
    )
