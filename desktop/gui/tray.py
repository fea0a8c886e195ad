"""The tray icon: what the agents do at a glance (desktop/gui/tray_icon.py draws it), a tooltip with the status, the
progress and how long each thing has run, a left click for the console, and a menu that starts with the status line
("2 waiting · 1 running · 2 tasks"), then the requests waiting for approval (Approve, Deny, Review… for the card),
the running ones (Open in console, Cancel) and the running background tasks (Open in console, Stop), then Open
console, Pause/Resume all agents, the room's address (opens its QR code), Settings and Quit. The menu stays under
MENU_WIDTH: each entry's prompt is shortened to fit.
It only shows and asks: what a click means is the app's callback (`act`), which goes to the daemon's API."""

import sys
from collections.abc import Callable
from datetime import UTC, datetime

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFontMetrics, QIcon
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.core.visible import markup, menu_label, visible
from desktop.gui.summary import Entry, TraySummary
from desktop.gui.tray_icon import Pictures
from desktop.platform.trayhost import menu_over_dbus

# (verb, id): approve, deny, review, cancel, open (a request); open_task, stop_task (a task); ("pause" | "resume", "")
Act = Callable[[str, str], None]
MENU_WIDTH = 400  # px: a menu wider than this reads as a window, and long prompts made it cross the screen
SHOWN = {"pending": 10, "running": 5, "task": 5}  # entries per group; the rest are counted, and in the console
RETIP_MS = 30_000  # how often the tooltip's "running 4 min" moves on while something runs


