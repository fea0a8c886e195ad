"""The API port taken by another program: the tray app comes up on a free port, says so where a person sees it (the
tray's balloon, the terminal), writes the address to daemon.json, and `cox` finds it there."""

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest

from tests.daemon_process import COX, kill_runners
from tests.gui_fixture import keyring_from_environment, run


def test_a_taken_port_gives_a_free_one_and_says_so(
    qloop: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from desktop.gui.app import TrayApp
    from desktop.platform.paths import Home

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")
    holder = socket.socket()  # another program, listening on the port first
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    taken = holder.getsockname()[1]
    home = Home(tmp_path / "home")

    async def scenario(app: Any) -> None:
        await app.start()
        try:
            url = json.loads(home.daemon_json.read_text())["url"]
            assert url == app.daemon.url and app.daemon.port != taken
            request = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo here"})).json()
            cox = await asyncio.create_subprocess_exec(
                *COX, "--home", str(home.root), "list", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
            out, err = await cox.communicate()
            assert cox.returncode == 0 and f"{request['id']}  " in out.decode(), err.decode()
            said = f"Port {taken} is taken by another program, so Coxswain's API listens on {url} instead"
            assert app.tray.balloons and app.tray.balloons[-1][1].startswith(said)
            assert said in capsys.readouterr().out
        finally:
            await app.stop()

    with keyring_from_environment():
        try:
            run(qloop, scenario(TrayApp(home, port=taken)))
        finally:
            kill_runners(home.root)
            holder.close()
