"""The settings window: times and switches, notifications per kind and start at login (General), agents
(gui/agents.py), people (gui/people.py), API keys, where the room is reached (gui/room.py) and the chat connectors
(gui/chat.py). Every change goes through the daemon's API (the same checks and words as the CLI, its keys replaced
by the labels shown); start at login is this machine's own (desktop.platform.autostart)."""

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLineEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.client import DaemonError, api
from desktop.client.transport import AsyncClient
from desktop.gui import style
from desktop.gui.agents import AgentsPanel
from desktop.gui.chat import ChatPanel
from desktop.gui.form import bottom_bar, heading, labelled, say, status
from desktop.gui.people import PeoplePanel
from desktop.gui.room import RoomPanel
from desktop.gui.work import Work
from desktop.platform import autostart
from desktop.runtimes import RUNTIME_NAMES

TIMES = (
    ("approval_ttl", "Approvals expire after"),
    ("quiet_after", "A task is quiet after"),
    ("task_timeout", "Background tasks stop, idle, after"),
    ("max_turn", "Max turn duration"),
    ("session_wait_max", "An agent waits on a session at most"),
)
SWITCHES = (
    ("keep_awake", "Keep the computer awake while agents are working"),
    ("agent_sessions", "Agents may start and use sessions (you approve each conversation's first)"),
)
NOTICES = (
    ("approval", "A request waits for my approval"),
    ("failed", "A request failed"),
    ("expired", "A request expired unanswered"),
    ("task_failed", "A background task failed"),
    ("question", "An agent asks a question"),
    ("turn_completed", "A turn completed: done or failed, background continuations too"),
)
LABELS = dict(TIMES) | dict(SWITCHES) | {f"notify_{kind}": f"Notify me when: {label}" for kind, label in NOTICES}
KEYS = {
    "anthropic_api_key": f"Anthropic ({RUNTIME_NAMES['claude']})",
    "openai_api_key": "OpenAI (Codex)",
    "gemini_api_key": f"Google Gemini ({RUNTIME_NAMES['gemini']})",
    "copilot_token": f"GitHub ({RUNTIME_NAMES['copilot']})",
}
AT_LOGIN = "start_at_login"  # this machine's, not the daemon's


