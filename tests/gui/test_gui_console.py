"""The console window on a real daemon (offscreen): a coloured test run with its chip and first failure, live follow
that stops following when the person scrolls up, paging back, the tail-pipe note, Stop, and a request's timeline."""

import asyncio
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from desktop.core.ids import short_form
from desktop.gui.console_view import BACKGROUND, FOREGROUND
from tests.fakes.dbus import until
from tests.gui_fixture import SHOTS, run, wait_state

SAMPLE = Path(__file__).parents[1] / "fixtures" / "testruns" / "pytest"
PYTEST = f"cd {SAMPLE} && {sys.executable} -m pytest -p no:cacheprovider --color=yes -v test_sample.py"


async def start_task(app: Any, command: str, description: str = "") -> str:
    answer = await app.api.post("/api/tasks", json={"agent": "shell", "command": command, "description": description})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["id"])


async def ended(app: Any, task_id: str) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []

    async def check() -> bool:
        rows.append((await app.api.get(f"/api/tasks/{task_id}")).json())
        return rows[-1]["state"] == "ended"

    for _ in range(600):
        if await check():
            return rows[-1]
        await asyncio.sleep(0.05)
    raise AssertionError(f"{task_id} did not end")


def colours_in(view: Any) -> set[tuple[str, str]]:
    """(foreground, background) of every run of text shown."""
    from PySide6.QtCore import Qt

    found = set()
    block = view.document().firstBlock()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fmt = it.fragment().charFormat()
            background = fmt.background()
            found.add(
                (
                    fmt.foreground().color().name(),
                    background.color().name() if background.style() != Qt.BrushStyle.NoBrush else "",
                )
            )
            it += 1
        block = block.next()
    return found


