"""The tray's menu, tooltip and icon, on a real (offscreen) Qt: what it says and offers for the requests and tasks it
is shown, which call a click makes, how wide the menu gets, and the icon's pictures read by their pixels at 22 px
on a light and a dark panel. What a call then does is the daemon's API, tested on its own."""

import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from desktop.gui.summary import summarize
from tests.daemon_process import DaemonProcess
from tests.gui_fixture import SHOTS

TODAY = date(2026, 11, 29)
NOW = datetime(2026, 11, 29, 15, 0, tzinfo=UTC)
REQUESTS: list[dict[str, Any]] = [
    {
        "id": "R20261129-07",
        "state": "running",
        "agent": "api",
        "requester": "sarah",
        "progress": 60.0,
        "prompt": "fix the flaky login test",
        "started_at": (NOW - timedelta(minutes=4, seconds=10)).isoformat(),
    },
    {
        "id": "R20261129-08",
        "state": "pending",
        "agent": "web",
        "requester": "tom",
        "progress": None,
        "prompt": "upgrade the bundler and run the whole test suite again, please",
        "started_at": None,
    },
    {
        "id": "R20261129-09",
        "state": "pending",
        "agent": "api",
        "requester": "ana",
        "progress": None,
        "prompt": "rename the config flag",
        "started_at": None,
    },
    {
        "id": "R20261129-05",
        "state": "done",
        "agent": "api",
        "requester": "sarah",
        "progress": 100.0,
        "prompt": "done already",
        "started_at": (NOW - timedelta(hours=2)).isoformat(),
    },
]
TASKS: list[dict[str, Any]] = [
    {
        "id": "T3",
        "state": "running",
        "agent": "api",
        "description": "npm test",
        "command": "npm test -- --ci",
        "started_at": (NOW - timedelta(hours=1, minutes=5)).isoformat(),
    },
    {
        "id": "T4",
        "state": "stopping",
        "agent": "web",
        "description": "",
        "command": "vite --port 5173",
        "started_at": (NOW - timedelta(seconds=20)).isoformat(),
    },
    {
        "id": "T2",
        "state": "ended",
        "agent": "api",
        "description": "lint",
        "command": "ruff check",
        "started_at": (NOW - timedelta(hours=1)).isoformat(),
    },
]
LIGHT, DARK = "#f5f5f5", "#202020"


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


def texts(menu: Any) -> list[str]:
    """The menu's lines as drawn, top to bottom: sections as '— title —', separators as '—'."""
    return [(f"— {a.text()} —" if a.text() else "—") if a.isSeparator() else a.text() for a in menu.actions()]


def entry(menu: Any, start: str) -> str:
    found = [text for text in texts(menu) if text.startswith(start)]
    assert len(found) == 1, (start, texts(menu))
    return found[0]


