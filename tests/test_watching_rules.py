"""The rules of watching on a real SQLite ledger, without agent CLIs: what a watcher hears by default and when it
names more, all idle, unwatching, a watch that outlives a restart, and news that goes to the conversation's newest
turn."""

from pathlib import Path

from desktop.store import sessions as sessions_sql
from desktop.store import tasks as tasks_sql
from desktop.tasks.continuations import Continuations
from desktop.tasks.watching import Watching
from tests.ledger_fixture import OWNER, MovableClock, make_ledger
from tests.test_continuations_rules import ended_task, settled


def setup(tmp_path: Path, events: list[str]) -> tuple[object, object, Continuations, Watching, str]:
    store, ledger = make_ledger(tmp_path, MovableClock())
    lead = ledger.create(OWNER, "api", "start S1 and watch it")
    with store.transaction() as conn:
        conn.execute("INSERT INTO agents (name, runtime, folder, options, created_at) VALUES ('S1', 'shell', '/', "
                     "'{}', 0)")
        sessions_sql.add(conn, "S1", "Checks", None, lead.id, lead.id, 0.0)
        sessions_sql.watch(conn, lead.id, "S1", events, 0.0)
    continuations = Continuations(store, ledger, resumable=lambda agent: True, wall=lambda: 0.0, gather=0.01)
    return store, ledger, continuations, Watching(store, ledger, continuations), lead.id


def woken(ledger: object, of: str) -> list[str]:
    return [r.prompt for r in ledger.listing(OWNER) if r.continuation_of == of]  # type: ignore[attr-defined]


async def test_by_default_failures_and_finished_turns_not_tasks_that_ended_well(tmp_path: Path) -> None:
    store, ledger, continuations, watching, lead = setup(tmp_path, ["task_failed", "turn_finished"])
    ledger.listeners.append(watching.on_request)  # type: ignore[attr-defined]
    prompt = ledger.create(OWNER, "S1", "lint it")  # type: ignore[attr-defined]
    ledger.dispatch(prompt.id)  # type: ignore[attr-defined]
    ended_task(store, tmp_path, "T1", prompt.id, 0)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("UPDATE tasks SET agent = 'S1' WHERE id = 'T1'")  # the session's own task
    watching.on_task("ended", tasks_sql.get(store.conn, "T1"))  # type: ignore[attr-defined,arg-type]
    await settled(continuations)
    assert woken(ledger, lead) == [], "a command that ended well is not news by default"
    ledger.finish(prompt.id, 0, "clean")  # type: ignore[attr-defined]
    await settled(continuations)
    [news] = woken(ledger, lead)
    assert news == ("News from the sessions you watch (unwatch_session stops it):\n"
                    f"- S1 (Checks): turn {prompt.id} finished, done: clean\n\n"
                    "Review the result and reply to the person who asked: what happened, and what, if anything, "
                    "should be done next.")


async def test_all_idle_and_unwatching_and_a_restart(tmp_path: Path) -> None:
    store, ledger, continuations, _watching, lead = setup(tmp_path, ["all_idle", "task_failed"])
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.add(conn, {"id": "T1", "request_id": None, "kind": "command", "dir": str(tmp_path), "agent": "S1",
                             "started_at": 0.0, "description": "server", "command": "serve"})
        tasks_sql.finish(conn, "T1", 5.0, 1, "failed")
    restarted = Watching(store, ledger, continuations)  # a new daemon reads the same watches
    restarted.on_task("ended", tasks_sql.get(store.conn, "T1"))  # type: ignore[attr-defined,arg-type]
    await settled(continuations)
    [news] = woken(ledger, lead)
    assert "- S1 (Checks): T1 (server) failed (exit 1) after 5 s" in news
    assert "- S1 (Checks): all idle (no turn, no background task)" in news
    newest = next(r for r in ledger.listing(OWNER) if r.continuation_of == lead)  # type: ignore[attr-defined]
    with store.transaction() as conn:  # type: ignore[attr-defined]
        assert sessions_sql.unwatch(conn, lead, "S1")
    restarted.on_task("ended", tasks_sql.get(store.conn, "T1"))  # type: ignore[attr-defined,arg-type]
    await settled(continuations)
    assert [r for r in ledger.listing(OWNER) if r.continuation_of == newest.id] == [], "unwatched: no news"
