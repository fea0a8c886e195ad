"""One call of the daemon's API as data: what to send and how to read the answer. The endpoints (api.py) build calls;
a transport (transport.py: synchronous or asyncio) runs them, so each endpoint is written once for both."""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

from pydantic import BaseModel

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
NOT_UNDERSTOOD = "the daemon answered something this client does not understand"


class DaemonError(Exception):
    """Something a person should read: the daemon's own error sentence, or why it could not be reached."""


@dataclass(frozen=True)
class Call(Generic[T]):
    method: str  # GET or POST
    path: str
    parse: Callable[[Any], T]  # the answer's JSON to a typed value
    params: dict[str, str | int] = field(default_factory=dict)
    body: dict[str, Any] | None = None  # (POST) the JSON body; {} when there is nothing to say


def path(*parts: str) -> str:
    """An API path of fixed words and values; a value (a name, an ID) is one segment whatever it holds."""
    return "/api/" + "/".join(quote(part, safe="") for part in parts)


def params(**given: str | int | bool | None) -> dict[str, str | int]:
    """Query parameters, leaving out those not given."""
    return {
        name: ("true" if value else "false") if isinstance(value, bool) else value
        for name, value in given.items()
        if value is not None
    }


def one(shape: type[M]) -> Callable[[Any], M]:
    return shape.model_validate


def many(shape: type[M]) -> Callable[[Any], list[M]]:
    def parse(data: Any) -> list[M]:
        return [shape.model_validate(item) for item in _sequence(data)]

    return parse


def words(data: Any) -> list[str]:
    return [str(item) for item in _sequence(data)]


def text_map(data: Any) -> dict[str, str]:
    return {str(key): str(value) for key, value in _mapping(data).items()}


def word_lists(data: Any) -> dict[str, list[str]]:
    return {str(key): words(value) for key, value in _mapping(data).items()}


def _mapping(data: Any) -> dict[Any, Any]:
    if not isinstance(data, dict):
        raise DaemonError(NOT_UNDERSTOOD)
    return data


def _sequence(data: Any) -> Sequence[Any]:
    if not isinstance(data, list):
        raise DaemonError(NOT_UNDERSTOOD)
    return data
