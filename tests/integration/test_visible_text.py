"""What is shown is what runs: the one function every surface shows requester-supplied text through, each surface's
own escaping (notification markup, Qt and dbusmenu mnemonics), the CLI's bytes, and a NUL byte refused at the API."""

import asyncio
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from desktop.core.visible import markup, menu_label, one_line, visible
from tests.daemon_process import COX, DaemonProcess
from tests.fakes.dbus import until
from tests.hostile_text import BY_NAME, CORPUS, Hostile, dbusmenu_shows, hidden, qt_shows
from tests.live_daemon import live_daemon


def test_every_character_that_hides_or_acts_is_shown_and_nothing_else_changes() -> None:
    for code in range(0x110000):
        char = chr(code)
        if hidden(char):
            assert not hidden(visible(char)) and visible(char) != char, f"U+{code:04X}"
    assert visible("\x1b[2K") == "␛[2K" and visible("\r\x07\x7f\x00") == "␍␇␡␀"
    assert visible("\u202e\u2066\u200b\x9b") == "⟨U+202E⟩⟨U+2066⟩⟨U+200B⟩⟨U+009B⟩"
    kept = "tab\there\nnewline · ünïcødé 🚀 中文 עברית ‍"[:-1] + " ✓"
    assert visible(kept) == kept


@pytest.mark.parametrize("hostile", CORPUS, ids=lambda h: h.name)
def test_the_corpus_is_shown_whole_and_shortened_saying_so(hostile: Hostile) -> None:
    assert visible(hostile.text) == hostile.seen
    assert one_line(hostile.text, 50) == hostile.first
    assert not hidden(hostile.seen)


def test_a_shortened_text_says_how_many_lines_follow() -> None:
    assert one_line("\n\n  first\n\nsecond\n") == "first … 1 more line"
    assert one_line("a\r\nb") == "a␍ … 1 more line"  # CR LF: the CR is shown, not taken as the end of a line


@pytest.mark.parametrize("hostile", CORPUS, ids=lambda h: h.name)
def test_menu_labels_and_notification_markup_show_the_text_itself(hostile: Hostile) -> None:
    text, seen = hostile.text, hostile.seen
    assert qt_shows(menu_label(text)) == seen
    assert dbusmenu_shows(menu_label(text, dbusmenu=True)) == seen
    parsed = ElementTree.fromstring(f"<markup>{markup(text)}</markup>")  # as a markup-rendering server reads it
    assert "".join(parsed.itertext()) == seen and len(parsed) == 0


async def cox(home: Path, *args: str) -> str:
    """The `cox` command's standard output: its bytes, decoded only once they were checked for control bytes."""
    done = await asyncio.create_subprocess_exec(
        *COX, "--home", str(home), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await done.communicate()
    assert done.returncode == 0, err
    assert not [byte for byte in out if (byte < 0x20 and byte not in b"\n") or byte == 0x7F], out
    shown = out.decode()
    assert not hidden(shown)
    return shown


def test_the_cli_prints_what_a_person_must_see_and_no_control_bytes(tmp_path: Path) -> None:
    """`cox list`, `cox show` (prompt, question, timeline) and `cox audit` (an answer) on a daemon in this loop."""
    from desktop.core.actors import Actor

    async def scenario() -> None:
        home = tmp_path / "home"
        async with live_daemon(home) as (daemon, _, client):
            token = (await client.post("/api/people", json={"name": "sarah"})).json()["token"]
            sarah = {"Authorization": f"Bearer {token}"}
            made = {
                h.name: (
                    await client.post("/api/requests", json={"agent": "shell", "prompt": h.text}, headers=sarah)
                ).json()["id"]
                for h in CORPUS
            }
            listing = await cox(home, "list")
            for hostile in CORPUS:
                assert f"{made[hostile.name]}  pending  shell  sarah      {hostile.first}" in listing.splitlines()
                assert f"      prompt: {hostile.seen}\n" in await cox(home, "show", made[hostile.name])

            running = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 30"})).json()
            await until(lambda: daemon.ledger.get(running["id"]).state == "running")
            erase, bidi = BY_NAME["erase line"], BY_NAME["bidi"]
            daemon.ledger.ask(running["id"], Actor("shell", "agent", running["id"]), bidi.text, [])
            answered = await client.post(f"/api/requests/{running['id']}/answer", json={"text": erase.text})
            assert answered.status_code == 200, answered.text
            shown = await cox(home, "show", running["id"])
            assert f"question: {bidi.seen}" in shown and f"answered by owner: {erase.seen}" in shown
            assert f"answered by owner: {erase.seen}" in await cox(home, "audit")
            await client.post(f"/api/requests/{running['id']}/cancel", json={})

    asyncio.run(scenario())


def test_a_nul_byte_is_refused_in_words_wherever_text_reaches_a_program(daemon: DaemonProcess) -> None:
    token = daemon.add_person("sarah")
    refused = daemon.post("/api/requests", {"agent": "shell", "prompt": "echo a\x00b"}, token=token)
    assert refused.status_code == 422
    assert refused.json()["error"] == "prompt: the prompt holds a NUL byte, which cannot be passed to a program"
    task = daemon.post("/api/tasks", {"agent": "shell", "command": "echo a\x00; rm -rf ~"})
    assert task.status_code == 422
    assert task.json()["error"] == "command: the command holds a NUL byte, which cannot be passed to a program"
    assert daemon.get("/api/requests").json() == [] and daemon.get("/api/tasks").json() == []


def test_the_ledger_refuses_a_nul_byte_for_every_way_in() -> None:
    """The MCP tools (start_session, send_prompt) and the chats create requests through the ledger, not the API."""
    from desktop.core.errors import Invalid
    from desktop.core.ledger import check_prompt

    with pytest.raises(Invalid, match="the prompt holds a NUL byte, which cannot be passed to a program"):
        check_prompt("start_session prompt\x00")
