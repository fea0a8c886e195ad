"""The tray app end to end on a real X display: Xvfb with a real system tray host (trayer), the app started as the
README starts it, driven with xdotool like a person with a mouse and keyboard. A teammate's request raises the
tray's balloon (no notification server here), a click on it opens the approval card; the tray icon's menu approves
the request, which runs; the console and settings windows open from the menu. A taken port and a start that fails
are said on the screen; the console follows live output. Screenshots go to .cache/screenshots."""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.gui_fixture import SHOTS

SAMPLE = Path(__file__).parents[1] / "fixtures" / "testruns" / "pytest"


class Screen:
    def __init__(self, display: str) -> None:
        self.env = {**os.environ, "DISPLAY": display}

    def xdotool(self, *args: str) -> str:
        return subprocess.run(["xdotool", *args], env=self.env, capture_output=True, text=True, timeout=20).stdout

    def windows(self) -> dict[str, tuple[int, int, int, int]]:
        """The app's windows that are on screen, by title: (x, y, width, height)."""
        tree = subprocess.run(["xwininfo", "-root", "-tree"], env=self.env, capture_output=True, text=True).stdout
        found = {}
        for match in re.finditer(
            r'0x[0-9a-f]+ "([^"]*)": \("[^"]*" "Coxswain"\)\s+(\d+)x(\d+)\+-?\d+\+-?\d+\s+'
            r"\+(-?\d+)\+(-?\d+)",
            tree,
        ):
            title, width, height, x, y = match.groups()
            found[title if int(width) > 30 else "tray icon"] = (int(x), int(y), int(width), int(height))
        return found

    def click(self, x: int, y: int, button: int = 1) -> None:
        self.xdotool("mousemove", str(x), str(y), "sleep", "0.2", "click", str(button))

    def keys(self, *keys: str) -> None:
        for key in keys:
            self.xdotool("key", key)
            time.sleep(0.15)

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / name
        subprocess.run(["import", "-window", "root", str(path)], env=self.env, check=True, timeout=30)
        return path


def wait_for(what: str, condition: Callable[[], object], timeout: float = 30) -> object:
    deadline = time.monotonic() + timeout
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return found


@pytest.fixture
def screen(tmp_path: Path) -> Iterator[Screen]:
    """Xvfb on a free display and trayer on it, stopped by PID afterwards."""
    for tool in ("Xvfb", "trayer", "xdotool", "xwininfo", "import"):
        assert shutil.which(tool), f"{tool} is missing: .ci/test-deps installs it"
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        display = ":" + pipe.readline().strip()
    screen = Screen(display)
    trayer = subprocess.Popen(
        [
            "trayer",
            "--edge",
            "top",
            "--align",
            "right",
            "--widthtype",
            "request",
            "--height",
            "32",
            "--transparent",
            "false",
            "--tint",
            "0x333333",
        ],
        env=screen.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield screen
    finally:
        for process in (trayer, xvfb):
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            process.wait(10)


@contextlib.contextmanager
def tray_app(screen: Screen, tmp_path: Path) -> Iterator[tuple[httpx.Client, str, Any]]:
    """The app started as the README starts it, on this screen (home: tmp_path/home): the owner's client of its
    daemon, the daemon's address, and where its tray icon is (x, y, width, height); quit by SIGTERM after, which it
    must do cleanly."""
    home = tmp_path / "home"
    env = {
        **screen.env,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop.gui.app", "--home", str(home), "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for("the daemon", lambda: (home / "daemon.json").exists())
        url = json.loads((home / "daemon.json").read_text())["url"]
        token = (home / "owner.token").read_text().strip()
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}) as owner:
            yield owner, url, wait_for("the tray icon", lambda: screen.windows().get("tray icon"))
    finally:
        app.send_signal(signal.SIGTERM)
        _, err = app.communicate(timeout=30)
    assert app.returncode == 0, err[-2000:]


