"""The tray icon: the state at a glance (idle, running, waiting with a count, failed, paused), and a menu with the
requests waiting for approval (Approve, Deny), the running ones (Cancel), Pause/Resume all agents, and Quit.
It only shows and asks: what a click means is the app's callback (`act`), which goes to the daemon's API."""

from collections.abc import Callable

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.gui.summary import TraySummary
from desktop.resources import resource

STATES = ("idle", "running", "waiting", "failed", "paused")
Act = Callable[[str, str], None]  # (verb, request id): approve, deny, cancel; ("pause" | "resume", "")


class Tray(QSystemTrayIcon):
    def __init__(self, act: Act) -> None:
        super().__init__()
        self._act = act
        self._icons = {state: QIcon(str(resource(f"tray-{state}.svg"))) for state in STATES}
        self.menu = QMenu()
        self.quit_action = QAction("Quit Coxswain")
        self.setContextMenu(self.menu)
        self.shown: TraySummary | None = None
        self.show_summary(TraySummary("idle", 0, None, []))

    def show_summary(self, summary: TraySummary) -> None:
        self.shown = summary
        self.setIcon(self._icons[summary.state])
        self.setToolTip(summary.tooltip)
        self._fill_menu(summary)

    def _fill_menu(self, summary: TraySummary) -> None:
        self.menu.clear()
        waiting = [e for e in summary.entries if e.state == "pending"]
        running = [e for e in summary.entries if e.state == "running"]
        if waiting:
            self.menu.addSection(f"Waiting for you ({len(waiting)})")
        for entry in waiting:
            item = self.menu.addMenu(f"{entry.line}: {entry.prompt}")
            self._action(item, "Approve", "approve", entry.request_id)
            self._action(item, "Deny", "deny", entry.request_id)
        if running:
            self.menu.addSection("Running")
        for entry in running:
            item = self.menu.addMenu(f"{entry.line}: {entry.prompt}")
            self._action(item, "Cancel", "cancel", entry.request_id)
        self.menu.addSeparator()
        if summary.paused:
            self._action(self.menu, "Resume all agents", "resume", "")
        else:
            self._action(self.menu, "Pause all agents", "pause", "")
        self.menu.addAction(self.quit_action)

    def _action(self, menu: QMenu, text: str, verb: str, request_id: str) -> None:
        action = menu.addAction(text)
        action.triggered.connect(lambda: self._act(verb, request_id))
