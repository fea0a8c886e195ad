"""Notices: which daemon events the owner hears about (each kind can be switched off in Settings), and how they reach
them: a native notification (desktop.platform.notifications) with an icon for its kind, Approve and Deny on an
approval, falling back to the tray's balloon when that fails. A failure's notice says its exit code and the last line
its console printed. An approval's notification is withdrawn as soon as the request is answered anywhere, also when
the answer came while the notification was still on its way. "Turn completed" (off by default) tells of every turn
that ends, a background continuation's too; a failed one is the failure's notice, shown when either is on."""

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from desktop.console.ansi import strip_sgr
from desktop.console.redact import redact
from desktop.core.ids import short_form
from desktop.core.visible import one_line
from desktop.gui.summary import first_line
from desktop.platform.notifications import NativeNotifications
from desktop.resources import resource

if TYPE_CHECKING:  # (the client is loaded after the tray icon shows)
    from desktop.client.transport import AsyncClient

ANSWERED = {"approve", "deny", "cancel", "revoke", "expire"}  # what ends a wait for approval
ICONS = {
    "approval": "notice-approval.svg",
    "failed": "notice-failed.svg",
    "task_failed": "notice-failed.svg",
    "question": "notice-question.svg",
    "expired": "notice-expired.svg",
    "turn_completed": "notice-done.svg",
}
REMEMBERED = 1000  # answered requests kept in mind, for approvals whose notification is still on its way
LAST_LINES = 40  # how far back a failure's last line is looked for


@dataclass(frozen=True)
class Notice:
    kind: str  # approval | denied | failed | expired | task_failed | question | turn_completed
    title: str
    message: str
    request_id: str | None  # what a click opens (None: a task, the console opens on it)
    task_id: str | None = None
    also: str = ""  # another kind whose switch shows it too: a failed request is a turn completed

    @property
    def icon(self) -> Path:
        return resource(ICONS.get(self.kind, "tray-idle.svg"))

    @property
    def settings(self) -> list[str]:
        """The settings that each let it show ('notify_failed', 'notify_turn_completed')."""
        return [f"notify_{kind}" for kind in (self.kind, self.also) if kind]


def waits_for_approval(event: dict[str, Any]) -> bool:
    """A new request that waits for the owner (its notice needs the request's row: `approval_notice`)."""
    return event.get("type") == "request" and event.get("action") == "create" and event.get("state") == "pending"


def approval_notice(request: dict[str, Any]) -> Notice:
    short = short_form(request["id"], datetime.now(UTC).date())
    prompt = first_line(request["prompt"], 120)  # as it will run (Approve is on the notification)
    session = request.get("session")
    if session:
        group = f" · Group: {session['group']}" if session.get("group") else ""
        return Notice(
            "approval",
            f"{short}: an agent wants a session",
            f"{session['id']} · {session['runtime']} in {session['folder']}{group}: {prompt}\n{session['accounts']}",
            request["id"],
        )
    return Notice(
        "approval",
        f"{short} waits for your approval",
        f"{request['requester']} asks {request['agent']}: {prompt}",
        request["id"],
    )


def notice_for(event: dict[str, Any]) -> Notice | None:
    """What else to tell the owner about a daemon event, if anything (a failure's details: `with_details`)."""
    today = datetime.now(UTC).date()
    if event.get("type") == "task_failed":
        return _task_notice(event)
    if event.get("type") != "request":
        return None
    action, request_id = event.get("action"), str(event.get("id"))
    short = short_form(request_id, today)
    origin = event.get("continuation_of")
    badge = f" · background continuation of {short_form(str(origin), today)}" if origin else ""
    if action == "fail":
        return Notice(
            "failed",
            f"{short} failed",
            one_line(f"{event.get('agent')} · {event.get('requester')}", 80) + badge,
            request_id,
            also="turn_completed",
        )
    if action == "succeed":
        return Notice("turn_completed", f"{short} done", one_line(str(event.get("agent")), 40) + badge, request_id)
    if action == "expire":
        return Notice(
            "expired", f"{short} expired unanswered", f"{event.get('requester')} asked {event.get('agent')}", request_id
        )
    if action == "ask" and event.get("question"):
        return Notice(
            "question", f"{short}: {event.get('agent')} asks", first_line(str(event["question"]), 200), request_id
        )
    return None


def _task_notice(event: dict[str, Any]) -> Notice | None:
    """A task that failed, or that the daemon stopped at the timeout; one someone stopped (the owner, its agent, the
    cancel of its request) did not fail."""
    task_id, about = str(event["id"]), event.get("description") or "a background task"
    if event.get("outcome") != "stopped":
        return Notice("task_failed", f"Task {task_id} failed", about, event.get("request_id"), task_id)
    if event.get("timed_out"):
        return Notice(
            "task_failed",
            f"Task {task_id} timed out",
            f"{event.get('reason')}\n{about}",
            event.get("request_id"),
            task_id,
        )
    return None


