"""/api/events as its readers see it: a change is put in the API's shape once, however many streams follow, and a
person's stream ends when their token is revoked."""

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from desktop.core.events import TaskChanged
from desktop.store.rows import TaskRow
from tests.live_daemon import live_daemon


async def next_event(lines: AsyncIterator[str]) -> tuple[str, dict[str, Any]]:
    """The next server-sent event's name and data (pings and blank lines skipped)."""
    name = ""
    async for line in lines:
        if line.startswith("event: "):
            name = line.removeprefix("event: ")
        elif line.startswith("data: "):
            return name, json.loads(line.removeprefix("data: "))
    raise AssertionError("the stream ended")


async def test_a_change_is_put_in_the_apis_shape_once_for_all_streams(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with live_daemon(tmp_path / "home") as (daemon, _, client):
        shown: list[str] = []  # each task row put in the API's shape
        view = daemon.tasks.view

        def counted(row: TaskRow, quiet_after: int | None = None) -> Any:
            shown.append(row.id)
            return view(row, quiet_after)

        monkeypatch.setattr(daemon.tasks, "view", counted)
        async with contextlib.AsyncExitStack() as streams:
            followers = [
                (await streams.enter_async_context(client.stream("GET", "/api/events"))).aiter_lines() for _ in range(3)
            ]
            for lines in followers:
                assert (await next_event(lines))[0] == "hello"
            row = TaskRow("T1", None, "command", str(tmp_path), time.time(), None, None, None, agent="shell")
            daemon.events.publish(TaskChanged(row, "task_started"))
            for lines in followers:
                name, data = await asyncio.wait_for(next_event(lines), 10)
                assert (name, data["row"]["id"], data["row"]["state"]) == ("task_started", "T1", "running")
        assert shown == ["T1"], f"the row was made {len(shown)} times for 3 streams"


async def test_a_persons_stream_ends_when_their_token_is_revoked(tmp_path: Path) -> None:
    async with live_daemon(tmp_path / "home") as (_, _, client):
        added = await client.post("/api/people", json={"name": "sarah"})
        sarah = {"Authorization": f"Bearer {added.json()['token']}"}
        async with client.stream("GET", "/api/events", headers=sarah) as stream:
            lines = stream.aiter_lines()
            assert await next_event(lines) == ("hello", {"you": "sarah"})
            assert (await client.post("/api/people/sarah/revoke", json={})).status_code == 200
            with pytest.raises(AssertionError, match="the stream ended"):
                await asyncio.wait_for(next_event(lines), 10)


async def test_a_revocation_made_while_a_stream_opens_ends_it(tmp_path: Path) -> None:
    """The owner revokes a teammate at any moment of their stream's opening (after the daemon let it in, before it
    listened, …): the stream ends, and nothing said of them after the revocation reaches it."""
    from desktop.core.events import Revoked, RuntimeNews

    async with live_daemon(tmp_path / "home") as (daemon, _, client):
        owner = daemon.principals.authenticate((tmp_path / "home" / "owner.token").read_text().strip())
        assert owner is not None
        for steps in range(16):  # loop steps from asking for the stream to the revocation
            name = f"p{steps}"
            token = (await client.post("/api/people", json={"name": name})).json()["token"]
            said: list[str] = []

            async def follow(token: str = token, said: list[str] = said) -> None:
                headers = {"Authorization": f"Bearer {token}"}
                async with client.stream("GET", "/api/events", headers=headers) as stream:
                    said.extend([line async for line in stream.aiter_lines() if line.startswith("data")])

            following = asyncio.create_task(follow())
            for _ in range(steps):
                await asyncio.sleep(0)
            daemon.principals.revoke(name, owner)
            daemon.events.publish(Revoked(name))  # as POST /api/people/{name}/revoke does
            daemon.events.publish(RuntimeNews("R20990101-01", "text", "after the revocation", None, name))
            try:
                await asyncio.wait_for(following, 5)
            except TimeoutError:
                raise AssertionError(f"{steps} steps: the stream stayed open after the revocation") from None
            assert not any("after the revocation" in line for line in said), (steps, said)
