"""`cox console`: the task console's pipeline over any output, standard input to standard output (no daemon)."""

import argparse
import codecs
import json
import os
import sys
from collections.abc import Iterator

from desktop.cli.common import Commands
from desktop.platform.paths import Home


def add(sub: Commands) -> None:
    console = sub.add_parser("console", help="the task console's pipeline over any output (stdin to stdout)")
    console_actions = console.add_subparsers(metavar="ACTION", required=True)
    p = console_actions.add_parser("render", help="raw terminal output to console lines (colours kept unless --plain)")
    p.add_argument("--plain", action="store_true", help="without colour codes")
    p.set_defaults(handler=_render)
    console_actions.add_parser("redact", help="only redact secrets").set_defaults(handler=_redact)
    console_actions.add_parser(
        "tests", help="test counts as JSON: runner, passed, failed, skipped, first_failure"
    ).set_defaults(handler=_tests)


def _stdin_chunks() -> Iterator[bytes]:
    """Standard input as it arrives (not waiting for a full buffer: a live command is piped in)."""
    while chunk := os.read(0, 1 << 16):
        yield chunk


def _render(home: Home, args: argparse.Namespace) -> int:
    from desktop.console.stream import ConsoleStream, Line, folded  # (here: the other commands start faster)

    stream, out = ConsoleStream(colours=not args.plain), sys.stdout
    shown: Line | None = None  # the last line, held back while it may still repeat

    def show(lines: list[Line]) -> None:
        nonlocal shown
        for line in lines:
            if shown is not None and line.index != shown.index:
                out.write(folded(shown.text, shown.count) + "\n")
            shown = line

    for chunk in _stdin_chunks():
        show(stream.feed(chunk))
    show(stream.finish())
    show([Line(-1, "", 0)])
    return 0


def _redact(home: Home, args: argparse.Namespace) -> int:
    from desktop.console.redact import Redactor

    redactor, decoder, partial = Redactor(), codecs.getincrementaldecoder("utf-8")("replace"), ""
    for chunk in _stdin_chunks():
        *complete, partial = (partial + decoder.decode(chunk)).split("\n")
        if complete:
            sys.stdout.write(redactor.lines("\n".join(complete)) + "\n")
    rest = partial + decoder.decode(b"", final=True)
    sys.stdout.write(redactor.lines(rest) if rest else "")
    return 0


def _tests(home: Home, args: argparse.Namespace) -> int:
    from desktop.console.stream import ConsoleStream

    stream = ConsoleStream(colours=False)
    for chunk in _stdin_chunks():
        stream.feed(chunk)
    stream.finish()
    print(json.dumps(stream.tests.summary()))
    return 0
