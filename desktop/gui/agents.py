"""Settings → Agents: the agents in a table (their runtimes as people know them, what a runtime is missing), and a
form to add one, change the chosen one or remove it."""

from PySide6.QtCore import QEvent
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from desktop.client import DaemonError, api
from desktop.client.api import AgentSetup
from desktop.client.shapes import Agent
from desktop.client.transport import AsyncClient
from desktop.gui import style
from desktop.gui.form import bottom_bar, chosen_row, fill, say, status, table
from desktop.gui.work import Work
from desktop.runtimes import RUNTIME_NAMES

COLUMNS = ("Name", "Runtime", "Folder", "Model", "Status")


def runtime_name(runtime: str) -> str:
    return RUNTIME_NAMES.get(runtime, runtime)


class AgentsPanel(QWidget):
    def __init__(self, client: AsyncClient, work: Work) -> None:
        super().__init__()
        self._client, self.work = client, work
        self._rows: list[Agent] = []
        self.table = table(COLUMNS, stretch=COLUMNS.index("Folder"))
        self.table.itemSelectionChanged.connect(self._chosen)
        self.name, self.runtime, self.folder, self.model = QLineEdit(), QComboBox(), QLineEdit(), QLineEdit()
        self.name.setPlaceholderText("a short name people use for it, e.g. api")
        self.folder.setPlaceholderText("the folder it works in")
        self.model.setPlaceholderText("the runtime's default")
        choose = QPushButton("Choose…")
        choose.clicked.connect(self._choose_folder)
        folder_row = QHBoxLayout()
        folder_row.addWidget(self.folder, 1)
        folder_row.addWidget(choose)
        form = QFormLayout()
        form.addRow("Name", self.name)
        form.addRow("Runtime", self.runtime)
        form.addRow("Folder", folder_row)
        form.addRow("Model", self.model)
        self.add, self.change, self.remove = QPushButton("Add"), QPushButton("Save"), QPushButton("Remove")
        self.add.setToolTip("Add a new agent with this name, runtime, folder and model")
        self.change.setToolTip("Save the chosen agent's runtime, folder and model")
        self.remove.setToolTip("Remove the chosen agent")
        style.kind(self.remove, "danger")
        self.add.clicked.connect(lambda: self.work.start(self._save(added=True)))
        self.change.clicked.connect(lambda: self.work.start(self._save(added=False)))
        self.remove.clicked.connect(lambda: self.work.start(self._remove()))
        for field in (self.name, self.folder, self.model):
            field.textChanged.connect(self._enable)
        self.runtime.currentIndexChanged.connect(self._enable)
        self.status = status()
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addLayout(form)
        bar = bottom_bar(self.status, self.remove, self.add, self.change)
        bar.insertSpacing(bar.indexOf(self.add), 24)  # Remove apart from Add and Save
        layout.addLayout(bar)
        self._enable()

    async def load(self) -> None:
        if self.runtime.count() == 0:
            for runtime in await self._client.call(api.runtimes()):
                self.runtime.addItem(runtime_name(runtime), runtime)
        await self._load_rows()

    async def _load_rows(self, choose: str | None = None, keep_form: bool = False) -> None:
        """The table again, the agent `choose` (else the one chosen before) still chosen if it is there, and the
        form showing it (`keep_form`: as typed, after a refusal)."""
        before = self._chosen_agent()
        choose = choose or (before.name if before else None)
        self._rows = await self._client.call(api.agents())
        self.table.blockSignals(True)
        self.table.clearSelection()
        fill(self.table, [(a.name, runtime_name(a.runtime), a.folder, _model(a), _status(a)) for a in self._rows])
        self._colour_status()
        names = [a.name for a in self._rows]
        if choose in names:
            self.table.selectRow(names.index(choose))
        self.table.blockSignals(False)
        if keep_form:
            self._enable()
        else:
            self._chosen()

    def _colour_status(self) -> None:
        """Ready in green, what a runtime misses in amber (again when the system turns light or dark)."""
        colours = style.colours()
        for row, agent in enumerate(self._rows):
            if item := self.table.item(row, COLUMNS.index("Status")):
                item.setForeground(QColor(colours.ok if agent.status == "ready" else colours.warn))

    def changeEvent(self, event: QEvent) -> None:
        if event.type() == QEvent.Type.PaletteChange:
            self._colour_status()
        super().changeEvent(event)

    def _chosen_agent(self) -> Agent | None:
        row = chosen_row(self.table)
        return self._rows[row] if row is not None and row < len(self._rows) else None

    def _chosen(self) -> None:
        agent = self._chosen_agent()
        if agent:
            self.name.setText(agent.name)
            self.runtime.setCurrentIndex(self.runtime.findData(agent.runtime))
            self.folder.setText(agent.folder)
            self.model.setText(_model(agent))
        self._enable()

    def _enable(self) -> None:
        """Add: a new name and a folder. Save: the chosen agent's form changed. Remove: an agent chosen."""
        agent = self._chosen_agent()
        name = self._name()
        self.add.setEnabled(bool(name and self.folder.text().strip()) and name not in {a.name for a in self._rows})
        mine = agent is not None and name == agent.name
        self.change.setEnabled(
            mine
            and agent is not None
            and (agent.runtime, agent.folder, _model(agent))
            != (self.runtime.currentData(), self.folder.text().strip(), self.model.text().strip())
        )
        self.remove.setEnabled(agent is not None)

    def _name(self) -> str:
        return self.name.text().strip()

    def _setup(self) -> AgentSetup:
        """The runtime, folder and model in the form."""
        return AgentSetup(
            runtime=self.runtime.currentData(),
            folder=self.folder.text().strip(),
            model=self.model.text().strip() or None,
        )

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, "The folder the agent works in", self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    async def _save(self, added: bool) -> None:
        """Add or change the agent in the form; the daemon's answer is said under it."""
        name, setup = self._name(), self._setup()
        try:
            await self._client.call(api.add_agent(name, setup) if added else api.change_agent(name, setup))
        except DaemonError as error:
            say(self.status, str(error), failed=True)
            await self._load_rows(keep_form=True)
            return
        say(self.status, f"Added {name}." if added else "Saved.")
        await self._load_rows(choose=name if added else None)

    async def _remove(self) -> None:
        agent = self._chosen_agent()
        if agent is None:
            return
        try:
            await self._client.call(api.remove_agent(agent.name))
        except DaemonError as error:
            say(self.status, str(error), failed=True)
        else:
            say(self.status, f"Removed {agent.name}.")
            for field in (self.name, self.folder, self.model):
                field.clear()
        await self._load_rows()


def _status(agent: Agent) -> str:
    """ "ready", or what its runtime misses ("claude: not installed" → "not installed": the runtime is beside it)."""
    return agent.status.removeprefix(f"{agent.runtime}: ")


def _model(agent: Agent) -> str:
    return str(agent.options.get("model") or "")
