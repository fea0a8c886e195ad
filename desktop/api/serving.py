"""Serving the API on a socket of the daemon's own loop (plain HTTP on loopback, HTTPS for the room elsewhere)."""

import asyncio
import contextlib
import socket
from collections.abc import Iterator
from typing import Any

import uvicorn


class EmbeddedServer(uvicorn.Server):
    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the daemon owns SIGINT and SIGTERM


def listening_socket(host: str, port: int) -> socket.socket:
    # IPPROTO_TCP explicitly: asyncio then sets TCP_NODELAY on every connection (else Nagle adds ~40 ms)
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


async def serve(app: Any, sock: socket.socket, **tls: Any) -> tuple[EmbeddedServer, "asyncio.Task[None]"]:
    """Start serving `app` on `sock`; returns once it accepts connections (or raises why it could not)."""
    # keep-alive 30 s: a busy client must not have a pooled connection closed under it
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=2,
                            timeout_keep_alive=30, **tls)
    server = EmbeddedServer(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]), name=f"http {sock.getsockname()}")
    while not server.started:
        if serving.done():
            serving.result()
            raise OSError("the server stopped as it started")
        await asyncio.sleep(0.005)
    return server, serving


async def shut(server: EmbeddedServer, serving: "asyncio.Task[None]") -> None:
    server.should_exit = True
    with contextlib.suppress(Exception):
        await asyncio.wait_for(serving, 5)
