"""Secrets in console text become `[redacted]`: tokens and keys of the usual shapes, credentials in headers, URLs,
command lines, `NAME=value` and `NAME value` pairs, values with spaces (YAML, quoted, XML, connection strings), and
private keys. References (`$API_TOKEN`, `${API_TOKEN}`, `%API_TOKEN%`, `$(cat ~/.token)`) stay as they are.

A key block ends at its END line, at the first line that cannot be part of a PEM body, or after MAX_KEY_LINES, so a
header quoted alone (a grep result, a truncated file, an error) never blanks the rest of the console.

The patterns are in desktop/console/redact_rules.py. Matching runs on the text without colour codes, so codes
around or inside a secret cannot hide it; the codes inside a redacted span are put back after the marker, so the
colours after it stay right."""

import re
from collections.abc import Iterator, Set

from desktop.console.ansi import SGR
from desktop.console.redact_rules import GROUPS, PATTERNS, PREFIX, TRIGGER
from desktop.console.triggers import KEY_ID, PADDED_ID, SCANNER, candidates

MARK = "[redacted]"
KEY_BEGIN = re.compile(r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
KEY_END = re.compile(r"-----END[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----")
# where a key block starts: its header, or a DER key body in base64 printed without one (PKCS#8, PKCS#1, SEC1)
KEY_START = re.compile(
    r"(?P<begin>-----BEGIN[A-Z0-9 ]*PRIVATE KEY[A-Z ]*-----)[A-Za-z0-9+/=\\]*"
    r"|(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{3}(?:IBA|BOBgkqhkiG9w0BBQ0w)|MIG[A-Za-z0-9+/]AgEA"
    r"|MHcCAQEE)[A-Za-z0-9+/]{16,}={0,2}"
)
KEY_FIRST = ("-----BEGIN", "MII", "MIG", "MHcCAQEE")
# what may follow a key's start on its line for the block to go on to the next lines: more of the body
BODY_REST = re.compile(r"(?:[\s\"',]|\\[nr]|[A-Za-z0-9+/=]{16,})*")
# a line that can be inside a key block: base64 (long, or with a digit or symbol), a PEM header, or nothing
PEM_LINE = re.compile(
    PREFIX.pattern + r"(?:(?=[A-Za-z0-9+/]{20}|[A-Za-z]*[0-9+/=])[A-Za-z0-9+/]+={0,2}"
    r"|Proc-Type: [\w,]+|DEK-Info: [\w,\-]+|Comment: .*)?[\s\"',\\]*"
)
MAX_KEY_LINES = 100  # a block with no END ends after this many lines


def _block_end(text: str, at: int, taken: int) -> tuple[int, int | None]:
    """A key block that goes on after `at` (where a line of it ends; -1 before the text), `taken` lines in: where
    it ends, and None, or the end of the text and the lines it has taken if the text ends first."""
    while at < len(text):
        if taken >= MAX_KEY_LINES:
            return at, None
        start = at + 1
        line_end = text.find("\n", start)
        line_end = len(text) if line_end < 0 else line_end
        end = KEY_END.search(text, start, line_end)
        if end is not None:
            return end.end(), None
        if not PEM_LINE.fullmatch(text, start, line_end):
            return at, None
        taken, at = taken + 1, line_end
    return at, taken


def _next_key_start(text: str, at: int) -> re.Match[str] | None:
    """KEY_START.search, from what each start begins with (str.find is many times faster than the pattern's scan)."""
    while True:
        found = [place for place in (text.find(first, at) for first in KEY_FIRST) if place >= 0]
        if not found:
            return None
        at = min(found)
        if (start := KEY_START.match(text, at)) is not None:
            return start
        at += 1


def _key_spans(text: str, found: list[tuple[int, int]]) -> int | None:
    """Adds the key blocks of `text` to `found`; the lines taken by one still open at the end of the text, if any."""
    at = 0
    while (start := _next_key_start(text, at)) is not None:
        line_end = text.find("\n", start.end())
        line_end = len(text) if line_end < 0 else line_end
        header = start.group("begin") is not None
        end_match = KEY_END.search(text, start.end(), line_end) if header else None
        if end_match is not None:
            found.append((start.start(), end_match.end()))
            at = end_match.end()
        elif not BODY_REST.fullmatch(text, start.end(), line_end):  # words follow (an error quoting a header)
            found.append((start.start(), start.end()))
            at = start.end()
        else:
            end, still_open = _block_end(text, line_end, 0 if header else 1)
            found.append((start.start(), max(end, line_end)))
            if still_open is not None:
                return still_open
            at = max(end, line_end)
    return None


# an Azure storage or Service Bus key: 64 bytes in base64, wherever it stands (not an npm sha512 integrity hash).
# Found from its `==` and looked at backwards: a long counted repetition in the trigger would slow every line down.
PADDED_KEY = re.compile(r"==(?<=(?<![A-Za-z0-9+/])(?<!sha512-)[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])")


class Redactor:
    """Redaction of a stream given as whole lines, read by read: a private key block may span reads."""

    def __init__(self) -> None:
        self._key_lines: int | None = None  # lines into a key block that is still going on

    def preview(self, line: str) -> str:
        """An unfinished line redacted as it would be, without moving the stream on (it is read again later)."""
        if self._key_lines is not None and (PEM_LINE.fullmatch(SGR.sub("", line)) or KEY_END.search(line)):
            return MARK
        return redact(line)

    def lines(self, text: str, plain: str | None = None) -> str:
        """`text` (whole lines) redacted; `plain` is `text` without colour codes if the caller has it already."""
        lines = text.split("\n")
        self.redact_lines(lines, SGR.sub("", text) if plain is None else plain)
        return "\n".join(lines)

    def redact_lines(self, lines: list[str], plain: str) -> None:
        """Whole lines redacted in place; `plain` is them joined by newlines, without colour codes. However the lines
        come in reads, a line comes out the same (a key block's lines keep their colour codes around the marker)."""
        carried: list[tuple[int, int]] = []  # what a key block that began in an earlier read takes
        rest = 0  # where the text after that block's lines begins
        if self._key_lines is not None:
            end, self._key_lines = _block_end(plain, -1, self._key_lines)
            if self._key_lines is not None:
                _redact_lines(lines, plain, [(0, len(plain))])
                return
            if end >= 0:
                rest = plain.find("\n", end) + 1 or len(plain) + 1
                carried.append((0, end))
                if end < rest - 1:  # it ended at an END inside a line: the line is read whole, as within a read
                    start = plain.rfind("\n", 0, end) + 1
                    carried += [(start + a, start + b) for a, b in spans(plain[start : rest - 1])]
        if rest > len(plain):
            found: list[tuple[int, int]] = []
        else:
            found, self._key_lines = _spans(plain[rest:] if rest else plain)
        _redact_lines(lines, plain, _merged(carried + [(rest + a, rest + b) for a, b in found]))


def spans(text: str) -> list[tuple[int, int]]:
    """The secret spans of `text`, merged, in order."""
    return _spans(text)[0]


ALL_PATTERNS = frozenset(range(len(PATTERNS)))
KEYS = frozenset((KEY_ID, PADDED_ID))


def every_line(text: str) -> Iterator[tuple[int, int, Set[int]]]:
    """Each line of `text` with every pattern and key: what the triggers stand in for (tests compare the two)."""
    start = 0
    for line in text.split("\n"):
        yield start, start + len(line), ALL_PATTERNS | KEYS
        start += len(line) + 1


def trigger_lines(text: str) -> Iterator[tuple[int, int, Set[int]]]:
    """The lines of `text` RE2's one TRIGGER matched, with every pattern, and the whole text for the keys if it has
    what they start or end with: the way without Hyperscan."""
    if "PRIVATE KEY" in text or "MI" in text or "MHcCAQEE" in text:
        yield 0, len(text), {KEY_ID}
    if "==" in text:
        yield 0, len(text), {PADDED_ID}
    line_end = -1
    for trigger in TRIGGER.finditer(text):
        if trigger.start() <= line_end:
            continue  # this line is done already
        line_start = text.rfind("\n", 0, trigger.start()) + 1
        line_end = text.find("\n", trigger.start())
        line_end = len(text) if line_end < 0 else line_end
        yield line_start, line_end, ALL_PATTERNS


# the lines the patterns run on: those Hyperscan's triggers found, or without it those RE2's one trigger found
def _candidates(text: str) -> Iterator[tuple[int, int, Set[int]]]:
    return candidates(text) if SCANNER() is not None else trigger_lines(text)


def _spans(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """The secret spans of `text`, merged, in order; and the lines taken by a key block still open at its end."""
    found: list[tuple[int, int]] = []
    key = False  # a key block may start in the text
    for line_start, line_end, ids in _candidates(text):
        key = key or KEY_ID in ids
        if PADDED_ID in ids:
            found += [(padded.end() - 88, padded.end()) for padded in PADDED_KEY.finditer(text, line_start, line_end)]
        patterns = ids - KEYS
        if not patterns:
            continue
        prefix = PREFIX.match(text, line_start, line_end)
        line = text[prefix.end() if prefix is not None else line_start : line_end]
        shift = line_end - len(line)
        for index in sorted(patterns):
            groups = GROUPS[index]
            for match in PATTERNS[index].finditer(line):
                group = next(name for name in groups if match.start(name) >= 0)
                if match.end(group) > match.start(group):
                    found.append((shift + match.start(group), shift + match.end(group)))
    still_open = _key_spans(text, found) if key else None
    return _merged(found), still_open


def _merged(found: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans in order, those that overlap or touch made one."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def redact(text: str, plain: str | None = None) -> str:
    """`text` with every secret replaced by `[redacted]`; colour codes may be anywhere in it."""
    plain = text if "\x1b" not in text else SGR.sub("", text) if plain is None else plain
    found = spans(plain)
    if not found:
        return text
    lines = text.split("\n")
    _redact_lines(lines, plain, found)
    return "\n".join(lines)


def _redact_lines(lines: list[str], plain: str, found: list[tuple[int, int]]) -> None:
    """`found` (spans of `plain`: `lines` joined, without colour codes) redacted in `lines`, in place; only the lines
    with a secret are touched (a key block is the one secret that spans lines)."""
    touched: dict[int, tuple[str, list[tuple[int, int]]]] = {}  # a line: its plain text, its spans
    index, counted = 0, 0  # the line of the last span's start, and where counting newlines stopped
    for start, end in found:
        index += plain.count("\n", counted, start)
        counted = start
        number, line_start = index, plain.rfind("\n", 0, start) + 1
        while True:
            line_end = plain.find("\n", line_start)
            line_end = len(plain) if line_end < 0 else line_end
            entry = touched.setdefault(number, (plain[line_start:line_end], []))
            entry[1].append((max(start - line_start, 0), min(end, line_end) - line_start))
            if end <= line_end:
                break
            number, line_start = number + 1, line_end + 1
    for number, (line_plain, line_spans) in touched.items():
        line = lines[number]
        codes = list(SGR.finditer(line)) if "\x1b" in line else []
        lines[number] = (
            _replace_around_codes(line, line_plain, codes, line_spans) if codes else _replace(line, line_spans)
        )


def _mark(secret: str) -> str:
    """One marker per line the secret spans, so a redacted key block keeps its line count."""
    return "\n".join([MARK] * (secret.count("\n") + 1))


def _replace(text: str, found: list[tuple[int, int]]) -> str:
    parts, at = [], 0
    for start, end in found:
        parts += [text[at:start], _mark(text[start:end])]
        at = end
    parts.append(text[at:])
    return "".join(parts)


def _replace_around_codes(text: str, plain: str, codes: list[re.Match[str]], found: list[tuple[int, int]]) -> str:
    """Redact `found` (offsets in the text without codes) in `text`; codes inside a span follow its marker."""
    placed, removed = [], 0  # (offset in the plain text where the code sits, the code)
    for match in codes:
        placed.append((match.start() - removed, match.group()))
        removed += len(match.group())
    out: list[str] = []
    copied = shift = k = 0
    for start, end in found:
        while k < len(placed) and placed[k][0] <= start:
            shift += len(placed[k][1])
            k += 1
        out += [text[copied : start + shift], _mark(plain[start:end])]
        while k < len(placed) and placed[k][0] < end:
            out.append(placed[k][1])
            shift += len(placed[k][1])
            k += 1
        copied = end + shift
    out.append(text[copied:])
    return "".join(out)
