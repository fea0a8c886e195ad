"""Notices: which daemon events the owner hears about (each kind can be switched off in Settings), and how they reach
them: a native notification (desktop.platform.notifications) with Approve and Deny on an approval, falling back to
the tray's balloon when that fails. An approval's notification is withdrawn as soon as the request is answered
anywhere."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from desktop.core.ids import short_form
from desktop.gui.summary import first_line
from desktop.platform.notifications import NativeNotifications

ANSWERED = {"approve", "deny", "cancel", "revoke", "expire"}  # what ends a wait for approval


@dataclass(frozen=True)
class Notice:
    kind: str  # approval | failed | expired | task_failed | question (the setting is notify_<kind>)
    title: str
    message: str
    request_id: str | None  # what a click opens (None: a task, the console opens on it)
    task_id: str | None = None

    @property
    def buttons(self) -> bool:
        return self.kind == "approval"


def waits_for_approval(event: dict[str, Any]) -> bool:
    """A new request that waits for the owner (its notice needs the request's row: `approval_notice`)."""
    return event.get("type") == "request" and event.get("action") == "create" and event.get("state") == "pending"


def approval_notice(request: dict[str, Any]) -> Notice:
    short = short_form(request["id"], datetime.now(UTC).date())
    prompt = first_line(request["prompt"], 120)  # as it will run (Approve is on the notification)
    session = request.get("session")
    if session:
        group = f" · Group: {session['group']}" if session.get("group") else ""
        return Notice("approval", f"{short}: an agent wants a session",
                      f"{session['id']} · {session['runtime']} in {session['folder']}{group}: {prompt}\n"
                      f"{session['accounts']}", request["id"])
    return Notice("approval", f"{short} waits for your approval",
                  f"{request['requester']} asks {request['agent']}: {prompt}", request["id"])


def notice_for(event: dict[str, Any]) -> Notice | None:
    """What else to tell the owner about a daemon event, if anything."""
    today = datetime.now(UTC).date()
    if event.get("type") == "task_failed":
        return Notice("task_failed", f"Task {event['id']} failed", event.get("description") or "a background task",
                      event.get("request_id"), event["id"])
    if event.get("type") != "request":
        return None
    action, request_id = event.get("action"), str(event.get("id"))
    short = short_form(request_id, today)
    if action == "fail":
        return Notice("failed", f"{short} failed", f"{event.get('agent')} · {event.get('requester')}", request_id)
    if action == "expire":
        return Notice("expired", f"{short} expired unanswered", f"{event.get('requester')} asked {event.get('agent')}",
                      request_id)
    if action == "ask" and event.get("question"):
        return Notice("question", f"{short}: {event.get('agent')} asks", first_line(str(event["question"]), 200),
                      request_id)
    return None


class Notices:
    """Shows notices; `act(verb, request_id)` answers from a button, `open(notice)` is a click on the notice."""

    def __init__(self, balloon: Callable[[str, str], None], act: Callable[[str, str], None],
                 open_notice: Callable[[Notice], None]) -> None:
        self._balloon, self._act, self._open = balloon, act, open_notice
        self._native = NativeNotifications()
        self._approvals: dict[str, str] = {}  # request id -> its notification's identifier
        self.last_way = ""  # "native" or "balloon": how the last notice was shown
        self.in_balloon: Notice | None = None  # what a click on the tray's balloon opens

    async def show(self, notice: Notice) -> None:
        buttons = []
        if notice.buttons and notice.request_id:
            request_id = notice.request_id
            buttons = [("Approve", lambda: self._act("approve", request_id)),
                       ("Deny", lambda: self._act("deny", request_id))]
        identifier = await self._native.send(notice.title, notice.message, buttons, lambda: self._open(notice))
        if identifier is not None:
            self.last_way = "native"
            if notice.buttons and notice.request_id:
                self._approvals[notice.request_id] = identifier
            return
        self.last_way = "balloon"
        self.in_balloon = notice
        self._balloon(notice.title, notice.message)

    async def withdraw(self, request_id: str) -> None:
        """The request was answered (here or anywhere else): its approval notification goes."""
        identifier = self._approvals.pop(request_id, None)
        if identifier is not None:
            await self._native.withdraw(identifier)
