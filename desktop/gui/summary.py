"""What the tray shows at a glance, worked out from the daemon's request list (no Qt here)."""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from desktop.core.ids import short_form
from desktop.core.visible import one_line, visible


@dataclass(frozen=True)
class Entry:
    request_id: str
    state: str  # running | pending
    line: str  # "R-07 · api · sarah · 60%"
    prompt: str  # its first line, shortened


@dataclass(frozen=True)
class TraySummary:
    state: str  # starting | idle | running | waiting | failed | paused
    waiting: int
    progress: float | None  # of the running requests, when known
    entries: list[Entry]  # the running and the waiting requests
    paused: bool = False

    @property
    def lines(self) -> list[str]:
        return [entry.line for entry in self.entries]

    @property
    def tooltip(self) -> str:
        head = {"starting": "Coxswain: starting…", "idle": "Coxswain: nothing running", "running": "Coxswain: working",
                "waiting": f"Coxswain: {self.waiting} waiting for you", "failed": "Coxswain: something failed",
                "paused": "Coxswain: paused"}[self.state]
        return "\n".join([head, *self.lines])


def summarize(requests: list[dict[str, Any]], paused: bool = False, failed_unseen: bool = False,
              today: date | None = None) -> TraySummary:
    running = [r for r in requests if r["state"] == "running"]
    waiting = [r for r in requests if r["state"] == "pending"]
    today = today or datetime.now(UTC).date()
    entries = [Entry(r["id"], r["state"], _line(r, today), first_line(r.get("prompt", ""))) for r in running + waiting]
    known = [r["progress"] for r in running if r.get("progress") is not None]
    progress = sum(known) / len(known) if known else None
    state = ("paused" if paused else "waiting" if waiting else "failed" if failed_unseen
             else "running" if running else "idle")
    return TraySummary(state, len(waiting), progress, entries, paused)


def first_line(text: str, width: int = 50) -> str:
    """The text's first line, made visible and shortened to `width` with an ellipsis, saying how many lines follow."""
    return one_line(text, width)


def _line(request: dict[str, Any], today: date) -> str:
    parts = [short_form(request["id"], today), visible(request["agent"]),
             "via agent" if request.get("session") else visible(request["requester"])]
    if request["state"] == "pending":
        parts.append("waiting for approval")
    elif request.get("progress") is not None:
        parts.append(f"{request['progress']:.0f}%")
    return " · ".join(parts)


def tasks_line(tasks: list[dict[str, Any]]) -> str:
    """'2 background tasks running · 1 finished' (what the console's task group says folded)."""
    running = sum(1 for t in tasks if t["state"] != "ended")
    ended = len(tasks) - running
    parts = [f"{running} background task{'s' if running != 1 else ''} running"] if running else []
    parts += [f"{ended} finished"] if ended else []
    return " · ".join(parts) or "no background tasks"


def requests_line(requests: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for request in requests:
        counts[request["state"]] = counts.get(request["state"], 0) + 1
    shown = [f"{counts[s]} {word}" for s, word in (("running", "running"), ("pending", "waiting"),
                                                   ("approved", "queued"), ("failed", "failed")) if counts.get(s)]
    return " · ".join(shown) or "nothing running or waiting"


def test_chip(tests: dict[str, Any] | None) -> tuple[str, str]:
    """('✓ 412 ✘ 2', 'pytest: 412 passed, 2 failed, 3 skipped'), or empty when no test run was seen."""
    if not tests:
        return "", ""
    chip = f"✓ {tests['passed']}" + (f" ✘ {tests['failed']}" if tests["failed"] else "")
    tip = f"{tests['runner']}: {tests['passed']} passed, {tests['failed']} failed, {tests['skipped']} skipped"
    return chip, tip


def task_row(task: dict[str, Any]) -> str:
    """'T3 · api · npm test · running · ✓ 412 ✘ 2' (its status says 'no output for N min' when quiet)."""
    chip, _ = test_chip(task.get("tests"))
    what = first_line(task["description"] or task["command"], 40)
    return " · ".join(part for part in (task["id"], visible(task["agent"] or ""), what, task["status"], chip) if part)


def request_row(request: dict[str, Any], today: date | None = None) -> str:
    """'R-07 · api · sarah · running 40%: fix the …'; a prompt an agent sent to a session it started:
    'R-08 · S1 · via agent · Release checks · running [claude-opus-4]: update the …' (the badge: the agent's model)."""
    today = today or datetime.now(UTC).date()
    session = request.get("session")
    who = ["via agent", one_line(session["parent_title"], 60)] if session else [visible(request["requester"])]
    parts = [short_form(request["id"], today), visible(request["agent"]), *who, request["state"]]
    if request["state"] == "running" and request.get("progress") is not None:
        parts[-1] += f" {request['progress']:.0f}%"
    badge = f" [{visible(request['via_model'])}]" if request.get("via_model") else ""
    return " · ".join(parts) + f"{badge}: {first_line(request.get('prompt', ''), 40)}"


def sessions_line(group: str | None, prompts: list[dict[str, Any]]) -> str:
    """The header over the sessions one request started: 'Group: Release 2.4 — 2 running · 1 waiting'."""
    return f"{f'Group: {one_line(group, 60)}' if group else 'Sessions'} — {requests_line(prompts)}"


def latest(requests: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> tuple[str, str] | None:
    """What a console opened on nothing in particular shows first: the newest thing at work, else the newest."""
    items = [(r["state"] == "running", r["started_at"] or r["created_at"], "request", r["id"]) for r in requests]
    items += [(t["state"] != "ended", t["started_at"], "task", t["id"]) for t in tasks]
    if not items:
        return None
    _, _, kind, item_id = max(items)
    return kind, item_id
