"""The console window's left side: requests and background tasks in two groups, each summed up in its header line
("2 background tasks running · 1 finished") and expanding to one row per item, with Stop on a running task's row.
The prompts an agent sent to sessions it started sit indented under its request, under a header per group that
sums up what runs and what waits there."""

from dataclasses import dataclass, field
from typing import Any

from PySide6 import QtGui
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHeaderView, QPushButton, QTreeWidget, QTreeWidgetItem

from desktop.gui.summary import request_row, requests_line, sessions_line, task_row, tasks_line

ROLE = Qt.ItemDataRole.UserRole


@dataclass
class Row:
    kind: str  # request | task | sessions (a header, not an item one opens)
    item_id: str
    text: str
    stoppable: bool = False
    below: list["Row"] = field(default_factory=list)


class WorkList(QTreeWidget):
    chosen = Signal(str, str)  # ("request" | "task", its ID): the person picked a row
    stop_asked = Signal(str)  # a task's ID: its row's Stop was clicked

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderHidden(True)
        self.setColumnCount(2)  # the row, and Stop for a running task
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.header().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        self.requests_group = QTreeWidgetItem(["Requests"])
        self.tasks_group = QTreeWidgetItem(["Background tasks"])
        self.addTopLevelItems([self.requests_group, self.tasks_group])
        self.itemSelectionChanged.connect(self._picked)

    def show_work(self, requests: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
        self.requests_group.setText(0, f"Requests — {requests_line(requests)}")
        self.tasks_group.setText(0, tasks_line(tasks))
        self._fill(self.requests_group, request_rows(requests))
        self._fill(self.tasks_group, [Row("task", t["id"], task_row(t), t["state"] == "running") for t in tasks])
        self.tasks_group.setExpanded(any(t["state"] != "ended" for t in tasks) or self.tasks_group.isExpanded())
        self.requests_group.setExpanded(True)

    def select(self, item_id: str) -> None:
        row = self._row(item_id)
        if row is not None and not row.isSelected():
            self.setCurrentItem(row)

    def stop_button_of(self, task_id: str) -> QPushButton | None:
        row = self._row(task_id)
        widget = self.itemWidget(row, 1) if row is not None else None
        return widget if isinstance(widget, QPushButton) else None

    def row_of(self, item_id: str) -> QTreeWidgetItem | None:
        return self._row(item_id)

    def _fill(self, parent: QTreeWidgetItem, rows: list[Row]) -> None:
        """Make `parent`'s rows these, in this order (a new one where it belongs, not at the bottom)."""
        wanted = {row.item_id for row in rows}
        for gone in [c for c in _children(parent) if c.data(0, ROLE)[1] not in wanted]:
            parent.removeChild(gone)
        existing = {child.data(0, ROLE)[1]: child for child in _children(parent)}
        for index, row in enumerate(rows):
            item = existing.get(row.item_id)
            if item is None:
                item = QTreeWidgetItem()
                parent.insertChild(index, item)
            elif parent.indexOfChild(item) != index:
                self._move(parent, item, index)
            item.setData(0, ROLE, (row.kind, row.item_id))
            item.setText(0, row.text)
            item.setToolTip(0, QtGui.Qt.convertFromPlainText(row.text))  # a tooltip with a tag in it would be rich text
            has_stop = self.itemWidget(item, 1) is not None
            if row.stoppable and not has_stop:
                stop = QPushButton("Stop")
                stop.clicked.connect(lambda _=False, task_id=row.item_id: self.stop_asked.emit(task_id))
                self.setItemWidget(item, 1, stop)
            elif has_stop and not row.stoppable:
                self.removeItemWidget(item, 1)
            self._fill(item, row.below)
            if row.below:
                item.setExpanded(True)

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


def request_rows(requests: list[dict[str, Any]]) -> list[Row]:
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
        row = Row("request", request["id"], request_row(request))
        groups: dict[str | None, list[dict[str, Any]]] = {}
        for prompt in reversed(sent.get(request["id"], [])):  # oldest first under the sender
            groups.setdefault((prompt.get("session") or {}).get("group"), []).append(prompt)
        for group, prompts in groups.items():
            header = Row("sessions", f"{request['id']}:{group or ''}", sessions_line(group, prompts))
            header.below = [Row("request", p["id"], request_row(p)) for p in prompts]
            row.below.append(header)
        rows.append(row)
    return rows


def _descendants(item: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    found = []
    for child in _children(item):
        found += [child, *_descendants(child)]
    return found


def _children(group: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [child for i in range(group.childCount()) if (child := group.child(i)) is not None]
