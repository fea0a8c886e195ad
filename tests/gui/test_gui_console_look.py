"""The console window as a person sees it (offscreen, on a real daemon): an empty state that says what comes, two-line
rows with coloured state pills, Retry on a failed row, Stop buttons that don't squeeze rows, a long prompt that does
not push the list, a denied request that says why, Deny with Undo, and the room's colours in light and dark."""

import asyncio
from typing import Any

from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run, wait_state


def pill_pixels(work: Any, item_id: str, colour: str) -> int:
    """How many pixels of the row's first line are (nearly) the state's colour, as drawn."""
    from PySide6.QtGui import QColor

    row = work.row_of(item_id)
    rect = work.visualItemRect(row)
    picture = work.viewport().grab().toImage()
    want = QColor(colour)
    found = 0
    for x in range(rect.left(), rect.right()):
        for y in range(rect.top(), rect.top() + rect.height() // 2):
            pixel = picture.pixelColor(x, y)
            if abs(pixel.red() - want.red()) + abs(pixel.green() - want.green()) + abs(pixel.blue() - want.blue()) < 40:
                found += 1
    return found


def test_an_empty_console_says_what_will_come(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        console = await app.open_console()
        assert console.right.currentWidget() is console.empty and console.empty.isVisible()
        assert console.empty.text() == "Nothing yet — requests appear here when someone asks an agent."
        assert not console.view.isVisible(), "no black box"
        console.grab().save(str(SHOTS / "console-empty.png"))
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo hi"})).json()
        await until(lambda: console.chosen == ("request", row["id"]) and console.view.isVisible(), 10)
        assert console.right.currentWidget() is not console.empty

    SHOTS.mkdir(parents=True, exist_ok=True)
    run(qloop, scenario())


def test_rows_have_two_lines_a_coloured_pill_retry_and_stop_that_do_not_squeeze(desktop: Any, qloop: Any) -> None:
    from desktop.gui.style import state_colour

    app, _ = desktop

    async def scenario() -> None:
        failed = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo oops; exit 3"})).json()
        done = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo fine"})).json()
        await wait_state(app, failed["id"], "failed")
        await wait_state(app, done["id"], "done")
        task = (
            await app.api.post(
                "/api/tasks", json={"agent": "shell", "command": "sleep 60", "description": "dev server"}
            )
        ).json()
        console = await app.open_console(("task", task["id"]))  # a chosen row is drawn in the selection's colours
        work = console.list
        await until(lambda: work.row_of(task["id"]) is not None and work.button_of(task["id"]) is not None, 10)
        first, second = work.row_of(failed["id"]).text(0).split("\n")
        assert first.endswith(" · shell · owner · failed · exit 3 · 0 s") and second == "echo oops; exit 3"
        assert work.row_of(done["id"]).text(0).split("\n")[1] == "echo fine"
        font_line = work.fontMetrics().height()
        heights = {work.visualItemRect(work.row_of(i)).height() for i in (failed["id"], done["id"], task["id"])}
        assert len(heights) == 1 and heights.pop() >= 2 * font_line, "two lines each, Stop or not"
        assert pill_pixels(work, failed["id"], state_colour("failed")) > 8
        assert pill_pixels(work, done["id"], state_colour("done")) > 8
        assert pill_pixels(work, done["id"], state_colour("failed")) == 0
        assert work.button_of(done["id"]) is None
        console.grab().save(str(SHOTS / "console-rows.png"))

        retry = work.button_of(failed["id"])
        assert retry is not None and retry.text() == "Retry"
        retry.click()
        deadline = asyncio.get_running_loop().time() + 10
        while not any(r.get("retry_of") == failed["id"] for r in (await app.api.get("/api/requests")).json()):
            assert asyncio.get_running_loop().time() < deadline, "Retry made no new request"
            await asyncio.sleep(0.05)
        await app.api.post(f"/api/tasks/{task['id']}/stop", json={})

    SHOTS.mkdir(parents=True, exist_ok=True)
    run(qloop, scenario())


def test_a_long_prompt_is_shortened_in_the_header_and_does_not_push_the_list(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        short = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo short"})).json()
        long = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo " + "word " * 2000})).json()
        await wait_state(app, long["id"], "done")
        console = await app.open_console(("request", short["id"]))
        console.resize(1100, 680)
        await asyncio.sleep(0)
        widths = (console.list.width(), console.width())
        await console.open("request", long["id"])
        for _ in range(3):
            await asyncio.sleep(0)
        assert (console.list.width(), console.width()) == widths
        assert len(console.what.text()) <= 301 and console.what.text().endswith("…")

    run(qloop, scenario())


def test_deny_waits_for_undo_and_a_denied_request_says_why(desktop: Any, qloop: Any) -> None:
    from tests.gui_fixture import person

    app, server = desktop
    app.denials.seconds = 1.5

    def approvals() -> list[Any]:
        return [n for n in server.shown if n.title.endswith("waits for your approval")]

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        row = (
            await app.api.post("/api/requests", json={"agent": "shell", "prompt": "rm -rf build"}, headers=sarah)
        ).json()
        console = await app.open_console(("request", row["id"]))
        await until(lambda: console.approve_button.isVisible())
        assert "waits for your approval" in console.why.text() and not console.view.isVisible()
        await until(lambda: len(approvals()) == 1)
        console.deny_button.click()
        await until(lambda: console.undo_button.isVisible() and not console.deny_button.isVisible())
        assert not console.review_button.isVisible() and not console.approve_button.isVisible()
        await until(lambda: console.pill.text() == "denying…" and console.why.text().startswith("Denied: it is final"))
        await until(lambda: any(n.title.startswith("Denied R-") for n in server.shown))
        denied_note = next(n for n in server.shown if n.title.startswith("Denied R-"))
        assert "Undo" in denied_note.actions.values()
        await until(lambda: approvals()[0].closed_by_app)  # no live Approve and Deny beside the Denied notice
        server.click(denied_note, "Undo")  # from the notification
        await until(lambda: console.approve_button.isVisible() and not console.undo_button.isVisible())
        await until(lambda: len(approvals()) == 2)  # it waits again, and says so once
        assert [n.closed_by_app for n in approvals()] == [True, False]
        deadline = asyncio.get_running_loop().time() + 2 * app.denials.seconds
        while asyncio.get_running_loop().time() < deadline:  # past the time the Deny would have become final
            assert (await app.api.get(f"/api/requests/{row['id']}")).json()["state"] == "pending"
            await asyncio.sleep(0.1)

        console.deny_button.click()
        await until(lambda: console.undo_button.isVisible())
        await until(lambda: len([n for n in server.shown if n.title.startswith("Denied R-")]) == 2)
        console.undo_button.click()  # from the console
        await until(lambda: console.approve_button.isVisible() and not console.undo_button.isVisible())
        assert (await app.api.get(f"/api/requests/{row['id']}")).json()["state"] == "pending"
        await until(lambda: [n for n in server.shown if n.title.startswith("Denied R-")][-1].closed_by_app)
        console.deny_button.click()
        denied = await wait_state(app, row["id"], "cancelled")
        assert denied["denied"] and denied["result"] == "denied by owner"
        await until(lambda: console.pill.text() == "denied" and console.why.isVisible())
        assert console.why.text().startswith("Denied by owner at ") and console.why.text().endswith("It never ran.")
        await until(lambda: console.list.row_of(row["id"]).text(0).split("\n")[0].endswith(" · denied"))
        console.grab().save(str(SHOTS / "console-denied.png"))

    SHOTS.mkdir(parents=True, exist_ok=True)
    run(qloop, scenario())


def test_approve_in_the_undo_time_takes_the_deny_back_and_quitting_sends_a_waiting_deny(
    desktop: Any, qloop: Any
) -> None:
    from tests.gui_fixture import person

    app, _ = desktop
    app.denials.seconds = 600  # only Approve or quitting ends this wait

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        first, second = [
            (await app.api.post("/api/requests", json={"agent": "shell", "prompt": f"echo {n}"}, headers=sarah)).json()
            for n in (1, 2)
        ]
        await app.act("deny", first["id"])
        await app.act("approve", first["id"])
        assert (await wait_state(app, first["id"], "done"))["denied"] is False
        await app.act("deny", second["id"])
        assert app.denials.waiting(second["id"])
        await app.denials.flush()
        assert (await app.api.get(f"/api/requests/{second['id']}")).json()["denied"] is True

    run(qloop, scenario())


def test_windows_follow_a_dark_system_palette_and_open_centred(
    desktop: Any, qloop: Any, qapp: Any, monkeypatch: Any
) -> None:
    """The system's scheme is the platform theme's to say (GNOME, KDE, Windows, macOS; offscreen has none): here the
    theme's answer is set, and its change is announced as Qt announces it."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette

    from desktop.gui import style

    app, _ = desktop

    async def scenario() -> None:
        console = await app.open_console()
        screen = console.screen().availableGeometry()
        assert abs(console.frameGeometry().center().x() - screen.center().x()) <= 3
        assert abs(console.frameGeometry().center().y() - screen.center().y()) <= 3
        for scheme, expected in ((Qt.ColorScheme.Dark, style.DARK), (Qt.ColorScheme.Light, style.LIGHT)):
            monkeypatch.setattr(style, "dark", lambda scheme=scheme: scheme == Qt.ColorScheme.Dark)
            qapp.styleHints().colorSchemeChanged.emit(scheme)
            await until(
                lambda expected=expected: qapp.palette().color(QPalette.ColorRole.Window) == QColor(expected.bg), 5
            )
            picture = console.grab().toImage()
            assert picture.pixelColor(console.width() - 5, console.height() - 5) == QColor(expected.bg)
            console.grab().save(str(SHOTS / f"console-{scheme.name.lower()}.png"))

    SHOTS.mkdir(parents=True, exist_ok=True)
    run(qloop, scenario())


def test_a_deny_waiting_for_undo_is_dropped_when_answered_elsewhere_and_sent_at_once_before_expiry(
    desktop: Any, qloop: Any
) -> None:
    """The requester cancels while the owner's Deny waits: the Deny has nothing left to do (no error, no "denied").
    A request whose approval runs out sooner than the Undo time is denied at once, not left to expire."""
    from tests.gui_fixture import person

    app, server = desktop
    app.denials.seconds = 600

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo 1"}, headers=sarah)).json()
        await until(lambda: any("Approve" in n.actions.values() for n in server.shown))
        server.held = asyncio.Event()  # a slow notification server: "Denied R-…" is still on its way when ...
        await app.act("deny", row["id"])
        assert app.denials.waiting(row["id"])
        await until(lambda: app.tray.shown is not None and app.tray.shown.status == "1 denied")
        assert app.tray.shown.waiting == 0, "no badge: nothing waits for the owner"
        await until(lambda: server.holding == 1)
        await app.api.post(f"/api/requests/{row['id']}/cancel", json={}, headers=sarah)  # ... the requester cancels
        await until(lambda: not app.denials.waiting(row["id"]))
        server.held.set()
        await until(lambda: any(n.title.startswith("Denied R-") for n in server.shown))
        await until(lambda: [n for n in server.shown if n.title.startswith("Denied R-")][-1].closed_by_app)
        cancelled = (await app.api.get(f"/api/requests/{row['id']}")).json()
        assert cancelled["state"] == "cancelled" and not cancelled["denied"]
        assert not any("cannot be denied" in message for _, message in app.tray.balloons)

        await app.api.post("/api/settings", json={"key": "approval_ttl", "value": "1m"})
        soon = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo 2"}, headers=sarah)).json()
        await app.act("deny", soon["id"])  # a minute left, ten to undo: at once
        assert not app.denials.waiting(soon["id"])
        denied = await wait_state(app, soon["id"], "cancelled", 10)
        assert denied["denied"]

    run(qloop, scenario())


def test_the_tray_shows_a_deny_waiting_for_undo_and_undoes_it(desktop: Any, qloop: Any) -> None:
    from tests.gui.test_gui_tray import actions
    from tests.gui_fixture import person

    app, _ = desktop
    app.denials.seconds = 600

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo 1"}, headers=sarah)).json()
        short = f"R-{row['id'][-2:]}"
        await until(lambda: any(k.startswith(short) and k.endswith("/ Deny") for k in actions(app.tray.menu)))
        next(v for k, v in actions(app.tray.menu).items() if k.startswith(short) and k.endswith("/ Deny")).trigger()
        await until(lambda: any(k.startswith(short) and k.endswith("/ Undo deny") for k in actions(app.tray.menu)))
        assert not any(k.startswith(short) and k.endswith(("/ Approve", "/ Deny")) for k in actions(app.tray.menu))
        assert "denied (Undo in the menu)" in app.tray.toolTip() and app.tray.shown.state != "waiting"
        undo = next(v for k, v in actions(app.tray.menu).items() if k.startswith(short) and k.endswith("/ Undo deny"))
        undo.trigger()
        await until(lambda: any(k.startswith(short) and k.endswith("/ Approve") for k in actions(app.tray.menu)))
        assert app.tray.shown.state == "waiting" and not app.denials.waiting(row["id"])
        assert (await app.api.get(f"/api/requests/{row['id']}")).json()["state"] == "pending"

    run(qloop, scenario())


def test_rows_fit_their_first_line_at_any_width_and_buttons_their_text_at_any_size(qapp: Any) -> None:
    from PySide6.QtGui import QFont, QFontMetrics

    from desktop.gui.rows import RowText
    from desktop.gui.work_list import GAP, WorkList, _first_line

    text = RowText(
        "T3 · integration-runner", "running, no output for 123 min", "running", "✓ 4120 ✘ 23 · 1 h 02 min", "npm test"
    )
    metrics = QFontMetrics(QFont())
    for width in (120, 200, 280, 380, 600):
        head, pill, extra = _first_line(metrics, text, width)
        used = (
            head + GAP + metrics.horizontalAdvance(pill) + 14 + (GAP + metrics.horizontalAdvance(extra) if extra else 0)
        )
        assert used <= width and head >= 0, (width, head, pill, extra)
        assert head >= metrics.horizontalAdvance("T3 ·") or width < 160, "the ID stays in sight"
    before = qapp.font()
    big = QFont(before)
    big.setPointSize(20)
    qapp.setFont(big)
    try:
        work = WorkList()
        work.show_work(
            [
                {
                    "id": "R20261129-01",
                    "state": "failed",
                    "agent": "shell",
                    "requester": "sam",
                    "prompt": "exit 1",
                    "created_at": "2026-11-29T10:00:00+00:00",
                    "exit_code": 1,
                }
            ],
            [],
        )
        retry = work.button_of("R20261129-01")
        assert retry is not None and retry.width() >= retry.fontMetrics().horizontalAdvance("Retry") + 8
    finally:
        qapp.setFont(before)  # the next tests' font, as it was


def test_a_title_with_markup_is_shown_as_text_in_the_consoles_tooltip(desktop: Any, qloop: Any) -> None:
    from PySide6.QtGui import Qt, QTextDocument

    from desktop.gui.rows import request_text

    app, _ = desktop

    async def scenario() -> None:
        console = await app.open_console()
        row = {
            "id": "R20261129-01",
            "state": "pending",
            "agent": "S1",
            "requester": "x",
            "prompt": "echo",
            "session": {"parent_title": '<img src="x" width=900>Approve me'},
            "via_model": "<b>gpt</b>",
        }
        console._show_title(request_text(row), row["prompt"])
        tip = console.header.toolTip()
        document = QTextDocument()
        document.setHtml(tip) if Qt.mightBeRichText(tip) else document.setPlainText(tip)
        assert '<img src="x" width=900>Approve me' in document.toPlainText() and "<b>gpt</b>" in document.toPlainText()

    run(qloop, scenario())


def test_ended_tasks_stay_dimmed_with_how_they_ended_and_hide_with_x(desktop: Any, qloop: Any) -> None:
    """✓ done, ✘ failed, ■ stopped, each with its duration; × hides one; the group's line turns while something
    runs, and the group goes when nothing is left to show. A task's header: kind, state, exit code, duration; its
    chip red when tests failed."""
    from PySide6.QtGui import QColor

    from desktop.gui.style import state_colour
    from desktop.gui.work_list import SPINNER

    app, _ = desktop

    async def task(command: str, description: str) -> str:
        answer = await app.api.post(
            "/api/tasks", json={"agent": "shell", "command": command, "description": description}
        )
        return str(answer.json()["id"])

    async def ended(task_id: str) -> None:
        while (await app.api.get(f"/api/tasks/{task_id}")).json()["state"] != "ended":
            await asyncio.sleep(0.05)

    async def scenario() -> None:
        console = await app.open_console()
        work = console.list
        assert work.tasks_group.isHidden(), "no panel with nothing to show"
        good = await task("echo fine", "fine")
        bad = await task(
            "printf 'collected 2 items\\n\\ntest_a.py::test_x PASSED\\ntest_a.py::test_y FAILED\\n"
            "==== 1 failed, 1 passed in 0.1s ====\\n'; exit 1",
            "tests",
        )
        slow = await task("sleep 60", "server")
        for task_id in (good, bad):
            await ended(task_id)
        await until(lambda: work.row_of(bad) is not None and "✘ failed (exit 1)" in work.row_of(bad).text(0), 10)
        spinning = work.tasks_group.text(0)
        await until(lambda: work.tasks_group.text(0) != spinning, 3)
        assert work.tasks_group.text(0)[0] in SPINNER and "1 background task running" in work.tasks_group.text(0)
        assert "✓ completed" in work.row_of(good).text(0) and " s\n" in work.row_of(good).text(0)
        assert work.row_of(bad).text(0).split("\n")[0].endswith(" · command · ✘ failed (exit 1) · ✓ 1 ✘ 1 · 0 s")
        assert not work.tasks_group.isHidden()

        await console.open("task", bad)
        assert console.header.text().endswith(" · shell · command") and console.pill.text() == "✘ failed (exit 1)"
        assert console.chip.text() == "✓ 1 ✘ 1" and QColor(state_colour("failed")).name() in console.chip.styleSheet()
        console.grab().save(str(SHOTS / "console-task-panel.png"))

        await app.api.post(f"/api/tasks/{slow}/stop", json={})
        await ended(slow)
        await until(lambda: work.row_of(slow) is not None and "■ stopped" in work.row_of(slow).text(0), 10)
        assert work.tasks_group.text(0)[0] not in SPINNER, "nothing runs: no spinner"
        for task_id in (good, bad, slow):
            hide = work.button_of(task_id)
            assert hide is not None and hide.text() == "×"
            hide.click()
            assert work.row_of(task_id) is None
        assert work.tasks_group.isHidden(), "all hidden: no panel"
        await app.refresh()
        assert work.tasks_group.isHidden() and work.row_of(good) is None, "hidden stays hidden"

    SHOTS.mkdir(parents=True, exist_ok=True)
    run(qloop, scenario())
