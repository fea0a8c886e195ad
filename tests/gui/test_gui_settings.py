"""The settings window on a real daemon (offscreen), as a person sees it: centred on the screen; each tab's Save at
the bottom in the accent colour, to press only once something changed; the daemon's refusals naming the field by its
label; tables whose headers and rows read on one line; runtimes as people know them; times as this computer writes
them; buttons that act on a row only once one is chosen. Also start at login, agents added, changed and removed, a
teammate's token shown once and copied, and API keys in a real keyring."""

from pathlib import Path
from typing import Any

import httpx
from PySide6.QtGui import QColor, QFontMetrics, QGuiApplication
from PySide6.QtWidgets import QPushButton, QTableWidget, QWidget

from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run


def shot(window: Any, tab: QWidget, name: str) -> None:
    window.tabs.setCurrentWidget(tab)
    SHOTS.mkdir(parents=True, exist_ok=True)
    window.grab().save(str(SHOTS / name))


def top(widget: QWidget, window: QWidget) -> int:
    return widget.mapTo(window, widget.rect().topLeft()).y()


def bottom(widget: QWidget, window: QWidget) -> int:
    return widget.mapTo(window, widget.rect().bottomLeft()).y()


def assert_save_at_the_bottom(save: QPushButton, last_row: QWidget, window: QWidget) -> None:
    """Below the tab's last row, at the right."""
    assert save.text() == "Save" and save.isVisibleTo(window)
    assert top(save, window) > bottom(last_row, window), "Save is below the last row"
    right = save.mapTo(window, save.rect().topRight()).x()
    assert right > last_row.mapTo(window, last_row.rect().topRight()).x() - 20, "at the right"


def painted(button: QPushButton, colour: str) -> bool:
    """Some of the button is drawn in `colour` (its fill, or its text's strokes)."""
    image = button.grab().toImage()
    return any(image.pixelColor(x, y) == QColor(colour) for x in range(image.width()) for y in range(image.height()))


def filled(button: QPushButton) -> bool:
    """Drawn in the accent colour, as the tab's button to press (and only while it can be pressed)."""
    from desktop.gui import style

    return painted(button, style.colours().accent)


def red(button: QPushButton) -> bool:
    """Worded in the colour of danger, as a button that takes something away (and only while it can)."""
    from desktop.gui import style

    return painted(button, style.colours().bad)


