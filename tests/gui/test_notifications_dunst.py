"""Notifications on a real notification server: dunst 1.9 on a private D-Bus session bus (with GNOME Keyring on it,
for the chat's tokens) under Xvfb. An approval's notification goes from dunst's screen however the request is
answered — `cox approve`, a Deny through the API, the card, the chat, expiry, the requester's cancel, or an answer
that came before the notification did — and dunst is told so by the app (CloseNotification), not by a timeout: this
dunst keeps every notification until it is closed. Each kind of notice has its icon, and dunst draws it."""

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from desktop.core.ids import short_form
from desktop.resources import resource
from tests.fakes.dbus import until
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from tests.gui_fixture import SHOTS, person, run, running_app, wait_state

DUNSTRC = """
[global]
    width = 460
    offset = 16x16
    origin = top-right
    font = DejaVu Sans 10
    markup = full
    idle_threshold = 0
[urgency_low]
    timeout = 0
[urgency_normal]
    timeout = 0
[urgency_critical]
    timeout = 0
"""
CLOSED_BY_APP = 3  # NotificationClosed's reason for a CloseNotification call (1: expired, 2: dismissed)


def short(request_id: str) -> str:
    return short_form(request_id, date.today())


class Dunst:
    """dunst as a person and `dunstctl` see it: what is on screen, its history, and each NotificationClosed it sent
    (to the app alone, so seen through dbus-monitor)."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.closed: dict[int, int] = {}  # notification id -> the reason it was closed with
        self._monitor: asyncio.subprocess.Process | None = None
        self._reading: asyncio.Task[None] | None = None

    async def listen(self) -> None:
        self._monitor = await asyncio.create_subprocess_exec(
            "dbus-monitor",
            "--session",
            "type='signal',interface='org.freedesktop.Notifications',member='NotificationClosed'",
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self._monitor.stdout is not None
        while b"member=NameLost" not in (line := await self._monitor.stdout.readline()):  # it became a monitor
            assert line, "dbus-monitor exited"
        self._reading = asyncio.ensure_future(self._read(self._monitor))

    async def _read(self, monitor: asyncio.subprocess.Process) -> None:
        assert monitor.stdout is not None
        numbers: list[int] = []
        async for line in monitor.stdout:
            text = line.decode().strip()
            if "member=NotificationClosed" in text:
                numbers = []
            elif text.startswith("uint32 "):
                numbers.append(int(text.split()[1]))
                if len(numbers) == 2:
                    self.closed[numbers[0]] = numbers[1]

    async def stop_listening(self) -> None:
        if self._reading is not None:
            self._reading.cancel()
        if self._monitor is not None:
            with contextlib.suppress(ProcessLookupError):
                self._monitor.send_signal(signal.SIGTERM)
            await self._monitor.wait()

    async def ctl(self, *args: str) -> str:
        process = await asyncio.create_subprocess_exec(
            "dunstctl", *args, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        out, err = await process.communicate()
        assert process.returncode == 0, err
        return out.decode()

    async def displayed(self) -> int:
        return int(await self.ctl("count", "displayed"))

    async def history(self) -> list[dict[str, Any]]:
        """The closed notifications, newest first: {"summary": …, "body": …, "icon_path": …, "id": …}."""
        return [
            {key: value["data"] for key, value in entry.items()}
            for entry in json.loads(await self.ctl("history"))["data"][0]
        ]

    async def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        process = await asyncio.create_subprocess_exec("import", "-window", "root", str(SHOTS / name), env=self.env)
        assert await process.wait() == 0
        return SHOTS / name

    async def until_displayed(self, count: int, timeout: float = 30) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while (now := await self.displayed()) != count:
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"dunst shows {now} notifications, not {count}")
            await asyncio.sleep(0.1)

    async def closed_by_app(self, summary: str) -> dict[str, Any]:
        """The notification with this summary, once it left the screen because the app closed it."""
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            found = [n for n in await self.history() if n["summary"] == summary]
            if found and self.closed.get(found[0]["id"]) is not None:
                assert self.closed[found[0]["id"]] == CLOSED_BY_APP, "closed by the app, not by a timeout or a click"
                return found[0]
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"'{summary}' was not closed by the app: {found}, {self.closed}")
            await asyncio.sleep(0.1)


@pytest.fixture
def dunst_desktop(
    qloop: asyncio.AbstractEventLoop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, secret_service: dict[str, str]
) -> Iterator[tuple[Any, Dunst]]:
    """(the running TrayApp, dunst on Xvfb on the same session bus as it and a real keyring)."""
    for tool in ("Xvfb", "dunst", "dunstctl", "import"):
        assert shutil.which(tool), f"{tool} is missing: .ci/test-deps installs it"
    read, write = os.pipe()
    xvfb = subprocess.Popen(
        ["Xvfb", "-displayfd", str(write), "-screen", "0", "1024x400x24", "-nolisten", "tcp"],
        pass_fds=(write,),
        stderr=subprocess.DEVNULL,
    )
    os.close(write)
    with os.fdopen(read) as pipe:
        display = ":" + pipe.readline().strip()
    (tmp_path / "dunstrc").write_text(DUNSTRC)
    env = {**os.environ, **secret_service, "DISPLAY": display}
    server = subprocess.Popen(
        ["dunst", "-config", str(tmp_path / "dunstrc")],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "dunst.log", "wb"),  # noqa: SIM115 - dunst writes to it until it is stopped
    )
    dunst = Dunst(env)
    try:
        run(qloop, until_serving(dunst, server))
        run(qloop, dunst.listen())
        for name, value in secret_service.items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
        with running_app(qloop, tmp_path) as app:
            yield app, dunst
    finally:
        run(qloop, dunst.stop_listening())
        for process in (server, xvfb):
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            process.wait(10)


async def until_serving(dunst: Dunst, server: subprocess.Popen[bytes]) -> None:
    for _ in range(200):
        assert server.poll() is None, "dunst exited"
        with contextlib.suppress(AssertionError):
            await dunst.displayed()
            return
        await asyncio.sleep(0.1)
    raise AssertionError("dunst did not come on the bus")


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    server = FakeSlack().start()
    yield server
    server.stop()


async def cox(app: Any, *args: str) -> None:
    cli = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "desktop.cli",
        "--home",
        str(app.daemon.home.root),
        *args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = await cli.communicate()
    assert cli.returncode == 0, err


async def answer(app: Any, way: str, request_id: str, slack: FakeSlack, requester: dict[str, str]) -> str:
    """Answers the waiting request `way`; returns the state it ends in."""
    if way == "cox approve":
        await cox(app, "approve", request_id)
        return "done"
    if way == "API deny":
        assert (await app.api.post(f"/api/requests/{request_id}/deny", json={})).status_code == 200
        return "cancelled"
    if way == "card Approve":
        card = await app.open_card(request_id)
        card.approve.click()
        return "done"
    if way == "chat Approve":
        await until(lambda: any(m["text"].startswith(request_id) for m in slack.messages))  # its thread opened
        opened = next(m for m in slack.messages if m["text"].startswith(request_id))
        slack.click("U_OWNER", "approve", request_id, opened["ts"], channel="C9")
        return "done"
    if way == "requester's cancel":
        assert (await app.api.post(f"/api/requests/{request_id}/cancel", json={}, headers=requester)).status_code == 200
        return "cancelled"
    assert way == "expiry"
    return "expired"


WAYS = ["cox approve", "API deny", "card Approve", "chat Approve", "requester's cancel", "expiry"]


@pytest.mark.parametrize("way", WAYS)
def test_an_answer_from_anywhere_takes_the_notification_off_dunsts_screen(
    dunst_desktop: Any, qloop: Any, slack: FakeSlack, way: str
) -> None:
    app, dunst = dunst_desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        if way == "chat Approve":  # Slack connected, its threads in C9, the owner known there
            connected = await app.api.post(
                "/api/connectors",
                json={
                    "kind": "slack",
                    "app_token": APP_TOKEN,
                    "bot_token": BOT_TOKEN,
                    "channel": "C9",
                    "base_url": slack.url,
                },
            )
            assert connected.status_code == 201, connected.text
            await app.api.post("/api/connectors/slack/people", json={"chat_user": "U_OWNER", "person": "owner"})
            await until(slack.connected)
        if way == "expiry":
            await app.api.post("/api/settings", json={"key": "approval_ttl", "value": "8s"})
        row = (
            await app.api.post("/api/requests", headers=sarah, json={"agent": "shell", "prompt": "echo '<hi> & bye'"})
        ).json()
        title = f"{short(row['id'])} waits for your approval"
        await dunst.until_displayed(1)
        slug = way.replace(" ", "-").replace("'", "")
        await dunst.shot(f"dunst-approval-before-{slug}.png")
        ends_in = await answer(app, way, row["id"], slack, sarah)
        withdrawn = await dunst.closed_by_app(title)
        await dunst.until_displayed(1 if way == "expiry" else 0)  # what stays is "… expired unanswered"
        assert withdrawn["body"] == "sarah asks shell: echo '&lt;hi&gt; &amp; bye'"  # drawn as `echo '<hi> & bye'`
        assert withdrawn["icon_path"] == str(resource("notice-approval.svg"))
        await dunst.shot(f"dunst-approval-after-{slug}.png")
        await wait_state(app, row["id"], ends_in)

    run(qloop, scenario())


def test_an_answer_before_the_notification_came_leaves_nothing_on_dunst(dunst_desktop: Any, qloop: Any) -> None:
    """Approved at once, while the notification is still on its way (the app asks the row, then the server): it is
    withdrawn as it comes, or never shown."""
    app, dunst = dunst_desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        for turn in range(3):
            row = (
                await app.api.post("/api/requests", headers=sarah, json={"agent": "shell", "prompt": f"echo {turn}"})
            ).json()
            assert (await app.api.post(f"/api/requests/{row['id']}/approve", json={})).status_code == 200
            await wait_state(app, row["id"], "done")
        await until(lambda: not app.notices.on_the_way)
        marker = (await app.api.post("/api/requests", headers=sarah, json={"agent": "shell", "prompt": "true"})).json()
        await dunst.until_displayed(1)  # the next approval shows, alone
        await app.api.post(f"/api/requests/{marker['id']}/deny", json={})
        await dunst.until_displayed(0)

    run(qloop, scenario())


def test_failures_and_expiry_have_their_icons_and_dunst_draws_them(dunst_desktop: Any, qloop: Any) -> None:
    app, dunst = dunst_desktop

    async def scenario() -> None:
        await app.api.post("/api/settings", json={"key": "approval_ttl", "value": "1s"})
        sam = await person(app, "sam")
        waited = (await app.api.post("/api/requests", headers=sam, json={"agent": "shell", "prompt": "true"})).json()
        failed = (
            await app.api.post(
                "/api/requests",
                json={"agent": "shell", "prompt": "echo building; echo 'Error: the <linker> & ld failed' >&2; exit 3"},
            )
        ).json()
        await wait_state(app, failed["id"], "failed")
        await dunst.closed_by_app(f"{short(waited['id'])} waits for your approval")  # it went as it expired
        await dunst.until_displayed(2)  # the expiry and the failure
        await dunst.shot("dunst-failure-and-expiry.png")
        await dunst.ctl("close-all")
        told = {n["summary"]: n for n in await dunst.history()}
        failure = told[f"{short(failed['id'])} failed"]
        assert failure["body"] == "exit 3 · Error: the &lt;linker&gt; &amp; ld failed\nshell · owner"
        assert failure["icon_path"] == str(resource("notice-failed.svg"))
        assert told[f"{short(waited['id'])} expired unanswered"]["icon_path"] == str(resource("notice-expired.svg"))

    run(qloop, scenario())
