"""The tray icon: the state at a glance (idle, running, waiting with a count, failed, paused) and its menu."""

from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.gui.summary import TraySummary
from desktop.resources import resource

STATES = ("idle", "running", "waiting", "failed", "paused")


class Tray(QSystemTrayIcon):
    def __init__(self) -> None:
        super().__init__()
        self._icons = {state: QIcon(str(resource(f"tray-{state}.svg"))) for state in STATES}
        self.menu = QMenu()
        self.quit_action = QAction("Quit Coxswain", self.menu)
        self.menu.addAction(self.quit_action)
        self.setContextMenu(self.menu)
        self.shown: TraySummary | None = None
        self.show_summary(TraySummary("idle", 0, None, []))

    def show_summary(self, summary: TraySummary) -> None:
        self.shown = summary
        self.setIcon(self._icons[summary.state])
        self.setToolTip(summary.tooltip)
