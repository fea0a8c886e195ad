"""`cox daemon` (in the foreground, no tray) and `cox autostart` (the tray app at login)."""

import argparse
import sys

from desktop.cli.common import Commands, command
from desktop.platform.paths import Home


def add(sub: Commands) -> None:
    p = command(sub, "autostart", _autostart, "start the tray app at login (on | off | status)")
    p.add_argument("switch", choices=["on", "off", "status"], nargs="?", default="status")

    p = command(sub, "daemon", _daemon, "run the daemon in the foreground (no tray)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=None, help="port (default 7431; 0 picks a free one)")


def _daemon(home: Home, args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from desktop.daemon import run
    from desktop.platform.instance import AlreadyRunning
    from desktop.platform.paths import DEFAULT_PORT

    home.root.mkdir(parents=True, exist_ok=True, mode=0o700)
    home.log.parent.mkdir(exist_ok=True)
    logging.basicConfig(filename=home.log, level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("apscheduler").setLevel(logging.WARNING)
    try:
        asyncio.run(run(home, args.host, DEFAULT_PORT if args.port is None else args.port))
    except AlreadyRunning as error:
        print(f"cox: {error}", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"cox: cannot listen on {args.host}:{args.port}: {error.strerror}", file=sys.stderr)
        return 1
    return 0


def _autostart(home: Home, args: argparse.Namespace) -> int:
    from desktop.platform import autostart

    if args.switch == "on":
        print(f"Coxswain starts at login ({autostart.enable()})")
    elif args.switch == "off":
        autostart.disable()
        print("Coxswain no longer starts at login")
    else:
        print("Coxswain starts at login" if autostart.enabled() else "Coxswain does not start at login")
    return 0
