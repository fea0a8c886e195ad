"""The console window's left side: requests and background tasks in two groups, each summed up in its header line
("2 background tasks running · 1 finished") and expanding to one two-line row per item (ID, state pill and time;
then the prompt), with Stop on a running task's row and Retry on a failed request's. The prompts an agent sent to
sessions it started sit indented under its request, under a header per group that sums up what runs and waits there."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from PySide6 import QtGui
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFontMetrics, QPainter
from PySide6.QtWidgets import (
    QHeaderView,
    QPushButton,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.rows import RowText, request_text, requests_line, sessions_line, task_text, tasks_line
from desktop.gui.style import colours, state_colour

ROLE = Qt.ItemDataRole.UserRole
TEXT_ROLE = Qt.ItemDataRole.UserRole + 1  # a two-line row's RowText
WIDTH = 380  # the list's width as it opens; the splitter gives the rest to the console
GAP = 8  # between the head, the pill and the extra text
SPINNER = "◐◓◑◒"


@dataclass
class Row:
    kind: str  # request | task | sessions (a header, not an item one opens)
    item_id: str
    text: str | RowText
    button: str = ""  # "Stop" (a running task), "×" (hide an ended one) or "Retry" (a failed request)
    below: list["Row"] = field(default_factory=list)


class WorkList(QTreeWidget):
    chosen = Signal(str, str)  # ("request" | "task", its ID): the person picked a row
    stop_asked = Signal(str)  # a task's ID: its row's Stop was clicked
    retry_asked = Signal(str)  # a request's ID: its row's Retry was clicked

    def __init__(self) -> None:
        super().__init__()
        self.setItemDelegate(TwoLines(self))
        self.setUniformRowHeights(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(280)
        self.resize(WIDTH, self.height())
        self.setHeaderHidden(True)
        self.setColumnCount(2)  # the row, and Stop for a running task
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.requests_group = QTreeWidgetItem(["Requests"])
        self.tasks_group = QTreeWidgetItem(["Background tasks"])
        self.addTopLevelItems([self.requests_group, self.tasks_group])
        self.itemSelectionChanged.connect(self._picked)
        self.hidden: set[str] = set()  # ended tasks the person hid with ×
        self._tasks: list[dict[str, Any]] = []
        self._frame = 0
        self._spinner = QTimer(self)  # the task group's line turns while something runs
        self._spinner.setInterval(120)
        self._spinner.timeout.connect(self._turn)

    def show_work(
        self,
        requests: list[dict[str, Any]],
        tasks: list[dict[str, Any]],
        denying: Callable[[str], bool] = lambda _request_id: False,
    ) -> None:
        self.requests_group.setText(0, f"Requests — {requests_line(requests)}")
        self._tasks = tasks = [t for t in tasks if t["id"] not in self.hidden or t["state"] != "ended"]
        running = any(t["state"] != "ended" for t in tasks)
        self._turn()
        if running and not self._spinner.isActive():
            self._spinner.start()
        elif not running:
            self._spinner.stop()
        self._fill(self.requests_group, request_rows(requests, denying))
        self._fill(
            self.tasks_group,
            [
                Row(
                    "task",
                    t["id"],
                    task_text(t),
                    "Stop" if t["state"] == "running" else "×" if t["state"] == "ended" else "",
                )
                for t in tasks
            ],
        )
        self.tasks_group.setHidden(not tasks)  # no panel when there is nothing to show
        self.tasks_group.setExpanded(running or self.tasks_group.isExpanded())
        self.requests_group.setExpanded(True)

    def hide_task(self, task_id: str) -> None:
        """× on an ended task's row: it leaves this view (the daemon keeps it listed for an hour)."""
        self.hidden.add(task_id)
        row = self._row(task_id)
        if row is not None:
            self.tasks_group.removeChild(row)
        self._tasks = [t for t in self._tasks if t["id"] != task_id]
        self.tasks_group.setHidden(not self._tasks)
        self._turn()

    def _turn(self) -> None:
        """The task group's line, with a spinner's next frame while something runs."""
        line = tasks_line(self._tasks)
        if any(t["state"] != "ended" for t in self._tasks):
            self._frame = (self._frame + 1) % len(SPINNER)
            line = f"{SPINNER[self._frame]} {line}"
        self.tasks_group.setText(0, line)

    def select(self, item_id: str) -> None:
        """Show this row as the one chosen (what the console shows; the person picked nothing)."""
        row = self._row(item_id)
        if row is not None and not row.isSelected():
            was = self.blockSignals(True)
            try:
                self.setCurrentItem(row)
            finally:
                self.blockSignals(was)

    def button_of(self, item_id: str) -> QPushButton | None:
        """The row's Stop or Retry, if it has one."""
        row = self._row(item_id)
        holder = self.itemWidget(row, 1) if row is not None else None
        return holder.findChild(QPushButton) if holder is not None else None

    def row_of(self, item_id: str) -> QTreeWidgetItem | None:
        return self._row(item_id)

    def _fill(self, parent: QTreeWidgetItem, rows: list[Row]) -> None:
        """Make `parent`'s rows these, in this order (a new one where it belongs, not at the bottom)."""
        wanted = {row.item_id for row in rows}
        was = self.blockSignals(True)  # a row that goes takes the selection with it: nobody picked another row
        try:
            for gone in [c for c in _children(parent) if c.data(0, ROLE)[1] not in wanted]:
                parent.removeChild(gone)
        finally:
            self.blockSignals(was)
        existing = {child.data(0, ROLE)[1]: child for child in _children(parent)}
        for index, row in enumerate(rows):
            item = existing.get(row.item_id)
            if item is None:
                item = QTreeWidgetItem()
                parent.insertChild(index, item)
            elif parent.indexOfChild(item) != index:
                self._move(parent, item, index)
            item.setData(0, ROLE, (row.kind, row.item_id))
            plain = row.text.plain if isinstance(row.text, RowText) else row.text
            item.setData(0, TEXT_ROLE, row.text if isinstance(row.text, RowText) else None)
            item.setText(0, plain)
            item.setToolTip(0, QtGui.Qt.convertFromPlainText(plain))  # a tooltip with a tag in it would be rich text
            self._button(item, row)
            self._fill(item, row.below)
            if row.below:
                item.setExpanded(True)

    def _button(self, item: QTreeWidgetItem, row: Row) -> None:
        """The row's Stop or Retry, in a holder as tall as the row: a row is never taller than its widget allows."""
        holder = self.itemWidget(item, 1)
        shown = holder.findChild(QPushButton) if holder is not None else None
        if shown is not None and shown.text() == row.button:
            return
        if holder is not None:
            self.removeItemWidget(item, 1)
        if row.button:
            button = QPushButton(row.button)
            button.setFixedSize(button.sizeHint())  # as its text needs in this font, whatever the font's size
            if row.button == "×":
                button.setToolTip("Hide from this list")
                button.clicked.connect(lambda _=False, item_id=row.item_id: self.hide_task(item_id))
            else:
                signal = self.stop_asked if row.button == "Stop" else self.retry_asked
                button.clicked.connect(lambda _=False, item_id=row.item_id: signal.emit(item_id))
            holder = QWidget()
            column = QVBoxLayout(holder)
            column.setContentsMargins(0, 0, 4, 0)
            column.addWidget(button, 0, Qt.AlignmentFlag.AlignVCenter)
            self.setItemWidget(item, 1, holder)

    def _move(self, parent: QTreeWidgetItem, item: QTreeWidgetItem, index: int) -> None:
        """Put a row at `index`, still selected if it was (its Stop button is made again by the caller)."""
        selected = item.isSelected() or any(c.isSelected() for c in _descendants(item))
        picked = self.selectedItems()[0].data(0, ROLE)[1] if selected and self.selectedItems() else None
        self.blockSignals(True)  # the person picked nothing: the selection only follows the row
        try:
            parent.takeChild(parent.indexOfChild(item))
            parent.insertChild(index, item)
            if picked is not None:
                self.select(picked)
        finally:
            self.blockSignals(False)

    def _row(self, item_id: str) -> QTreeWidgetItem | None:
        waiting = [self.requests_group, self.tasks_group]
        while waiting:
            for child in _children(waiting.pop()):
                if child.data(0, ROLE)[1] == item_id:
                    return child
                waiting.append(child)
        return None

    def _picked(self) -> None:
        items = self.selectedItems()
        picked = items[0].data(0, ROLE) if items else None
        if picked and picked[0] != "sessions":
            self.chosen.emit(*picked)


