"""The rules of watching on a real SQLite ledger, without agent CLIs: what a watcher hears by default and when it
names more, all idle, unwatching, a watch that outlives a restart, and news that goes to the conversation's newest
turn."""

from pathlib import Path

from desktop.sessions import sql as sessions_sql
from desktop.sessions.watching import Watching
from desktop.store import tasks as tasks_sql
from desktop.tasks.continuations import Continuations
from tests.ledger_fixture import OWNER, MovableClock, make_ledger
from tests.unit.test_continuations_rules import ended_task, settled


def setup(tmp_path: Path, events: list[str]) -> tuple[object, object, Continuations, Watching, str]:
    store, ledger = make_ledger(tmp_path, MovableClock())
    lead = ledger.create(OWNER, "api", "start S1 and watch it")
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO agents (name, runtime, folder, options, created_at) VALUES ('S1', 'shell', '/', '{}', 0)"
        )
        sessions_sql.add(conn, "S1", "Checks", None, lead.id, lead.id, 0.0)
        sessions_sql.watch(conn, lead.id, "S1", events, 0.0)
    continuations = Continuations(store, ledger, resumable=lambda agent: True, gather=0.01)
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
    assert news == (
        "News from the sessions you watch (unwatch_session stops it):\n"
        f"- S1 (Checks): turn {prompt.id} finished, done: clean\n\n"
        "Review the result and reply to the person who asked: what happened, and what, if anything, "
        "should be done next."
    )


async def test_all_idle_and_unwatching_and_a_restart(tmp_path: Path) -> None:
    store, ledger, continuations, _watching, lead = setup(tmp_path, ["all_idle", "task_failed"])
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.add(
            conn,
            {
                "id": "T1",
                "request_id": None,
                "kind": "command",
                "dir": str(tmp_path),
                "agent": "S1",
                "started_at": 0.0,
                "description": "server",
                "command": "serve",
            },
        )
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


async def test_a_sessions_view_says_what_keeps_it_busy_and_lists_its_tasks(tmp_path: Path) -> None:
    from desktop.sessions.views import view

    store, ledger, _continuations, _watching, _lead = setup(tmp_path, ["task_failed"])
    session = sessions_sql.get(store.conn, "S1")  # type: ignore[attr-defined]
    assert session is not None
    assert view(store.conn, session, now=1000.0)["activity"] == "idle"  # type: ignore[attr-defined]
    (tmp_path / "T1").mkdir()
    (tmp_path / "T1" / "output").write_text("listening on :5173\n")
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.add(
            conn,
            {
                "id": "T1",
                "request_id": None,
                "kind": "command",
                "dir": str(tmp_path / "T1"),
                "agent": "S1",
                "started_at": 100.0,
                "description": "dev server",
                "command": "vite",
                "last_output_at": 400.0,
                "tests": '{"runner": "vitest", "passed": 3, "failed": 1, "skipped": 0}',
            },
        )
    shown = view(store.conn, session, now=1000.0)  # type: ignore[attr-defined]
    assert shown["activity"] == "background_only"
    assert shown["tasks"] == [
        {
            "task": "T1",
            "description": "dev server",
            "command": "vite",
            "kind": "command",
            "state": "running",
            "started": "1970-01-01T00:01:40+00:00",
            "last_activity": "1970-01-01T00:06:40+00:00",
            "has_output": True,
            "quiet_minutes": 10,
            "tests": {"runner": "vitest", "passed": 3, "failed": 1, "skipped": 0},
        }
    ]
    prompt = ledger.create(OWNER, "S1", "go on")  # type: ignore[attr-defined]
    ledger.dispatch(prompt.id)  # type: ignore[attr-defined]
    assert view(store.conn, session, now=1000.0)["activity"] == "running_turn"  # type: ignore[attr-defined]
    with store.transaction() as conn:  # type: ignore[attr-defined]
        tasks_sql.finish(conn, "T1", 1100.0, 1, "failed")
    ended = view(store.conn, session, now=2000.0)["tasks"][0]  # type: ignore[attr-defined]
    assert (ended["state"], ended["ended"], ended["exit_code"]) == ("ended", "failed", 1)


async def test_all_idle_waits_while_the_sessions_own_turn_is_coming(tmp_path: Path) -> None:
    """The session's last task ends, and that wakes the session itself: it is not idle, so no "all idle" yet."""
    store, ledger, continuations, watching, lead = setup(tmp_path, ["all_idle"])
    prompt = ledger.dispatch(ledger.create(OWNER, "S1", "lint it").id)  # type: ignore[attr-defined]
    ledger.finish(prompt.id, 0, "started lint")  # type: ignore[attr-defined]
    ended_task(store, tmp_path, "T1", prompt.id, 1)
    with store.transaction() as conn:  # type: ignore[attr-defined]
        conn.execute("UPDATE tasks SET agent = 'S1' WHERE id = 'T1'")
    task = tasks_sql.get(store.conn, "T1")  # type: ignore[attr-defined]
    continuations.task_ended(task)  # type: ignore[arg-type]
    watching.on_task("ended", task)  # type: ignore[arg-type]
    await settled(continuations)
    assert woken(ledger, lead) == [], "S1's own continuation comes: S1 is not idle"
    assert [r.agent for r in ledger.listing(OWNER) if r.continuation_of == prompt.id] == ["S1"]  # type: ignore[attr-defined]
