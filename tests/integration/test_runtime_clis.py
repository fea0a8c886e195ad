"""The real Codex, Gemini and Copilot CLIs, driven by the daemon against the scripted fake model on loopback.
(Claude Code, whose cancel works through a hook, has its own module.)"""

import json
import os
import signal
import time
from pathlib import Path

import pytest

from tests.daemon_process import DaemonProcess
from tests.fakes.model.server import FakeModelServer
from tests.integration.test_runtime_claude import runner_info, still_running, unique_sleep, wait_for

RUNTIMES = {
    # kill: when the resume test kills the CLI: during a tool call, or after one while the model answers (Gemini does
    # not save a tool call that was still running, so a resumed Gemini runs it again)
    "codex": {"path": "/responses", "history": "input", "auth": "401 Unauthorized", "options": {}, "kill": "tool"},
    "gemini": {
        "path": "streamGenerateContent",
        "history": "contents",
        "auth": "API key not valid",
        "options": {"model": "gemini-2.5-pro"},
        "kill": "model",
    },
    "copilot": {
        "path": "/chat/completions",
        "history": "messages",
        "auth": "Authentication failed with provider",
        "options": {},
        "kill": "tool",
    },
}


@pytest.fixture(params=sorted(RUNTIMES))
def runtime(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cli_daemon(
    make_daemon: type[DaemonProcess], tmp_path: Path, agent_env: dict[str, str], runtime: str
) -> DaemonProcess:
    daemon = make_daemon(tmp_path / "home").start(env=agent_env)
    (tmp_path / "project").mkdir()
    answer = daemon.post(
        "/api/agents",
        {"name": "agent", "runtime": runtime, "folder": str(tmp_path / "project"), **RUNTIMES[runtime]["options"]},
    )
    assert answer.status_code == 201, answer.text
    return daemon


def model_calls(model: FakeModelServer, runtime: str) -> list[dict[str, object]]:
    return [r["body"] for r in model.requests() if r["method"] == "POST" and RUNTIMES[runtime]["path"] in r["path"]]


def test_tool_call_result_and_conversation(
    cli_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path, runtime: str
) -> None:
    row = cli_daemon.request("TOOL echo hi > made-by-the-agent.txt; echo hi", agent="agent")
    done = cli_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["result"] == "finished; last output: hi"
    assert (tmp_path / "project" / "made-by-the-agent.txt").read_text() == "hi\n"
    stored = {
        "codex": tmp_path / "codex-home",
        "gemini": tmp_path / "user-home" / ".gemini",
        "copilot": tmp_path / "user-home" / ".copilot",
    }[runtime]
    assert done["conversation_ref"] and any(
        done["conversation_ref"] in path.read_text(errors="replace")
        for path in stored.rglob("*")
        if path.is_file() and "session" in str(path)
    )
    assert len(model_calls(fake_model, runtime)) == 2


def test_progress_from_the_plan_and_never_invented(cli_daemon: DaemonProcess, runtime: str) -> None:
    row = cli_daemon.request("TODO read=done; write; test", agent="agent")
    done = cli_daemon.wait_state(row["id"], "done", timeout=60)
    if runtime == "copilot":  # no todo or plan tool: no progress
        assert done["progress"] is None
    else:
        assert done["progress"] == pytest.approx(33.3)


def test_runtime_killed_mid_turn_resumes_the_same_conversation(
    cli_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path, runtime: str
) -> None:
    marker, sleep = tmp_path / "project" / "steps", unique_sleep()
    if RUNTIMES[runtime]["kill"] == "tool":
        prompt = f"TOOL echo one >> {marker}; {sleep}\nTOOL echo two >> {marker}"
    else:
        prompt = f"DELAY 2\nTOOL echo one >> {marker}\nTOOL echo two >> {marker}"
    row = cli_daemon.request(prompt, agent="agent")
    wait_for(lambda: marker.exists() and (RUNTIMES[runtime]["kill"] != "tool" or still_running(sleep)))
    time.sleep(0.3)
    thread = cli_daemon.show(row["id"])["conversation_ref"]
    os.killpg(runner_info(cli_daemon, row["id"])["pgid"], signal.SIGKILL)
    done = cli_daemon.wait_state(row["id"], "done", timeout=60)
    assert done["conversation_ref"] == thread
    assert marker.read_text() == "one\ntwo\n"
    assert not still_running(sleep), "the dead attempt's tool call was ended before the turn resumed"
    assert [t["kind"] for t in done["timeline"]].count("resumed") == 1
    resumed = json.dumps(model_calls(fake_model, runtime)[-2][RUNTIMES[runtime]["history"]])
    assert "TOOL echo one" in resumed and "The session was interrupted" in resumed, "history re-sent"


def test_daemon_killed_mid_turn_the_turn_finishes_once(
    cli_daemon: DaemonProcess, fake_model: FakeModelServer, tmp_path: Path, runtime: str
) -> None:
    marker = tmp_path / "project" / "steps"
    row = cli_daemon.request(f"TOOL echo one >> {marker}; sleep 2\nTOOL echo two >> {marker}", agent="agent")
    wait_for(lambda: marker.exists())
    cli_daemon.stop(signal.SIGKILL)
    cli_daemon.start(env=cli_daemon.env)
    cli_daemon.wait_state(row["id"], "done", timeout=60)
    assert marker.read_text() == "one\ntwo\n"
    assert not (cli_daemon.home / "tasks" / f"{row['id']}.2").exists(), "no second run"
    assert len(model_calls(fake_model, runtime)) == 3


def test_cancel_interrupts_right_after_the_tool_call(cli_daemon: DaemonProcess, tmp_path: Path, runtime: str) -> None:
    marker = tmp_path / "project" / "steps"
    row = cli_daemon.request(
        f"DELAY 0.5\nTOOL echo one >> {marker}; sleep 2; echo first done >> {marker}\nTOOL echo two >> {marker}",
        agent="agent",
    )
    wait_for(lambda: marker.exists())
    cli_daemon.post(f"/api/requests/{row['id']}/cancel")
    ended = cli_daemon.wait_state(row["id"], "cancelled", timeout=60)
    assert marker.read_text() == "one\nfirst done\n", "the current tool call finished; the next never ran"
    assert ended["timeline"][-1]["text"] == "cancelled at a safe point"
    assert_words(ended["result"])


def test_cancel_while_the_model_thinks_stops_before_the_next_tool_call(
    cli_daemon: DaemonProcess, tmp_path: Path, runtime: str
) -> None:
    marker = tmp_path / "project" / "steps"
    row = cli_daemon.request(f"DELAY 6\nTOOL echo one >> {marker}\nTOOL echo two >> {marker}", agent="agent")
    wait_for(lambda: marker.exists(), timeout=60)
    asked = time.monotonic()
    cli_daemon.post(f"/api/requests/{row['id']}/cancel")  # the model thinks for 6 s before the second call
    ended = cli_daemon.wait_state(row["id"], "cancelled", timeout=60)
    assert marker.read_text() == "one\n", "the next tool call never ran"
    assert ended["timeline"][-1]["text"] == "cancelled at a safe point"
    assert time.monotonic() - asked < 15, "interrupted at once, not after a next tool call"
    assert_words(ended["result"])


def assert_words(result: str) -> None:
    """A cancelled turn's result is words a person reads: what the model said, or why it stopped; never the CLI's
    event stream or its warnings."""
    assert result and not result.lstrip().startswith(("{", "[", "WARNING")), result
    assert '"type"' not in result, result


def test_authentication_error_in_words(cli_daemon: DaemonProcess, runtime: str) -> None:
    row = cli_daemon.request("FAIL 401", agent="agent")
    failed = cli_daemon.wait_state(row["id"], "failed", timeout=60)
    assert RUNTIMES[runtime]["auth"] in failed["result"]
    assert_words(failed["result"])
    assert '{"' not in failed["result"] and failed["timeline"][-1]["text"] == f"failed: {failed['result']}"


# Gemini CLI retries a 429 by its own policy for minutes before it gives up, too long for the suite.
@pytest.mark.parametrize("runtime", ["codex", "copilot"])
def test_rate_limit_fails_with_the_clis_reason(cli_daemon: DaemonProcess, runtime: str) -> None:
    row = cli_daemon.request("FAIL 429", agent="agent")
    failed = cli_daemon.wait_state(row["id"], "failed", "done", timeout=120)
    assert failed["state"] == "failed" and ("429" in failed["result"] or "rate" in failed["result"].lower()), failed