def request_rows(
    requests: list[dict[str, Any]], denying: Callable[[str], bool] = lambda _request_id: False
) -> list[Row]:
    """Each request a row, newest first; a prompt sent to a session under the request that sent it, in a header per
    group (a prompt whose sender is not listed stands on its own)."""
    requests = sorted(requests, key=lambda r: (r["created_at"], r["id"]), reverse=True)  # newest first, as everywhere
    listed = {r["id"] for r in requests}
    sent: dict[str, list[dict[str, Any]]] = {}
    for request in requests:
        if request.get("parent_id") in listed:
            sent.setdefault(request["parent_id"], []).append(request)
    rows = []
    for request in requests:
        if request.get("parent_id") in listed:
            continue
        row = Row(
            "request",
            request["id"],
            request_text(request, denying=denying(request["id"])),
            "Retry" if request["state"] == "failed" else "",
        )
        groups: dict[str | None, list[dict[str, Any]]] = {}
        for prompt in reversed(sent.get(request["id"], [])):  # oldest first under the sender
            groups.setdefault((prompt.get("session") or {}).get("group"), []).append(prompt)
        for group, prompts in groups.items():
            header = Row("sessions", f"{request['id']}:{group or ''}", sessions_line(group, prompts))
            header.below = [Row("request", p["id"], request_text(p)) for p in prompts]
            row.below.append(header)
        rows.append(row)
    return rows