def test_the_menu_starts_with_the_status_and_lists_what_waits_runs_and_works_in_the_background(qapp: Any) -> None:
    from desktop.gui.tray import Tray

    clicks: list[tuple[str, str]] = []
    tray = Tray(lambda verb, item_id: clicks.append((verb, item_id)), now=lambda: NOW)
    tray.show_summary(summarize(REQUESTS, today=TODAY, tasks=TASKS))
    status = tray.menu.actions()[0]
    assert status.text() == "2 waiting · 1 running · 2 tasks" and not status.isEnabled()
    waiting_08, waiting_09 = entry(tray.menu, "R-08"), entry(tray.menu, "R-09")
    running, task, stopping = entry(tray.menu, "R-07"), entry(tray.menu, "T3"), entry(tray.menu, "T4")
    assert texts(tray.menu) == [
        "2 waiting · 1 running · 2 tasks",
        "— Waiting for you (2) —",
        waiting_08,
        waiting_09,
        "— Running —",
        running,
        "— Background tasks —",
        task,
        stopping,
        "—",
        "Open console",
        "Pause all agents",
        "Room: starting…",
        "Settings…",
        "Quit Coxswain",
    ]
    # under "Waiting for you" an entry does not say again that it waits; the prompt is shortened to fit the menu
    assert waiting_08.startswith("R-08 · web · tom: upgrade the bundler") and waiting_08.endswith("…")
    assert waiting_09 == "R-09 · api · ana: rename the config flag"
    assert running == "R-07 · api · sarah · 60%: fix the flaky login test"
    assert (task, stopping) == ("T3 · api: npm test", "T4 · web: vite --port 5173")
    SHOTS.mkdir(parents=True, exist_ok=True)
    tray.menu.adjustSize()  # as when it opens
    shot = tray.menu.grab()
    assert shot.width() <= 400 and shot.save(str(SHOTS / "tray-menu-entries.png"))

    shown = actions(tray.menu)
    assert [path.split(" / ")[1] for path in shown if path.startswith(waiting_08)] == ["Approve", "Review…", "Deny"]
    submenu = next(a.menu() for a in tray.menu.actions() if a.menu() is not None and a.text().startswith("R-08"))
    kinds = ["-" if a.isSeparator() else a.text() for a in submenu.actions()]
    assert kinds == ["Approve", "Review…", "-", "Deny"], "Deny apart from Approve"
    assert [path.split(" / ")[1] for path in shown if path.startswith(running)] == ["Open in console", "Cancel"]
    assert [path.split(" / ")[1] for path in shown if path.startswith(task)] == ["Open in console", "Stop"]
    assert not shown[f"{stopping} / Stopping…"].isEnabled()
    for path in (
        f"{waiting_08} / Approve",
        f"{waiting_09} / Review…",
        f"{running} / Open in console",
        f"{running} / Cancel",
        f"{task} / Open in console",
        f"{task} / Stop",
        "Pause all agents",
    ):
        shown[path].trigger()
    assert clicks == [
        ("approve", "R20261129-08"),
        ("review", "R20261129-09"),
        ("open", "R20261129-07"),
        ("cancel", "R20261129-07"),
        ("open_task", "T3"),
        ("stop_task", "T3"),
        ("pause", ""),
    ]

    tray.show_summary(summarize([], paused=True, today=TODAY))
    assert texts(tray.menu) == [
        "Paused",
        "—",
        "Open console",
        "Resume all agents",
        "Room: starting…",
        "Settings…",
        "Quit Coxswain",
    ]
    tray.show_summary(summarize([], today=TODAY, tasks=TASKS[2:]))
    assert texts(tray.menu)[0] == "Nothing running" and tray.toolTip() == "Coxswain: nothing running"


def test_many_entries_are_counted_and_left_to_the_console(qapp: Any) -> None:
    from desktop.gui.tray import Tray

    tray = Tray(lambda verb, item_id: None, now=lambda: NOW)
    opened: list[bool] = []
    tray.console_action.triggered.connect(lambda: opened.append(True))
    tasks = [{**TASKS[0], "id": f"T{n}", "description": f"watch {n}"} for n in range(1, 9)]
    tray.show_summary(summarize(REQUESTS, today=TODAY, tasks=tasks))
    lines = texts(tray.menu)
    assert lines[0] == "2 waiting · 1 running · 8 tasks"
    assert lines[lines.index("— Background tasks —") + 1 : lines.index("—")] == [
        "T1 · api: watch 1",
        "T2 · api: watch 2",
        "T3 · api: watch 3",
        "T4 · api: watch 4",
        "T5 · api: watch 5",
        "3 more in the console…",
    ]
    actions(tray.menu)["3 more in the console…"].trigger()
    assert opened == [True]


CHINESE = "请把整个测试套件再跑一遍并修复所有失败的测试，然后更新变更日志和文档"
LONG: list[dict[str, Any]] = [
    {
        "id": "R20261128-117",
        "state": "pending",
        "agent": "W" * 64,
        "requester": "M" * 40,
        "progress": None,
        "prompt": "W" * 300,
        "started_at": None,
    },
    {
        "id": "R20261128-118",
        "state": "pending",
        "agent": "frontend-monorepo-web-app",
        "started_at": None,
        "requester": "Maximiliane Wolff",
        "progress": None,
        "prompt": CHINESE * 3,
    },
    {
        "id": "R20261128-119",
        "state": "running",
        "agent": "infrastructure-terraform",
        "requester": "bartholomew",
        "progress": 33.0,
        "prompt": "🚀" * 120,
        "started_at": None,
    },
]
LONG_TASKS: list[dict[str, Any]] = [
    {
        "id": "T117",
        "state": "running",
        "agent": "integration-test-runner",
        "started_at": None,
        "description": "",
        "command": "docker compose -f docker-compose.integration.yml up --abort-on-" * 9,
    }
]


