"""The tray app, and the only place that wires it: the daemon runs in this process on the qasync loop (Qt and
asyncio share one loop), the tray shows its state, notifications and cards ask the owner, and every window is one
client of the daemon's API like the CLI. `coxswain [--home H] [--port P] [--smoke-test]`.

The tray icon shows first; the daemon (most of the start-up is importing it) is loaded on a thread after that."""

from __future__ import annotations  # the windows' types are named before their modules are loaded

import argparse
import asyncio
import builtins
import importlib
import logging
import os
import signal
import socket
import sys
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

import qasync  # type: ignore[import-untyped]
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop.gui import PLAIN_IMPORT, style
from desktop.gui.denials import Denials, denied_notice
from desktop.gui.event_stream import EventStream
from desktop.gui.notices import ANSWERED, Notice, Notices, approval_notice, notice_for, waits_for_approval, with_details
from desktop.gui.power import watch_power
from desktop.gui.single import Listener, ask_running_app
from desktop.gui.summary import summarize
from desktop.gui.tray import Tray
from desktop.gui.work import Work
from desktop.platform.instance import AlreadyRunning, hold_running_mutex
from desktop.platform.paths import DEFAULT_PORT, Home

if TYPE_CHECKING:  # the windows' modules, and the API client (pydantic), are loaded after the icon shows
    import httpx

    from desktop.client.transport import AsyncClient
    from desktop.core.clock import Clock
    from desktop.daemon import Daemon
    from desktop.gui.card import ApprovalCard
    from desktop.gui.console import ConsoleWindow
    from desktop.gui.settings import SettingsWindow

log = logging.getLogger(__name__)
LOOPBACK = "127.0.0.1"  # where the daemon's API listens (the room has its own listener)
SHOWN = 200  # requests the tray and the console list know of (the newest)
TASK_READS_MS = 5000
FOLLOWING_SECONDS = 10
KEEP_ENDED = 3600  # seconds an ended task stays listed (the daemon's KEEP_ENDED_SECONDS)


