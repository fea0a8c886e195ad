"""The desktop windows' look, the room's (resources/room/app.css): its accent, state colours, rounded buttons and
spacing, as a stylesheet over Fusion that follows the system's light or dark palette. Also where windows open and how
times read, so every window does both the same way."""

import re
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QDate, QLocale, Qt, QTime
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

from desktop.resources import resource

ZONE = re.compile(r"[\s,]*[(\[]?t+[)\]]?")  # a time format's zone (t … tttt), with its brackets and the comma before
CHECK = resource("check.svg").as_posix()  # a checked box's mark (a styled indicator draws none of its own)


@dataclass(frozen=True)
class Colours:
    bg: str
    fg: str
    muted: str
    line: str
    card: str
    accent: str
    ok: str
    bad: str
    warn: str


LIGHT = Colours(
    bg="#ffffff",
    fg="#1b1f24",
    muted="#59636e",
    line="#d1d9e0",
    card="#f6f8fa",
    accent="#1f6feb",
    ok="#1a7f37",
    bad="#cf222e",
    warn="#9a6700",
)
DARK = Colours(
    bg="#0d1117",
    fg="#e6edf3",
    muted="#9198a1",
    line="#30363d",
    card="#161b22",
    accent="#4493f8",
    ok="#3fb950",
    bad="#f85149",
    warn="#d29922",
)


def dark() -> bool:
    """Whether the system is dark: as its theme says, else as its palette looked before this one was set (a dark
    palette from qt6ct, Kvantum or a desktop Qt has no theme plugin for)."""
    scheme = QGuiApplication.styleHints().colorScheme()
    if scheme != Qt.ColorScheme.Unknown:
        return scheme == Qt.ColorScheme.Dark
    return _system_window_lightness < 128


_system_window_lightness = 255  # the system palette's window, read once before the room's palette replaces it


def colours() -> Colours:
    return DARK if dark() else LIGHT


def state_colour(word: str) -> str:
    """A state's colour as the room draws its pill: running blue, done green, failed red, waiting amber."""
    c = colours()
    return {
        "running": c.accent,
        "approved": c.accent,
        "done": c.ok,
        "failed": c.bad,
        "expired": c.bad,
        "pending": c.warn,
        "ended": c.muted,
    }.get(word, c.muted)


def apply(app: QApplication) -> None:
    """Fusion with the room's palette and stylesheet, light or dark as the system is (again when it changes)."""
    global _system_window_lightness
    if not app.property("coxswain_styled"):
        app.setProperty("coxswain_styled", True)
        _system_window_lightness = app.palette().color(QPalette.ColorRole.Window).lightness()
        app.styleHints().colorSchemeChanged.connect(lambda _scheme: _paint(app))
    app.setStyle("Fusion")
    _paint(app)


