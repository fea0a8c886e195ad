"""What the settings tabs share: tables whose rows and headers read on one line, a bar at the bottom with the tab's
words and its Save, and the daemon's refusals told with the label a person sees instead of the setting's key."""

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTableWidget,
    QTableWidgetItem,
)

from desktop.gui import style


def labelled(error: str, labels: Mapping[str, str]) -> str:
    """ "approval_ttl: must be …" → "Approvals expire after: must be …" (the daemon names the key it refused)."""
    key, colon, rest = error.partition(": ")
    return f"{labels[key]}: {rest}" if colon and key in labels else error


def status() -> QLabel:
    """Where a tab says what its last action did: plain text (a refusal may quote anything typed), selectable."""
    label = QLabel()
    label.setTextFormat(Qt.TextFormat.PlainText)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def heading(text: str) -> QLabel:
    """A section's title: bold, with room above it."""
    label = QLabel(f"<b>{text}</b>")
    label.setContentsMargins(0, 10, 0, 0)
    return label


def say(label: QLabel, text: str, failed: bool = False) -> None:
    label.setText(text)
    style.kind(label, "error" if failed else "")


def bottom_bar(words: QLabel, *buttons: QPushButton) -> QHBoxLayout:
    """The tab's words on the left, its buttons on the right; the last button is the tab's primary one."""
    bar = QHBoxLayout()
    bar.addWidget(words, 1)
    for button in buttons:
        bar.addWidget(button, 0, Qt.AlignmentFlag.AlignTop)
    style.kind(buttons[-1], "primary")
    return bar


class _Spaced(QStyledItemDelegate):
    """Cells as wide as their text and a gap, so that columns sized to their contents do not touch."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        return super().sizeHint(option, index) + QSize(16, 0)


def table(headers: Sequence[str], stretch: int) -> QTableWidget:
    """Rows chosen whole, one line each; every column as wide as its header and contents except `stretch`, which
    takes the rest and shortens its texts in the middle (a folder's start and end say the most)."""
    view = QTableWidget(0, len(headers))
    view.setHorizontalHeaderLabels(list(headers))
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setWordWrap(False)
    view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
    view.setShowGrid(False)
    view.setAlternatingRowColors(True)
    view.setItemDelegate(_Spaced(view))
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 12)
    columns = view.horizontalHeader()
    columns.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    columns.setHighlightSections(False)
    widest = max(columns.fontMetrics().horizontalAdvance(header) for header in headers)
    columns.setMinimumSectionSize(widest + 24)  # a narrow window shortens the stretched column, never a header
    for column in range(len(headers)):
        columns.setSectionResizeMode(
            column, QHeaderView.ResizeMode.Stretch if column == stretch else QHeaderView.ResizeMode.ResizeToContents
        )
    view.setProperty("stretch", stretch)
    return view


def fill(view: QTableWidget, rows: Sequence[Sequence[str]]) -> None:
    """The rows, the stretched column's whole text in its tooltip (it may be shortened)."""
    stretch = view.property("stretch")
    view.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            item = QTableWidgetItem(text)
            if c == stretch:
                item.setToolTip(text)
            view.setItem(r, c, item)


def chosen_row(view: QTableWidget) -> int | None:
    """The row a person chose, if any (a row refilled away is no choice)."""
    picked = view.selectionModel().selectedRows()
    return picked[0].row() if picked else None
