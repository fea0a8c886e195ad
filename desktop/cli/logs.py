"""`cox logs`: a request's console lines as the daemon renders them (redacted, repeats folded, escapes gone), or with
`--raw` the bytes it printed (redacted). `--follow` prints what comes until the request ends."""

import argparse
import sys
import time
from typing import TYPE_CHECKING

from desktop.cli.common import Commands, client, command
from desktop.client import api
from desktop.console.ansi import SGR, strip_sgr
from desktop.core.states import TERMINAL
from desktop.core.visible import visible
from desktop.platform.paths import Home

if TYPE_CHECKING:
    from desktop.client.transport import Client

POLL = 0.3  # seconds between reads while following a request that is quiet


def add(sub: Commands) -> None:
    p = command(sub, "logs", _logs, "print a request's console (what it printed, secrets redacted)")
    p.add_argument("id")
    p.add_argument("--follow", "-f", action="store_true", help="keep printing until the request ends")
    p.add_argument("--raw", action="store_true", help="the bytes it printed (secrets redacted), escapes and all")
    p.add_argument("--colour", "--color", action="store_true", help="keep its colours (on a terminal only)")


def _logs(home: Home, args: argparse.Namespace) -> int:
    daemon = client(home)
    if args.raw:
        return _raw(daemon, args.id, args.follow)
    colours = args.colour and sys.stdout.isatty()
    after, ended = 0, False
    while True:
        ended = not args.follow or daemon.call(api.request(args.id)).state in TERMINAL  # asked before the last read
        while True:
            page = daemon.call(api.console(args.id, after=after))
            if page.older_not_loaded:
                _print("… older output not loaded")
            for line in page.lines:
                _print(shown(line, colours))
            after = page.end
            if not page.more:
                break
        if ended:
            if page.pending:
                _print(shown(page.pending, colours))
            return 0
        time.sleep(POLL)


def shown(line: str, colours: bool) -> str:
    """A console line for a terminal: its colour codes only if wanted, and nothing else that a terminal would act
    on (a control character or an escape the daemon let through is shown as its picture)."""
    if not colours:
        return visible(strip_sgr(line))
    parts, at = [], 0
    for code in SGR.finditer(line):
        parts += [visible(line[at : code.start()]), code.group()]
        at = code.end()
    return "".join([*parts, visible(line[at:]), "\x1b[0m" if parts else ""])


def _print(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _raw(daemon: "Client", request_id: str, follow: bool) -> int:
    offset = 0
    while True:
        chunk = daemon.call(api.output(request_id, offset))
        sys.stdout.write(chunk.text)
        sys.stdout.flush()
        moved = chunk.offset != offset
        offset = chunk.offset
        if not moved and (not follow or chunk.state in TERMINAL):  # all of it read (and, following, it ended)
            return 0
        if not moved:
            time.sleep(POLL)