def test_a_coloured_test_run_with_its_chip_and_first_failure(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        task_id = await start_task(app, PYTEST + "; printf '\\033[7m inverse \\033[0m\\n'", "pytest sample")
        await ended(app, task_id)
        console = await app.open_console()  # on nothing in particular: the newest thing
        await until(
            lambda: (
                console.chosen == ("task", task_id)
                and console.chip.text() == "✓ 3 ✘ 1"
                and "test_fails_on_purpose FAILED" in console.view.toPlainText()
            )
        )
        assert console.chip.toolTip() == "pytest: 3 passed, 1 failed, 1 skipped"
        shown = console.view.toPlainText()
        assert "test_fails_on_purpose FAILED" in shown and "\x1b" not in shown
        assert ("#cd3131", "") in colours_in(console.view) or ("#f14c4c", "") in colours_in(console.view)
        assert (BACKGROUND, FOREGROUND) in colours_in(console.view), "inverse video: the colours swap"
        console.view.scroll_to_end()
        console.first_failure_button.click()  # lands on the traceback, not the line or the summary that name it
        await until(lambda: console.view.textCursor().block().text().strip("_ ") == "test_fails_on_purpose")
        assert console.list.tasks_group.text(0) == "1 finished"
        assert not console.stop_button.isVisible() and not console.earlier.isVisible()
        SHOTS.mkdir(parents=True, exist_ok=True)
        console.grab().save(str(SHOTS / "console.png"))

    run(qloop, scenario())


def test_live_output_is_followed_unless_the_person_scrolled_up(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        task_id = await start_task(app, "for i in $(seq 1 400); do echo line $i; sleep 0.02; done; sleep 30")
        console = await app.open_console(("task", task_id))
        await until(lambda: "line 60" in console.view.toPlainText())
        assert console.view.at_end and console.stop_button.isVisible()
        console.view.verticalScrollBar().setValue(0)  # the person scrolls up to read
        before = console.view.lines_shown
        await until(lambda: console.view.lines_shown > before + 20)
        assert console.view.verticalScrollBar().value() == 0 and console.jump.isVisible()
        console.jump.click()
        assert console.view.at_end and not console.jump.isVisible()
        await until(lambda: console.view.toPlainText().endswith("line 400"))
        assert console.view.toPlainText().count("line 200\n") == 1, "every line once"
        console.stop_button.click()
        stopped = await ended(app, task_id)
        assert stopped["outcome"] == "stopped"
        await until(lambda: not console.stop_button.isVisible())

    run(qloop, scenario())


def test_load_earlier_pages_back_and_says_where_loading_ends(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        task_id = await start_task(app, "seq 1 5000")
        await ended(app, task_id)
        console = await app.open_console(("task", task_id))
        lines = console.view.toPlainText().splitlines()
        assert (len(lines), lines[0], lines[-1]) == (2000, "3001", "5000")
        await console.load_earlier()
        assert console.view.toPlainText().splitlines()[0] == "1001"
        await console.load_earlier()
        assert console.view.toPlainText().splitlines() == [str(i) for i in range(1, 5001)]
        assert not console.earlier.isVisible() and not console.older.isVisible(), "the start: nothing older"

        wide_lines = "[print(str(i).zfill(5), 'x' * 1000) for i in range(6000)]"
        big = await start_task(app, f'{sys.executable} -c "{wide_lines}"')
        await ended(app, big)
        await console.open_task(big)
        for _ in range(5):
            if not console.earlier.isVisible():
                break
            await console.load_earlier()
        assert console.older.isVisible() and console.older.text() == "older output not loaded"
        assert 4000 < console.view.lines_shown < 6000

    run(qloop, scenario())


def test_a_pipe_into_tail_is_explained_and_escape_closes(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        task_id = await start_task(app, "seq 1 3 | tail -1; sleep 20")
        console = await app.open_console(("task", task_id))
        assert console.note.isVisible() and "tail" in console.note.text()
        await app.api.post(f"/api/tasks/{task_id}/stop", json={})
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        QTest.keyClick(console, Qt.Key.Key_Escape)
        assert not console.isVisible()

    run(qloop, scenario())


def test_a_request_shows_its_timeline_and_console(desktop: Any, qloop: Any) -> None:
    app, _ = desktop

    async def scenario() -> None:
        row = (
            await app.api.post(
                "/api/requests", json={"agent": "shell", "prompt": "printf '\\033[32mgreen\\033[0m\\n'; echo second"}
            )
        ).json()
        await wait_state(app, row["id"], "done")
        console = await app.open_console(("request", row["id"]))
        texts = [console.timeline.item(i).text().split("  ", 1)[1] for i in range(console.timeline.count())]
        assert texts[0] == "requested by owner, approved" and texts[-1] == "done"
        assert "green\nsecond" in console.view.toPlainText()
        assert ("#0dbc79", "") in colours_in(console.view)
        assert console.list.requests_group.text(0).startswith("Requests")

    run(qloop, scenario())


def test_a_quiet_task_says_so_in_amber_and_its_row_stops_it(qloop: Any, tmp_path: Path, monkeypatch: Any) -> None:
    """On a daemon whose clock the test moves: a minute without output, then past `quiet_after`."""
    import time

    from tests.gui_fixture import running_app
    from tests.ledger_fixture import MovableClock

    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")
    clock = MovableClock(start=time.time())

    async def minutes_pass(app: Any, minutes: int) -> None:
        for _ in range(minutes * 6):  # checked every 10 s
            clock.advance(10)
            await app.daemon.tasks.tick()

    async def scenario(app: Any) -> None:
        await app.api.post("/api/settings", json={"key": "quiet_after", "value": "2m"})
        task_id = await start_task(app, "echo started; sleep 600")
        console = await app.open_console(("task", task_id))
        await until(lambda: "started" in console.view.toPlainText())
        await app.daemon.tasks.tick()
        await minutes_pass(app, 1)
        await console.follow()
        assert console.quiet.text() == "no output for 1 min" and "b45309" not in console.quiet.styleSheet()
        await minutes_pass(app, 1)
        await console.follow()
        assert console.quiet.text() == "no output for 2 min" and "b45309" in console.quiet.styleSheet()
        await app.refresh()  # quiet time changes no row the events carry: a full read
        assert "running, no output for 2 min" in console.list.tasks_group.child(0).text(0)
        stop = console.list.button_of(task_id)
        assert stop is not None and stop.text() == "Stop"
        stop.click()
        assert (await ended(app, task_id))["outcome"] == "stopped"
        await until(lambda: (button := console.list.button_of(task_id)) is not None and button.text() == "×")

    with running_app(qloop, tmp_path, clock=clock) as app:
        run(qloop, scenario(app))


def newest_line_in_sight(view: Any) -> bool:
    """The view is scrolled to its end and its last line is drawn inside the viewport."""
    last = view.document().lastBlock()
    box = view.blockBoundingGeometry(last).translated(view.contentOffset())
    return bool(view.at_end and box.top() >= 0 and box.bottom() <= view.viewport().height() + 1)


async def laid_out() -> None:
    """The windows laid out around what they show now (the layouts' posted requests handled, and what they resized)."""
    from PySide6.QtCore import QCoreApplication

    for _ in range(3):
        QCoreApplication.sendPostedEvents()
        await asyncio.sleep(0)


def last_number(view: Any) -> int:
    text = view.document().lastBlock().text()
    return int(text.split()[-1]) if text.startswith("line ") else 0


def test_a_running_request_is_followed_to_its_newest_line(desktop: Any, qloop: Any) -> None:
    """Opened from the tray's "Open in console" on a request that prints a line every 100 ms: the newest line is in
    sight when it has shown, and still after ten seconds more of output; a finished 3,000-line request opens at its
    end, on its last 2,000 lines, and loads the earlier ones on "Load earlier"."""
    from tests.gui.test_gui_tray import actions

    app, _ = desktop

    async def scenario() -> None:
        done = (
            await app.api.post(
                "/api/requests", json={"agent": "shell", "prompt": "for i in $(seq 1 3000); do echo line $i; done"}
            )
        ).json()
        await wait_state(app, done["id"], "done")
        console = await app.open_console(("request", done["id"]))
        await laid_out()
        assert console.view.document().lastBlock().text() == "line 3000"
        assert newest_line_in_sight(console.view) and not console.jump.isVisible()
        assert console.view.document().firstBlock().text() == "line 1001" and console.earlier.isVisible()
        await console.load_earlier()  # a request's console pages back like a task's
        assert console.view.document().firstBlock().text() == "line 1" and not console.earlier.isVisible()
        console.view.scroll_to_end()

        row = (
            await app.api.post(
                "/api/requests",
                json={
                    "agent": "shell",
                    "prompt": "for i in $(seq 1 5000); do echo line $i; if [ $i -gt 150 ]; then sleep 0.1; fi; done",
                },
            )
        ).json()

        async def printed() -> int:
            return str((await app.api.get(f"/api/requests/{row['id']}/output")).json()["text"]).count("\n")

        await wait_state(app, row["id"], "running")
        while await printed() < 150:
            await asyncio.sleep(0.05)  # more than a screenful printed before it is opened
        await until(lambda: any(k.endswith("/ Open in console") for k in actions(app.tray.menu)), 10)
        next(v for k, v in actions(app.tray.menu).items() if k.endswith("/ Open in console")).trigger()
        short = short_form(row["id"], datetime.now(UTC).date())
        await until(
            lambda: (
                console.header.text().startswith(f"{short} ")
                and last_number(console.view) > 5
                and not console.timeline.isHidden()
            ),
            10,
        )
        await laid_out()
        shown = last_number(console.view)
        assert newest_line_in_sight(console.view) and not console.jump.isVisible(), f"parked at line {shown}"
        while await printed() < shown + 100:  # ten seconds more output (on a busy machine, more)
            await asyncio.sleep(0.2)
        try:  # shown within a poll or two (on a busy machine, more than one)
            await until(lambda: last_number(console.view) >= shown + 100 and newest_line_in_sight(console.view), 5)
        except AssertionError as timed_out:
            raise AssertionError(
                f"the console shows line {last_number(console.view)} "
                f"(in sight: {newest_line_in_sight(console.view)}); printed: {await printed()}"
            ) from timed_out
        assert not console.jump.isVisible()
        SHOTS.mkdir(parents=True, exist_ok=True)
        console.grab().save(str(SHOTS / "console-following-a-request.png"))
        await app.api.post(f"/api/requests/{row['id']}/cancel", json={})

    run(qloop, scenario(), timeout=300)


def test_the_list_shows_requests_newest_first_and_a_new_one_on_top(desktop: Any, qloop: Any) -> None:
    """One order, newest first (as the tray and the room), at the first load and for a request made while it is open;
    the row the person is on stays chosen."""
    from PySide6.QtCore import Qt

    app, _ = desktop

    def listed(console: Any) -> list[str]:
        group = console.list.requests_group
        return [group.child(i).data(0, Qt.ItemDataRole.UserRole)[1] for i in range(group.childCount())]

    async def made(prompt: str) -> str:
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": prompt})).json()
        await wait_state(app, row["id"], "done")
        return str(row["id"])

    async def scenario() -> None:
        first, second = await made("echo one"), await made("echo two")
        console = await app.open_console(("request", first))
        assert listed(console) == [second, first]
        third, fourth = await made("echo three"), await made("echo four")
        await until(lambda: len(listed(console)) == 4, 10)
        assert listed(console) == [fourth, third, second, first]
        assert console.chosen == ("request", first)
        assert [i.data(0, Qt.ItemDataRole.UserRole)[1] for i in console.list.selectedItems()] == [first]

    run(qloop, scenario())
