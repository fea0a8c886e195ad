"""What a daemon's start does not load: the keyring (read at its first use), D-Bus's library (loaded when listening
to logind begins, after the API answers) and httpx's command line client (click's rich and pygments helpers)."""

import subprocess
import sys

LATER = ("keyring", "dbus_fast", "httpx._main", "rich", "pygments")


def test_the_daemon_and_the_client_load_none_of_these_at_import() -> None:
    probe = (
        "import sys, desktop.daemon, desktop.client, httpx; "
        f"print(' '.join(m for m in {LATER!r} if sys.modules.get(m) is not None))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.split() == []
