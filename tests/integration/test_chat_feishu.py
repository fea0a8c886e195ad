"""Feishu through the official lark-oapi SDK's long connection, against a fake Feishu on loopback that speaks the
token and IM APIs and the long connection's protobuf frames: a request from the chat approved with the card's
button (only the owner's click counts), the thread following it, a dropped connection and a 429."""

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import COX, DaemonProcess
from tests.fakes.feishu import APP_ID, APP_SECRET, FakeFeishu, has_buttons, text_of


@pytest.fixture
def feishu() -> Iterator[FakeFeishu]:
    server = FakeFeishu().start()
    yield server
    server.stop()


@pytest.fixture
def chat_daemon(
    make_daemon: type[DaemonProcess], tmp_path: Path, secret_service: dict[str, str], feishu: FakeFeishu
) -> DaemonProcess:
    daemon = make_daemon(tmp_path / "home").start(env=secret_service)
    daemon.add_person("sarah")
    wrong = subprocess.run(
        [*COX, "--home", str(daemon.home), "connector", "add", "feishu", "--app-id", APP_ID, "--base-url", feishu.url],
        input="not-the-secret\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **secret_service},
    )
    assert wrong.returncode != 0 and "Feishu refused the app's credentials: app secret invalid" in wrong.stderr
    added = subprocess.run(
        [
            *COX,
            "--home",
            str(daemon.home),
            "connector",
            "add",
            "feishu",
            "--app-id",
            APP_ID,
            "--channel",
            "oc_9",
            "--base-url",
            feishu.url,
        ],
        input=f"{APP_SECRET}\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **secret_service},
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == f"connected feishu: app {APP_ID}"
    daemon.cox("connector", "map", "feishu", "ou_sarah", "sarah", check=True)
    daemon.cox("connector", "map", "feishu", "ou_owner", "owner", check=True)
    feishu.wait(feishu.connected, what="the long connection")
    return daemon


def test_a_request_from_feishu_is_approved_with_the_cards_button_and_finishes(
    chat_daemon: DaemonProcess, feishu: FakeFeishu
) -> None:
    daemon = chat_daemon
    stranger = feishu.mention("ou_stranger", "shell echo hi")
    feishu.wait(lambda: feishu.thread(stranger), what="the stranger's answer")
    assert feishu.thread(stranger)[0].startswith("Sorry, I don't know who you are here yet, so nothing was queued.")
    assert daemon.get("/api/requests").json() == []

    asked = feishu.mention("ou_sarah", "shell printf '<at user_id=\"all\">everyone</at>\\n'")
    feishu.wait(lambda: feishu.thread(asked), what="the request's thread")
    [request] = daemon.get("/api/requests").json()
    rid = request["id"]
    opened = feishu.messages[-1]
    assert text_of(opened["content"]).startswith(f"{rid} · shell · printf ")
    assert has_buttons(opened["content"]) and opened["in_thread"] is True

    refused = feishu.click("ou_sarah", "approve", rid, opened["id"])
    feishu.wait(lambda: refused in feishu.answers, what="the click's answer")
    assert feishu.toast(refused) == {
        "type": "warning",
        "content": f"Only the owner can approve {rid}; your click was not counted.",
    }
    assert daemon.show(rid)["state"] == "pending"
    approved = feishu.click("ou_owner", "approve", rid, opened["id"])
    daemon.wait_state(rid, "done")
    assert feishu.toast(approved) == {"type": "success", "content": "Done"}
    feishu.wait(lambda: any(t.startswith("Done.") for t in feishu.thread(asked)), what="the result")
    assert feishu.thread(asked)[1:] == [
        "Approved by owner",
        "Started on agent shell",
        f'Done.\n<at user_id="all">everyone</at>\nThe whole console: `cox logs {rid}` or the room.',
    ]
    assert all(m["type"] == "interactive" for m in feishu.messages), "plain-text cards: no markup is read"
    [patch] = feishu.patches
    assert patch["id"] == opened["id"] and not has_buttons(patch["content"])
    assert text_of(patch["content"]) == f"{rid}: approved by owner"
    for path in daemon.home.rglob("*"):  # the app secret is in the keyring only
        if path.is_file():
            assert APP_SECRET.encode() not in path.read_bytes(), path


def test_a_dropped_long_connection_and_a_429_lose_nothing_and_repeat_nothing(
    chat_daemon: DaemonProcess, feishu: FakeFeishu
) -> None:
    daemon = chat_daemon
    first = daemon.request("sleep 2; echo survived")
    feishu.wait(lambda: any(text_of(m["content"]).startswith(first["id"]) for m in feishu.messages))
    root = next(m for m in feishu.messages if text_of(m["content"]).startswith(first["id"]))
    assert root["chat"] == "oc_9" and root["parent"] is None
    feishu.wait(lambda: feishu.thread(root["id"]) == ["Started on agent shell"], what="the start")

    feishu.drop()
    daemon.wait_state(first["id"], "done")
    second = daemon.request("echo while offline")
    daemon.wait_state(second["id"], "done")
    posted = len(feishu.messages)
    time.sleep(1)
    assert len(feishu.messages) == posted

    feishu.rate_limited = 1
    feishu.restore()
    feishu.wait(lambda: len(feishu.messages) == posted + 4, what="everything to be posted")
    assert feishu.connections >= 2
    later = [text_of(m["content"]).split("\n")[0] for m in feishu.messages[posted:]]
    assert later == ["Done.", f"{second['id']} · shell · echo while offline", "Started on agent shell", "Done."]
    time.sleep(1)
    assert len(feishu.messages) == posted + 4, "nothing twice"


def test_a_hostile_prompt_is_shown_in_its_thread_as_written(chat_daemon: DaemonProcess, feishu: FakeFeishu) -> None:
    """The card's plain text: the title with the prompt's first line made visible, saying what follows, and above
    Approve and Deny the whole prompt made visible."""
    from tests.hostile_text import BY_NAME

    daemon = chat_daemon
    for name in ("erase line", "c0", "zero width", "ampersand", "many lines"):
        hostile = BY_NAME[name]
        asked = feishu.mention("ou_sarah", f"shell {hostile.text}")
        feishu.wait(lambda asked=asked: feishu.thread(asked), what="the request's thread")  # type: ignore[misc]
        rid = daemon.get("/api/requests").json()[0]["id"]
        first = hostile.first if name == "many lines" else hostile.seen
        assert text_of(feishu.messages[-1]["content"]) == (
            f"{rid} · shell · {first}\nAsked by sarah.\nPrompt:\n{hostile.seen}\nWaiting for the owner's approval."
        ), name
