"""The one API client (desktop/client): typed answers, the daemon's own sentences as errors, the same calls run
synchronously (the CLI) and on asyncio (the tray); `--json` prints the daemon's JSON as it came."""

import json
from pathlib import Path

import pytest

import desktop.cli
import desktop.gui
from desktop.client import DaemonError, api
from desktop.client.shapes import Agent, Request
from desktop.client.transport import AsyncClient, Client
from tests.daemon_process import DaemonProcess


async def test_the_async_client_runs_the_same_calls_and_answers_typed_values(daemon: DaemonProcess) -> None:
    client = AsyncClient.connect(daemon.url, daemon.token)
    try:
        made = await client.call(api.send("shell", "echo typed"))
        assert isinstance(made, Request) and made.agent == "shell" and made.requester == "owner"
        agents = await client.call(api.agents())
        assert [type(a) for a in agents] == [Agent] and agents[0].name == "shell"
        with pytest.raises(DaemonError, match="there is no request R"):
            await client.call(api.request("R-42"))
        with pytest.raises(DaemonError, match="there is no agent 'nope'"):
            await client.call(api.send("nope", "hi"))
    finally:
        await client.http.aclose()
    daemon.wait_state(made.id, "done")
    sync = Client.connect(daemon.url, daemon.token)
    shown = sync.call(api.request(made.id))
    assert shown.result == "typed" and [t.state for t in shown.timeline or []] == ["approved", "running", "done"]
    page = sync.call(api.console(made.id))
    assert page.lines == ["typed"] and page.before is None and not page.more


def test_a_daemon_that_does_not_answer_is_said_so(tmp_path: Path) -> None:
    with pytest.raises(DaemonError, match="does not answer; is it running"):
        Client.connect("http://127.0.0.1:9", "token", timeout=5).call(api.health())


def test_json_output_is_the_daemons_json_as_it_came(daemon: DaemonProcess) -> None:
    sam = daemon.add_person("sam")
    done = daemon.wait_state(daemon.request("echo one")["id"], "done")
    daemon.request("true", token=sam)
    daemon.cox("task", "start", "--agent", "shell", "--description", "a sleeper", "sleep", "30", check=True)
    for args, path in (
        (("list", "--json"), "/api/requests"),
        (("show", done["id"], "--json"), f"/api/requests/{done['id']}"),
        (("task", "list", "--json"), "/api/tasks"),
        (("audit", "--json"), "/api/audit"),
    ):
        expected = json.dumps(daemon.get(path).json(), indent=2) + "\n"
        assert daemon.cox(*args, check=True).stdout == expected, args


def test_api_paths_are_written_only_in_the_client() -> None:
    """The CLI and the tray reach the daemon through desktop/client only: no API path of their own, no raw JSON."""
    holding = [
        f"{path.parent.name}/{path.name}"
        for package in (desktop.cli, desktop.gui)
        for path in Path(str(package.__file__)).parent.rglob("*.py")
        if any(written in path.read_text() for written in ("/api/", '"api/', "'api/", ".json()"))
    ]
    assert holding == []
