"""The main loop through the real `cox` command: agent, request, show, logs, approve, retry."""

import json
import re
from pathlib import Path

from tests.daemon_process import DaemonProcess


def test_owner_request_runs_on_builtin_shell_agent(daemon: DaemonProcess) -> None:
    listed = daemon.cox("agent", "list", check=True).stdout
    assert re.search(r"^shell\s+shell\s+.*workspace$", listed, re.M)
    request_id = daemon.cox("request", "--agent", "shell", "echo hello from the shell agent", check=True).stdout.strip()
    assert re.fullmatch(r"R\d{8}-01", request_id)
    row = daemon.wait_state(request_id, "done")
    assert row["result"] == "hello from the shell agent" and row["exit_code"] == 0
    shown = json.loads(daemon.cox("show", "R-01", "--json", check=True).stdout)
    assert shown["id"] == request_id and [t["state"] for t in shown["timeline"]] == ["approved", "running", "done"]
    for key in (
        "id",
        "state",
        "agent",
        "requester",
        "prompt",
        "retry_of",
        "references",
        "conversation_ref",
        "progress",
        "result",
        "timeline",
    ):
        assert key in shown
    assert daemon.cox("logs", request_id, check=True).stdout == "hello from the shell agent\n"


def test_teammate_request_waits_for_owner_then_runs(daemon: DaemonProcess, tmp_path) -> None:  # type: ignore[no-untyped-def]
    token = daemon.cox("person", "add", "sarah", check=True).stdout.strip()
    assert len(token) >= 43
    request_id = daemon.cox("request", "--agent", "shell", "exit 3", token=token, check=True).stdout.strip()
    assert daemon.show(request_id)["state"] == "pending"
    assert "pending" in daemon.cox("list", "--state", "pending", check=True).stdout
    refused = daemon.cox("approve", request_id, token=token)
    assert refused.returncode != 0 and "only the owner can approve" in refused.stderr
    assert daemon.cox("approve", request_id, check=True).stdout.strip() == f"{request_id} is approved"
    failed = daemon.wait_state(request_id, "failed")
    assert failed["exit_code"] == 3 and "exit code 3" in failed["timeline"][-1]["text"]
    retried = daemon.cox("retry", request_id, token=token, check=True).stdout.strip()
    assert retried != request_id
    assert daemon.show(retried)["retry_of"] == request_id and daemon.show(retried)["state"] == "pending"
    mine = json.loads(daemon.cox("list", "--json", token=token, check=True).stdout)
    assert {r["id"] for r in mine} == {request_id, retried}


def test_cli_errors_are_sentences_on_stderr(daemon: DaemonProcess) -> None:
    for args, words in (
        (("request", "--agent", "nope", "hi"), "there is no agent 'nope'"),
        (("show", "R-42"), "there is no request R"),
        (("show", "banana"), "is not a request ID"),
        (("settings", "set", "approval_ttl", "soon"), "is not a duration"),
        (("settings", "set", "colour", "red"), "there is no setting 'colour'"),
    ):
        done = daemon.cox(*args)
        assert done.returncode == 1 and words in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_cli_without_daemon_says_so(tmp_path) -> None:  # type: ignore[no-untyped-def]
    done = DaemonProcess(tmp_path / "nothing").cox("list")
    assert done.returncode == 1 and "no daemon is running" in done.stderr


