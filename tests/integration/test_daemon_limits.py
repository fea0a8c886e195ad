"""A local process (or a machine on the room's network) that opens hundreds of connections and never finishes a
request cannot stop the daemon answering its owner, cannot fill its log, and its connections are closed after the
head's deadline: on the API's loopback address and on the room's HTTPS listener."""

import contextlib
import resource
import selectors
import socket
import ssl
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from desktop.api.serving import API_LIMITS
from tests.daemon_process import DaemonProcess
from tests.integration.test_room_attacks import free_port

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="lowers the daemon's file limit with prlimit(2)")
SOURCES = [f"127.0.0.{n}" for n in range(1, 7)]  # more than one peer address: the cap in all is reached too
SETTLED = API_LIMITS.header_timeout + 20  # the head's deadline, and room for a busy machine


def connect(address: str, port: int, source: str) -> socket.socket:
    sock = socket.socket()
    sock.bind((source, 0))
    sock.connect((address, port))
    return sock


def status_line(sock: socket.socket) -> bytes:
    """Read one whole answer (head and Content-Length body) from `sock`; its status line."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536) or b"closed before the head ended\r\n\r\n"
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0
    )
    while len(body) < length:
        body += sock.recv(65536) or b"?" * length
    return head.split(b"\r\n")[0]


def wait_closed(socks: list[socket.socket], within: float) -> None:
    """Until the daemon has closed every one of `socks` (read EOF or a reset), or `within` seconds."""
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + within
        while selector.get_map():
            assert time.monotonic() < deadline, f"{len(selector.get_map())} of {len(socks)} connections still open"
            for key, _ in selector.select(0.5):
                with contextlib.suppress(OSError):
                    if key.fileobj.recv(65536):  # type: ignore[union-attr]
                        continue  # an answer (a 408, say) before the close
                selector.unregister(key.fileobj)


def quickly(call: "httpx.Client", path: str, times: int = 20) -> float:
    """The slowest of `times` calls, each on a new connection (the one that must still get in)."""
    slowest = 0.0
    for _ in range(times):
        began = time.monotonic()
        call.headers["Connection"] = "close"
        answer = call.get(path)
        assert answer.status_code == 200, answer.text
        slowest = max(slowest, time.monotonic() - began)
    return slowest


def logged(daemon: DaemonProcess) -> str:
    return (daemon.home / "logs" / "daemon.log").read_text(errors="replace") + daemon.output()


@pytest.fixture
def attacked(tmp_path: Path) -> Iterator[tuple[DaemonProcess, list[socket.socket]]]:
    daemon = DaemonProcess(tmp_path / "home").start()
    socks: list[socket.socket] = []
    try:
        yield daemon, socks
    finally:
        for sock in socks:
            sock.close()
        daemon.stop()
        daemon.kill_runners()


def test_half_sent_requests_cannot_stop_the_owner_and_are_closed(
    attacked: tuple[DaemonProcess, list[socket.socket]],
) -> None:
    daemon, socks = attacked
    # 384 files: today's desktop default is 1,024 (256 on macOS); without limits 400 connections use them all
    resource.prlimit(daemon.proc.pid, resource.RLIMIT_NOFILE, (384, 384))  # type: ignore[union-attr]
    port = int(daemon.url.rsplit(":", 1)[1])
    health = f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {daemon.token}\r\n\r\n"
    pooled = connect("127.0.0.1", port, "127.0.0.1")  # the owner's kept-alive connection, idle through the attack
    socks.append(pooled)
    pooled.sendall(health.encode())
    assert status_line(pooled) == b"HTTP/1.1 200 OK"
    for n in range(400):
        sock = connect("127.0.0.1", port, SOURCES[n % len(SOURCES)])
        if n % 4:  # three in four send part of a request and stop; the others send nothing at all
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:" + str(port).encode() + b"\r\nAuthor")
        socks.append(sock)
    began = time.monotonic()
    with httpx.Client(base_url=daemon.url, timeout=10, headers={"Authorization": f"Bearer {daemon.token}"}) as owner:
        assert quickly(owner, "/api/health") < 2.0
    pooled.sendall(health.encode())  # a half-sent request displaces those of its kind, not a kept-alive connection
    assert status_line(pooled) == b"HTTP/1.1 200 OK"
    socks.remove(pooled)
    pooled.close()
    wait_closed(socks, SETTLED - (time.monotonic() - began))
    assert daemon.get("/api/health").status_code == 200
    daemon.stop()
    log = logged(daemon)
    assert "Traceback" not in log and "out of system resource" not in log
    assert f"closed for sending no complete request within {API_LIMITS.header_timeout:g} s" in log  # summed up
    assert log.count("closed while waiting, to make room") == 1


def test_an_idle_kept_alive_connection_that_starts_a_request_gets_the_heads_deadline(
    attacked: tuple[DaemonProcess, list[socket.socket]],
) -> None:
    daemon, socks = attacked
    port = int(daemon.url.rsplit(":", 1)[1])
    sock = connect("127.0.0.1", port, "127.0.0.1")
    socks.append(sock)
    sock.sendall(
        f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {daemon.token}\r\n\r\n".encode()
    )
    assert status_line(sock) == b"HTTP/1.1 200 OK"
    began = time.monotonic()
    sock.sendall(b"GET /api/health HTTP/1.1\r\n")  # kept alive, then the next request never finishes its head
    wait_closed([sock], SETTLED)
    assert time.monotonic() - began < API_LIMITS.keep_alive, "closed by the head's deadline, not the idle one"


def test_requests_whose_body_never_comes_are_closed_and_cannot_keep_the_owner_out(
    attacked: tuple[DaemonProcess, list[socket.socket]],
) -> None:
    daemon, socks = attacked
    port = int(daemon.url.rsplit(":", 1)[1])
    began = time.monotonic()
    for _ in range(API_LIMITS.total):  # every place taken by a request whose head came and whose body never will
        sock = connect("127.0.0.1", port, "127.0.0.1")
        sock.sendall(
            f"POST /room/signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: 100000\r\n\r\n{{".encode()
        )
        socks.append(sock)
    with httpx.Client(base_url=daemon.url, timeout=10, headers={"Authorization": f"Bearer {daemon.token}"}) as owner:
        assert quickly(owner, "/api/requests") < 2.0
    wait_closed(socks, SETTLED - (time.monotonic() - began))
    assert daemon.get("/api/health").status_code == 200


def test_the_rooms_https_listener_too(attacked: tuple[DaemonProcess, list[socket.socket]]) -> None:
    daemon, socks = attacked
    https_port = free_port("127.0.0.2")
    for key, value in (("room_port", str(https_port)), ("room_address", "127.0.0.2")):
        assert daemon.post("/api/settings", {"key": key, "value": value}).status_code == 200
    deadline = time.monotonic() + 10
    while daemon.get("/api/room").json()["url"] is None:
        assert time.monotonic() < deadline, daemon.get("/api/room").json()
        time.sleep(0.05)
    sarah = daemon.add_person("sarah")
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    for n in range(200):
        sock = connect("127.0.0.2", https_port, SOURCES[n % len(SOURCES)])
        if n % 2:  # half finish the TLS handshake and send part of a request; the others never say hello
            sock = context.wrap_socket(sock)
            sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.2\r\n")
        socks.append(sock)
    began = time.monotonic()
    with httpx.Client(
        base_url=f"https://127.0.0.2:{https_port}",
        verify=False,
        timeout=10,
        headers={"Authorization": f"Bearer {sarah}"},
    ) as teammate:
        assert quickly(teammate, "/api/health") < 2.0
    wait_closed(socks, SETTLED - (time.monotonic() - began))
    daemon.stop()
    log = logged(daemon)
    assert "Traceback" not in log
    assert "HTTPS on 127.0.0.2" in log and "closed for sending no complete request" in log


def test_what_is_not_http_is_summed_up_not_logged_line_by_line(
    attacked: tuple[DaemonProcess, list[socket.socket]],
) -> None:
    daemon, _ = attacked
    port = int(daemon.url.rsplit(":", 1)[1])
    for n in range(300):
        with connect("127.0.0.1", port, SOURCES[n % len(SOURCES)]) as sock:
            sock.sendall(
                b"\x16\x03\x01 not HTTP\r\n\r\n"
                if n % 2
                else f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n".encode()
            )
            assert status_line(sock).startswith(b"HTTP/1.1 400")
    assert daemon.get("/api/health").status_code == 200
    daemon.stop()
    log = logged(daemon)
    assert len(log.splitlines()) < 10, log[-2000:]
    assert "300 answered 400 or closed: not an HTTP/1.1 request" in log