async def with_details(notice: Notice, client: "AsyncClient") -> Notice:
    """A failure's notice with its exit code and its console's last line that says anything (the daemon redacts what
    it serves); a turn done with its result's first line; other notices as they are."""
    from desktop.client import api

    if notice.kind == "turn_completed" and notice.request_id:
        request = await client.call(api.request(notice.request_id))
        result = one_line(redact(strip_sgr(request.result or "")), 160)
        return replace(notice, message=f"{notice.message}\n{result}" if result else notice.message)
    if notice.kind == "failed" and notice.request_id:
        request = await client.call(api.request(notice.request_id))
        page = await client.call(api.console(notice.request_id, lines=LAST_LINES))
        exit_code, lines = request.exit_code, [*(request.result or "").splitlines()[-1:], *page.lines][::-1]
    elif notice.kind == "task_failed" and notice.task_id and notice.title.endswith("failed"):
        task = await client.call(api.task(notice.task_id))
        page = await client.call(api.task_console(notice.task_id, lines=LAST_LINES, plain=True))
        exit_code, lines = task.exit_code, page.lines[::-1]
    else:
        return notice
    last = next((strip_sgr(line).strip() for line in lines if strip_sgr(line).strip()), "")
    said = [f"exit {exit_code}" if exit_code is not None else "", one_line(last, 160)]
    what = " · ".join(part for part in said if part)
    return replace(notice, message=f"{what}\n{notice.message}" if what else notice.message)


class Notices:
    """Shows notices; `act(verb, request_id)` answers from a button, `open(notice)` is a click on the notice."""

    def __init__(
        self,
        balloon: Callable[[str, str], None],
        act: Callable[[str, str], None],
        open_notice: Callable[[Notice], None],
    ) -> None:
        self._balloon, self._act, self._open = balloon, act, open_notice
        self._native = NativeNotifications()
        self._approvals: dict[str, str] = {}  # request id -> its notification's identifier
        self._denied: dict[str, str] = {}  # request id -> its "Denied R-02" (with Undo) notification's identifier
        self._undo_over: set[str] = set()  # Denies final or undone while their notification was on its way
        self._answered: dict[str, None] = {}  # the requests answered lately, oldest first
        self.on_the_way: set[str] = set()  # requests whose approval notification is being shown
        self.last_way = ""  # "native" or "balloon": how the last notice was shown
        self.in_balloon: Notice | None = None  # what a click on the tray's balloon opens

    async def show(self, notice: Notice) -> None:
        approval = notice.request_id if notice.kind == "approval" else None
        if approval is not None and approval in self._answered:
            return  # answered before its notification could be shown
        buttons = []
        if approval is not None:
            buttons = [
                ("Approve", lambda: self._act("approve", approval)),
                ("Deny", lambda: self._act("deny", approval)),
            ]
            self.on_the_way.add(approval)
        denied = notice.request_id if notice.kind == "denied" else None
        if denied is not None:
            buttons = [("Undo", lambda: self._act("undo", denied))]
            self._denied[denied] = ""  # on its way
        identifier = None
        try:
            identifier = await self._native.send(
                notice.title, notice.message, buttons, lambda: self._open(notice), notice.icon
            )
        finally:
            if approval is not None:
                self.on_the_way.discard(approval)
            if denied is not None and identifier is None:
                self._denied.pop(denied, None)
                self._undo_over.discard(denied)
        if identifier is not None:
            self.last_way = "native"
            if denied is not None and denied in self._undo_over:  # its Undo ended while it was on its way
                self._undo_over.discard(denied)
                await self._native.withdraw(identifier)
            elif denied is not None:
                self._denied[denied] = identifier
            if approval is not None and approval in self._answered:  # answered while it was on its way
                await self._native.withdraw(identifier)
            elif approval is not None:
                self._approvals[approval] = identifier
            return
        if approval is not None and approval in self._answered:
            return
        self.last_way = "balloon"
        self.in_balloon = notice
        self._balloon(notice.title, notice.message)

    def approvals_shown(self) -> list[str]:
        """The requests whose approval notification is shown now."""
        return list(self._approvals)

    async def withdraw_denied(self, request_id: str) -> None:
        """The Deny was taken back, or is final: its Undo goes."""
        identifier = self._denied.pop(request_id, None)
        if identifier == "":
            self._undo_over.add(request_id)
        elif identifier is not None:
            await self._native.withdraw(identifier)

    async def withdraw(self, request_id: str) -> None:
        """The request was answered (here or anywhere else): its approval notification goes, now or as it comes."""
        self._answered[request_id] = None
        while len(self._answered) > REMEMBERED:
            del self._answered[next(iter(self._answered))]
        await self.hide_approval(request_id)

    async def hide_approval(self, request_id: str) -> None:
        """The approval notification goes while the request still waits (a Deny waits for its Undo)."""
        identifier = self._approvals.pop(request_id, None)
        if identifier is not None:
            await self._native.withdraw(identifier)
