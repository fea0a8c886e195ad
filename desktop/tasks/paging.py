"""A console, page by page (a request's or a task's alike): the last lines of its raw output through the console
pipeline, the pages before them on request (`before`, a byte offset), as far back as a console loads, and what came
after a cursor (`after`) for a live console."""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from desktop.answers import ConsolePage
from desktop.console import sgr
from desktop.console.redact import redact
from desktop.console.stream import ConsoleStream, Line, folded

MAX_BACK = 5 * 1024 * 1024  # output older than this, counted from the end, is not loaded
BLOCK = 256 * 1024
FOLLOW_READ = 256 * 1024  # output rendered per live read, at most (~10 ms of pipeline)
KEY_LOOKBACK = 64 * 1024  # how far back a page looks for a private key block it begins inside of
KEY_LINES = 100  # a key block ends after this many lines at the most (as the redaction rules say)


@dataclass(frozen=True)
class Page:
    lines: list[tuple[str, int]]  # (console line, times it came in a row)
    before: int | None  # the cursor for the page before this one (a byte offset), or None at the start
    older_not_loaded: bool  # there is more before, beyond what a console loads
    pending: str  # the unfinished last line, as it shows now
    end: int = 0  # where the whole lines shown end (a byte offset): pass as `after` for what comes next
    more: bool = False  # (after a read `after`) more whole lines are there already


def console_page(
    output: Path | None,
    lines: int,
    before: int | None = None,
    after: int | None = None,
    plain: bool = False,
    styled: bool = False,
    note: str | None = None,
) -> ConsolePage:
    """The last lines of a console (or the page `before` an offset, or what came `after` one: a live console's next
    read), as every reader gets it: the API, the MCP tools; `output` None: nothing started yet. `plain`: without
    colours; `styled`: with each line as styled runs; `note` (why output stops here) goes on the last page only."""
    lines = max(1, min(lines, 2000))
    if output is None:
        page = Page([], None, False, "", after or 0)
    elif after is not None:
        page = output_since(output, after, lines)
    else:
        page = output_page(output, lines, before, not plain)
    shown = [folded(text, count) for text, count in page.lines]
    return ConsolePage(
        lines=shown,
        before=page.before,
        older_not_loaded=page.older_not_loaded,
        pending=page.pending,
        end=page.end,
        more=page.more,
        note=note if before is None else None,
        styled=[sgr.styled(line) for line in shown] if styled else None,
    )


def output_page(output: Path, lines: int, before: int | None = None, colours: bool = True) -> Page:
    """The last `lines` console lines of a task's raw output that end before byte `before` (or at its end).
    The window read grows until it holds more console lines than asked for (so a folded run of repeats is
    counted whole) or reaches what a console loads (MAX_BACK from the end)."""
    try:
        size = output.stat().st_size
    except OSError:
        return Page([], None, False, "")
    return _last_page(output, size, lines, before, colours)


def output_since(output: Path, after: int, lines: int) -> Page:
    """The console lines of the whole raw lines written since byte `after`, at most `lines` of them and about
    FOLLOW_READ of output per call: a live console's next read. `more` says there is more to read right away;
    `older_not_loaded` that the reader fell more than MAX_BACK behind and what was in between is skipped."""
    try:
        size = output.stat().st_size
    except OSError:
        return Page([], None, False, "", after)
    if after > size:  # not this file's cursor: a request's next turn began a new one; read it from its start
        after = 0
    start = min(max(after, size - MAX_BACK, 0), size)
    skipped = start > after  # the reader fell more than MAX_BACK behind
    with open(output, "rb") as f:
        f.seek(start)
        data = f.read(min(size - start, FOLLOW_READ))
        if not _begins_line(f, start):  # skipped ahead, or asked from inside a line: from the next line's start
            cut = data.find(b"\n") + 1
            if not cut:  # all of it inside that line: past it, nothing shown
                return Page([], None, skipped, "", start + len(data), start + len(data) < size)
            data, start = data[cut:], start + cut
        whole = data[: data.rfind(b"\n") + 1]
        known = _key_begun_before(f, start)  # rendered again, not returned: what a key block begun there hides
    capped = start + len(data) < size
    seen = known.count(b"\n")
    body = known + whole
    rendered = [line for line in _render(body, colours=True, final=True)[0] if line.raw_line > seen]
    end = start + len(whole)
    if len(rendered) > lines:  # stop where the first line not returned begins
        line_starts = [0, *(match.end() for match in re.finditer(rb"\n", body))]
        end = start - len(known) + line_starts[rendered[lines].raw_line - 1]
        rendered = rendered[:lines]
    more = capped or end < start + len(whole)
    pending = "" if more else _render(data[len(whole) :], colours=True, final=False)[1]
    return Page([(line.text, line.count) for line in rendered], None, skipped, pending, end, more)