def test_more_commands_through_the_cli(daemon: DaemonProcess) -> None:
    token = daemon.cox("person", "add", "sam", check=True).stdout.strip()
    pending = daemon.cox("request", "--agent", "shell", "true", token=token, check=True).stdout.strip()
    assert daemon.cox("deny", pending, check=True).stdout.strip() == f"{pending} is denied"
    assert daemon.show(pending)["result"] == "denied by owner" and daemon.show(pending)["state"] == "cancelled"
    listed = {line.split()[0]: line.split()[1] for line in daemon.cox("list", check=True).stdout.splitlines()[1:]}
    assert listed[pending] == "denied"
    assert "       state: denied" in daemon.cox("show", pending, check=True).stdout
    slow = daemon.cox("request", "--agent", "shell", "sleep 60", check=True).stdout.strip()
    daemon.wait_state(slow, "running")
    said = daemon.cox("cancel", slow, check=True).stdout.strip()
    assert said == f"{slow} is running (stops at the next safe point)"
    assert daemon.wait_state(slow, "cancelled")["state"] == "cancelled"
    assert "       state: cancelled" in daemon.cox("show", slow, check=True).stdout
    counted = daemon.cox(
        "request", "--agent", "shell", "for i in 1 2 3; do echo tick $i; sleep 0.3; done", check=True
    ).stdout.strip()
    assert daemon.cox("logs", "--follow", counted, check=True).stdout == "tick 1\ntick 2\ntick 3\n"
    assert "sam" in daemon.cox("person", "list", check=True).stdout
    waiting = daemon.cox("request", "--agent", "shell", "true", token=token, check=True).stdout.strip()
    assert daemon.cox("person", "revoke", "sam", check=True).stdout.strip() == f"revoked sam; cancelled {waiting}"
    refused = daemon.cox("list", token=token)
    assert refused.returncode == 1 and "valid token" in refused.stderr and token not in refused.stderr
    records = json.loads(daemon.cox("audit", "--json", check=True).stdout)
    assert {"add_person", "create", "deny", "cancel", "stop", "revoke"} <= {r["action"] for r in records}
    assert all(r["actor"] for r in records) and records[-1]["seq"] == len(records)


def test_coxswain_home_variable_and_clean_sigterm(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import os
    import subprocess
    import sys

    daemon = DaemonProcess(tmp_path / "home").start()
    try:
        env = {**os.environ, "COXSWAIN_HOME": str(tmp_path / "home")}
        listed = subprocess.run(
            [sys.executable, "-m", "desktop.cli", "agent", "list"], env=env, capture_output=True, text=True, timeout=30
        )
        assert listed.returncode == 0 and "shell" in listed.stdout
    finally:
        assert daemon.stop() == 0
    assert not (tmp_path / "home" / "daemon.json").exists()


def test_an_agent_can_be_changed_and_removed_and_its_history_stays(daemon: DaemonProcess, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    daemon.cox("agent", "add", "web", "--runtime", "shell", "--folder", str(tmp_path), check=True)
    done = daemon.wait_state(daemon.request("pwd", agent="web")["id"], "done")
    assert done["result"] == str(tmp_path)
    changed = daemon.cox("agent", "change", "web", "--runtime", "shell", "--folder", str(other), check=True)
    assert changed.stdout.startswith(f"agent web is now shell in {other}")
    assert daemon.wait_state(daemon.request("pwd", agent="web")["id"], "done")["result"] == str(other)

    sam = daemon.add_person("sam")
    waiting = daemon.request("true", agent="web", token=sam)
    refused = daemon.cox("agent", "remove", "web")
    assert refused.returncode != 0 and f"{waiting['id']} is still waiting or running on web" in refused.stderr
    daemon.cox("deny", waiting["id"], check=True)
    assert daemon.cox("agent", "remove", "web", check=True).stdout.strip() == "removed agent web"
    assert "web" not in daemon.cox("agent", "list", check=True).stdout
    assert daemon.show(done["id"])["agent"] == "web", "its past requests keep its name"
    assert daemon.post("/api/requests", {"agent": "web", "prompt": "pwd"}).status_code == 404
    again = daemon.cox("agent", "add", "web", "--runtime", "shell", "--folder", str(tmp_path), check=True)
    assert again.stdout.startswith("added agent web")
    assert daemon.cox("agent", "remove", "nobody").stderr.strip().endswith("there is no agent 'nobody'")


def test_a_reader_that_stops_early_gets_no_traceback(daemon: DaemonProcess) -> None:
    """`cox list | head`: the pipe's reader is gone before cox writes; cox ends quietly, as a program SIGPIPE ends."""
    import os
    import subprocess

    from tests.daemon_process import COX

    for n in range(3):
        daemon.request(f"echo {n}")
    env = {k: v for k, v in os.environ.items() if k != "COX_TOKEN"}
    for command in (["list"], ["task", "list"], ["agent", "list"]):
        reader, writer = os.pipe()
        os.close(reader)  # read nothing: the first write meets a closed pipe
        done = subprocess.run(
            [*COX, "--home", str(daemon.home), *command],
            stdout=writer,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=60,
        )
        os.close(writer)
        assert done.returncode in (0, 141), (command, done.returncode, done.stderr)
        assert done.stderr == "", (command, done.stderr)
