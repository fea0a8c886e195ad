"""Slack through the official slack_sdk in Socket Mode, against a fake Slack on loopback that speaks the Web API
and the Socket Mode WebSocket: requests from the chat, approval in the thread (only the owner's click counts), the
thread following the request, answers from elsewhere, retries, a dropped socket and rate limits."""

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.daemon_process import COX, DaemonProcess
from tests.fakes.slack import APP_TOKEN, BOT_TOKEN, FakeSlack


@pytest.fixture
def slack() -> Iterator[FakeSlack]:
    server = FakeSlack().start()
    yield server
    server.stop()


@pytest.fixture
def chat_daemon(
    make_daemon: type[DaemonProcess], tmp_path: Path, secret_service: dict[str, str], slack: FakeSlack
) -> tuple[DaemonProcess, str]:
    """A daemon with a real keyring, Slack connected (tokens checked and stored by `cox connector add`), Sarah and
    the owner known by their Slack IDs."""
    daemon = make_daemon(tmp_path / "home").start(env=secret_service)
    sarah = daemon.add_person("sarah")
    added = subprocess.run(
        [*COX, "--home", str(daemon.home), "connector", "add", "slack", "--channel", "C9", "--base-url", slack.url],
        input=f"{APP_TOKEN}\n{BOT_TOKEN}\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **secret_service},
    )
    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "connected slack: Acme as coxswain"
    daemon.cox("connector", "map", "slack", "U_SARAH", "sarah", check=True)
    daemon.cox("connector", "map", "slack", "U_OWNER", "owner", check=True)
    slack.wait(slack.connected, what="the socket")
    return daemon, sarah


def test_a_request_from_the_chat_is_approved_in_its_thread_and_finishes(
    chat_daemon: tuple[DaemonProcess, str], slack: FakeSlack
) -> None:
    daemon, _ = chat_daemon
    stranger = slack.mention("U_STRANGER", "shell echo hi")
    slack.wait(lambda: slack.thread(stranger), what="the stranger's answer")
    assert slack.thread(stranger) == [
        "Sorry, I don't know who you are here yet, so nothing was queued. The "
        "owner can add you with `cox connector map slack U_STRANGER &lt;your name&gt;`."
    ]
    assert daemon.get("/api/requests").json() == []

    asked = slack.mention("U_SARAH", "shell printf 'hello from <chat>\\n'")
    slack.wait(lambda: slack.thread(asked), what="the request's thread")
    [request] = daemon.get("/api/requests").json()
    rid = request["id"]
    assert (request["requester"], request["state"], request["agent"]) == ("sarah", "pending", "shell")
    opened = slack.messages[-1]
    assert opened["text"].startswith(f"{rid} · shell · printf ")
    assert [e["action_id"] for e in opened["blocks"][1]["elements"]] == ["approve", "deny"]

    slack.click("U_SARAH", "approve", rid, opened["ts"])
    slack.wait(lambda: slack.ephemeral, what="the refusal")
    assert slack.ephemeral[0]["text"] == f"Only the owner can approve {rid}; your click was not counted."
    assert daemon.show(rid)["state"] == "pending"

    slack.click("U_OWNER", "approve", rid, opened["ts"])
    daemon.wait_state(rid, "done")
    slack.wait(lambda: any(t.startswith("Done.") for t in slack.thread(asked)), what="the result")
    assert slack.thread(asked)[1:] == [
        "Approved by owner",
        "Started on agent shell",
        f"Done.\nhello from &lt;chat&gt;\nThe whole console: `cox logs {rid}` or the room.",
    ]
    assert slack.updates == [{"channel": "C1", "ts": opened["ts"], "text": f"{rid}: approved by owner", "blocks": []}]
    assert set(slack.acks) >= {f"env-{n}" for n in range(1, 5)}
    for path in daemon.home.rglob("*"):  # the tokens are in the keyring only
        if path.is_file():
            assert APP_TOKEN.encode() not in path.read_bytes() and BOT_TOKEN.encode() not in path.read_bytes(), path


def test_answers_from_elsewhere_retries_expiry_and_the_slash_command(
    chat_daemon: tuple[DaemonProcess, str], slack: FakeSlack
) -> None:
    daemon, sarah = chat_daemon
    asked = slack.mention("U_SARAH", "shell echo first")
    slack.wait(lambda: slack.thread(asked), what="the thread")
    first = daemon.get("/api/requests").json()[0]["id"]
    buttons = slack.messages[-1]["ts"]
    daemon.cox("deny", first, check=True)  # answered from the CLI: the thread says so, the buttons go
    slack.wait(lambda: slack.updates, what="the buttons to go")
    assert slack.updates[-1] == {"channel": "C1", "ts": buttons, "text": f"{first}: denied by owner", "blocks": []}
    slack.wait(lambda: len(slack.thread(asked)) == 2)
    assert slack.thread(asked)[1] == "Denied by owner"

    retried = daemon.post(f"/api/requests/{first}/retry", token=sarah).json()
    slack.wait(lambda: any(m["text"].startswith(retried["id"]) for m in slack.messages), what="the retry's thread")
    opened = next(m for m in slack.messages if m["text"].startswith(retried["id"]))
    assert opened["channel"] == "C1" and opened.get("thread_ts") is None, "its own thread, beside the old one"
    assert f"Retry of {first}." in opened["text"]
    assert (
        f"<https://acme.slack.com/archives/C1/p{asked.replace('.', '')}|The thread of the request it retries>"
        in opened["text"]
    )

    assert daemon.post("/api/settings", {"key": "approval_ttl", "value": "1s"}).status_code == 200
    late = slack.mention("U_SARAH", "shell echo too late")
    slack.wait(lambda: any("Expired" in t or "expired" in t for t in slack.thread(late)), what="the expiry")
    expired = daemon.get("/api/requests").json()[0]
    assert expired["state"] == "expired"
    assert slack.updates[-1]["text"].startswith(f"{expired['id']}: expired")

    slack.send(
        "slash_commands",
        {"command": "/coxswain", "text": "shell echo slashed", "user_id": "U_OWNER", "channel_id": "C1"},
    )
    slack.wait(
        lambda: any(m["text"] == "<@U_OWNER>: shell echo slashed" for m in slack.messages),
        what="the slash command's message",
    )
    slack.wait(lambda: daemon.get("/api/requests").json()[0]["prompt"] == "echo slashed", what="the request")
    done = daemon.wait_state(daemon.get("/api/requests").json()[0]["id"], "done")
    assert done["requester"] == "owner" and done["result"] == "slashed"


