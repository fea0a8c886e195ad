"""Every HTTP request passes here first: exact Host allowlist (defeats DNS rebinding), no foreign or `null` Origin,
no cross-site fetches, no token in a URL, and who is asking: a bearer token (the CLI, the tray app, machines), or the
room's sign-in cookie, whose changes must also carry the page's CSRF token. JSON bodies of bounded size on POST only.
A turn's token (the agent's, see `Principals.turn_token`) reaches the MCP server at `/mcp` and nothing else, and
no other token or cookie reaches `/mcp`.
Every answer carries headers that keep a browser from running, framing or sniffing anything it did not ask for."""

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from http.cookies import CookieError, SimpleCookie
from typing import Any
from urllib.parse import parse_qsl

from desktop.core.actors import Actor
from desktop.room.signins import csrf_matches

Scope = dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]
MAX_BODY = 1024 * 1024
ALLOWED_METHODS = {"GET", "HEAD", "POST"}
MCP_PATH = "/mcp"  # the daemon's MCP server: the one address a turn's token reaches
ROOM_FILES = {"/": "index.html", "/room/app.js": "app.js", "/room/app.css": "app.css", "/room/icon.svg": "icon.svg"}
SIGN_IN_PATHS = {"/room/signin", "/room/exchange"}
TOKEN_PARAMETERS = {"token", "access_token", "auth", "authorization", "bearer", "key", "session"}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
PROTECTIONS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def cookie_name(scheme: str) -> str:
    """`__Host-` cookies are only taken over HTTPS, for this exact host, path /."""
    return "__Host-coxswain" if scheme == "https" else "coxswain_room"


class LocalSecurity:
    def __init__(
        self,
        app: ASGIApp,
        authenticate: Callable[[str], Actor | None],
        sign_in: Callable[[str], Actor | None],
        hosts: Iterable[str],
    ) -> None:
        self._app, self._authenticate, self._sign_in = app, authenticate, sign_in
        self.hosts = set(hosts)

    def allow_port(self, port: int) -> None:
        self.hosts |= {f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}"}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":  # nothing here speaks WebSocket: refuse before anything else
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return

        async def protected(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *PROTECTIONS]
            await send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal is not None:
            status, message = refusal
            await _reply(protected, status, message)
            return
        await self._app(scope, receive, protected)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        if headers.get("host") not in self.hosts:
            return 421, "this address is not served here (unexpected Host header)"
        origin = headers.get("origin")
        if origin is not None and origin != f"{scope.get('scheme', 'http')}://{headers['host']}":
            return 403, "requests from other web pages are refused"
        method, path = scope["method"], scope["path"]
        if "upgrade" in headers:
            return 400, "nothing here speaks WebSocket or another upgraded protocol"
        if method not in ALLOWED_METHODS:
            return 405, f"{method} is not used by this API; changes are made with POST"
        page = method in ("GET", "HEAD") and path in ROOM_FILES
        if not page and headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return 403, "requests from other web pages are refused"
        query = {key.lower() for key, _ in parse_qsl(scope.get("query_string", b"").decode("latin-1"))}
        if query & TOKEN_PARAMETERS:
            return 400, "a token is never taken from the address (URL); send it in the Authorization header"
        if method == "POST":
            refusal = _body_refusal(headers)
            if refusal is not None:
                return refusal
        if page or (method == "POST" and path in SIGN_IN_PATHS):
            return None
        actor = self._who(scope, headers)
        if actor is None:
            return 401, "a valid token is needed (Authorization: Bearer …); it may have been revoked"
        if isinstance(actor, tuple):
            return actor
        if actor.kind == "agent" and path != MCP_PATH:
            return 403, "an agent's turn token is good for its own turn's calls only"
        if actor.kind != "agent" and path == MCP_PATH:
            return 403, "the MCP server is for agents in their turn, with its token; people use the API"
        scope.setdefault("state", {})["actor"] = actor
        return None

    def still_allowed(self, scope: MutableMapping[str, Any]) -> bool:
        """Whether the caller of this request would still be let in (their token not revoked, their sign-in not
        ended). An event stream asks once it listens for its ending: one that came in between is not missed."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        return isinstance(self._who(dict(scope), headers), Actor)  # a copy: a check changes nothing of the request

    def _who(self, scope: Scope, headers: dict[str, str]) -> Actor | tuple[int, str] | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            return self._authenticate(token.strip())
        session_id = _cookie(headers.get("cookie", ""), cookie_name(scope.get("scheme", "http")))
        actor = self._sign_in(session_id) if session_id else None
        if actor is None:
            return None
        if scope["path"] == MCP_PATH:
            return 403, "the MCP server is for agents in their turn"
        if scope["method"] == "POST" and not csrf_matches(session_id, headers.get("x-csrf-token", "")):
            return 403, "this change lacks the room's CSRF token; reload the page"
        scope.setdefault("state", {})["sign_in"] = session_id
        return actor


def _body_refusal(headers: dict[str, str]) -> tuple[int, str] | None:
    if headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return 415, "changes take a JSON body (Content-Type: application/json)"
    length = headers.get("content-length")
    if length is None or not (length.isascii() and length.isdigit()):
        return 411, "a Content-Length is needed"
    if len(length) > 15:
        return 413, f"the body is larger than the limit of {MAX_BODY:,} bytes"
    if int(length) > MAX_BODY:
        return 413, f"the body is {int(length):,} bytes; the limit is {MAX_BODY:,}"
    return None


def _cookie(header: str, name: str) -> str:
    try:
        morsel = SimpleCookie(header).get(name)
    except CookieError:
        return ""
    return morsel.value if morsel else ""


async def _reply(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
