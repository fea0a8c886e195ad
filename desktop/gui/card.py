"""The approval card: everything the owner needs to say yes or no to one request (who asked, which agent and folder,
the whole prompt as it will run, the requests it mentions, when it was asked, the time left), with Approve and
Deny. What a click means is the app's `act` callback, which goes to the daemon's API."""

from collections.abc import Callable
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QFormLayout, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from desktop.core.ids import short_form
from desktop.core.visible import visible
from desktop.gui import style
from desktop.runtimes import RUNTIME_NAMES

if TYPE_CHECKING:
    from desktop.client.shapes import Agent


def time_left(expires_at: str | None, now: datetime) -> str:
    """'expires in 23 h 57 min' (or in minutes and seconds near the end)."""
    if not expires_at:
        return "does not expire"
    seconds = int((datetime.fromisoformat(expires_at) - now).total_seconds())
    if seconds <= 0:
        return "expires now"
    hours, minutes = divmod(seconds // 60, 60)
    if hours:
        return f"expires in {hours} h {minutes:02d} min"
    return f"expires in {minutes} min {seconds % 60:02d} s" if minutes else f"expires in {seconds} s"


def asked_when(created_at: str, now: datetime) -> str:
    asked = datetime.fromisoformat(created_at)
    minutes = int((now - asked).total_seconds() // 60)
    ago = "just now" if minutes < 1 else f"{minutes} min ago" if minutes < 60 else f"{minutes // 60} h ago"
    return f"{style.when(created_at, now=now.astimezone())} ({ago})"


class ApprovalCard(QWidget):
    def __init__(
        self,
        request: dict[str, Any],
        agent: "Agent | None",
        act: Callable[[str, str], None],
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__()
        self.request_id = request["id"]
        self._request, self._now = request, now
        today = now().date()
        self.setWindowTitle(f"{short_form(self.request_id, today)} waits for your approval — Coxswain")
        self.resize(520, 420)
        self._placed = False  # centred when first shown

        heading = QLabel(f"<b>{_rich(request['requester'])}</b> asks <b>{_rich(request['agent'])}</b>")
        heading.setTextFormat(Qt.TextFormat.RichText)
        form = QFormLayout()
        session = request.get("session")
        where = (agent.runtime, agent.folder) if agent else None
        if session:  # a session an agent wants to start (or a prompt to one): it runs as its own agent
            where = (session["runtime"], session["folder"])
            heading.setText(
                f"<b>{_rich(request['requester'])}</b>'s agent wants a session: <b>{_rich(session['title'])}</b>"
            )
        folder = where[1] if where else "(agent not found)"
        runtime = f" · {RUNTIME_NAMES.get(where[0], where[0])}" if where else ""
        form.addRow("Request", QLabel(self.request_id))
        form.addRow("Agent", _plain(f"{request['agent']}{runtime} · {folder}"))
        if session:
            form.addRow(
                "Started by",
                _plain(
                    f"{short_form(request['parent_id'], today)} · {session['parent_title']}"
                    f" · {request.get('via_model') or ''}"
                ),
            )
            if session.get("group"):
                form.addRow("Group", _plain(f"Group: {session['group']}"))
            self.accounts = _plain(session["accounts"])
            form.addRow("Accounts", self.accounts)
        if request.get("references"):
            form.addRow("Mentions", _plain(", ".join(short_form(r, today) for r in request["references"])))
        if request.get("retry_of"):
            form.addRow("Retry of", _plain(short_form(request["retry_of"], today)))
        self.asked = _plain(asked_when(request["created_at"], now()))
        form.addRow("Asked", self.asked)
        self.expiry = _plain(time_left(request.get("expires_at"), now()))
        form.addRow("Time left", self.expiry)
        # all of it as it will run, every character seen: never redacted, a redaction rule would hide what runs
        self.prompt = QPlainTextEdit(visible(request["prompt"]))
        self.prompt.setReadOnly(True)

        self.deny = QPushButton("Deny")  # apart from Approve, at the other end: a slip does not deny
        self.approve = QPushButton("Approve")
        style.kind(self.deny, "danger")
        style.kind(self.approve, "primary")
        self.approve.setDefault(True)
        self.approve.clicked.connect(lambda: act("approve", self.request_id))
        self.deny.clicked.connect(lambda: act("deny", self.request_id))
        buttons = QHBoxLayout()
        buttons.addWidget(self.deny)
        buttons.addStretch(1)
        buttons.addWidget(self.approve)

        layout = QVBoxLayout(self)
        layout.addWidget(heading)
        layout.addLayout(form)
        layout.addWidget(QLabel("Prompt"))
        layout.addWidget(self.prompt, 1)
        layout.addLayout(buttons)
        self._ticker = QTimer(self)  # the time left counts down while the card is open, once a second
        self._ticker.setInterval(1000)
        self._ticker.timeout.connect(self._tick)

    def showEvent(self, event: Any) -> None:
        if not self._placed:
            self._placed = True
            style.centre(self)
        self._tick()
        self._ticker.start()
        super().showEvent(event)

    def hideEvent(self, event: Any) -> None:
        self._ticker.stop()
        super().hideEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)

    def _tick(self) -> None:
        self.expiry.setText(time_left(self._request.get("expires_at"), self._now()))


def _rich(text: str) -> str:
    return escape(visible(text)).replace("\n", "<br>")


def _plain(text: str) -> QLabel:
    label = QLabel(visible(text))
    label.setTextFormat(Qt.TextFormat.PlainText)  # a requester's words are text, never markup
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label
