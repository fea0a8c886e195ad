"""Durations as people write them in settings: `90s`, `30m`, `24h`, `1h30m`, `2d`."""

import re

from desktop.core.errors import Invalid

_PART = re.compile(r"([0-9]{1,9})([smhd])")  # ASCII digits, few enough for int()
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> int:
    """Seconds in `text`; raises Invalid with an example of what is accepted."""
    cleaned = text.strip().lower().replace(" ", "")
    parts = _PART.findall(cleaned)
    if not cleaned or "".join(n + u for n, u in parts) != cleaned:
        raise Invalid(f"'{text[:40]}' is not a duration; write a number with s, m, h or d, like 90s, 30m or 24h")
    return sum(int(n) * _UNIT[u] for n, u in parts)


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def how_long(seconds: float) -> str:
    """How long something took, as a person reads it: '4 s', '2 min 14 s', '1 h 05 min'."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