class Tray(QSystemTrayIcon):
    balloon_clicked = Signal()  # a click on the tray's balloon (not on the icon while the balloon shows)

    def __init__(self, act: Act, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        super().__init__()
        self.dbusmenu = menu_over_dbus()  # as Qt decided when it made the icon: the shell draws the menu
        self._act, self._now = act, now
        self.pictures = Pictures()
        self.menu = QMenu()
        self.status_action = QAction("Starting…")  # what the icon says, in words; not a command
        self.status_action.setEnabled(False)
        self.quit_action = QAction("Quit Coxswain")
        self.console_action = QAction("Open console")
        self.settings_action = QAction("Settings…")
        self.room_action = QAction("Room: starting…")  # the room's address; opens Settings → Room (QR code)
        self.setContextMenu(self.menu)
        self.activated.connect(self._clicked)
        self.messageClicked.connect(self._message_clicked)
        self._balloon_click = False  # said by Qt, not yet known to be the icon's click
        self.shown: TraySummary | None = None
        self.balloons: list[tuple[str, str]] = []  # what was said in the tray's balloon, newest last (the last 20)
        self._menu_stale = False  # a menu that is open is not rebuilt under the pointer; it is once it closes
        self.menu.aboutToHide.connect(self._menu_closed)
        self._ticker = QTimer(self)
        self._ticker.setInterval(RETIP_MS)
        self._ticker.timeout.connect(self._retip)
        self._rooms = ("", 0, 0)  # (the menu's font, _room() in it)
        self._icon: QIcon | None = None
        self.show_summary(TraySummary("starting", 0, None, []))

    def show_summary(self, summary: TraySummary) -> None:
        self.shown = summary
        if (icon := self.pictures.icon(summary.activity, summary.progress, summary.waiting)) is not self._icon:
            self._icon = icon  # the same picture is not sent to the tray again
            self.setIcon(icon)
        self._retip()
        if any(e.started is not None and e.state != "pending" for e in summary.entries):
            if not self._ticker.isActive():
                self._ticker.start()
        else:
            self._ticker.stop()
        self._menu_stale = self.menu.isVisible()
        if not self._menu_stale:
            self._fill_menu(summary)

    def _retip(self) -> None:
        if self.shown is not None and (tip := self.shown.tooltip_at(self._now())) != self.toolTip():
            self.setToolTip(tip)

    def _clicked(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        """A left click opens the console (the right one, the menu); on macOS a click opens the menu, as there."""
        self._balloon_click = False
        if reason == QSystemTrayIcon.ActivationReason.Trigger and sys.platform != "darwin":
            self.console_action.trigger()

    def _message_clicked(self) -> None:
        """Qt's own balloon (X11 without a notification server) says it was clicked for any press on the icon while it
        shows, just before the icon's click: then the click was the icon's (a right click opened the console)."""
        self._balloon_click = True
        QTimer.singleShot(0, self._balloon_clicked)

    def _balloon_clicked(self) -> None:
        if self._balloon_click:
            self._balloon_click = False
            self.balloon_clicked.emit()

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
        self.showMessage(
            visible(title),
            markup(message) if self.dbusmenu else visible(message),
            self.pictures.glyph("waiting"),
            15000,
        )

    def _fill_menu(self, summary: TraySummary) -> None:
        """The menu, each label shortened to what fits in MENU_WIDTH."""
        self.menu.clear()
        status = summary.status
        self.status_action.setText(self._fit(status[:1].upper() + status[1:], submenu=False))
        self.menu.addAction(self.status_action)
        waiting = [e for e in summary.entries if e.state == "pending"]
        denying = [e for e in summary.entries if e.state == "denying"]
        running = [e for e in summary.entries if e.kind == "request" and e.state == "running"]
        tasks = [e for e in summary.entries if e.kind == "task"]
        for title, entries, shown in (
            (f"Waiting for you ({len(waiting)})", waiting, SHOWN["pending"]),
            ("Denied: Undo for a few seconds", denying, SHOWN["pending"]),
            ("Running", running, SHOWN["running"]),
            ("Background tasks", tasks, SHOWN["task"]),
        ):
            if entries:
                self.menu.addSection(title)
            for entry in entries[:shown]:
                self._entry(entry)
            if len(entries) > shown:
                more = self.menu.addAction(f"{len(entries) - shown} more in the console…")
                more.triggered.connect(self.console_action.trigger)
        self.menu.addSeparator()
        self.menu.addAction(self.console_action)
        if summary.paused:
            self._action(self.menu, "Resume all agents", "resume", "")
        else:
            self._action(self.menu, "Pause all agents", "pause", "")
        self.menu.addAction(self.room_action)
        self.menu.addAction(self.settings_action)
        self.menu.addAction(self.quit_action)

    def _room(self) -> tuple[int, int]:
        """How wide a label may be (px) for the menu to stay within MENU_WIDTH in this style and font: a plain
        item's, and one with a submenu (its arrow takes room)."""
        font = self.menu.font().toString()
        if self._rooms[0] != font:
            rooms, text = [], "M" * 40  # wider than a menu's least width
            for submenu in (False, True):
                probe = QMenu()
                probe.setFont(self.menu.font())
                if submenu:
                    probe.addMenu(text)
                else:
                    probe.addAction(text)
                margins = probe.sizeHint().width() - QFontMetrics(probe.font()).horizontalAdvance(text)
                rooms.append(MENU_WIDTH - margins - 4)  # (the menu rounds some widths up)
            self._rooms = (font, rooms[0], rooms[1])
        return self._rooms[1], self._rooms[2]

    def _entry(self, entry: Entry) -> None:
        item = self.menu.addMenu(self._fit(entry.label(), submenu=True, entry=entry))
        if entry.state == "pending":
            self._action(item, "Approve", "approve", entry.item_id)
            self._action(item, "Review…", "review", entry.item_id)  # the approval card: all of it, then decide
            item.addSeparator()  # Deny apart, last (and it waits a few seconds for Undo)
            self._action(item, "Deny", "deny", entry.item_id)
        elif entry.state == "denying":
            self._action(item, "Undo deny", "undo", entry.item_id)
        elif entry.kind == "request":
            self._action(item, "Open in console", "open", entry.item_id)
            self._action(item, "Cancel", "cancel", entry.item_id)
        else:
            self._action(item, "Open in console", "open_task", entry.item_id)
            if entry.state == "stopping":
                item.addAction("Stopping…").setEnabled(False)
            else:
                self._action(item, "Stop", "stop_task", entry.item_id)

    def _fit(self, text: str, submenu: bool, entry: Entry | None = None) -> str:
        """The menu's label for `text`, no wider than the menu's room allows in its font: an entry's prompt is
        shortened (it says so with '…'); a label still too wide (its names alone) is cut at its end. A status line
        short enough to fit is not measured (measuring loads the fonts: 3 MB more for an idle app)."""
        font = self.menu.font()
        em = font.pixelSize() if font.pixelSize() > 0 else font.pointSizeF() * self.menu.logicalDpiY() / 72
        if entry is None and len(text) * 1.5 * em <= MENU_WIDTH - 120:  # our own words: none wider than 1.5 em
            return menu_label(text, self.dbusmenu)
        metrics, width = QFontMetrics(font), self._room()[submenu]
        if entry is not None:
            for characters in range(50, 3, -1):
                if metrics.horizontalAdvance(text := entry.label(characters)) <= width:
                    break
        if metrics.horizontalAdvance(text) > width:
            text = metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)
        return menu_label(text, self.dbusmenu)

    def _action(self, menu: QMenu, text: str, verb: str, item_id: str) -> None:
        action = menu.addAction(text)
        action.triggered.connect(lambda: self._act(verb, item_id))
