"""The settings window on a real daemon (offscreen): times and switches with the daemon's own error words, start at
login, agents added, changed and removed, a teammate's token shown once and copied, and API keys in a real keyring."""

from pathlib import Path
from typing import Any

import httpx

from tests.fake_dbus import until
from tests.gui_fixture import SHOTS, run


def test_times_and_switches_are_saved_or_refused_in_words(desktop: Any, qloop: Any, tmp_path: Path,
                                                          monkeypatch: Any) -> None:
    app, _ = desktop
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))

    async def scenario() -> None:
        window = await app.open_settings()
        assert window.times["approval_ttl"].text() == "24h" and window.notices["failed"].isChecked()
        window.times["approval_ttl"].setText("2h")
        window.times["quiet_after"].setText("99y")
        window.keep_awake.setChecked(True)
        await window.save()
        settings = (await app.api.get("/api/settings")).json()
        assert (settings["approval_ttl"], settings["quiet_after"], settings["keep_awake"]) == ("2h", "10m", "yes")
        assert window.general_status.text().startswith("quiet_after: '99y'")
        window.notices["failed"].setChecked(False)
        await until(lambda: app.settings.get("notify_failed") == "no")  # the app heard it from the daemon
        window.start_at_login.setChecked(True)
        assert (tmp_path / "config" / "autostart" / "coxswain.desktop").exists()
        window.start_at_login.setChecked(False)
        assert not (tmp_path / "config" / "autostart" / "coxswain.desktop").exists()
        SHOTS.mkdir(parents=True, exist_ok=True)
        window.grab().save(str(SHOTS / "settings.png"))

    run(qloop, scenario())


def test_agents_are_added_changed_and_removed(desktop: Any, qloop: Any, tmp_path: Path) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        window.agent_name.setText("api")
        window.runtime.setCurrentText("claude")
        window.folder.setText(str(tmp_path))
        window.model.setText("claude-sonnet-4-5")
        window.add_agent.click()
        await until(lambda: window.agents.rowCount() == 2)
        row = [window.agents.item(0, c).text() for c in range(5)]  # sorted by name: api, shell
        assert row[:4] == ["api", "claude", str(tmp_path), "claude-sonnet-4-5"]
        assert row[4].endswith(("not installed", "no API key")), "what is missing is said"
        window.agents.selectRow(0)
        assert window.agent_name.text() == "api" and window.model.text() == "claude-sonnet-4-5"
        window.runtime.setCurrentText("shell")
        window.change_agent.click()
        await until(lambda: window.agents.item(0, 1).text() == "shell")
        assert window.agents.item(0, 4).text() == "ready"
        window.folder.setText("relative/folder")
        window.change_agent.click()
        await until(lambda: "absolute path" in window.agent_status.text())
        window.remove_agent.click()
        await until(lambda: window.agents.rowCount() == 1)
        assert [a["name"] for a in (await app.api.get("/api/agents")).json()] == ["shell"]

    run(qloop, scenario())


def test_a_teammates_token_is_shown_once_copied_and_revoked(desktop: Any, qloop: Any, qapp: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        window.person_name.setText("sarah")
        window.add_person.click()
        await until(lambda: not window.new_token.isHidden() and window.new_token.text())
        assert "shown only this once" in window.token_note.text()
        window.copy_token.click()
        token = qapp.clipboard().text()
        assert token == window.new_token.text()
        async with httpx.AsyncClient(base_url=app.daemon.url, headers={"Authorization": f"Bearer {token}"}) as sarah:
            assert (await sarah.get("/api/health")).json()["you"] == "sarah"
            window.people.selectRow(0)
            window.revoke.click()
            await until(lambda: window.people.item(0, 3).text() != "")
            assert window.new_token.isHidden(), "the token is not shown again"
            assert (await sarah.get("/api/health")).status_code == 401
        window.person_name.setText("bad name!")
        window.add_person.click()
        await until(lambda: "bad name" in window.token_note.text())

    run(qloop, scenario())


def test_without_a_keyring_api_keys_are_refused_in_words(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        assert window.keyring_problem.text().startswith("API keys cannot be kept: no secure keyring is available")
        assert not window.keys["anthropic_api_key"][0].isEnabled()

    run(qloop, scenario())


def test_api_keys_go_to_the_real_keyring(desktop_with_keyring: Any, qloop: Any) -> None:
    app = desktop_with_keyring

    async def scenario() -> None:
        window = await app.open_settings()
        assert window.keyring_problem.isHidden(), window.keyring_problem.text()
        field, state = window.keys["anthropic_api_key"]
        assert state.text() == "not set"
        field.setText("sk-ant-api03-" + "x" * 40)
        window.tabs.setCurrentIndex(3)
        await window._save_key("anthropic_api_key")
        assert state.text() == "stored" and field.text() == ""
        assert (await app.api.get("/api/secrets")).json()["stored"] == ["anthropic_api_key"]
        database = (app.daemon.home.database).read_bytes()
        assert b"x" * 40 not in database, "never in the database"

    run(qloop, scenario())
