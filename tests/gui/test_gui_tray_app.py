"""The tray in the running app, with its daemon: a left click brings the console forward; a background task that
runs shows in the status line, the menu and the tooltip, and its menu entry opens it in the console and stops it."""

from typing import Any

from PySide6.QtWidgets import QSystemTrayIcon

from tests.fakes.dbus import until
from tests.gui.test_gui_tray import actions, texts
from tests.gui_fixture import run


def test_a_left_click_on_the_tray_icon_opens_the_console(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        app.tray.activated.emit(QSystemTrayIcon.ActivationReason.Context)  # the menu's click: the shell shows it
        app.tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
        await until(lambda: app.console is not None and app.console.isVisible())
        assert app.console.windowTitle() == "Coxswain"

    run(qloop, scenario())


def test_a_running_task_is_in_the_menu_and_tooltip_and_stops_from_there(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        task = (
            await app.api.post(
                "/api/tasks", json={"agent": "shell", "command": "sleep 300", "description": "watch the build"}
            )
        ).json()
        label = f"{task['id']} · shell: watch the build"
        await until(lambda: label in texts(app.tray.menu))
        assert texts(app.tray.menu)[:3] == ["1 task", "— Background tasks —", label]
        assert app.tray.toolTip().splitlines() == [
            "Coxswain: 1 task",
            f"{task['id']} · shell · watch the build · just started",
        ]

        actions(app.tray.menu)[f"{label} / Open in console"].trigger()
        await until(
            lambda: app.console is not None and app.console.isVisible() and app.console.chosen == ("task", task["id"])
        )

        actions(app.tray.menu)[f"{label} / Stop"].trigger()
        await until(lambda: texts(app.tray.menu)[0] == "Nothing running", timeout=60)
        assert (await app.api.get(f"/api/tasks/{task['id']}")).json()["state"] == "ended"
        assert label not in texts(app.tray.menu) and app.tray.toolTip() == "Coxswain: nothing running"

    run(qloop, scenario())