def _paint(app: QApplication) -> None:
    c = colours()
    palette = QPalette()
    for role, colour in (
        (QPalette.ColorRole.Window, c.bg),
        (QPalette.ColorRole.Base, c.bg),
        (QPalette.ColorRole.AlternateBase, c.card),
        (QPalette.ColorRole.Button, c.card),
        (QPalette.ColorRole.WindowText, c.fg),
        (QPalette.ColorRole.Text, c.fg),
        (QPalette.ColorRole.ButtonText, c.fg),
        (QPalette.ColorRole.ToolTipBase, c.card),
        (QPalette.ColorRole.ToolTipText, c.fg),
        (QPalette.ColorRole.PlaceholderText, c.muted),
        (QPalette.ColorRole.Highlight, c.accent),
        (QPalette.ColorRole.HighlightedText, "#ffffff"),
        (QPalette.ColorRole.Link, c.accent),
        (QPalette.ColorRole.Mid, c.line),
        (QPalette.ColorRole.Dark, c.muted),
        (QPalette.ColorRole.Shadow, c.muted),
        (QPalette.ColorRole.Light, c.card),
        (QPalette.ColorRole.Midlight, c.line),
    ):
        palette.setColor(role, QColor(colour))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.ButtonText, QColor(c.muted))
    palette.setColor(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text, QColor(c.muted))
    app.setPalette(palette)
    app.setStyleSheet(f"""
        QPushButton {{ background: {c.card}; border: 1px solid {c.line}; border-radius: 6px; padding: 5px 12px; }}
        QPushButton:hover {{ border-color: {c.accent}; }}
        QPushButton:disabled {{ color: {c.muted}; border-color: {c.line}; }}
        QPushButton[kind="primary"] {{ background: {c.accent}; border-color: {c.accent}; color: #ffffff; }}
        QPushButton[kind="danger"] {{ color: {c.bad}; }}
        QPushButton[kind="primary"]:disabled, QPushButton[kind="danger"]:disabled {{ background: {c.card};
            border-color: {c.line}; color: {c.muted}; }}
        QLineEdit, QSpinBox, QPlainTextEdit, QTextEdit {{ border: 1px solid {c.line}; border-radius: 6px;
            padding: 4px; }}
        QLineEdit:focus, QSpinBox:focus {{ border-color: {c.accent}; }}
        QTableWidget::item {{ padding: 2px 6px; }}
        QCheckBox::indicator {{ width: 14px; height: 14px; border: 1px solid {c.muted}; border-radius: 3px;
            background: {c.bg}; }}
        QCheckBox::indicator:checked {{ background: {c.accent}; border-color: {c.accent}; image: url({CHECK}); }}
        QCheckBox::indicator:disabled {{ border-color: {c.line}; background: {c.card}; }}
        QLabel[kind="muted"] {{ color: {c.muted}; }}
        QLabel[kind="error"] {{ color: {c.bad}; }}
        QLabel[kind="empty"] {{ color: {c.muted}; font-size: 15px; }}
        QTabWidget::pane {{ border: 1px solid {c.line}; border-radius: 6px; }}
        QTreeWidget, QListWidget, QTableWidget {{ border: 1px solid {c.line}; border-radius: 6px; }}
    """)


def kind(widget: QWidget, name: str) -> None:
    """Give a widget one of the stylesheet's kinds (primary, danger, muted, error, empty; "" for none)."""
    widget.setProperty("kind", name)
    widget.style().unpolish(widget)
    widget.style().polish(widget)


def centre(window: QWidget) -> None:
    """Put a window in the middle of the screen's free area (clear of panels), no bigger than it where it can be
    smaller, and its top left corner always on it."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    free = screen.availableGeometry()
    window.resize(
        max(min(window.width(), free.width()), window.minimumSizeHint().width()),
        max(min(window.height(), free.height()), window.minimumSizeHint().height()),
    )
    frame = window.frameGeometry()
    frame.moveCenter(free.center())
    window.move(max(frame.left(), free.left()), max(frame.top(), free.top()))


def when(iso: str, seconds: bool = False, now: datetime | None = None) -> str:
    """A time as people here write it (the system's locale): the time alone today, with the short date before."""
    at = datetime.fromisoformat(iso).astimezone()
    locale = QLocale.system()
    clock = locale.toString(QTime(at.hour, at.minute, at.second), _time_format(locale, seconds))
    if at.date() == (now or datetime.now().astimezone()).date():
        return clock
    return f"{locale.toString(QDate(at.year, at.month, at.day), QLocale.FormatType.ShortFormat)} {clock}"


def _time_format(locale: QLocale, seconds: bool) -> str:
    """The locale's short time format, or its long one without the time zone and what encloses or leads to it
    ("HH:mm:ss t", "H:mm:ss (tttt)", "H:mm:ss, tttt", "Aph:mm:ss [tttt]" → the time alone)."""
    if not seconds:
        return locale.timeFormat(QLocale.FormatType.ShortFormat)
    return ZONE.sub("", locale.timeFormat(QLocale.FormatType.LongFormat)).strip()
