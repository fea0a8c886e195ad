"""The tray app reaches its daemon through the one typed client (desktop/client): a refusal of a click in the tray is
said in the daemon's own words, and the client (pydantic) is loaded with the daemon, after the tray icon shows."""

import os
import subprocess
import sys
from typing import Any

from tests.gui_fixture import person, run, wait_state


def test_a_refused_click_is_said_in_the_daemons_words(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo hi"}, headers=sarah)).json()
        await app.api.post(f"/api/requests/{row['id']}/approve", json={})  # approved elsewhere (the CLI, a chat)
        await wait_state(app, row["id"], "done")
        refused = (await app.api.post(f"/api/requests/{row['id']}/approve", json={})).json()["error"]
        await app.act("approve", row["id"])  # the tray's Approve, a moment too late
        assert app.tray.balloons[-1] == ("Coxswain", refused)
        assert row["id"] in refused

    run(qloop, scenario())


def test_the_tray_icon_does_not_wait_for_the_client() -> None:
    """What runs before the icon shows imports neither pydantic, the client's shapes, nor httpx (with httpx-sse it
    took ~0.15 s)."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, desktop.gui.app; "
            "print(sorted(m for m, loaded in sys.modules.items() if loaded is not None "
            "and m.startswith(('pydantic', 'desktop.client', 'httpx'))))",
        ],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"
