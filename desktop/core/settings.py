"""The owner's settings: names, defaults and validation. Values are stored as the text the owner typed."""

import ipaddress
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from desktop.core import audit
from desktop.core.actors import Actor
from desktop.core.durations import parse_duration
from desktop.core.errors import Forbidden, Invalid, NotFound
from desktop.store import directory
from desktop.store.db import Store


@dataclass(frozen=True)
class Setting:
    default: str
    parse: Callable[[str], int]
    help: str


def _duration_between(low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        seconds = parse_duration(text)
        if not low <= seconds <= high:
            raise Invalid(f"'{text}' is out of range ({low}s to {high}s)")
        return seconds

    return parse


def _task_timeout(text: str) -> int:
    seconds = 0 if text.strip() == "0" else _duration_between(0, 10 * 3600)(text)
    if seconds % 300:
        raise Invalid(f"'{text}' is not a whole number of 5-minute steps (0 means no limit)")
    return seconds


def _max_turn(text: str) -> int:
    return 0 if text.strip() == "0" else _duration_between(300, 86400)(text)


def _yes_no(text: str) -> int:
    answer = {"yes": 1, "no": 0}.get(text.strip().lower())
    if answer is None:
        raise Invalid(f"'{text[:20]}' is neither yes nor no")
    return answer


def listen_address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The one address `room_address` names (None: 'loopback'); never a wildcard, however it is spelt."""
    if text.strip() == "loopback":
        return None
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        raise Invalid(f"'{text[:40]}' is not an IP address (or 'loopback': this computer only)") from None
    # ::ffff:0.0.0.0 binds every IPv4 address: an IPv4-mapped address is judged as the IPv4 address it maps
    plain = (address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) else address
    if plain.is_unspecified:
        raise Invalid("choose one address of this computer: 0.0.0.0 or :: would open the room on every network")
    if plain.is_multicast or plain == ipaddress.IPv4Address("255.255.255.255"):
        raise Invalid(f"'{text[:40]}' is a multicast or broadcast address, not one of this computer's")
    return plain


def _listen_address(text: str) -> int:
    """0: the room is on this computer only; 1: it is also served, over HTTPS, at this address."""
    return 0 if listen_address(text) is None else 1


def _port(text: str) -> int:
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 5) or not 1024 <= int(digits) <= 65535:
        raise Invalid(f"'{text[:20]}' is not a port number from 1024 to 65535")
    return int(digits)


def _certificate(text: str) -> int:
    """0: the daemon makes its own certificate; 1: a PEM file of the owner's holds the certificate and its key."""
    if text.strip() == "generated":
        return 0
    if not Path(text).expanduser().is_file():
        raise Invalid(f"there is no file '{text[:200]}' (a PEM file with the certificate and its key, or 'generated')")
    return 1


SETTINGS: dict[str, Setting] = {
    "approval_ttl": Setting("24h", _duration_between(1, 30 * 86400), "how long a request waits for approval"),
    "cancel_grace": Setting("5s", _duration_between(0, 600), "time a cancelled command has to exit before a kill"),
    "task_timeout": Setting(
        "4h",
        _task_timeout,
        "an agent's background tasks are stopped when nothing else has kept "
        "its conversation going this long (0: no limit)",
    ),
    "max_turn": Setting("2h", _max_turn, "a turn that runs longer is cancelled at its next safe point (0: no limit)"),
    "quiet_after": Setting("10m", _duration_between(60, 120 * 60), "a running task with no output this long is quiet"),
    "stop_grace": Setting("10s", _duration_between(0, 14), "time a stopped task has to exit before a kill"),
    "agents_paused": Setting("no", _yes_no, "yes: no agent starts anything new (what runs goes on)"),
    "keep_awake": Setting("no", _yes_no, "yes: the computer does not go to sleep on its own while a request runs"),
    **{
        f"notify_{kind}": Setting(default, _yes_no, f"yes: a notification when {what}")
        for kind, what, default in (
            ("approval", "a request waits for your approval", "yes"),
            ("failed", "a request failed", "yes"),
            ("expired", "a request expired unanswered", "yes"),
            ("task_failed", "a background task failed", "yes"),
            ("question", "an agent asks a question", "yes"),
            ("turn_completed", "a turn ends, done or failed (background continuations too)", "no"),
        )
    },
    "agent_sessions": Setting(
        "no",
        _yes_no,
        "yes: agents may start and use sessions (each conversation's first start waits for your approval)",
    ),
    "session_wait_max": Setting(
        "10m",
        _duration_between(120, 3600),
        "the longest single wait of an agent on a session it started (2 min to 60 min)",
    ),
    "room_address": Setting(
        "loopback",
        _listen_address,
        "'loopback', or an address of this computer where the room is also served over HTTPS",
    ),
    "room_port": Setting("7432", _port, "the room's HTTPS port at room_address"),
    "room_certificate": Setting(
        "generated", _certificate, "'generated', or a PEM file holding the room's certificate and private key"
    ),
}


def validate(key: str, value: str) -> int:
    """The parsed value, or an error that names the setting and what is wrong."""
    if key not in SETTINGS:
        raise NotFound(f"there is no setting '{key[:40]}'; known settings: {', '.join(sorted(SETTINGS))}")
    try:
        return SETTINGS[key].parse(value)
    except Invalid as error:
        raise Invalid(f"{key}: {error}") from None


def current(conn: sqlite3.Connection, key: str) -> int:
    """The setting's value in effect (the stored text, or the default), parsed."""
    return SETTINGS[key].parse(directory.settings(conn).get(key, SETTINGS[key].default))


def change(store: Store, key: str, value: str, actor: Actor, at: float) -> None:
    if not actor.is_owner:
        raise Forbidden("only the owner can change settings")
    validate(key, value)
    with store.transaction() as conn:
        directory.set_setting(conn, key, value)
        audit.append(conn, at, actor, "set_setting", None, f"{key} = {value}")


def text(conn: sqlite3.Connection, key: str) -> str:
    """The setting's text in effect (for the settings that are not numbers)."""
    return directory.settings(conn).get(key, SETTINGS[key].default).strip()


def effective(store: Store) -> dict[str, str]:
    stored = directory.settings(store.conn)
    return {key: stored.get(key, setting.default) for key, setting in SETTINGS.items()}
