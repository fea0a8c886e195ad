"""The room's task panel (issue 18), as a person sees it in Chromium at phone size: ended commands stay an hour as
dimmed rows that say how they ended (✓ ✘ ■ ?), how long they ran and their test chip, red when tests failed; × hides
one for the tab's life; the summary line spins while something runs (still for reduced motion) and the panel is gone
when there is nothing to show; a task console's header names it, its type, duration, state and exit code."""

import json
import os
import re
import signal
import time
from datetime import datetime
from typing import Any

from playwright.sync_api import Browser, Locator, Page, expect

from desktop.core.durations import how_long
from tests.daemon_process import DaemonProcess
from tests.integration.test_room_browser import PYTEST, phone, phones
from tests.room_browser import Phone, browser

__all__ = ["browser", "phones"]
RED, GREEN, MUTED = "rgb(207, 34, 46)", "rgb(26, 127, 55)", "rgb(89, 99, 110)"  # --bad, --ok, --muted


def style(locator: Locator, name: str) -> str:
    return str(locator.evaluate(f"(node) => getComputedStyle(node).{name}"))


def start(daemon: DaemonProcess, command: str, description: str = "", kind: str = "command") -> dict[str, Any]:
    answer = daemon.post("/api/tasks", {"agent": "shell", "command": command, "description": description, "kind": kind})
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def ended(daemon: DaemonProcess, task_id: str, timeout: float = 30.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while (task := daemon.get(f"/api/tasks/{task_id}").json())["state"] != "ended":
        assert time.monotonic() < deadline, f"{task_id} did not end: {task}"
        time.sleep(0.05)
    return dict(task)


def ran(task: dict[str, Any]) -> str:
    """How long it ran, as desktop/core/durations.py says it (the room's howLong is its twin)."""
    took = datetime.fromisoformat(task["ended_at"]) - datetime.fromisoformat(task["started_at"])
    return how_long(took.total_seconds())


def lost_on_restart(daemon: DaemonProcess) -> dict[str, Any]:
    """A task whose runner died with the daemon, without a word: after the restart its result is unknown."""
    lost = start(daemon, "sleep 60", "lost with its runner")
    runner = daemon.home / "tasks" / lost["id"] / "runner.json"
    deadline = time.monotonic() + 15
    while not runner.exists():
        assert time.monotonic() < deadline, "the runner did not start"
        time.sleep(0.05)
    daemon.stop(signal.SIGKILL)
    info = json.loads(runner.read_text())
    os.kill(info["runner_pid"], signal.SIGKILL)
    os.killpg(info["pgid"], signal.SIGKILL)
    daemon.start()
    return ended(daemon, lost["id"])


def row(page: Page, task_id: str) -> Locator:
    return page.locator("#tasks li", has=page.locator(f"a[href='#/t/{task_id}']"))


def test_ended_tasks_stay_as_dimmed_rows_that_say_how_they_ended_and_x_hides_one_for_the_tabs_life(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    unknown = lost_on_restart(daemon)
    failed = ended(daemon, start(daemon, PYTEST, "pytest sample")["id"])
    done = ended(daemon, start(daemon, f"{PYTEST} -k 'not fails'", "pytest, the passing ones")["id"])
    stopped = start(daemon, "sleep 60", "a dev server")
    assert daemon.post(f"/api/tasks/{stopped['id']}/stop", {}).status_code == 200
    stopped = ended(daemon, stopped["id"])
    running = start(daemon, "sleep 120", "watch the logs", kind="monitor")

    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    rows = page.locator("#tasks li")
    expect(rows).to_have_count(5)
    expect(row(page, running["id"]).locator(".state")).to_have_text("running")
    expect(row(page, running["id"]).locator(".what").first).to_have_text("shell · monitor")
    pills = {
        done["id"]: ("✓ completed", GREEN),
        failed["id"]: ("✘ failed (exit 1)", RED),
        stopped["id"]: ("■ stopped", MUTED),
        unknown["id"]: ("? ended, result unknown", MUTED),
    }
    for task in (done, failed, stopped, unknown):
        shown = row(page, task["id"])
        text, colour = pills[task["id"]]
        expect(shown.locator(".state")).to_have_text(text)
        assert style(shown.locator(".state"), "color") == colour
        expect(shown.locator(".took")).to_have_text(ran(task))
        expect(shown.locator(".what").first).to_have_text("shell · command")
        expect(shown.locator(".what").last).to_have_text(task["description"])
        assert style(shown, "opacity") == "0.6", "an ended task is dimmed"
        expect(shown.get_by_role("button", name=f"Hide {task['id']} from this list")).to_have_text("×")
    assert style(row(page, running["id"]), "opacity") == "1"
    expect(row(page, running["id"]).get_by_role("button")).to_have_count(0)  # only ended rows are hidden
    expect(row(page, failed["id"]).locator(".chip")).to_have_text("✓ 3 ✘ 1")
    assert style(row(page, failed["id"]).locator(".chip"), "color") == RED
    expect(row(page, done["id"]).locator(".chip")).to_have_text("✓ 3")
    assert style(row(page, done["id"]).locator(".chip"), "color") == GREEN
    expect(row(page, stopped["id"]).locator(".chip")).to_have_count(0)
    took = row(page, running["id"]).locator(".took")
    expect(took).to_have_text(re.compile(r"^\d+ s$"))
    expect(took).not_to_have_text(took.inner_text(), timeout=5_000)  # it counts on by itself
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.locator("#tasks-box").scroll_into_view_if_needed()
    owner.shot("tasks-panel")

    row(page, done["id"]).get_by_role("button", name=f"Hide {done['id']} from this list").click()
    expect(rows).to_have_count(4)
    expect(row(page, done["id"])).to_have_count(0)
    expect(row(page, failed["id"]).locator("a")).to_be_focused()  # the keyboard goes on to the next row
    expect(page.locator("#tasks-summary")).to_have_text("1 running · 3 ended")
    page.reload()
    expect(rows).to_have_count(4)  # kept hidden in this tab (sessionStorage)
    expect(row(page, done["id"])).to_have_count(0)
    other = phone(phones, browser, daemon).sign_in(daemon.token)
    expect(other.locator("#tasks li")).to_have_count(5)  # another tab, or the owner's other phone, still shows it
    assert owner.errors == []


def test_the_summary_line_spins_while_something_runs_and_the_panel_is_gone_with_nothing_to_show(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    calm = Phone(browser, daemon.url + "/", reduced_motion="reduce")
    phones.append(calm)
    still = calm.sign_in(daemon.token)
    panel, spinner, summary = page.locator("#tasks-box"), page.locator("#tasks-spinner"), page.locator("#tasks-summary")
    expect(page.locator("#agents li")).to_have_count(1)
    expect(panel).to_be_hidden()  # no task yet

    server = start(daemon, "sleep 120", "a dev server")
    expect(panel).to_be_visible()  # live, without a reload
    expect(summary).to_have_text("1 running")
    expect(spinner).to_be_visible()
    assert style(spinner, "animationName") == "spin"
    turned = spinner.evaluate("(node) => getComputedStyle(node).transform")
    page.wait_for_function(
        "([node, was]) => getComputedStyle(node).transform !== was", arg=[spinner.element_handle(), turned]
    )
    page.locator("#tasks-box").scroll_into_view_if_needed()
    owner.shot("tasks-spinner")
    expect(still.locator("#tasks-spinner")).to_be_visible()
    assert style(still.locator("#tasks-spinner"), "animationName") == "none", "reduced motion: it stands still"

    assert daemon.post(f"/api/tasks/{server['id']}/stop", {}).status_code == 200
    expect(summary).to_have_text("1 ended")
    expect(spinner).to_be_hidden()
    expect(row(page, server["id"]).locator(".state")).to_have_text("■ stopped")
    page.locator("#tasks-box").scroll_into_view_if_needed()
    owner.shot("tasks-ended")
    row(page, server["id"]).get_by_role("button", name=f"Hide {server['id']} from this list").click()
    expect(panel).to_be_hidden()  # nothing left to show
    expect(page.get_by_role("heading", name="Requests")).to_be_visible()
    assert owner.errors == [] and calm.errors == []


def test_a_task_consoles_header_names_it_its_type_duration_state_and_exit_code(
    daemon: DaemonProcess, browser: Browser, phones: list[Phone]
) -> None:
    failed = ended(daemon, start(daemon, PYTEST, "pytest sample")["id"])
    done = ended(daemon, start(daemon, "echo fine")["id"])
    watching = start(daemon, "sleep 120", "tail <b>the</b> logs\u202e", kind="monitor")
    owner = phone(phones, browser, daemon)
    page = owner.sign_in(daemon.token)
    title, meta, chip = page.locator("#r-title"), page.locator("#r-meta"), page.locator("#chip")

    row(page, failed["id"]).locator("a").click()
    expect(title).to_have_text(f"{failed['id']} · pytest sample")
    expect(meta.locator(".state")).to_have_text("✘ failed")
    assert style(meta.locator(".state"), "color") == RED
    expect(meta).to_have_text(
        re.compile(
            rf"^✘ failed command · {ran(failed)} · exit code 1 · started at "
            r"\d\d:\d\d:\d\d( [AP]M)? by shell$"
        )
    )
    expect(chip).to_have_text("✓ 3 ✘ 1")
    assert style(chip, "color") == RED == style(chip, "borderTopColor"), "red: tests failed"
    owner.shot("task-header-failed")

    page.go_back()
    row(page, done["id"]).locator("a").click()
    expect(title).to_have_text(f"{done['id']} · echo fine")  # no description: its command names it
    expect(meta).to_have_text(re.compile(rf"^✓ completed command · {ran(done)} · exit code 0 · started at "))
    assert style(meta.locator(".state"), "color") == GREEN
    expect(chip).to_be_hidden()  # no test run in its output

    page.go_back()
    row(page, watching["id"]).locator("a").click()
    expect(title).to_have_text(f"{watching['id']} · tail <b>the</b> logs⟨U+202E⟩")  # as text, made visible
    expect(page.locator("#r-prompt")).to_have_text("$ sleep 120")  # the title says all its description does
    expect(meta).to_have_text(re.compile(r"^running monitor · \d+ s · started at "))
    took = meta.locator(".took")
    expect(took).not_to_have_text(took.inner_text(), timeout=5_000)
    expect(meta.locator(".exit")).to_have_count(0)  # no exit code while it runs
    owner.shot("task-header-running")
    page.get_by_role("button", name="Stop").click()
    expect(meta).to_have_text(
        re.compile(
            r"^■ stopped monitor · \d+ s · (exit code -?\d+|no exit code) · "
            r"stopped by owner · started at "
        )
    )
    assert style(meta.locator(".state"), "color") == MUTED
    assert owner.errors == []
