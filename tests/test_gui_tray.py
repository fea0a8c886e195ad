"""The tray's menu and icon, on a real (offscreen) Qt: what it offers for the requests it is shown, and which call a
click makes. What the call then does is the daemon's API, tested on its own."""

import time
from datetime import date
from typing import Any

from desktop.gui.summary import summarize
from tests.daemon_process import DaemonProcess

TODAY = date(2026, 11, 29)
REQUESTS = [
    {"id": "R20261129-07", "state": "running", "agent": "api", "requester": "sarah", "progress": 60.0,
     "prompt": "fix the flaky login test"},
    {"id": "R20261129-08", "state": "pending", "agent": "web", "requester": "tom", "progress": None,
     "prompt": "upgrade the bundler and run the whole test suite again, please"},
]


def actions(menu: Any) -> dict[str, Any]:
    """Every action of the menu and its submenus, by its path of texts ("R-08 … / Approve")."""
    found = {}
    for action in menu.actions():
        if action.isSeparator():  # the section headers
            continue
        if action.menu() is not None:
            found.update({f"{action.text()} / {k}": v for k, v in actions(action.menu()).items()})
        elif action.text():
            found[action.text()] = action
    return found


def test_the_menu_offers_what_each_request_needs(qapp: Any) -> None:
    from desktop.gui.tray import Tray

    clicks: list[tuple[str, str]] = []
    tray = Tray(lambda verb, request_id: clicks.append((verb, request_id)))
    tray.show_summary(summarize(REQUESTS, today=TODAY))
    shown = actions(tray.menu)
    waiting = "R-08 · web · tom · waiting for approval: upgrade the bundler and run the whole test suite…"
    running = "R-07 · api · sarah · 60%: fix the flaky login test"
    assert set(shown) == {f"{waiting} / Approve", f"{waiting} / Deny", f"{waiting} / Review…",
                          f"{running} / Open in console", f"{running} / Cancel", "Open console", "Pause all agents",
                          "Room: starting…", "Settings…", "Quit Coxswain"}
    shown[f"{waiting} / Approve"].trigger()
    shown[f"{waiting} / Review…"].trigger()
    shown[f"{running} / Cancel"].trigger()
    shown["Pause all agents"].trigger()
    assert clicks == [("approve", "R20261129-08"), ("review", "R20261129-08"), ("cancel", "R20261129-07"),
                      ("pause", "")]
    assert tray.toolTip().splitlines()[0] == "Coxswain: 1 waiting for you" and not tray.icon().isNull()

    tray.show_summary(summarize([], paused=True, today=TODAY))
    assert set(actions(tray.menu)) == {"Open console", "Resume all agents", "Room: starting…", "Settings…",
                                       "Quit Coxswain"}
    assert tray.toolTip() == "Coxswain: paused"


def test_pause_holds_every_queue_and_resume_lets_it_go(daemon: DaemonProcess) -> None:
    assert daemon.cox("pause", check=True).stdout.startswith("paused")
    row = daemon.request("echo after the pause")
    waited = daemon.wait_state(row["id"], "approved")
    assert waited["state"] == "approved"
    time.sleep(1)
    assert daemon.show(row["id"])["state"] == "approved", "nothing new starts while paused"
    assert daemon.get("/api/settings").json()["agents_paused"] == "yes"
    daemon.cox("resume", check=True)
    assert daemon.wait_state(row["id"], "done")["result"] == "after the pause"
    assert daemon.post("/api/agents/pause", {}, token=daemon.add_person("sam")).status_code == 403


def test_a_running_icon_fills_a_ring_with_the_progress(qapp: Any) -> None:
    from desktop.gui.tray import ICON_SIZE, Tray

    tray = Tray(lambda verb, request_id: None)

    def picture(progress: float | None) -> Any:
        running = [{**REQUESTS[0], "progress": progress}]
        tray.show_summary(summarize(running, today=TODAY))
        return tray.icon().pixmap(ICON_SIZE, ICON_SIZE).toImage()

    plain, quarter, most = picture(None), picture(25.0), picture(90.0)
    assert plain != quarter != most and quarter != plain
    top_right = (ICON_SIZE * 3 // 4, ICON_SIZE // 10)  # on the ring, a quarter of the way round
    bottom_left = (ICON_SIZE // 4, ICON_SIZE * 9 // 10)  # on the ring, three quarters of the way round
    green = 0x22C55E
    assert quarter.pixelColor(*top_right).rgb() & 0xFFFFFF == green
    assert quarter.pixelColor(*bottom_left).rgb() & 0xFFFFFF != green
    assert most.pixelColor(*bottom_left).rgb() & 0xFFFFFF == green


def test_a_waiting_icon_carries_how_many_wait(qapp: Any) -> None:
    from desktop.gui.tray import BADGE, ICON_SIZE, Tray

    tray = Tray(lambda verb, request_id: None)

    def picture(waiting: int) -> Any:
        pending = [{**REQUESTS[1], "id": f"R20261129-{10 + i}"} for i in range(waiting)]
        tray.show_summary(summarize(pending, today=TODAY))
        return tray.icon().pixmap(ICON_SIZE, ICON_SIZE).toImage()

    one, two, many = picture(1), picture(2), picture(12)
    badge_edge = (ICON_SIZE * 55 // 64, ICON_SIZE * 50 // 64)  # inside the badge, clear of its number
    assert one.pixelColor(*badge_edge).name() == BADGE
    assert one != two != many, "the number drawn differs"
    assert tray.toolTip().splitlines()[0] == "Coxswain: 12 waiting for you"