@pytest.mark.slow
def test_a_request_is_approved_from_the_tray_menu_on_a_real_tray(screen: Screen, tmp_path: Path) -> None:
    home = tmp_path / "home"
    with tray_app(screen, tmp_path) as (owner, url, geometry):
        x, y, width, height = geometry
        icon = (x + width // 2, y + height // 2)

        sarah = owner.post("/api/people", json={"name": "sarah"}).json()["token"]
        request = httpx.post(
            f"{url}/api/requests",
            json={"agent": "shell", "prompt": "echo approved from the tray"},
            headers={"Authorization": f"Bearer {sarah}"},
        ).json()
        short = f"R-{request['id'][-2:]}"
        card_title = f"{short} waits for your approval — Coxswain"

        # no notification server: the tray's balloon says it, and a click on it opens the card
        balloon = wait_for(
            "the balloon",
            lambda: next((g for t, g in screen.windows().items() if t in ("", "Coxswain") and g[2] > 100), None),
        )
        bx, by, bw, bh = balloon  # type: ignore[misc]
        screen.click(bx + bw // 2, by + bh // 2)
        wait_for("the approval card", lambda: card_title in screen.windows())
        screen.shot("approval-card-on-screen.png")
        screen.keys("Escape")
        wait_for("the card to close", lambda: card_title not in screen.windows())

        def open_menu() -> None:
            screen.click(*icon, button=3)
            wait_for(
                "the tray menu",
                lambda: any(g[2] > 100 and g[1] < 60 for t, g in screen.windows().items() if t in ("", "Coxswain")),
            )
            time.sleep(0.3)

        # the tray icon's menu: the request waits first; its submenu's first item approves it
        open_menu()
        screen.keys("Down", "Right")
        time.sleep(0.5)
        screen.shot("tray-menu.png")
        screen.keys("Return")
        done = wait_for(
            "the request to run and finish",
            lambda: (r := owner.get(f"/api/requests/{request['id']}").json())["state"] == "done" and r,
        )
        assert done["result"] == "approved from the tray"  # type: ignore[index]
        assert "approved by owner" in [t["text"] for t in done["timeline"]][1]  # type: ignore[index]

        # a coloured test run, then the console from the menu: it opens on the newest thing, that run
        task = owner.post(
            "/api/tasks",
            json={
                "agent": "shell",
                "description": "pytest sample",
                "command": f"cd {SAMPLE} && {sys.executable} -m pytest -p no:cacheprovider --color=yes -v",
            },
        ).json()
        wait_for("the test run", lambda: owner.get(f"/api/tasks/{task['id']}").json()["state"] == "ended")
        open_menu()
        screen.keys("Down", "Return")  # Open console
        wait_for("the console", lambda: "Coxswain" in screen.windows() and screen.windows()["Coxswain"][2] > 600)
        time.sleep(1.5)
        screen.shot("console-on-screen.png")
        screen.keys("Escape")

        wait_for(
            "the console to close", lambda: "Coxswain" not in screen.windows() or screen.windows()["Coxswain"][2] < 600
        )
        open_menu()
        screen.keys("Down", "Down", "Down", "Return")  # Open console, Pause all agents, Room: http://127.0.0.1:…/
        wait_for("the room's QR code in the settings", lambda: "Coxswain settings" in screen.windows())
        screen.shot("settings-room-on-screen.png")
    assert not (home / "daemon.json").exists(), "Quit stops the daemon cleanly"


@pytest.mark.slow
def test_a_start_that_fails_says_why_in_a_dialog(screen: Screen, tmp_path: Path) -> None:
    """Not only on a terminal nobody sees: a home already served by `cox daemon` is said in a dialog on the screen."""
    from tests.daemon_process import DaemonProcess

    daemon = DaemonProcess(tmp_path / "home").start()
    env = {
        **screen.env,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    app = subprocess.Popen(
        [sys.executable, "-m", "desktop.gui.app", "--home", str(tmp_path / "home"), "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for("the dialog", lambda: "Coxswain cannot start" in screen.windows())
        screen.shot("cannot-start-dialog.png")
        assert app.poll() is None, "it waits for the person to read it"
        screen.keys("Return")
        _, err = app.communicate(timeout=30)
    finally:
        if app.poll() is None:
            app.kill()
            app.communicate()
        daemon.stop()
    assert app.returncode == 1
    assert err.strip().endswith(f"Coxswain cannot start: a Coxswain daemon is already running for {tmp_path / 'home'}")


@pytest.mark.slow
def test_a_taken_port_is_said_on_the_tray_and_the_console_follows_live_output(screen: Screen, tmp_path: Path) -> None:
    """Another program holds the port asked for: the app comes up on another, the tray's balloon says so (seen on
    screen), and a second launch brings the console forward on the running request, following its output."""
    import socket

    home = tmp_path / "home"
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    env = {
        **screen.env,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring",
        "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp_path}/no-bus",
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    launch = [sys.executable, "-m", "desktop.gui.app", "--home", str(home), "--port", str(taken)]
    app = subprocess.Popen(launch, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for("the daemon", lambda: (home / "daemon.json").exists())
        url = json.loads((home / "daemon.json").read_text())["url"]
        assert not url.endswith(f":{taken}")
        wait_for("the balloon", lambda: any(t in ("", "Coxswain") and g[2] > 100 for t, g in screen.windows().items()))
        time.sleep(0.5)  # drawn
        screen.shot("port-taken-balloon.png")
        token = (home / "owner.token").read_text().strip()
        owner = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"})
        request = owner.post(
            "/api/requests",
            json={
                "agent": "shell",
                "prompt": 'for i in $(seq 1 900); do echo "line $i: \033[32mok\033[0m"; sleep 0.1; done',
            },
        ).json()
        wait_for("output", lambda: "line 60:" in owner.get(f"/api/requests/{request['id']}/output").json()["text"])
        subprocess.run(launch, env=env, capture_output=True, timeout=60)  # a second launch: the console comes forward
        wait_for("the console", lambda: screen.windows().get("Coxswain", (0, 0, 0, 0))[2] > 600)
        time.sleep(3)  # three seconds more of output, followed
        screen.shot("console-following-live-output.png")
        owner.post(f"/api/requests/{request['id']}/cancel", json={})
    finally:
        app.send_signal(signal.SIGTERM)
        out, err = app.communicate(timeout=30)
        holder.close()
    assert f"Port {taken} is taken by another program, so Coxswain's API listens on {url} instead" in out, out
    assert app.returncode == 0, err[-2000:]
