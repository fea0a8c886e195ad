"""A real daemon object in the test's own loop, with a clock the test moves, and an HTTP client speaking as its
owner."""

import contextlib
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from desktop.daemon import Daemon
from desktop.platform.paths import Home
from tests.daemon_process import kill_runners
from tests.ledger_fixture import MovableClock


@contextlib.asynccontextmanager
async def live_daemon(home: Path) -> AsyncIterator[tuple[Daemon, MovableClock, httpx.AsyncClient]]:
    clock = MovableClock(start=time.time())
    daemon = Daemon(Home(home), port=0, clock=clock)
    await daemon.start()
    owner = (home / "owner.token").read_text().strip()
    client = httpx.AsyncClient(base_url=daemon.url, headers={"Authorization": f"Bearer {owner}"}, timeout=30)
    try:
        yield daemon, clock, client
    finally:
        await client.aclose()
        await daemon.stop()
        kill_runners(home)  # commands outlive their daemon by design; a test's must not outlive the test
