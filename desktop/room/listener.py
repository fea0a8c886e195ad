"""Where the room is reached. On loopback it is the daemon's own API address (plain HTTP: nothing leaves the
computer). When the owner chooses an address of this computer (`room_address`: the local network, a tailnet), the
room is served there as well, over HTTPS only, and the Host allowlist takes that address for as long as it serves."""

import asyncio
import logging
import ssl
from pathlib import Path
from typing import Any

from desktop.api.security import LocalSecurity
from desktop.api.serving import ROOM_LIMITS, EmbeddedServer, listening_socket, serve, shut
from desktop.core import settings
from desktop.core.errors import Invalid
from desktop.store.db import Store

log = logging.getLogger(__name__)


def not_of_this_computer(text: str) -> str | None:
    """Why the room could not be served at `room_address` (a valid setting) on this computer now, or None."""
    address = settings.listen_address(text)
    if address is None:
        return None
    try:
        listening_socket(str(address), 0).close()
    except OSError as error:
        return f"{address} is not an address of this computer ({error.strerror or error})"
    return None


class RoomListener:
    def __init__(self, security: LocalSecurity, store: Store, folder: Path, local_url: str) -> None:
        self._security, self._store, self._folder, self.local_url = security, store, folder, local_url
        self._serving: tuple[EmbeddedServer, asyncio.Task[None]] | None = None
        self._host = ""
        self._lock = asyncio.Lock()
        self.url: str | None = None
        self.fingerprint: str | None = None
        self.problem: str | None = None

    def status(self) -> dict[str, Any]:
        return {
            "local_url": self.local_url + "/",
            "url": self.url,
            "fingerprint": self.fingerprint,
            "problem": self.problem,
            "address": settings.text(self._store.conn, "room_address"),
        }

    async def apply(self) -> None:
        """Serve as the settings say now (called at start and whenever a room_* setting changes)."""
        async with self._lock:
            await self._close()
            conn = self._store.conn
            try:  # stored by an older version, which let every wildcard spelling and '²' through, it may be refused now
                chosen_address = settings.listen_address(settings.text(conn, "room_address"))
                port = settings.current(conn, "room_port")
            except Invalid as error:
                self.problem = f"the room is not served beyond this computer: {error}"
                log.warning("%s", self.problem)
                return
            if chosen_address is None:
                return
            address = str(chosen_address)  # as normalised: ::ffff:192.168.1.20 is served as 192.168.1.20
            chosen = settings.text(conn, "room_certificate")
            from desktop.room import certificate  # cryptography (60 ms) only once the room goes beyond loopback

            try:
                tls = (
                    certificate.generated(self._folder, address)
                    if chosen == "generated"
                    else certificate.provided(Path(chosen).expanduser())
                )
                ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(tls.certfile, tls.keyfile)
                sock = listening_socket(address, port)
            except (OSError, ValueError, ssl.SSLError) as error:
                self.problem = f"the room cannot be served at {address}:{port}: {error}"
                log.warning("%s", self.problem)
                return
            shown = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
            self._host = shown
            self._security.hosts.add(shown)
            self._serving = await serve(
                self._security, sock, ROOM_LIMITS, ssl_certfile=str(tls.certfile), ssl_keyfile=str(tls.keyfile)
            )
            self.url, self.fingerprint = f"https://{shown}/", tls.fingerprint
            log.info("the room is served at %s (certificate SHA-256 %s)", self.url, tls.fingerprint)

    async def close(self) -> None:
        async with self._lock:
            await self._close()

    async def _close(self) -> None:
        self._security.hosts.discard(self._host)
        self.url = self.fingerprint = self.problem = None
        if self._serving is not None:
            await shut(*self._serving)
            self._serving = None
