"""What the daemon tells its clients changed, as typed events built here and nowhere else, and the in-process
publish/subscribe that carries them. A request's or a task's event carries its row as it is now, so a client updates
from the event alone; /api/events (desktop/api/events.py) sends each as JSON, the row in the API's own shape."""

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from desktop.store.rows import RequestRow, TaskRow

T = TypeVar("T")


@dataclass(frozen=True)
class Event:
    NAME: ClassVar[str] = "event"

    def name(self) -> str:
        """Its type, which is also its name on the event stream."""
        return self.NAME

    def about(self) -> str | None:
        """Whose request it is about: they see it too (the owner sees every event)."""
        return None

    def data(self) -> dict[str, Any]:
        """What is sent (a row is added in the API's own shape by desktop/api/events.py)."""
        return {"type": self.name(), **{f.name: getattr(self, f.name) for f in dataclasses.fields(self)}}


@dataclass(frozen=True)
class RequestChanged(Event):
    """A request was created, answered, started, ended, or changed its progress or conversation (`action`)."""

    NAME = "request"
    row: RequestRow
    action: str
    question: str | None = None  # the question it asked (action "ask")

    def about(self) -> str:
        return self.row.requester

    def data(self) -> dict[str, Any]:
        row = self.row
        return {
            "type": self.NAME,
            "id": row.id,
            "state": row.state,
            "action": self.action,
            "agent": row.agent,
            "requester": row.requester,
            "progress": row.progress,
            "denied": row.denied,
            "continuation_of": row.continuation_of,
            **({"question": self.question} if self.action == "ask" else {}),
        }


@dataclass(frozen=True)
class RuntimeNews(Event):
    """Something the agent's runtime said during a turn (redacted, at most 2,000 characters)."""

    NAME = "runtime"
    id: str
    kind: str
    text: str
    value: float | None
    requester: str

    def about(self) -> str:
        return self.requester


@dataclass(frozen=True)
class TaskChanged(Event):
    """A background task started or ended (`what`: task_started, task_finished or task_failed)."""

    row: TaskRow
    what: str
    timed_out: bool = False

    def name(self) -> str:
        return self.what

    def data(self) -> dict[str, Any]:
        row = self.row
        return {
            "type": self.what,
            "id": row.id,
            "agent": row.agent,
            "kind": row.kind,
            "description": row.description,
            "request_id": row.request_id,
            "outcome": row.outcome,
            "exit_code": row.exit_code,
            "reason": row.stop_reason,
            "timed_out": self.timed_out,
        }


@dataclass(frozen=True)
class SettingChanged(Event):
    NAME = "settings"
    key: str
    value: str


@dataclass(frozen=True)
class RoomChanged(Event):
    """Where the room is reached now (desktop/room/listener.py's status)."""

    NAME = "room"
    status: dict[str, Any]

    def data(self) -> dict[str, Any]:
        return {"type": self.NAME, **self.status}


@dataclass(frozen=True)
class SessionChanged(Event):
    """An agent-started session changed (what it may do)."""

    NAME = "session"
    id: str


@dataclass(frozen=True)
class SessionCalled(Event):
    """A request's agent used a session tool (its timeline has a new activity line)."""

    NAME = "session_call"
    id: str


@dataclass(frozen=True)
class Revoked(Event):
    """A person's token was revoked: their event streams end."""

    NAME = "revoked"
    person: str


@dataclass(frozen=True)
class SignedOut(Event):
    """A sign-in to the room ended (its key): its event stream ends."""

    NAME = "signed_out"
    key: str


Ending = Revoked | SignedOut  # what ends an event stream


@dataclass(frozen=True)
class Lagged(Event):
    """The subscriber fell behind and events were dropped: read everything again."""

    NAME = "lagged"


class EventBus:
    def __init__(self, queue_size: int = 1000) -> None:
        self._ends: dict[asyncio.Queue[Event], frozenset[Ending]] = {}  # each subscriber's queue: what ends it
        self._lagging: set[asyncio.Queue[Event]] = set()  # given a Lagged its reader has not taken yet
        self._size = queue_size

    def publish(self, event: Event) -> None:
        """To every subscriber. A stalled reader's queue holds at most `queue_size` events, then one Lagged, and
        gets nothing more until its reader has taken them all; only what ends that subscriber still comes."""
        for queue, ends in list(self._ends.items()):
            if isinstance(event, Ending) and event in ends:
                queue.put_nowait(event)
            elif queue in self._lagging and not queue.empty():
                continue
            elif queue.qsize() < self._size:
                self._lagging.discard(queue)
                queue.put_nowait(event)
            else:
                self._lagging.add(queue)
                queue.put_nowait(Lagged())

    @contextlib.contextmanager
    def subscribe(self, ends: Iterable[Ending] = ()) -> Iterator["asyncio.Queue[Event]"]:
        """A queue of every event from now on. `ends`: the events that end this subscriber (its revocation, its
        sign-out), never dropped from its queue, even a full one."""
        queue: asyncio.Queue[Event] = asyncio.Queue()  # bounded by publish
        self._ends[queue] = frozenset(ends)
        try:
            yield queue
        finally:
            del self._ends[queue]
            self._lagging.discard(queue)

    async def until(self, found: Callable[[], T | None], left: Callable[[], float | None] = lambda: None) -> T | None:
        """`found()` now and after every event until it gives something; None once `left()` seconds run out.
        Subscribed before the first look, so nothing slips between a look and the wait."""
        with self.subscribe() as queue:
            while (value := found()) is None:
                seconds = left()
                if seconds is not None and seconds <= 0:
                    return None
                try:
                    await asyncio.wait_for(queue.get(), seconds)
                except TimeoutError:
                    return found()
            return value
