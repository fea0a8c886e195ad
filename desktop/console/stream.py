"""The console pipeline over a growing stream of bytes: decode (invalid UTF-8 shown as U+FFFD), split into lines,
clean each (ansi), redact (whole lines only, so a secret split across two reads is still seen), cut long lines, fold
repeated lines into one with a count, and count test results. Each stage passes over a read's whole lines at once.
Memory stays bounded whatever the input."""

import codecs
import operator
import re
from dataclasses import dataclass
from itertools import count, islice

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
        end = text.rfind("\n")
        self._partial = _bounded(text[end + 1 :])
        return self._take(text[:end]) if end >= 0 else []

    def finish(self) -> list[Line]:
        """The end of the stream: the last line, even without its newline."""
        text = self._partial + self._decoder.decode(b"", final=True)
        self._partial = ""
        return self._take(text) if text else []

    def pending(self) -> str:
        """The unfinished last line as it shows right now (a progress bar that has not ended its line). Nothing is
        counted or carried over: the line is read again once it is finished."""
        if not self._partial:
            return ""
        return self._shown([self._redactor.preview(ansi.clean_line(self._partial))])[0]

    def _take(self, text: str) -> list[Line]:
        """Whole lines, each pass over all of them at once: Python looks at a line only to fold it, or when a pass
        found something in it (a redraw, a control, a trigger of a secret's pattern)."""
        first_raw = self._raw_lines + 1
        lines = text.split("\n")
        self._raw_lines += len(lines)
        plain = ansi.clean(text, lines)
        self.tests.feed(plain, first_raw)
        if not self._lines_wanted:
            return []
        self._redactor.redact_lines(lines, plain)
        return self._fold(self._shown(lines), first_raw)

    def _fold(self, lines: list[str], first_raw: int) -> list[Line]:
        """Console lines from shown lines: a line the same as the one before it adds to that one's count."""
        last, index = self._last, self._lines
        if not any(map(operator.eq, lines, islice(lines, 1, None))) and (last is None or lines[0] != last.text):
            changed = list(map(Line, range(index, index + len(lines)), lines, count(first_raw)))  # no repeats
            self._last, self._lines = changed[-1], index + len(lines)
            return changed
        changed = []
        last_text = last.text if last is not None else None
        for raw, line in enumerate(lines, first_raw):
            if line == last_text and last is not None:
                last.count += 1
                if not changed or changed[-1] is not last:
                    changed.append(last)
            else:
                last, last_text = Line(index, line, raw), line
                index += 1
                changed.append(last)
        self._last, self._lines = last, index
        return changed

    def _shown(self, lines: list[str]) -> list[str]:
        """Redacted lines as console lines: without colours unless they are wanted, long lines cut."""
        if not self.colours:
            lines = ansi.strip_sgr("\n".join(lines)).split("\n")
        if max(map(len, lines)) > MAX_LINE:
            lines = [_cut(line) if len(line) > MAX_LINE else line for line in lines]
        return lines


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
