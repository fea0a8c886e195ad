"""Background continuations as the owner sees them on this computer (offscreen, on a real daemon): the badge on the
console's row and header and on the tray's entry and tooltip, and Settings → Notifications' "Turn completed" (off by
default; on, a turn that ends is told, a continuation's saying whose it continues)."""

from datetime import date
from typing import Any

from desktop.core.ids import short_form
from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run, wait_state


def short(request_id: str) -> str:
    return short_form(request_id, date.today())


def continue_(app: Any, origin_id: str, prompt: str) -> str:
    """What the daemon does when tasks the origin's turn started end: a continuation, approved with the conversation
    (the shell agent runs its prompt)."""
    ledger = app.daemon.ledger
    return str(ledger.create_continuation(ledger.get(origin_id), prompt, "T1 ended", True).id)


def test_the_console_and_the_tray_show_the_continuation_badge(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        origin = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo started T1"})).json()
        await wait_state(app, origin["id"], "done")
        woken = continue_(app, origin["id"], "sleep 60")
        await wait_state(app, woken, "running")
        badge = f"↻ continuation of {short(origin['id'])}"

        console = await app.open_console(("request", woken))
        work = console.list
        await until(lambda: work.row_of(woken) is not None and "running" in work.row_of(woken).text(0))
        first, second = work.row_of(woken).text(0).split("\n")
        assert first == f"{short(woken)} · shell · owner · {badge} · running" and second == "sleep 60"
        assert work.row_of(origin["id"]).text(0).split("\n")[0].startswith(f"{short(origin['id'])} · shell · owner ·")
        assert "↻" not in work.row_of(origin["id"]).text(0), "the origin is no continuation"
        assert console.header.text() == f"{short(woken)} · shell · owner · {badge}"
        SHOTS.mkdir(parents=True, exist_ok=True)
        console.grab().save(str(SHOTS / "console-continuation.png"))

        await app.refresh()
        running = [a.text() for a in app.tray.menu.actions() if a.text().startswith(short(woken))]
        assert running == [f"{short(woken)} · shell · owner · ↻ {short(origin['id'])}: sleep 60"]
        tip = app.tray.toolTip().splitlines()
        assert tip[0] == "Coxswain: 1 running"
        assert tip[1] == f"{short(woken)} · shell · owner · {badge} · just started"
        await app.api.post(f"/api/requests/{woken}/cancel", json={})
        await wait_state(app, woken, "cancelled")

    run(qloop, scenario())


def test_turn_completed_is_off_by_default_and_when_on_tells_each_turn_and_whose_continuation(
    desktop: Any, qloop: Any
) -> None:
    app, server = desktop

    async def scenario() -> None:
        window = await app.open_settings()
        box = window.notices["turn_completed"]
        assert box.text() == "A turn completed: done or failed, background continuations too"
        assert not box.isChecked(), "off by default"
        window.grab().save(str(SHOTS / "settings-turn-completed.png"))

        quiet = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo unheard"})).json()
        await wait_state(app, quiet["id"], "done")
        woken = continue_(app, quiet["id"], "echo unheard too")
        await wait_state(app, woken, "done")
        await app.refresh()  # the events of both were handled by now
        assert server.shown == [], "nothing is told of turns while it is off"

        box.setChecked(True)
        window.save_general.click()
        await until(lambda: app.settings.get("notify_turn_completed") == "yes")
        origin = (
            await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo started the test run\necho T1"})
        ).json()
        await until(lambda: len(server.shown) == 1)
        assert (server.shown[0].title, server.shown[0].seen) == (
            f"{short(origin['id'])} done",
            "shell\nstarted the test run … 1 more line",
        )
        woken = continue_(app, origin["id"], "echo 'T1 (unit tests) failed: test_login <b>expired</b>'")
        await until(lambda: len(server.shown) == 2)
        told = server.shown[1]
        assert told.title == f"{short(woken)} done"
        assert told.seen == (
            f"shell · background continuation of {short(origin['id'])}\n"
            "T1 (unit tests) failed: test_login <b>expired</b>"
        )
        assert told.icon.endswith("notice-done.svg") and "Approve" not in told.actions.values()

        failing = continue_(app, woken, "echo the fix did not hold; exit 4")
        await until(lambda: len(server.shown) == 3)
        failed = server.shown[2]
        assert failed.title == f"{short(failing)} failed"
        assert failed.seen == (
            f"exit 4 · the fix did not hold\nshell · owner · background continuation of {short(woken)}"
        )

        await app.api.post("/api/settings", json={"key": "notify_failed", "value": "no"})
        await until(lambda: app.settings.get("notify_failed") == "no")
        again = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "exit 5"})).json()
        await until(lambda: len(server.shown) == 4)
        assert server.shown[3].title == f"{short(again['id'])} failed", "a failed turn is a turn completed too"

    run(qloop, scenario())
