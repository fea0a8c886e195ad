"""Whole reads scanned at once by Hyperscan (Vectorscan, built into the `hyperscan` wheel): which lines of a text
hold a match of which expressions. Python then looks at those lines only. Where the wheel is missing (a platform
without one) or cannot run, a scanner is None and the callers keep their slower pure-Python way. Hyperscan is loaded
and a database compiled at its first use, not at import: an app with no output to read stays small (8 MB)."""

import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger(__name__)


@functools.cache
def _hyperscan() -> Any:
    try:
        import hyperscan
    except Exception as error:  # no wheel for this platform, or a library it cannot load
        log.warning("the console's scans run without Hyperscan, more slowly: %s", error)
        return None
    return hyperscan


class Scanner:
    """A database of expressions (bytes regexes without lookaround; `^` and `$` match at line ends), each with an id
    (ids may repeat). An expression must not match a newline."""

    def __init__(self, expressions: list[tuple[int, str]], single: bool = False) -> None:
        """`single`: each expression reports its first match only (for `matches`)."""
        hyperscan = _hyperscan()
        self._database = hyperscan.Database()
        self._database.compile(
            expressions=[expression.encode() for _, expression in expressions],
            ids=[ident for ident, _ in expressions],
            elements=len(expressions),
            flags=hyperscan.HS_FLAG_MULTILINE | (hyperscan.HS_FLAG_SINGLEMATCH if single else 0),
        )
        self._scratch = threading.local()  # a scan needs scratch space of its own in each thread

    def matches(self, data: bytes) -> bool:
        """Whether an expression matches somewhere in `data`."""
        return bool(self._hits(data))

    def lines(self, data: bytes) -> list[tuple[int, int, set[int]]]:
        """(start, end, ids) of each line of `data` (UTF-8) with a match: where it starts and ends, in bytes, and the
        ids of the expressions that matched it."""
        hits = self._hits(data)
        hits.sort()
        found: list[tuple[int, int, set[int]]] = []
        line_end = -1
        for end, ident in hits:
            if end > line_end:  # the line of the match's last byte
                line_end = data.find(b"\n", end - 1)
                line_end = len(data) if line_end < 0 else line_end
                found.append((data.rfind(b"\n", 0, end - 1) + 1, line_end, set()))
            found[-1][2].add(ident)
        return found

    def _hits(self, data: bytes) -> list[tuple[int, int]]:
        hits: list[tuple[int, int]] = []  # (end, id)

        def hit(ident: int, _start: int, end: int, _flags: int, _context: object) -> None:
            hits.append((end, ident))

        scratch = getattr(self._scratch, "space", None)
        if scratch is None:
            scratch = self._scratch.space = self._database.scratch.clone()
        self._database.scan(data, match_event_handler=hit, scratch=scratch)
        return hits


def scanner(expressions: list[tuple[int, str]], single: bool = False) -> Callable[[], Scanner | None]:
    """The Scanner of these expressions, made at the first call: None without Hyperscan (or if it cannot compile
    here: a CPU it does not support)."""

    @functools.cache
    def made() -> Scanner | None:
        hyperscan = _hyperscan()
        if hyperscan is None:
            return None
        try:
            return Scanner(expressions, single)
        except hyperscan.error as error:
            log.warning("the console's scans run without Hyperscan, more slowly: %s", error)
            return None

    return made


_last = threading.local()  # the last text encoded, in each thread: the same text is often scanned twice


def utf8(text: str) -> bytes:
    """`text` as the scanners read it (a lone surrogate, which no decoder makes, kept as its own bytes)."""
    last = getattr(_last, "pair", None)
    if last is not None and last[0] is text:
        known: bytes = last[1]
        return known
    data = text.encode("utf-8", "surrogatepass")
    _last.pair = (text, data)
    return data


def in_chars(text: str, data: bytes, lines: list[tuple[int, int, set[int]]]) -> Iterator[tuple[int, int, set[int]]]:
    """`lines` of `data` (`text` in UTF-8, as Scanner.lines gives them) with their places counted in characters."""
    if len(data) == len(text):  # ASCII: a byte is a character
        yield from lines
        return
    byte_at = char_at = 0  # the same place in both; lines only move forward
    for start, end, ids in lines:
        char_start = char_at + len(data[byte_at:start].decode("utf-8", "surrogatepass"))
        char_at = char_start + len(data[start:end].decode("utf-8", "surrogatepass"))
        byte_at = end
        yield char_start, char_at, ids
