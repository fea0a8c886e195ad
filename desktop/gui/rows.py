"""What the console's list says, worked out from the daemon's rows (no Qt here): each row's first line with the ID,
who and where, a state pill and when; a second line with the prompt or the task's description."""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from desktop.core.durations import how_long
from desktop.core.ids import short_form
from desktop.core.states import state_word
from desktop.core.visible import one_line, visible

FINISHED = ("done", "failed", "cancelled", "expired")


@dataclass(frozen=True)
class RowText:
    head: str  # "R-07 · api · sarah", "R-08 · api · sarah · ↻ continuation of R-07"
    pill: str  # "running 40%", "denied", "failed (exit 2)"
    colour: str  # the pill's colour by name: running | done | failed | pending | ended
    extra: str  # "2 min 04 s", "exit 1 · 12 s", "✓ 412 ✘ 2"
    body: str  # the prompt's or the task's first line, shortened
    dim: bool = False  # an ended background task, kept in view for an hour

    @property
    def plain(self) -> str:
        """Both lines as text (the row's accessible text and tooltip)."""
        first = " · ".join(part for part in (self.head, self.pill, self.extra) if part)
        return f"{first}\n{self.body}"


def request_text(request: dict[str, Any], today: date | None = None, denying: bool = False) -> RowText:
    """A request; a prompt an agent sent to a session it started reads 'R-08 · S1 · via agent · Release checks
    [claude-opus-4]' (the badge: the agent's model); a background continuation 'R-08 · api · sarah · ↻ continuation of
    R-07'. `denying`: the owner's Deny waits for its Undo."""
    today = today or datetime.now(UTC).date()
    session = request.get("session")
    who = ["via agent", one_line(session["parent_title"], 60)] if session else [visible(request["requester"])]
    head = " · ".join([short_form(request["id"], today), visible(request["agent"]), *who])
    if request.get("via_model"):
        head += f" [{visible(request['via_model'])}]"
    if request.get("continuation_of"):
        head += f" · {continuation_badge(request['continuation_of'], today)}"
    pending_deny = denying and request["state"] == "pending"
    pill = "denying…" if pending_deny else state_word(request["state"], bool(request.get("denied")))
    if request["state"] == "running" and request.get("progress") is not None:
        pill += f" {request['progress']:.0f}%"
    extra = [f"exit {request['exit_code']}"] if request["state"] == "failed" and request.get("exit_code") else []
    took = took_seconds(request.get("started_at"), request.get("ended_at"))
    if request["state"] in FINISHED and took is not None:
        extra.append(how_long(took))
    colour = {"approved": "running", "cancelled": "ended", "expired": "failed"}.get(request["state"], request["state"])
    colour = "ended" if pending_deny else colour
    return RowText(head, pill, colour, " · ".join(extra), one_line(request.get("prompt", ""), 60))


def continuation_badge(origin_id: str, today: date | None = None) -> str:
    """'↻ continuation of R-07': woken by background tasks that R-07's turn started."""
    return f"↻ continuation of {short_form(origin_id, today or datetime.now(UTC).date())}"


ENDED = {"completed": "✓", "failed": "✘", "stopped": "■"}  # how a task ended at a glance; "?": result unknown


def task_text(task: dict[str, Any], with_chip: bool = True, now: datetime | None = None) -> RowText:
    """A background task: 'T3 · api · command', its status (✓ ✘ ■ ? once ended, then dimmed), its test chip (unless
    it is shown apart), how long it ran (or runs, given `now`), its description (or command)."""
    chip, _ = test_chip(task.get("tests")) if with_chip else ("", "")
    ended = task["state"] == "ended"
    colour = {"completed": "done", "failed": "failed"}.get(task.get("outcome") or "", "ended") if ended else "running"
    until = task.get("ended_at") or (now.isoformat() if now is not None else None)
    took = took_seconds(task.get("started_at"), until)
    extra = [chip] if chip else []
    if took is not None:
        extra.append(how_long(took))
    pill = f"{ENDED.get(task.get('outcome') or '', '?')} {task['status']}" if ended else task["status"]
    head = " · ".join(part for part in (task["id"], visible(task["agent"] or ""), task.get("kind", "")) if part)
    return RowText(
        head, pill, colour, " · ".join(extra), one_line(task["description"] or task["command"], 60), dim=ended
    )


def test_chip(tests: dict[str, Any] | None) -> tuple[str, str]:
    """('✓ 412 ✘ 2', 'pytest: 412 passed, 2 failed, 3 skipped'), or empty when no test run was seen."""
    if not tests:
        return "", ""
    chip = f"✓ {tests['passed']}" + (f" ✘ {tests['failed']}" if tests["failed"] else "")
    tip = f"{tests['runner']}: {tests['passed']} passed, {tests['failed']} failed, {tests['skipped']} skipped"
    return chip, tip


def took_seconds(started_at: str | None, ended_at: str | None) -> float | None:
    if not started_at or not ended_at:
        return None
    return (datetime.fromisoformat(ended_at) - datetime.fromisoformat(started_at)).total_seconds()


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
    shown = [
        f"{counts[s]} {word}"
        for s, word in (("running", "running"), ("pending", "waiting"), ("approved", "queued"), ("failed", "failed"))
        if counts.get(s)
    ]
    return " · ".join(shown) or "nothing running or waiting"


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
