"""Start at login: an XDG autostart entry on Linux, the HKCU Run key on Windows, a LaunchAgent on macOS — whichever
the platform has. What starts is the tray app, from source (this Python) or the frozen bundle."""

import os
import plistlib
import shlex
import sys
from pathlib import Path

NAME = "Coxswain"
LABEL = "dev.coxswain.tray"
RUN_KEY = r"Software\Microsoft\Windows\CurrentVersion\Run"


def command() -> list[str]:
    """How to start the tray app as it runs now: the bundle's own program, or this Python with the module."""
    if getattr(sys, "frozen", False):
        return [sys.executable]
    return [sys.executable, "-m", "desktop.gui.app"]


def _xdg_entry() -> Path:
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config / "autostart" / "coxswain.desktop"


def _launch_agent() -> Path:
    return Path.home() / "Library" / "LaunchAgents" / f"{LABEL}.plist"


def enabled() -> bool:
    if sys.platform == "win32":
        return _run_key_value() is not None
    return (_launch_agent() if sys.platform == "darwin" else _xdg_entry()).exists()


def enable() -> Path | str:
    """Start the tray app at login from now on; returns where that is written down."""
    argv = command()
    if sys.platform == "win32":
        import winreg

        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
            winreg.SetValueEx(key, NAME, 0, winreg.REG_SZ, " ".join(f'"{part}"' for part in argv))
        return f"HKCU\\{RUN_KEY}\\{NAME}"
    if sys.platform == "darwin":
        path = _launch_agent()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(plistlib.dumps({"Label": LABEL, "ProgramArguments": argv, "RunAtLoad": True}))
        return path
    path = _xdg_entry()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "[Desktop Entry]\nType=Application\nName=Coxswain\n"
        "Comment=Your team's coding agents, on your laptop\n"
        f"Exec={shlex.join(argv)}\nIcon=coxswain\nTerminal=false\nX-GNOME-Autostart-enabled=true\n"
    )
    return path


def disable() -> None:
    if sys.platform == "win32":
        import winreg

        if _run_key_value() is not None:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY, 0, winreg.KEY_SET_VALUE) as key:
                winreg.DeleteValue(key, NAME)
        return
    (_launch_agent() if sys.platform == "darwin" else _xdg_entry()).unlink(missing_ok=True)


def _run_key_value() -> str | None:
    if sys.platform != "win32":
        return None
    import winreg

    try:
        with winreg.OpenKey(winreg.HKEY_CURRENT_USER, RUN_KEY) as key:
            value, _ = winreg.QueryValueEx(key, NAME)
            return str(value)
    except OSError:
        return None
