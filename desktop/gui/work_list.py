"""The console window's left side: requests and background tasks in two groups, each summed up in its header line
("2 background tasks running · 1 finished") and expanding to one row per item, with Stop on a running task's row."""

from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QPushButton, QTreeWidget, QTreeWidgetItem

from desktop.gui.summary import request_row, requests_line, task_row, tasks_line

ROLE = Qt.ItemDataRole.UserRole


class WorkList(QTreeWidget):
    chosen = Signal(str, str)  # ("request" | "task", its ID): the person picked a row
    stop_asked = Signal(str)  # a task's ID: its row's Stop was clicked

    def __init__(self) -> None:
        super().__init__()
        self.setHeaderHidden(True)
        self.setColumnCount(2)  # the row, and Stop for a running task
        self.requests_group = QTreeWidgetItem(["Requests"])
        self.tasks_group = QTreeWidgetItem(["Background tasks"])
        self.addTopLevelItems([self.requests_group, self.tasks_group])
        self.itemSelectionChanged.connect(self._picked)

    def show_work(self, requests: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
        self.requests_group.setText(0, f"Requests — {requests_line(requests)}")
        self.tasks_group.setText(0, tasks_line(tasks))
        self._fill(self.requests_group, [("request", r["id"], request_row(r), False) for r in requests])
        self._fill(self.tasks_group, [("task", t["id"], task_row(t), t["state"] == "running") for t in tasks])
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

    def _fill(self, group: QTreeWidgetItem, rows: list[tuple[str, str, str, bool]]) -> None:
        existing = {child.data(0, ROLE)[1]: child for child in _children(group)}
        for kind, item_id, text, stoppable in rows:
            item = existing.pop(item_id, None) or QTreeWidgetItem(group)
            item.setData(0, ROLE, (kind, item_id))
            item.setText(0, text)
            has_stop = self.itemWidget(item, 1) is not None
            if stoppable and not has_stop:
                stop = QPushButton("Stop")
                stop.clicked.connect(lambda _=False, task_id=item_id: self.stop_asked.emit(task_id))
                self.setItemWidget(item, 1, stop)
            elif has_stop and not stoppable:
                self.removeItemWidget(item, 1)
        for gone in existing.values():
            group.removeChild(gone)

    def _row(self, item_id: str) -> QTreeWidgetItem | None:
        for group in (self.requests_group, self.tasks_group):
            for child in _children(group):
                if child.data(0, ROLE)[1] == item_id:
                    return child
        return None

    def _picked(self) -> None:
        items = self.selectedItems()
        picked = items[0].data(0, ROLE) if items else None
        if picked:
            self.chosen.emit(*picked)


def _children(group: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [child for i in range(group.childCount()) if (child := group.child(i)) is not None]
