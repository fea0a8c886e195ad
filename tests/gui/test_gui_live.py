"""Live truth in the tray app: a state change shows in the tray (icon, tooltip, menu) and the console's list within a
second, whatever else is going on (a refresh already on its way when the change came, long prompts to fetch)."""

import asyncio
import time
from typing import Any

from desktop.core.events import RequestChanged
from tests.fakes.dbus import until
from tests.gui.test_gui_tray import actions
from tests.gui_fixture import run, wait_state

LONG = "echo earlier; : '" + "a long prompt, pasted from a design document. " * 1200 + "'"  # ~55 KB


def last_event(console: Any) -> str:
    count = console.timeline.count()
    return str(console.timeline.item(count - 1).text()) if count else ""


def row_text(console: Any, request_id: str) -> str:
    row = console.list.row_of(request_id)
    return str(row.text(0)) if row is not None else ""


async def shown_within(seconds: float, shown: Any) -> float:
    """When `shown()` first held (waiting up to `seconds`: a late one is measured, a busy machine has margin)."""
    deadline = time.monotonic() + seconds
    while not shown():
        if time.monotonic() > deadline:
            raise AssertionError(f"still not shown {seconds} s later")
        await asyncio.sleep(0.01)
    return time.monotonic()


def test_a_cancel_shows_everywhere_within_a_second(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def cancel_from_the_tray(console: Any) -> float:
        """Seconds from the daemon's "cancelled" (the process ended after the tray's Cancel) to that state shown in
        the tray, the console's list and the console's page on the request."""
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo go; sleep 60"})).json()
        short = f"R-{row['id'][-2:]}"
        await wait_state(app, row["id"], "running")
        await until(lambda: app.tray.shown.state == "running" and " running" in row_text(console, row["id"]), 10)
        await app.open_console(("request", row["id"]))
        await until(lambda: "go" in console.view.toPlainText() and console.stop_button.isVisible(), 10)
        assert app.tray.toolTip().startswith(f"Coxswain: 1 running\n{short} · shell · owner · ")
        assert len(app.tray.toolTip().splitlines()) == 2, "a request's own turn is no background task"
        cancel = next(v for k, v in actions(app.tray.menu).items() if k.startswith(short) and k.endswith("Cancel"))
        with app.daemon.events.subscribe() as events:
            cancel.trigger()
            while (
                not isinstance(event := await asyncio.wait_for(events.get(), 10), RequestChanged)
                or event.row.state != "cancelled"
            ):
                pass
            changed = time.monotonic()
        assert event.row.id == row["id"]
        shown = await shown_within(
            3,
            lambda: (
                app.tray.shown.state == "idle"
                and short not in app.tray.toolTip()
                and " cancelled" in row_text(console, row["id"])
                and not console.stop_button.isVisible()
                and "cancelled" in last_event(console)
            ),
        )
        assert app.tray.toolTip() == "Coxswain: nothing running"
        assert not any(k.startswith(short) for k in actions(app.tray.menu)), "its menu entry went with it"
        return shown - changed

    async def scenario() -> None:
        earlier = [
            (await app.api.post("/api/requests", json={"agent": "shell", "prompt": LONG})).json()["id"]
            for _ in range(6)
        ]
        for request_id in earlier:
            await wait_state(app, request_id, "done")
        console = await app.open_console()
        latencies = [await cancel_from_the_tray(console) for _ in range(3)]
        assert max(latencies) < 1.0, f"cancel to shown everywhere took {latencies} s"

    run(qloop, scenario())


def test_a_waiting_request_is_answered_in_the_console_or_reviewed_in_its_card(
    desktop_without_bus: Any, qloop: Any
) -> None:
    """The console offers Approve, Deny and Review… (the card) for a request that waits; so does the tray's entry."""
    from tests.gui_fixture import person

    app = desktop_without_bus

    def buttons(console: Any) -> dict[str, Any]:
        """The buttons the console shows beside a request's console (what a person can click), by their text."""
        from PySide6.QtWidgets import QPushButton

        return {b.text(): b for b in console.findChildren(QPushButton) if b.isVisible() and b.text() != "Stop"}

    def offered(console: Any) -> set[str]:
        return set(buttons(console)) - {"Jump to end ↓"}

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        asked = [
            (
                await app.api.post("/api/requests", json={"agent": "shell", "prompt": f"echo asked {n}"}, headers=sarah)
            ).json()["id"]
            for n in range(3)
        ]
        console = await app.open_console(("request", asked[0]))
        assert offered(console) == {"Approve", "Deny", "Review…"}, "what waits is denied, not cancelled"
        buttons(console)["Review…"].click()
        await until(lambda: asked[0] in app.cards and app.cards[asked[0]].isVisible(), 10)
        buttons(console)["Approve"].click()
        assert (await wait_state(app, asked[0], "done", 10))["result"] == "asked 0"
        await until(lambda: asked[0] not in app.cards and not offered(console), 3)  # the card goes, and the buttons

        await console.open_request(asked[1])
        app.denials.seconds = 1.0
        buttons(console)["Deny"].click()
        await until(lambda: offered(console) == {"Undo Deny"}, 3)  # for a few seconds
        await wait_state(app, asked[1], "cancelled", 20)
        await until(lambda: not offered(console), 3)

        short = f"R-{asked[2][-2:]}"
        await until(lambda: any(k.startswith(short) for k in actions(app.tray.menu)), 10)
        next(v for k, v in actions(app.tray.menu).items() if k.startswith(short) and k.endswith("/ Review…")).trigger()
        await until(lambda: asked[2] in app.cards and app.cards[asked[2]].isVisible(), 10)
        await app.act("review", asked[0])  # long answered: said in the balloon, no card
        assert asked[0] not in app.cards and app.tray.balloons[-1][1] == f"{asked[0]} no longer waits for approval"

    run(qloop, scenario())