class SettingsWindow(QWidget):
    def __init__(self, client: AsyncClient) -> None:
        super().__init__()
        self._client = client
        self.work = Work()
        self.setWindowTitle("Coxswain settings")
        self.resize(820, 560)
        self._placed = False  # centred on the screen when first shown, laid out
        self._saved: dict[str, str] = {}  # the General tab's values as the daemon has them
        tabs = QTabWidget()
        tabs.addTab(self._general_tab(), "General")
        self.agents = AgentsPanel(client, self.work)
        tabs.addTab(self.agents, "Agents")
        self.people = PeoplePanel(client, self.work)
        tabs.addTab(self.people, "People")
        tabs.addTab(self._keys_tab(), "API keys")
        self.room = RoomPanel(client, self.work)
        tabs.addTab(self.room, "Room")
        self.chat = ChatPanel(client, self.work)
        tabs.addTab(self.chat, "Chat")
        QVBoxLayout(self).addWidget(tabs)
        self.tabs = tabs
        for layout in self.findChildren(QLayout):  # sized without what was hidden before the window was first shown
            layout.invalidate()

    async def load(self) -> None:
        settings = await self._client.call(api.settings())
        self._saved = self._general_values(settings)
        for key, field in self.times.items():
            field.setText(settings[key])
        for key, box in self._boxes().items():
            box.setChecked(self._saved[key] == "yes")
        await self.agents.load()
        await self.people.load()
        await self._load_keys()
        await self.room.load()
        await self.chat.load()
        self._general_changed()

    # --- general ---------------------------------------------------------------------------------------------

    def _general_tab(self) -> QWidget:
        tab = QWidget()
        form = QFormLayout()
        self.times = {key: QLineEdit() for key, _ in TIMES}
        for key, label in TIMES:
            form.addRow(label, self.times[key])
            self.times[key].textChanged.connect(self._general_changed)
        self.keep_awake, self.agent_sessions = (QCheckBox(label) for _, label in SWITCHES)
        self.start_at_login = QCheckBox("Start Coxswain when I log in")
        for box in (self.keep_awake, self.agent_sessions, self.start_at_login):
            form.addRow(box)
        form.addRow(heading("Notify me when"))
        self.notices = {kind: QCheckBox(label) for kind, label in NOTICES}
        for box in self.notices.values():
            form.addRow(box)
        for box in self._boxes().values():
            box.toggled.connect(self._general_changed)
        self.save_general = QPushButton("Save")
        self.save_general.clicked.connect(lambda: self.work.start(self.save()))
        self.general_status = status()
        layout = QVBoxLayout(tab)
        layout.addLayout(form)
        layout.addStretch(1)
        layout.addLayout(bottom_bar(self.general_status, self.save_general))
        return tab

    def _boxes(self) -> dict[str, QCheckBox]:
        return {
            "keep_awake": self.keep_awake,
            "agent_sessions": self.agent_sessions,
            **{f"notify_{kind}": box for kind, box in self.notices.items()},
            AT_LOGIN: self.start_at_login,
        }

    def _general_values(self, settings: dict[str, str]) -> dict[str, str]:
        keys = [key for key, _ in TIMES] + [key for key in self._boxes() if key != AT_LOGIN]
        return {**{key: settings[key] for key in keys}, AT_LOGIN: "yes" if autostart.enabled() else "no"}

    def _wanted(self) -> dict[str, str]:
        return {
            **{key: field.text().strip() for key, field in self.times.items()},
            **{key: "yes" if box.isChecked() else "no" for key, box in self._boxes().items()},
        }

    def _general_changed(self) -> None:
        """Save is there to press only while the tab differs from what is saved; words of a save done are old now."""
        changed = self._wanted() != self._saved
        self.save_general.setEnabled(changed)
        if changed and self.general_status.property("kind") != "error":
            self.general_status.clear()

    async def save(self) -> None:
        """Everything on the tab as it is; what the daemon refuses is said by its label, and the rest is kept."""
        self.save_general.setEnabled(False)
        wanted = self._wanted()
        problems = [
            problem
            for key, value in wanted.items()
            if value != self._saved.get(key)
            if (problem := await self._set(key, value))
        ]
        self._saved = self._general_values(await self._client.call(api.settings()))
        say(self.general_status, "\n".join(problems) or "Saved.", failed=bool(problems))
        self._general_changed()

    async def _set(self, key: str, value: str) -> str | None:
        if key == AT_LOGIN:
            try:
                if value == "yes":
                    autostart.enable()
                else:
                    autostart.disable()
            except OSError as error:
                return f"Could not change start at login: {error}"
            return None
        try:
            await self._client.call(api.change_setting(key, value))
        except DaemonError as error:
            return labelled(str(error), LABELS)
        return None

    # --- API keys --------------------------------------------------------------------------------------------

    def _keys_tab(self) -> QWidget:
        tab = QWidget()
        self.keyring_problem = status()
        style.kind(self.keyring_problem, "error")
        form = QFormLayout()
        self.keys: dict[str, tuple[QLineEdit, QLabel]] = {}
        for name, label in KEYS.items():
            field, state = QLineEdit(), QLabel()
            field.setEchoMode(QLineEdit.EchoMode.Password)
            field.setPlaceholderText("paste a new key to store it")
            field.textChanged.connect(self._keys_changed)
            style.kind(state, "muted")
            row = QHBoxLayout()
            row.addWidget(field, 1)
            row.addWidget(state)
            form.addRow(label, row)
            self.keys[name] = (field, state)
        about = QLabel(
            "Keys are kept in this computer's keyring (never in Coxswain's files) and handed to an agent's "
            "CLI only in its environment."
        )
        about.setWordWrap(True)
        style.kind(about, "muted")
        self.save_keys = QPushButton("Save")
        self.save_keys.clicked.connect(lambda: self.work.start(self.store_keys()))
        self.keys_status = status()
        layout = QVBoxLayout(tab)
        layout.addWidget(self.keyring_problem)
        layout.addLayout(form)
        layout.addWidget(about)
        layout.addStretch(1)
        layout.addLayout(bottom_bar(self.keys_status, self.save_keys))
        return tab

    def _keys_changed(self) -> None:
        self.save_keys.setEnabled(any(field.isEnabled() and field.text() for field, _ in self.keys.values()))

    async def _load_keys(self) -> None:
        try:
            listing = await self._client.call(api.secrets())
            stored, problem = listing.stored, listing.problem
        except DaemonError as error:
            stored, problem = [], str(error)
        self.keyring_problem.setText(f"API keys cannot be kept: {problem}" if problem else "")
        self.keyring_problem.setVisible(bool(problem))
        for name, (field, state) in self.keys.items():
            field.setEnabled(not problem)
            state.setText("stored" if name in stored else "not set")
        self._keys_changed()

    async def store_keys(self) -> None:
        """Each key typed goes to the keyring (and leaves the window); a refusal is said with the key's label."""
        self.save_keys.setEnabled(False)
        problems = [
            problem for name, (field, _) in self.keys.items() if field.text() if (problem := await self._save_key(name))
        ]
        say(self.keys_status, "\n".join(problems) or "Saved in the keyring.", failed=bool(problems))
        await self._load_keys()

    async def _save_key(self, name: str) -> str | None:
        field, _ = self.keys[name]
        call = api.set_secret(name, field.text())
        field.clear()
        try:
            await self._client.call(call)
        except DaemonError as error:
            return f"{KEYS[name]}: {error}"
        return None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)

    def showEvent(self, event: Any) -> None:
        if not self._placed:
            self._placed = True
            style.centre(self)
        super().showEvent(event)