class TrayApp:
    def __init__(self, home: Home, port: int, clock: Clock | None = None) -> None:
        self.home, self.port, self._clock = home, port, clock
        style.apply(QApplication.instance())  # type: ignore[arg-type]  # (made before the app is)
        self.tray = Tray(self._act)
        self.notices = Notices(self.tray.balloon, self._act, self._open_notice)
        self.cards: dict[str, ApprovalCard] = {}
        self.console: ConsoleWindow | None = None
        self.settings_window: SettingsWindow | None = None
        self.settings: dict[str, str] = {}
        self.quit_requested = asyncio.Event()
        self.tray.quit_action.triggered.connect(self.quit_requested.set)
        self._refreshing: asyncio.Task[None] | None = None
        self._stale = False  # an event came while a full read was on its way (its answer may predate it)
        self._requests: dict[str, dict[str, Any]] = {}  # the newest requests and the tasks, as the daemon showed them
        self._tasks: dict[str, dict[str, Any]] = {}  # last (a full read, then each event's row)
        self._task_reads = QTimer()  # a running task's quiet time and test counts change without an event: read
        self._task_reads.setInterval(TASK_READS_MS)  # them now and then while the console shows them
        self._read_once = False  # a full read was shown (requests new since then were announced by no event)
        self._failed_unseen = False
        self.work = Work()
        self._task_reads.timeout.connect(self._refresh_soon)
        self.denials = Denials(self._deny_now, self._denial_changed)

    async def start(self) -> None:
        self.listener = Listener(self.home, self.come_forward)
        daemon_module, http, client = await asyncio.to_thread(_load_daemon)

        taken = self.port != 0 and not port_free(LOOPBACK, self.port)  # by another program: any free port will do
        self.daemon: Daemon = daemon_module.Daemon(self.home, LOOPBACK, 0 if taken else self.port, clock=self._clock)
        await self.daemon.start()
        if taken:  # said where a person sees it; `cox` and the relay read the address from daemon.json
            said = (
                f"Port {self.port} is taken by another program, so Coxswain's API listens on {self.daemon.url} "
                "instead; `cox` finds it by itself."
            )
            print(said, flush=True)
            log.warning("%s", said)
            self.notices.in_balloon = None
            self.tray.balloon("Coxswain", said)
        self.power = watch_power(self.daemon.suspend, self.daemon.resume)  # Windows, macOS; Linux: the daemon's
        token = self.home.owner_token.read_text().strip()
        self.api: httpx.AsyncClient = http.AsyncClient(
            base_url=self.daemon.url, headers={"Authorization": f"Bearer {token}"}
        )
        self.client: AsyncClient = client.AsyncClient(self.api)  # every call of the app and its windows
        self.tray.console_action.triggered.connect(lambda: self.work.start(self.open_console()))
        self.tray.settings_action.triggered.connect(lambda: self.work.start(self.open_settings()))
        self.tray.room_action.triggered.connect(lambda: self.work.start(self.open_settings(room=True)))
        self.tray.menu.aboutToShow.connect(self._seen)
        self.tray.balloon_clicked.connect(self._balloon_clicked)
        self.event_stream = EventStream(self.client)
        self.event_stream.received.connect(self._on_event)
        self.event_stream.start()
        try:  # nothing that changes from here on is missed
            await asyncio.wait_for(self.event_stream.following.wait(), FOLLOWING_SECONDS)
        except TimeoutError:
            log.warning(
                "the daemon's event stream did not answer within %s s; following it when it does", FOLLOWING_SECONDS
            )
        await self.refresh()

    async def stop(self) -> None:
        await self.denials.flush()
        for window in [*self.cards.values(), self.console, self.settings_window]:
            if window is not None:
                window.close()
        for work in (self.work, *(w.work for w in (self.console, self.settings_window) if w is not None)):
            work.cancel()
        if self._refreshing is not None:
            self._refreshing.cancel()
        self.event_stream.stop()
        self._task_reads.stop()
        await self.api.aclose()
        await self.daemon.stop()

    async def run(self, smoke_test: bool = False) -> int:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):  # from the first moment: a quit while starting waits for it
            loop.add_signal_handler(signum, self.quit_requested.set)
        self.tray.show()  # "starting", until the daemon answers
        print("Coxswain is starting…", flush=True)
        await self.start()
        try:
            if smoke_test:
                return await self.smoke_test()
            print(
                f"Coxswain is running: API at {self.daemon.url}, files in {self.home.root}. Quit from the "
                "tray menu (or Ctrl+C here).",
                flush=True,
            )
            await self.quit_requested.wait()
            return 0
        finally:
            await self.stop()

    async def refresh(self) -> list[dict[str, Any]]:
        """Read everything the daemon has now (at start, when its event stream (re)connects or lagged, after an
        answer it refused); each change after comes with its row in an event. The request list is returned."""
        self._refresh_soon()
        assert self._refreshing is not None
        await asyncio.shield(self._refreshing)
        return self.requests()

    async def _read_all(self) -> None:
        from desktop.client import api

        settings, room, requests, tasks = await asyncio.gather(
            self.client.call(api.settings()),
            self.client.call(api.room()),
            self.client.call(api.requests(limit=SHOWN)),
            self.client.call(api.tasks()),
        )
        if self._stale:  # something changed while this read was on its way: its answer may predate it
            return  # (read again at once, by _refresh_all)
        known = set(self._requests) if self._read_once else None
        self.settings = dict(settings)
        self._show_room(room.url or room.local_url)
        self._requests = {r.id: r.dump() for r in requests}
        self._tasks = {t.id: t.dump() for t in tasks}
        self._read_once = True
        self._show()
        self._settle(known)

    def _settle(self, known: set[str] | None) -> None:
        """What changed while no event could say so (the event stream reconnecting, or lagging): a request answered
        meanwhile loses its card, notification and waiting Deny; one that came meanwhile and waits is announced."""
        for request_id in {*self.cards, *self.notices.approvals_shown(), *self.denials.waiting_ids()}:
            row = self._requests.get(request_id)
            if row is not None and row["state"] != "pending":
                self.work.start(self._answered(request_id))
        if known is None:  # the first read: what waited before the app started was announced then
            return
        for request_id, row in self._requests.items():
            if request_id not in known and row["state"] == "pending":
                self.work.start(self._notify_approval(request_id))

    def requests(self) -> list[dict[str, Any]]:
        """The newest requests, newest first."""
        return sorted(self._requests.values(), key=lambda r: (r["created_at"], r["id"]), reverse=True)[:SHOWN]

    def _show(self) -> None:
        """The tray, and the console's list while it is open, show what is known now."""
        requests, tasks = self.requests(), sorted(self._tasks.values(), key=lambda t: t["started_at"], reverse=True)
        paused = self.settings.get("agents_paused") == "yes"
        self.tray.show_summary(
            summarize(
                requests, paused=paused, failed_unseen=self._failed_unseen, tasks=tasks, denying=self.denials.waiting
            )
        )
        shown = self.console is not None and self.console.isVisible()
        if self.console is not None and shown:
            self.console.show_work(requests, tasks)
        if shown and any(t["state"] != "ended" and t["kind"] != "request" for t in tasks):
            if not self._task_reads.isActive():
                self._task_reads.start()
        else:
            self._task_reads.stop()

    async def act(self, verb: str, request_id: str) -> None:
        """A click in the tray, a card or a notification, done through the API like any other client's."""
        from desktop.client import api

        if verb in ("open", "open_task"):
            await self.open_console(("task" if verb == "open_task" else "request", request_id))
            return
        if verb == "deny":  # final in a few seconds; Undo (or Approve) before then takes it back
            row = await self.client.call(api.request(request_id))
            if row.state == "pending":
                expires = row.expires_at
                left = (datetime.fromisoformat(expires) - datetime.now(UTC)).total_seconds() if expires else None
                self.denials.deny(request_id, left)
            else:  # answered a moment ago: what is now is shown
                await self.refresh()
            return
        if verb == "undo":
            if not self.denials.undo(request_id) and request_id in self.denials.sent:
                self.notices.in_balloon = None
                self.tray.balloon("Coxswain", f"Too late to undo: {request_id} is denied")
            return
        if verb == "review" and self.denials.waiting(request_id):  # denied, Undo is in the console
            await self.open_console(("request", request_id))
            return
        if verb == "review":
            if await self.open_card(request_id) is None:  # answered or expired a moment ago: say so, then show it
                self.notices.in_balloon = None
                self.tray.balloon("Coxswain", f"{request_id} no longer waits for approval")
                await self.refresh()
            return
        if verb == "approve":
            self.denials.undo(request_id)
        await self._post(verb, request_id)

    async def _post(self, verb: str, item_id: str) -> None:
        from desktop.client import DaemonError, api

        try:
            if verb in ("pause", "resume"):
                await self.client.call(api.pause(verb == "pause"))
            elif verb == "stop_task":
                await self.client.call(api.stop_task(item_id))
            else:
                await self.client.call(api.act(item_id, cast("api.Verb", verb)))
        except DaemonError as error:  # e.g. approved elsewhere a moment ago: say so, then show what is now
            self.notices.in_balloon = None
            self.tray.balloon("Coxswain", str(error))
        await self.refresh()

    async def _deny_now(self, request_id: str) -> None:
        await self._post("deny", request_id)

    def _denial_changed(self, request_id: str, what: str) -> None:
        """A Deny began (the card goes, "Denied R-02" with Undo is shown), was taken back (the request is announced
        again: its notification may have gone with the Deny clicked on it) or is final (the Undo goes)."""
        if self.console is not None and self.console.chosen == ("request", request_id):
            self.console.follow_soon()
        self._show()  # the tray shows it as denied, with Undo, or as it is again
        if what == "denied":
            card = self.cards.pop(request_id, None)
            if card is not None:
                card.close()
            self.work.start(self.notices.hide_approval(request_id))
            self.work.start(self.notices.show(denied_notice(request_id, self.denials.seconds)))
            return
        self.work.start(self.notices.withdraw_denied(request_id))
        if what == "undone":
            self.work.start(self._notify_approval(request_id))

    async def open_card(self, request_id: str) -> ApprovalCard | None:
        """The approval card of a waiting request, brought forward (None if it no longer waits)."""
        from desktop.client import api
        from desktop.gui.card import ApprovalCard

        card = self.cards.get(request_id)
        if card is None:
            request = await self.client.call(api.request(request_id))
            if request.state != "pending":
                return None
            agent = next((a for a in await self.client.call(api.agents()) if a.name == request.agent), None)
            card = self.cards[request_id] = ApprovalCard(request.dump(), agent, self._act)
        card.show()
        card.raise_()
        card.activateWindow()
        return card

    async def open_console(self, chosen: tuple[str, str] | None = None) -> ConsoleWindow:
        """The console window, brought forward (on a request or task when one is named)."""
        if self.console is None:
            from desktop.gui.console import ConsoleWindow

            self.console = ConsoleWindow(self.client, self._act, self.denials.waiting)
        self.console.show()
        self.console.raise_()
        self.console.activateWindow()
        if chosen is not None:
            self.console.chosen = chosen  # so the list does not open the newest thing meanwhile
        self._show()
        if chosen is not None:
            kind, item_id = chosen
            await self.console.open(kind, item_id)
        return self.console

    async def open_settings(self, room: bool = False) -> SettingsWindow:
        if self.settings_window is None:
            from desktop.gui.settings import SettingsWindow

            self.settings_window = SettingsWindow(self.client)
        if room:  # the tab at once, filled in as it loads
            self.settings_window.tabs.setCurrentWidget(self.settings_window.room)
        await self.settings_window.load()
        self.settings_window.show()
        self.settings_window.raise_()
        self.settings_window.activateWindow()
        return self.settings_window

    async def smoke_test(self) -> int:
        """Everything started: the API answers the owner, the keyring keeps and gives back a secret, the tray shows."""
        from desktop.client import DaemonError, api

        problems = []
        try:
            health = await self.client.call(api.health())
            if health.you != "owner":
                problems.append(f"the API answered as {health.you}, not the owner")
        except DaemonError as error:
            problems.append(f"the API answered: {error}")
        from desktop.platform.secrets import Secrets

        keyring_problem = Secrets().round_trip()
        if keyring_problem:
            problems.append(f"keyring: {keyring_problem}")
        if self.tray.shown is None or self.tray.icon().isNull():
            problems.append("the tray icon has no picture")
        for problem in problems:
            print(f"smoke test: {problem}", file=sys.stderr)
        if not problems:
            print(
                f"smoke test passed: API at {self.daemon.url} answers, keyring round trip, tray shows "
                f"'{self.tray.shown.state if self.tray.shown else '?'}'"
            )
        return 1 if problems else 0

    def come_forward(self) -> None:
        """Another launch asked for this app: its console window comes forward."""
        self.work.start(self._come_forward())

    async def _come_forward(self) -> None:
        console = await self.open_console()
        print(
            f"another launch asked for Coxswain: console {'shown' if console.isVisible() else 'not shown'}", flush=True
        )

    # --- daemon events -------------------------------------------------------------------------------------

    def _show_room(self, url: str) -> None:
        self.tray.room_action.setText(f"Room: {url}")

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind in ("hello", "lagged"):  # (again) following, or some events were dropped: read everything
            self._refresh_soon()
            return
        if self._refreshing is not None and not self._refreshing.done():
            self._stale = True  # the read on its way may predate this change: one more after it
        if kind == "settings":
            self.settings[event["key"]] = event["value"]
        if kind == "room":
            self._show_room(event["url"] or event["local_url"])
        if kind == "request":
            self._requests[event["id"]] = event["row"]
            if len(self._requests) > 2 * SHOWN:  # only the newest are shown: the rest need not be kept
                self._requests = {r["id"]: r for r in self.requests()}
            if event.get("state") == "failed":
                self._failed_unseen = True
            if event.get("action") in ANSWERED:
                self.work.start(self._answered(event["id"]))
        if kind in ("task_started", "task_finished", "task_failed"):
            self._tasks[event["id"]] = event["row"]
            self._tasks = {i: t for i, t in self._tasks.items() if not _long_ended(t)}  # as the daemon lists them
        if waits_for_approval(event):
            self.work.start(self._notify_approval(event["id"]))
        elif (notice := notice_for(event)) is not None:
            self.work.start(self._notify(notice))
        if kind != "runtime":  # what a runtime says changes no row: nothing to show again
            self._show()

    def _refresh_soon(self) -> None:
        """One full read at a time (every read goes through here); an event that comes while one is on its way
        makes one more after it, so an answer older than the event is never the last word."""
        self._stale = True
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self._refresh_all())

    async def _refresh_all(self) -> None:
        while self._stale:
            self._stale = False
            try:
                await self._read_all()
            except Exception:  # e.g. the API closing as the app quits: said, and the next change tries again
                log.exception("reading what the daemon has failed")

    async def _notify_approval(self, request_id: str) -> None:
        from desktop.client import api

        if self.settings.get("notify_approval", "yes") == "yes":  # else the row need not be fetched
            await self._notify(approval_notice((await self.client.call(api.request(request_id))).dump()))

    async def _notify(self, notice: Notice) -> None:
        if any(self.settings.get(key, "yes") == "yes" for key in notice.settings):
            await self.notices.show(await with_details(notice, self.client))

    async def _answered(self, request_id: str) -> None:
        """Answered anywhere (here, the CLI, the API, a chat): the notification goes, the card closes, a Deny waiting
        for its Undo has nothing left to do."""
        self.denials.drop(request_id)
        card = self.cards.pop(request_id, None)
        if card is not None:
            card.close()
        await self.notices.withdraw(request_id)

    def _open_notice(self, notice: Notice) -> None:
        if notice.kind == "approval" and notice.request_id:
            self.work.start(self.open_card(notice.request_id))
        elif notice.task_id:
            self.work.start(self.open_console(("task", notice.task_id)))
        elif notice.request_id:
            self.work.start(self.open_console(("request", notice.request_id)))

    def _balloon_clicked(self) -> None:
        if self.notices.in_balloon is not None:
            self._open_notice(self.notices.in_balloon)

    def _seen(self) -> None:
        self._failed_unseen = False
        self._show()

    def _act(self, verb: str, request_id: str) -> None:
        self.work.start(self.act(verb, request_id))