@pytest.mark.parametrize("dbusmenu", [False, True])
def test_the_menu_stays_under_400_px_with_long_prompts_ids_and_names(qapp: Any, dbusmenu: bool) -> None:
    from desktop.gui.tray import MENU_WIDTH, Tray

    tray = Tray(lambda verb, item_id: None)
    tray.dbusmenu = dbusmenu
    tray.show_summary(summarize(LONG, paused=True, failed_unseen=True, today=TODAY, tasks=LONG_TASKS))
    assert MENU_WIDTH == 400 and tray.menu.sizeHint().width() <= 400, texts(tray.menu)
    labels = [text.replace("__", "_") for text in texts(tray.menu)]
    assert labels[0] == "Paused · 2 waiting · 1 running · 1 task · something failed"
    # still tells each one apart: its ID, and as much of the rest as fits
    assert labels[2].startswith("R20261128-117 · WWWW")
    assert labels[3].startswith("R20261128-118 · frontend-… · Maximilia…: 请把")
    assert labels[3].endswith("…") and labels[2].endswith("…")
    assert labels[5].startswith("R20261128-119 · infrastru… · bartholom… · 33%: 🚀🚀")
    assert labels[7].startswith("T117 · integrati…: docker compose")
    for action in tray.menu.actions():
        assert action.menu() is None or action.menu().sizeHint().width() <= 400  # type: ignore[attr-defined]


def test_the_tooltip_has_the_status_progress_and_how_long_each_has_run(
    qapp: Any, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import desktop.gui.tray
    from desktop.gui.tray import Tray

    monkeypatch.setattr(desktop.gui.tray, "RETIP_MS", 20)  # its time moves on every 30 s; here at once
    now = [NOW]
    tray = Tray(lambda verb, item_id: None, now=lambda: now[0])
    tray.show_summary(summarize(REQUESTS, today=TODAY, tasks=TASKS))
    assert tray.toolTip().splitlines() == [
        "Coxswain: 2 waiting · 1 running · 2 tasks",
        "R-08 · web · tom · waiting for approval",
        "R-09 · api · ana · waiting for approval",
        "R-07 · api · sarah · 60% · 4 min",
        "T3 · api · npm test · 1 h 05 min",
        "T4 · web · vite --port 5173 · stopping",
    ]
    now[0] = NOW + timedelta(minutes=3)
    qtbot.waitUntil(lambda: "R-07 · api · sarah · 60% · 7 min" in tray.toolTip().splitlines(), timeout=10_000)
    assert "T3 · api · npm test · 1 h 08 min" in tray.toolTip().splitlines()

    just = [{**REQUESTS[0], "progress": None, "started_at": (now[0] - timedelta(seconds=5)).isoformat()}]
    tray.show_summary(summarize(just, today=TODAY, tasks=[{**TASKS[0], "started_at": "2026-11-27T14:00:00"}]))
    assert tray.toolTip().splitlines() == [
        "Coxswain: 1 running · 1 task",
        "R-07 · api · sarah · just started",
        "T3 · api · npm test · 2 d 1 h",
    ]
    many = [{**REQUESTS[1], "id": f"R20261129-{n:02d}"} for n in range(20, 29)]
    tray.show_summary(summarize(many, today=TODAY))
    assert tray.toolTip().splitlines()[-1] == "… and 3 more"


def test_a_left_click_asks_for_the_console_and_a_right_click_does_not(qapp: Any) -> None:
    from PySide6.QtWidgets import QSystemTrayIcon

    from desktop.gui.tray import Tray

    tray = Tray(lambda verb, item_id: None)
    opened: list[bool] = []
    tray.console_action.triggered.connect(lambda: opened.append(True))
    tray.activated.emit(QSystemTrayIcon.ActivationReason.Context)
    assert opened == []
    tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    assert opened == [True]


def test_a_press_on_the_icon_while_the_balloon_shows_is_the_icons_click(qapp: Any, qtbot: Any) -> None:
    """Qt's own balloon says 'clicked' for a press on the icon too, just before the icon's click (X11): that press
    is the icon's; only a click on the balloon itself is the balloon's."""
    from PySide6.QtWidgets import QSystemTrayIcon

    from desktop.gui.tray import Tray

    tray = Tray(lambda verb, item_id: None)
    said: list[str] = []
    tray.balloon_clicked.connect(lambda: said.append("balloon"))
    tray.console_action.triggered.connect(lambda: said.append("console"))
    tray.messageClicked.emit()  # a right click on the icon, as Qt says it
    tray.activated.emit(QSystemTrayIcon.ActivationReason.Context)
    tray.messageClicked.emit()  # a left click on the icon
    tray.activated.emit(QSystemTrayIcon.ActivationReason.Trigger)
    with qtbot.waitSignal(tray.balloon_clicked, timeout=5000):
        tray.messageClicked.emit()  # a click on the balloon
    assert said == ["console", "balloon"]


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


# --- the icon, by its pixels ----------------------------------------------------------------------------------

SIDE = 22
PICTURES: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "idle": ([], {}),
    "running": ([{**REQUESTS[0], "progress": None}], {}),
    "running 0%": ([{**REQUESTS[0], "progress": 0.0}], {}),
    "running 40%": ([{**REQUESTS[0], "progress": 40.0}], {}),
    "tasks only": ([], {"tasks": TASKS[:1]}),
    "paused": ([], {"paused": True}),
    "failed": ([], {"failed_unseen": True}),
    "waiting": (REQUESTS[1:2], {}),
    "waiting, running": (REQUESTS[:3], {}),
    "waiting, paused": ([{**REQUESTS[1], "id": f"R20261129-{n}"} for n in range(10, 22)], {"paused": True}),
}


