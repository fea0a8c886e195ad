"""The console window's "First failure" on a run that names its failures only in their reports: pytest-xdist with
-q, where a worker crashed (before, the button never showed for it). A real daemon, offscreen."""

import shutil
import sys
from pathlib import Path
from typing import Any

from tests.fakes.dbus import until
from tests.gui.test_gui_console import ended, start_task
from tests.gui_fixture import SHOTS, run
from tests.integration.test_console_testruns import FIXTURES


def test_first_failure_lands_on_a_crashed_xdist_workers_report(desktop: Any, qloop: Any, tmp_path: Path) -> None:
    app, _ = desktop
    project = tmp_path / "crash"
    shutil.copytree(FIXTURES / "pytest-crash", project)
    command = (
        f"cd {project} && PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -p no:cacheprovider"
        " -p xdist -n 2 -q --color=yes"
    )

    async def scenario() -> None:
        task_id = await start_task(app, command, "pytest -n 2")
        await ended(app, task_id)
        console = await app.open_console(("task", task_id))
        await until(lambda: console.chip.text() == "✓ 4 ✘ 2" and console.first_failure_button.isVisible())
        console.view.scroll_to_end()
        console.first_failure_button.click()
        await until(lambda: console.view.textCursor().block().text().strip("_ ") == "test_crash.py")
        assert console.view.textCursor().selectedText() == console.view.textCursor().block().text()
        assert console.view.horizontalScrollBar().value() == 0, "the heading is shown from its start"
        after = console.view.textCursor().block().next().next().text()
        assert (
            after == "worker 'gw0' crashed while running 'test_crash.py::test_crashes_on_purpose'"
            or after == "worker 'gw1' crashed while running 'test_crash.py::test_crashes_on_purpose'"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        console.grab().save(str(SHOTS / "console-first-failure-xdist.png"))

    run(qloop, scenario())
