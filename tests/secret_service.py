"""A private D-Bus session bus with an unlocked GNOME Keyring on it: the real Secret Service backend, for tests and
benchmarks that must not touch this machine's keyring."""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def private_secret_service() -> Iterator[dict[str, str]]:
    """Yields the environment variables that point a process at it."""
    # a short folder: the keyring's control socket path must fit in a UNIX socket address (108 bytes)
    home = Path(tempfile.mkdtemp(prefix="kr"))
    bus = subprocess.run(
        ["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    address, bus_pid = bus[0], int(bus[1])
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": address, "HOME": str(home)}
    keyring_daemon = subprocess.Popen(
        ["gnome-keyring-daemon", "--foreground", "--unlock", "--components=secrets"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert keyring_daemon.stdin is not None
    keyring_daemon.stdin.write(b"test-keyring-password")
    keyring_daemon.stdin.close()
    try:
        deadline = time.monotonic() + 20

        def serving() -> bool:  # the keyring file is written, and the Secret Service is on the bus (not always both)
            owned = subprocess.run(
                [
                    "dbus-send",
                    "--session",
                    "--print-reply",
                    "--dest=org.freedesktop.DBus",
                    "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner",
                    "string:org.freedesktop.secrets",
                ],
                env=env,
                capture_output=True,
                text=True,
            )
            return (home / ".local" / "share" / "keyrings" / "login.keyring").exists() and "true" in owned.stdout

        while not serving():
            if keyring_daemon.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"GNOME Keyring did not start: {keyring_daemon.stderr.read()!r}")  # type: ignore[union-attr]
            time.sleep(0.05)
        yield {"DBUS_SESSION_BUS_ADDRESS": address}
    finally:
        keyring_daemon.terminate()
        keyring_daemon.wait(10)
        with contextlib.suppress(ProcessLookupError):
            os.kill(bus_pid, signal.SIGTERM)
        shutil.rmtree(home, ignore_errors=True)
