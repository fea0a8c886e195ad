"""Requests: send, list, show, approve, deny, cancel, answer, retry; pause and resume every agent."""

import argparse
import json

from desktop.cli.common import Commands, Handler, ask, command, said, table
from desktop.client import api
from desktop.client.api import Verb
from desktop.client.shapes import Request
from desktop.core.states import state_word
from desktop.core.visible import one_line, visible
from desktop.platform.paths import Home

SHOW_FIELDS = (
    "id",
    "state",
    "agent",
    "requester",
    "prompt",
    "retry_of",
    "continuation_of",
    "references",
    "conversation_ref",
    "progress",
    "result",
    "exit_code",
    "created_at",
    "expires_at",
    "started_at",
    "ended_at",
)


def add(sub: Commands) -> None:
    p = command(
        sub,
        "request",
        said(lambda a: api.send(a.agent, " ".join(a.prompt)), lambda made, a: made.id),
        "send a request to an agent; prints its ID",
    )
    p.add_argument("--agent", required=True)
    p.add_argument("prompt", nargs="+")

    p = command(sub, "list", _list, "list requests, newest first")
    p.add_argument("--state", help="only requests in this state")
    p.add_argument("--json", action="store_true")

    p = command(sub, "show", _show, "show one request with its timeline")
    p.add_argument("id")
    p.add_argument("--json", action="store_true")

    decisions: tuple[tuple[Verb, str], ...] = (
        ("approve", "approve a pending request"),
        ("deny", "deny a pending request"),
        ("cancel", "cancel a request (a running one stops at its next safe point)"),
    )
    for verb, help in decisions:
        p = command(sub, verb, _decided(verb), help)
        p.add_argument("id")
    p = command(
        sub,
        "answer",
        said(
            lambda a: api.answer(a.id, " ".join(a.text)),
            lambda q, a: f"answered {q.request_id}: {one_line(q.question, 200)} → {one_line(q.answer or '', 200)}",
        ),
        "answer the question a running request's agent is waiting on",
    )
    p.add_argument("id")
    p.add_argument("text", nargs="+")
    command(
        sub,
        "pause",
        said(lambda a: api.pause(), lambda r, a: "paused: nothing new starts on any agent (what runs goes on)"),
        "pause all agents",
    )
    command(sub, "resume", said(lambda a: api.pause(False), lambda r, a: "resumed"), "resume all agents")
    p = command(
        sub,
        "retry",
        said(lambda a: api.act(a.id, "retry"), lambda made, a: made.id),
        "send a request again as a new request; prints the new ID",
    )
    p.add_argument("id")


def _list(home: Home, args: argparse.Namespace) -> int:
    rows = ask(home, api.requests(state=args.state or None))
    if args.json:
        print(json.dumps([r.dump() for r in rows], indent=2))
    else:
        print(
            table(
                [
                    {
                        "id": r.id,
                        "state": state_word(r.state, r.denied),
                        "agent": r.agent,
                        "requester": r.requester,
                        "prompt": one_line(r.prompt, 50),
                    }
                    for r in rows
                ],
                ("id", "state", "agent", "requester", "prompt"),
            )
        )
    return 0


def _show(home: Home, args: argparse.Namespace) -> int:
    row = ask(home, api.request(args.id))
    if args.json:
        print(json.dumps(row.dump(), indent=2))
        return 0
    fields = row.dump()
    fields["state"] = state_word(row.state, row.denied)
    for key in SHOW_FIELDS:
        value = fields.get(key)
        if value not in (None, [], ""):
            shown = ", ".join(value) if isinstance(value, list) else value
            print(f"{key:>12}: {visible(str(shown))}")
    if row.question:
        asked = row.question
        choices = f"  [{' / '.join(asked.options)}]" if asked.options else ""
        print(f"{'question':>12}: {visible(asked.question + choices)}  (answer: cox answer {row.id} …)")
    print("    timeline:")
    for entry in row.timeline or []:
        print(f"      {entry.at}  {entry.state:<9}  {visible(entry.text)}")
    return 0


def _decided(verb: Verb) -> Handler:
    def text(row: Request, args: argparse.Namespace) -> str:
        note = " (stops at the next safe point)" if verb == "cancel" and row.state == "running" else ""
        return f"{row.id} is {state_word(row.state, row.denied)}{note}"

    return said(lambda a: api.act(a.id, verb), text)
