"""The settings window: times and switches, notifications per kind, start at login, agents, people, API keys,
where the room is reached (gui/room.py) and the chat connectors (gui/chat.py).
Every change goes through the daemon's API (the same checks and words as the CLI); start at login is this
machine's own (desktop.platform.autostart)."""

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.gui.chat import ChatPanel
from desktop.gui.room import RoomPanel
from desktop.gui.work import Work
from desktop.platform import autostart

if TYPE_CHECKING:
    import httpx


TIMES = (("approval_ttl", "Approvals expire after"), ("quiet_after", "A task is quiet after"),
         ("task_timeout", "Background tasks stop after"), ("session_wait_max", "An agent waits on a session at most"))
NOTICES = (("approval", "A request waits for my approval"), ("failed", "A request failed"),
           ("expired", "A request expired unanswered"), ("task_failed", "A background task failed"),
           ("question", "An agent asks a question"))
KEYS = {"anthropic_api_key": "Anthropic (Claude Code)", "openai_api_key": "OpenAI (Codex)",
        "gemini_api_key": "Google Gemini (Gemini CLI)", "copilot_token": "GitHub (Copilot CLI)"}
ERROR = "color: #b91c1c;"


class SettingsWindow(QWidget):
    def __init__(self, api: "httpx.AsyncClient") -> None:
        super().__init__()
        self._api = api
        self.work = Work()
        self.setWindowTitle("Coxswain settings")
        self.resize(760, 520)
        tabs = QTabWidget()
        tabs.addTab(self._general_tab(), "General")
        tabs.addTab(self._agents_tab(), "Agents")
        tabs.addTab(self._people_tab(), "People")
        tabs.addTab(self._keys_tab(), "API keys")
        self.room = RoomPanel(api, self.work)
        tabs.addTab(self.room, "Room")
        self.chat = ChatPanel(api, self.work)
        tabs.addTab(self.chat, "Chat")
        QVBoxLayout(self).addWidget(tabs)
        self.tabs = tabs

    async def load(self) -> None:
        settings = (await self._api.get("/api/settings")).json()
        for key, field in self.times.items():
            field.setText(settings[key])
        self.keep_awake.setChecked(settings["keep_awake"] == "yes")
        self.agent_sessions.setChecked(settings["agent_sessions"] == "yes")
        for kind, box in self.notices.items():
            box.blockSignals(True)
            box.setChecked(settings[f"notify_{kind}"] == "yes")
            box.blockSignals(False)
        self.start_at_login.blockSignals(True)
        self.start_at_login.setChecked(autostart.enabled())
        self.start_at_login.blockSignals(False)
        runtimes = (await self._api.get("/api/runtimes")).json()
        if self.runtime.count() == 0:
            self.runtime.addItems(list(runtimes))
        await self._load_agents()
        await self._load_people()
        await self._load_keys()
        await self.room.load()
        await self.chat.load()

    # --- general ---------------------------------------------------------------------------------------------

    def _general_tab(self) -> QWidget:
        tab = QWidget()
        form = QFormLayout(tab)
        self.times = {key: QLineEdit() for key, _ in TIMES}
        for key, label in TIMES:
            form.addRow(label, self.times[key])
        self.keep_awake = QCheckBox("Keep the computer awake while agents are working")
        form.addRow(self.keep_awake)
        self.agent_sessions = QCheckBox("Agents may start and use sessions (you approve each conversation's first)")
        form.addRow(self.agent_sessions)
        self.save_general = QPushButton("Save")
        self.save_general.clicked.connect(lambda: self.work.start(self.save()))
        self.general_status = QLabel()
        self.general_status.setWordWrap(True)
        form.addRow(self.save_general, self.general_status)
        form.addRow(QLabel("<b>Notify me when</b>"))
        self.notices = {kind: QCheckBox(label) for kind, label in NOTICES}
        for kind, box in self.notices.items():
            box.toggled.connect(lambda on, key=f"notify_{kind}": self.work.start(self._set(key, "yes" if on else "no")))
            form.addRow(box)
        self.start_at_login = QCheckBox("Start Coxswain when I log in")
        self.start_at_login.toggled.connect(self._start_at_login)
        form.addRow(self.start_at_login)
        return tab

    async def save(self) -> None:
        """Every time and switch as typed; what the daemon refuses is said, and the rest is kept."""
        current = (await self._api.get("/api/settings")).json()
        wanted = {key: field.text().strip() for key, field in self.times.items()}
        wanted["keep_awake"] = "yes" if self.keep_awake.isChecked() else "no"
        wanted["agent_sessions"] = "yes" if self.agent_sessions.isChecked() else "no"
        problems = [problem for key, value in wanted.items() if value != current[key]
                    if (problem := await self._set(key, value))]
        self.general_status.setStyleSheet(ERROR if problems else "")
        self.general_status.setText("\n".join(problems) or "Saved.")

    async def _set(self, key: str, value: str) -> str | None:
        answer = await self._api.post("/api/settings", json={"key": key, "value": value})
        return None if answer.status_code < 400 else str(answer.json().get("error", answer.text))

    def _start_at_login(self, on: bool) -> None:
        try:
            if on:
                autostart.enable()
            else:
                autostart.disable()
        except OSError as error:
            self.general_status.setStyleSheet(ERROR)
            self.general_status.setText(f"Could not change start at login: {error}")

    # --- agents ----------------------------------------------------------------------------------------------

    def _agents_tab(self) -> QWidget:
        tab = QWidget()
        self.agents = _table(("Name", "Runtime", "Folder", "Model", "Status"))
        self.agents.itemSelectionChanged.connect(self._agent_chosen)
        self.agent_name, self.runtime, self.folder, self.model = QLineEdit(), QComboBox(), QLineEdit(), QLineEdit()
        self.model.setPlaceholderText("the runtime's default")
        choose = QPushButton("Choose…")
        choose.clicked.connect(self._choose_folder)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(choose)
        form = QFormLayout()
        form.addRow("Name", self.agent_name)
        form.addRow("Runtime", self.runtime)
        form.addRow("Folder", folder_row)
        form.addRow("Model", self.model)
        buttons = QHBoxLayout()
        self.add_agent, self.change_agent, self.remove_agent = (QPushButton(t) for t in ("Add", "Save", "Remove"))
        def name() -> str:
            return self.agent_name.text().strip()

        self.add_agent.clicked.connect(lambda: self.work.start(self._agent_call(
            "/api/agents", {"name": name(), **self._agent_setup()})))
        self.change_agent.clicked.connect(lambda: self.work.start(self._agent_call(
            f"/api/agents/{name()}/change", self._agent_setup())))
        self.remove_agent.clicked.connect(lambda: self.work.start(self._agent_call(f"/api/agents/{name()}/remove", {})))
        for button in (self.add_agent, self.change_agent, self.remove_agent):
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.agent_status = QLabel()
        self.agent_status.setWordWrap(True)
        layout = QVBoxLayout(tab)
        layout.addWidget(self.agents, 1)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.agent_status)
        return tab

    async def _load_agents(self) -> None:
        rows = (await self._api.get("/api/agents")).json()
        self._agent_rows = rows
        _fill(self.agents, [(a["name"], a["runtime"], a["folder"], a["options"].get("model", ""), a["status"])
                            for a in rows])

    def _agent_chosen(self) -> None:
        row = self.agents.currentRow()
        if 0 <= row < len(self._agent_rows):
            agent = self._agent_rows[row]
            self.agent_name.setText(agent["name"])
            self.runtime.setCurrentText(agent["runtime"])
            self.folder.setText(agent["folder"])
            self.model.setText(str(agent["options"].get("model", "")))

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "The folder the agent works in", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def _agent_setup(self) -> dict[str, Any]:
        """The runtime, folder and model in the form."""
        return {"runtime": self.runtime.currentText(), "folder": self.folder.text().strip(),
                "model": self.model.text().strip() or None}

    async def _agent_call(self, path: str, body: dict[str, Any]) -> None:
        """Add, change or remove the agent in the form; the daemon's answer is said under it."""
        answer = await self._api.post(path, json=body)
        failed = answer.status_code >= 400
        self.agent_status.setStyleSheet(ERROR if failed else "")
        self.agent_status.setText(str(answer.json().get("error")) if failed else "Saved.")
        await self._load_agents()

    # --- people ----------------------------------------------------------------------------------------------

    def _people_tab(self) -> QWidget:
        tab = QWidget()
        self.people = _table(("Name", "Kind", "Added", "Revoked"))
        self.person_name = QLineEdit()
        self.person_name.setPlaceholderText("a teammate's name, e.g. sarah")
        self.add_person, self.revoke = QPushButton("Add"), QPushButton("Revoke")
        self.add_person.clicked.connect(lambda: self.work.start(self._add_person()))
        self.revoke.clicked.connect(lambda: self.work.start(self._revoke()))
        self.new_token = QLineEdit()
        self.new_token.setReadOnly(True)
        self.copy_token = QPushButton("Copy")
        self.copy_token.clicked.connect(lambda: QGuiApplication.clipboard().setText(self.new_token.text()))
        self.token_note = QLabel()
        self.token_note.setWordWrap(True)
        row = QHBoxLayout()
        for widget in (self.person_name, self.add_person, self.revoke):
            row.addWidget(widget)
        token_row = QHBoxLayout()
        token_row.addWidget(self.new_token, 1)
        token_row.addWidget(self.copy_token)
        layout = QVBoxLayout(tab)
        layout.addWidget(self.people, 1)
        layout.addLayout(row)
        layout.addLayout(token_row)
        layout.addWidget(self.token_note)
        self._show_token("", "")
        return tab

    async def _load_people(self) -> None:
        rows = [p for p in (await self._api.get("/api/people")).json() if p["kind"] != "owner"]
        self._people_rows = rows
        _fill(self.people, [(p["name"], p["kind"], p["created_at"][:16].replace("T", " "),
                             (p["revoked_at"] or "")[:16].replace("T", " ")) for p in rows])

    async def _add_person(self) -> None:
        name = self.person_name.text().strip()
        answer = await self._api.post("/api/people", json={"name": name})
        if answer.status_code >= 400:
            self._show_token("", str(answer.json().get("error")), failed=True)
        else:
            self._show_token(answer.json()["token"], f"{name}'s token, shown only this once: copy it and give it to "
                                                     f"{name}. Coxswain keeps only a hash of it.")
            self.person_name.clear()
        await self._load_people()

    async def _revoke(self) -> None:
        row = self.people.currentRow()
        if 0 <= row < len(self._people_rows):
            name = self._people_rows[row]["name"]
            answer = await self._api.post(f"/api/people/{name}/revoke", json={})
            failed = answer.status_code >= 400
            self._show_token("", answer.json().get("error") if failed else f"{name} can no longer send requests.",
                             failed=failed)
            await self._load_people()

    def _show_token(self, token: str, note: str, failed: bool = False) -> None:
        self.new_token.setText(token)
        self.new_token.setVisible(bool(token))
        self.copy_token.setVisible(bool(token))
        self.token_note.setStyleSheet(ERROR if failed else "")
        self.token_note.setText(note)

    # --- API keys --------------------------------------------------------------------------------------------

    def _keys_tab(self) -> QWidget:
        tab = QWidget()
        form = QFormLayout(tab)
        self.keyring_problem = QLabel()
        self.keyring_problem.setWordWrap(True)
        self.keyring_problem.setStyleSheet(ERROR)
        form.addRow(self.keyring_problem)
        self.keys: dict[str, tuple[QLineEdit, QLabel]] = {}
        for name, label in KEYS.items():
            field, state, save = QLineEdit(), QLabel(), QPushButton("Save")
            field.setEchoMode(QLineEdit.EchoMode.Password)
            save.clicked.connect(lambda _=False, name=name: self.work.start(self._save_key(name)))
            row = QHBoxLayout()
            row.addWidget(field, 1)
            row.addWidget(save)
            row.addWidget(state)
            form.addRow(label, row)
            self.keys[name] = (field, state)
        form.addRow(QLabel("Keys are kept in this computer's keyring (never in Coxswain's files) and handed to an "
                           "agent's CLI only in its environment."))
        return tab

    async def _load_keys(self) -> None:
        answer = await self._api.get("/api/secrets")
        listing = answer.json() if answer.status_code < 400 else {"stored": [], "problem": answer.json()["error"]}
        problem = listing.get("problem")
        self.keyring_problem.setText(f"API keys cannot be kept: {problem}" if problem else "")
        self.keyring_problem.setVisible(bool(problem))
        for name, (field, state) in self.keys.items():
            field.setEnabled(not problem)
            state.setText("stored" if name in listing["stored"] else "not set")

    async def _save_key(self, name: str) -> None:
        field, _ = self.keys[name]
        answer = await self._api.post("/api/secrets", json={"name": name, "value": field.text()})
        field.clear()
        if answer.status_code >= 400:
            self.keyring_problem.setText(str(answer.json().get("error")))
            self.keyring_problem.setVisible(True)
            return
        await self._load_keys()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape:
            self.close()
        else:
            super().keyPressEvent(event)



def _table(headers: tuple[str, ...]) -> QTableWidget:
    table = QTableWidget(0, len(headers))
    table.setHorizontalHeaderLabels(list(headers))
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.horizontalHeader().setStretchLastSection(True)
    table.verticalHeader().setVisible(False)
    return table


def _fill(table: QTableWidget, rows: list[tuple[str, ...]]) -> None:
    table.setRowCount(len(rows))
    for r, row in enumerate(rows):
        for c, text in enumerate(row):
            table.setItem(r, c, QTableWidgetItem(str(text)))
