"""What the tray shows at a glance, worked out from the daemon's request list (no Qt here)."""

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from desktop.core.ids import short_form


@dataclass(frozen=True)
class Entry:
    request_id: str
    state: str  # running | pending
    line: str  # "R-07 · api · sarah · 60%"
    prompt: str  # its first line, shortened


@dataclass(frozen=True)
class TraySummary:
    state: str  # idle | running | waiting | failed | paused
    waiting: int
    progress: float | None  # of the running requests, when known
    entries: list[Entry]  # the running and the waiting requests
    paused: bool = False

    @property
    def lines(self) -> list[str]:
        return [entry.line for entry in self.entries]

    @property
    def tooltip(self) -> str:
        head = {"idle": "Coxswain: nothing running", "running": "Coxswain: working",
                "waiting": f"Coxswain: {self.waiting} waiting for you", "failed": "Coxswain: something failed",
                "paused": "Coxswain: paused"}[self.state]
        return "\n".join([head, *self.lines])


def summarize(requests: list[dict[str, Any]], paused: bool = False, failed_unseen: bool = False,
              today: date | None = None) -> TraySummary:
    running = [r for r in requests if r["state"] == "running"]
    waiting = [r for r in requests if r["state"] == "pending"]
    today = today or datetime.now(UTC).date()
    entries = [Entry(r["id"], r["state"], _line(r, today), _first_line(r.get("prompt", ""))) for r in running + waiting]
    known = [r["progress"] for r in running if r.get("progress") is not None]
    progress = sum(known) / len(known) if known else None
    state = ("paused" if paused else "waiting" if waiting else "failed" if failed_unseen
             else "running" if running else "idle")
    return TraySummary(state, len(waiting), progress, entries, paused)


def _first_line(prompt: str, width: int = 50) -> str:
    line = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return line if len(line) <= width else line[:width - 1].rstrip() + "…"


def _line(request: dict[str, Any], today: date) -> str:
    parts = [short_form(request["id"], today), request["agent"], request["requester"]]
    if request["state"] == "pending":
        parts.append("waiting for approval")
    elif request.get("progress") is not None:
        parts.append(f"{request['progress']:.0f}%")
    return " · ".join(parts)