def cell(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    assert item is not None, (row, column)
    return item.text()


def header_text(table: QTableWidget, column: int) -> str:
    item = table.horizontalHeaderItem(column)
    assert item is not None, column
    return item.text()


def assert_one_line(table: QTableWidget) -> None:
    """Every header whole; every column but the stretched one as wide as its texts; rows and header one line high."""
    header, metrics = table.horizontalHeader(), QFontMetrics(table.font())
    line = metrics.lineSpacing()
    assert header.height() < 2 * line, "headers do not wrap"
    stretch = table.property("stretch")
    for column in range(table.columnCount()):
        title = header_text(table, column)
        assert header.sectionSize(column) >= header.fontMetrics().horizontalAdvance(title), f"{title} is cut"
        if column != stretch:
            for row in range(table.rowCount()):
                text = cell(table, row, column)
                assert header.sectionSize(column) >= metrics.horizontalAdvance(text), f"{title}: {text!r} is cut"
    for row in range(table.rowCount()):
        assert table.rowHeight(row) < 2 * line + 4, "rows do not wrap"


def test_the_window_opens_centred_on_the_screen(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        await until(window.isVisible)
        free = QGuiApplication.primaryScreen().availableGeometry()
        centre = window.frameGeometry().center()
        assert abs(centre.x() - free.center().x()) <= 2 and abs(centre.y() - free.center().y()) <= 2

    run(qloop, scenario())


def test_times_and_switches_are_saved_or_refused_in_words(
    desktop: Any, qloop: Any, tmp_path: Path, monkeypatch: Any
) -> None:
    app, _ = desktop
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    async def scenario() -> None:
        window = await app.open_settings()
        general = window.tabs.widget(0)
        assert window.times["approval_ttl"].text() == "24h" and window.notices["failed"].isChecked()
        assert_save_at_the_bottom(window.save_general, window.notices["question"], general)
        assert not window.save_general.isEnabled() and not filled(window.save_general), "nothing to save yet"
        window.times["approval_ttl"].setText("2h")
        assert window.save_general.isEnabled() and filled(window.save_general)
        window.times["approval_ttl"].setText("24h")
        assert not window.save_general.isEnabled(), "back as it was: nothing to save"

        window.times["approval_ttl"].setText("2h")
        window.times["quiet_after"].setText("99y")
        window.keep_awake.setChecked(True)
        window.save_general.click()
        await until(lambda: window.general_status.text())
        settings = (await app.api.get("/api/settings")).json()
        assert (settings["approval_ttl"], settings["quiet_after"], settings["keep_awake"]) == ("2h", "10m", "yes")
        refusal = window.general_status.text()
        assert refusal.startswith("A task is quiet after: '99y' is not a duration") and "quiet_after" not in refusal
        assert window.general_status.property("kind") == "error"
        assert window.save_general.isEnabled(), "what was refused is still to save"
        shot(window, general, "settings-general-refused.png")
        window.times["quiet_after"].setText("10m")
        assert not window.save_general.isEnabled(), "the rest was saved"

        window.times["session_wait_max"].setText("1m")
        window.save_general.click()
        await until(lambda: window.general_status.text().startswith("An agent waits on a session at most: '1m'"))

        window.times["session_wait_max"].setText("10m")
        assert window.times["max_turn"].text() == "2h"
        window.times["max_turn"].setText("3m")
        window.save_general.click()
        await until(lambda: window.general_status.text().startswith("Max turn duration: '3m' is out of range"))
        window.times["max_turn"].setText("90m")
        window.notices["failed"].setChecked(False)
        window.start_at_login.setChecked(True)
        window.save_general.click()
        await until(lambda: window.general_status.text() == "Saved.")
        assert window.general_status.property("kind") == ""
        assert (await app.api.get("/api/settings")).json()["max_turn"] == "90m"
        await until(lambda: app.settings.get("notify_failed") == "no")  # the app heard it from the daemon
        assert (tmp_path / "config" / "autostart" / "coxswain.desktop").exists()
        assert not window.save_general.isEnabled() and not filled(window.save_general)
        shot(window, general, "settings-general.png")
        window.start_at_login.setChecked(False)
        assert window.general_status.text() == "", "'Saved.' is about what was saved before this change"
        await window.save()
        assert not (tmp_path / "config" / "autostart" / "coxswain.desktop").exists()

    run(qloop, scenario())


def test_agents_are_added_changed_and_removed(desktop: Any, qloop: Any, tmp_path: Path) -> None:
    from desktop.gui import style
    from desktop.runtimes import RUNTIME_NAMES, builtin_runtimes

    app, _ = desktop
    folder = tmp_path / "projects" / "a-folder-with-a-rather-long-name-that-needs-room" / "api"
    folder.mkdir(parents=True)

    async def scenario() -> None:
        window = await app.open_settings()
        panel = window.agents
        window.tabs.setCurrentWidget(panel)
        assert set(RUNTIME_NAMES) == set(builtin_runtimes()), "every runtime has a name people know"
        assert [panel.runtime.itemText(i) for i in range(panel.runtime.count())] == [
            "Claude Code",
            "Codex",
            "Copilot CLI",
            "Gemini CLI",
            "Shell",
        ]
        assert cell(panel.table, 0, 1) == "Shell"
        status = panel.table.item(0, 4)
        assert status is not None and status.foreground().color() == QColor(style.colours().ok), "ready in green"
        assert not panel.remove.isEnabled() and not panel.change.isEnabled(), "no agent chosen"
        assert not red(panel.remove) and not filled(panel.change)
        assert not panel.add.isEnabled(), "no name yet"

        panel.name.setText("api")
        panel.runtime.setCurrentText("Claude Code")
        panel.folder.setText(str(folder))
        panel.model.setText("claude-sonnet-4-5")
        assert panel.add.isEnabled() and not filled(panel.add), "Save is the one filled"
        panel.add.click()
        await until(lambda: panel.table.rowCount() == 2)
        row = [cell(panel.table, 0, c) for c in range(5)]  # sorted by name: api, shell
        assert row[:4] == ["api", "Claude Code", str(folder), "claude-sonnet-4-5"]
        assert row[4].endswith(("not installed", "no API key")), "what is missing is said"
        assert panel.status.text() == "Added api."
        assert (await app.api.get("/api/agents")).json()[0]["runtime"] == "claude", "the API's word is the same"
        assert_one_line(panel.table)
        shot(window, panel, "settings-agents.png")

        assert panel.table.selectionModel().isRowSelected(0), "the agent just added is the one chosen"
        assert panel.remove.isEnabled() and not panel.change.isEnabled() and not panel.add.isEnabled()
        assert red(panel.remove)
        panel.table.selectRow(1)
        assert panel.name.text() == "shell" and panel.runtime.currentText() == "Shell"
        panel.table.selectRow(0)
        assert panel.name.text() == "api" and panel.model.text() == "claude-sonnet-4-5"
        panel.runtime.setCurrentText("Shell")
        assert panel.change.isEnabled() and filled(panel.change)
        panel.change.click()
        await until(lambda: cell(panel.table, 0, 1) == "Shell")
        assert cell(panel.table, 0, 4) == "ready" and not panel.change.isEnabled()
        panel.folder.setText("relative/folder")
        panel.change.click()
        await until(lambda: "absolute path" in panel.status.text())
        assert panel.status.property("kind") == "error"
        assert panel.table.selectionModel().isRowSelected(0), "still chosen after a refusal"
        assert panel.folder.text() == "relative/folder", "what was refused stays as typed"
        panel.remove.click()
        await until(lambda: panel.table.rowCount() == 1)
        assert [a["name"] for a in (await app.api.get("/api/agents")).json()] == ["shell"]
        assert not panel.remove.isEnabled(), "nothing chosen"

    run(qloop, scenario())


def test_a_teammates_token_is_shown_once_copied_and_revoked(desktop: Any, qloop: Any, qapp: Any) -> None:
    from desktop.gui import style

    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        panel = window.people
        window.tabs.setCurrentWidget(panel)
        assert not panel.add.isEnabled() and not panel.revoke.isEnabled()
        assert not filled(panel.add) and not red(panel.revoke)
        panel.name.setText("sarah")
        panel.add.click()
        await until(lambda: not panel.token.isHidden() and panel.token.text())
        assert "shown only this once" in panel.note.text()
        assert not panel.revoke.isEnabled(), "no one chosen"
        panel.copy.click()
        token = qapp.clipboard().text()
        assert token == panel.token.text()
        person = (await app.api.get("/api/people")).json()[-1]
        assert cell(panel.table, 0, 2) == style.when(person["created_at"]), "in this computer's format"
        async with httpx.AsyncClient(base_url=app.daemon.url, headers={"Authorization": f"Bearer {token}"}) as sarah:
            assert (await sarah.get("/api/health")).json()["you"] == "sarah"
            panel.table.selectRow(0)
            assert panel.revoke.isEnabled() and red(panel.revoke)
            panel.revoke.click()
            await until(lambda: cell(panel.table, 0, 3) != "")
            assert panel.token.isHidden(), "the token is not shown again"
            assert (await sarah.get("/api/health")).status_code == 401
        revoked = (await app.api.get("/api/people")).json()[-1]["revoked_at"]
        assert cell(panel.table, 0, 3) == style.when(revoked)
        assert not panel.revoke.isEnabled() and not red(panel.revoke), "sarah's token works no more: nothing to revoke"
        assert_one_line(panel.table)
        shot(window, panel, "settings-people.png")
        panel.name.setText("bad name!")
        panel.add.click()
        await until(lambda: "bad name" in panel.note.text())
        assert panel.note.property("kind") == "error"

    run(qloop, scenario())


def test_without_a_keyring_api_keys_are_refused_in_words(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        assert window.keyring_problem.text().startswith("API keys cannot be kept: no secure keyring is available")
        assert not window.keys["anthropic_api_key"][0].isEnabled() and not window.save_keys.isEnabled()
        tab = window.tabs.widget(3)
        window.tabs.setCurrentWidget(tab)
        assert_save_at_the_bottom(window.save_keys, window.keys["copilot_token"][0], tab)
        assert not filled(window.save_keys)
        shot(window, tab, "settings-keys.png")

    run(qloop, scenario())


def test_api_keys_go_to_the_real_keyring(desktop_with_keyring: Any, qloop: Any) -> None:
    app = desktop_with_keyring

    async def scenario() -> None:
        window = await app.open_settings()
        assert window.keyring_problem.isHidden(), window.keyring_problem.text()
        field, state = window.keys["anthropic_api_key"]
        assert state.text() == "not set" and not window.save_keys.isEnabled()
        field.setText("sk-ant-api03-" + "x" * 40)
        assert window.save_keys.isEnabled() and filled(window.save_keys)
        window.tabs.setCurrentIndex(3)
        window.save_keys.click()
        await until(lambda: state.text() == "stored")
        assert field.text() == "" and not window.save_keys.isEnabled()
        assert (await app.api.get("/api/secrets")).json()["stored"] == ["anthropic_api_key"]
        database = (app.daemon.home.database).read_bytes()
        assert b"x" * 40 not in database, "never in the database"

    run(qloop, scenario())


def test_the_rooms_save_and_refusals(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        panel = window.room
        window.tabs.setCurrentWidget(panel)
        assert_save_at_the_bottom(panel.save, panel.certificate, panel)
        assert not panel.save.isEnabled() and not filled(panel.save)
        panel.port.setText("80")
        assert panel.save.isEnabled() and filled(panel.save)
        panel.save.click()
        await until(lambda: panel.status.text())
        assert panel.status.text() == "HTTPS port: '80' is not a port number from 1024 to 65535"
        assert panel.status.property("kind") == "error"
        shot(window, panel, "settings-room-refused.png")
        panel.port.setText("7432")
        assert not panel.save.isEnabled()

    run(qloop, scenario())


def test_chat_buttons_wait_for_what_they_need(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        panel = window.chat
        window.tabs.setCurrentWidget(panel)
        panel.kind.setCurrentText("slack")
        assert not panel.connect_button.isEnabled() and not panel.remove_button.isEnabled()
        assert not panel.map_button.isEnabled()
        panel.fields["app_token"].setText("xapp-1")
        assert not panel.connect_button.isEnabled(), "the bot token is missing"
        panel.fields["bot_token"].setText("xoxb-1")
        assert panel.connect_button.isEnabled()
        panel.chat_user.setText("U1")
        assert not panel.map_button.isEnabled(), "no Slack is set up to map its users"
        shot(window, panel, "settings-chat.png")

    run(qloop, scenario())


def test_dark_settings_follow_the_system(desktop: Any, qloop: Any, qapp: Any, monkeypatch: Any) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPalette

    from desktop.gui import style

    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        panel = window.agents
        monkeypatch.setattr(style, "dark", lambda: True)
        qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        try:
            await until(lambda: qapp.palette().color(QPalette.ColorRole.Window) == QColor(style.DARK.bg), 5)
            status = panel.table.item(0, 4)
            assert status is not None and status.foreground().color() == QColor(style.DARK.ok), "ready, in dark green"
            panel.table.selectRow(0)
            assert red(panel.remove)
            shot(window, panel, "settings-agents-dark.png")
            shot(window, window.tabs.widget(0), "settings-general-dark.png")
            box = window.keep_awake
            box.setChecked(False)
            picture = box.grab().toImage()  # an unticked box is drawn, its outline apart from the window
            outline = QColor(style.DARK.muted)
            assert any(picture.pixelColor(x, y) == outline for x in range(20) for y in range(picture.height()))
        finally:
            monkeypatch.setattr(style, "dark", lambda: False)
            qapp.styleHints().colorSchemeChanged.emit(Qt.ColorScheme.Light)
            await until(lambda: qapp.palette().color(QPalette.ColorRole.Window) == QColor(style.LIGHT.bg), 5)

    run(qloop, scenario())
