"""The one look's rules that hold without a window: times as each locale writes them, and a dark system recognised
from its palette when no theme plugin says so."""

import re
from typing import Any

from PySide6.QtCore import QLocale


def test_times_with_seconds_read_as_each_locale_writes_them_without_a_zone(qapp: Any) -> None:
    from desktop.gui.style import _time_format

    seen = 0
    for number in range(2, 400):
        try:
            locale = QLocale(QLocale.Language(number))
        except ValueError:
            continue
        shown = _time_format(locale, seconds=True)
        seen += 1
        assert "s" in shown, (locale.name(), shown)
        assert "t" not in shown.replace("'", ""), (locale.name(), shown)  # no zone left
        assert not re.search(r"[(\[,]\s*$|\(\)|\[\]", shown), (locale.name(), shown)  # nor what enclosed it
    assert seen > 100
    assert [_time_format(QLocale(name), True) for name in ("es_ES", "cs_CZ", "C")] == ["H:mm:ss", "H:mm:ss", "HH:mm:ss"]


def test_a_dark_palette_is_followed_where_no_theme_names_the_scheme(qapp: Any, monkeypatch: Any) -> None:
    from PySide6.QtGui import QColor, QPalette

    from desktop.gui import style

    monkeypatch.setattr(style, "_system_window_lightness", 255)
    before = qapp.palette()
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Window, QColor("#2b2b2b"))
    qapp.setPalette(dark)
    qapp.setProperty("coxswain_styled", False)  # as at the app's start: the system's palette is read once
    try:
        style.apply(qapp)
        assert qapp.styleHints().colorScheme().name == "Unknown"  # offscreen: no theme says
        assert style.dark() and qapp.palette().color(QPalette.ColorRole.Window) == QColor(style.DARK.bg)
    finally:
        qapp.setPalette(before)
        qapp.setProperty("coxswain_styled", False)
        monkeypatch.setattr(style, "_system_window_lightness", 255)
        style.apply(qapp)
