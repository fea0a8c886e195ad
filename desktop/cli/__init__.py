"""The `cox` command. Everything but `cox daemon`, `cox autostart` and `cox console` talks to the running daemon
through its API client (desktop/client); each command group is a module here."""

import argparse
import os
import sys

from desktop.cli import agents, console, daemon, logs, people, requests, settings, tasks
from desktop.client import DaemonError
from desktop.platform.paths import Home


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    home = Home.resolve(args.home)
    try:
        code: int = args.handler(home, args)
        sys.stdout.flush()  # here, where a closed pipe can be caught, not at exit
        return code
    except DaemonError as error:
        print(f"cox: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `cox list | head`: the reader has what it wanted (the Python docs' way, no traceback)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit writes to nothing
        return 141  # as a program killed by SIGPIPE: 128 + 13


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cox", description="Coxswain: your team's coding agents, on your laptop.")
    parser.add_argument("--home", help="keep every file of this installation under HOME (or set COXSWAIN_HOME)")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    sub = parser.add_subparsers(metavar="COMMAND")
    for add in (
        tasks.add,
        console.add,
        daemon.add,
        agents.add,
        people.add,
        people.add_connectors,
        agents.add_sessions,
        people.add_room,
        requests.add,
        logs.add,
        settings.add,
    ):  # the order of --help
        add(sub)
    return parser


class _Version(argparse.Action):
    """`--version`, read from the installed package only when asked (importlib.metadata is slow to load)."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("coxswain")
        except PackageNotFoundError:
            found = "unknown"
        print(f"cox {found}")
        parser.exit()
