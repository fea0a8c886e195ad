"""Every HTTP request passes here first: exact Host allowlist (defeats DNS rebinding), no foreign or `null` Origin,
a bearer token on everything (GET and the event stream included), JSON bodies of bounded size on POST only.
An agent session's token (see `Principals.session_token`) reaches the MCP server at `/mcp` and nothing else."""

import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from desktop.core.actors import Actor

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]
MAX_BODY = 1024 * 1024
ALLOWED_METHODS = {"GET", "HEAD", "POST"}
MCP_PATH = "/mcp"  # the daemon's MCP server: the one address an agent session's token reaches


class LocalSecurity:
    def __init__(self, app: ASGIApp, authenticate: Callable[[str], Actor | None], hosts: Iterable[str]) -> None:
        self._app, self._authenticate = app, authenticate
        self.hosts = set(hosts)

    def allow_port(self, port: int) -> None:
        self.hosts |= {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, message = refusal
            await _reply(send, status, message)
            return
        await self._app(scope, receive, send)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        if headers.get("host") not in self.hosts:
            return 421, "this address is not served here (unexpected Host header)"
        origin = headers.get("origin")
        if origin is not None and origin.removeprefix("http://").removeprefix("https://") not in self.hosts:
            return 403, "requests from other web pages are refused"
        method = scope["method"]
        if method not in ALLOWED_METHODS:
            return 405, f"{method} is not used by this API; changes are made with POST"
        scheme, _, token = headers.get("authorization", "").partition(" ")
        actor = self._authenticate(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if actor is None:
            return 401, "a valid token is needed (Authorization: Bearer …); it may have been revoked"
        if actor.kind == "agent" and scope["path"] != MCP_PATH:
            return 403, "an agent session's token is good for its own session's calls only"
        scope.setdefault("state", {})["actor"] = actor
        if method == "POST":
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                return 415, "changes take a JSON body (Content-Type: application/json)"
            length = headers.get("content-length")
            if length is None or not length.isdigit():
                return 411, "a Content-Length is needed"
            if int(length) > MAX_BODY:
                return 413, f"the body is {int(length):,} bytes; the limit is {MAX_BODY:,}"
        return None


async def _reply(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
