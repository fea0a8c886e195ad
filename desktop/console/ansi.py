"""Terminal output to console lines: SGR colour codes stay, every other control or escape sequence goes, and a line
redrawn with a carriage return or an erase-line keeps only its final state (progress bars)."""

import re
from collections.abc import Iterator

from desktop.console.scan import scanner, utf8

# CSI (ESC [ … final), OSC (ESC ] … BEL or ST, or unterminated to the end of the line), other two-byte escapes,
# and C0 controls but the tab. One pass finds them all; SGR (a CSI ending in `m`) is put back.
ESCAPE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\|$)"
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\|$)"
    r"|\x1b[ -/]*[0-~]"
    r"|\x1b"
    r"|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]"
)
SGR = re.compile(r"\x1b\[[0-9;:]*m")
# where a redraw starts over: a carriage return, erase-whole-line, cursor to column 1
REDRAW = re.compile(r"\r|\x1b\[2K|\x1b\[1?G|\x1b\[0?1G")
# what `clean_line` removes, read on a line without its SGR codes: a control but the tab, an escape (not a colour)
DIRTY = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
RARE = scanner([(0, r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f]")], single=True)  # but `\r` and ESC
# ESCAPE but a colour code, over many lines: an unterminated string sequence stops at the line's end
NOT_SGR = re.compile(
    r"\x1b(?!\[[0-9;:]*m)(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\|(?=\n)|\Z)"
    r"|[PX^_][^\x1b\n]*(?:\x1b\\|(?=\n)|\Z)|[ -/]*[0-~]|)|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]"
)
REDRAW_CODES = ("\x1b[2K", "\x1b[G", "\x1b[1G", "\x1b[01G")  # REDRAW but the carriage return


def _last_part(line: str) -> str:
    """What follows the last redraw of `line`, a carriage return at its very end aside (CRLF)."""
    body = line.rstrip("\r")
    last = tail = body.rfind("\r") + 1
    for code in REDRAW_CODES:
        at = body.rfind(code, tail)
        if at >= 0:
            last = max(last, at + len(code))
    return body[last:]


def final_state(line: str) -> str:
    """What is left on screen of a line that redraws itself: the part after the last redraw that shows something."""
    if "\r" not in line and "\x1b[" not in line:
        return line
    part = _last_part(line)
    if ESCAPE.sub("", part).strip():  # the common case: the last part shows something
        return part
    parts = REDRAW.split(line)
    for part in reversed(parts):
        if ESCAPE.sub("", part).strip():
            return part
    return parts[-1]


def clean_line(line: str) -> str:
    """One line of a terminal's output (no newline) as the console shows it: final state, SGR kept, the rest gone."""
    return NOT_SGR.sub("", final_state(line))


def _cleaned(line: str, controls: bool) -> tuple[str, str]:
    """`clean_line(line)`, and that without colour codes (what ESCAPE leaves: it takes SGR codes too). `controls`:
    the line may hold a control other than a carriage return."""
    part = _last_part(line) if "\r" in line or "\x1b[" in line else line
    if not controls and "\x1b" not in part and part.strip():  # a redrawn line that ends in plain text
        return part, part
    bare = ESCAPE.sub("", part)
    if part is line or bare.strip():
        return NOT_SGR.sub("", part), bare
    cleaned = clean_line(line)
    return cleaned, strip_sgr(cleaned)


def clean(text: str, lines: list[str]) -> str:
    """`clean_line` for each of `lines` (`text` split at its newlines), in place, touching only the lines that need
    it; returns the cleaned text without colour codes. Whole-text passes find them: a line costs nothing else."""
    plain = strip_sgr(text)
    rare = RARE()
    controls = rare is None or rare.matches(utf8(plain))
    pieces: list[str] = []
    index, at = 0, 0  # the line of the last dirty one; where the text copied so far ends (both in `plain`)
    for start, end in _dirty(plain, controls):
        index += plain.count("\n", at, start)
        lines[index], bare = _cleaned(lines[index], controls)
        pieces += [plain[at:start], bare]
        at = end
    if not pieces:
        return plain
    pieces.append(plain[at:])
    return "".join(pieces)


def _dirty(plain: str, controls: bool) -> Iterator[tuple[int, int]]:
    """Where each line of `plain` that `clean_line` would change starts and ends. Without `controls` (other than the
    carriage return) str.find finds them: a carriage return or an escape that is no colour code."""
    if not controls:
        cr, esc = plain.find("\r"), plain.find("\x1b")
        while cr >= 0 or esc >= 0:
            at = cr if esc < 0 or 0 <= cr < esc else esc
            end = plain.find("\n", at)
            end = len(plain) if end < 0 else end
            yield plain.rfind("\n", 0, at) + 1, end
            cr = plain.find("\r", end) if 0 <= cr < end else cr
            esc = plain.find("\x1b", end) if 0 <= esc < end else esc
        return
    match = DIRTY.search(plain)
    while match is not None:
        end = plain.find("\n", match.start())
        end = len(plain) if end < 0 else end
        yield plain.rfind("\n", 0, match.start()) + 1, end
        match = DIRTY.search(plain, end)


def clean_lines(text: str) -> str:
    """`clean_line` for each line of `text`."""
    lines = text.split("\n")
    clean(text, lines)
    return "\n".join(lines)


def strip_sgr(text: str) -> str:
    """`text` without its colour codes."""
    return SGR.sub("", text) if "\x1b" in text else text
