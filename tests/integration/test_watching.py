"""Watching sessions, with the real Claude Code and Codex CLIs against the scripted model: a lead agent starts a
session and watches it instead of polling with wait, ends its turn, and is woken in new turns of its own
conversation when the session's turn finishes and when the session's background task fails."""

import json
import time
from pathlib import Path
from typing import Any

from tests.daemon_process import DaemonProcess
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_agent_sessions import lead, mcp, pending_child  # noqa: F401 - the fixture (claude and codex)


def chain(daemon: DaemonProcess, first: str) -> list[dict[str, Any]]:
    """The continuations that followed `first`, in order."""
    rows = daemon.get("/api/requests").json()
    found, current = [], first
    while following := [r for r in rows if r.get("continuation_of") == current]:
        found.append(following[0])
        current = following[0]["id"]
    return found


def test_a_watching_agent_is_woken_by_the_sessions_turn_and_its_failed_task(
    lead: DaemonProcess,  # noqa: F811
    fake_model: FakeModelServer,
    tmp_path: Path,
) -> None:
    held = "until [ -e go ]; do sleep 0.1; done"  # the session works once the test says go: after the watch began
    child = (
        mcp("start_task", command=f"{held}; echo 'lint: 2 errors'; exit 4", description="lint")
        + f"TOOL {held}\nSAY linting"
    )
    row = lead.request(
        mcp("start_session", prompt=child, title="Checks") + mcp("watch_session", session="S1") + "SAY watching S1",
        agent="lead",
    )
    lead.post(f"/api/requests/{pending_child(lead)['id']}/approve", {})  # the conversation's first session
    assert lead.wait_state(row["id"], "done", timeout=90)["result"] == "watching S1"
    watched = [t["text"] for t in lead.show(row["id"])["timeline"] if "watch_session" in t["text"]]
    assert watched and "refused" not in watched[0], watched
    (tmp_path / "project" / "go").touch()
    deadline = time.monotonic() + 150
    news = ""
    while not ("S1 (Checks): turn " in news and "S1 (Checks): T1 (lint) failed (exit 4)" in news):
        assert time.monotonic() < deadline, f"the news did not all come: {news!r}"
        time.sleep(0.2)
        news = "\n".join(r["prompt"] for r in chain(lead, row["id"]))
    woken = chain(lead, row["id"])
    assert all(r["agent"] == "lead" and r["requester"] == "owner" for r in woken)
    assert "News from the sessions you watch (unwatch_session stops it):" in woken[0]["prompt"]
    assert "finished, done: linting" in news, "the session's turn and its result"
    done = lead.wait_state(woken[0]["id"], "done", timeout=120)
    assert done["result"].startswith("Reviewed: S1 (Checks): "), "the lead's reply"
    assert done["conversation_ref"] == lead.show(row["id"])["conversation_ref"], "the lead's conversation, continued"
    told = json.dumps([r["body"] for r in fake_model.requests()], ensure_ascii=False)
    assert "News from the sessions you watch" in told
