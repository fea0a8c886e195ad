"""The rules of background continuations on a real SQLite ledger, without agent CLIs: the shell agent gets a timeline
note, a chain of continuations waits for the owner after LOOP_LIMIT, a cancelled request's queued continuations are
cancelled, and tasks that ended before a restart are dropped once."""

import asyncio
from pathlib import Path

from desktop.core.actors import Actor
from desktop.core.states import State
from desktop.store import requests as requests_sql
from desktop.store import tasks as tasks_sql
from desktop.store.rows import TaskRow
from desktop.tasks.continuations import LOOP_LIMIT, Continuations
from tests.ledger_fixture import OWNER, SARAH, MovableClock, make_ledger


def ended_task(store: object, folder: Path, task_id: str, request_id: str | None, exit_code: int,
               output: str = "") -> TaskRow:
    task_dir = folder / task_id
    task_dir.mkdir()
    (task_dir / "output").write_text(output)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.add(conn, {"id": task_id, "request_id": request_id, "kind": "command", "dir": str(task_dir),
                             "started_at": 100.0, "agent": "api", "description": "unit tests",
                             "command": "pytest -q"})
        tasks_sql.finish(conn, task_id, 164.0, exit_code, "completed" if exit_code == 0 else "failed")
    row = tasks_sql.get(store.conn, task_id)  # type: ignore[attr-defined]
    assert row is not None
    return row


async def settled(continuations: Continuations) -> None:
    while continuations._timers:  # what gathers is made
        await asyncio.sleep(0.01)


async def test_the_shell_agent_gets_a_timeline_note_and_no_turn(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    origin = ledger.create(SARAH, "api", "echo hi")
    continuations = Continuations(store, ledger, resumable=lambda agent: False, wall=lambda: 0.0, gather=0.01)
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 2, "collected 4 items\n1 failed\n"))
    await settled(continuations)
    notes = [t.text for t in requests_sql.timeline(store.conn, origin.id) if t.kind == "note"]
    assert notes == ["T1 (unit tests) failed (exit 2) after 1 min 04 s (the api agent has no session to continue)"]
    assert [r for r in ledger.listing(OWNER) if r.continuation_of] == []
    assert tasks_sql.get(store.conn, "T1").woke == "a timeline note: its agent has no session to continue"


async def test_a_chain_of_continuations_waits_for_the_owner_after_the_loop_limit(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, wall=lambda: 0.0, gather=0.01)
    request = ledger.approve(ledger.create(SARAH, "api", "start the tests").id, OWNER)
    states = []
    for number in range(1, LOOP_LIMIT + 2):
        continuations.task_ended(ended_task(store, tmp_path, f"T{number}", request.id, 1, "1 failed\n"))
        await settled(continuations)
        woken = [r for r in ledger.listing(OWNER) if r.continuation_of == request.id]
        assert len(woken) == 1
        request = woken[0]
        states.append(request.state)
        assert request.requester == "sarah" and "T" + str(number) in request.prompt
    assert states == [State.APPROVED] * LOOP_LIMIT + [State.PENDING], "the eleventh in a row asks the owner"
    assert any("waits for the owner: 10 background continuations in a row" in t.text
               for t in requests_sql.timeline(store.conn, request.id))


async def test_a_cancelled_request_cancels_its_queued_continuations(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, wall=lambda: 0.0, gather=0.01)
    ledger.listeners.append(continuations.on_change)
    origin = ledger.create(OWNER, "api", "start the server")  # approved: the owner's own
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 0, "up\n"))
    await settled(continuations)
    [woken] = [r for r in ledger.listing(OWNER) if r.continuation_of == origin.id]
    assert woken.state == State.APPROVED
    ledger.cancel(origin.id, OWNER)
    assert ledger.get(woken.id).state == State.CANCELLED
    assert ledger.get(woken.id).result == f"{origin.id} was cancelled"
    continuations.task_ended(ended_task(store, tmp_path, "T2", origin.id, 0))  # its later tasks wake nothing
    await settled(continuations)
    assert len([r for r in ledger.listing(OWNER) if r.continuation_of == origin.id]) == 1
    assert tasks_sql.get(store.conn, "T2").woke == f"not woken: {origin.id} was cancelled"


async def test_tasks_that_ended_before_a_restart_are_dropped_once(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    origin = ledger.create(OWNER, "api", "start")
    ended_task(store, tmp_path, "T1", origin.id, 0)
    ended_task(store, tmp_path, "T2", None, 0)
    for _ in range(2):  # two starts
        Continuations(store, ledger, resumable=lambda agent: True, wall=lambda: 0.0).drop_stale()
    notes = [t.text for t in requests_sql.timeline(store.conn, origin.id) if "dropped" in t.text]
    assert notes == ["continuation for T1 dropped: the daemon restarted before it ran"]
    assert tasks_sql.get(store.conn, "T2").woke is not None
    assert not any(r.continuation_of for r in ledger.listing(Actor("owner", "owner")))


async def test_a_retried_continuation_continues_the_same_conversation(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, wall=lambda: 0.0, gather=0.01)
    origin = ledger.create(OWNER, "api", "start the tests")
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 1, "1 failed\n"))
    await settled(continuations)
    [woken] = [r for r in ledger.listing(OWNER) if r.continuation_of == origin.id]
    ledger.cancel(woken.id, OWNER)
    again = ledger.retry(woken.id, OWNER)
    assert (again.continuation_of, again.retry_of, again.prompt) == (origin.id, woken.id, woken.prompt)
    assert again.state == State.APPROVED and again.requester == origin.requester
