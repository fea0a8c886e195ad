"""What every command group shares: a command's handler, the client for the home's daemon, tables."""

import argparse
import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from desktop.client import Call
from desktop.core.visible import one_line
from desktop.platform.paths import Home

T = TypeVar("T")
Handler = Callable[[Home, argparse.Namespace], int]
Commands = Any  # argparse's subparsers action (its class is private)

if TYPE_CHECKING:
    from desktop.client.transport import Client


def client(home: Home) -> "Client":
    from desktop.client.transport import Client  # httpx: only for a command that calls the daemon

    return Client.for_home(home, os.environ.get("COX_TOKEN"))


def ask(home: Home, call: Call[T]) -> T:
    return client(home).call(call)


def said(call: Callable[[argparse.Namespace], Call[T]], text: Callable[[T, argparse.Namespace], str]) -> Handler:
    """A handler that makes one call and prints what it answered, as `text` words it."""

    def handle(home: Home, args: argparse.Namespace) -> int:
        print(text(ask(home, call(args)), args))
        return 0

    return handle


def command(sub: Commands, name: str, handler: Handler, help: str) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=help)
    p.set_defaults(handler=handler)
    return p


def actions(sub: Commands, name: str, help: str) -> Commands:
    """A command with actions of its own (`cox agent add`, …)."""
    return sub.add_parser(name, help=help).add_subparsers(metavar="ACTION", required=True)


def table(rows: Sequence[dict[str, Any]], columns: tuple[str, ...]) -> str:
    if not rows:
        return "(none)"
    cells = [[one_line(str(r.get(c) if r.get(c) is not None else "-"), 1000) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(line.rstrip() for line in lines)