def test_a_dropped_connection_and_rate_limits_lose_nothing_and_repeat_nothing(
    chat_daemon: tuple[DaemonProcess, str], slack: FakeSlack
) -> None:
    daemon, _ = chat_daemon
    first = daemon.request("sleep 2; echo survived")  # the owner's own: no approval; its thread in C9
    slack.wait(lambda: any(m["text"].startswith(first["id"]) for m in slack.messages), what="the first thread")
    root = next(m for m in slack.messages if m["text"].startswith(first["id"]))
    assert root["channel"] == "C9" and root.get("thread_ts") is None and not root.get("blocks")
    slack.wait(lambda: slack.thread(root["ts"]) == ["Started on agent shell"], what="the start")

    slack.drop()  # the laptop goes offline while it runs
    daemon.wait_state(first["id"], "done")
    second = daemon.request("echo while offline")
    daemon.wait_state(second["id"], "done")
    posted = len(slack.messages)
    time.sleep(1)
    assert len(slack.messages) == posted, "nothing is posted while Slack is out of reach"

    slack.rate_limited = 2  # and when it is back, it says "slow down" twice
    slack.restore()
    slack.wait(
        lambda: any(
            t.startswith("Done.")
            for m in slack.messages
            if m["text"].startswith(second["id"])
            for t in slack.thread(m["ts"])
        ),
        what="everything to be posted",
    )
    assert slack.connections >= 2, "the socket came back"
    assert slack.thread(root["ts"]) == [
        "Started on agent shell",
        f"Done.\nsurvived\nThe whole console: `cox logs {first['id']}` or the room.",
    ]
    later = [m["text"].split("\n")[0] for m in slack.messages[posted:]]
    assert later == ["Done.", f"{second['id']} · shell · echo while offline", "Started on agent shell", "Done."]


def test_what_waits_for_slack_survives_a_daemon_restart_and_strange_payloads_change_nothing(
    chat_daemon: tuple[DaemonProcess, str], slack: FakeSlack, secret_service: dict[str, str]
) -> None:
    daemon, _ = chat_daemon
    slack.send("interactive", {"type": "block_actions"})  # no user, no channel, no actions
    slack.send("events_api", {"event": {"type": "app_mention"}})  # no text, no user
    slack.send("slash_commands", {"text": 7})
    slack.wait(lambda: len(slack.acks) >= 3, what="the acks")
    assert daemon.get("/api/health").status_code == 200 and daemon.get("/api/requests").json() == []

    slack.drop()
    made = daemon.request("echo kept")
    daemon.wait_state(made["id"], "done")
    daemon.stop()  # the outbox still holds the thread's messages
    daemon.start(env=secret_service)
    slack.restore()
    slack.wait(lambda: any(m["text"].startswith("Done.") for m in slack.messages), what="the kept messages")
    root = next(m for m in slack.messages if m["text"].startswith(made["id"]))
    assert slack.thread(root["ts"]) == [
        "Started on agent shell",
        f"Done.\nkept\nThe whole console: `cox logs {made['id']}` or the room.",
    ]
    assert [m["text"].split("\n")[0] for m in slack.messages] == [
        root["text"].split("\n")[0],
        "Started on agent shell",
        "Done.",
    ]


def test_a_hostile_prompt_is_shown_in_its_thread_as_written(
    chat_daemon: tuple[DaemonProcess, str], slack: FakeSlack
) -> None:
    """What Slack shows (its escapes read back): the title with the prompt's first line made visible, saying what
    follows, and above Approve and Deny the whole prompt made visible."""
    from tests.hostile_text import BY_NAME

    daemon, _ = chat_daemon
    for name in ("erase line", "c0", "zero width", "ampersand", "many lines"):
        hostile = BY_NAME[name]
        asked = slack.mention("U_SARAH", f"shell {hostile.text}")
        slack.wait(lambda asked=asked: slack.thread(asked), what="the request's thread")  # type: ignore[misc]
        rid = daemon.get("/api/requests").json()[0]["id"]
        shown = slack.messages[-1]["text"].replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
        first = hostile.first if name == "many lines" else hostile.seen
        assert shown == (
            f"{rid} · shell · {first}\nAsked by sarah.\nPrompt:\n{hostile.seen}\nWaiting for the owner's approval."
        ), name
