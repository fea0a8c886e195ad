"""What the tray shows at a glance, worked out from the daemon's request and task lists (no Qt here)."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from desktop.core.ids import short_form
from desktop.core.visible import one_line, visible

NAME_WIDTH = 10  # an agent's or a person's name in the tray: enough to tell them apart, never the whole menu
TIP_ENTRIES = 6  # the tooltip's lines under its status line; the rest are counted


@dataclass(frozen=True)
class Entry:
    """A request that waits for approval or runs, or a background task that runs, as the tray lists it."""

    kind: str  # request | task
    item_id: str
    state: str  # a request's pending | denying (a Deny waits for its Undo) | running; a task's running | stopping
    line: str  # which and whose: "R-07 · api · sarah · 60%", "T3 · api"
    text: str  # what it does, as sent: the prompt, or the task's description (else its command)
    started: datetime | None = None
    origin: str = ""  # a background continuation's origin, short: "R-07"

    def label(self, width: int = 50) -> str:
        """'R-07 · api · sarah · 60%: fix the flaky login test', the text shortened to `width` characters; a background
        continuation 'R-08 · api · sarah · ↻ R-07: Background work you started has ended.'"""
        badge = f" · ↻ {self.origin}" if self.origin else ""
        return f"{self.line}{badge}: {one_line(self.text, width)}"

    def tip(self, now: datetime) -> str:
        """Its line in the tooltip: 'R-07 · api · sarah · 60% · 4 min', 'T3 · api · npm test · 12 min',
        'R-08 · web · tom · waiting for approval', 'R-09 · api · sarah · ↻ continuation of R-07 · 1 min'."""
        parts = [self.line, *([one_line(self.text, 30)] if self.kind == "task" else [])]
        parts += [f"↻ continuation of {self.origin}"] if self.origin else []
        if self.state == "pending":
            parts.append("waiting for approval")
        elif self.state == "denying":
            parts.append("denied (Undo in the menu)")
        elif self.state == "stopping":
            parts.append("stopping")
        elif self.started is not None:
            parts.append(elapsed((now - self.started).total_seconds()))
        return " · ".join(parts)


@dataclass(frozen=True)
class TraySummary:
    state: str  # the most pressing: starting | paused | waiting | failed | running | idle
    waiting: int
    progress: float | None  # of the running requests, when known
    entries: list[Entry]  # the waiting requests, the running ones, then the running tasks
    paused: bool = False
    failed: bool = False  # something failed that the owner has not looked at yet

    @property
    def activity(self) -> str:
        """What the glyph of the icon shows (a badge beside it counts the waiting): starting, paused, failed, running or
        idle."""
        if self.state == "starting":
            return "starting"
        return (
            "paused"
            if self.paused
            else "failed"
            if self.failed
            else "running"
            if any(e.state in ("running", "stopping") for e in self.entries)
            else "idle"
        )

    @property
    def status(self) -> str:
        """'2 waiting · 1 running · 2 tasks', 'paused · 1 waiting', 'nothing running'."""
        if self.state == "starting":
            return "starting…"
        requests = sum(1 for e in self.entries if e.kind == "request" and e.state == "running")
        tasks = sum(1 for e in self.entries if e.kind == "task")
        parts = ["paused"] if self.paused else []
        parts += [f"{self.waiting} waiting"] if self.waiting else []
        denying = sum(1 for e in self.entries if e.state == "denying")
        parts += [f"{denying} denied"] if denying else []
        parts += [f"{requests} running"] if requests else []
        parts += [f"{tasks} task{'s' if tasks != 1 else ''}"] if tasks else []
        parts += ["something failed"] if self.failed else []
        return " · ".join(parts) or "nothing running"

    def tooltip_at(self, now: datetime) -> str:
        more = len(self.entries) - TIP_ENTRIES
        return "\n".join(
            [
                f"Coxswain: {self.status}",
                *(e.tip(now) for e in self.entries[:TIP_ENTRIES]),
                *([f"… and {more} more"] if more > 0 else []),
            ]
        )

    @property
    def tooltip(self) -> str:
        return self.tooltip_at(datetime.now(UTC))


def summarize(
    requests: list[dict[str, Any]],
    paused: bool = False,
    failed_unseen: bool = False,
    today: date | None = None,
    tasks: list[dict[str, Any]] | None = None,
    denying: Callable[[str], bool] = lambda _request_id: False,
) -> TraySummary:
    """`denying(id)`: the owner denied it and the Deny waits for its Undo (it no longer waits for the owner)."""
    pending = [r for r in requests if r["state"] == "pending"]
    waiting = [r for r in pending if not denying(r["id"])]
    running = [r for r in requests if r["state"] == "running"]
    today = today or datetime.now(UTC).date()
    entries = [
        Entry(
            "request",
            r["id"],
            "denying" if denying(r["id"]) else r["state"],
            _line(r, today),
            r.get("prompt", ""),
            _time(r.get("started_at")),
            short_form(r["continuation_of"], today) if r.get("continuation_of") else "",
        )
        for r in [*waiting, *(r for r in pending if denying(r["id"])), *running]
    ]
    background = [t for t in tasks or [] if t["state"] != "ended" and t.get("kind") != "request"]  # not a turn
    entries += [
        Entry(
            "task",
            t["id"],
            t["state"],
            _task_line(t),
            t.get("description") or t.get("command", ""),
            _time(t.get("started_at")),
        )
        for t in background
    ]
    known = [r["progress"] for r in running if r.get("progress") is not None]
    progress = sum(known) / len(known) if known else None
    state = (
        "paused"
        if paused
        else "waiting"
        if waiting
        else "failed"
        if failed_unseen
        else "running"
        if any(e.state in ("running", "stopping") for e in entries)
        else "idle"
    )
    return TraySummary(state, len(waiting), progress, entries, paused, failed_unseen)


def elapsed(seconds: float) -> str:
    """'just started', '4 min', '1 h 05 min', '2 d 3 h'."""
    whole = int(seconds)
    if whole < 60:
        return "just started"
    if whole < 3600:
        return f"{whole // 60} min"
    if whole < 86400:
        return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
    return f"{whole // 86400} d {whole % 86400 // 3600} h"


def first_line(text: str, width: int = 50) -> str:
    """The text's first line, made visible and shortened to `width` with an ellipsis, saying how many lines follow."""
    return one_line(text, width)


def _line(request: dict[str, Any], today: date) -> str:
    who = "via agent" if request.get("session") else one_line(request["requester"], NAME_WIDTH)
    parts = [short_form(request["id"], today), one_line(request["agent"], NAME_WIDTH), who]
    if request["state"] == "running" and request.get("progress") is not None:
        parts.append(f"{request['progress']:.0f}%")
    return " · ".join(parts)


def _task_line(task: dict[str, Any]) -> str:
    return " · ".join([visible(task["id"]), *([one_line(task["agent"], NAME_WIDTH)] if task.get("agent") else [])])


def _time(text: str | None) -> datetime | None:
    if not text:
        return None
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
