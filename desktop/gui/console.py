"""The console window. Left: requests and background tasks, each group summed up in one line and expanding to rows.
Right: the chosen request's timeline (states with times, interruptions and resumes, progress) and console, or the
chosen task's console with its test chip, quiet flag and Stop; a request waiting for approval has Approve, Deny and
Review… (its card). Both are shown the same way: the daemon's console pages (redacted, repeats folded), opened on the
last 2,000 lines, followed once a second while what is shown can change, paged back on "Load earlier"."""

import asyncio
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from PySide6 import QtGui
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLayout,
    QListWidget,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.client import Call, api
from desktop.client.shapes import ConsolePage
from desktop.client.transport import AsyncClient
from desktop.console.testruns import failure_heading
from desktop.core.visible import one_line, visible
from desktop.gui import style
from desktop.gui.console_view import ConsoleView
from desktop.gui.rows import RowText, latest, request_text, task_text, test_chip
from desktop.gui.work import Work
from desktop.gui.work_list import WIDTH, WorkList

PAGE = 2000
AMBER = "color: #b45309; font-weight: bold;"
SKIPPED = "\x1b[7m … output came faster than it can be shown; some lines are skipped here … \x1b[0m"
EMPTY = "Nothing yet — requests appear here when someone asks an agent."


class ConsoleWindow(QWidget):
    def __init__(
        self,
        client: AsyncClient,
        act: Callable[[str, str], None],
        denying: Callable[[str], bool] = lambda _request_id: False,
    ) -> None:
        """`act(verb, id)` does what a button asks through the app; `denying(id)`: a Deny of it waits for its Undo."""
        super().__init__()
        self._client, self._act, self._denying = client, act, denying
        self.setWindowTitle("Coxswain")
        self.resize(1100, 680)
        self._placed = False  # centred on the screen when first shown, laid out
        self.chosen: tuple[str, str] | None = None  # ("task" | "request", id)
        self._opened: tuple[str, str] | None = None  # what the view holds the start of: only it is read further
        self.work = Work()
        self._before: int | None = None  # where "Load earlier" continues (a byte offset of the output)
        self._end = 0  # where the next lines start (a byte offset)
        self._pending_shown = False  # the last line shown is unfinished: the next read replaces it
        self._live = False
        self._request_state: str | None = None  # the state the chosen request's details show
        self._reading = asyncio.Lock()  # one reader of the output at a time: every line once, in order
        self._read_again = False  # asked to read while a read was on its way (it may have asked before the change)
        self.first_failure: str | None = None

        self.list = WorkList()
        self.list.chosen.connect(self._chose)
        self.list.stop_asked.connect(lambda task_id: self.work.start(self._stop_task(task_id)))
        self.list.retry_asked.connect(lambda request_id: self._act("retry", request_id))

        self.header = QLabel("Choose a request or a task")  # "R-07 · api · sarah", shortened to the room it has
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.pill = QLabel()  # the state, coloured as in the list and the room
        self.when = QLabel()  # "exit 1 · 2 min 04 s"
        style.kind(self.when, "muted")
        self.what = QLabel()  # the prompt's (or the task's) first line
        self.what.setTextFormat(Qt.TextFormat.PlainText)
        self.what.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        style.kind(self.what, "muted")
        self.why = QLabel()  # instead of an empty console: why nothing ran
        self.why.setTextFormat(Qt.TextFormat.PlainText)
        self.why.setWordWrap(True)
        self.why.setAlignment(Qt.AlignmentFlag.AlignCenter)
        style.kind(self.why, "empty")
        self.undo_button = QPushButton("Undo Deny")  # a Deny waits a few seconds for this before it is final
        self.undo_button.clicked.connect(lambda: self._answer("undo"))
        self.timeline = QListWidget()
        self.timeline.setMaximumHeight(150)
        self.progress = QProgressBar()
        self.chip = QLabel()
        self.first_failure_button = QPushButton("First failure")
        self.first_failure_button.clicked.connect(lambda: self.work.start(self.show_first_failure()))
        self.quiet = QLabel()
        self.earlier = QPushButton("Load earlier")
        self.earlier.clicked.connect(lambda: self.work.start(self.load_earlier()))
        self.older = QLabel("older output not loaded")
        self.stop_button = QPushButton("Stop")
        self.stop_button.clicked.connect(lambda: self.work.start(self.stop()))
        self.approve_button = QPushButton("Approve")  # a request waiting for approval: answered here, or in its card
        self.deny_button = QPushButton("Deny")
        self.review_button = QPushButton("Review…")
        for button, verb in (
            (self.approve_button, "approve"),
            (self.deny_button, "deny"),
            (self.review_button, "review"),
        ):
            button.clicked.connect(lambda _=False, verb=verb: self._answer(verb))
        style.kind(self.approve_button, "primary")
        style.kind(self.deny_button, "danger")
        self.view = ConsoleView()
        self.view.verticalScrollBar().valueChanged.connect(self._scrolled)
        self.jump = QPushButton("Jump to end ↓")
        self.jump.clicked.connect(self._jump_to_end)
        self.note = QLabel()
        self.note.setWordWrap(True)

        bar = QHBoxLayout()
        for widget in (self.chip, self.first_failure_button, self.quiet):
            bar.addWidget(widget)
        bar.addStretch(1)
        for widget in (
            self.older,
            self.earlier,
            self.approve_button,
            self.review_button,
            self.deny_button,
            self.undo_button,
            self.stop_button,
        ):
            bar.addWidget(widget)
        bar.insertSpacing(bar.indexOf(self.deny_button), 24)  # Deny apart from Approve
        title = QHBoxLayout()
        title.addWidget(self.header, 1)
        title.addWidget(self.pill)
        title.addWidget(self.when)
        details = QWidget()
        column = QVBoxLayout(details)
        column.addLayout(title)
        column.addWidget(self.what)
        column.addWidget(self.timeline)
        column.addWidget(self.progress)
        column.addLayout(bar)
        column.addWidget(self.view, 1)
        column.addWidget(self.why, 1)
        column.addWidget(self.jump, 0, Qt.AlignmentFlag.AlignRight)
        column.addWidget(self.note)
        self.empty = QLabel(EMPTY)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setWordWrap(True)
        style.kind(self.empty, "empty")
        self.right = QStackedWidget()
        self.right.addWidget(self.empty)
        self.right.addWidget(details)
        splitter = QSplitter()
        splitter.addWidget(self.list)
        splitter.addWidget(self.right)
        splitter.setStretchFactor(0, 0)  # the list keeps its width as the window grows
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([WIDTH, 1100 - WIDTH])
        QHBoxLayout(self).addWidget(splitter)
        self._hide_details()
        for layout in self.findChildren(QLayout):  # sized without what was hidden before the window was first shown
            layout.invalidate()

        self._poll = QTimer(self)  # once a second, and only while a live console is shown
        self._poll.setInterval(1000)
        self._poll.timeout.connect(self.follow_soon)

    # --- the list on the left ------------------------------------------------------------------------------

    def show_work(self, requests: list[dict[str, Any]], tasks: list[dict[str, Any]]) -> None:
        """The list on the left, from what the app knows (newest first); the details of what is chosen follow."""
        tasks = [t for t in tasks if t["kind"] != "request"]
        self.list.show_work(requests, tasks, self._denying)
        self.right.setCurrentIndex(0 if self.chosen is None and not requests and not tasks else 1)
        if self.chosen and self.chosen[0] == "task":
            task = next((t for t in tasks if t["id"] == self.chosen[1]), None)
            if task:
                self._show_task_state(task)
        elif self.chosen and self.chosen[0] == "request":
            request = next((r for r in requests if r["id"] == self.chosen[1]), None)
            if request is not None and request["state"] != self._request_state:  # now, not at the next poll
                self.follow_soon()
        elif self.chosen is None and (first := latest(requests, tasks)):
            self.work.start(self.open(*first))

    async def _stop_task(self, task_id: str) -> None:
        await self._client.call(api.stop_task(task_id))  # its end comes as an event

    def _chose(self, kind: str, item_id: str) -> None:
        if (kind, item_id) != self.chosen:
            self.work.start(self.open(kind, item_id))

    # --- a task ---------------------------------------------------------------------------------------------

    async def open(self, kind: str, item_id: str) -> None:
        """Show a request or a task: the list's choice, then its page, read while it is the one chosen."""
        self.chosen = (kind, item_id)  # a read of what was shown before stops at its next slice
        self.list.select(item_id)
        async with self._reading:
            if self.chosen == (kind, item_id):
                self._opened = None
                await self._open(kind, item_id)
                if self.chosen == (kind, item_id):
                    self._opened = (kind, item_id)
                await self._read_while_asked(self.chosen)

    async def open_task(self, task_id: str) -> None:
        await self.open("task", task_id)

    async def open_request(self, request_id: str) -> None:
        await self.open("request", request_id)

    async def _open(self, kind: str, item_id: str) -> None:
        self._read_again = False
        row = await self._row(kind, item_id)
        page = await self._client.call(_console(kind, item_id, lines=PAGE))
        if self.chosen != (kind, item_id):
            return
        self._hide_details()
        self._before, self._end = page.before, page.end
        self.view.show_lines(page.lines + ([page.pending] if page.pending else []))
        self._pending_shown = bool(page.pending)
        self._show_paging(page.older_not_loaded)
        self.note.setText(page.note or "")
        self.note.setVisible(bool(page.note))
        self.view.scroll_to_end()
        if kind == "task":
            self._show_task_state(row)
        else:
            self.stop_button.setText("Cancel")
            self._show_request_state(row)

    def _show_title(self, row: RowText, what: str) -> None:
        self.right.setCurrentIndex(1)
        self.header.setText(row.head)
        self.header.setToolTip(QtGui.Qt.convertFromPlainText(row.plain))  # a tag in a title would make it rich text
        self.pill.setText(row.pill)
        colour = style.state_colour(row.colour)
        self.pill.setStyleSheet(f"color: {colour}; border: 1px solid {colour}; border-radius: 9px; padding: 1px 8px;")
        self.when.setText(row.extra)
        self.what.setText(one_line(what, 300))

    def _show_task_state(self, task: dict[str, Any]) -> None:
        shown = task_text(task, with_chip=False, now=datetime.now(UTC))  # the chip is beside the console
        self._show_title(shown, task["description"] or task["command"])
        chip, tip = test_chip(task.get("tests"))
        self.chip.setText(chip)
        self.chip.setToolTip(tip)
        self.chip.setVisible(bool(chip))
        failing = bool((task.get("tests") or {}).get("failed"))
        colour = style.state_colour("failed" if failing else "done")  # red when tests failed, as in the room
        self.chip.setStyleSheet(f"color: {colour}; border: 1px solid {colour}; border-radius: 9px; padding: 1px 8px;")
        failure = (task.get("tests") or {}).get("first_failure")
        self.first_failure = failure["name"] if failure else None
        self.first_failure_button.setVisible(self.first_failure is not None)
        self.quiet.setText(f"no output for {task['quiet_minutes']} min" if task.get("quiet_minutes") else "")
        self.quiet.setStyleSheet(AMBER if task.get("quiet") else "")
        self.quiet.setVisible(bool(task.get("quiet_minutes")))
        self.stop_button.setVisible(task["state"] == "running")
        self._set_live(task["state"] != "ended")

    async def _follow(self, kind: str, item_id: str) -> None:
        """What it printed since the last read, read until caught up (a page at a time)."""
        more = True
        while more:
            page = await self._client.call(_console(kind, item_id, after=self._end, lines=PAGE))
            if self.chosen != (kind, item_id):
                return
            if self._pending_shown:  # the unfinished line shown last time is replaced by what it became
                self._drop_last_line()
            skipped = [SKIPPED] if page.older_not_loaded else []
            self._end, more = page.end, page.more
            await self._append(skipped + page.lines + ([page.pending] if page.pending else []))
            self._pending_shown = bool(page.pending)

    # --- a request ------------------------------------------------------------------------------------------

    def _show_request_state(self, request: dict[str, Any]) -> None:
        """Its timeline and progress; Cancel and once-a-second polling while it can still change."""
        self._request_state = request["state"]
        waits = request["state"] == "pending"
        denying = waits and self._denying(request["id"])
        self._show_title(request_text(request, denying=denying), request["prompt"])
        can_change = request["state"] in ("pending", "approved", "running")
        self.stop_button.setVisible(can_change and not waits)  # what waits for the owner is denied, not cancelled
        for button in (self.approve_button, self.deny_button, self.review_button):
            button.setVisible(waits and not denying)
        self.undo_button.setVisible(denying)
        self._set_live(can_change)
        self._say_why(request, denying)
        self.timeline.clear()
        for entry in request.get("timeline") or []:
            at = style.when(entry["at"], seconds=True)
            mark = "⇢ session call: " if entry["kind"] == "activity" else ""
            self.timeline.addItem(f"{at}  {mark}{visible(entry['text'])}")
        self.timeline.setVisible(True)
        self.progress.setVisible(request.get("progress") is not None)
        self.progress.setValue(round(request.get("progress") or 0))

    def _say_why(self, request: dict[str, Any], denying: bool) -> None:
        """A request that printed nothing shows why instead of an empty console (denied, waiting, cancelled …)."""
        empty = self.view.lines_shown == 0 and request["state"] != "running"
        if empty:
            timeline = request.get("timeline") or []
            last = timeline[-1] if timeline else None
            said = f"{visible(last['text'])} at {style.when(last['at'])}" if last else request["state"]
            never = "" if request.get("started_at") else " It never ran."
            if denying:
                said, never = "Denied: it is final in a few seconds, unless you Undo.", ""
            elif request["state"] == "pending":
                said, never = "It waits for your approval: Approve, Deny, or Review… to read all of it.", ""
            elif request["state"] == "approved":
                said, never = "Approved: it waits for its turn in the agent's queue.", ""
            self.why.setText(said[:1].upper() + said[1:] + ("." if not said.endswith(".") else "") + never)
        self.why.setVisible(empty)
        self.view.setVisible(not empty)

    # --- following, paging, stopping ------------------------------------------------------------------------

    async def follow(self) -> None:
        """Show what the chosen item printed since the last read, and its state now."""
        chosen = self.chosen
        if chosen is None or chosen != self._opened:  # chosen, not opened yet: its opening reads it
            return
        async with self._reading:
            self._read_again = True
            await self._read_while_asked(chosen)

    def follow_soon(self) -> None:
        """Read now, or (a read on its way) once more right after it: the timer's tick, a change seen in the list."""
        if self._reading.locked():
            self._read_again = True
        elif self.chosen is not None:
            self.work.start(self.follow())

    async def _read_while_asked(self, chosen: tuple[str, str]) -> None:
        while self._read_again and self.chosen == chosen:
            self._read_again = False
            await self._read(*chosen)

    async def _read(self, kind: str, item_id: str) -> None:
        await self._follow(kind, item_id)
        row = await self._row(kind, item_id)
        if self.chosen == (kind, item_id):
            (self._show_task_state if kind == "task" else self._show_request_state)(row)

    async def load_earlier(self) -> None:
        chosen = self.chosen
        if chosen is None or self._before is None:
            return
        page = await self._client.call(_console(*chosen, lines=PAGE, before=self._before))
        if self.chosen == chosen:
            self._before = page.before
            self.view.prepend_lines(page.lines)
            self._show_paging(page.older_not_loaded)

    async def show_first_failure(self) -> None:
        """Scroll to where the first failing test's report begins (its traceback), loading earlier pages until it is
        there; where the runner printed none, to the first line that names it."""
        while self.first_failure:
            name = self.first_failure
            line = self.view.find_line(failure_heading(name))
            if line is not None:
                self.view.scroll_to_line(line)
                return
            if self._before is None:
                named = self.view.find_line(re.compile(re.escape(name)))
                if named is not None:
                    self.view.scroll_to_line(named)
                return
            await self.load_earlier()

    async def stop(self) -> None:
        if self.chosen is None:
            return
        kind, item_id = self.chosen
        if kind == "task":
            await self._stop_task(item_id)
        else:
            self._act("cancel", item_id)
        await self.follow()

    def _answer(self, verb: str) -> None:
        """Approve, Deny or Review… (its card) for the request shown, through the app like the tray's."""
        if self.chosen is not None and self.chosen[0] == "request":
            self._act(verb, self.chosen[1])

    # --- small parts ----------------------------------------------------------------------------------------

    async def _row(self, kind: str, item_id: str) -> dict[str, Any]:
        """A request's or a task's row, as the list and the events hold it."""
        if kind == "task":
            return (await self._client.call(api.task(item_id))).dump()
        return (await self._client.call(api.request(item_id))).dump()

    async def _append(self, lines: list[str]) -> None:
        """Add lines a slice at a time, so a flood of output never holds the loop (the daemon shares it)."""
        for start in range(0, len(lines), 250):
            self.view.append_lines(lines[start : start + 250])
            if start + 250 < len(lines):
                await asyncio.sleep(0)
        self.jump.setVisible(not self.view.following)

    def _drop_last_line(self) -> None:
        cursor = self.view.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        cursor.select(cursor.SelectionType.BlockUnderCursor)
        cursor.removeSelectedText()
        self.view.lines_shown -= 1

    def _show_paging(self, older_not_loaded: bool) -> None:
        self.earlier.setVisible(self._before is not None)
        self.older.setVisible(older_not_loaded and self._before is None)

    def _hide_details(self) -> None:
        for widget in (
            self.timeline,
            self.progress,
            self.chip,
            self.first_failure_button,
            self.quiet,
            self.earlier,
            self.older,
            self.stop_button,
            self.approve_button,
            self.deny_button,
            self.review_button,
            self.undo_button,
            self.jump,
            self.note,
            self.why,
        ):
            widget.setVisible(False)
        self.view.setVisible(True)
        self.stop_button.setText("Stop")
        self._before = None

    def _set_live(self, live: bool) -> None:
        """Poll once a second while what is shown can change, and only while the window is open."""
        if live and self.isVisible() and not self._poll.isActive():
            self._poll.start()
        elif not live or not self.isVisible():
            self._poll.stop()

    def _scrolled(self) -> None:
        self.jump.setVisible(not self.view.following and self.chosen is not None)

    def _jump_to_end(self) -> None:
        self.view.scroll_to_end()
        self.jump.setVisible(False)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)

    def closeEvent(self, event: Any) -> None:
        self._poll.stop()  # nothing polls while the window is closed
        super().closeEvent(event)

    def showEvent(self, event: Any) -> None:
        if not self._placed:
            self._placed = True
            style.centre(self)
        self.follow_soon()
        super().showEvent(event)


def _console(
    kind: str, item_id: str, lines: int, before: int | None = None, after: int | None = None
) -> Call[ConsolePage]:
    """A page of a request's or a task's console."""
    if kind == "request":
        return api.console(item_id, lines=lines, before=before, after=after)
    return api.task_console(item_id, lines=lines, before=before, after=after)
