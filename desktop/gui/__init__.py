"""The tray app: a Qt client of the daemon it hosts (issue 5; for now the tray icon and the smoke test)."""