class TwoLines(QStyledItemDelegate):
    """Draws a row with a RowText: ID and who, the state pill and the time on the first line, the prompt below."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        if index.data(TEXT_ROLE) is None:
            return size
        return QSize(size.width(), QFontMetrics(option.font).height() * 2 + 14)

    def paint(
        self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex
    ) -> None:
        text: RowText | None = index.data(TEXT_ROLE)
        if text is None:
            super().paint(painter, option, index)
            return
        rect: QRect = option.rect
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        c = colours()
        painter.save()
        if selected:
            painter.fillRect(rect, palette.highlight())
        elif text.dim:
            painter.setOpacity(0.55)  # an ended task, kept in view for an hour
        metrics = QFontMetrics(option.font)
        line = metrics.height()
        left, top, right = rect.left() + 4, rect.top() + 5, rect.right() - 4
        fg = palette.highlightedText().color() if selected else QColor(c.fg)
        muted = fg if selected else QColor(c.muted)
        head_room, pill_text, extra = _first_line(metrics, text, right - left)
        head = metrics.elidedText(text.head, Qt.TextElideMode.ElideRight, head_room)
        painter.setPen(fg)
        painter.drawText(QRect(left, top, head_room, line), Qt.AlignmentFlag.AlignVCenter, head)
        pill = QRect(left + metrics.horizontalAdvance(head) + GAP, top, metrics.horizontalAdvance(pill_text) + 14, line)
        colour = QColor(state_colour(text.colour))
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(colour if not selected else fg)
        painter.drawRoundedRect(pill.adjusted(0, 0, -1, -1), line / 2, line / 2)
        painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, pill_text)
        if extra:
            painter.setPen(muted)
            extra_width = metrics.horizontalAdvance(extra)
            painter.drawText(QRect(right - extra_width, top, extra_width, line), Qt.AlignmentFlag.AlignVCenter, extra)
        painter.setPen(muted)
        body = metrics.elidedText(text.body, Qt.TextElideMode.ElideRight, right - left)
        painter.drawText(QRect(left, top + line + 3, right - left, line), Qt.AlignmentFlag.AlignVCenter, body)
        painter.restore()


def _first_line(metrics: QFontMetrics, text: RowText, width: int) -> tuple[int, str, str]:
    """What fits on a row's first line: (room for the head, the pill's text, the extra text). The ID comes first, then
    the pill (shortened if need be), then the extra, which goes when there is no room for it."""
    least_head = metrics.horizontalAdvance(text.head.split(" · ")[0] + " ·")
    pill, extra = text.pill, text.extra
    pill_width = metrics.horizontalAdvance(pill) + 14
    if least_head + GAP + pill_width + GAP + metrics.horizontalAdvance(extra) > width:
        extra = ""
    if least_head + GAP + pill_width > width:
        pill = metrics.elidedText(pill, Qt.TextElideMode.ElideRight, max(0, width - least_head - GAP - 14))
        pill_width = metrics.horizontalAdvance(pill) + 14
    extra_width = metrics.horizontalAdvance(extra) + GAP if extra else 0
    return max(0, width - pill_width - GAP - extra_width), pill, extra


def _descendants(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    found = []
    for child in _children(item):
        found += [child, *_descendants(child)]
    return found


def _children(group: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [child for i in range(group.childCount()) if (child := group.child(i)) is not None]
