"""What a daemon's start does not load: the keyring (read at its first use), D-Bus's library (loaded when listening
to logind begins, after the API answers) and httpx's command line client (click's rich and pygments helpers)."""

import os
import subprocess
import sys
from pathlib import Path

LATER = ("keyring", "dbus_fast", "httpx._main", "rich", "pygments")


def test_the_daemon_and_the_client_load_none_of_these_at_import() -> None:
    probe = (
        "import sys, desktop.daemon, desktop.client, httpx; "
        f"print(' '.join(m for m in {LATER!r} if sys.modules.get(m) is not None))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.split() == []


STARTED = """
import asyncio, gc, sys
import desktop.cli
desktop.cli._parser()  # what `cox daemon` builds before it starts
from desktop.daemon import Daemon
from desktop.platform.paths import Home

async def main() -> None:
    daemon = Daemon(Home.resolve(sys.argv[1]), port=0)
    await daemon.start()
    print(" ".join(m for m in ("httpx", "desktop.client.transport") if m in sys.modules))
    print(len(gc.get_objects()))
    await daemon.stop()

asyncio.run(main())
"""


def test_a_started_daemon_has_no_http_client_and_its_start_is_set_aside_from_collections(tmp_path: Path) -> None:
    """`cox daemon` loads no HTTP client; and what its start made is not walked
    again by every full collection (73,000 objects before, a 19 ms pause of the loop each time)."""
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}
    out = subprocess.run(
        [sys.executable, "-c", STARTED, str(tmp_path / "home")], capture_output=True, text=True, timeout=120, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    loaded, walked = out.stdout.splitlines()[-2:]
    assert loaded.split() == []
    assert int(walked) < 10_000
