"""`cox task`: background tasks, commands and monitors left running in an agent's folder."""

import argparse
import json

from desktop.cli.common import Commands, actions, ask, said, table
from desktop.client import api
from desktop.client.shapes import Task
from desktop.platform.paths import Home


def add(sub: Commands) -> None:
    task = actions(sub, "task", "background tasks: commands and monitors left running")
    p = task.add_parser("start", help="run a command in an agent's folder, in the background; prints its ID")
    p.add_argument("--agent", required=True)
    p.add_argument("--description", default="", help="what it is, in a few words")
    p.add_argument("--monitor", action="store_true", help="a command whose output is the point (tail -f, …)")
    p.add_argument("command", nargs="+")
    p.set_defaults(
        handler=said(
            lambda a: api.start_task(
                a.agent, " ".join(a.command), a.description, "monitor" if a.monitor else "command"
            ),
            lambda made, a: made.id,
        )
    )
    p = task.add_parser("list", help="running tasks, and those that ended in the last hour")
    p.add_argument("--json", action="store_true")
    p.set_defaults(handler=_list)
    p = task.add_parser("output", help="a task's console: its last lines (older pages with --before)")
    p.add_argument("id")
    p.add_argument("--lines", type=int, default=2000, help="how many console lines (at most 2000)")
    p.add_argument("--before", type=int, help="the cursor printed under the previous page")
    p.add_argument("--plain", action="store_true", help="without colours")
    p.set_defaults(handler=_output)
    p = task.add_parser("stop", help="stop a task (SIGTERM, then SIGKILL after stop_grace)")
    p.add_argument("id")
    p.set_defaults(handler=said(lambda a: api.stop_task(a.id), lambda t, a: f"{t.id}: {t.status}"))


def _list(home: Home, args: argparse.Namespace) -> int:
    rows = ask(home, api.tasks())
    if args.json:
        print(json.dumps([row.dump() for row in rows], indent=2))
        return 0
    print(
        table([_row(row) for row in rows], ("id", "agent", "kind", "status", "tests", "started_at", "what"))
        if rows
        else "no background tasks"
    )
    return 0


def _row(task: Task) -> dict[str, str | None]:
    tests = task.tests
    return {
        "id": task.id,
        "agent": task.agent,
        "kind": task.kind,
        "started_at": task.started_at,
        "status": task.status + (" · quiet" if task.quiet else ""),
        "tests": f"{tests.passed}✓ {tests.failed}✗ {tests.skipped}○" if tests else "",
        "what": task.description or task.command,
    }


def _output(home: Home, args: argparse.Namespace) -> int:
    page = ask(home, api.task_console(args.id, lines=args.lines, before=args.before, plain=args.plain or None))
    if page.older_not_loaded:
        print("… older output not loaded")
    elif page.before is not None:
        print(f"… older: cox task output {args.id} --before {page.before}")
    for line in page.lines:
        print(line)
    if page.pending:
        print(page.pending)
    if page.note:
        print(f"── {page.note}")
    return 0
