"""Plain records read from the store; the layers above use these, never sqlite3.Row."""

import json
import sqlite3
from dataclasses import dataclass


@dataclass(frozen=True)
class RequestRow:
    id: str
    owner: str
    agent: str
    requester: str
    prompt: str
    state: str
    created_at: float
    updated_at: float
    expires_at: float | None
    approved_at: float | None
    queue_seq: int | None
    started_at: float | None
    ended_at: float | None
    retry_of: str | None
    refs: list[str]
    conversation_ref: str | None
    progress: float | None
    result: str | None
    exit_code: int | None
    cancel_requested: bool
    parent_id: str | None = None  # the request whose agent sent this prompt to a session it started
    via_model: str | None = None  # that agent's model, shown as the prompt's badge
    call_key: str | None = None  # the tool call that sent it: the same call, repeated after a restart, sends once
    denied: bool = False  # cancelled by the owner's Deny: it reads "denied"
    continuation_of: str | None = None  # a background continuation: the request whose turn started the tasks it reports

    @classmethod
    def of(cls, row: sqlite3.Row) -> "RequestRow":
        values = dict(row)
        values["refs"] = json.loads(values["refs"])
        values["cancel_requested"] = bool(values["cancel_requested"])
        values["denied"] = bool(values.get("denied", 0))
        return cls(**values)


@dataclass(frozen=True)
class TimelineRow:
    id: int
    request_id: str
    at: float
    kind: str
    state: str
    text: str


@dataclass(frozen=True)
class AuditRow:
    seq: int
    at: float
    actor: str
    action: str
    request_id: str | None
    reason: str
    prev_hash: str
    hash: str


@dataclass(frozen=True)
class PrincipalRow:
    name: str
    kind: str
    token_hash: str | None
    created_at: float
    revoked_at: float | None


@dataclass(frozen=True)
class AgentRow:
    name: str
    runtime: str
    folder: str
    options: dict[str, object]
    created_at: float

    @classmethod
    def of(cls, row: sqlite3.Row) -> "AgentRow":
        values = dict(row)
        del values["removed_at"]  # removed agents are not read as agents
        values["options"] = json.loads(values["options"])
        return cls(**values)


@dataclass(frozen=True)
class TaskRow:
    id: str
    request_id: str | None
    kind: str  # request (a request's agent process) | command | monitor
    dir: str
    started_at: float
    ended_at: float | None
    exit_code: int | None
    outcome: str | None  # completed | failed | stopped | unknown
    agent: str | None = None
    description: str = ""
    command: str = ""  # redacted, at most 2,000 characters
    last_output_at: float | None = None
    stopping_at: float | None = None
    stop_reason: str | None = None
    tests: str | None = None  # JSON: the test counts seen in its output
    woke: str | None = None  # once ended: the continuation it woke (a request ID), or why none


@dataclass(frozen=True)
class QuestionRow:
    id: int
    request_id: str
    asked_at: float
    text: str
    options: list[str]
    answer: str | None
    answered_at: float | None
    answered_by: str | None
    call_key: str | None = None  # the session and the MCP call that asked it: the same call asks once
    owner_only: bool = False  # an agent asks the owner's leave for a session action; only the owner answers

    @classmethod
    def of(cls, row: sqlite3.Row) -> "QuestionRow":
        return cls(**{**dict(row), "options": json.loads(row["options"]), "owner_only": bool(row["owner_only"])})


@dataclass(frozen=True)
class SessionRow:
    """A session an agent started: it runs as the hidden agent of the same name (`S1`, `S2`, …)."""

    id: str
    title: str
    group_name: str | None
    parent_request: str  # the request whose agent started it
    conversation: str  # whose approval it rode on: the starting request's, or its session's when that is one
    may_create: bool
    created_at: float
    archived_at: float | None

    @classmethod
    def of(cls, row: sqlite3.Row) -> "SessionRow":
        return cls(**{**dict(row), "may_create": bool(row["may_create"])})
