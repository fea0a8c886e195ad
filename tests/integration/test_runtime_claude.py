"""The real Claude Code CLI, driven by the daemon against the scripted fake model on loopback."""

import json
import os
import random
import signal
import time
from pathlib import Path

import psutil
import pytest

from tests.daemon_process import DaemonProcess
from tests.fakes.model.server import FakeModelServer


def claude_calls(model: FakeModelServer) -> list[dict[str, object]]:
    return [r["body"] for r in model.requests() if r["method"] == "POST" and r["path"].startswith("/v1/messages")]


def runner_info(daemon: DaemonProcess, request_id: str, attempt: int = 1) -> dict[str, int]:
    path = daemon.home / "tasks" / f"{request_id}.{attempt}" / "runner.json"
    for _ in range(500):
        info = json.loads(path.read_text()) if path.exists() else {}
        if "pgid" in info:
            return info
        time.sleep(0.02)
    raise AssertionError(f"no runner for {request_id}")


def recorded(tmp_path: Path, text: str) -> bool:
    """Whether Claude Code has written `text` (a tool call's command) to its session file: killed before that, the
    resumed conversation does not know the call and makes it again."""
    return any(text in path.read_text(errors="replace") for path in (tmp_path / "claude-config").rglob("*.jsonl"))


def unique_sleep() -> str:
    """A `sleep` command no other test runs, found again by its command line (a tool may run in a PID namespace of
    its own, as Codex's sandbox does, so the PID it sees is not the machine's)."""
    return f"sleep {30 + random.random():.6f}"


def still_running(command: str) -> bool:
    for process in psutil.process_iter(["cmdline", "status"]):
        if process.info["cmdline"] == command.split() and process.info["status"] != psutil.STATUS_ZOMBIE:
            return True
    return False


