"""The tray icon: the state at a glance (idle, running, waiting with a count, failed, paused), and a menu with the
requests waiting for approval (Approve, Deny, and Review… for the card), the running ones (Open in console, Cancel),
Open console, Pause/Resume all agents, the room's address (opens its QR code), Settings and Quit.
It only shows and asks: what a click means is the app's callback (`act`), which goes to the daemon's API."""

from collections.abc import Callable

from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPen, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.core.visible import markup, menu_label, visible
from desktop.gui.summary import TraySummary
from desktop.platform.trayhost import menu_over_dbus
from desktop.resources import resource

STATES = ("idle", "running", "waiting", "failed", "paused")
ICON_SIZE = 64
BADGE = "#dc2626"
Act = Callable[[str, str], None]  # (verb, request id): approve, deny, review, cancel, open; ("pause" | "resume", "")


class Tray(QSystemTrayIcon):
    def __init__(self, act: Act) -> None:
        super().__init__()
        self.dbusmenu = menu_over_dbus()  # as Qt decided when it made the icon: the shell draws the menu
        self._act = act
        self._icons = {state: QIcon(str(resource(f"tray-{state}.svg"))) for state in STATES}
        self.menu = QMenu()
        self.quit_action = QAction("Quit Coxswain")
        self.console_action = QAction("Open console")
        self.settings_action = QAction("Settings…")
        self.room_action = QAction("Room: starting…")  # the room's address; opens Settings → Room (QR code)
        self.setContextMenu(self.menu)
        self.shown: TraySummary | None = None
        self.balloons: list[tuple[str, str]] = []  # what was said in the tray's balloon, newest last (the last 20)
        self._menu_stale = False  # a menu that is open is not rebuilt under the pointer; it is once it closes
        self.menu.aboutToHide.connect(self._menu_closed)
        self.show_summary(TraySummary("starting", 0, None, []))

    def show_summary(self, summary: TraySummary) -> None:
        self.shown = summary
        self.setIcon(self._icon(summary))
        self.setToolTip(summary.tooltip)
        self._menu_stale = self.menu.isVisible()
        if not self._menu_stale:
            self._fill_menu(summary)

    def _menu_closed(self) -> None:
        if self._menu_stale and self.shown is not None:  # after the click it was closed for has been handled
            self._menu_stale = False
            shown = self.shown
            QTimer.singleShot(0, lambda: self._fill_menu(shown))

    def balloon(self, title: str, message: str) -> None:
        """The tray's own message: the last resort for a notice, and where a failed click says why."""
        self.balloons = [*self.balloons[-19:], (title, message)]
        # exported over D-Bus, Qt hands it to the notification server as it is, and that reads the body as markup;
        # Qt's own balloon (a label set to plain text) and the native ones on Windows and macOS show plain text
        self.showMessage(visible(title), markup(message) if self.dbusmenu else visible(message),
                         self._icons["waiting"], 15000)

    def _icon(self, summary: TraySummary) -> QIcon:
        """The state's picture; waiting ones carry their count, and while running with known progress, a ring around
        it fills up."""
        if summary.state == "waiting":
            return self._badged(summary.waiting)
        if summary.state != "running" or summary.progress is None:
            return self._icons.get(summary.state, self._icons["idle"])
        picture, painter = self._painting("running")
        painter.setPen(QPen(QColor("#22c55e"), ICON_SIZE / 10, Qt.PenStyle.SolidLine, Qt.PenCapStyle.FlatCap))
        inset = ICON_SIZE / 20
        painter.drawArc(QRectF(inset, inset, ICON_SIZE - 2 * inset, ICON_SIZE - 2 * inset), 90 * 16,
                        -round(360 * 16 * min(max(summary.progress, 0.0), 100.0) / 100))
        painter.end()
        return QIcon(picture)

    def _painting(self, state: str) -> tuple[QPixmap, QPainter]:
        """A copy of the state's picture, and a painter on it (end it before using the picture)."""
        picture = QPixmap(self._icons[state].pixmap(ICON_SIZE, ICON_SIZE))
        painter = QPainter(picture)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        return picture, painter

    def _badged(self, count: int) -> QIcon:
        """The waiting picture with a red badge that holds how many wait."""
        picture, painter = self._painting("waiting")
        badge = QRectF(ICON_SIZE * 0.44, ICON_SIZE * 0.44, ICON_SIZE * 0.56, ICON_SIZE * 0.56)
        painter.setPen(QPen(QColor("#ffffff"), ICON_SIZE / 32))
        painter.setBrush(QColor(BADGE))
        painter.drawEllipse(badge)
        font = QFont()
        font.setBold(True)
        font.setPixelSize(round(ICON_SIZE * 0.34))
        painter.setFont(font)
        painter.drawText(badge, Qt.AlignmentFlag.AlignCenter, str(count) if count < 10 else "9+")
        painter.end()
        return QIcon(picture)

    def _fill_menu(self, summary: TraySummary) -> None:
        self.menu.clear()
        waiting = [e for e in summary.entries if e.state == "pending"]
        running = [e for e in summary.entries if e.state == "running"]
        if waiting:
            self.menu.addSection(f"Waiting for you ({len(waiting)})")
        for entry in waiting:
            item = self.menu.addMenu(menu_label(f"{entry.line}: {entry.prompt}", self.dbusmenu))
            self._action(item, "Approve", "approve", entry.request_id)
            self._action(item, "Deny", "deny", entry.request_id)
            self._action(item, "Review…", "review", entry.request_id)  # the approval card: all of it, then decide
        if running:
            self.menu.addSection("Running")
        for entry in running:
            item = self.menu.addMenu(menu_label(f"{entry.line}: {entry.prompt}", self.dbusmenu))
            self._action(item, "Open in console", "open", entry.request_id)
            self._action(item, "Cancel", "cancel", entry.request_id)
        self.menu.addSeparator()
        self.menu.addAction(self.console_action)
        if summary.paused:
            self._action(self.menu, "Resume all agents", "resume", "")
        else:
            self._action(self.menu, "Pause all agents", "pause", "")
        self.menu.addAction(self.room_action)
        self.menu.addAction(self.settings_action)
        self.menu.addAction(self.quit_action)

    def _action(self, menu: QMenu, text: str, verb: str, request_id: str) -> None:
        action = menu.addAction(text)
        action.triggered.connect(lambda: self._act(verb, request_id))
