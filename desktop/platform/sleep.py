"""Linux sleep and wake from systemd-logind on the system bus: `PrepareForSleep(true)` comes while a delay lock we hold
keeps the machine awake long enough to checkpoint; we release it, and `PrepareForSleep(false)` comes on wake. The
same connection takes an idle-sleep lock while agents work, when the owner asked for that. With no system bus or
no logind, `start()` says so and the daemon's clock-gap check is what notices a sleep."""

import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # dbus_fast is imported when listening starts, after the daemon answers
    from dbus_fast.aio import MessageBus, ProxyInterface

LOGIND = "org.freedesktop.login1"
LOGIND_PATH = "/org/freedesktop/login1"
MANAGER = "org.freedesktop.login1.Manager"
WHO = "Coxswain"
log = logging.getLogger(__name__)

Hook = Callable[[], Awaitable[None]]


class LogindSleep:
    def __init__(self, on_sleep: Hook, on_wake: Hook) -> None:
        self._on_sleep, self._on_wake = on_sleep, on_wake
        self._bus: MessageBus | None = None
        self._manager: ProxyInterface | None = None
        self._delay_lock: int | None = None
        self._awake_lock: int | None = None
        self._handling: set[asyncio.Task[None]] = set()

    async def start(self) -> str | None:
        """Listen for sleep and wake; None when listening, else why not (the clock-gap check still works)."""
        try:
            from dbus_fast import BusType
            from dbus_fast.aio import MessageBus

            self._bus = await MessageBus(bus_type=BusType.SYSTEM, negotiate_unix_fd=True).connect()
            introspection = await self._bus.introspect(LOGIND, LOGIND_PATH)
            self._manager = self._bus.get_proxy_object(LOGIND, LOGIND_PATH, introspection).get_interface(MANAGER)
            self._manager.on_prepare_for_sleep(self._prepare_for_sleep)  # type: ignore[attr-defined]
            await self._take_delay_lock()
        except Exception as error:  # no system bus, no logind, not allowed: all mean "not here"
            await self.stop()
            return f"no sleep notices from logind ({error.__class__.__name__}: {error})"
        return None

    async def stop(self) -> None:
        for task in self._handling:
            task.cancel()
        _close(self._delay_lock)
        _close(self._awake_lock)
        self._delay_lock = self._awake_lock = None
        if self._bus is not None:
            self._bus.disconnect()
            self._bus, self._manager = None, None

    async def keep_awake(self, wanted: bool) -> None:
        """Hold (or let go of) logind's idle-sleep lock: the screen may lock, the machine does not sleep on its own."""
        if wanted and self._awake_lock is None and self._manager is not None:
            try:
                self._awake_lock = await self._inhibit("idle:sleep", "agents are working", "block")
            except Exception:  # e.g. not allowed by the system's policy: the agents work on all the same
                log.warning("logind refused to keep the computer awake", exc_info=True)
        elif not wanted:
            _close(self._awake_lock)
            self._awake_lock = None

    @property
    def keeping_awake(self) -> bool:
        return self._awake_lock is not None

    async def _take_delay_lock(self) -> None:
        if self._delay_lock is None:
            self._delay_lock = await self._inhibit("sleep", "saving what the agents are doing", "delay")

    async def _inhibit(self, what: str, why: str, mode: str) -> int:
        assert self._manager is not None
        descriptor: int = await self._manager.call_inhibit(what, WHO, why, mode)  # type: ignore[attr-defined]
        return descriptor

    def _prepare_for_sleep(self, going: bool) -> None:
        task = asyncio.ensure_future(self._sleeping() if going else self._waking())
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    async def _sleeping(self) -> None:
        try:
            await self._on_sleep()
        finally:  # the machine sleeps once every delay lock is gone (or logind's delay runs out)
            _close(self._delay_lock)
            self._delay_lock = None

    async def _waking(self) -> None:
        try:
            await self._take_delay_lock()
        except Exception:
            log.warning("could not take logind's delay lock again after waking", exc_info=True)
        await self._on_wake()


def _close(descriptor: int | None) -> None:
    if descriptor is not None:
        with contextlib.suppress(OSError):
            os.close(descriptor)


class PowerWatch(Protocol):
    @property
    def keeping_awake(self) -> bool: ...

    async def start(self) -> str | None: ...
    async def stop(self) -> None: ...
    async def keep_awake(self, wanted: bool) -> None: ...


def power_for_platform(on_sleep: Hook, on_wake: Hook) -> PowerWatch:
    """logind on Linux; elsewhere only the keep-awake part (the tray app hears sleep and wake there)."""
    from desktop.platform.awake import MacAwake, WindowsAwake

    if sys.platform == "win32":
        return WindowsAwake()
    if sys.platform == "darwin":
        return MacAwake()
    return LogindSleep(on_sleep, on_wake)
