"""The tray app: a Qt client of the daemon it hosts (tray icon, notifications and approval cards, console and
settings windows)."""

import builtins

# Python's own __import__, kept before PySide6 wraps it: see desktop.gui.app._load_daemon.
PLAIN_IMPORT = builtins.__import__
