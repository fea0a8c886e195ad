"""Settings → People: the teammates and machines that may send requests (when added, when revoked, in this
computer's way of writing times), a new one's token shown once with Copy, and Revoke."""

from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPushButton, QVBoxLayout, QWidget

from desktop.client import DaemonError, api
from desktop.client.shapes import Principal
from desktop.client.transport import AsyncClient
from desktop.gui import style
from desktop.gui.form import chosen_row, fill, say, status, table
from desktop.gui.work import Work

COLUMNS = ("Name", "Kind", "Added", "Revoked")


class PeoplePanel(QWidget):
    def __init__(self, client: AsyncClient, work: Work) -> None:
        super().__init__()
        self._client, self.work = client, work
        self._rows: list[Principal] = []
        self.table = table(COLUMNS, stretch=COLUMNS.index("Name"))
        self.table.itemSelectionChanged.connect(self._enable)
        self.name = QLineEdit()
        self.name.setPlaceholderText("a teammate's name, e.g. sarah")
        self.name.textChanged.connect(self._enable)
        self.add, self.revoke = QPushButton("Add"), QPushButton("Revoke")
        self.revoke.setToolTip(
            "The chosen one's token stops working at once; what they asked and is not yet running is cancelled"
        )
        style.kind(self.add, "primary")
        style.kind(self.revoke, "danger")
        self.add.clicked.connect(lambda: self.work.start(self._add()))
        self.name.returnPressed.connect(self.add.animateClick)  # (a disabled button does not click)
        self.revoke.clicked.connect(lambda: self.work.start(self._revoke()))
        self.token = QLineEdit()
        self.token.setReadOnly(True)
        self.copy = QPushButton("Copy")
        self.copy.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.token.text()))
        self.note = status()
        row = QHBoxLayout()
        row.addWidget(self.name, 1)
        row.addWidget(self.add)
        row.addSpacing(24)  # Revoke apart from Add
        row.addWidget(self.revoke)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token, 1)
        token_row.addWidget(self.copy)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addLayout(token_row)
        layout.addWidget(self.note)
        self._show_token("", "")

    async def load(self) -> None:
        self._rows = [p for p in await self._client.call(api.people()) if p.kind != "owner"]
        chosen = chosen_row(self.table)
        fill(
            self.table,
            [
                (
                    p.name,
                    p.kind.capitalize(),
                    style.when(p.created_at),
                    style.when(p.revoked_at) if p.revoked_at else "",
                )
                for p in self._rows
            ],
        )
        if chosen is not None and chosen < len(self._rows):
            self.table.selectRow(chosen)
        self._enable()

    def _chosen(self) -> Principal | None:
        row = chosen_row(self.table)
        return self._rows[row] if row is not None and row < len(self._rows) else None

    def _enable(self) -> None:
        """Add: a name typed. Revoke: someone chosen whose token still works. Copy: a token shown."""
        chosen = self._chosen()
        self.add.setEnabled(bool(self.name.text().strip()))
        self.revoke.setEnabled(chosen is not None and not chosen.revoked_at)
        self.copy.setEnabled(bool(self.token.text()))

    async def _add(self) -> None:
        name = self.name.text().strip()
        try:
            made = await self._client.call(api.add_person(name))
        except DaemonError as error:
            self._show_token("", str(error), failed=True)
        else:
            self._show_token(
                made.token,
                f"{name}'s token, shown only this once: copy it and give it to "
                f"{name}. Coxswain keeps only a hash of it.",
            )
            self.name.clear()
        await self.load()

    async def _revoke(self) -> None:
        chosen = self._chosen()
        if chosen is None:
            return
        name = chosen.name
        try:
            await self._client.call(api.revoke(name))
        except DaemonError as error:
            self._show_token("", str(error), failed=True)
        else:
            self._show_token("", f"{name} can no longer send requests.")
        await self.load()

    def _show_token(self, token: str, note: str, failed: bool = False) -> None:
        self.token.setText(token)
        self.token.setVisible(bool(token))
        self.copy.setVisible(bool(token))
        say(self.note, note, failed=failed)
        self._enable()
