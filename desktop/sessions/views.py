"""What the session tools tell an agent about a session: its state, its settings, its question (with the
instruction to bring it to the owner) and, in detail, its prompts and the latest one's timeline."""

import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.sessions import sql
from desktop.store import directory
from desktop.store import questions as questions_sql
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.rows import RequestRow, SessionRow, TaskRow

RELAY = (
    "This question is for the people behind the work, not for you: bring it to the owner (ask_question) and "
    "answer it with answer_question only as they say. Decide it yourself only if the owner told you to."
)
SHOWN = {"pending": "waiting for the owner's approval", "approved": "queued", "running": "running"}


def short(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def latest_state(conn: sqlite3.Connection, session: SessionRow) -> tuple[str, RequestRow | None]:
    """(idle | waiting for the owner's approval | queued | running | asking | done | failed | cancelled |
    expired | archived, the session's latest prompt)."""
    prompts = sql.requests_of(conn, session.id)
    unfinished = [r for r in prompts if r.state in SHOWN]
    latest = unfinished[0] if unfinished else prompts[-1] if prompts else None
    if session.archived_at is not None:
        return "archived", latest
    if latest is None:
        return "idle", None
    if latest.state == "running" and questions_sql.open_for(conn, latest.id):
        return "asking", latest
    return SHOWN.get(latest.state, latest.state), latest


def view(
    conn: sqlite3.Connection, session: SessionRow, detail: bool = False, now: float | None = None
) -> dict[str, Any]:
    """`now` (the wall clock): the session's background tasks are listed with how long they have been quiet."""
    state, latest = latest_state(conn, session)
    agent = directory.agent(conn, session.id)
    options = agent.options if agent else {}
    parent = requests_sql.get(conn, session.parent_request)
    shown: dict[str, Any] = {
        "session": session.id,
        "title": session.title,
        "state": state,
        "runtime": agent.runtime if agent else None,
        "folder": agent.folder if agent else None,
        "model": options.get("model"),
        "permission_mode": options.get("permission_mode"),
        "effort": options.get("effort"),
        "group": session.group_name,
        "started_by": session.parent_request,
        "parent_title": short(parent.prompt, 60) if parent else None,
        "may_create_sessions": session.may_create,
        "latest_request": latest.id if latest else None,
    }
    if now is not None:
        tasks = [
            task_view(t, now)
            for t in tasks_sql.background(conn, session.id)
            if t.kind != "request" and (t.ended_at is None or now - t.ended_at < 3600)
        ][:20]  # running, and ended in the last hour
        turning = state in ("running", "asking", "queued")
        shown["activity"] = (
            "running_turn" if turning else "background_only" if any(t["state"] == "running" for t in tasks) else "idle"
        )
        shown["tasks"] = tasks
    if latest is not None and latest.state in ("done", "failed", "cancelled", "expired"):
        shown["result"] = (latest.result or "")[-4000:]
    if state == "asking" and latest is not None:
        question = questions_sql.open_for(conn, latest.id)[0]
        shown["question"] = {"text": question.text, "options": question.options, "instruction": RELAY}
    if detail:
        shown["prompts"] = [
            {
                "request": r.id,
                "state": r.state,
                "prompt": short(r.prompt, 300),
                "result": (r.result or "")[-1000:] or None,
            }
            for r in sql.requests_of(conn, session.id)
        ]
        if latest is not None:
            shown["timeline"] = [f"{t.kind}: {t.text[:300]}" for t in requests_sql.timeline(conn, latest.id)[-20:]]
    return shown


def task_view(task: TaskRow, now: float) -> dict[str, Any]:
    """A session's background task as its parent reads it (read_task_output takes its ID)."""
    tests = json.loads(task.tests) if task.tests else None
    last = task.last_output_at or task.started_at
    shown: dict[str, Any] = {
        "task": task.id,
        "description": task.description,
        "command": task.command,
        "kind": task.kind,
        "state": "running" if task.ended_at is None else "ended",
        "started": iso(task.started_at),
        "last_activity": iso(last),
        "has_output": (Path(task.dir) / "output").exists() and (Path(task.dir) / "output").stat().st_size > 0,
    }
    if task.ended_at is None:
        shown["quiet_minutes"] = int(max(0.0, now - last) // 60)
    else:
        shown.update(ended=task.outcome, exit_code=task.exit_code)
    if tests and (tests.get("passed") or tests.get("failed") or tests.get("skipped")):
        shown["tests"] = {k: tests.get(k) for k in ("runner", "passed", "failed", "skipped")}
    return shown


def iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds")


ACCOUNTS = "Sessions it starts use this machine's accounts: its agent CLIs' sign-ins and API keys."


def card(conn: sqlite3.Connection, request: RequestRow) -> dict[str, Any] | None:
    """For a prompt an agent sent to a session: what the owner's card and list show about that session."""
    if request.parent_id is None:
        return None
    session = sql.get(conn, request.agent)
    agent = directory.agent(conn, request.agent)
    if session is None or agent is None:
        return None
    parent = requests_sql.get(conn, request.parent_id)
    parent_session = sql.get(conn, parent.agent) if parent else None
    parent_title = parent_session.title if parent_session else short(parent.prompt, 60) if parent else ""
    return {
        "id": session.id,
        "title": session.title,
        "runtime": agent.runtime,
        "folder": agent.folder,
        "model": agent.options.get("model"),
        "group": session.group_name,
        "parent_title": parent_title,
        "may_create_sessions": session.may_create,
        "accounts": ACCOUNTS,
    }
