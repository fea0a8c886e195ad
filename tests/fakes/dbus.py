"""Private D-Bus buses and fake desktop services that speak the real protocols (dbus-fast), for the tray app's tests:
org.freedesktop.Notifications (records Notify/CloseNotification, can invoke an action as a click would) and
org.freedesktop.login1 (emits PrepareForSleep, hands out inhibitor locks as pipes and sees them released),
org.kde.StatusNotifierWatcher (so Qt exports the tray over D-Bus, and its menu can be read as the shell reads it)."""

import asyncio
import contextlib
import os
import signal
import subprocess
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from dbus_fast import BusType
from dbus_fast.aio import MessageBus
from dbus_fast.constants import PropertyAccess
from dbus_fast.service import ServiceInterface, dbus_property, method
from dbus_fast.service import signal as dbus_signal


@contextlib.contextmanager
def private_bus() -> Iterator[str]:
    """A dbus-daemon of our own (its address), stopped by PID afterwards."""
    started = subprocess.run(
        ["dbus-daemon", "--session", "--fork", "--print-address=1", "--print-pid=1"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    try:
        yield started[0]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(started[1]), signal.SIGTERM)


@dataclass
class Shown:
    id: int
    app: str
    title: str
    body: str
    actions: dict[str, str]  # key -> label
    closed_by_app: bool = False
    icon: str = ""  # the app_icon argument: a themed name or a file: URI
    hints: dict[str, Any] = field(default_factory=dict)  # the hints' values

    @property
    def seen(self) -> str:
        """The body as a server that renders body markup shows it (GNOME Shell, KDE, dunst: the tags are taken as
        formatting, the entities as characters). Markup that does not parse counts as not shown as sent (servers
        differ: GNOME Shell shows it raw, others drop it); here it is ''."""
        try:
            return "".join(ElementTree.fromstring(f"<body>{self.body}</body>").itertext())
        except ElementTree.ParseError:
            return ""


class FakeNotifications(ServiceInterface):
    def __init__(self) -> None:
        super().__init__("org.freedesktop.Notifications")
        self.shown: list[Shown] = []
        self.changed = asyncio.Event()
        self.held: asyncio.Event | None = None  # a slow server: Notify answers once this is set
        self.holding = 0  # the Notify calls held now

    @method()
    def GetCapabilities(self) -> "as":
        return ["actions", "body", "body-markup"]  # as the desktops' servers say

    @method()
    def GetServerInformation(self) -> "ssss":
        return ["fake", "coxswain-tests", "1.0", "1.2"]

    @method()
    async def Notify(
        self, app: "s", replaces: "u", icon: "s", title: "s", body: "s", actions: "as", hints: "a{sv}", timeout: "i"
    ) -> "u":
        if self.held is not None:
            self.holding += 1
            await self.held.wait()
            self.holding -= 1
        shown = Shown(
            len(self.shown) + 1,
            app,
            title,
            body,
            dict(zip(actions[::2], actions[1::2], strict=False)),
            icon=icon,
            hints={key: getattr(value, "value", value) for key, value in hints.items()},
        )
        self.shown.append(shown)
        self._changed()
        return shown.id

    @method()
    def CloseNotification(self, notification_id: "u") -> None:
        for shown in self.shown:
            if shown.id == notification_id:
                shown.closed_by_app = True
        self.NotificationClosed(notification_id, 3)
        self._changed()

    @dbus_signal()
    def ActionInvoked(self, notification_id: int, key: str) -> "us":
        return [notification_id, key]

    @dbus_signal()
    def NotificationClosed(self, notification_id: int, reason: int) -> "uu":
        return [notification_id, reason]

    def click(self, shown: Shown, label: str) -> None:
        """The person clicks the button with this label (or "default": the notification itself)."""
        key = "default" if label == "default" else next(k for k, v in shown.actions.items() if v == label)
        self.ActionInvoked(shown.id, key)
        self.NotificationClosed(shown.id, 2)

    def _changed(self) -> None:
        self.changed.set()
        self.changed = asyncio.Event()


@dataclass
class Lock:
    what: str
    who: str
    why: str
    mode: str
    read_end: int
    released: bool = False


class FakeLogind(ServiceInterface):
    def __init__(self) -> None:
        super().__init__("org.freedesktop.login1.Manager")
        self.locks: list[Lock] = []

    @method()
    def Inhibit(self, what: "s", who: "s", why: "s", mode: "s") -> "h":
        read_end, write_end = os.pipe()
        lock = Lock(what, who, why, mode, read_end)
        self.locks.append(lock)
        loop = asyncio.get_running_loop()
        loop.add_reader(read_end, self._released, lock)
        loop.call_later(2, os.close, write_end)  # our copy, once the reply carrying it has been sent
        return write_end

    @dbus_signal()
    def PrepareForSleep(self, going: bool) -> "b":
        return going

    def held(self, what: str, mode: str) -> list[Lock]:
        return [lock for lock in self.locks if lock.what == what and lock.mode == mode and not lock.released]

    def locks_for(self, what: str) -> list[Lock]:
        return [lock for lock in self.locks if lock.what == what]

    def _released(self, lock: Lock) -> None:
        if not os.read(lock.read_end, 64):  # EOF: every holder closed its end
            asyncio.get_running_loop().remove_reader(lock.read_end)
            os.close(lock.read_end)
            lock.released = True


class FakeStatusNotifierWatcher(ServiceInterface):
    """org.kde.StatusNotifierWatcher, as a desktop with a StatusNotifierItem host has it (KDE, GNOME's AppIndicator
    extension): while it is on the bus, Qt exports a tray icon over D-Bus and registers it here."""

    def __init__(self) -> None:
        super().__init__("org.kde.StatusNotifierWatcher")
        self.items: list[str] = []  # the bus names of the registered items

    @method()
    def RegisterStatusNotifierItem(self, service: "s") -> None:
        self.items.append(service)

    @method()
    def RegisterStatusNotifierHost(self, service: "s") -> None:
        pass

    @dbus_property(access=PropertyAccess.READ)
    def RegisteredStatusNotifierItems(self) -> "as":
        return self.items

    @dbus_property(access=PropertyAccess.READ)
    def IsStatusNotifierHostRegistered(self) -> "b":
        return True

    @dbus_property(access=PropertyAccess.READ)
    def ProtocolVersion(self) -> "i":
        return 0


async def dbusmenu_labels(bus: MessageBus, service: str) -> list[str]:
    """The labels of a StatusNotifierItem's menu and its submenus, as the shell reads them (GetLayout)."""
    introspection = await bus.introspect(service, "/StatusNotifierItem")
    item = bus.get_proxy_object(service, "/StatusNotifierItem", introspection).get_interface(
        "org.kde.StatusNotifierItem"
    )
    path = await item.get_menu()  # type: ignore[attr-defined]
    introspection = await bus.introspect(service, path)
    menu = bus.get_proxy_object(service, path, introspection).get_interface("com.canonical.dbusmenu")
    _, layout = await menu.call_get_layout(0, -1, [])  # type: ignore[attr-defined]

    def labels(node: Any) -> list[str]:
        found = []
        for child in node[2]:
            properties = child.value[1]
            if "label" in properties:
                found.append(properties["label"].value)
            found += labels(child.value)
        return found

    return labels(layout)


async def serve(address: str, name: str, path: str, interface: ServiceInterface) -> MessageBus:
    bus = await MessageBus(bus_address=address, bus_type=BusType.SESSION, negotiate_unix_fd=True).connect()
    bus.export(path, interface)
    await bus.request_name(name)
    return bus


async def until(condition: Any, timeout: float = 30.0) -> None:
    """Wait on the running loop until `condition()` is true."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.02)
