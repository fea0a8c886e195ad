"""The HTTP client the CLI (and later the tray) uses to talk to a daemon."""

import json
from pathlib import Path
from typing import Any

import httpx

from desktop.platform.paths import Home


class DaemonError(Exception):
    """Something a person should read: the daemon's own error sentence, or why it could not be reached."""


class Client:
    def __init__(self, url: str, token: str, timeout: float = 30.0) -> None:
        self._http = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout)

    @classmethod
    def for_home(cls, home: Home, token: str | None = None) -> "Client":
        try:
            url = json.loads(home.daemon_json.read_text())["url"]
        except (OSError, ValueError, KeyError):
            raise DaemonError(f"no daemon is running for {home.root}; start it with: cox daemon") from None
        if token is None:
            token = _read(home.owner_token)
        return cls(url, token)

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        return self._call("GET", path, params=params)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self._call("POST", path, json=body)

    def _call(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError:
            raise DaemonError(f"the daemon at {self._http.base_url} does not answer; is it running?") from None
        if response.is_success:
            return response.json()
        try:
            message = response.json()["error"]
        except (ValueError, KeyError, TypeError):
            message = f"the daemon answered {response.status_code}"
        raise DaemonError(message)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        raise DaemonError(f"cannot read the owner's credential {path}; set COX_TOKEN to your token") from None
