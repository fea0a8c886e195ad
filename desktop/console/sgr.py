"""A console line's SGR colour codes as styled runs of text, for whatever draws them (the console window, the room).
Covers what terminals' programs print: bold, faint, italic, underline, inverse, the 16 colours, 256 colours and
24-bit colour; anything else is ignored."""

from dataclasses import asdict, dataclass, replace
from typing import Any

from desktop.console.ansi import SGR

# xterm's 16 colours, normal then bright
PALETTE_16 = (
    "#000000",
    "#cd3131",
    "#0dbc79",
    "#e5e510",
    "#2472c8",
    "#bc3fbc",
    "#11a8cd",
    "#e5e5e5",
    "#666666",
    "#f14c4c",
    "#23d18b",
    "#f5f543",
    "#3b8eea",
    "#d670d6",
    "#29b8db",
    "#ffffff",
)


@dataclass(frozen=True, slots=True)
class Style:
    fg: str | None = None  # "#rrggbb", or None for the console's own
    bg: str | None = None
    bold: bool = False
    faint: bool = False
    italic: bool = False
    underline: bool = False
    inverse: bool = False


PLAIN = Style()


def runs(line: str) -> list[tuple[str, Style]]:
    """The line's text cut where its style changes; consecutive runs never share a style."""
    if "\x1b" not in line:
        return [(line, PLAIN)] if line else []
    found: list[tuple[str, Style]] = []
    style, at = PLAIN, 0
    for match in SGR.finditer(line):
        _add(found, line[at : match.start()], style)
        style = apply(style, match.group()[2:-1])
        at = match.end()
    _add(found, line[at:], style)
    return found


def _add(found: list[tuple[str, Style]], text: str, style: Style) -> None:
    if not text:
        return
    if found and found[-1][1] == style:
        found[-1] = (found[-1][0] + text, style)
    else:
        found.append((text, style))


def apply(style: Style, params: str) -> Style:
    """`style` after one SGR sequence's parameters (`1;31`, `38;5;208`, `38:2::255:0:0`)."""
    parts = params.replace(":", ";").split(";") if params else ["0"]
    codes = [int(p) if p.isdigit() and len(p) <= 5 else 0 for p in parts]  # thousands of digits: no int() of them
    i = 0
    while i < len(codes):
        code = codes[i]
        if code in (38, 48):
            colour, used = _extended(codes[i + 1 :])
            style = replace(style, fg=colour) if code == 38 else replace(style, bg=colour)
            i += 1 + used
            continue
        style = _simple(style, code)
        i += 1
    return style


_FLAGS: dict[int, dict[str, Any]] = {
    1: {"bold": True},
    2: {"faint": True},
    3: {"italic": True},
    4: {"underline": True},
    7: {"inverse": True},
    22: {"bold": False, "faint": False},
    23: {"italic": False},
    24: {"underline": False},
    27: {"inverse": False},
    39: {"fg": None},
    49: {"bg": None},
}


def _simple(style: Style, code: int) -> Style:
    if code == 0:
        return PLAIN
    changes = _FLAGS.get(code, {})
    if 30 <= code <= 37 or 90 <= code <= 97:
        changes = {"fg": PALETTE_16[code - 30 if code < 90 else code - 82]}
    elif 40 <= code <= 47 or 100 <= code <= 107:
        changes = {"bg": PALETTE_16[code - 40 if code < 100 else code - 92]}
    return replace(style, **changes) if changes else style


def _extended(rest: list[int]) -> tuple[str | None, int]:
    """A 256-colour (`5;N`) or 24-bit (`2;R;G;B`, maybe with an empty colour-space id) colour, and codes used."""
    if rest[:1] == [5] and len(rest) >= 2:
        return colour_256(rest[1]), 2
    if rest[:1] == [2] and len(rest) >= 4:
        rgb = rest[1:4] if len(rest) < 5 or rest[1] != 0 else rest[2:5]
        used = 4 if rgb == rest[1:4] else 5
        r, g, b = (min(max(v, 0), 255) for v in rgb)
        return f"#{r:02x}{g:02x}{b:02x}", used
    return None, len(rest)


def colour_256(n: int) -> str | None:
    if not 0 <= n <= 255:
        return None
    if n < 16:
        return PALETTE_16[n]
    if n >= 232:
        level = 8 + (n - 232) * 10
        return f"#{level:02x}{level:02x}{level:02x}"
    n -= 16
    r, g, b = (0 if v == 0 else 55 + v * 40 for v in (n // 36, n // 6 % 6, n % 6))
    return f"#{r:02x}{g:02x}{b:02x}"


def styled(line: str) -> list[dict[str, Any]]:
    """The line's runs as JSON for a web page: text plus only what differs from plain (`fg`, `bg`, flags)."""
    return [{"text": text, **{k: v for k, v in asdict(style).items() if v}} for text, style in runs(line)]