def rgb(colour: Any) -> tuple[int, int, int]:
    return colour.red(), colour.green(), colour.blue()


def luminance(colour: tuple[int, int, int]) -> float:
    def linear(c: int) -> float:
        return c / 255 / 12.92 if c / 255 <= 0.03928 else ((c / 255 + 0.055) / 1.055) ** 2.4

    return 0.2126 * linear(colour[0]) + 0.7152 * linear(colour[1]) + 0.0722 * linear(colour[2])


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG's contrast ratio."""
    light, dark = sorted((luminance(a), luminance(b)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def hex_rgb(name: str) -> tuple[int, int, int]:
    return int(name[1:3], 16), int(name[3:5], 16), int(name[5:7], 16)


@pytest.fixture
def picture(qapp: Any) -> Callable[..., Any]:
    """The tray's icon for a named case, as the tray host draws it at `side` px: an image with alpha."""
    from desktop.gui.tray import Tray

    tray = Tray(lambda verb, item_id: None)

    def draw(name: str, side: int = SIDE) -> Any:
        requests, options = PICTURES[name]
        tray.show_summary(summarize(requests, today=TODAY, **options))
        from PySide6.QtGui import QImage

        image = tray.icon().pixmap(side, side).toImage().convertToFormat(QImage.Format.Format_ARGB32)
        assert (image.width(), image.height()) == (side, side)
        return image

    return draw


def on_panel(image: Any, panel: str) -> list[list[tuple[int, int, int]]]:
    """The picture over a panel of that colour, as rows of RGB."""
    back = hex_rgb(panel)
    rows = []
    for y in range(image.height()):
        row = []
        for x in range(image.width()):
            pixel = image.pixelColor(x, y)
            alpha = pixel.alphaF()
            red, green, blue = (round(c * alpha + b * (1 - alpha)) for c, b in zip(rgb(pixel), back, strict=True))
            row.append((red, green, blue))
        rows.append(row)
    return rows


@pytest.mark.parametrize("name", list(PICTURES))
def test_each_picture_reads_at_22_px_on_a_light_and_a_dark_panel(picture: Callable[..., Any], name: str) -> None:
    """Its outline stands out from either panel by 3:1 or more (WCAG's ratio for graphics), over most of its size:
    the whole shape is seen, not only a mark inside it."""
    image = picture(name)
    for panel in (LIGHT, DARK):
        seen = [
            (x, y)
            for y, row in enumerate(on_panel(image, panel))
            for x, colour in enumerate(row)
            if contrast(colour, hex_rgb(panel)) >= 3
        ]
        xs, ys = [x for x, _ in seen], [y for _, y in seen]
        assert len(seen) >= 70, f"{name} on {panel}: only {len(seen)} of {SIDE * SIDE} pixels stand out"
        assert max(xs) - min(xs) >= 17 and max(ys) - min(ys) >= 17, f"{name} on {panel}: the shape is lost"


def test_running_is_a_ring_that_fills_with_the_progress_not_a_play_sign(picture: Callable[..., Any]) -> None:
    from desktop.gui.tray_icon import PROGRESS, TRACK

    centre, radius = SIDE / 2, SIDE * 24 / 64  # the ring's middle line

    def on_ring(degrees: float) -> tuple[int, int]:  # clockwise from the top
        from math import cos, radians, sin

        return int(centre + radius * sin(radians(degrees))), int(centre - radius * cos(radians(degrees)))

    def near(colour: Any, name: str) -> bool:
        return colour.alpha() > 200 and max(abs(a - b) for a, b in zip(rgb(colour), hex_rgb(name), strict=True)) < 40

    for name in ("running", "running 0%", "running 40%", "tasks only"):
        image = picture(name)
        hole = [image.pixelColor(x, y).alpha() for x in range(8, 14) for y in range(8, 14)]
        assert max(hole) == 0, f"{name}: the middle is empty (a ring, not a disc with ▶ on it)"
        assert all(image.pixelColor(*on_ring(d)).alpha() > 200 for d in range(0, 360, 30)), name
    quarter = picture("running 40%")
    assert near(quarter.pixelColor(*on_ring(45)), PROGRESS) and near(quarter.pixelColor(*on_ring(135)), PROGRESS)
    assert near(quarter.pixelColor(*on_ring(200)), TRACK) and near(quarter.pixelColor(*on_ring(315)), TRACK)
    assert all(near(picture("running 0%").pixelColor(*on_ring(d)), TRACK) for d in range(15, 360, 30))
    assert all(near(picture("running").pixelColor(*on_ring(d)), PROGRESS) for d in range(15, 360, 30))


def test_running_paused_idle_and_failed_are_different_pictures(picture: Callable[..., Any]) -> None:
    """Not the same disc with a different little mark: most of the picture differs, on either panel."""
    names = ["running", "paused", "idle", "failed"]
    sheet(picture, [*PICTURES])
    for panel in (LIGHT, DARK):
        images = {name: on_panel(picture(name), panel) for name in names}
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                differ = sum(
                    1
                    for row_a, row_b in zip(images[a], images[b], strict=True)
                    for pa, pb in zip(row_a, row_b, strict=True)
                    if distance(pa, pb) > 60
                )
                assert differ >= SIDE * SIDE // 4, f"{a} and {b} on {panel}: only {differ} pixels differ"


def sheet(picture: Callable[..., Any], names: list[str]) -> None:
    """Every picture at 22 px on both panels, four times larger, for a person to look at."""
    from PySide6.QtGui import QColor, QImage, QPainter

    cell = SIDE + 8
    image = QImage(cell * len(names), cell * 2, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    for row, panel in enumerate((LIGHT, DARK)):
        painter.fillRect(0, row * cell, image.width(), cell, QColor(panel))
        for column, name in enumerate(names):
            painter.drawImage(column * cell + 4, row * cell + 4, picture(name))
    painter.end()
    SHOTS.mkdir(parents=True, exist_ok=True)
    image.scaled(image.width() * 4, image.height() * 4).save(str(SHOTS / "tray-icons-22px.png"))


def distance(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    return float(sum((x - y) ** 2 for x, y in zip(a, b, strict=True)) ** 0.5)


def parts(image: Any) -> list[set[tuple[int, int]]]:
    """The picture's separate shapes: its opaque pixels, grouped where they touch (also by a corner)."""
    left = {(x, y) for x in range(image.width()) for y in range(image.height()) if image.pixelColor(x, y).alpha() > 96}
    found = []
    while left:
        todo, part = [left.pop()], set()
        while todo:
            x, y = todo.pop()
            part.add((x, y))
            for near in ((x + dx, y + dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1)):
                if near in left:
                    left.remove(near)
                    todo.append(near)
        found.append(part)
    return sorted(found, key=lambda p: min(x + y for x, y in p))


@pytest.mark.parametrize("side", [16, 22, 32])
def test_the_waiting_badge_sits_beside_the_glyph_not_over_it(picture: Callable[..., Any], side: int) -> None:
    from desktop.gui.tray_icon import BADGE

    for name in ("waiting", "waiting, running", "waiting, paused"):
        image = picture(name, side)
        shapes = parts(image)
        assert len(shapes) == 2, f"{name} at {side} px: the glyph and the badge touch ({len(shapes)} shapes)"
        glyph, badge = shapes
        assert max(x for x, _ in glyph) < side * 0.7 and min(x for x, _ in badge) > side * 0.35
        red = [
            p
            for p in badge
            if max(abs(a - b) for a, b in zip(rgb(image.pixelColor(*p)), hex_rgb(BADGE), strict=True)) < 30
        ]
        white = [p for p in badge if min(rgb(image.pixelColor(*p))) > 200]
        assert len(red) >= len(badge) // 3 and white, f"{name} at {side} px: a red badge with its count in white"
        assert not any(p in badge for p in glyph)
    one, two, many = picture("waiting"), picture("waiting, running"), picture("waiting, paused")
    assert one != two != many, "the glyph and the number drawn differ"
