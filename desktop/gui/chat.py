"""Settings → Chat: connect Slack or Feishu (the daemon checks the tokens with the chat, then keeps them in the
keyring), say which chat user is which person, and see whether each connector is connected."""

from PySide6.QtWidgets import QComboBox, QFormLayout, QHBoxLayout, QLabel, QLineEdit, QPushButton, QWidget

from desktop.client import DaemonError, api
from desktop.client.api import ChatSetup
from desktop.client.transport import AsyncClient
from desktop.gui import style
from desktop.gui.form import heading, say, status
from desktop.gui.work import Work

FIELDS = {
    "slack": (("app_token", "App token (xapp-…)"), ("bot_token", "Bot token (xoxb-…)")),
    "feishu": (("app_id", "App ID (cli_…)"), ("app_secret", "App secret")),
}


class ChatPanel(QWidget):
    def __init__(self, client: AsyncClient, work: Work) -> None:
        super().__init__()
        self._client, self.work = client, work
        self._configured: set[str] = set()  # the chats connected, or set up and not connected (yet)
        form = QFormLayout(self)
        self.state = status()
        self.state.setText("No chat connected.")
        form.addRow(self.state)
        form.addRow(heading("Connect a chat"))
        self.kind = QComboBox()
        self.kind.addItems(list(FIELDS))
        self.kind.currentTextChanged.connect(self._show_fields)
        form.addRow("Chat", self.kind)
        self.fields: dict[str, QLineEdit] = {}
        self._labels: dict[str, QLabel] = {}
        for name, label in (item for pairs in FIELDS.values() for item in pairs):
            self.fields[name] = QLineEdit()
            if name != "app_id":
                self.fields[name].setEchoMode(QLineEdit.EchoMode.Password)
            self._labels[name] = QLabel(label)
            form.addRow(self._labels[name], self.fields[name])
            self.fields[name].textChanged.connect(self._enable)
        self.channel = QLineEdit()
        self.channel.setPlaceholderText("where threads of requests sent from elsewhere go (optional)")
        form.addRow("Channel", self.channel)
        buttons = QHBoxLayout()
        self.connect_button, self.remove_button = QPushButton("Connect"), QPushButton("Disconnect")
        self.connect_button.clicked.connect(lambda: self.work.start(self.connect_chat()))
        self.remove_button.clicked.connect(lambda: self.work.start(self.remove_chat()))
        style.kind(self.remove_button, "danger")
        buttons.addWidget(self.connect_button)
        buttons.addSpacing(24)  # Disconnect apart from Connect
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        form.addRow(buttons)
        form.addRow(heading("Who is who"))
        who = QHBoxLayout()
        self.chat_user, self.person = QLineEdit(), QLineEdit()
        self.chat_user.setPlaceholderText("chat user ID (Slack U…, Feishu ou_…)")
        self.person.setPlaceholderText("person (or owner)")
        self.map_button = QPushButton("Save")
        self.map_button.clicked.connect(lambda: self.work.start(self.map_person()))
        self.chat_user.textChanged.connect(self._enable)
        for widget in (self.chat_user, self.person, self.map_button):
            who.addWidget(widget)
        form.addRow(who)
        self.status = status()
        form.addRow(self.status)
        self.base_url = ""  # another API address (tests); not shown
        self._show_fields(self.kind.currentText())

    def _show_fields(self, kind: str) -> None:
        for name, field in self.fields.items():
            shown = any(name == key for key, _ in FIELDS[kind])
            field.setVisible(shown)
            self._labels[name].setVisible(shown)
        self._enable()

    def _enable(self) -> None:
        """Connect: the chat's fields filled. Disconnect: that chat set up. Save: a chat user of a chat set up."""
        kind = self.kind.currentText()
        self.connect_button.setEnabled(all(self.fields[name].text().strip() for name, _ in FIELDS[kind]))
        self.remove_button.setEnabled(kind in self._configured)
        self.map_button.setEnabled(kind in self._configured and bool(self.chat_user.text().strip()))

    async def load(self) -> None:
        rows = await self._client.call(api.connectors())
        self._configured = {row.name for row in rows}
        self._enable()
        lines = []
        for row in rows:
            state = (
                "connected" if row.connected else "not connected" + (f": {row.problem}" if row.problem else " (yet)")
            )
            where = f"; other requests in {row.channel}" if row.channel else ""
            lines.append(f"{row.name}: {state}{where}")
            lines += [f"    {user} is {person}" for user, person in row.people.items()]
        self.state.setText("\n".join(lines) or "No chat connected.")

    async def connect_chat(self) -> None:
        kind = self.kind.currentText()
        setup = ChatSetup(
            kind=kind,
            channel=self.channel.text().strip() or None,
            base_url=self.base_url or None,
            **{name: self.fields[name].text().strip() for name, _ in FIELDS[kind]},
        )
        try:
            connected = await self._client.call(api.add_connector(setup))
        except DaemonError as error:
            say(self.status, str(error), failed=True)
        else:
            say(self.status, f"Connected to {connected.connected_to}.")
            for name, _ in FIELDS[kind]:
                if name != "app_id":
                    self.fields[name].clear()
        await self.load()

    async def remove_chat(self) -> None:
        kind = self.kind.currentText()
        try:
            await self._client.call(api.remove_connector(kind))
        except DaemonError as error:
            say(self.status, str(error), failed=True)
        else:
            say(self.status, f"Disconnected {kind}.")
        await self.load()

    async def map_person(self) -> None:
        chat_user, person = self.chat_user.text().strip(), self.person.text().strip() or None
        try:
            await self._client.call(api.map_chat_user(self.kind.currentText(), chat_user, person))
        except DaemonError as error:
            say(self.status, str(error), failed=True)
        else:
            say(self.status, f"{chat_user} is {person or 'nobody now'}.")
        await self.load()
