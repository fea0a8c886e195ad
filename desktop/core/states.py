"""The seven request states and the one transition table every change is checked against."""

from enum import StrEnum

from desktop.core.errors import Conflict


class State(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


TERMINAL = frozenset({State.DONE, State.FAILED, State.CANCELLED, State.EXPIRED})


class Action(StrEnum):
    CREATE = "create"
    APPROVE = "approve"
    DENY = "deny"
    CANCEL = "cancel"
    REVOKE = "revoke"
    EXPIRE = "expire"
    DISPATCH = "dispatch"
    SUCCEED = "succeed"
    FAIL = "fail"
    STOP = "stop"  # a running request reached its safe point after a cancel
    INTERRUPT = "interrupt"  # the daemon lost sight of a running request (sleep, restart)
    RESUME = "resume"  # ... and picked it up again
    PROGRESS = "progress"
    CONVERSATION = "conversation"  # the runtime's own conversation (its CLI's session or thread) became known
    ASK = "ask"  # the agent asked the people behind the request a question
    ANSWER = "answer"  # ... and got an answer, or the question was withdrawn


P, A, R = State.PENDING, State.APPROVED, State.RUNNING

TRANSITIONS: dict[tuple[State, Action], State] = {
    (P, Action.APPROVE): A,
    (P, Action.DENY): State.CANCELLED,
    (P, Action.CANCEL): State.CANCELLED,
    (P, Action.REVOKE): State.CANCELLED,
    (P, Action.EXPIRE): State.EXPIRED,
    (A, Action.CANCEL): State.CANCELLED,
    (A, Action.REVOKE): State.CANCELLED,
    (A, Action.DISPATCH): R,
    (R, Action.CANCEL): R,  # only raises the flag; STOP ends it at the next safe point
    (R, Action.STOP): State.CANCELLED,
    (R, Action.SUCCEED): State.DONE,
    (R, Action.FAIL): State.FAILED,
    (R, Action.INTERRUPT): R,
    (R, Action.RESUME): R,
    (R, Action.PROGRESS): R,
    (R, Action.CONVERSATION): R,
    (R, Action.ASK): R,
    (R, Action.ANSWER): R,
}

_DONE_TO = {
    Action.APPROVE: "approved",
    Action.DENY: "denied",
    Action.CANCEL: "cancelled",
    Action.REVOKE: "cancelled by revocation",
    Action.EXPIRE: "expired",
    Action.DISPATCH: "started",
    Action.SUCCEED: "finished",
    Action.FAIL: "failed",
    Action.STOP: "stopped",
    Action.INTERRUPT: "interrupted",
    Action.RESUME: "resumed",
    Action.PROGRESS: "given progress",
    Action.CONVERSATION: "given a conversation",
    Action.ASK: "asked a question",
    Action.ANSWER: "answered",
}


class IllegalTransition(Conflict):
    def __init__(self, request_id: str, state: State, action: Action) -> None:
        self.request_id, self.state, self.action = request_id, state, action
        super().__init__(f"{request_id} is {state.value}; it cannot be {_DONE_TO.get(action, action.value)}")


def state_word(state: str, denied: bool) -> str:
    """How a request's state reads to people: a request the owner denied is cancelled, and reads "denied"."""
    return "denied" if denied and state == State.CANCELLED else state


def next_state(request_id: str, state: State, action: Action) -> State:
    """The state after `action`, or IllegalTransition naming the request, its state and the action."""
    try:
        return TRANSITIONS[(state, action)]
    except KeyError:
        raise IllegalTransition(request_id, state, action) from None
