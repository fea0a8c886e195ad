"""The tray's menu as a desktop shell draws it when Qt exports it over D-Bus: a StatusNotifierWatcher on a private
session bus (as KDE and GNOME's AppIndicator extension have), the tray app's Tray on a real X display (Xvfb, xcb),
and its menu's labels read as the shell reads them (com.canonical.dbusmenu GetLayout). Qt 6 hands over each item's
text with only its first `&` turned into dbusmenu's `_` mnemonic; the shell drops a lone `_`. The tray's balloon goes
to the notification server, whose body is markup."""

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from typing import Any

from tests.fakes.dbus import FakeNotifications, FakeStatusNotifierWatcher, dbusmenu_labels, private_bus, serve, until
from tests.gui.test_gui_desktop import Screen, screen
from tests.hostile_text import BY_NAME, CORPUS, label_shows

__all__ = ["screen"]
TRAY = """
import json, sys
from datetime import date
from PySide6.QtWidgets import QApplication
from desktop.gui.summary import summarize
from desktop.gui.tray import Tray

app = QApplication([])
tray = Tray(lambda verb, request_id: None)
tray.show_summary(summarize(json.loads(sys.argv[1]), today=date(2026, 11, 29)))
tray.show()
print("shown", flush=True)
tray.balloon("Coxswain", sys.argv[2])
app.exec()
"""


def test_the_shell_draws_each_prompt_in_the_tray_menu_as_written(screen: Screen) -> None:
    requests = [
        {
            "id": f"R20261129-{n:02d}",
            "state": "pending",
            "agent": "shell",
            "requester": "sarah",
            "progress": None,
            "prompt": h.text,
        }
        for n, h in enumerate(CORPUS, 1)
    ]
    with private_bus() as address:
        env = {**screen.env, "QT_QPA_PLATFORM": "xcb", "DBUS_SESSION_BUS_ADDRESS": address}
        env.pop("QT_QPA_PLATFORMTHEME", None)

        async def scenario() -> list[str]:
            watcher, notifications = FakeStatusNotifierWatcher(), FakeNotifications()
            bus = await serve(address, "org.kde.StatusNotifierWatcher", "/StatusNotifierWatcher", watcher)
            server = await serve(
                address, "org.freedesktop.Notifications", "/org/freedesktop/Notifications", notifications
            )
            tray = subprocess.Popen(
                [sys.executable, "-c", TRAY, json.dumps(requests), BY_NAME["markup"].text],
                env=env,
                stdout=subprocess.PIPE,
                text=True,
            )
            try:
                assert tray.stdout is not None
                assert (await asyncio.to_thread(tray.stdout.readline)).strip() == "shown"
                await until(lambda: watcher.items)
                await until(lambda: notifications.shown)  # the balloon: Qt sends it to the notification server
                assert notifications.shown[0].seen == BY_NAME["markup"].seen, notifications.shown[0].body
                return await dbusmenu_labels(bus, watcher.items[0])
            finally:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(tray.pid, signal.SIGTERM)
                tray.wait(10)
                bus.disconnect()
                server.disconnect()

        labels: list[Any] = asyncio.run(scenario())
    shown = [label_shows(label) for label in labels if label not in ("Approve", "Deny", "Review…")]
    assert shown[0] == f"{len(CORPUS)} waiting"  # the status line
    items = shown[1 : len(CORPUS) + 1]
    assert [item.split(": ", 1)[0] for item in items] == [f"R-{n:02d} · shell · sarah" for n in range(1, 11)]
    for item, h in zip(items, CORPUS, strict=True):  # all of its first line, or as much as the menu's width holds
        prompt = item.split(": ", 1)[1]
        assert prompt == h.first or (prompt.endswith("…") and len(prompt) > 20 and h.seen.startswith(prompt[:-1]))
    assert shown[len(CORPUS) + 1 :] == [
        "Open console",
        "Pause all agents",
        "Room: starting…",
        "Settings…",
        "Quit Coxswain",
    ]
