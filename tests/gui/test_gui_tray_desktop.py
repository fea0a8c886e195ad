"""The tray on a real X display with a real tray host (Xvfb and trayer, its panel dark), the app started as the README
starts it and driven with xdotool: the icon as the panel shows it, read by its pixels (idle a disc; a task running
and a request waiting: the ring, and the red badge beside it); a left click opens the console; a right click opens
the menu (also while the balloon shows), which starts with the status line and is no wider than 400 px on the
screen with a long prompt waiting.
Screenshots go to .cache/screenshots."""

import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from PySide6.QtGui import QImage

from tests.gui.test_gui_desktop import Screen, screen, tray_app, wait_for

__all__ = ["screen"]
SLATE, BADGE = (0x64, 0x74, 0x8B), (0xDC, 0x26, 0x26)  # the idle disc, the waiting badge


def icon_pixels(screen: Screen, geometry: tuple[int, int, int, int]) -> QImage:
    x, y, width, height = geometry
    png = subprocess.run(
        ["import", "-window", "root", "-crop", f"{width}x{height}+{x}+{y}", "png:-"],
        env=screen.env,
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    return QImage.fromData(png)


def near(pixel: Any, colour: tuple[int, int, int]) -> bool:
    return bool(max(abs(a - b) for a, b in zip((pixel.red(), pixel.green(), pixel.blue()), colour, strict=True)) < 40)


def count(image: QImage, colour: tuple[int, int, int], left: float, top: float, right: float, bottom: float) -> int:
    """Pixels near `colour` in the part of the image given as fractions of its width and height."""
    return sum(
        1
        for x in range(int(image.width() * left), int(image.width() * right))
        for y in range(int(image.height() * top), int(image.height() * bottom))
        if near(image.pixelColor(x, y), colour)
    )


@pytest.mark.slow
def test_the_tray_icon_click_and_menu_on_a_real_tray(screen: Screen, tmp_path: Path) -> None:
    with tray_app(screen, tmp_path) as (owner, url, geometry):
        x, y, width, height = geometry
        icon = (x + width // 2, y + height // 2)
        idle = wait_for(
            "the idle disc",
            lambda: (
                (image := icon_pixels(screen, geometry))
                and count(image, SLATE, 0, 0, 1, 1) > width * height // 4
                and image
            ),
        )
        assert count(idle, BADGE, 0, 0, 1, 1) == 0  # type: ignore[arg-type]

        # a left click: the console
        screen.click(*icon)
        wait_for("the console", lambda: screen.windows().get("Coxswain", (0, 0, 0, 0))[2] > 600)
        screen.keys("Escape")
        wait_for("the console to close", lambda: screen.windows().get("Coxswain", (0, 0, 0, 0))[2] < 600)

        # a task runs and a teammate's long request waits: the ring top left, the red badge bottom right, and the
        # tray's balloon says it (no notification server here)
        task = owner.post(
            "/api/tasks", json={"agent": "shell", "command": "sleep 300", "description": "watch the integration tests"}
        ).json()
        sarah = owner.post("/api/people", json={"name": "sarah"}).json()["token"]
        prompt = "Please upgrade every dependency of the web front end to its newest major version, " * 4
        request = httpx.post(
            f"{url}/api/requests",
            json={"agent": "shell", "prompt": prompt},
            headers={"Authorization": f"Bearer {sarah}"},
        ).json()
        busy: Any = wait_for(
            "the badge",
            lambda: (image := icon_pixels(screen, geometry)) and count(image, BADGE, 0.55, 0.55, 1, 1) > 8 and image,
        )
        assert count(busy, BADGE, 0, 0, 0.45, 0.45) == 0, "the badge keeps off the glyph"
        assert count(busy, SLATE, 0, 0, 1, 1) == 0, "not the idle disc: the ring"
        screen.shot("tray-icon-running-and-waiting.png")

        def balloon_or_menu(tall: bool) -> Any:  # the balloon is some 100 px tall, the menu more than 150
            return next(
                (
                    g
                    for t, g in screen.windows().items()
                    if t in ("", "Coxswain") and g[2] > 100 and g[1] < 60 and (g[3] > 150) == tall
                ),
                None,
            )

        wait_for("the balloon", lambda: balloon_or_menu(tall=False))
        # a right click on the icon while the balloon shows: the menu, starting with the status line, no wider than
        # 400 px; not the approval card (Qt says the balloon was clicked too)
        screen.click(*icon, button=3)
        menu: Any = wait_for("the tray menu", lambda: balloon_or_menu(tall=True))
        card = f"R-{request['id'][-2:]} waits for your approval — Coxswain"
        for _ in range(15):  # a card would come within a second and a half, and the menu would close
            assert card not in screen.windows() and balloon_or_menu(tall=True), "the menu stays; no card"
            time.sleep(0.1)
        screen.shot("tray-menu-status-line.png")
        assert menu[2] <= 400, f"the menu is {menu[2]} px wide"
        screen.keys("Escape")
        owner.post(f"/api/tasks/{task['id']}/stop", json={})