def raw_since(output: Path | None, offset: int, most: int, ended: bool) -> tuple[str, int]:
    """The raw output from byte `offset` (redacted; from the next line's start if `offset` is inside one), at most
    `most` bytes of whole lines, and where the next read starts. Unfinished last lines wait for their end unless the
    request has `ended`: a secret is never cut in two, nor its name from its value."""
    try:
        size = output.stat().st_size if output is not None else 0
    except OSError:
        size = 0
    if output is None or offset >= size:
        return "", min(offset, size)
    with open(output, "rb") as f:
        if not _begins_line(f, offset):
            f.seek(offset)
            rest = f.read(most)
            offset += rest.find(b"\n") + 1 or len(rest)
        f.seek(offset)
        data = f.read(most)
        if b"\n" in data and (len(data) == most or not ended):
            data = data[: data.rindex(b"\n") + 1]
        elif not ended:
            data = b""
        known = _key_begun_before(f, offset)
    text = redact((known + data).decode("utf-8", "replace"))
    return text.split("\n", known.count(b"\n"))[-1] if known else text, offset + len(data)


def _begins_line(f: Any, offset: int) -> bool:
    if offset == 0:
        return True
    f.seek(offset - 1)
    return bool(f.read(1) == b"\n")


def _key_begun_before(f: Any, start: int) -> bytes:
    """The lines before `start` from a private key block's BEGIN line on, if `start` is inside that block (its END
    not yet printed, fewer than KEY_LINES lines ago): rendered first, so the lines after stay redacted."""
    look = max(0, start - KEY_LOOKBACK)
    f.seek(look)
    before = f.read(start - look)
    begin = before.rfind(b"-----BEGIN ")
    if begin < 0 or before.find(b"-----END ", begin) >= 0:
        return b""
    known = before[before.rfind(b"\n", 0, begin) + 1 :]
    return known if known.count(b"\n") < KEY_LINES else b""


def _last_page(output: Path, size: int, lines: int, before: int | None, colours: bool) -> Page:
    end = size if before is None else max(0, min(before, size))
    floor = max(0, size - MAX_BACK)
    if end <= floor and floor > 0:
        return Page([], None, True, "")
    block = BLOCK
    with open(output, "rb") as f:
        if before is not None and not _begins_line(f, end):  # asked from inside a line: the page ends before it
            base = max(0, end - BLOCK)
            f.seek(base)
            end = base + f.read(end - base).rfind(b"\n") + 1  # (no line start within a block: the block's start)
        while True:
            window = start = max(floor, end - block)
            f.seek(start)
            data = f.read(end - start)
            if start > 0:  # begin at the start of a line
                cut = data.find(b"\n") + 1
                data, start = data[cut:], start + cut
            known = _key_begun_before(f, start)  # a key block begun before the window: its lines stay redacted
            data, start = known + data, start - len(known)
            rendered, pending = _render(data, colours, final=before is not None)
            if len(rendered) > lines or window == floor:
                break
            block *= 2
    page = rendered[-lines:]
    at_floor = window == floor > 0  # what is before this page is not loaded
    whole_end = start + data.rfind(b"\n") + 1 if b"\n" in data else start
    if not page:
        return Page([], None, at_floor, pending, whole_end)
    shown = [(line.text, line.count) for line in page]
    if page[0].index == 0 and (start == 0 or at_floor):
        return Page(shown, None, start > 0, pending, whole_end)
    line_starts = [start, *(start + match.end() for match in re.finditer(rb"\n", data))]
    return Page(shown, line_starts[page[0].raw_line - 1] or None, False, pending, whole_end)


def _render(data: bytes, colours: bool, final: bool) -> tuple[list[Line], str]:
    """Console lines of whole raw lines, and (unless `final`) the unfinished last line as it shows now."""
    stream = ConsoleStream(colours)
    shown = {line.index: line for line in stream.feed(data)}
    if final:
        shown.update({line.index: line for line in stream.finish()})
    return [shown[index] for index in sorted(shown)], "" if final else stream.pending()
