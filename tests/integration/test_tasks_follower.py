"""One follower for request turns and background tasks: a flood of output holds the daemon's loop no longer in a
turn than in a task (both read at most READ_PER_TICK a pass), both still redact and count tests, an event line
split across reads is parsed whole; and one console page for the API and the MCP tools."""

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from desktop.tasks.follower import READ_PER_TICK, Follower, Lines
from desktop.tasks.paging import console_page
from desktop.tasks.supervisor import Exit
from tests.integration.test_agent_session_rules import call
from tests.live_daemon import live_daemon

SECRET = "export API_TOKEN=f00ba5c0ffee1234"
SUMMARY = "4 passed, 1 failed, 2 skipped in 0.2s"


class Stalls:
    """The longest the loop kept this ticker waiting: the loop thread's CPU time between two of its turns (time the
    machine gave to others does not count, so a busy machine does not make a stall)."""

    def __init__(self) -> None:
        self.longest, self._task = 0.0, asyncio.ensure_future(self._tick())

    async def _tick(self) -> None:
        while True:
            before = time.thread_time()
            await asyncio.sleep(0.002)
            self.longest = max(self.longest, time.thread_time() - before)

    async def stop(self) -> float:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)
        return self.longest


async def started(output: Callable[[str], Path | None], run_id: str) -> None:
    """Its command runs: its runner made its output file."""
    for _ in range(1000):
        path = output(run_id)
        if path is not None and path.exists():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"{run_id} never started")


async def until(client: httpx.AsyncClient, path: str, field: str, *values: object) -> dict[str, Any]:
    for _ in range(3000):
        row: dict[str, Any] = (await client.get(path)).json()
        if row[field] in values:
            return row
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path}: {field} never became {values}: {row}")


async def test_a_turns_flood_holds_the_loop_no_longer_than_a_tasks_and_both_still_redact(tmp_path: Path) -> None:
    flood = tmp_path / "flood"
    flood.write_bytes(b"y\n" * 10_000_000 + f"{SECRET}\n{SUMMARY}\n".encode())  # 20 MB at once, as `cat` writes it
    command = f"while [ ! -e {tmp_path / 'go'} ]; do sleep 0.01; done; cat {flood}"  # once it is followed
    async with live_daemon(tmp_path / "home") as (daemon, _clock, client):
        request = (await client.post("/api/requests", json={"agent": "shell", "prompt": command})).json()
        await started(daemon.runs.output_path, request["id"])
        stalls = Stalls()
        (tmp_path / "go").touch()
        done = await until(client, f"/api/requests/{request['id']}", "state", "done", "failed")
        turn_stall = await stalls.stop()

        (tmp_path / "go").unlink()
        task = (await client.post("/api/tasks", json={"agent": "shell", "command": command})).json()
        await started(lambda task_id: Path(daemon.tasks.get(task_id).dir) / "output", task["id"])
        stalls = Stalls()
        (tmp_path / "go").touch()
        ended = await until(client, f"/api/tasks/{task['id']}", "state", "ended")
        task_stall = await stalls.stop()

        assert done["state"] == "done"
        assert SECRET not in done["result"] and "export API_TOKEN=[redacted]" in done["result"]
        console = (await client.get(f"/api/requests/{request['id']}/console", params={"lines": 2})).json()
        assert console["lines"] == ["export API_TOKEN=[redacted]", SUMMARY]
        assert ended["tests"] == {"runner": "pytest", "passed": 4, "failed": 1, "skipped": 2, "first_failure": None}
        page = (await client.get(f"/api/tasks/{task['id']}/output", params={"lines": 2})).json()
        assert page["lines"] == ["export API_TOKEN=[redacted]", SUMMARY]
    # both read a bounded pass at a time (~10-30 ms of the loop each); a turn read all of it at once before (1.6-1.9 s)
    print(f"longest stall: turn {turn_stall:.3f} s, task {task_stall:.3f} s")
    assert turn_stall <= 2 * task_stall + 0.25, (turn_stall, task_stall)


async def test_the_follower_reads_a_pass_at_a_time_and_all_of_it_by_the_end(tmp_path: Path) -> None:
    output = tmp_path / "output"
    output.write_bytes(b"x" * (READ_PER_TICK * 3 + 10))
    reads: list[int] = []
    follower = Follower(output, lambda data: reads.append(len(data)))
    ended: asyncio.Future[Exit] = asyncio.get_running_loop().create_future()
    ended.set_result(Exit(0))
    assert await follower.until(ended, 60) == Exit(0)
    assert reads == [READ_PER_TICK] * 3 + [10] and follower.offset == output.stat().st_size
    assert follower.read() == 0 and Follower(tmp_path / "missing", print).read() == 0


def test_event_lines_are_whole_across_reads_and_an_endless_line_is_dropped() -> None:
    lines = Lines(longest=10)
    assert lines.feed(b'{"type": ') == []
    assert lines.feed(b'"result"}\nnext \xff') == ['{"type": "result"}']
    assert lines.feed(b"line\n\n") == ["next \ufffdline", ""]
    assert lines.feed(b"0123456789") == []
    assert lines.feed(b"abc") == []  # past ten bytes without a newline: what came is not kept
    assert lines.feed(b"de\nok\n") == ["de", "ok"]


async def test_the_api_and_the_mcp_tool_page_a_console_alike(tmp_path: Path) -> None:
    async with live_daemon(tmp_path / "home") as (daemon, _clock, client):
        turn = (await client.post("/api/requests", json={"agent": "shell", "prompt": "sleep 60"})).json()
        await until(client, f"/api/requests/{turn['id']}", "state", "running")
        script = "printf '\\033[31mred\\033[0m\\n'; echo same; echo same; echo last; printf half"
        _, task = await call(client, daemon.principals.turn_token(turn["id"]), "start_task", {"command": script})
        await until(client, f"/api/tasks/{task['id']}", "state", "ended")
        output = Path(daemon.tasks.get(task["id"]).dir) / "output"
        first = (await client.get(f"/api/tasks/{task['id']}/output", params={"lines": 1, "after": 0})).json()
        assert first["lines"] == ["\x1b[31mred\x1b[0m"] and first["more"]
        for params in ({"lines": 2, "styled": True}, {"lines": 50}, {"lines": 1, "after": 0}, {"before": 14}):
            answer = (await client.get(f"/api/tasks/{task['id']}/output", params=params)).json()
            built = console_page(
                output,
                int(params.get("lines", 2000)),
                before=params.get("before"),
                after=params.get("after"),
                styled=bool(params.get("styled")),
            )
            assert answer == built.dump(), params

        _, read = await call(
            client, daemon.principals.turn_token(turn["id"]), "read_task_output", {"task_id": task["id"]}
        )
        plain = console_page(output, 100, plain=True)
        assert read.split("\n") == [f"{task['id']} · completed", *plain.lines, plain.pending]
        assert plain.lines == ["red", "same  ×2", "last"] and plain.pending == "half"
        await client.post(f"/api/requests/{turn['id']}/cancel", json={})