def wait_for(condition, timeout: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_tool_call_result_and_conversation(
    claude_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    row = claude_daemon.request("TOOL echo hi > made-by-claude.txt; echo hi", agent="claude")
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["result"] == "finished; last output: hi"
    assert (tmp_path / "project" / "made-by-claude.txt").read_text() == "hi\n"
    assert len(done["conversation_ref"]) == 36
    session_file = next((tmp_path / "claude-config" / "projects").rglob(f"{done['conversation_ref']}.jsonl"))
    assert session_file.exists()
    assert len(claude_calls(fake_model)) == 2


def test_progress_from_the_task_list(claude_daemon: DaemonProcess) -> None:
    row = claude_daemon.request("TODO write the test=done; fix the bug=done; release", agent="claude")
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["progress"] == pytest.approx(66.7)
    progress = [t["text"] for t in done["timeline"] if t["kind"] == "progress"]
    assert progress[0] == "progress 0%" and progress[-1] == "progress 67%"


def test_references_reach_claude_as_a_context_block(claude_daemon: DaemonProcess, fake_model: FakeModelServer) -> None:
    first = claude_daemon.request("echo the answer is 42")  # the shell agent
    claude_daemon.wait_state(first["id"], "done")
    row = claude_daemon.request(f"SAY noted\nas in {first['id']}", agent="claude")
    claude_daemon.wait_state(row["id"], "done", timeout=60)
    sent = json.dumps(claude_calls(fake_model)[0]["messages"])
    assert f"--- {first['id']} (done)" in sent and "Result: the answer is 42" in sent


def test_runtime_killed_mid_turn_resumes_the_same_conversation(
    claude_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    marker, sleep = tmp_path / "project" / "steps", unique_sleep()
    row = claude_daemon.request(f"TOOL echo one >> {marker}; {sleep}\nTOOL echo two >> {marker}", agent="claude")
    wait_for(lambda: marker.exists() and still_running(sleep) and recorded(tmp_path, sleep))
    os.killpg(runner_info(claude_daemon, row["id"])["pgid"], signal.SIGKILL)
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert marker.read_text() == "one\ntwo\n"
    assert not still_running(sleep), "the dead attempt's tool call was ended before the turn resumed"
    kinds = [t["kind"] for t in done["timeline"]]
    assert kinds.count("interrupted") == 1 and kinds.count("resumed") == 1
    assert "killed by SIGKILL" in next(t["text"] for t in done["timeline"] if t["kind"] == "interrupted")
    bodies = claude_calls(fake_model)
    resumed = json.dumps(bodies[-2]["messages"])
    assert "TOOL echo one" in resumed and "toolu_01" in resumed, "the resumed CLI re-sent the earlier history"
    assert "The session was interrupted" in resumed
    assert len(claude_daemon.get("/api/requests").json()) == 1, "never appears twice"


def test_daemon_killed_mid_turn_the_turn_finishes_once(
    claude_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    marker = tmp_path / "project" / "steps"
    row = claude_daemon.request(f"TOOL echo one >> {marker}; sleep 2\nTOOL echo two >> {marker}", agent="claude")
    wait_for(lambda: marker.exists())
    claude_daemon.stop(signal.SIGKILL)
    claude_daemon.start(env=claude_daemon.env)
    done = claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert marker.read_text() == "one\ntwo\n"
    assert not (claude_daemon.home / "tasks" / f"{row['id']}.2").exists(), "no second run"
    gap = [t["text"] for t in done["timeline"] if t["kind"] in ("interrupted", "resumed")]
    assert gap[0].startswith("interrupted: the daemon was not running since") and gap[1].startswith("resumed:")
    assert len(claude_calls(fake_model)) == 3


def test_cancel_stops_before_the_next_tool_call(claude_daemon: DaemonProcess, tmp_path: Path) -> None:
    marker = tmp_path / "project" / "steps"
    row = claude_daemon.request(
        f"TOOL echo one >> {marker}; sleep 2; echo first done >> {marker}\nTOOL echo two >> {marker}", agent="claude"
    )
    wait_for(lambda: marker.exists())
    assert claude_daemon.post(f"/api/requests/{row['id']}/cancel").json()["cancel_requested"]
    ended = claude_daemon.wait_state(row["id"], "cancelled", timeout=60)
    assert marker.read_text() == "one\nfirst done\n", "the current tool call finished; the next never ran"
    assert ended["timeline"][-1]["text"] == "cancelled at a safe point"


def test_cancel_while_the_model_thinks_stops_before_the_next_tool_call(
    claude_daemon: DaemonProcess, tmp_path: Path
) -> None:
    marker = tmp_path / "project" / "steps"
    row = claude_daemon.request(f"DELAY 6\nTOOL echo one >> {marker}\nTOOL echo two >> {marker}", agent="claude")
    wait_for(lambda: marker.exists(), timeout=60)
    claude_daemon.post(f"/api/requests/{row['id']}/cancel")  # the model thinks for 6 s before the second call
    ended = claude_daemon.wait_state(row["id"], "cancelled", timeout=60)
    assert marker.read_text() == "one\n", "the next tool call never ran"
    assert ended["timeline"][-1]["text"] == "cancelled at a safe point"
    assert not ended["result"].lstrip().startswith(("{", "[")), ended["result"]


def test_authentication_error_in_words(claude_daemon: DaemonProcess) -> None:
    row = claude_daemon.request("FAIL 401", agent="claude")
    failed = claude_daemon.wait_state(row["id"], "failed", timeout=60)
    assert failed["result"] == "Failed to authenticate: the API key was refused (the model API answered 401)"
    assert failed["timeline"][-1]["text"].startswith("failed: Failed to authenticate")


def test_missing_cli_or_key_is_shown_and_fails_with_a_reason(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]
) -> None:
    bare = make_daemon(tmp_path / "bare").start(env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "k"})
    bare.post("/api/agents", {"name": "claude", "runtime": "claude", "folder": str(tmp_path)})
    row = bare.request("SAY hi", agent="claude")
    assert bare.wait_state(row["id"], "failed")["timeline"][-1]["text"] == "failed: claude: not installed"
    keyless = {**agent_env, "ANTHROPIC_API_KEY": "", "OPENAI_API_KEY": ""}
    daemon = make_daemon(tmp_path / "keyless").start(env=keyless)
    for runtime in ("claude", "codex"):
        daemon.post("/api/agents", {"name": runtime, "runtime": runtime, "folder": str(tmp_path)})
    status = {a["name"]: a["status"] for a in daemon.get("/api/agents").json()}
    assert status == {"shell": "ready", "claude": "claude: no API key", "codex": "codex: no API key"}
    assert "claude: no API key" in daemon.cox("agent", "list", check=True).stdout


def test_agent_options_are_validated_and_reach_the_cli(
    claude_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    folder = str(tmp_path / "project")
    refusals = [
        ({"permission_mode": "yolo"}, 400, "not a permission mode of claude; use one of: default, acceptEdits"),
        ({"env": {"GITHUB_TOKEN": "x"}}, 400, "looks like a secret"),
        ({"env": {"9LIVES": "x"}}, 400, "not an environment variable name"),
        ({"args": ["x"] * 65}, 422, "args"),
        ({"model": 42}, 422, "model"),
    ]
    for options, status, words in refusals:
        answer = claude_daemon.post("/api/agents", {"name": "c2", "runtime": "claude", "folder": folder, **options})
        assert answer.status_code == status and words in answer.json()["error"], answer.text
    made = claude_daemon.cox(
        "agent",
        "add",
        "c2",
        "--runtime",
        "claude",
        "--folder",
        folder,
        "--model",
        "claude-test-model",
        "--permission-mode",
        "acceptEdits",
        "--env",
        "LANG=C.UTF-8",
        check=True,
    )
    assert made.stdout.strip().endswith("; ready")
    row = claude_daemon.request("SAY done", agent="c2")
    claude_daemon.wait_state(row["id"], "done", timeout=60)
    assert claude_calls(fake_model)[-1]["model"] == "claude-test-model"


def test_a_resume_whose_conversation_is_gone_fails_with_the_reason(
    claude_daemon: DaemonProcess, tmp_path: Path
) -> None:
    marker = tmp_path / "project" / "steps"
    row = claude_daemon.request(f"TOOL echo one >> {marker}; sleep 30\nTOOL echo two >> {marker}", agent="claude")
    wait_for(lambda: marker.exists())
    conversation = claude_daemon.show(row["id"])["conversation_ref"]
    os.killpg(runner_info(claude_daemon, row["id"])["pgid"], signal.SIGKILL)
    for path in (tmp_path / "claude-config").rglob(f"{conversation}*"):
        if path.is_file():
            path.unlink()
    failed = claude_daemon.wait_state(row["id"], "failed", timeout=60)
    assert failed["result"] == f"No conversation found with session ID: {conversation}"
    assert marker.read_text() == "one\n", "never started afresh"
    assert len(list((claude_daemon.home / "tasks").glob(f"{row['id']}.*"))) == 2, "one resume, no loop"


def test_a_broken_stream_falls_back_to_a_plain_answer(
    claude_daemon: DaemonProcess, fake_model: FakeModelServer
) -> None:
    row = claude_daemon.request("CUT\nSAY answered without a stream", agent="claude")
    done = claude_daemon.wait_state(row["id"], "done", timeout=120)
    assert done["result"] == "answered without a stream"
    calls = claude_calls(fake_model)
    assert any(call.get("stream") for call in calls) and any(not call.get("stream") for call in calls)