def _long_ended(task: dict[str, Any]) -> bool:
    """Ended more than an hour ago: the daemon's task list no longer holds it (desktop/tasks/background.py)."""
    ended = task.get("ended_at")
    return ended is not None and (datetime.now(UTC) - datetime.fromisoformat(ended)).total_seconds() > KEEP_ENDED


def port_free(host: str, port: int) -> bool:
    """Whether the daemon could listen on `port` (bound as it binds: SO_REUSEADDR, so a port in TIME_WAIT counts as
    free; not on Windows, where that option would let the probe share a port another program listens on)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        if sys.platform != "win32":
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _load_daemon() -> tuple[Any, Any, Any]:
    """The daemon's modules, httpx and the API client (its shapes import pydantic). PySide6 wraps `__import__` to
    read the source of every module imported after it (to look for its `__feature__` switches): for the daemon's ~500
    modules that is 60 ms and 20 MB of cached source. None of them uses Qt, so they are imported with Python's own
    `__import__`; the API client is loaded here too, so it never delays the tray icon."""
    wrapped = builtins.__import__
    builtins.__import__ = PLAIN_IMPORT
    try:
        return (
            importlib.import_module("desktop.daemon"),
            importlib.import_module("httpx"),
            importlib.import_module("desktop.client.transport"),
        )
    finally:
        builtins.__import__ = wrapped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="coxswain", description="Coxswain in the tray, hosting its daemon.")
    parser.add_argument("--home", help="keep every file of this installation under HOME (or set COXSWAIN_HOME)")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"API port (default {DEFAULT_PORT}; 0: any)")
    parser.add_argument("--smoke-test", action="store_true", help="start everything, check it, and exit (0 = fine)")
    args = parser.parse_args(argv)
    if sys.platform == "linux" and not ({"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"} & set(os.environ)):
        print(
            "No screen here: Coxswain runs without its tray icon; the `cox` command line is its front end "
            "(cox list, cox approve R-07, …).",
            file=sys.stderr,
        )
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
        os.environ.setdefault("QT_LOGGING_RULES", "qt.core.qobject.connect=false")  # "no tray" is said above
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication([sys.argv[0]])
    app.setApplicationName("Coxswain")
    app.setDesktopFileName("coxswain")
    app.setQuitOnLastWindowClosed(False)
    home = Home.resolve(args.home)
    if ask_running_app(home):
        print("Coxswain is already running; it has been asked to come forward.")
        return 0
    mutex = hold_running_mutex()  # noqa: F841 (held until the app exits)
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with loop:
        try:
            code: int = loop.run_until_complete(TrayApp(home, args.port).run(args.smoke_test))
        except (AlreadyRunning, OSError) as error:  # e.g. `cox daemon` serves this home
            print(f"Coxswain cannot start: {error}", file=sys.stderr)
            if app.platformName() not in ("offscreen", "minimal") and not args.smoke_test:  # not only on a terminal
                from PySide6.QtWidgets import QMessageBox

                hint = (
                    (
                        "\n\nIt runs without a tray icon (`cox daemon`): the `cox` command line works with it; stop "
                        "it to have Coxswain here in the tray."
                    )
                    if isinstance(error, AlreadyRunning)
                    else ""
                )
                QMessageBox.critical(None, "Coxswain cannot start", f"Coxswain cannot start: {error}{hint}")
            return 1
    return code


if __name__ == "__main__":
    sys.exit(main())
