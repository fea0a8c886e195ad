"""The console itself: the pipeline's lines drawn with their colours (inverse video included) in a read-only text
view that follows new output while the person is at the end, and stays where they are when they scrolled up."""

import re
from collections.abc import Iterable

from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit

from desktop.console.sgr import Style, runs

BACKGROUND, FOREGROUND = "#1e1e1e", "#d4d4d4"
MAX_LINES = 50_000  # ~5 MB of output; the oldest lines go first


class ConsoleView(QPlainTextEdit):
    def __init__(self) -> None:
        super().__init__()
        self.setReadOnly(True)
        self.setUndoRedoEnabled(False)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setMaximumBlockCount(MAX_LINES)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        font.setStyleHint(QFont.StyleHint.Monospace)
        self.setFont(font)
        self.setStyleSheet(f"QPlainTextEdit {{ background: {BACKGROUND}; color: {FOREGROUND}; }}")
        self._formats: dict[Style, QTextCharFormat] = {}
        self.lines_shown = 0
        # Following is what the person chose, not where the bar happens to be: a view that shrinks (the timeline
        # shown above it, the window laid out) or a document that grows moves the end away from the bar, and the
        # view follows it there; only scrolling (by the person, or to a line) away from the end stops following.
        self.following = True
        bar = self.verticalScrollBar()
        bar.rangeChanged.connect(self._range_changed)
        bar.valueChanged.connect(self._value_changed)

    @property
    def at_end(self) -> bool:
        bar = self.verticalScrollBar()
        return bar.value() >= bar.maximum() - 2

    def show_lines(self, lines: Iterable[str]) -> None:
        """Show these lines alone, at their end, following what comes after them."""
        self.clear()
        self.lines_shown = 0
        self.following = True
        self.append_lines(lines)
        self.scroll_to_end()

    def append_lines(self, lines: Iterable[str]) -> bool:
        """Add lines at the end; the view follows them unless the person scrolled away. True when lines had to go."""
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        cursor.beginEditBlock()
        for line in lines:
            if self.lines_shown:
                cursor.insertBlock()
            self._insert(cursor, line)
            self.lines_shown += 1
        cursor.endEditBlock()
        if self.following:
            self.scroll_to_end()
        return self.lines_shown > self.document().blockCount()

    def prepend_lines(self, lines: list[str]) -> None:
        """Add earlier lines at the top, keeping what the person looks at in place."""
        if not lines:
            return
        bar = self.verticalScrollBar()
        distance_from_end = bar.maximum() - bar.value()
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.Start)
        cursor.beginEditBlock()
        for line in lines:
            self._insert(cursor, line)
            cursor.insertBlock()
        cursor.endEditBlock()
        self.lines_shown += len(lines)
        bar.setValue(bar.maximum() - distance_from_end)

    def scroll_to_end(self) -> None:
        self.following = True
        self.verticalScrollBar().setValue(self.verticalScrollBar().maximum())

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self.following:
            self.verticalScrollBar().setValue(maximum)

    def _value_changed(self, _value: int) -> None:
        self.following = self.at_end

    def find_line(self, pattern: re.Pattern[str]) -> int | None:
        """The number of the first line `pattern` finds (colours aside), or None."""
        block = self.document().firstBlock()
        while block.isValid():
            if pattern.search(block.text()):
                return block.blockNumber()
            block = block.next()
        return None

    def scroll_to_line(self, number: int) -> None:
        block = self.document().findBlockByNumber(number)
        cursor = QTextCursor(block)
        cursor.movePosition(QTextCursor.MoveOperation.EndOfBlock)
        cursor.movePosition(QTextCursor.MoveOperation.StartOfBlock, QTextCursor.MoveMode.KeepAnchor)
        self.setTextCursor(cursor)  # the line selected, the cursor at its start: a wide line is shown from its start
        self.centerCursor()

    def _insert(self, cursor: QTextCursor, line: str) -> None:
        for text, style in runs(line):
            cursor.insertText(text, self._format(style))

    def _format(self, style: Style) -> QTextCharFormat:
        known = self._formats.get(style)
        if known is None:
            known = self._formats[style] = QTextCharFormat()
            fg, bg = style.fg or FOREGROUND, style.bg
            if style.inverse:
                fg, bg = bg or BACKGROUND, fg
            known.setForeground(QColor(fg))
            if bg:
                known.setBackground(QColor(bg))
            if style.bold:
                known.setFontWeight(QFont.Weight.Bold)
            if style.faint:
                known.setForeground(QColor(fg).darker(150))
            known.setFontItalic(style.italic)
            known.setFontUnderline(style.underline)
        return known
