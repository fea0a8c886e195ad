"""The two ways a Call reaches the daemon: `Client` (synchronous: the CLI) and `AsyncClient` (asyncio: the tray).
Both read answers and errors the same way: a typed value, or a DaemonError with the daemon's own sentence."""

import json
from pathlib import Path
from typing import TypeVar

import httpx

from desktop.client.call import NOT_UNDERSTOOD, Call, DaemonError
from desktop.platform.paths import Home

T = TypeVar("T")


def address(home: Home, token: str | None = None) -> tuple[str, str]:
    """The URL of the daemon running for `home`, and the token to use (the owner's, unless one is given)."""
    try:
        url = str(json.loads(home.daemon_json.read_text())["url"])
    except (OSError, ValueError, KeyError, TypeError):
        raise DaemonError(f"no daemon is running for {home.root}; start it with: cox daemon") from None
    return url, _read(home.owner_token) if token is None else token


def headers(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


class Client:
    """Runs calls one at a time, waiting for each answer."""

    def __init__(self, http: httpx.Client) -> None:
        self.http = http

    @classmethod
    def connect(cls, url: str, token: str, timeout: float = 30.0) -> "Client":
        return cls(httpx.Client(base_url=url, headers=headers(token), timeout=timeout))

    @classmethod
    def for_home(cls, home: Home, token: str | None = None) -> "Client":
        return cls.connect(*address(home, token))

    def call(self, call: Call[T]) -> T:
        try:
            response = self.http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError:
            raise _unreachable(self.http.base_url) from None
        return answer(call, response)


class AsyncClient:
    """Runs calls on the asyncio loop (the tray's, through qasync)."""

    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http

    @classmethod
    def connect(cls, url: str, token: str, timeout: float = 30.0) -> "AsyncClient":
        return cls(httpx.AsyncClient(base_url=url, headers=headers(token), timeout=timeout))

    async def call(self, call: Call[T]) -> T:
        try:
            response = await self.http.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError:
            raise _unreachable(self.http.base_url) from None
        return answer(call, response)


def answer(call: Call[T], response: httpx.Response) -> T:
    """The typed answer, or the daemon's error sentence as a DaemonError."""
    if not response.is_success:
        try:
            message = str(response.json()["error"])
        except (ValueError, KeyError, TypeError):
            message = f"the daemon answered {response.status_code}"
        raise DaemonError(message)
    try:
        return call.parse(response.json())
    except ValueError:  # not JSON, or not the shape asked for (pydantic's ValidationError)
        raise DaemonError(NOT_UNDERSTOOD) from None


def _unreachable(url: httpx.URL) -> DaemonError:
    return DaemonError(f"the daemon at {url} does not answer; is it running?")


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        raise DaemonError(f"cannot read the owner's credential {path}; set COX_TOKEN to your token") from None
