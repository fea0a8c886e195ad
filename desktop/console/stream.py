"""The console pipeline over a growing stream of bytes: decode (invalid UTF-8 shown as U+FFFD), split into lines,
clean each (ansi), redact (whole lines only, so a secret split across two reads is still seen), cut long lines, fold
repeated lines into one with a count, and count test results. Memory stays bounded whatever the input."""

import codecs
import re
from dataclasses import dataclass

from desktop.console import ansi
from desktop.console.redact import Redactor
from desktop.console.testruns import TestRuns

MAX_LINE = 4000
KEEP = MAX_LINE + 512  # what is kept of an overlong line until its end: enough to see a secret across the cut
CUT = "…"
PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-9;:]*)?$")


@dataclass(slots=True)
class Line:
    index: int  # 0-based position among the console's lines
    text: str  # SGR colour codes kept, secrets redacted, at most MAX_LINE characters (then CUT)
    raw_line: int  # 1-based number of the first raw line (counting `\n`) it shows
    count: int = 1  # shown as ×N when the same line came N times in a row


def folded(text: str, count: int) -> str:
    """A console line as shown: a line that came N times in a row ends in `  ×N`."""
    return text + (f"  ×{count}" if count > 1 else "")


class ConsoleStream:
    def __init__(self, colours: bool = True, lines: bool = True) -> None:
        """`lines=False`: only the test counts are wanted (a daemon following a task), so no line is built."""
        self.colours, self._lines_wanted = colours, lines
        self.tests = TestRuns()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._partial = ""  # the raw line still being written
        self._raw_lines = 0
        self._last: Line | None = None
        self._lines = 0
        self._redactor = Redactor()

    def feed(self, data: bytes) -> list[Line]:
        """The lines this read finished or changed (a repeat changes the count of the line before it)."""
        text = self._partial + self._decoder.decode(data)
        *complete, self._partial = text.split("\n")
        self._partial = _bounded(self._partial)
        return self._take(complete)

    def finish(self) -> list[Line]:
        """The end of the stream: the last line, even without its newline."""
        text = self._partial + self._decoder.decode(b"", final=True)
        self._partial = ""
        return self._take([text]) if text else []

    def pending(self) -> str:
        """The unfinished last line as it shows right now (a progress bar that has not ended its line). Nothing is
        counted or carried over: the line is read again once it is finished."""
        if not self._partial:
            return ""
        return self._shown(self._redactor.preview(ansi.clean_line(self._partial)))[0]

    def _take(self, raw: list[str]) -> list[Line]:
        if not raw:
            return []
        changed: dict[int, Line] = {}
        first_raw = self._raw_lines + 1
        self._raw_lines += len(raw)
        joined = ansi.clean_lines("\n".join(raw))
        plain = ansi.strip_sgr(joined)
        self.tests.feed(plain, first_raw)
        if not self._lines_wanted:
            return []
        for offset, text in enumerate(self._shown(self._redactor.lines(joined, plain))):
            last = self._last
            if last is not None and text == last.text:
                last.count += 1
            else:
                last = self._last = Line(self._lines, text, first_raw + offset)
                self._lines += 1
            changed[last.index] = last
        return list(changed.values())

    def _shown(self, text: str) -> list[str]:
        """Redacted text as console lines: without colours unless they are wanted, long lines cut."""
        if not self.colours:
            text = ansi.strip_sgr(text)
        return [_cut(line) if len(line) > MAX_LINE else line for line in text.split("\n")]


def _bounded(partial: str) -> str:
    """An unfinished line no longer than KEEP: a redrawn line keeps what follows its last carriage return."""
    if len(partial) <= KEEP:
        return partial
    redraw = partial.rstrip("\r").rfind("\r")
    if redraw >= 0:
        partial = partial[redraw:]
    return partial[:KEEP]


def _cut(line: str) -> str:
    return PARTIAL_ESCAPE.sub("", line[:MAX_LINE]) + CUT
