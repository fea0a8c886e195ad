"""The owner's API while a local process holds half-sent requests open: `python -m bench.health`.

Starts a real daemon (temporary home), measures the owner's /api/health at rest (the baseline), then again while
another thread of this process holds 1,000 connections to the same address from the same 127.0.0.1, each with a
partial request line sent and never finished; then while it opens a new one for each one the daemon closes (a
flood that keeps trying to hold 1,000). Each measured on a kept-alive connection, and on a new connection for every
call (the one that has to get in past the attacker's). Prints each beside the baseline, and the ratio."""

import argparse
import contextlib
import resource
import selectors
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

from bench.ledger import pct
from tests.daemon_process import DaemonProcess


class Attacker(threading.Thread):
    """Tries to hold `count` connections, each with a partial request line sent; reopens each one the daemon closes."""

    def __init__(self, port: int, count: int, reopen: bool) -> None:
        super().__init__(daemon=True)
        self.port, self.count, self.reopen = port, count, reopen
        self.stop, self.held = threading.Event(), threading.Event()
        self.opened = self.closed_by_daemon = 0

    def _open(self, selector: selectors.BaseSelector) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port))
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHo")
        selector.register(sock, selectors.EVENT_READ)
        self.opened += 1

    def run(self) -> None:
        with selectors.DefaultSelector() as selector:
            for _ in range(self.count):
                self._open(selector)
            self.held.set()
            while not self.stop.is_set():
                for key, _ in selector.select(0.05):
                    sock: socket.socket = key.fileobj  # type: ignore[assignment]
                    with contextlib.suppress(OSError):
                        if sock.recv(65536):
                            continue
                    selector.unregister(sock)
                    sock.close()
                    self.closed_by_daemon += 1
                    if self.reopen:
                        with contextlib.suppress(OSError):
                            self._open(selector)
            for key in list(selector.get_map().values()):
                key.fileobj.close()  # type: ignore[union-attr]


def measure(daemon: DaemonProcess, calls: int, fresh: bool) -> tuple[list[float], int]:
    """Milliseconds per owner's /api/health, on one kept-alive connection or a new one for each call; and how many
    calls failed (a connection closed under the call)."""
    headers = {"Authorization": f"Bearer {daemon.token}"} | ({"Connection": "close"} if fresh else {})
    times, failed = [], 0
    with httpx.Client(base_url=daemon.url, timeout=30, headers=headers) as owner:
        owner.get("/api/health")
        for _ in range(calls):
            began = time.perf_counter()
            try:
                assert owner.get("/api/health").status_code == 200
            except httpx.TransportError:
                failed += 1
                continue
            times.append((time.perf_counter() - began) * 1000)
    return times, failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, args.connections + 512)), hard))
    with tempfile.TemporaryDirectory() as tmp:
        daemon = DaemonProcess(Path(tmp) / "home").start()
        try:
            rest = {fresh: measure(daemon, args.calls, fresh) for fresh in (False, True)}
            attacked, attackers = {}, {}
            for reopen in (False, True):
                attacker = attackers[reopen] = Attacker(int(daemon.url.rsplit(":", 1)[1]), args.connections, reopen)
                attacker.start()
                attacker.held.wait(60)
                attacked[reopen] = {fresh: measure(daemon, args.calls, fresh) for fresh in (False, True)}
                attacker.stop.set()
                attacker.join(10)
        finally:
            daemon.stop()
        log = (daemon.home / "logs" / "daemon.log").read_text(errors="replace")
    print(
        f"owner's /api/health while a local process holds {args.connections:,} half-sent requests "
        f"({args.calls} calls each way)"
    )
    print(f"  {'':<46}{'at rest':>20}{'attacked':>20}{'ratio':>16}")
    print(f"  {'':<46}{'p50':>10}{'p99':>10}{'p50':>10}{'p99':>10}{'p50':>8}{'p99':>8}  failed calls")
    for reopen, attack in ((False, "held"), (True, "reopened as closed")):
        for fresh, name in ((False, "kept-alive connection"), (True, "new connection per call")):
            (a, _), (b, failed) = rest[fresh], attacked[reopen][fresh]
            print(
                f"  {attack + ', ' + name:<46}{pct(a, 50):>7.2f} ms{pct(a, 99):>7.2f} ms{pct(b, 50):>7.2f} ms"
                f"{pct(b, 99):>7.2f} ms{pct(b, 50) / pct(a, 50):>7.1f}×{pct(b, 99) / pct(a, 99):>7.1f}×  {failed}"
            )
        print(
            f"  {attack}: the attacker opened {attackers[reopen].opened:,} connections; the daemon closed "
            f"{attackers[reopen].closed_by_daemon:,}"
        )
    print(f"  tracebacks in the daemon's log: {log.count('Traceback')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
