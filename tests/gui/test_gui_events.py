"""The tray app follows the daemon's /api/events like any other client, and updates from the rows the events carry:
a runtime's chatter costs no HTTP round trip, a state change shows without one, and what was answered while the
stream was down is settled when it comes back."""

import asyncio
from typing import Any

import httpx

from desktop.core.events import RuntimeNews
from desktop.gui.event_stream import EventStream
from tests.fakes.dbus import until
from tests.gui_fixture import person, run, wait_state


def count_reads(app: Any) -> list[str]:
    """The paths of the GUI's own HTTP requests to the daemon, from now on."""
    paths: list[str] = []

    async def seen(request: httpx.Request) -> None:
        paths.append(f"{request.method} {request.url.path}")

    app.api.event_hooks["request"].append(seen)
    return paths


def stream_down(app: Any) -> None:
    """The tray's event stream drops (a daemon restart, a dropped connection)."""
    app.event_stream.stop()


def back_again(app: Any) -> None:
    """... and comes back, as EventStream does by itself a moment later."""
    app.event_stream = EventStream(app.client)
    app.event_stream.received.connect(app._on_event)
    app.event_stream.start()


def test_runtime_news_costs_no_round_trip_and_a_state_change_shows_from_its_event(desktop: Any, qloop: Any) -> None:
    app, _ = desktop
    received: list[dict[str, Any]] = []
    app.event_stream.received.connect(received.append)

    async def scenario() -> None:
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo go; sleep 30"})).json()
        await until(lambda: app.tray.shown is not None and app.tray.shown.state == "running", 10)
        reads = count_reads(app)
        for n in range(300):  # what an agent CLI streams while it thinks: tool calls, text, progress
            app.daemon.events.publish(RuntimeNews(row["id"], "text", f"thinking {n}", None, "owner"))
        await until(lambda: sum(e["type"] == "runtime" for e in received) == 300, 10)
        await asyncio.sleep(0.2)  # what the last of them would make the app do (there must be nothing)
        assert reads == [], f"{len(reads)} round trips for 300 runtime events"
        await app.api.post(f"/api/requests/{row['id']}/cancel", json={})
        reads.clear()  # the cancel's own POST
        await until(lambda: app.tray.shown.state == "idle", 10)
        assert not [path for path in reads if path.startswith("GET")], f"read again instead of from the event: {reads}"
        cancelled = next(e for e in received if e["type"] == "request" and e["state"] == "cancelled")
        shown = (await app.api.get(f"/api/requests/{row['id']}")).json()
        assert cancelled["row"] == {**shown, "timeline": None, "question": None}, "the event carries the row as it is"

    run(qloop, scenario())


def test_what_was_answered_while_the_stream_was_down_is_settled_when_it_comes_back(desktop: Any, qloop: Any) -> None:
    app, server = desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo hi"}, headers=sarah)).json()
        await until(lambda: any("Approve" in n.actions.values() for n in server.shown), 10)
        await app.open_card(row["id"])
        stream_down(app)
        await asyncio.sleep(0)
        await app.api.post(f"/api/requests/{row['id']}/approve", json={})  # ... while it is answered elsewhere
        await wait_state(app, row["id"], "done")
        assert row["id"] in app.cards, "nothing could tell the app"
        back_again(app)
        await until(lambda: row["id"] not in app.cards, 10)
        approval = next(n for n in server.shown if "Approve" in n.actions.values())
        await until(lambda: approval.closed_by_app, 10)

    run(qloop, scenario())


def test_what_changed_while_the_stream_was_down_shows_when_it_comes_back(desktop: Any, qloop: Any) -> None:
    """A setting changed and a teammate's request sent meanwhile: the tray says paused, and the request gets its
    approval notification."""
    app, server = desktop

    async def scenario() -> None:
        sarah = await person(app, "sarah")
        stream_down(app)
        await asyncio.sleep(0)
        await app.api.post("/api/agents/pause", json={})  # `cox pause`
        row = (await app.api.post("/api/requests", json={"agent": "shell", "prompt": "echo hi"}, headers=sarah)).json()
        back_again(app)
        await until(lambda: app.tray.shown.paused and app.settings.get("agents_paused") == "yes", 10)
        short = f"R-{row['id'][-2:]}"
        await until(lambda: any("Approve" in n.actions.values() and short in n.title for n in server.shown), 10)

    run(qloop, scenario())


def test_an_event_that_comes_while_a_full_read_is_on_its_way_is_not_undone_by_it(desktop: Any, qloop: Any) -> None:
    """The owner pauses from the tray while a request runs; the read after the Pause answers slowly, and the
    request's "done" comes in between: the tray shows it done, not the slow answer's "running"."""
    app, _ = desktop

    async def scenario() -> None:
        row = (
            await app.api.post(
                "/api/requests", json={"agent": "shell", "prompt": "while [ ! -e go ]; do sleep 0.05; done"}
            )
        ).json()
        await until(lambda: app.tray.shown is not None and app.tray.shown.state == "running", 10)
        real_call, answered = app.client.call, asyncio.Event()

        async def slow_tasks(call: Any) -> Any:
            answer = await real_call(call)
            if call.path == "/api/tasks" and not answered.is_set():
                (app.home.root / "workspace" / "go").touch()  # the request ends while this answer is on its way
                await wait_state(app, row["id"], "done")
                await asyncio.sleep(0.3)  # its event handled meanwhile
                answered.set()
            return answer

        app.client.call = slow_tasks
        await app.act("pause", "")
        short = f"R-{row['id'][-2:]}"
        await until(lambda: short not in app.tray.toolTip() and app.tray.shown.paused, 10)

    run(qloop, scenario())


def test_a_silent_stream_is_given_up_and_followed_again(desktop: Any, qloop: Any, monkeypatch: Any) -> None:
    """A half-open connection says nothing, not even the daemon's pings: after SILENT_SECONDS the tray follows anew
    (and reads everything again), instead of waiting on it forever."""
    import desktop.gui.event_stream as event_stream

    app, _ = desktop
    monkeypatch.setattr(event_stream, "SILENT_SECONDS", 0.5)  # shorter than the daemon's 15 s between pings
    stream_down(app)
    hellos: list[dict[str, Any]] = []

    async def scenario() -> None:
        back_again(app)
        app.event_stream.received.connect(lambda e: hellos.append(e) if e["type"] == "hello" else None)
        await until(lambda: len(hellos) >= 2, 10)

    run(qloop, scenario())
