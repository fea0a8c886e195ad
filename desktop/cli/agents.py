"""`cox agent` (add, change, remove, list) and `cox session` (the sessions agents started)."""

import argparse
import os

from desktop.cli.common import Commands, actions, said, table
from desktop.client import DaemonError, api
from desktop.client.api import AgentSetup
from desktop.client.shapes import Agent, Session
from desktop.core.visible import visible


def add(sub: Commands) -> None:
    agent = actions(sub, "agent", "add, change, remove and list agents")
    setup = argparse.ArgumentParser(add_help=False)
    setup.add_argument("--runtime", required=True, help="shell (built in), claude, codex, gemini, copilot")
    setup.add_argument("--folder", required=True, help="the folder the agent works in")
    setup.add_argument("--model", help="the model the runtime uses")
    setup.add_argument(
        "--permission-mode",
        help="claude: default, acceptEdits, plan, dontAsk, bypassPermissions; "
        "codex: read-only, workspace-write, danger-full-access",
    )
    setup.add_argument(
        "--effort", help="claude: low, medium, high, xhigh, max; codex: minimal, low, medium, high, xhigh"
    )
    setup.add_argument(
        "--sessions",
        choices=("once", "ask"),
        help="when agent sessions are on: once (you approve a conversation's first session, the "
        "default) or ask (every session action waits for you)",
    )
    setup.add_argument("--arg", action="append", default=[], help="an extra argument for the CLI (repeatable)")
    setup.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="an environment variable for the CLI (repeatable; secrets go in the keyring)",
    )
    p = agent.add_parser("add", help="add an agent", parents=[setup])
    p.add_argument("name")
    p.set_defaults(
        handler=said(
            lambda a: api.add_agent(a.name, _setup(a)),
            lambda made, a: f"added agent {made.name} ({made.runtime}) in {made.folder}; {made.status}",
        )
    )
    p = agent.add_parser(
        "change", help="give an agent another runtime, folder or options (all are given again)", parents=[setup]
    )
    p.add_argument("name")
    p.set_defaults(
        handler=said(
            lambda a: api.change_agent(a.name, _setup(a)),
            lambda made, a: f"agent {made.name} is now {made.runtime} in {made.folder}; {made.status}",
        )
    )
    p = agent.add_parser("remove", help="remove an agent (its past requests keep its name)")
    p.add_argument("name")
    p.set_defaults(handler=said(lambda a: api.remove_agent(a.name), lambda done, a: f"removed agent {done.removed}"))
    agent.add_parser("list", help="list agents").set_defaults(handler=said(lambda a: api.agents(), _agent_table))


def add_sessions(sub: Commands) -> None:
    session = actions(sub, "session", "sessions agents started (switch them on: cox settings set agent_sessions yes)")
    session.add_parser("list", help="every session, its state, who started it").set_defaults(
        handler=said(lambda a: api.sessions(), lambda rows, a: _session_table(rows))
    )
    p = session.add_parser("may-create", help="let a session an agent started start sessions itself (or not)")
    p.add_argument("session")
    p.add_argument("allowed", choices=["yes", "no"])
    p.set_defaults(
        handler=said(lambda a: api.change_session(a.session, a.allowed == "yes"), lambda row, a: _session_table([row]))
    )
    p = session.add_parser("group", help="make a group agents may name when they start sessions")
    p.add_argument("name")
    p.set_defaults(
        handler=said(lambda a: api.add_session_group(a.name), lambda groups, a: "groups: " + ", ".join(groups))
    )


def _setup(args: argparse.Namespace) -> AgentSetup:
    env = {}
    for pair in args.env:
        name, equals, value = pair.partition("=")
        if not equals:
            raise DaemonError(f"--env takes NAME=VALUE, not '{pair}'")
        env[name] = value
    return AgentSetup(
        runtime=args.runtime,
        folder=os.path.abspath(os.path.expanduser(args.folder)),
        model=args.model,
        permission_mode=args.permission_mode,
        args=args.arg,
        env=env,
        effort=args.effort,
        sessions=args.sessions,
    )


def _agent_table(rows: list[Agent], args: argparse.Namespace) -> str:
    return table([row.dump() for row in rows], ("name", "runtime", "status", "state", "folder"))


def _session_table(rows: list[Session]) -> str:
    lines = []
    for row in rows:
        group = f" · Group: {row.group}" if row.group else ""
        may = " · may create sessions" if row.may_create_sessions else ""
        lines.append(
            visible(
                f"{row.session} {row.state}: {row.title} ({row.runtime} in {row.folder}; "
                f"via agent · {row.parent_title}{group}{may})"
            ).replace("\n", " ⏎ ")
        )
    return "\n".join(lines) or "no sessions"
