"""Serving the API on a socket of the daemon's own loop (plain HTTP on loopback, HTTPS for the room elsewhere).

uvicorn has no limit of its own that a local process (or a phone on the room's network) cannot use up: a connection
that never finishes its request head is kept for ever, and enough of them exhaust the daemon's file descriptors
(asyncio then logs a traceback for every accept it retries). So the daemon accepts its connections itself and keeps
them within `Limits`: a deadline for the TLS handshake plus the request (head and body), one for an idle kept-alive
connection, and a cap per peer address and in all, where a new connection takes the place of the one that has waited
longest without a request at work. On loopback every peer is 127.0.0.1, the owner included: the owner's call is sent
within a millisecond of connecting, so it is at work long before the connections opened before it have all been
displaced.
What was refused or closed is summed up in the log at most twice a minute, never a traceback per connection."""

import asyncio
import contextlib
import errno
import functools
import logging
import socket
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

log = logging.getLogger(__name__)
REPORT_EVERY = 30.0  # seconds: at most one line about refused and closed connections this often
ACCEPTS_PER_TURN = 8  # then the loop reads what the accepted connections sent (the owner's call among them)
OUT_OF_FILES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


@dataclass(frozen=True)
class Limits:
    header_timeout: float = 10.0  # from connecting (or a kept-alive connection's next byte) to a complete head
    keep_alive: float = 30.0  # an idle kept-alive connection: a busy client's pool must not be closed under it
    per_peer: int = 256  # connections from one address (event streams count: the tray, the console, room pages)
    total: int = 256

    def within(self, open_files: int) -> "Limits":
        """As many connections as a quarter of the files this process may open (two listeners, and its own work)."""
        total = max(16, min(self.total, open_files // 4))
        return replace(self, total=total, per_peer=min(self.per_peer, total))


API_LIMITS = Limits()  # on loopback every peer is this computer: a busy client's pool (httpx: 100) must fit
ROOM_LIMITS = Limits(per_peer=32, total=128)  # phones and laptops on the network, each its own address


def _open_files() -> int:
    try:
        import resource
    except ImportError:  # Windows: no per-process limit of this kind that a few hundred sockets reach
        return 1 << 16
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return soft if soft != resource.RLIM_INFINITY else 1 << 16


class _Slot:
    """One accepted connection's place: waiting for a request head (it may be displaced, and closes at its deadline)
    or at work (a request is being answered)."""

    def __init__(self, gate: "_Gate", peer: str) -> None:
        self.gate, self.peer = gate, peer
        self.close: Callable[[], object] = lambda: None
        self.idle = False  # waiting after an answer, not yet sent a byte of the next request
        self.answered = False  # has had an answer: a kept-alive connection goes after those that never had one
        self.begun = False  # has sent part of a request head, not all of it: the first to go
        self.stuck = False  # at work, but its peer reads nothing of the answer
        self._timer: asyncio.TimerHandle | None = None
        self._released = False

    def wait(self, seconds: float, idle: bool = False) -> None:
        if self._released:
            return
        self.idle, self.begun = idle, self.begun and not idle
        self.answered = self.answered or idle
        self.gate.waiting.pop(self, None)
        self.gate.waiting[self] = None  # the newest waiter: displaced last
        self._cancel_timer()
        self._timer = asyncio.get_running_loop().call_later(seconds, self.drop, "timed out")

    def work(self) -> None:
        self.idle = self.begun = False
        self.gate.waiting.pop(self, None)
        self._cancel_timer()

    def stalled(self, stalled: bool) -> None:
        """At work, but its peer reads nothing of the answer: it may be displaced too."""
        self.stuck = stalled
        if stalled and not self._released:
            self.gate.waiting.setdefault(self, None)
        elif self._timer is None:
            self.gate.waiting.pop(self, None)

    def drop(self, why: str) -> None:
        if not self._released:
            self.gate.note(why, self.peer)
            self.release()
            self.close()

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        self._cancel_timer()
        self.gate.waiting.pop(self, None)
        self.gate.count -= 1
        self.gate.peers[self.peer] -= 1
        if self.gate.peers[self.peer] <= 0:
            del self.gate.peers[self.peer]

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class _Gate:
    """The connections of one listening socket, counted per peer address and in all."""

    def __init__(self, limits: Limits, name: str) -> None:
        self.limits, self.name = limits, name
        self.waiting: dict[_Slot, None] = {}  # in the order they began waiting: the longest-waiting first
        self.peers: Counter[str] = Counter()
        self.count = 0
        self._events: Counter[str] = Counter()
        self._sources: Counter[str] = Counter()
        self._report: asyncio.TimerHandle | None = None

    def admit(self, peer: str) -> _Slot | None:
        """A place for a new connection from `peer`, displacing a waiting one if need be; None: every one is at work."""
        full_peer = self.peers[peer] >= self.limits.per_peer
        if full_peer or self.count >= self.limits.total:
            # a head begun and not finished (or an answer its peer does not read) goes first, then a connection that
            # has sent nothing yet, then a kept-alive one: a half-sent request never displaces the owner's new
            # connection, nor the owner's pooled one, while one of its kind is left; the longest-waiting first
            mine = [s for s in self.waiting if s.peer == peer] if full_peer else self.waiting
            victim = (
                next((s for s in mine if s.begun or s.stuck), None)
                or next((s for s in mine if not s.answered), None)
                or next(iter(mine), None)
            )
            if victim is None:
                self.note("refused", peer)
                return None
            victim.drop("displaced")
        self.count += 1
        self.peers[peer] += 1
        return _Slot(self, peer)

    def make_room(self) -> None:
        """Out of file descriptors: the longest-waiting connection goes."""
        victim = next(iter(self.waiting), None)
        if victim is not None:
            victim.drop("displaced")

    def note(self, what: str, peer: str) -> None:
        self._events[what] += 1
        self._sources[peer] += 1
        if self._report is None:
            self._report = asyncio.get_running_loop().call_later(REPORT_EVERY, self.report)

    def report(self) -> None:
        self._report = None
        if not self._events:
            return
        said = {
            "timed out": f"closed for sending no complete request within {self.limits.header_timeout:g} s "
            f"(or nothing for {self.limits.keep_alive:g} s after an answer)",
            "displaced": f"closed while waiting, to make room (at most {self.limits.per_peer} from one address, "
            f"{self.limits.total} in all)",
            "refused": "refused: every connection was at work",
            "not spoken here": "answered 400 or closed: not an HTTP/1.1 request, or an upgrade to another protocol",
            "out of files": "not accepted for want of file descriptors",
        }
        parts = [f"{count} {said.get(what, what)}" for what, count in self._events.most_common()]
        sources = ", ".join(f"{peer} ({count})" for peer, count in self._sources.most_common(3))
        log.warning("%s: in the last %g s, connections %s; from %s", self.name, REPORT_EVERY, "; ".join(parts), sources)
        self._events.clear()
        self._sources.clear()

    def close(self) -> None:
        if self._report is not None:
            self._report.cancel()
            self.report()


class _FoldedLog(logging.Logger):
    """uvicorn's log for one connection: the warnings a peer's bytes make it say (not HTTP, an upgrade to a protocol
    not spoken here) are counted in its listener's summary; errors go on to uvicorn's log as they are."""

    def __init__(self, slot: _Slot) -> None:
        super().__init__("uvicorn.error")
        self.parent, self._slot = logging.getLogger("uvicorn.error"), slot

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._slot.gate.note("not spoken here", self._slot.peer)


class _GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol, telling its slot when it waits for a request head and when it is at work."""

    def __init__(self, slot: _Slot, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._slot = slot
        self.logger = _FoldedLog(slot)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._slot.close = transport.abort  # the head's deadline runs on from the accept (a TLS handshake included)

    def connection_lost(self, exc: Exception | None) -> None:
        self._slot.release()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._slot.idle:  # the first byte after an answer: the next head has header_timeout from now
            self._slot.wait(self._slot.gate.limits.header_timeout)
        self._slot.begun = True  # until the head is complete (work) or answered (wait)
        super().data_received(data)

    def handle_websocket_upgrade(self) -> None:
        self._slot.release()  # the WebSocket protocol takes the connection (and the API refuses it at once)
        super().handle_websocket_upgrade()

    def on_message_complete(self) -> None:
        """The whole request is in (its body too: the head's deadline covers it, or a body held back for ever would
        hold the connection): it is at work now, unless it was answered already (refused before its body came)."""
        super().on_message_complete()
        if not self._slot.idle:
            self._slot.work()

    def on_response_complete(self) -> None:
        queued = bool(self.pipeline)
        super().on_response_complete()
        if not queued and not self.transport.is_closing():
            self._slot.wait(self._slot.gate.limits.keep_alive, idle=True)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._slot.stalled(True)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._slot.stalled(False)


class EmbeddedServer(uvicorn.Server):
    """uvicorn on the daemon's loop, accepting its connections itself (see the module's docstring)."""

    def __init__(self, config: uvicorn.Config, limits: Limits, name: str) -> None:
        super().__init__(config)
        self.limits = limits.within(_open_files())
        self._gate = _Gate(self.limits, name)
        self._accepting: asyncio.Task[None] | None = None
        self._handshakes: set[asyncio.Task[None]] = set()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield  # the daemon owns SIGINT and SIGTERM

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # uvicorn makes no server of its own: the accept loop below is it
        assert sockets, "the daemon passes its listening socket"
        listening = sockets[0]
        listening.setblocking(False)
        listening.listen(self.config.backlog)
        self._accepting = asyncio.create_task(self._accept(listening), name=f"accept {listening.getsockname()}")

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._accepting is not None:
            self._accepting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._accepting
        for handshake in list(self._handshakes):
            handshake.cancel()
        self._gate.close()
        await super().shutdown(sockets=sockets)

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        while True:
            for _ in range(ACCEPTS_PER_TURN):
                try:
                    conn, address = await loop.sock_accept(listening)
                except OSError as error:
                    if error.errno in OUT_OF_FILES:
                        self._gate.note("out of files", "?")
                        self._gate.make_room()
                    await asyncio.sleep(0.05 if error.errno in OUT_OF_FILES else 0.001)
                    continue  # a connection reset before it was accepted, …
                try:
                    self._take(conn, str(address[0]))
                except Exception:  # one connection must never end the accepting, which nothing would restart
                    log.exception("%s: a connection could not be taken", self._gate.name)
                    conn.close()
            await asyncio.sleep(0)

    def _take(self, conn: socket.socket, peer: str) -> None:
        slot = self._gate.admit(peer)
        if slot is None:
            conn.close()
            return
        config = self.config

        def protocol() -> asyncio.Protocol:
            return _GuardedProtocol(slot, config=config, server_state=self.server_state, app_state=self.lifespan.state)

        tls = {"ssl": config.ssl, "ssl_handshake_timeout": self.limits.header_timeout} if config.ssl else {}
        handshake = asyncio.create_task(self._connect(conn, protocol, slot, tls))
        self._handshakes.add(handshake)
        handshake.add_done_callback(self._handshakes.discard)
        handshake.add_done_callback(functools.partial(_cancelled, conn, slot))
        slot.close = handshake.cancel
        slot.wait(self.limits.header_timeout)

    async def _connect(
        self, conn: socket.socket, protocol: Callable[[], asyncio.Protocol], slot: _Slot, tls: dict[str, Any]
    ) -> None:
        connected = False
        try:
            await asyncio.get_running_loop().connect_accepted_socket(protocol, conn, **tls)
            connected = True
        except (OSError, ValueError):  # a failed TLS handshake (ssl.SSLError is an OSError), a reset: said by nobody
            pass
        finally:
            if not connected:  # cancelled (displaced, timed out, shut down) or failed: the socket goes too
                conn.close()
                slot.release()


def _cancelled(conn: socket.socket, slot: _Slot, handshake: "asyncio.Task[None]") -> None:
    """A handshake cancelled before it began has no `finally` of its own to close the socket."""
    if handshake.cancelled():
        conn.close()
        slot.release()


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


async def serve(
    app: Any, sock: socket.socket, limits: Limits = API_LIMITS, **tls: Any
) -> tuple[EmbeddedServer, "asyncio.Task[None]"]:
    """Start serving `app` on `sock`; returns once it accepts connections (or raises why it could not)."""
    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        timeout_graceful_shutdown=2,
        timeout_keep_alive=int(limits.keep_alive),
        **tls,
    )
    shown = sock.getsockname()
    server = EmbeddedServer(config, limits, f"{'HTTPS' if tls else 'HTTP'} on {shown[0]}:{shown[1]}")
    serving = asyncio.create_task(server.serve(sockets=[sock]), name=f"http {shown}")
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
