"""The real Codex CLI, driven by the daemon against the scripted fake model on loopback."""

import json
import os
import signal
from pathlib import Path

import pytest

from tests.daemon_process import DaemonProcess
from tests.fake_model.server import FakeModelServer
from tests.test_runtime_claude import runner_info, wait_for


@pytest.fixture
def codex_daemon(make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str]) -> DaemonProcess:
    daemon = make_daemon(tmp_path / "home").start(env=agent_env)
    (tmp_path / "project").mkdir()
    answer = daemon.post("/api/agents", {"name": "codex", "runtime": "codex", "folder": str(tmp_path / "project")})
    assert answer.status_code == 201, answer.text
    return daemon


def model_calls(model: FakeModelServer) -> list[dict[str, object]]:
    return [r["body"] for r in model.requests() if r["method"] == "POST" and r["path"].endswith("/responses")]


def test_tool_call_result_and_thread(codex_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path) -> None:
    row = codex_daemon.request("TOOL echo hi > made-by-codex.txt; echo hi", agent="codex")
    done = codex_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["result"] == "finished; last output: hi"
    assert (tmp_path / "project" / "made-by-codex.txt").read_text() == "hi\n"
    assert done["session_ref"] and any((tmp_path / "codex-home" / "sessions").rglob(f"*{done['session_ref']}*"))
    assert len(model_calls(fake_model)) == 2


def test_progress_from_the_plan(codex_daemon: DaemonProcess) -> None:
    row = codex_daemon.request("TODO read=done; write; test", agent="codex")
    assert codex_daemon.wait_state(row["id"], "done", timeout=60)["progress"] == pytest.approx(33.3)


def test_runtime_killed_mid_turn_resumes_the_same_thread(codex_daemon: DaemonProcess, fake_model: FakeModelServer,
                                                         tmp_path: Path) -> None:
    marker = tmp_path / "project" / "steps"
    row = codex_daemon.request(f"TOOL echo one >> {marker}; sleep 30\nTOOL echo two >> {marker}", agent="codex")
    wait_for(lambda: marker.exists())
    thread = codex_daemon.show(row["id"])["session_ref"]
    os.killpg(runner_info(codex_daemon, row["id"])["pgid"], signal.SIGKILL)
    done = codex_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["session_ref"] == thread
    assert marker.read_text() == "one\ntwo\n"
    assert [t["kind"] for t in done["timeline"]].count("resumed") == 1
    resumed = json.dumps(model_calls(fake_model)[-2]["input"])
    assert "TOOL echo one" in resumed and "The session was interrupted" in resumed, "history re-sent"


def test_daemon_killed_mid_turn_the_turn_finishes_once(codex_daemon: DaemonProcess, fake_model: FakeModelServer,
                                                       tmp_path: Path) -> None:
    marker = tmp_path / "project" / "steps"
    row = codex_daemon.request(f"TOOL echo one >> {marker}; sleep 2\nTOOL echo two >> {marker}", agent="codex")
    wait_for(lambda: marker.exists())
    codex_daemon.stop(signal.SIGKILL)
    codex_daemon.start(env=codex_daemon.env)
    codex_daemon.wait_state(row["id"], "done", timeout=60)
    assert marker.read_text() == "one\ntwo\n"
    assert not (codex_daemon.home / "tasks" / f"{row['id']}.2").exists(), "no second run"
    assert len(model_calls(fake_model)) == 3


def test_cancel_interrupts_right_after_the_tool_call(codex_daemon: DaemonProcess, tmp_path: Path) -> None:
    marker = tmp_path / "project" / "steps"
    row = codex_daemon.request(f"DELAY 0.5\nTOOL echo one >> {marker}; sleep 2; echo first done >> {marker}\n"
                               f"TOOL echo two >> {marker}", agent="codex")
    wait_for(lambda: marker.exists())
    codex_daemon.post(f"/api/requests/{row['id']}/cancel")
    ended = codex_daemon.wait_state(row["id"], "cancelled", timeout=60)
    assert marker.read_text() == "one\nfirst done\n", "the current tool call finished; the next never ran"
    assert ended["timeline"][-1]["text"] == "cancelled at a safe point"


def test_authentication_error_in_words(codex_daemon: DaemonProcess) -> None:
    row = codex_daemon.request("FAIL 401", agent="codex")
    failed = codex_daemon.wait_state(row["id"], "failed", timeout=60)
    assert "401 Unauthorized" in failed["result"]
