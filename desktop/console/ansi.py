"""Terminal output to console lines: SGR colour codes stay, every other control or escape sequence goes, and a line
redrawn with a carriage return or an erase-line keeps only its final state (progress bars)."""

import re

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
# anything `clean_line` would change: every control but the tab, every escape but a plain SGR
NOT_PLAIN = re.compile(r"[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f]|\x1b(?:[^\[]|$)|\x1b\[[0-9;:]*(?:[^0-9;:m]|$)")


def _keep_sgr(match: re.Match[str]) -> str:
    text = match.group()
    return text if text.endswith("m") and SGR.fullmatch(text) else ""


def final_state(line: str) -> str:
    """What is left on screen of a line that redraws itself: the part after the last redraw that shows something."""
    if "\r" not in line and "\x1b[" not in line:
        return line
    parts = REDRAW.split(line)
    for part in reversed(parts):
        if strip_sgr(ESCAPE.sub("", part)).strip():
            return part
    return parts[-1]


def clean_line(line: str) -> str:
    """One line of a terminal's output (no newline) as the console shows it: final state, SGR kept, the rest gone."""
    if not NOT_PLAIN.search(line):
        return line
    return ESCAPE.sub(_keep_sgr, final_state(line))


def clean_lines(text: str) -> str:
    """`clean_line` for each line of `text`; only the lines that need it are touched."""
    match = NOT_PLAIN.search(text)
    if match is None:
        return text
    lines = text.split("\n")
    line_at, counted = 0, 0  # the line of the last match, and where counting newlines stopped
    while match is not None:
        line_at += text.count("\n", counted, match.start())
        counted = match.start()
        lines[line_at] = clean_line(lines[line_at])
        line_end = text.find("\n", match.start())
        if line_end < 0:
            break
        match = NOT_PLAIN.search(text, line_end + 1)  # the rest of this line is cleaned already
    return "\n".join(lines)


def strip_sgr(text: str) -> str:
    """`text` without its colour codes."""
    return SGR.sub("", text) if "\x1b" in text else text
