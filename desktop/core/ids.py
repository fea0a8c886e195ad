"""Public request IDs: `R20260906-07`, short form `R-07` (today's, UTC)."""

import re
from datetime import date

from desktop.core.errors import Invalid

# ASCII digits only, and at most 9 for a day's number: longer is no ID (int() of thousands of digits would raise)
_FULL = re.compile(r"R([0-9]{4})([0-9]{2})([0-9]{2})-([0-9]{1,9})", re.IGNORECASE)
_SHORT = re.compile(r"R-([0-9]{1,9})", re.IGNORECASE)
# An ID inside free text: not glued to a word or another dash on either side.
MENTION = re.compile(r"(?<![\w-])R(?:[0-9]{8})?-[0-9]{2,9}(?![\w-])", re.IGNORECASE)


def format_id(day: date, number: int) -> str:
    return f"R{day:%Y%m%d}-{number:02d}"


def short_form(request_id: str, today: date) -> str:
    """`R-07` for today's requests, the full ID otherwise."""
    day, number = parse(request_id, today)
    return f"R-{number:02d}" if day == today else request_id


def parse(text: str, today: date) -> tuple[date, int]:
    text = text.strip()
    if m := _FULL.fullmatch(text):
        try:
            day = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            raise Invalid(f"'{text}' is not a request ID: {m[1]}-{m[2]}-{m[3]} is not a date") from None
        number = int(m[4])
    elif m := _SHORT.fullmatch(text):
        day, number = today, int(m[1])
    else:
        raise Invalid(f"'{text[:40]}' is not a request ID (expected R20260906-07 or R-07)")
    if number < 1:
        raise Invalid(f"'{text}' is not a request ID: numbers start at 01")
    return day, number


def normalize(text: str, today: date) -> str:
    """The full ID for either form; `R-7` and `r-007` both name today's 07."""
    return format_id(*parse(text, today))


def mentions(text: str, today: date) -> list[str]:
    """Full IDs of every request mentioned in `text`, in order of first mention."""
    found: list[str] = []
    for m in MENTION.finditer(text):
        full = normalize(m[0], today)
        if full not in found:
            found.append(full)
    return found
