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


def ended_task(
    store: object, folder: Path, task_id: str, request_id: str | None, exit_code: int, output: str = ""
) -> TaskRow:
    task_dir = folder / task_id
    task_dir.mkdir()
    (task_dir / "output").write_text(output)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.add(
            conn,
            {
                "id": task_id,
                "request_id": request_id,
                "kind": "command",
                "dir": str(task_dir),
                "started_at": 100.0,
                "agent": "api",
                "description": "unit tests",
                "command": "pytest -q",
            },
        )
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
    continuations = Continuations(store, ledger, resumable=lambda agent: False, gather=0.01)
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 2, "collected 4 items\n1 failed\n"))
    await settled(continuations)
    notes = [t.text for t in requests_sql.timeline(store.conn, origin.id) if t.kind == "note"]
    assert notes == ["T1 (unit tests) failed (exit 2) after 1 min 04 s (the api agent has no conversation to continue)"]
    assert [r for r in ledger.listing(OWNER) if r.continuation_of] == []
    assert tasks_sql.get(store.conn, "T1").woke == "a timeline note: its agent has no conversation to continue"


async def test_a_chain_of_continuations_waits_for_the_owner_after_the_loop_limit(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)
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
    assert any(
        "waits for the owner: 10 background continuations in a row" in t.text
        for t in requests_sql.timeline(store.conn, request.id)
    )


async def test_a_cancelled_request_cancels_its_queued_continuations(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)
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
        Continuations(store, ledger, resumable=lambda agent: True).drop_stale()
    notes = [t.text for t in requests_sql.timeline(store.conn, origin.id) if "dropped" in t.text]
    assert notes == ["continuation for T1 dropped: the daemon restarted before it ran"]
    assert tasks_sql.get(store.conn, "T2").woke is not None
    assert not any(r.continuation_of for r in ledger.listing(Actor("owner", "owner")))


async def test_a_retried_continuation_continues_the_same_conversation(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)
    origin = ledger.create(OWNER, "api", "start the tests")
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 1, "1 failed\n"))
    await settled(continuations)
    [woken] = [r for r in ledger.listing(OWNER) if r.continuation_of == origin.id]
    ledger.cancel(woken.id, OWNER)
    again = ledger.retry(woken.id, OWNER)
    assert (again.continuation_of, again.retry_of, again.prompt) == (origin.id, woken.id, woken.prompt)
    assert again.state == State.APPROVED and again.requester == origin.requester


def rules(store: object, ledger: object) -> Continuations:
    made = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)  # type: ignore[arg-type]
    ledger.listeners.append(made.on_change)  # type: ignore[attr-defined]
    return made


async def test_a_running_request_cancelled_wakes_nothing_of_what_ended_before_or_after(tmp_path: Path) -> None:
    """Cancelling a running request is asked, then done at its safe point: what ended in between, and what ends
    after, makes no turn."""
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = rules(store, ledger)
    origin = ledger.dispatch(ledger.create(OWNER, "api", "work").id)
    continuations.task_ended(ended_task(store, tmp_path, "T1", origin.id, 0))  # gathering: not made yet
    ledger.cancel(origin.id, OWNER)  # asked
    continuations.task_ended(ended_task(store, tmp_path, "T2", origin.id, 0))
    ledger.finish(origin.id, None, "")  # stopped at its safe point: cancelled
    await settled(continuations)
    assert [r for r in ledger.listing(OWNER) if r.continuation_of] == []
    assert tasks_sql.get(store.conn, "T2").woke == f"not woken: {origin.id} was cancelled"


async def test_the_loop_guard_counts_the_whole_conversation_and_a_held_turn_holds_the_next(tmp_path: Path) -> None:
    clock = MovableClock()
    store, ledger = make_ledger(tmp_path, clock)
    continuations = rules(store, ledger)
    first = ledger.dispatch(ledger.create(OWNER, "api", "start").id)
    request = first
    for number in range(1, LOOP_LIMIT + 2):
        continuations.task_ended(ended_task(store, tmp_path, f"T{number}", request.id, 0))
        await settled(continuations)
        request = max((r for r in ledger.listing(OWNER) if r.continuation_of), key=lambda r: r.created_at)
    assert request.state == State.PENDING
    continuations.task_ended(ended_task(store, tmp_path, "T99", first.id, 0))  # a task of the first turn, late
    await settled(continuations)
    late = max((r for r in ledger.listing(OWNER) if r.continuation_of), key=lambda r: r.created_at)
    assert late.continuation_of == first.id and late.state == State.PENDING, "no way around the guard"
    clock.advance(60)
    ledger.approve(request.id, OWNER)  # the owner's yes counts from zero again
    ledger.approve(late.id, OWNER)
    clock.advance(1)
    continuations.task_ended(ended_task(store, tmp_path, "T100", late.id, 0))
    await settled(continuations)
    newest = max((r for r in ledger.listing(OWNER) if r.continuation_of), key=lambda r: r.created_at)
    assert newest.state == State.APPROVED


async def test_tasks_ending_in_two_turns_of_one_conversation_wake_one_turn(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = rules(store, ledger)
    first = ledger.dispatch(ledger.create(OWNER, "api", "start").id)
    continuations.task_ended(ended_task(store, tmp_path, "T1", first.id, 0))
    await settled(continuations)
    [second] = [r for r in ledger.listing(OWNER) if r.continuation_of]
    continuations.task_ended(ended_task(store, tmp_path, "T2", first.id, 1))
    continuations.task_ended(ended_task(store, tmp_path, "T3", second.id, 1))
    await settled(continuations)
    made = [r for r in ledger.listing(OWNER) if r.continuation_of and r.id != second.id]
    assert len(made) == 1 and "T2" in made[0].prompt and "T3" in made[0].prompt
    assert made[0].continuation_of == second.id, "linked to the newest request that started one of them"


async def test_no_approved_turn_for_a_waiting_origin_nor_for_a_revoked_person(tmp_path: Path) -> None:
    store, ledger = make_ledger(tmp_path, MovableClock())
    continuations = rules(store, ledger)
    waiting = ledger.create(SARAH, "api", "a teammate's request")  # pending
    continuations.tell(waiting.id, "S1 (Checks): turn finished, done")
    await settled(continuations)
    [made] = [r for r in ledger.listing(OWNER) if r.continuation_of == waiting.id]
    assert made.state == State.PENDING, "a turn nobody approved is not approved by its news"
    running = ledger.dispatch(ledger.approve(ledger.create(SARAH, "api", "go").id, OWNER).id)
    with store.transaction() as conn:
        conn.execute("UPDATE principals SET revoked_at = 1 WHERE name = 'sarah'")
    continuations.task_ended(ended_task(store, tmp_path, "T1", running.id, 0))
    await settled(continuations)
    assert [r for r in ledger.listing(OWNER) if r.continuation_of == running.id] == []
    assert tasks_sql.get(store.conn, "T1").woke == "not woken: sarah was revoked"


def test_a_prompt_stays_bounded_whatever_ends(tmp_path: Path) -> None:
    from desktop.tasks.continuations import continuation_prompt

    store, _ledger = make_ledger(tmp_path, MovableClock())
    tasks = [ended_task(store, tmp_path, f"T{n}", None, 1, "x" * 5000 + "\n") for n in range(1, 60)]
    prompt = continuation_prompt(tasks, [f"S1 (Checks): news {n}" for n in range(100)])
    assert len(prompt) < 40_000 and "T59" in prompt and "- … and 80 more" in prompt
